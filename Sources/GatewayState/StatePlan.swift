/// What applying the files would change, resource by resource, in a stable order: each
/// partner's change then its keys', then the admin credentials', then what prune removes.
public struct StatePlan: Sendable, Equatable {
    public var changes: [StateChange] = []
    /// What the files do not name, kept because pruning was not asked for (what `--prune`
    /// would remove).
    public var kept: [StateChange] = []
    /// What the files do not name but prune leaves: the credential making the change, so an
    /// apply never locks its caller out.
    public var spared: [StateChange] = []

    public init() {}

    /// Nothing would change: the gateway matches the files.
    public var isEmpty: Bool { changes.isEmpty }

    /// Changes the admin API cannot make: an apply refuses the whole plan while there is one.
    public var blocked: [StateChange] { changes.filter { $0.blocked != nil } }

    public func count(_ action: StateChange.Action) -> Int {
        changes.count { $0.action == action && $0.blocked == nil }
    }
}
