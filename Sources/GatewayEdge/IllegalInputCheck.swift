/// What a state machine does with an input its state cannot have, which is a bug in its caller:
/// a debug build stops at it, a release build goes on with the answer the machine documents for
/// that input (nothing, or a reset where the exchange cannot go on).
///
/// Tests of those answers make their machines ``counting``: the pair is counted instead of
/// stopping the test, and the test checks that exactly the pairs it calls illegal were.
package struct IllegalInputCheck: Sendable {
    /// The machines of the running gateway.
    package static let asserting = IllegalInputCheck(asserts: true)
    /// For tests: illegal inputs counted, not asserted.
    package static let counting = IllegalInputCheck(asserts: false)

    private let asserts: Bool
    /// Illegal inputs seen so far (``counting`` only).
    package private(set) var count = 0

    private init(asserts: Bool) {
        self.asserts = asserts
    }

    package mutating func illegal(_ message: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line) {
        if asserts {
            assertionFailure(message(), file: file, line: line)
        } else {
            count += 1
        }
    }
}
