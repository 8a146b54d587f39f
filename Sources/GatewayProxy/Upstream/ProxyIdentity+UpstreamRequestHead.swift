import GatewayAdmission
import GatewayPrimitives

// Here, not beside ProxyIdentity: the admission library knows nothing of upstream heads.
extension ProxyIdentity {
    /// Adds the identity headers the upstream reads (straight into the upstream's head: this
    /// runs for every proxied request).
    package func addHeaders(to head: inout UpstreamRequestHead) {
        forEachField { field, value in head.add(name: field.name, value: value) }
    }
}
