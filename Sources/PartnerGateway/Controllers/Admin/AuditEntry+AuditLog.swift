import GatewayContract
import KeyRegistry

extension AuditEntry {
    init(_ entry: AuditLog.Entry) {
        self.init(id: entry.id, at: entry.at, actor: entry.actor, action: entry.action, target: entry.target, source: entry.source)
    }
}
