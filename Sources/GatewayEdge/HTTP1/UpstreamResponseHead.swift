import GatewayPrimitives
import NIOCore
import NIOHTTP1

/// An upstream's response head as it came, read by ``HTTP1ResponseParser``: its status, its
/// bytes (from the status line through the blank line, a slice of the read buffer, not a copy)
/// and where each field's name and value lie in them, plus its framing. No `String` is made for
/// a field unless a reader asks for one (``headers``): an ordinary response's fields go to an
/// HTTP/1.1 client as the bytes they were (``withFields(_:)``).
package struct UpstreamResponseHead: Equatable {
    /// How the body after the head is delimited (RFC 9112 §6.3).
    package enum Framing: Equatable, Sendable {
        /// None: the answer to `HEAD`, a `204` or `304`.
        case bodiless
        case length(Int)
        case chunked
        /// Until the upstream closes the connection.
        case untilClose
        /// A `101`: what follows is another protocol's.
        case switched
    }

    package let status: HTTPResponseStatus
    package let version: HTTPVersion
    package let framing: Framing
    /// Whether the connection can carry another request after this response: no
    /// `Connection: close`, HTTP/1.0 only with `keep-alive`, a body not read until the close.
    package let isKeepAlive: Bool
    /// The head as it came: the status line, the fields, the blank line.
    package let bytes: ByteBuffer
    private let lines: [FieldLine]

    /// Where a field lies in ``bytes``: its line from `start` to `end` (after its CRLF), its name
    /// up to `nameEnd` (the colon), its value (without the white space around it) from
    /// `valueStart` to `valueEnd`. Offsets from the head's first byte; a head is far shorter
    /// than 4 GiB.
    struct FieldLine: Equatable {
        let start: UInt32
        let nameEnd: UInt32
        let valueStart: UInt32
        let valueEnd: UInt32
        let end: UInt32
    }

    init(status: HTTPResponseStatus, version: HTTPVersion, framing: Framing, isKeepAlive: Bool, bytes: ByteBuffer, lines: [FieldLine]) {
        self.status = status
        self.version = version
        self.framing = framing
        self.isKeepAlive = isKeepAlive
        self.bytes = bytes
        self.lines = lines
    }

    /// The number of fields.
    package var count: Int { lines.count }

    /// One field of the head: its name, its value (without the white space around it) and its
    /// whole line (`name: value` and the CRLF, as the upstream wrote it), as bytes of the head.
    package struct Field {
        package let name: UnsafeRawBufferPointer
        package let value: UnsafeRawBufferPointer
        package let line: UnsafeRawBufferPointer
    }

    /// The head's fields in order, valid inside ``withFields(_:)``.
    package struct Fields: RandomAccessCollection {
        fileprivate let head: UnsafeRawBufferPointer
        fileprivate let lines: [FieldLine]

        package var startIndex: Int { 0 }
        package var endIndex: Int { lines.count }

        package subscript(position: Int) -> Field {
            let line = lines[position]
            return Field(
                name: UnsafeRawBufferPointer(rebasing: head[Int(line.start)..<Int(line.nameEnd)]),
                value: UnsafeRawBufferPointer(rebasing: head[Int(line.valueStart)..<Int(line.valueEnd)]),
                line: UnsafeRawBufferPointer(rebasing: head[Int(line.start)..<Int(line.end)])
            )
        }
    }

    /// Calls `body` with the head's fields, whose bytes are valid during the call.
    package func withFields<Result>(_ body: (Fields) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeReadableBytes { head in
            try body(Fields(head: head, lines: lines))
        }
    }

    /// The fields as NIO's `HTTPHeaders`, a `String` per name and value made now: for the
    /// readers that keep them (a keyed request's stored response).
    package var headers: HTTPHeaders {
        var fields: [(String, String)] = []
        fields.reserveCapacity(lines.count)
        withFields { head in
            for field in head {
                fields.append((String(decoding: field.name, as: UTF8.self), String(decoding: field.value, as: UTF8.self)))
            }
        }
        return HTTPHeaders(fields)
    }

    /// A head the gateway makes from fields it holds (a stored response replayed), laid out as
    /// an upstream's would be: `HTTP/1.1`, kept alive, framed by its `Content-Length` if it has
    /// one. The fields are taken as they are: they were read by the parser once.
    package init(status: HTTPResponseStatus, fields: [(name: String, value: String)]) {
        var bytes = ByteBuffer()
        bytes.writeStaticString("HTTP/1.1 ")
        bytes.writeString(String(status.code))
        bytes.writeStaticString(" \r\n")
        var lines: [FieldLine] = []
        var length: Int?
        for (name, value) in fields {
            let start = bytes.writerIndex
            bytes.writeString(name)
            let nameEnd = bytes.writerIndex
            bytes.writeStaticString(": ")
            bytes.writeString(value)
            let valueEnd = bytes.writerIndex
            bytes.writeStaticString("\r\n")
            lines.append(FieldLine(
                start: UInt32(start), nameEnd: UInt32(nameEnd), valueStart: UInt32(nameEnd + 2), valueEnd: UInt32(valueEnd),
                end: UInt32(bytes.writerIndex)
            ))
            if length == nil, HeaderName.equals(name, "content-length") { length = Int(value) }
        }
        bytes.writeStaticString("\r\n")
        self.init(
            status: status, version: .http1_1, framing: length.map { .length($0) } ?? .bodiless, isKeepAlive: true, bytes: bytes, lines: lines
        )
    }
}
