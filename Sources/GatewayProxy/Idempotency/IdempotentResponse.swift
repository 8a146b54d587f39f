import GatewayPrimitives
import HTTPTypes
import NIOCore
import NIOHTTP1

/// A response as stored for an `Idempotency-Key`: what a repeat of the request is answered.
/// Encoded in a small binary form (``encoded()``) before it is sealed: every keyed response
/// is encoded, and `JSONEncoder` with a base64 body cost more than the rest of the request.
package struct IdempotentResponse: Equatable, Sendable {
    package var status: Int
    /// The upstream's fields minus hop-by-hop ones (those its `Connection` names too) and its
    /// framing, in order: the replay gets its own.
    package var headers: HTTPHeaders
    package var body: [UInt8]

    package init(status: Int, headers: HTTPHeaders, body: [UInt8]) {
        self.status = status
        // The fields the upstream's `Connection` names are hop-by-hop too; the replay has no
        // `Connection` left to name them, so they are dropped here.
        let listed = headers["connection"].flatMap { $0.split(separator: ",") }.map { String($0.filter { $0 != " " && $0 != "\t" }).lowercased() }
        var kept = HTTPHeaders()
        kept.reserveCapacity(headers.count)
        for field in headers where Self.isKept(field.name) && !listed.contains(where: { HeaderName.equals(field.name, $0) }) {
            kept.add(name: field.name, value: field.value)
        }
        self.headers = kept
        self.body = body
    }

    /// The fields as the replay sends them (before the response header rules and with the
    /// stored body's length).
    package var replayHeaders: HTTPHeaders {
        var fields = headers
        fields.replaceOrAdd(name: "Content-Length", value: String(body.count))
        return fields
    }

    /// Hop-by-hop fields and the framing are the upstream connection's, not the response's.
    private static func isKept(_ name: String) -> Bool {
        !notKept.contains { HeaderName.equals(name, $0) }
    }

    private static let notKept = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
        "proxy-authenticate", "content-length", "x-request-id",
    ]

    /// Version 1: status, the field count, each field's name and value, the body; lengths
    /// before what they measure. Written into one array of exactly its size.
    package func encoded() -> [UInt8] {
        let fields = headers.prefix(Int(UInt16.max))
        var size = 9 + body.count
        for field in fields { size += 8 + field.name.utf8.count + field.value.utf8.count }
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var index = 0
            func write<T: FixedWidthInteger>(_ value: T) {
                withUnsafeBytes(of: value.bigEndian) { bytes in
                    for byte in bytes {
                        buffer[index] = byte
                        index += 1
                    }
                }
            }
            func write(_ bytes: some Collection<UInt8>) {
                index = buffer[index...].initialize(fromContentsOf: bytes)
            }
            write(UInt8(1))
            write(UInt16(clamping: status))
            write(UInt16(fields.count))
            for field in fields {
                write(UInt32(field.name.utf8.count))
                write(field.name.utf8)
                write(UInt32(field.value.utf8.count))
                write(field.value.utf8)
            }
            write(UInt32(body.count))
            write(body)
            count = index
        }
    }

    package static func decoded(_ bytes: [UInt8]) -> IdempotentResponse? {
        var buffer = ByteBuffer(bytes: bytes)
        guard buffer.readInteger(as: UInt8.self) == 1,
              let status = buffer.readInteger(as: UInt16.self),
              let count = buffer.readInteger(as: UInt16.self)
        else { return nil }
        var headers = HTTPHeaders()
        for _ in 0..<count {
            guard let nameLength = buffer.readInteger(as: UInt32.self), let name = buffer.readString(length: Int(nameLength)),
                  let valueLength = buffer.readInteger(as: UInt32.self), let value = buffer.readString(length: Int(valueLength))
            else { return nil }
            headers.add(name: name, value: value)
        }
        guard let bodyLength = buffer.readInteger(as: UInt32.self), let body = buffer.readBytes(length: Int(bodyLength)),
              buffer.readableBytes == 0
        else { return nil }
        return IdempotentResponse(status: Int(status), fields: headers, body: body)
    }

    private init(status: Int, fields: HTTPHeaders, body: [UInt8]) {
        self.status = status
        headers = fields
        self.body = body
    }
}

extension IdempotentResponse {
    /// Marks a response that is a stored one (draft-ietf-httpapi-idempotency-key-header).
    package static let replayedField = HTTPField.Name("Idempotent-Replayed")!
}
