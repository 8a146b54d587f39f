import GatewayContract

extension UnauditedChange {
    /// Shows what `call` answers. A change the gateway made without its audit entry is shown
    /// all the same (its secret is in no other answer), and then the command fails with it.
    static func showing(_ call: () async throws -> Result, with show: (Result) throws -> Void) async throws {
        let result: Result
        do {
            result = try await call()
        } catch let unaudited as UnauditedChange<Result> {
            try show(unaudited.result)
            throw unaudited.failure
        }
        try show(result)
    }
}
