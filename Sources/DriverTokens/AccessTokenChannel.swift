/// How the driver logged in.
///
/// The partner id rides inside the SDK case so that an SDK token without a partner, or an
/// OTP token with one, cannot even be constructed.
public enum AccessTokenChannel: Sendable, Hashable {
    /// Direct login with a one-time password.
    case otp
    /// A token minted for the driver by a partner through the SDK endpoint.
    case partnerSDK(partnerID: String)

    /// The `channel` claim's value (and the `X-Gateway-Auth-Channel` header's).
    public var name: String {
        switch self {
        case .otp: "otp"
        case .partnerSDK: "partner_sdk"
        }
    }

    /// The partner that minted the token, for the SDK channel only.
    public var partnerID: String? {
        switch self {
        case .otp: nil
        case .partnerSDK(let partnerID): partnerID
        }
    }
}
