/// The one error shape of every gateway answer that is not a success:
/// `{"error": {"code": "NOT_FOUND", "message": "no such key"}}`. Clients switch on `code`;
/// `message` is for people and never carries a credential.
public struct ErrorBody: Codable, Sendable, Hashable {
    public struct Detail: Codable, Sendable, Hashable {
        public let code: String
        public let message: String

        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }

    public let error: Detail

    public init(code: String, message: String) {
        self.error = Detail(code: code, message: message)
    }
}
