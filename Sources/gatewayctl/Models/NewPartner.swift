/// The body of `POST /v1/partners`. Unset fields are left out so the gateway's defaults apply
/// (rate 50, burst 100, scopes `sdk_tokens:mint`).
struct NewPartner: Encodable, Equatable {
    let name: String
    let rate: Double?
    let burst: Int?
    let scopes: [String]?
}
