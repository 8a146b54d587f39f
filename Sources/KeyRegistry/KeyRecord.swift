import Foundation

/// What Redis holds about one API key: everything but the key.
public struct KeyRecord: Sendable, Hashable {
    public enum Status: String, Sendable, Codable {
        case active
        /// Rotated: valid until `expiresAt` (the grace period), then expired.
        case expiring
        case revoked
        case expired
    }

    public var id: String
    public var partnerID: String
    public var scopes: [String]
    /// The stored status; ``status(at:)`` folds in expiry.
    public var storedStatus: Status
    public var createdAt: Date
    public var expiresAt: Date?
    public var lastUsedAt: Date?
    /// ``APIKey/displayPrefix`` of the key, as stored at creation.
    public var displayPrefix: String
    /// A label for people; nil when none was given.
    public var name: String?
    /// Free-form labels, shown with the key and never used to decide anything.
    public var meta: [String: String] = [:]
    /// Where the key's calls may come from, within its partner's list.
    package var allowedNetworks = NetworkAllowlist()
    /// Calls the key may make per period (its partner's quota applies as well); nil for none.
    public var quota: Quota?
    /// SHA-256 of the key, the record's address in Redis.
    public var hash: String
    /// Counts the changes made to the record (not its uses): what `If-Match` compares.
    public var revision = 1

    /// The status as of `now`: an active or expiring key past its expiry is expired.
    public func status(at now: Date) -> Status {
        switch storedStatus {
        case .active, .expiring:
            if let expiresAt, expiresAt <= now { return .expired }
            return storedStatus
        case .revoked, .expired:
            return storedStatus
        }
    }

    /// The key's non-secret beginning (``APIKey/start``).
    public var start: String {
        displayPrefix.hasSuffix("…") ? String(displayPrefix.dropLast()) : displayPrefix
    }

    public func isUsable(at now: Date) -> Bool {
        let status = status(at: now)
        return status == .active || status == .expiring
    }
}
