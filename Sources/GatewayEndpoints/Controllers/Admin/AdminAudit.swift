import Foundation
import GatewayEdge
import GatewayObservability
import GatewayPrimitives
import HTTPTypes
import Hummingbird
import KeyRegistry
import Logging
import Metrics

/// Appends an action to the audit trail: who (``AuditActor``: the admin credential that
/// authenticated the request, or the portal member), what, when and from where (the caller's
/// address). An admin's declared `X-Admin-Actor` is kept only as a free-text note: it decides
/// nothing; a member's entries carry the gateway's own note, never one the caller chose. A
/// member's entries are listed among their partner's own as well.
///
/// An action whose entry cannot be written is not answered as a success: `503
/// AUDIT_UNAVAILABLE`, whose message says the change was made (docs/DECISIONS.md, "An admin
/// action without its audit entry"); one that made a secret hands it over in that answer.
struct AdminAudit: Sendable {
    let log: AuditLog
    let logger: Logger

    static let unrecorded = GatewayError(
        .serviceUnavailable, "AUDIT_UNAVAILABLE",
        "the change was made, but its audit entry could not be written: check its state before repeating it"
    )

    /// `note`: the gateway's own note of a member's entry (why a change was refused); an
    /// admin's entry notes their `X-Admin-Actor`.
    func record(_ action: String, target: String, request: Request, context: GatewayRequestContext, note: String = "") async throws {
        guard await append(action, target: target, request: request, context: context, note: note) else { throw Self.unrecorded }
    }

    /// Records a change that made a secret, and answers `result`. Without its entry the answer
    /// is still `503 AUDIT_UNAVAILABLE`, but it carries `result`: the secret is shown only in
    /// it, and a rotated admin token's predecessor already stopped working.
    func record<Result: Encodable & Sendable>(
        _ action: String, target: String, request: Request, context: GatewayRequestContext, answering result: Result
    ) async throws -> Result {
        guard await append(action, target: target, request: request, context: context, note: "") else {
            throw UnauditedChangeResponse(result: result, message: Self.unrecordedWithResult)
        }
        return result
    }

    static let unrecordedWithResult =
        "the change was made, but its audit entry could not be written: the secret it made is in this answer only, so keep it, and check the state before repeating the call"

    /// Whether the entry was written; a failure is logged with the action and target.
    private func append(_ action: String, target: String, request: Request, context: GatewayRequestContext, note: String) async -> Bool {
        GatewayMetrics.counter("gateway_admin_actions_total", [("action", action)]).increment()
        // Only the middlewares set the actor; an entry without one would be a bug, and says so
        // rather than naming anyone.
        let actor = AuditActor.current
        let entry = AuditLog.Entry(
            at: Date(),
            actor: actor?.name ?? "unauthenticated",
            actorID: actor?.id ?? "",
            action: action,
            target: target,
            source: context.peerAddress?.ipAddress ?? "unknown",
            note: actor?.partnerID == nil ? Self.note(from: request) : String(note.prefix(256))
        )
        do {
            try await log.append(entry, partnerID: actor?.partnerID)
            return true
        } catch {
            logger.error("audit append failed", metadata: ["action": .string(action), "target": .string(target), "error": .string("\(error)")])
            return false
        }
    }

    /// The caller's `X-Admin-Actor`: printable ASCII, at most 128 characters; empty when absent.
    static func note(from request: Request) -> String {
        guard let raw = request.headers[.xAdminActor] else { return "" }
        return String(raw.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }.prefix(128).map(Character.init))
    }
}

extension HTTPField.Name {
    static let xAdminActor = HTTPField.Name(HeaderName.adminActor.name)!
}
