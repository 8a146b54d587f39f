import GatewayContract

/// Makes a plan's changes through the admin API, one call per change (each audited with the
/// applying credential), `width` calls at a time: partners first (a new key or member may need
/// its partner, a key its partner's new scopes), then keys, members and admin credentials,
/// then what prune removes. At the first failure no further call starts; the calls under way finish, and the
/// report says what was applied and what was not. Applying the files again converges: the
/// next plan is made from what the gateway then holds.
public struct StateApplier<API: StateAPI>: Sendable {
    /// A key's or credential's secret, as its create answered it: handed to ``secrets`` once,
    /// never kept.
    public struct CreatedSecret: Sendable {
        public let kind: StateChange.Kind
        public let id: String
        public let label: String
        public let secret: String
    }

    public struct Applied: Sendable {
        public let change: StateChange
        /// Where the created key's or credential's secret went.
        public let secretWentTo: String?
    }

    /// A key or credential was created, but its secret could not be kept (`secrets` threw):
    /// applied, and the run's failure; the secret is gone, so the resource must be rotated.
    public struct SecretNotKept: Error, CustomStringConvertible {
        public let change: StateChange
        public let error: any Error

        public var description: String {
            "\(change.label) was created, but its secret could not be kept (\(error)): rotate it to get a new one"
        }
    }

    /// A key or credential was created and its secret kept, but the gateway could not audit
    /// the create (`503 AUDIT_UNAVAILABLE`, which hands the secret over): applied, and the
    /// run's failure.
    public struct MadeUnaudited: Error, CustomStringConvertible {
        public let applied: Applied
        public let error: any Error

        public var description: String { "\(error)" }
    }

    public struct Report: Sendable {
        public var applied: [Applied] = []
        /// The first failure: the change and why.
        public var failure: (change: StateChange, error: any Error)?
        /// Changes not made: after the failure, or failed themselves.
        public var notApplied: [StateChange] = []
    }

    let api: API
    let width: Int
    /// Stores a new secret (a file of its own, or the terminal) and says where it went.
    let secrets: @Sendable (CreatedSecret) throws -> String

    public init(api: API, width: Int = 16, secrets: @escaping @Sendable (CreatedSecret) throws -> String) {
        self.api = api
        self.width = max(1, width)
        self.secrets = secrets
    }

    /// Refuses nothing itself: a plan with blocked changes is the caller's to refuse.
    public func apply(_ plan: StatePlan) async -> Report {
        let changes = plan.changes.filter { $0.operation != nil }
        let phases: [[StateChange]] = [
            changes.filter { $0.kind == .partner && $0.action != .remove },
            changes.filter { $0.kind != .partner && $0.action != .remove },
            changes.filter { $0.action == .remove },
        ]
        var report = Report()
        var created: [String: String] = [:]
        for phase in phases {
            guard report.failure == nil else {
                report.notApplied += phase
                continue
            }
            let outcomes = await run(phase, createdPartners: created)
            for outcome in outcomes {
                switch outcome.result {
                case .success(let applied):
                    report.applied.append(applied)
                    if case .createPartner(let partner) = outcome.change.operation, let id = applied.change.id {
                        created[partner.name] = id
                    }
                case .failure(let unaudited as MadeUnaudited):
                    report.applied.append(unaudited.applied)
                    if report.failure == nil { report.failure = (unaudited.applied.change, unaudited.error) }
                case .failure(let lost as SecretNotKept):
                    report.applied.append(Applied(change: lost.change, secretWentTo: nil))
                    if report.failure == nil { report.failure = (lost.change, lost) }
                case .failure(let error):
                    if report.failure == nil { report.failure = (outcome.change, error) }
                    report.notApplied.append(outcome.change)
                case nil:
                    report.notApplied.append(outcome.change)
                }
            }
        }
        return report
    }

    private struct Outcome: Sendable {
        let change: StateChange
        /// nil: not started, since a call failed before.
        let result: Result<Applied, any Error>?
    }

