import Foundation
import GatewayAdmission
import GatewayEdge
import HTTPTypes
import Hummingbird
import KeyRegistry
import NIOCore
import Synchronization

/// The partner-facing endpoints under `/partner/v1`, authenticated by `X-API-Key`.
struct PartnerAPIController {
    let authenticator: APIKeyAuthenticator
    let clientAddress: ClientAddress
    private let whoAmIBodies = EncodedBodies()

    init(authenticator: APIKeyAuthenticator, clientAddress: ClientAddress) {
        self.authenticator = authenticator
        self.clientAddress = clientAddress
    }

    private static let jsonHeaders: HTTPFields = [.contentType: "application/json; charset=utf-8"]

    func addRoutes(to router: Router<GatewayRequestContext>) {
        // Lets a partner check its key, like Stripe's `GET /v1/account`; it also measures the
        // cost of key authentication alone (benchmarks/api-key-auth.sh).
        router.get("/partner/v1/whoami") { request, context -> Response in
            let clientIP = clientAddress.resolve(peer: context.peerAddress, headers: request.headers)
            let identity = try await authenticator.authenticate(request.headers, clientIP: clientIP, scope: nil)
            let body = try whoAmIBodies.body(for: identity.key.id) {
                WhoAmIBody(partnerID: identity.partner.id, keyID: identity.key.id, scopes: identity.key.scopes)
            }
            return Response(status: .ok, headers: Self.jsonHeaders, body: .init(byteBuffer: body))
        }
    }
}

/// JSON bodies that never change for a given id, encoded once: Foundation's `JSONEncoder`
/// would cost more per request than the key check itself.
final class EncodedBodies: Sendable {
    private let bodies = Mutex([String: ByteBuffer]())
    private let limit = 10_000

    func body(for id: String, _ make: () -> some Encodable) throws -> ByteBuffer {
        if let cached = bodies.withLock({ $0[id] }) { return cached }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let buffer = ByteBuffer(bytes: try encoder.encode(make()))
        bodies.withLock { bodies in
            if bodies.count >= limit { bodies.removeAll(keepingCapacity: true) }
            bodies[id] = buffer
        }
        return buffer
    }
}

struct WhoAmIBody: Encodable {
    let partnerID: String
    let keyID: String
    let scopes: [String]
    enum CodingKeys: String, CodingKey {
        case scopes
        case partnerID = "partner_id"
        case keyID = "key_id"
    }
}
