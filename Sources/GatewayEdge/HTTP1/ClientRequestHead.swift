import GatewayPrimitives
import NIOCore
import NIOHTTP1

/// A client's request head as the gateway reads it: its method, target and version, its bytes
/// (for an HTTP/1.1 client, the request line through the blank line, a slice of the read
/// buffer ``HTTP1RequestParser`` read it from, not a copy) and where each field's name and
/// value lie in them. No `String` is made for a field unless a reader asks for one
/// (``first(_:)``, ``headers``): the proxy's header rules compare names as bytes and an
/// upstream's head copies each kept field line as it came (``forEachField(_:)``).
///
/// An HTTP/2 stream's head (HPACK fields, ``HTTP2RequestHead``) and a head a rule rewrites are
/// laid out as the same bytes once (``init(_:)``), so every reader of a request head, the
/// proxy's rules among them, has one field source.
///
/// Sendable though its storage is a `ManagedBuffer` (``HTTP1HeadStorage``): that is written
/// once, as the head is made, and only read after.
package struct ClientRequestHead: Equatable, @unchecked Sendable {
    /// What the head says besides where its fields lie.
    struct Summary: HTTP1HeadSummary {
        let method: HTTPMethod
        let target: String
        let version: HTTPVersion
        let isKeepAlive: Bool
        let declaredBody: DeclaredBody
        let bytes: ByteBuffer
    }

    private let storage: HTTP1HeadStorage<Summary>

    init(_ summary: Summary, lines: UnsafeBufferPointer<HTTP1FieldLine>) {
        storage = HTTP1HeadStorage(summary, lines: lines)
    }

    private init(storage: HTTP1HeadStorage<Summary>) {
        self.storage = storage
    }

    package var method: HTTPMethod { storage.summary.method }
    /// The request target as the client sent it (or as ``RequestHeadRules`` made it canonical).
    package var target: String { storage.summary.target }
    /// The target's path: the target without its query.
    package var path: Substring { RequestPath.path(ofTarget: target) }
    package var version: HTTPVersion { storage.summary.version }
    /// Whether the connection may carry another request after this one: no `Connection: close`,
    /// HTTP/1.0 only with `keep-alive`.
    package var isKeepAlive: Bool { storage.summary.isKeepAlive }
    /// The body the head declares, as its framing fields say (for an HTTP/1 client, as the
    /// parser framed it).
    package var declaredBody: DeclaredBody { storage.summary.declaredBody }
    /// The head's bytes: the request line, the fields, the blank line.
    package var bytes: ByteBuffer { storage.summary.bytes }
    /// The number of fields.
    package var count: Int { storage.count }

    package typealias Field = HTTP1Field

    /// Hands `visit` each field in order, its bytes valid during the call.
    package func forEachField(_ visit: (Field) throws -> Void) rethrows {
        try storage.forEachField(visit)
    }

    /// The first field named `lowercase` (lowercase ASCII), handed to `read` while its bytes are valid.
    package func withFirst<Result>(_ lowercase: StaticString, _ read: (Field) -> Result) -> Result? {
        storage.first(where: { HeaderName.equals($0.name, lowercase) }, read)
    }

    /// The value of the first field named `lowercase` (lowercase ASCII), a `String` made now.
    package func first(_ lowercase: StaticString) -> String? {
        withFirst(lowercase) { $0.valueString }
    }

    /// Whether a field named `lowercase` (lowercase ASCII) is there.
    package func contains(_ lowercase: StaticString) -> Bool {
        withFirst(lowercase) { _ in true } ?? false
    }

    /// The values of every field named `lowercase`, in order, `String`s made now.
    package func values(_ lowercase: StaticString) -> [String] {
        var values: [String] = []
        forEachField { field in
            if HeaderName.equals(field.name, lowercase) { values.append(field.valueString) }
        }
        return values
    }

    /// The fields as NIO's `HTTPHeaders`, a `String` per name and value made now: for the
    /// readers that are not the proxy's (the gateway's own endpoints, a WebSocket handshake).
    package var headers: HTTPHeaders { storage.headers }

    /// The head as NIO's `HTTPRequestHead` (``headers`` made now), for Hummingbird's endpoints.
    package var requestHead: HTTPRequestHead {
        HTTPRequestHead(version: version, method: method, uri: target, headers: headers)
    }

    /// The same head with another target (its canonical form), the fields' bytes shared.
    package func with(target: String) -> ClientRequestHead {
        let summary = storage.summary
        return ClientRequestHead(storage: storage.with(Summary(
            method: summary.method, target: target, version: summary.version, isKeepAlive: summary.isKeepAlive,
            declaredBody: summary.declaredBody, bytes: summary.bytes
        )))
    }

    /// A head the gateway lays out from fields it holds as `String`s: an HTTP/2 stream's, or
    /// one a rule rewrote. Written as an HTTP/1.1 client would have sent it, `name: value` a
    /// line; the fields are taken as they are (their protocol's parser read them).
    package init(_ head: HTTPRequestHead) {
        var bytes = ByteBuffer()
        bytes.writeString(head.method.rawValue)
        bytes.writeStaticString(" ")
        bytes.writeString(head.uri)
        bytes.writeString(" HTTP/\(head.version.major).\(head.version.minor)\r\n")
        let lines = HTTP1HeadStorage<Summary>.layOut(head.headers.lazy.map { ($0.name, $0.value) }, after: &bytes)
        let summary = Summary(
            method: head.method, target: head.uri, version: head.version, isKeepAlive: head.isKeepAlive,
            declaredBody: DeclaredBody(head.headers), bytes: bytes
        )
        self = lines.withUnsafeBufferPointer { ClientRequestHead(summary, lines: $0) }
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        let left = lhs.storage.summary
        let right = rhs.storage.summary
        return left.method == right.method && left.target == right.target && left.version == right.version
            && left.isKeepAlive == right.isKeepAlive && left.declaredBody == right.declaredBody && left.bytes == right.bytes
            && lhs.storage.hasLines(of: rhs.storage)
    }
}
