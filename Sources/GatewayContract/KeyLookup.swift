/// The body of `POST /v1/keys/find`: a presented key, to learn which key it is. Sent in a
/// body, never in a URL, so it reaches no access log; the gateway looks it up by its hash.
public struct KeyLookup: Codable, Sendable, Hashable {
    public let key: String

    public init(key: String) {
        self.key = key
    }
}
