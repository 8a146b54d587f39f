import DriverSessions
import Foundation
import GatewayContract
import GatewayEdge
import HTTPTypes
import Hummingbird
import KeyRegistry
import Logging
import NIOCore
import NIOFoundationCompat

/// The portal's sign-in (docs/portal.md, "Sessions"): a code to the member's email, the code
/// for a session in the `pg_portal` cookie, and sign-out. The codes are one-time codes with
/// every cap of drivers' OTPs (``OneTimeCodes``), sent through their own signed webhook.
///
/// Nothing here tells a member's address from any other: a code request is answered `202` with
/// the same body whoever asks, after the same steps (a code is stored for every address, and
/// sent, after the answer, only to a member's); a sign-in with a wrong code and one for an
/// address that is no member's get the same `401`. (A disabled partner's member is sent a code
/// and refused at sign-in: looking the partner up here would be a step only members take.)
struct PortalSessionController {
    let members: MemberRegistry
    let sessions: MemberSessions
    let registry: KeyRegistry
    let codes: OneTimeCodes
    /// `portal.delivery`: the email webhook, or a fixed code.
    let delivery: OTPDelivery
    let hasher: PhoneHasher
    let clientAddress: ClientAddress
    let audit: AdminAudit

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("session/code", use: requestCode)
        group.post("session", use: signIn)
        group.delete("session", use: signOut)
    }

    @Sendable func requestCode(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(PortalCodeRequest.self, from: request, context: context)
        let email = try AdminValidation.email(body.email)
        let tag = hasher.tag(forEmail: email)
        let limitHeaders = try await codes.admitRequest(tag: tag, clientIP: clientIP(request, context))
        let member = try await members.member(email: email)
        let code = try await codes.issue(tag: tag, delivery: delivery)
        if let member {
            // After the answer: a webhook's time would tell a member's address from another.
            let delivery = delivery
            let logger = context.logger
            Task { try? await delivery.deliver(code, toEmail: email, masked: Self.masked(email), requestLogger: logger) }
        }
        var headers = limitHeaders
        headers[.cacheControl] = "no-store"
        return codes.requested(.accepted, "accepted", headers: headers)
    }

    @Sendable func signIn(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let body = try await JSONBody.decode(PortalSignIn.self, from: request, context: context)
        let email = try AdminValidation.email(body.email)
        let code = try AuthInput.otp(body.code, field: "code")
        let (member, budget) = try await codes.accept(code, tag: hasher.tag(forEmail: email), clientIP: clientIP(request, context), words: .member) {
            try? await members.member(email: email)
        }
        // A right code for an address that is no (active) member's is a wrong one, and keeps
        // its token of the address's failure budget.
        guard let member, try await registry.partner(member.partnerID)?.status == .active, let opened = try await sessions.open(for: member) else {
            throw GatewayError(.unauthorized, "INVALID_OTP", "the code is wrong or already used")
        }
        await codes.giveBack(budget, logger: context.logger)
        try await AuditActor.$current.withValue(AuditActor(id: member.id, name: member.name, partnerID: member.partnerID)) {
            try await audit.record("member.sign_in", target: member.id, request: request, context: context)
        }
        context.logger.info("portal sign-in", metadata: ["member_id": .string(member.id), "partner_id": .string(member.partnerID)])
        let session = PortalSession(memberID: member.id, partnerID: member.partnerID, role: member.role.rawValue, expiresAt: opened.expiresAt)
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "no-store"]
        headers[.setCookie] = PortalCookie.setting(opened.token, maxAge: Int(sessions.lifetime.components.seconds))
        let data = try AdminJSON.encoder().encode(session)
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(data: data)))
    }

    /// Ends the caller's session on every instance at once, audited as `member.sign_out`.
    @Sendable func signOut(_ request: Request, context: GatewayRequestContext) async throws -> Response {
        let caller = try PortalCaller.required()
        try await sessions.close(caller.session)
        try await audit.record("member.sign_out", target: caller.member.id, request: request, context: context)
        return Response(status: .noContent, headers: [.setCookie: PortalCookie.clearing])
    }

    private func clientIP(_ request: Request, _ context: GatewayRequestContext) -> String {
        clientAddress.resolve(peer: context.peerAddress, headers: request.headers) ?? "unknown"
    }

    /// `a***@partner.example`: how logs name a member's address.
    static func masked(_ email: String) -> String {
        guard let at = email.firstIndex(of: "@") else { return "***" }
        return String(email.prefix(1)) + "***" + String(email[at...])
    }
}
