import HTTPTypes
import KeyRegistry

extension KeyRegistryError: GatewayErrorConvertible {
    var gatewayError: GatewayError {
        switch code {
        case .partnerNotFound: .notFound(what: "partner")
        case .keyNotFound: .notFound(what: "key")
        case .keyNotRotatable: GatewayError(.conflict, "CONFLICT", message)
        }
    }
}
