/// The body of `POST /v1/admins/{admin_id}/rotate` (optional): a new lifetime from now;
/// unset keeps the credential's expiry.
public struct AdminRotation: Codable, Sendable, Hashable {
    public let expiresIn: String?

    public init(expiresIn: String? = nil) {
        self.expiresIn = expiresIn
    }

    enum CodingKeys: String, CodingKey {
        case expiresIn = "expires_in"
    }
}
