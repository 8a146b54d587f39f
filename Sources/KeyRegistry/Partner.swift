import Foundation

/// A partner (an operator such as NammaYatri) and the limits its keys share.
public struct Partner: Sendable, Hashable, Codable {
    public enum Status: String, Sendable, Codable {
        case active
        /// Every key of a disabled partner is refused with 403 until it is enabled again.
        case disabled
    }

    public var id: String
    public var name: String
    public var status: Status
    /// Scopes new keys get when none are asked for.
    public var scopes: [String]
    /// Requests per second refilled into the partner's bucket.
    public var rate: Double
    /// The bucket's capacity.
    public var burst: Int
    public var createdAt: Date
    /// Where its keys' calls may come from; each key's own list narrows it further.
    package var allowedNetworks = NetworkAllowlist()
    /// Calls all its keys together may make per period; nil for no quota.
    public var quota: Quota?
    /// How many live (active or expiring) keys its members may hold: past it the portal
    /// creates no more (the operator's admins are not bound by it).
    public var maxKeys = Partner.defaultMaxKeys
    /// Counts the changes made to the record: what `If-Match` compares.
    public var revision = 1

    public init(id: String, name: String, status: Status, scopes: [String], rate: Double, burst: Int, createdAt: Date) {
        self.id = id
        self.name = name
        self.status = status
        self.scopes = scopes
        self.rate = rate
        self.burst = burst
        self.createdAt = createdAt
    }

    public static let defaultScopes = ["sdk_tokens:mint"]
    public static let defaultRate = 50.0
    public static let defaultBurst = 100
    public static let defaultMaxKeys = 20
}
