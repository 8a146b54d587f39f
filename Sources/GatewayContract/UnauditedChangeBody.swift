/// The `503 AUDIT_UNAVAILABLE` answer of a change that made a secret (a key's create or
/// rotation, an admin credential's): the error shape, with what the change made under
/// `error.result`. The secret is shown nowhere else, so the answer must not lose it.
public struct UnauditedChangeBody<Result: Sendable>: Sendable {
    public struct Detail: Sendable {
        public let code: String
        public let message: String
        /// The change's answer, as a success would have carried it.
        public let result: Result
    }

    public let error: Detail

    public init(code: String, message: String, result: Result) {
        self.error = Detail(code: code, message: message, result: result)
    }
}

extension UnauditedChangeBody: Encodable where Result: Encodable {}
extension UnauditedChangeBody: Decodable where Result: Decodable {}
extension UnauditedChangeBody.Detail: Encodable where Result: Encodable {}
extension UnauditedChangeBody.Detail: Decodable where Result: Decodable {}
