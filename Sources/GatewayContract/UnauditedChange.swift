/// What a client hears for an ``UnauditedChangeBody``: the change was made and here is its
/// result, and yet the call failed (`failure`), so the caller shows the result and fails.
public struct UnauditedChange<Result: Sendable>: Error {
    public let result: Result
    public let failure: any Error

    public init(result: Result, failure: any Error) {
        self.result = result
        self.failure = failure
    }
}
