import GatewayPrimitives
import NIOCore
import NIOHTTP1

/// An upstream's response head as it came, read by ``HTTP1ResponseParser``: its status, its
/// bytes (from the status line through the blank line, a slice of the read buffer, not a copy)
/// and where each field's name and value lie in them, plus its framing. No `String` is made for
/// a field unless a reader asks for one (``headers``): an ordinary response's fields go to an
/// HTTP/1.1 client as the bytes they were (``forEachField(_:)``).
///
/// Sendable though its storage is a `ManagedBuffer` (``HTTP1HeadStorage``): that is written
/// once, as the head is made, and only read after.
package struct UpstreamResponseHead: Equatable, @unchecked Sendable {
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

    /// What the head says besides where its fields lie.
    struct Summary: HTTP1HeadSummary {
        let status: HTTPResponseStatus
        let version: HTTPVersion
        let framing: Framing
        let isKeepAlive: Bool
        let bytes: ByteBuffer
    }

    private let storage: HTTP1HeadStorage<Summary>

    init(_ summary: Summary, lines: UnsafeBufferPointer<HTTP1FieldLine>) {
        storage = HTTP1HeadStorage(summary, lines: lines)
    }

    package var status: HTTPResponseStatus { storage.summary.status }
    package var version: HTTPVersion { storage.summary.version }
    package var framing: Framing { storage.summary.framing }
    /// Whether the connection can carry another request after this response: no
    /// `Connection: close`, HTTP/1.0 only with `keep-alive`, a body not read until the close.
    package var isKeepAlive: Bool { storage.summary.isKeepAlive }
    /// The head as it came: the status line, the fields, the blank line.
    package var bytes: ByteBuffer { storage.summary.bytes }
    /// The number of fields.
    package var count: Int { storage.count }

    package typealias Field = HTTP1Field

    /// Hands `visit` each field in order, its bytes valid during the call.
    package func forEachField(_ visit: (Field) throws -> Void) rethrows {
        try storage.forEachField(visit)
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        let left = lhs.storage.summary
        let right = rhs.storage.summary
        return left.status == right.status && left.version == right.version && left.framing == right.framing
            && left.isKeepAlive == right.isKeepAlive && left.bytes == right.bytes && lhs.storage.hasLines(of: rhs.storage)
    }

    /// The fields as NIO's `HTTPHeaders`, a `String` per name and value made now: for the
    /// readers that keep them (a keyed request's stored response).
    package var headers: HTTPHeaders { storage.headers }

    /// A head the gateway makes from fields it holds (a stored response replayed), laid out as
    /// an upstream's would be: `HTTP/1.1`, kept alive, framed by its `Content-Length` if it has
    /// one. The fields are taken as they are: they were read by the parser once.
    package init(status: HTTPResponseStatus, fields: [(name: String, value: String)]) {
        var bytes = ByteBuffer()
        bytes.writeStaticString("HTTP/1.1 ")
        bytes.writeString(String(status.code))
        bytes.writeStaticString(" \r\n")
        let lines = HTTP1HeadStorage<Summary>.layOut(fields.lazy.map { ($0.name, $0.value) }, after: &bytes)
        let length = fields.first(where: { HeaderName.equals($0.name, "content-length") }).flatMap { Int($0.value) }
        let summary = Summary(status: status, version: .http1_1, framing: length.map { .length($0) } ?? .bodiless, isKeepAlive: true, bytes: bytes)
        self = lines.withUnsafeBufferPointer { UpstreamResponseHead(summary, lines: $0) }
    }
}
