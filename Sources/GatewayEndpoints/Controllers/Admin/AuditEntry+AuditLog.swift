import GatewayContract
import KeyRegistry

extension AuditEntry {
    init(_ entry: AuditLog.Entry) {
        self = entry.contract
    }
}
