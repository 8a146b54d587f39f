/// Request bodies of the public auth endpoints (docs/public-api.md). Unknown fields are ignored,
/// as JSON APIs usually do; wrong types and missing fields are `400 INVALID_REQUEST`.
struct OTPTriggerRequest: Decodable {
    let phone: String
}

struct OTPVerifyRequest: Decodable {
    let phone: String
    let otp: String
}

struct RefreshRequest: Decodable {
    /// Absent in a web call: the cookie carries it (``WebCall``).
    let refreshToken: String?
    enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
}

struct LogoutRequest: Decodable {
    let refreshToken: String?
    enum CodingKeys: String, CodingKey { case refreshToken = "refresh_token" }
}

struct SDKTokenRequest: Decodable {
    let phone: String
    let driverID: String
    let name: String?
    enum CodingKeys: String, CodingKey {
        case phone, name
        case driverID = "driver_id"
    }
}
