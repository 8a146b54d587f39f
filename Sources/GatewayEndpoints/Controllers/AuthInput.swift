import DriverSessions
import DriverTokens
import GatewayEdge
import HTTPTypes

/// Input rules of the public auth endpoints, in one place.
enum AuthInput {
    static let invalidPhone = GatewayError(.badRequest, "INVALID_PHONE", "phone must be a 10-digit Indian mobile number")

    /// docs/public-api.md: 10 digits starting 6–9, `+91`/`91` prefixes normalised away.
    static func phone(_ text: String) throws -> PhoneNumber {
        guard let phone = PhoneNumber(text) else { throw invalidPhone }
        return phone
    }

    /// An OTP (a portal sign-in code too) is 6 ASCII digits; anything else cannot be one and is
    /// a malformed request.
    static func otp(_ text: String, field: String = "otp") throws -> String {
        guard text.utf8.count == 6, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw GatewayError.invalidRequest("\(field) must be 6 digits")
        }
        return text
    }

    /// A refresh token of the wrong shape is refused like any unknown one, before Redis.
    /// `401 INVALID_TOKEN` for any refresh token that cannot be used: malformed, unknown,
    /// expired, revoked or already spent (the client cannot tell them apart, by design).
    static let invalidRefreshToken = GatewayError(.unauthorized, "INVALID_TOKEN", "the refresh token is invalid, expired or already used")

    static func refreshToken(_ text: String) throws -> RefreshToken {
        guard let token = RefreshToken(parsing: text) else { throw invalidRefreshToken }
        return token
    }

    /// A partner's id for its driver: 1 to 128 printable ASCII characters.
    static func driverID(_ text: String) throws -> String {
        guard (1...128).contains(text.utf8.count), text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw GatewayError.invalidRequest("driver_id must be 1 to 128 printable ASCII characters without spaces")
        }
        return text
    }

    /// A display name: up to 200 characters, no control characters; empty means none.
    static func name(_ text: String?) throws -> String? {
        guard let text, !text.isEmpty else { return nil }
        guard text.count <= 200, !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw GatewayError.invalidRequest("name must be at most 200 characters without control characters")
        }
        return text
    }
}
