import DriverSessions
import DriverTokens
import GatewayAdmission
import GatewayEdge
import GatewayObservability
import Hummingbird
import KeyRegistry
import Logging
import NIOCore

/// `POST /partner/v1/sdk-token` (docs/public-api.md): a partner backend mints a token pair for one of
/// its drivers.
///
/// Order of checks: the key (from the verifier's cache, no Redis round trip when warm; 401 or
/// 403 with scope `sdk_tokens:mint`), then the partner's own bucket (one round trip; 429), then
/// the body, then the session (one round trip; the phone index was read during the bucket
/// check). Two Redis round trips in all, first login or not.
struct SDKTokenController {
    static let scope = "sdk_tokens:mint"

    let apiKeys: APIKeyAuthenticator
    let sessions: SessionStore
    let issuer: TokenIssuer
    let clientAddress: ClientAddress
    let policies: RateLimitPolicies
    let rateLimits: RateLimitGate
    let logger: Logger

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post("/partner/v1/sdk-token", use: mint)
    }

    @Sendable func mint(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let clientIP = clientAddress.resolve(peer: context.peerAddress, headers: request.headers)
        let caller = try await apiKeys.authenticate(request.headers, clientIP: clientIP, scope: Self.scope)
        // The body is read before the partner's limit is checked, so that the phone's owner is
        // looked up while the check runs (one Redis round trip fewer); a bad body is still
        // counted and answered after the check, with its RateLimit-* fields.
        let input: Result<MintInput, any Error>
        do {
            input = .success(try await MintInput(request: request, context: context))
        } catch {
            input = .failure(error)
        }
        let limited = rateLimits.admission([policies.partner(caller.partner)], policy: .partner, onStoreError: .failClosed)
        let owner: PhoneOwner? = if case .success(let input) = input { try? await sessions.owner(of: input.phone) } else { nil }
        let limitHeaders = try await limited.get()
        do {
            let input = try input.get()
            let channel = AccessTokenChannel.partnerSDK(partnerID: caller.partner.id)
            let session = try await sessions.open(
                phone: input.phone, channel: channel, driverID: input.driverID, name: input.name, owner: owner
            )
            let pair = try await issuer.pair(
                userID: session.userID, refreshToken: session.refreshToken, channel: channel,
                isNewUser: session.isNewUser, revokedBefore: session.revokedBefore
            )
            AuthMetrics.sdkTokenMinted(partnerID: caller.partner.id)
            return pair.response(headers: limitHeaders)
        } catch var error as GatewayError {
            // A limited endpoint carries its RateLimit-* headers on every response.
            error.headers.append(contentsOf: limitHeaders)
            throw error
        }
    }

    /// A mint request's body, checked.
    private struct MintInput: Sendable {
        let phone: PhoneNumber
        let driverID: String?
        let name: String?

        init(request: Request, context: GatewayRequestContext) async throws {
            let body = try await JSONBody.decode(SDKTokenRequest.self, from: request, context: context)
            phone = try AuthInput.phone(body.phone)
            driverID = try AuthInput.driverID(body.driverID)
            name = try AuthInput.name(body.name)
        }
    }
}
