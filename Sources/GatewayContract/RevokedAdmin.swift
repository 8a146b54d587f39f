/// The response to revoking an admin credential.
public struct RevokedAdmin: Codable, Sendable, Hashable {
    public let adminID: String
    /// Always `revoked`.
    public let status: String

    public init(adminID: String, status: String = "revoked") {
        self.adminID = adminID
        self.status = status
    }

    enum CodingKeys: String, CodingKey {
        case status
        case adminID = "admin_id"
    }
}
