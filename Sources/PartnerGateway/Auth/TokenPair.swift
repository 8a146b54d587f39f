import DriverTokens
import Foundation
import GatewayProxy
import HTTPTypes
import Hummingbird
import NIOCore

/// The token pair (docs/public-api.md), as every login, refresh and SDK mint answers it.
struct TokenPair: Sendable {
    let access: IssuedAccessToken
    let refreshToken: RefreshToken
    let userID: String
    let isNewUser: Bool
    /// `expires_in`: the access token's lifetime in seconds.
    let expiresIn: Int

    /// The `200` response. Written by hand rather than with `JSONEncoder`: every value but
    /// the user id is base64url, hex or a number, and the user id is escaped, so the output
    /// is always valid JSON at a fraction of the encoder's cost on the login hot paths.
    /// `cookieMaxAge` (a web call): the refresh token goes in the ``RefreshCookie`` for that
    /// many seconds instead of the body, out of the page's scripts' reach.
    func response(headers: HTTPFields = [:], cookieMaxAge: Int? = nil) -> Response {
        var text = "{\"access_token\":\""
        text += access.token
        if cookieMaxAge == nil {
            text += "\",\"refresh_token\":\""
            text += refreshToken.value
        }
        text += "\",\"token_type\":\"Bearer\",\"expires_in\":\(expiresIn),\"access_token_expires_at\":"
        text += String(Int64(access.claims.expiresAt.timeIntervalSince1970))
        text += ",\"user_id\":\""
        text += JSONText.escape(userID)
        text += "\",\"is_new_user\":\(isNewUser)}"
        var fields = headers
        fields[.contentType] = "application/json"
        fields[.cacheControl] = "no-store"
        if let cookieMaxAge { fields[.setCookie] = RefreshCookie.setting(refreshToken.value, maxAge: cookieMaxAge) }
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}

/// JSON string escaping for the few hand-written bodies.
enum JSONText {
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
