import GatewayConfiguration
import GatewayEdge
import GatewayPrimitives
import HTTPTypes
import NIOCore
import NIOHTTP1
import RateLimit
import Synchronization

extension AdmissionPipeline {
    /// A credential presented to the verify API, as a proxied request would carry it.
    package enum Credential: Sendable {
        /// `X-API-Key`.
        case apiKey(String)
        /// `Authorization: Bearer`.
        case accessToken(String)

        var presented: PresentedCredentials {
            switch self {
            case .apiKey(let key): PresentedCredentials(apiKey: key)
            case .accessToken(let token): PresentedCredentials(authorization: "Bearer " + token)
            }
        }

        var auth: GatewayConfig.Route.Auth {
            switch self {
            case .apiKey: .apiKey
            case .accessToken: .bearer
            }
        }
    }

    /// The verify API's answer for `credential` (docs/edges.md), from this very pipeline: on
    /// `route` (the route's admission, its limit and the key's quotas spent and the call counted
    /// in the key's usage, no assertion), or with none the credential alone (a key's `scope`
    /// checked; nothing spent).
    ///
    /// A refusal of the credential is an answer (`valid: false` and the code a proxied request
    /// would get). Refusals of the call itself are thrown: `429` when the caller's address has
    /// spent its failed-key budget (`rate_limits.api_key_failures_per_ip`, which each failed
    /// verification spends as a failed request does), `503` when Redis is needed and down.
    package func verify(
        _ credential: Credential, scope: String, route: AdmissionRoute?, clientIP: String?, requestID: String
    ) async throws -> Verification {
        let checked = route.map {
            AdmissionRoute(name: $0.name, auth: $0.auth, scope: scope.isEmpty ? $0.scope : scope, rateLimit: $0.rateLimit, asserts: false)
        } ?? AdmissionRoute(name: "", auth: credential.auth, scope: scope, rateLimit: nil, limits: false, asserts: false)
        let decision = DecisionSeen()
        var memo = AdmissionMemo()
        let admission = admit(
            checked, credentials: credential.presented, clientIP: clientIP, requestID: requestID, memo: &memo,
            on: rateLimits.limiter.eventLoopGroup.any(), decided: { made in decision.value.withLock { $0 = made } }
        )
        do {
            let admitted: Admitted
            switch admission {
            case .admitted(let now): admitted = now
            case .pending(let later): admitted = try await later.get()
            }
            // On a route the call stands for one on it, and is counted as one (without a route
            // nothing is spent, nor counted).
            if route != nil, let keyID = admitted.identity.keyID, let usage = apiKeys.usage {
                ProxyUsage.countFinished(keyID: keyID, status: 200, reachedUpstream: false, usage: usage)
            }
            return Verification(admitted: admitted.identity, decision: decision.value.withLock { $0 })
        } catch let refusal as GatewayError {
            let made = decision.value.withLock { $0 }
            // The caller's own budget (no limit was decided on) and the store's failure are the
            // call's refusals, not the credential's.
            if (refusal.status == .tooManyRequests && made == nil) || refusal.status.code >= 500 { throw refusal }
            return Verification(refused: refusal.code, decision: made)
        }
    }
}

/// The limits' decision of one verification, told by the rate-limit gate's callback.
private final class DecisionSeen: Sendable {
    let value = Mutex<RateLimitDecision?>(nil)
}
