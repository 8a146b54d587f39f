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
/// Sendable though its storage is a `ManagedBuffer`: that is written once, as the head is made,
/// and only read after.
package struct ClientRequestHead: Equatable, @unchecked Sendable {
    /// What the head holds besides where its fields lie.
    private struct Header {
        let method: HTTPMethod
        let target: String
        let version: HTTPVersion
        let isKeepAlive: Bool
        let declaredBody: DeclaredBody
        let bytes: ByteBuffer
        let count: Int
    }

    /// The head and its fields' places after it, in one allocation (one retain per copy).
    private let storage: ManagedBuffer<Header, HTTP1FieldLine>

    init(
        method: HTTPMethod, target: String, version: HTTPVersion, isKeepAlive: Bool, declaredBody: DeclaredBody, bytes: ByteBuffer,
        lines: UnsafeBufferPointer<HTTP1FieldLine>
    ) {
        storage = ManagedBuffer.create(minimumCapacity: lines.count) { _ in
            Header(
                method: method, target: target, version: version, isKeepAlive: isKeepAlive, declaredBody: declaredBody, bytes: bytes,
                count: lines.count
            )
        }
        storage.withUnsafeMutablePointerToElements { elements in
            _ = UnsafeMutableBufferPointer(start: elements, count: lines.count).initialize(from: lines)
        }
    }

    package var method: HTTPMethod { storage.header.method }
    /// The request target as the client sent it (or as ``RequestHeadRules`` made it canonical).
    package var target: String { storage.header.target }
    package var version: HTTPVersion { storage.header.version }
    /// Whether the connection may carry another request after this one: no `Connection: close`,
    /// HTTP/1.0 only with `keep-alive`.
    package var isKeepAlive: Bool { storage.header.isKeepAlive }
    /// The body the head declares, as its framing fields say (for an HTTP/1 client, as the
    /// parser framed it).
    package var declaredBody: DeclaredBody { storage.header.declaredBody }
    /// The head's bytes: the request line, the fields, the blank line.
    package var bytes: ByteBuffer { storage.header.bytes }
    /// The number of fields.
    package var count: Int { storage.header.count }

    package typealias Field = HTTP1Field

    /// Hands `visit` each field in order, its bytes valid during the call.
    package func forEachField(_ visit: (Field) throws -> Void) rethrows {
        try storage.withUnsafeMutablePointers { header, lines in
            try header.pointee.bytes.withUnsafeReadableBytes { head in
                for index in 0..<header.pointee.count { try visit(lines[index].field(in: head)) }
            }
        }
    }

    /// The first field named `lowercase` (lowercase ASCII), handed to `read` while its bytes are valid.
    package func withFirst<Result>(_ lowercase: StaticString, _ read: (Field) -> Result) -> Result? {
        storage.withUnsafeMutablePointers { header, lines in
            header.pointee.bytes.withUnsafeReadableBytes { head in
                for index in 0..<header.pointee.count {
                    let field = lines[index].field(in: head)
                    if HeaderName.equals(field.name, lowercase) { return read(field) }
                }
                return nil
            }
        }
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
    package var headers: HTTPHeaders {
        var fields: [(String, String)] = []
        fields.reserveCapacity(count)
        forEachField { field in
            fields.append((String(decoding: field.name, as: UTF8.self), field.valueString))
        }
        return HTTPHeaders(fields)
    }

    /// The head as NIO's `HTTPRequestHead` (``headers`` made now), for Hummingbird's endpoints.
    package var requestHead: HTTPRequestHead {
        HTTPRequestHead(version: version, method: method, uri: target, headers: headers)
    }

    /// The same head with another target (its canonical form), the fields' bytes shared.
    package func with(target: String) -> ClientRequestHead {
        storage.withUnsafeMutablePointers { header, lines in
            let header = header.pointee
            return ClientRequestHead(
                method: header.method, target: target, version: header.version, isKeepAlive: header.isKeepAlive,
                declaredBody: header.declaredBody, bytes: header.bytes, lines: UnsafeBufferPointer(start: lines, count: header.count)
            )
        }
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
        var lines: [HTTP1FieldLine] = []
        lines.reserveCapacity(head.headers.count)
        for (name, value) in head.headers {
            let start = bytes.writerIndex
            bytes.writeString(name)
            let nameEnd = bytes.writerIndex
            bytes.writeStaticString(": ")
            bytes.writeString(value)
            let valueEnd = bytes.writerIndex
            bytes.writeStaticString("\r\n")
            lines.append(HTTP1FieldLine(start: start, name: start..<nameEnd, value: (nameEnd + 2)..<valueEnd, end: bytes.writerIndex))
        }
        bytes.writeStaticString("\r\n")
        self = lines.withUnsafeBufferPointer { lines in
            ClientRequestHead(
                method: head.method, target: head.uri, version: head.version, isKeepAlive: head.isKeepAlive,
                declaredBody: DeclaredBody(head.headers), bytes: bytes, lines: lines
            )
        }
    }

    package static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.method == rhs.method, lhs.target == rhs.target, lhs.version == rhs.version, lhs.isKeepAlive == rhs.isKeepAlive,
              lhs.declaredBody == rhs.declaredBody, lhs.bytes == rhs.bytes, lhs.count == rhs.count
        else { return false }
        return lhs.storage.withUnsafeMutablePointerToElements { left in
            rhs.storage.withUnsafeMutablePointerToElements { right in
                (0..<lhs.count).allSatisfy { left[$0] == right[$0] }
            }
        }
    }
}
