import Testing
@testable import GatewayState

/// The loop export and apply share: each outcome at its item's index, never more than `width`
/// calls at once, and nothing started after a failure.
@Suite struct ParallelCallsTests {
    /// Counts the calls under way and the most seen at once.
    actor Gauge {
        var running = 0
        var most = 0
        var started: [Int] = []

        func enter(_ item: Int) {
            started.append(item)
            running += 1
            most = max(most, running)
        }

        func leave() { running -= 1 }
    }

    struct Refused: Error {}

    @Test func eachOutcomeIsAtItsItemsIndexAndAtMostWidthRunAtOnce() async throws {
        let gauge = Gauge()
        let results = await ParallelCalls.run(Array(0..<50), width: 4) { item in
            await gauge.enter(item)
            await Task.yield()
            await gauge.leave()
            return item * 2
        }
        #expect(try results.map { try $0?.get() } == (0..<50).map { $0 * 2 })
        #expect(await gauge.most <= 4)
        #expect(await gauge.started.count == 50)
    }

    @Test func afterAFailureNothingStartsAndWhatDidNotStartIsNil() async throws {
        let gauge = Gauge()
        let results = await ParallelCalls.run(Array(0..<5), width: 1) { item in
            await gauge.enter(item)
            if item == 2 { throw Refused() }
            return item
        }
        #expect(await gauge.started == [0, 1, 2], "one at a time, in order, and none after the failure")
        #expect(try results[0]?.get() == 0 && results[1]?.get() == 1)
        guard case .failure(let error) = results[2] else {
            Issue.record("the third call's failure is kept: \(String(describing: results[2]))")
            return
        }
        #expect(error is Refused)
        #expect(results[3] == nil && results[4] == nil)
    }
}
