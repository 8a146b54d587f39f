import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1

/// A response as stored for an `Idempotency-Key`: what a repeat of the request is answered.
/// Encoded in a small binary form (``encoded()``) before it is sealed: every keyed response
/// is encoded, and `JSONEncoder` with a base64 body cost more than the rest of the request.
package struct IdempotentResponse: Equatable, Sendable {
    package var status: Int
    /// The upstream's fields minus hop-by-hop ones and its framing: the replay gets its own.
    package var headers: [[String]]
    package var body: Data

    package init(status: Int, headers: HTTPHeaders, body: [UInt8]) {
        self.status = status
        self.headers = headers.compactMap { field in
            Self.isKept(field.name) ? [field.name, field.value] : nil
        }
        self.body = Data(body)
    }

    /// The fields as the replay sends them (before the response header rules and with the
    /// stored body's length).
    package var replayHeaders: HTTPHeaders {
        var fields = HTTPHeaders(headers.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil })
        fields.replaceOrAdd(name: "Content-Length", value: String(body.count))
        return fields
    }

    /// Hop-by-hop fields and the framing are the upstream connection's, not the response's.
    private static func isKept(_ name: String) -> Bool {
        switch name.lowercased() {
        case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
            "proxy-authenticate", "content-length", "x-request-id":
            false
        default:
            true
        }
    }

    /// Version 1: status, the field count, each field's name and value, the body; lengths
    /// before what they measure.
    package func encoded() -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(16 + body.count + headers.reduce(0) { $0 + 8 + $1.reduce(0) { $0 + $1.utf8.count } })
        buffer.writeInteger(UInt8(1))
        buffer.writeInteger(UInt16(clamping: status))
        let fields = headers.filter { $0.count == 2 }
        buffer.writeInteger(UInt16(clamping: fields.count))
        for field in fields {
            buffer.writeInteger(UInt32(field[0].utf8.count))
            buffer.writeString(field[0])
            buffer.writeInteger(UInt32(field[1].utf8.count))
            buffer.writeString(field[1])
        }
        buffer.writeInteger(UInt32(body.count))
        buffer.writeBytes(body)
        return Array(buffer.readableBytesView)
    }

    package static func decoded(_ bytes: [UInt8]) -> IdempotentResponse? {
        var buffer = ByteBuffer(bytes: bytes)
        guard buffer.readInteger(as: UInt8.self) == 1,
              let status = buffer.readInteger(as: UInt16.self),
              let count = buffer.readInteger(as: UInt16.self)
        else { return nil }
        var headers: [[String]] = []
        for _ in 0..<count {
            guard let nameLength = buffer.readInteger(as: UInt32.self), let name = buffer.readString(length: Int(nameLength)),
                  let valueLength = buffer.readInteger(as: UInt32.self), let value = buffer.readString(length: Int(valueLength))
            else { return nil }
            headers.append([name, value])
        }
        guard let bodyLength = buffer.readInteger(as: UInt32.self), let body = buffer.readBytes(length: Int(bodyLength)),
              buffer.readableBytes == 0
        else { return nil }
        return IdempotentResponse(status: Int(status), fields: headers, body: body)
    }

    private init(status: Int, fields: [[String]], body: [UInt8]) {
        self.status = status
        headers = fields
        self.body = Data(body)
    }
}

extension IdempotentResponse {
    /// Marks a response that is a stored one (draft-ietf-httpapi-idempotency-key-header).
    package static let replayedField = HTTPField.Name("Idempotent-Replayed")!
}
