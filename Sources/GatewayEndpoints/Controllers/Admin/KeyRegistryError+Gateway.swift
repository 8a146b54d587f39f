import GatewayEdge
import HTTPTypes
import KeyRegistry

extension KeyRegistryError: GatewayErrorConvertible {
    package var gatewayError: GatewayError {
        switch code {
        case .partnerNotFound: .notFound(what: "partner")
        case .keyNotFound: .notFound(what: "key")
        // As Kong and Unkey answer a change that the resource's state forbids.
        case .keyNotRotatable, .keyAlreadyRevoked: GatewayError(.conflict, "CONFLICT", message)
        case .unknownCursor: .invalidRequest("after must be a next_cursor from an earlier page of this list")
        case .scopesNotHeld, .beyondGrant: .invalidRequest(message)
        case .keyLimitReached, .emailTaken, .busy: GatewayError(.conflict, "CONFLICT", message)
        case .memberNotFound: .notFound(what: "member")
        case .adminNotFound: .notFound(what: "admin")
        case .adminNotActive: GatewayError(.conflict, "CONFLICT", message)
        }
    }
}
