import Foundation
import HTTPTypes
import NIOHTTP1

/// A response as stored for an `Idempotency-Key`: what a repeat of the request is answered.
/// Encoded as JSON (the body as base64 by `JSONEncoder`) before it is sealed.
package struct IdempotentResponse: Codable, Equatable, Sendable {
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

    package func encoded() -> [UInt8] {
        Array((try? JSONEncoder().encode(self)) ?? Data())
    }

    package static func decoded(_ bytes: [UInt8]) -> IdempotentResponse? {
        try? JSONDecoder().decode(IdempotentResponse.self, from: Data(bytes))
    }
}

extension IdempotentResponse {
    /// Marks a response that is a stored one (draft-ietf-httpapi-idempotency-key-header).
    package static let replayedField = HTTPField.Name("Idempotent-Replayed")!
}
