import Testing

/// Puts every test of a suite (each case of a parameterized one) under the
/// ``ProcessBudget``: `.realProcesses` for tests that start processes, `.timingSensitive`
/// for those that also assert wall-clock bounds and so must not share the CPU with others.
public struct ProcessBudgetTrait: SuiteTrait, TestTrait, TestScoping {
    /// Slots taken; ``ProcessBudget/run(weight:_:)`` caps it at the whole budget.
    let weight: Int

    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        test.isSuite || testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        try await ProcessBudget.shared.run(weight: weight) {
            let started = ContinuousClock.now
            defer { ProcessBudgetLog.shared?.record(test, weight: weight, held: ContinuousClock.now - started) }
            try await function()
        }
    }
}

extension Trait where Self == ProcessBudgetTrait {
    /// The test starts real processes: it takes one slot of the budget.
    public static var realProcesses: Self { ProcessBudgetTrait(weight: 1) }

    /// The test starts real processes and asserts wall-clock bounds (a 503 within 350 ms, a
    /// revocation everywhere within a second): it takes the whole budget.
    public static var timingSensitive: Self { ProcessBudgetTrait(weight: .max) }
}