    /// One phase's changes, `width` at a time, in order; none starts after one failed.
    private func run(_ changes: [StateChange], createdPartners: [String: String]) async -> [Outcome] {
        let results = await ParallelCalls.run(changes, width: width) { change in
            try await perform(change, createdPartners: createdPartners)
        }
        return zip(changes, results).map { Outcome(change: $0, result: $1) }
    }

    private func perform(_ change: StateChange, createdPartners: [String: String]) async throws -> Applied {
        var done = change
        switch change.operation {
        case .createPartner(let partner):
            done.id = try await api.createPartner(partner).partnerID
        case .updatePartner(let id, let update, let revision):
            _ = try await api.updatePartner(id, update, revision: revision)
        case .createKey(let reference, let key):
            let partnerID = try Self.partnerID(reference, createdPartners)
            let (createdKey, unaudited) = try await Self.made { try await api.createKey(partnerID: partnerID, key) }
            done.id = createdKey.keyID
            return try applied(done, CreatedSecret(kind: .key, id: createdKey.keyID, label: done.label, secret: createdKey.key), unaudited: unaudited)
        case .updateKey(let id, let update, let revision):
            _ = try await api.updateKey(id, update, revision: revision)
        case .revokeKey(let id, let revision):
            _ = try await api.revokeKey(id, revision: revision)
        case .createMember(let reference, let member):
            done.id = try await api.createMember(partnerID: try Self.partnerID(reference, createdPartners), member).memberID
        case .updateMember(let partnerID, let id, let update, let revision):
            _ = try await api.updateMember(partnerID: partnerID, id, update, revision: revision)
        case .removeMember(let partnerID, let id, let revision):
            try await api.removeMember(partnerID: partnerID, id, revision: revision)
        case .createAdmin(let admin):
            let (createdAdmin, unaudited) = try await Self.made { try await api.createAdmin(admin) }
            done.id = createdAdmin.adminID
            return try applied(done, CreatedSecret(kind: .admin, id: createdAdmin.adminID, label: done.label, secret: createdAdmin.token), unaudited: unaudited)
        case .revokeAdmin(let id, let revision):
            _ = try await api.revokeAdmin(id, revision: revision)
        case nil:
            break
        }
        return Applied(change: done, secretWentTo: nil)
    }

    /// What a create made, with the failure of one the gateway could not audit.
    private static func made<Result: Sendable>(_ call: () async throws -> Result) async throws -> (Result, (any Error)?) {
        do {
            return (try await call(), nil)
        } catch let unaudited as UnauditedChange<Result> {
            return (unaudited.result, unaudited.failure)
        }
    }

    /// The created `change` with its secret kept; ``MadeUnaudited`` when its create was not audited.
    private func applied(_ change: StateChange, _ secret: CreatedSecret, unaudited: (any Error)?) throws -> Applied {
        let applied = Applied(change: change, secretWentTo: try kept(secret, of: change))
        if let unaudited { throw MadeUnaudited(applied: applied, error: unaudited) }
        return applied
    }

    /// Where the secret of the created `change` went, or ``SecretNotKept``.
    private func kept(_ secret: CreatedSecret, of change: StateChange) throws -> String {
        do {
            return try secrets(secret)
        } catch {
            throw SecretNotKept(change: change, error: error)
        }
    }

    /// The id of a new key's or member's partner: one the gateway held, or one this apply
    /// created in an earlier phase.
    private static func partnerID(_ reference: PartnerReference, _ createdPartners: [String: String]) throws -> String {
        switch reference {
        case .id(let id): return id
        case .created(let name):
            guard let id = createdPartners[name] else { throw NotCreated(partner: name) }
            return id
        }
    }

    /// A key's or member's new partner was not created (which the phases' order rules out).
    struct NotCreated: Error, CustomStringConvertible {
        let partner: String
        var description: String { "partner \"\(partner)\" was not created before its keys and members" }
    }
}
