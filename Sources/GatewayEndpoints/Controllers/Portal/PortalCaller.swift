import Foundation
import GatewayEdge
import KeyRegistry

/// Who a portal call is from, for the rest of the request: the signed-in member, their partner
/// as it is now, and the session (sign-out ends it). Set by ``PortalAuthMiddleware``, as a
/// task-local value.
struct PortalCaller: Sendable {
    let member: Member
    let partner: Partner
    /// The session cookie's value.
    let session: String

    @TaskLocal static var current: PortalCaller?

    /// The caller of a route that needs a session (the middleware refused the call otherwise).
    static func required() throws -> PortalCaller {
        guard let current else { throw PortalCall.signedOut }
        return current
    }
}
