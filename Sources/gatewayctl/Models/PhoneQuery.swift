/// The body of `users find`: the phone goes in the body, never in the URL, so no access log
/// on the way records it.
struct PhoneQuery: Codable, Equatable {
    let phone: String
}
