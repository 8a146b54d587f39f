/// The body of `POST /v1/users/find`: the phone goes in the body, never in the URL, so no
/// access log on the way records it.
public struct PhoneQuery: Codable, Sendable, Hashable {
    public let phone: String

    public init(phone: String) {
        self.phone = phone
    }
}
