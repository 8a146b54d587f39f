import Foundation
import GatewayEdge
import GatewayObservability
import GatewayPrimitives
import HTTPTypes
import Hummingbird
import KeyRegistry
import Logging
import Metrics

/// Appends an admin action to the audit trail: who (the credential that authenticated the
/// request, ``AdminIdentity``), what, when and from where (the caller's address). A declared
/// `X-Admin-Actor` is kept only as a free-text note: it decides nothing.
///
/// An action whose entry cannot be written is not answered as a success: `503
/// AUDIT_UNAVAILABLE`, whose message says the change was made (docs/DECISIONS.md, "An admin
/// action without its audit entry").
struct AdminAudit: Sendable {
    let log: AuditLog
    let logger: Logger

    static let unrecorded = GatewayError(
        .serviceUnavailable, "AUDIT_UNAVAILABLE",
        "the change was made, but its audit entry could not be written: check its state before repeating it"
    )

    func record(_ action: String, target: String, request: Request, context: GatewayRequestContext) async throws {
        GatewayMetrics.counter("gateway_admin_actions_total", [("action", action)]).increment()
        // Only the middleware sets the identity; an entry without one would be a bug, and
        // says so rather than naming anyone.
        let identity = AdminIdentity.current
        let entry = AuditLog.Entry(
            at: Date(),
            actor: identity?.name ?? "unauthenticated",
            actorID: identity?.id ?? "",
            action: action,
            target: target,
            source: context.peerAddress?.ipAddress ?? "unknown",
            note: Self.note(from: request)
        )
        do {
            try await log.append(entry)
        } catch {
            logger.error("audit append failed", metadata: ["action": .string(action), "target": .string(target), "error": .string("\(error)")])
            throw Self.unrecorded
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
