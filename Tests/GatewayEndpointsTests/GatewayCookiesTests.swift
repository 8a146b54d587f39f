import GatewayAdmission
@testable import GatewayEndpoints
import GatewayPrimitives
import Testing

/// Every cookie the gateway sets is one no upstream's `Set-Cookie` may set (``GatewayCookies``).
@Suite("The gateway's own cookies")
struct GatewayCookiesTests {
    @Test func everyCookieTheGatewaySetsIsKeptFromUpstreams() {
        for name in [PortalCookie.name, RefreshCookie.name, RefreshCookie.formerName] {
            let value = Array("\(name)=x; Path=/".utf8)
            #expect(value.withUnsafeBytes { GatewayCookies.isSet(by: $0) }, "\(name)")
        }
        #expect(Array("pg_portal_theme=dark".utf8).withUnsafeBytes { GatewayCookies.isSet(by: $0) } == false)
    }
}
