import ArgumentParser

/// `--trail`: which of the two audit trails a command reads.
struct AuditTrailOptions: ParsableArguments {
    enum Trail: String, ExpressibleByArgument, CaseIterable {
        case actions
        case refusals
    }

    @Option(help: "actions: what credentials did; refusals: the calls their role did not allow (access.refused).")
    var trail: Trail = .actions
}
