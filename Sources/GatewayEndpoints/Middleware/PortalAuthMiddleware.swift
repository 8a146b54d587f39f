import Foundation
import GatewayEdge
import HTTPTypes
import Hummingbird
import KeyRegistry
import NIOCore
import NIOFoundationCompat

/// Decides who may call what on the portal API (`/portal/v1`): the one place that does, in
/// this order, each step refusing before anything changes:
///
/// 1. the call comes from the portal's own pages (``PortalCall``: `Origin`), else `403`;
/// 2. the path and method are a row of ``PortalRoute/all``, else `404`/`405`;
/// 3. but for the sign-in steps, the `pg_portal` session is live, its member still there and
///    their partner active (``MemberSessions``, read from Redis on every call), else `401`;
/// 4. the member's role allows the row, else `403 FORBIDDEN`;
/// 5. the call names no other partner: a `partner_id` in its query or JSON body that is not the
///    member's is `404`, as anything of another partner's is.
///
/// The member is then the caller (``PortalCaller``) and the audit trail's actor (``AuditActor``).
/// A refused call writes nothing: a partner's resources stay byte for byte as they were. Every
/// answer is `Cache-Control: no-store`: some carry a new key, none is anyone else's to keep.
struct PortalAuthMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let origin: String
    let sessions: MemberSessions
    let registry: KeyRegistry

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await authorized(request, context: context, next: next)
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }

    private func authorized(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let call = try PortalCall(request.headers, method: request.method, portalOrigin: origin)
        let route: PortalRoute
        switch PortalRoute.match(method: request.method, path: request.uri.path) {
        case .notFound: throw GatewayError.notFound
        case .methodNotAllowed: throw GatewayError.methodNotAllowed
        case .route(let matched): route = matched
        }
        if route.access == .open { return try await next(request, context) }
        guard let token = call.session, let (member, _) = try await sessions.member(for: token),
            let partner = try await registry.partner(member.partnerID), partner.status == .active
        else { throw PortalCall.signedOut }
        guard route.allows(member.role) else {
            throw GatewayError(.forbidden, "FORBIDDEN", "role \(member.role.rawValue) may not call \(route)")
        }
        var request = request
        try await Self.requireOwnPartner(&request, partnerID: member.partnerID, context: context)
        let caller = PortalCaller(member: member, partner: partner, session: token)
        let actor = AuditActor(id: member.id, name: member.name, partnerID: member.partnerID)
        return try await PortalCaller.$current.withValue(caller) {
            try await AuditActor.$current.withValue(actor) { try await next(request, context) }
        }
    }

    /// Refuses a call naming a partner other than `partnerID` (`partner_id` in the query, or
    /// in a JSON object body, which is read here and handed on whole).
    static func requireOwnPartner(_ request: inout Request, partnerID: String, context: Context) async throws {
        let other = GatewayError.notFound(what: "partner")
        if let named = request.uri.queryParameters["partner_id"], named != partnerID { throw other }
        guard request.method != .get, request.method != .head else { return }
        let body: ByteBuffer
        do {
            body = try await request.collectBody(upTo: context.maxUploadSize)
        } catch {
            throw GatewayError.invalidRequest("the body is larger than \(context.maxUploadSize / 1024) KiB")
        }
        guard body.readableBytes > 0, let object = try? JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any],
            let named = object["partner_id"]
        else { return }
        guard named as? String == partnerID else { throw other }
    }
}
