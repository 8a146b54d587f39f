/// Why an admin operation on partners, keys or admin credentials was refused.
public struct KeyRegistryError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case partnerNotFound
        case keyNotFound
        /// The key cannot be rotated: it is already rotated, revoked or expired.
        case keyNotRotatable
        /// The key was revoked before: revoking it again changes nothing.
        case keyAlreadyRevoked
        /// A list's `after` cursor names nothing in that list.
        case unknownCursor
        /// A key asked for scopes its partner does not hold: keys only narrow their partner's.
        case scopesNotHeld
        /// A member's change would give a key more than its partner was granted: a quota
        /// above the partner's, an allowlist wider than the partner's.
        case beyondGrant
        /// The partner already has `max_keys` live keys; a member cannot create another.
        case keyLimitReached
        case adminNotFound
        /// The admin credential is revoked or expired: it cannot be rotated or revoked again.
        case adminNotActive
        case memberNotFound
        /// The email is already a member's (of this partner or another): one member per address.
        case emailTaken
        /// Another member of the partner is creating a key at this moment.
        case busy
        /// A partner, key or admin credential with the id asked for exists already.
        case alreadyExists
        /// The partner, key, member or admin credential is not at the revision the change was
        /// made against (`If-Match`): someone changed it meanwhile.
        case revisionChanged
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
