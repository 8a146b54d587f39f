import GatewayConfiguration
import GatewayEdge
import GatewayPrimitives
import NIOHTTP1

/// The credentials a request presents, as admission reads them: `Authorization` (a bearer
/// token) and `X-API-Key` (a partner's key), each the first field of its name (the edge
/// refuses a request with two, ``RequestHeadRules``). Only the one the route's `auth` asks
/// for is read: a `String` is made for that value alone.
package struct PresentedCredentials: Sendable {
    package let authorization: String?
    package let apiKey: String?

    package init(authorization: String? = nil, apiKey: String? = nil) {
        self.authorization = authorization
        self.apiKey = apiKey
    }

    /// What a proxied request's head presents for a route taking `auth`.
    package init(_ head: ClientRequestHead, for auth: GatewayConfig.Route.Auth) {
        switch auth {
        case .none: self.init()
        case .bearer: self.init(authorization: head.first(HeaderName.authorization.lowercaseBytes))
        case .apiKey: self.init(apiKey: head.first(HeaderName.apiKey.lowercaseBytes))
        }
    }

    /// The same from fields held as NIO's (a forwarded authorization request).
    package init(_ fields: HTTPHeaders) {
        self.init(authorization: fields.first(name: HeaderName.authorization.name), apiKey: fields.first(name: HeaderName.apiKey.name))
    }
}
