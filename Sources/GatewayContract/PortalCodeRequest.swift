/// The body of `POST /portal/v1/session/code`: where to send a sign-in code.
public struct PortalCodeRequest: Codable, Sendable, Hashable {
    public let email: String

    public init(email: String) {
        self.email = email
    }
}
