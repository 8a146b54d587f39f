import GatewayAdmission
import GatewayConfiguration
import GatewayEdge
import GatewayObservability
import GatewayProxy
import Hummingbird

/// `POST /v1/verify` on the authorization listener (docs/edges.md): a service not behind any
/// proxy asks whether a partner's key or a driver's token is good, and on which terms. The
/// answer comes from the proxy engine's own ``AdmissionPipeline`` (``AdmissionPipeline/verify(_:scope:route:clientIP:requestID:)``),
/// so it is exactly what a proxied request carrying the credential would get. The caller is a
/// `verifier` admin credential (``AdminAuthMiddleware``).
struct VerifyController {
    let engine: ProxyEngine

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post("/v1/verify", use: verify)
    }

    @Sendable func verify(_ request: Request, context: GatewayRequestContext) async throws -> Verification {
        let body = try await JSONBody.decode(VerifyRequest.self, from: request, context: context)
        let credential: AdmissionPipeline.Credential
        switch (body.apiKey, body.accessToken) {
        case (let key?, nil): credential = .apiKey(key)
        case (nil, let token?): credential = .accessToken(token)
        default: throw GatewayError.invalidRequest("give exactly one of api_key and access_token")
        }
        let scope = body.scope ?? ""
        var route: AdmissionRoute?
        if let name = body.route {
            guard let named = engine.routes.all.first(where: { $0.name == name }) else {
                throw GatewayError.invalidRequest("no route is named \"\(name.prefix(64))\"")
            }
            if !scope.isEmpty, !named.scope.isEmpty, scope != named.scope {
                throw GatewayError.invalidRequest("route \"\(name)\" asks for scope \"\(named.scope)\": leave scope out, or give that one")
            }
            route = named.admission
        }
        let clientIP = engine.clientAddress.resolve(peer: context.peerAddress, headers: request.headers)
        let routeLabel = route?.name ?? "none"
        let verification: Verification
        do {
            verification = try await engine.admission.verify(
                credential, scope: scope, route: route, clientIP: clientIP, requestID: context.requestID
            )
        } catch let refusal as GatewayError {
            AuthorizationMetrics.decided(.init(kind: "verify", route: routeLabel, decision: "refused", reason: refusal.code))
            context.facts.update { $0.decision = "refused" }
            throw refusal
        }
        let reason = verification.code ?? (route?.auth == GatewayConfig.Route.Auth.none ? "none" : "ok")
        let decision = verification.valid ? "allowed" : "refused"
        AuthorizationMetrics.decided(.init(kind: "verify", route: routeLabel, decision: decision, reason: reason))
        context.facts.update { facts in
            facts.userID = verification.userID
            facts.partnerID = verification.partnerID
            facts.keyID = verification.keyID
            facts.auth = reason
            facts.decision = decision
        }
        return verification
    }
}

extension Verification: ResponseEncodable {}
