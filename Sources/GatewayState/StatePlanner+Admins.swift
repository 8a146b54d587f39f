import Foundation
import GatewayContract

extension StatePlanner {
    /// Admin credentials: created with their token written out once, revoked, or left; a
    /// credential's name, role and expiry are fixed when it is created. The credential making
    /// the change is never pruned.
    func planAdmins(_ declared: [DeclaredAdmin], _ actual: [AdminInfo], into plan: inout StatePlan) {
        let matches = Matching(
            declared: declared.map { ($0.id, $0.name) }, actual: actual.map { ($0.adminID, $0.name) }, candidate: { actual[$0].status == "active" }
        )
        for (index, admin) in declared.enumerated() {
            switch matches.results[index] {
            case .found(let actualIndex):
                if let change = compared(admin, actual[actualIndex]) { plan.changes.append(change) }
            case .ambiguous(let count):
                plan.changes.append(blocked(
                    .admin, name: admin.name, at: admin.origin, "\(count) active admin credentials are named \"\(admin.name)\": give the id of the one meant"
                ))
            case .missing:
                guard admin.status != "revoked", !actual.contains(where: { Self.endedAsDeclared(admin, $0) }) else { continue }
                var change = StateChange(action: .create, kind: .admin, id: admin.id, name: admin.name)
                change.origin = admin.origin
                change.fields = [FieldChange("name", from: .none, to: .text(admin.name)), FieldChange("role", from: .none, to: .word(admin.role))]
                if let expiry = admin.expiresAt { change.fields.append(FieldChange("expires_at", from: .none, to: .time(expiry))) }
                if let expiry = admin.expiresAt, expiry <= now {
                    change.blocked = "expires_at \(StateTime.text(expiry)) has passed: a new credential must expire in the future"
                } else {
                    change.operation = .createAdmin(NewAdmin(adminID: admin.id, name: admin.name, role: admin.role, expiresAt: admin.expiresAt))
                }
                plan.changes.append(change)
            }
        }
        for index in actual.indices where !matches.claimed.contains(index) && actual[index].status == "active" {
            let admin = actual[index]
            var change = StateChange(action: .remove, kind: .admin, id: admin.adminID, name: admin.name)
            change.fields = [FieldChange("status", from: .word("active"), to: .word("revoked"))]
            change.operation = .revokeAdmin(id: admin.adminID, revision: admin.revision)
            if let applyingCredentialStart, admin.start == applyingCredentialStart {
                plan.spared.append(change)
            } else {
                unnamed(change, into: &plan)
            }
        }
    }

    /// Whether `actual` is the credential `admin` declares, expired at the expiry declared.
    static func endedAsDeclared(_ admin: DeclaredAdmin, _ actual: AdminInfo) -> Bool {
        actual.status == "expired" && admin.status != "revoked" && (admin.id ?? actual.adminID) == actual.adminID && admin.name == actual.name
            && actual.expiresAt != nil && seconds(admin.expiresAt) == seconds(actual.expiresAt)
    }

    private func compared(_ admin: DeclaredAdmin, _ actual: AdminInfo) -> StateChange? {
        var change = StateChange(action: .update, kind: .admin, id: actual.adminID, name: actual.name)
        change.origin = admin.origin
        guard actual.status == "active" else {
            if admin.status == "revoked" || Self.endedAsDeclared(admin, actual) { return nil }
            change.fields = [FieldChange("status", from: .word(actual.status), to: .word(admin.status))]
            change.blocked = "\(actual.adminID) is \(actual.status), and an ended credential cannot come back: remove its id to declare a new one"
            return change
        }
        if admin.status == "revoked" {
            change.fields = [FieldChange("status", from: .word("active"), to: .word("revoked"))]
            change.operation = .revokeAdmin(id: actual.adminID, revision: actual.revision)
            return change
        }
        if admin.name != actual.name { change.fields.append(FieldChange("name", from: .text(actual.name), to: .text(admin.name))) }
        if admin.role != actual.role { change.fields.append(FieldChange("role", from: .word(actual.role), to: .word(admin.role))) }
        if Self.seconds(admin.expiresAt) != Self.seconds(actual.expiresAt) {
            change.fields.append(FieldChange("expires_at", from: actual.expiresAt.map(StateValue.time) ?? .none, to: admin.expiresAt.map(StateValue.time) ?? .none))
        }
        guard !change.fields.isEmpty else { return nil }
        change.blocked = "a credential's name, role and expiry are fixed when it is created: revoke it (status: revoked) and declare a new one without its id"
        return change
    }
}
