@testable import GatewayPrimitives
import Testing

/// ``HeaderName``: ASCII case ignored, nothing else.
@Suite("Header names compared without case")
struct HeaderNameTests {
    @Test func prefixesAndEqualityIgnoreASCIICaseOnly() {
        #expect(HeaderName.hasPrefix("X-Gateway-User-Id", "x-gateway-"))
        #expect(HeaderName.hasPrefix("x-gateway-", "x-gateway-"))
        #expect(!HeaderName.hasPrefix("X-Gateway", "x-gateway-"))
        #expect(!HeaderName.hasPrefix("X-Gatewai-User-Id", "x-gateway-"))
        #expect(!HeaderName.hasPrefix("", "x"))
        #expect(HeaderName.hasPrefix("anything", ""))
        // Only ASCII capitals fold: `[` is `{` with bit 0x20 cleared, and must not match it.
        #expect(!HeaderName.hasPrefix("[", "{"))
        #expect(!HeaderName.hasPrefix("X-Gätewäy", "x-gateway"))
        // A long name (a heap string, not an inline one) and a substring-backed one.
        #expect(HeaderName.hasPrefix("X-GATEWAY-A-VERY-LONG-FIELD-NAME-INDEED", "x-gateway-a-very-long"))
        #expect(HeaderName.equals("Content-Length", "content-length"))
        #expect(!HeaderName.equals("Content-Lengths", "content-length"))
        #expect(!HeaderName.equals("Content-Lengt", "content-length"))
        #expect(HeaderName.isHopByHop("Transfer-Encoding"))
        #expect(HeaderName.isHopByHop("TE"))
        #expect(!HeaderName.isHopByHop("Trailers"))
        #expect(!HeaderName.isHopByHop("X-Request-Id"))
    }

    @Test func everyHopByHopFieldInAnyCaseAndNothingOfTheSameLength() {
        let hopByHop = [
            "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
            "upgrade", "proxy-authenticate", "proxy-authorization",
        ]
        for name in hopByHop {
            #expect(HeaderName.isHopByHop(name))
            #expect(HeaderName.isHopByHop(name.uppercased()))
            #expect(HeaderName.isHopByHop(name.prefix(1).uppercased() + name.dropFirst()))
            // One letter changed, the length kept: not hop-by-hop.
            #expect(!HeaderName.isHopByHop("x" + name.dropFirst()))
            #expect(!HeaderName.isHopByHop(name.dropLast() + "x"))
        }
        for name in ["host", "accept", "content-length", "authorization", "x-forwarded-for", "cookie", ""] {
            #expect(!HeaderName.isHopByHop(name))
        }
    }

    /// Each owned field's two forms are one name: the comparisons that take the lowercase form
    /// match the name as the gateway writes it.
    @Test func ownedFieldsAreWrittenAndComparedAsOneName() {
        let owned: [HeaderName.Field] = [
            HeaderName.authorization, HeaderName.apiKey, HeaderName.requestID, HeaderName.forwardedFor, HeaderName.forwardedProto,
            HeaderName.forwardedHost, HeaderName.realIP, HeaderName.forwarded, HeaderName.traceparent, HeaderName.tracestate,
            HeaderName.gatewayUserID, HeaderName.gatewayAuthChannel, HeaderName.gatewayPartnerID, HeaderName.gatewayAssertion,
            HeaderName.gatewaySignature, HeaderName.adminActor,
        ]
        for field in owned {
            #expect(field.lowercase == field.name.lowercased(), "\(field.name)")
            #expect(HeaderName.equals(field.name, field.lowercase), "\(field.name)")
        }
        for field in owned where field.name.hasPrefix("X-Gateway-") {
            #expect(HeaderName.hasPrefix(field.name, HeaderName.gatewayPrefix), "\(field.name)")
        }
    }
}
