import NIOCore
import NIOHTTP1

/// A message's body after its head, as both of the gateway's HTTP/1 parsers read it: so many
/// bytes (`Content-Length`, or none), chunked (``ChunkedBody/Decoder``), or, for a response,
/// whatever comes until the connection closes.
struct HTTP1Body {
    enum Part {
        case data(ByteBuffer)
        /// The body's end, with the trailer fields of a chunked one.
        case end(HTTPHeaders?)
    }

    private enum Framing {
        case length(remaining: Int)
        case chunked(ChunkedBody.Decoder)
        case untilClose
    }

    private var framing: Framing

    /// No body: its end is the next part.
    static let none = HTTP1Body(framing: .length(remaining: 0))

    static func length(_ length: Int) -> HTTP1Body {
        HTTP1Body(framing: .length(remaining: length))
    }

    static func chunked(maxTrailerBytes: Int) -> HTTP1Body {
        HTTP1Body(framing: .chunked(ChunkedBody.Decoder(maxTrailerBytes: maxTrailerBytes)))
    }

    static let untilClose = HTTP1Body(framing: .untilClose)

    /// Whether the next part is the end, which needs no more bytes.
    var endsNext: Bool {
        if case .length(0) = framing { true } else { false }
    }

    /// Whether the body ends only with the connection.
    var endsAtClose: Bool {
        if case .untilClose = framing { true } else { false }
    }

    /// The next part `buffer` holds, consumed from it, or nil when more bytes are needed.
    mutating func next(_ buffer: inout ByteBuffer) throws -> Part? {
        switch framing {
        case .length(0):
            return .end(nil)
        case .length(let remaining):
            guard let (slice, left) = HTTP1Syntax.slice(&buffer, upTo: remaining) else { return nil }
            framing = .length(remaining: left)
            return .data(slice)
        case .chunked(var decoder):
            let part = try decoder.next(&buffer)
            framing = .chunked(decoder)
            return part
        case .untilClose:
            guard buffer.readableBytes > 0 else { return nil }
            return .data(buffer.readSlice(length: buffer.readableBytes)!)
        }
    }
}
