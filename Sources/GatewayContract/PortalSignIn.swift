/// The body of `POST /portal/v1/session`: the code that came to `email`.
public struct PortalSignIn: Codable, Sendable, Hashable {
    public let email: String
    public let code: String

    public init(email: String, code: String) {
        self.email = email
        self.code = code
    }
}
