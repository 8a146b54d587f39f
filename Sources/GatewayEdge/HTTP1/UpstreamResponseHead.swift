import GatewayPrimitives
import NIOCore
import NIOHTTP1

/// An upstream's response head as it came, read by ``HTTP1ResponseParser``: its status, its
/// bytes (from the status line through the blank line, a slice of the read buffer, not a copy)
/// and where each field's name and value lie in them, plus its framing. No `String` is made for
/// a field unless a reader asks for one (``headers``): an ordinary response's fields go to an
/// HTTP/1.1 client as the bytes they were (``forEachField(_:)``).
///
/// Sendable though its storage is a `ManagedBuffer`: that is written once, as the head is made,
/// and only read after.
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

    typealias FieldLine = HTTP1FieldLine

    /// What the head holds besides where its fields lie.
    private struct Header {
        let status: HTTPResponseStatus
        let version: HTTPVersion
        let framing: Framing
        let isKeepAlive: Bool
        let bytes: ByteBuffer
        let count: Int
    }

    /// The head and its fields' places after it, in one allocation. One reference: a part that
    /// holds the head goes through the pipeline (`NIOAny`) without a box of its own, and is
    /// copied with one retain.
    private let storage: ManagedBuffer<Header, FieldLine>

    init(
        status: HTTPResponseStatus, version: HTTPVersion, framing: Framing, isKeepAlive: Bool, bytes: ByteBuffer,
        lines: UnsafeBufferPointer<FieldLine>
    ) {
        storage = ManagedBuffer.create(minimumCapacity: lines.count) { _ in
            Header(status: status, version: version, framing: framing, isKeepAlive: isKeepAlive, bytes: bytes, count: lines.count)
        }
        storage.withUnsafeMutablePointerToElements { elements in
            _ = UnsafeMutableBufferPointer(start: elements, count: lines.count).initialize(from: lines)
        }
    }

    package var status: HTTPResponseStatus { storage.header.status }
    package var version: HTTPVersion { storage.header.version }
    package var framing: Framing { storage.header.framing }
    /// Whether the connection can carry another request after this response: no
    /// `Connection: close`, HTTP/1.0 only with `keep-alive`, a body not read until the close.
    package var isKeepAlive: Bool { storage.header.isKeepAlive }
    /// The head as it came: the status line, the fields, the blank line.
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

    package static func == (lhs: Self, rhs: Self) -> Bool {
        guard lhs.status == rhs.status, lhs.version == rhs.version, lhs.framing == rhs.framing, lhs.isKeepAlive == rhs.isKeepAlive,
              lhs.bytes == rhs.bytes, lhs.count == rhs.count
        else { return false }
        return lhs.storage.withUnsafeMutablePointerToElements { left in
            rhs.storage.withUnsafeMutablePointerToElements { right in
                (0..<lhs.count).allSatisfy { left[$0] == right[$0] }
            }
        }
    }

    /// The fields as NIO's `HTTPHeaders`, a `String` per name and value made now: for the
    /// readers that keep them (a keyed request's stored response).
    package var headers: HTTPHeaders {
        var fields: [(String, String)] = []
        fields.reserveCapacity(count)
        forEachField { field in
            fields.append((String(decoding: field.name, as: UTF8.self), String(decoding: field.value, as: UTF8.self)))
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
            lines.append(FieldLine(start: start, name: start..<nameEnd, value: (nameEnd + 2)..<valueEnd, end: bytes.writerIndex))
            if length == nil, HeaderName.equals(name, "content-length") { length = Int(value) }
        }
        bytes.writeStaticString("\r\n")
        self = lines.withUnsafeBufferPointer { lines in
            UpstreamResponseHead(
                status: status, version: .http1_1, framing: length.map { .length($0) } ?? .bodiless, isKeepAlive: true, bytes: bytes, lines: lines
            )
        }
    }
}
