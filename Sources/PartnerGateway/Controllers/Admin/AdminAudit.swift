import Foundation
import GatewayObservability
import HTTPTypes
import Hummingbird
import KeyRegistry
import Logging
import Metrics

/// Appends an admin action to the audit log, naming who (the declared `X-Admin-Actor`),
/// what, when and from where (the caller's address).
struct AdminAudit: Sendable {
    let log: AuditLog
    let logger: Logger

    func record(_ action: String, target: String, request: Request, context: GatewayRequestContext) async {
        GatewayMetrics.counter("gateway_admin_actions_total", [("action", action)]).increment()
        let entry = AuditLog.Entry(
            at: Date(),
            actor: Self.actor(from: request),
            action: action,
            target: target,
            source: context.peerAddress?.ipAddress ?? "unknown"
        )
        do {
            try await log.append(entry)
        } catch {
            // The action itself succeeded; losing its audit line is logged loudly, not hidden.
            logger.error("audit append failed", metadata: ["action": .string(action), "target": .string(target), "error": .string("\(error)")])
        }
    }

    /// The caller's declared identity: printable ASCII, at most 128 characters.
    static func actor(from request: Request) -> String {
        guard let raw = request.headers[.xAdminActor] else { return "unknown" }
        let cleaned = String(raw.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F }.prefix(128).map(Character.init))
        return cleaned.isEmpty ? "unknown" : cleaned
    }
}

extension HTTPField.Name {
    static let xAdminActor = HTTPField.Name("X-Admin-Actor")!
}
