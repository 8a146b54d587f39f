import DriverTokens
import Foundation
import GatewayAdmission
import GatewayPrimitives
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

    /// The `200` response. Written by hand rather than with `JSONEncoder`, at a fraction of
    /// its cost on the login hot paths; every string is escaped by ``JSONText``.
    /// `cookieMaxAge` (a web call): the refresh token goes in the ``RefreshCookie`` for that
    /// many seconds instead of the body, out of the page's scripts' reach.
    func response(headers: HTTPFields = [:], cookieMaxAge: Int? = nil) -> Response {
        var json: [UInt8] = []
        json.reserveCapacity(1024)
        json.append(contentsOf: #"{"access_token":"#.utf8)
        JSONText.appendQuoted(access.token, to: &json)
        if cookieMaxAge == nil {
            json.append(contentsOf: #","refresh_token":"#.utf8)
            JSONText.appendQuoted(refreshToken.value, to: &json)
        }
        json.append(contentsOf: #","token_type":"Bearer","expires_in":"#.utf8)
        JSONText.appendDecimal(Int64(expiresIn), to: &json)
        json.append(contentsOf: #","access_token_expires_at":"#.utf8)
        JSONText.appendDecimal(Int64(access.claims.expiresAt.timeIntervalSince1970), to: &json)
        json.append(contentsOf: #","user_id":"#.utf8)
        JSONText.appendQuoted(userID, to: &json)
        json.append(contentsOf: (isNewUser ? #","is_new_user":true}"# : #","is_new_user":false}"#).utf8)
        var fields = headers
        fields[.contentType] = "application/json"
        fields[.cacheControl] = "no-store"
        if let cookieMaxAge { fields[.setCookie] = RefreshCookie.setting(refreshToken.value, maxAge: cookieMaxAge) }
        return Response(status: .ok, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: json)))
    }
}
