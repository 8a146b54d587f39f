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
        case .adminNotActive, .alreadyExists: GatewayError(.conflict, "CONFLICT", message)
        // As HTTP answers an `If-Match` that no longer matches (RFC 9110, 13.1.1).
        case .revisionChanged: GatewayError(.preconditionFailed, "PRECONDITION_FAILED", message)
        }
    }
}
