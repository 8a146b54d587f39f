import GatewayAdmission
import GatewayPrimitives

// Here, not beside ProxyIdentity: the admission library knows nothing of upstream heads.
extension ProxyIdentity {
    /// Adds the identity headers the upstream reads (straight into the upstream's head: this
    /// runs for every proxied request).
    package func addHeaders(to head: inout UpstreamRequestHead) {
        if let userID { head.add(name: HeaderName.gatewayUserID.name, value: userID) }
        if let channel { head.add(name: HeaderName.gatewayAuthChannel.name, value: channel) }
        if let partnerID { head.add(name: HeaderName.gatewayPartnerID.name, value: partnerID) }
        if let assertion { head.add(name: HeaderName.gatewayAssertion.name, value: assertion) }
    }
}
