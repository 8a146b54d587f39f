@testable import GatewayConfiguration
@testable import GatewayEdge
@testable import GatewayEndpoints
import GatewayAdmission
import HTTPTypes
import Testing

/// The refresh cookie's checks on the calls that use it (``WebCall``), in memory.
@Suite struct WebCallTests {
    static let app = "https://app.example.com"
    static let token = String(repeating: "ab", count: 32)

    static let cors: CORSPolicy = {
        var web = GatewayConfig.Web()
        web.allowedOrigins = [app]
        return CORSPolicy(web)
    }()

    static func call(_ fields: [(String, String)]) -> WebCall {
        var headers = HTTPFields()
        for (name, value) in fields { headers.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return WebCall(headers, cors: cors)
    }

    /// Header values are not case-sensitive to every browser stack in between; the check must
    /// not be either.
    @Test(arguments: ["cross-site", "Cross-Site", "CROSS-SITE"])
    func aCrossSiteCallMayNotUseTheCookieWhateverTheCase(site: String) {
        let call = Self.call([("Origin", Self.app), ("Sec-Fetch-Site", site), ("Cookie", "\(RefreshCookie.name)=\(Self.token)")])
        #expect(throws: WebCall.forbidden) { try call.refreshToken(body: nil) }
        #expect(throws: WebCall.forbidden) { try call.logoutToken(body: nil) }
    }

    @Test func aSameOriginCallUsesTheCookie() throws {
        let call = Self.call([("Origin", Self.app), ("Sec-Fetch-Site", "Same-Origin"), ("Cookie", "\(RefreshCookie.name)=\(Self.token)")])
        #expect(try call.refreshToken(body: nil) == Self.token)
    }

    /// Two cookies of the name (one planted for a longer path or by a sibling host) are not a
    /// credential to pick from: the call is refused, in the error shape, before either is used.
    @Test(arguments: [
        ["theme=dark; \(RefreshCookie.name)=\(String(repeating: "cd", count: 32)); \(RefreshCookie.name)=\(String(repeating: "ab", count: 32))"],
        ["\(RefreshCookie.name)=\(String(repeating: "cd", count: 32))", "lang=en; \(RefreshCookie.name)=\(String(repeating: "ab", count: 32))"],
    ])
    func twoRefreshCookiesAreRefused(cookies: [String]) {
        let call = Self.call([("Origin", Self.app)] + cookies.map { ("Cookie", $0) })
        let attempts: [() throws -> Void] = [
            { _ = try call.refreshToken(body: nil) }, { _ = try call.logoutToken(body: nil) }, { _ = try call.refreshToken(body: Self.token) },
        ]
        for attempt in attempts {
            let error = #expect(throws: GatewayError.self) { try attempt() }
            #expect(error?.status == .badRequest)
            #expect(error?.code == "INVALID_REQUEST")
        }
    }
}
