/// The body of `POST /v1/keys/{key_id}/rotate`. Without `grace` the gateway's default (24h)
/// applies; `0s` ends the old key at once.
struct KeyRotation: Encodable, Equatable {
    let grace: String?
}
