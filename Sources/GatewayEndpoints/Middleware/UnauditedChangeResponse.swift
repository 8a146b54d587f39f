import Foundation
import GatewayContract
import GatewayEdge
import HTTPTypes
import Hummingbird

/// `503 AUDIT_UNAVAILABLE` with what the change made (``UnauditedChangeBody``), thrown by
/// ``AdminAudit`` for a change that made a secret and answered by ``ErrorMiddleware``.
struct UnauditedChangeResponse: Error {
    let body: ByteBuffer

    init<Result: Encodable & Sendable>(result: Result, message: String) {
        let document = UnauditedChangeBody(code: AdminAudit.unrecorded.code, message: message, result: result)
        // The result is one of the contract's own types, which always encode.
        body = ByteBuffer(bytes: (try? AdminJSON.encoder().encode(document)) ?? Data())
    }

    func makeResponse() -> Response {
        Response(status: AdminAudit.unrecorded.status, headers: [.contentType: "application/json"], body: .init(byteBuffer: body))
    }
}
