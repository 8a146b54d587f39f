import Foundation
import GatewayConfiguration
import GatewayEdge
import GatewayObservability
import GatewayPrimitives
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import RateLimit
import RedisClient
import Tracing

/// Who was admitted, and the `RateLimit-*` fields their response carries.
package struct Admitted: Sendable {
    package let identity: ProxyIdentity
    package let limitHeaders: HTTPFields

    package init(identity: ProxyIdentity, limitHeaders: HTTPFields) {
        self.identity = identity
        self.limitHeaders = limitHeaders
    }
}

/// A request's admission: answered at once, or to come.
package enum Admission {
    case admitted(Admitted)
    /// Completed on the connection's loop; fails with the ``GatewayError`` to answer.
    case pending(EventLoopFuture<Admitted>)
}

/// Admission of a proxied request, as one pipeline of steps: the caller, the route's limit,
/// then the assertion. The proxy engine asks it for every request a route takes.
///
/// Admission is answered from memory whenever it can be (`auth: none`, a bearer token or an
/// API key already verified and cached, a cached assertion, no route rate limit); otherwise
/// it is one asynchronous step, a future completed on the connection's event loop, that does
/// what is missing: the token or key lookup, the revocation load, the route's token bucket
/// (one Redis round trip for all its buckets), the assertion.
///
/// A class, not a struct: every admission that waits keeps it, and copying a struct of
/// references in and out would retain and release each one.
package final class AdmissionPipeline: Sendable {
    package let apiKeys: APIKeyAuthenticator
    package let bearer: BearerAuthenticator
    /// Signs the `X-Gateway-Assertion` of authenticated routes.
    package let assertions: AssertionSigner
    package let policies: RateLimitPolicies
    package let rateLimits: RateLimitGate
    package let logger: Logger

    package init(
        apiKeys: APIKeyAuthenticator, bearer: BearerAuthenticator, assertions: AssertionSigner, policies: RateLimitPolicies,
        rateLimits: RateLimitGate, logger: Logger
    ) {
        self.apiKeys = apiKeys
        self.bearer = bearer
        self.assertions = assertions
        self.policies = policies
        self.rateLimits = rateLimits
        self.logger = logger
    }

    /// Admits a request for `route` presenting `credentials` from `clientIP`: the caller, the
    /// route's rate limit, then (once the limit passed) the signed assertion. Each step is
    /// answered from memory or needs one lookup; when every answer is in memory the request is
    /// admitted at once, else the steps that need a lookup run as futures on `eventLoop`. A
    /// caller memory knows costs one Redis round trip for a limited route and no Swift task;
    /// only a caller it does not know yet (a first token, an uncached key) and a signature none
    /// is cached for take one. `requestID` names the request in the log of a failure;
    /// `decided`, when given, is told the limits' decision (the verify API reports its buckets).
    package func admit(
        _ route: AdmissionRoute, credentials: PresentedCredentials, clientIP: String?, requestID: String, memo: inout AdmissionMemo,
        on eventLoop: any EventLoop, decided: (@Sendable (RateLimitDecision) -> Void)? = nil
    ) -> Admission {
        if let identity = cachedIdentity(route, credentials: credentials, clientIP: clientIP, memo: &memo) {
            if route.auth == .bearer { CacheMetrics.token.hit() }
            return limitThenAssert(identity, route: route, clientIP: clientIP, requestID: requestID, memo: &memo, on: eventLoop, decided: decided)
        }
        // The steps after the lookup run in its callback: they keep the request's trace, so
        // the rate limit's Redis call is still a span of the request's.
        let context = ServiceContext.current
        return .pending(lookUpIdentity(route, credentials: credentials, clientIP: clientIP, requestID: requestID, on: eventLoop).flatMap { identity in
            ServiceContext.$current.withValue(context) {
                var memo = AdmissionMemo()
                switch self.limitThenAssert(
                    identity, route: route, clientIP: clientIP, requestID: requestID, memo: &memo, on: eventLoop, decided: decided
                ) {
                case .admitted(let admitted): return eventLoop.makeSucceededFuture(admitted)
                case .pending(let admitted): return admitted
                }
            }
        })
    }

    /// The steps after the caller is known: the route's limit, then the assertion. Its cache
    /// is looked at before the limit is checked, but a signature, when none is cached, is made
    /// only after the limit passed: a refused request never costs one.
    private func limitThenAssert(
        _ identity: ProxyIdentity, route: AdmissionRoute, clientIP: String?, requestID: String, memo: inout AdmissionMemo,
        on eventLoop: any EventLoop, decided: (@Sendable (RateLimitDecision) -> Void)?
    ) -> Admission {
        let asserted = cachedAssertion(for: identity, route: route, memo: &memo)
        guard let check = routeLimit(route, clientIP: clientIP, identity: identity, memo: &memo) else {
            guard let asserted else {
                return .pending(signed(identity, limitHeaders: [:], route: route, requestID: requestID, on: eventLoop))
            }
            return .admitted(Admitted(identity: asserted, limitHeaders: [:]))
        }
        let onStoreError = RateLimitGate.OnStoreError.storePolicy(policies.limits.onStoreError)
        let policy: RateLimitGate.Policy = route.rateLimit == nil ? .quota : .route
        let refused = ProxyUsage.counter(for: identity, usage: apiKeys.usage)
        guard let asserted else {
            let limited = rateLimits.admit(check, policy: policy, onStoreError: onStoreError, on: eventLoop, refused: refused, decided: decided) { $0 }
            return .pending(limited.flatMap { limitHeaders in
                self.signed(identity, limitHeaders: limitHeaders, route: route, requestID: requestID, on: eventLoop)
            })
        }
        return .pending(rateLimits.admit(
            check, policy: policy, onStoreError: onStoreError, on: eventLoop, refused: refused, decided: decided
        ) { limitHeaders in
            Admitted(identity: asserted, limitHeaders: limitHeaders)
        })
    }

    /// `identity` with its cached assertion, or itself on routes without one; nil when one
    /// must be signed.
    private func cachedAssertion(for identity: ProxyIdentity, route: AdmissionRoute, memo: inout AdmissionMemo) -> ProxyIdentity? {
        guard route.asserts, let channel = identity.channel, let subject = identity.subject else { return identity }
        guard let assertion = assertions.cachedAssertion(
            subject: subject, channel: channel, partnerID: identity.partnerID, audience: route.name, last: &memo.lastAssertion
        ) else { return nil }
        CacheMetrics.assertion.hit()
        if let last = memo.lastAsserted, last.assertion == assertion, last.isSameCaller(as: identity) { return last }
        let asserted = identity.with(assertion: assertion)
        memo.lastAsserted = asserted
        return asserted
    }

    /// `identity` admitted once its assertion is signed (a Swift task: jwt-kit signs
    /// asynchronously, about once a minute per caller and route).
    private func signed(
        _ identity: ProxyIdentity, limitHeaders: HTTPFields, route: AdmissionRoute, requestID: String, on eventLoop: any EventLoop
    ) -> EventLoopFuture<Admitted> {
        eventLoop.makeFutureWithTask {
            do {
                return Admitted(identity: try await self.signing(identity, route: route), limitHeaders: limitHeaders)
            } catch {
                throw self.refusal(for: error, route: route, requestID: requestID)
            }
        }
    }

    /// `identity` with its assertion for `route`, or itself on routes without one.
    private func signing(_ identity: ProxyIdentity, route: AdmissionRoute) async throws -> ProxyIdentity {
        guard route.asserts, let channel = identity.channel, let subject = identity.subject else { return identity }
        return identity.with(assertion: try await assertions.assertion(
            subject: subject, channel: channel, partnerID: identity.partnerID, audience: route.name
        ))
    }

    /// The route's rate-limit check for this caller, or nil without one. A per-user or
    /// per-partner check is built once per connection (its bucket key and Redis command are
    /// the same on every request of that caller); a per-address one each time, since the
    /// client behind a trusted proxy can change from request to request.
    private func routeLimit(_ route: AdmissionRoute, clientIP: String?, identity: ProxyIdentity, memo: inout AdmissionMemo) -> RateLimitCheck? {
        guard route.limits else { return nil }
        if identity.keyQuota != nil || identity.partnerQuota != nil {
            return quotaLimit(route, clientIP: clientIP, identity: identity, memo: &memo)
        }
        guard let limit = route.rateLimit else { return nil }
        let caller: String?
        switch limit.per {
        case .user: caller = identity.userID
        case .partner: caller = identity.partnerID
        case .ip: caller = nil
        }
        if let caller, let check = memo.lastLimit?.check(caller: caller, route: route.name, limit: limit) {
            return check
        }
        guard let bucket = policies.route(route, userID: identity.userID, partnerID: identity.partnerID, clientIP: clientIP) else {
            return nil
        }
        let check = rateLimits.limiter.prepare([bucket])
        if let caller { memo.lastLimit = AdmissionMemo.LastLimit(route: route.name, limit: limit, caller: caller, check: check) }
        return check
    }

    /// The check of the caller's quotas with the route's limit folded in (one script, one
    /// round trip), kept per connection for the rest of the period; made each time when the
    /// route limits per address (the client behind a trusted proxy can change).
    private func quotaLimit(_ route: AdmissionRoute, clientIP: String?, identity: ProxyIdentity, memo: inout AdmissionMemo) -> RateLimitCheck? {
        let now = Date()
        let perAddress = route.rateLimit?.per == .ip
        if !perAddress, let check = memo.lastQuota?.check(for: identity, route: route.name, limit: route.rateLimit, now: now) { return check }
        let bucket = policies.route(route, userID: identity.userID, partnerID: identity.partnerID, clientIP: clientIP)
        let made = QuotaBuckets.made(
            for: identity, route: route.name, limit: route.rateLimit, routeBucket: bucket,
            calendar: apiKeys.quotaCalendar, limiter: rateLimits.limiter, now: now
        )
        if !perAddress { memo.lastQuota = made }
        return made?.check
    }

    /// The caller as memory already knows them; nil when that takes more (a lookup, a
    /// refusal with its metrics).
    private func cachedIdentity(_ route: AdmissionRoute, credentials: PresentedCredentials, clientIP: String?, memo: inout AdmissionMemo) -> ProxyIdentity? {
        switch route.auth {
        case .none:
            return .anonymous
        case .bearer:
            guard let claims = bearer.cachedClaims(authorization: credentials.authorization, last: &memo.lastToken) else {
                return nil
            }
            if let last = memo.lastIdentity, last.isCaller(of: claims) { return last }
            let identity = ProxyIdentity(claims: claims)
            memo.lastIdentity = identity
            return identity
        case .apiKey:
            guard let partner = apiKeys.cachedIdentity(
                presented: credentials.apiKey, clientIP: clientIP, scope: route.scope, last: &memo.lastKey
            ) else { return nil }
            if let last = memo.lastIdentity, last.isCaller(of: partner) { return last }
            let identity = ProxyIdentity(partner: partner)
            memo.lastIdentity = identity
            return identity
        }
    }

    /// The caller, looked up (a token's signature and revocation, a key in Redis) in a Swift
    /// task, as the authenticators are asynchronous; a refusal fails the future with its
    /// ``GatewayError``.
    private func lookUpIdentity(
        _ route: AdmissionRoute, credentials: PresentedCredentials, clientIP: String?, requestID: String, on eventLoop: any EventLoop
    ) -> EventLoopFuture<ProxyIdentity> {
        eventLoop.makeFutureWithTask {
            do {
                switch route.auth {
                case .none:
                    return .anonymous
                case .bearer:
                    return ProxyIdentity(claims: try await self.bearer.authenticate(authorization: credentials.authorization))
                case .apiKey:
                    return ProxyIdentity(partner: try await self.apiKeys.authenticate(
                        presented: credentials.apiKey, clientIP: clientIP, scope: route.scope
                    ))
                }
            } catch {
                throw self.refusal(for: error, route: route, requestID: requestID)
            }
        }
    }

    /// What the client is answered for an admission that failed: the ``GatewayError`` itself,
    /// `503` when Redis could not answer a lookup (a key not cached yet: fail closed, as the
    /// endpoints do), anything else logged and answered 500.
    private func refusal(for error: any Error, route: AdmissionRoute, requestID: String) -> GatewayError {
        if let refusal = error as? GatewayError { return refusal }
        if error is RedisError { return .serviceUnavailable }
        logger.error("admitting a proxied request failed", metadata: ["route": .string(route.name), "error": "\(type(of: error))", "request_id": .string(requestID)])
        return GatewayError.internalError
    }
}
