import Hummingbird
import KeyRegistry

/// The partner-facing endpoints under `/partner/v1`, authenticated by `X-API-Key`.
struct PartnerAPIController {
    let authenticator: APIKeyAuthenticator
    let clientAddress: ClientAddress

    func addRoutes(to router: Router<GatewayRequestContext>) {
        // Lets a partner check its key, like Stripe's `GET /v1/account`; it also measures the
        // cost of key authentication alone (benchmarks/api-key-auth.sh).
        router.get("/partner/v1/whoami") { request, context -> WhoAmIBody in
            let clientIP = clientAddress.resolve(peer: context.peerAddress, headers: request.headers)
            let identity = try await authenticator.authenticate(request.headers, clientIP: clientIP, scope: nil)
            return WhoAmIBody(partnerID: identity.partner.id, keyID: identity.key.id, scopes: identity.key.scopes)
        }
    }
}

struct WhoAmIBody: ResponseEncodable {
    let partnerID: String
    let keyID: String
    let scopes: [String]
    enum CodingKeys: String, CodingKey {
        case scopes
        case partnerID = "partner_id"
        case keyID = "key_id"
    }
}
