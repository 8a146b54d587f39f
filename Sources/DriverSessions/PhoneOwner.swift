/// Whom a phone number belonged to when the phone index was read
/// (``SessionStore/owner(of:)``): a login looks it up during a step of its own and hands it to
/// ``SessionStore/open(phone:channel:driverID:name:owner:)``, which joins that user (or, if
/// they are gone by then, starts the phone over, as when it reads the index itself).
public struct PhoneOwner: Sendable, Equatable {
    /// The phone's tag (``PhoneHasher``), so an owner is never used for another phone.
    let phoneTag: String
    /// The user, or nil: the phone has none yet.
    public let userID: String?
}
