import NIOCore
import NIOHTTP1

/// How the floor reads a client's requests and what it writes upstream for them.
protocol FloorHeads: SendableMetatype {
    /// What the client's pipeline hands the floor.
    associatedtype Part
    /// What goes to the upstream connection.
    associatedtype Forwarded: Sendable
    init()
    /// Hands `forward` what `part` makes for the upstream; false when the request is not one
    /// the floor understands.
    mutating func forward(_ part: Part, _ forward: (Forwarded) -> Void) -> Bool
    /// The upstream connection's handlers, answering to `client`.
    static func addUpstreamHandlers(to channel: any Channel, client: any Channel) throws
}

/// NIO's HTTP/1 codec on both sides: parts in, parts out.
struct CodecHeads: FloorHeads {
    mutating func forward(_ part: HTTPServerRequestPart, _ forward: (HTTPClientRequestPart) -> Void) -> Bool {
        switch part {
        case .head(let head): forward(.head(head))
        case .body(let body): forward(.body(.byteBuffer(body)))
        case .end(let trailers): forward(.end(trailers))
        }
        return true
    }

    static func addUpstreamHandlers(to channel: any Channel, client: any Channel) throws {
        try channel.pipeline.syncOperations.addHTTPClientHandlers()
        try channel.pipeline.syncOperations.addHandler(CodecFloorUpstreamHandler(client: client))
    }
}

/// No codec: each head found by offsets in the read buffer (``MessageFraming``) and passed on
/// with the body bytes that came with it as one slice of that buffer.
struct ByteHeads: FloorHeads {
    private var framing = MessageFraming()

    mutating func forward(_ part: ByteBuffer, _ forward: (ByteBuffer) -> Void) -> Bool {
        framing.read(part, forward: forward)
    }

    static func addUpstreamHandlers(to channel: any Channel, client: any Channel) throws {
        try channel.pipeline.syncOperations.addHandler(ByteFloorUpstreamHandler(client: client))
    }
}
