import GatewayEdge
@testable import GatewayProxy
import NIOHTTP1
import Testing

/// ``ForwardedRequest``: which request an edge asks about on `/forward`, by Envoy's, Traefik's
/// and nginx's conventions in that order, made canonical as a client's path is.
@Suite("Forward authorization: the request asked about (in memory)")
struct ForwardedRequestTests {
    private static func head(_ method: HTTPMethod, _ uri: String, _ fields: [(String, String)] = []) -> HTTPRequestHead {
        HTTPRequestHead(version: .http1_1, method: method, uri: uri, headers: HTTPHeaders(fields))
    }

    private static func asked(_ head: HTTPRequestHead) -> (method: String, target: String, convention: ForwardedRequest.Convention)? {
        guard case .success(let request) = ForwardedRequest.of(head) else { return nil }
        return (request.method.rawValue, request.target, request.convention)
    }

    private static func refusal(_ head: HTTPRequestHead) -> String? {
        guard case .failure(let error) = ForwardedRequest.of(head) else { return nil }
        #expect(error.status == .badRequest && error.code == "INVALID_REQUEST")
        return error.message
    }

    @Test func envoysPathComesFirst() throws {
        // The path after /forward (already canonical: the edge rules saw the whole target),
        // the forward request's method, whatever fields a client slipped in.
        let envoy = try #require(Self.asked(Self.head(.POST, "/forward/orders/7?expand=1", [
            ("X-Forwarded-Uri", "/public"), ("X-Original-URI", "/public"),
        ])))
        #expect(envoy.method == "POST" && envoy.target == "/orders/7?expand=1" && envoy.convention == .envoy)
        #expect(Self.asked(Self.head(.GET, "/forward/"))?.target == "/")
    }

    @Test func traefiksFieldsComeBeforeNginxs() throws {
        let traefik = try #require(Self.asked(Self.head(.GET, "/forward", [
            ("X-Forwarded-Method", "DELETE"), ("X-Forwarded-Proto", "https"), ("X-Forwarded-Host", "api.example.com"),
            ("X-Forwarded-Uri", "/orders/7"), ("X-Original-URI", "/public"), ("X-Original-Method", "GET"),
        ])))
        #expect(traefik.method == "DELETE" && traefik.target == "/orders/7" && traefik.convention == .traefik)
        let nginx = try #require(Self.asked(Self.head(.GET, "/forward", [("X-Original-URI", "/user/profile?x=1"), ("X-Original-Method", "PUT")])))
        #expect(nginx.method == "PUT" && nginx.target == "/user/profile?x=1" && nginx.convention == .nginx)
        // No method named: a GET.
        #expect(Self.asked(Self.head(.GET, "/forward", [("X-Original-URI", "/user")]))?.method == "GET")
    }

    @Test func theTargetIsMadeCanonicalOrRefused() throws {
        #expect(Self.asked(Self.head(.GET, "/forward", [("X-Original-URI", "/open/../user//profile?q=%2F")]))?.target == "/user/profile?q=%2F")
        #expect(Self.asked(Self.head(.GET, "/forward", [("X-Forwarded-Uri", "/%75ser")]))?.target == "/user")
        #expect(Self.refusal(Self.head(.GET, "/forward", [("X-Original-URI", "/a%2Fb")]))?.contains("X-Original-URI".lowercased()) == true)
        #expect(Self.refusal(Self.head(.GET, "/forward", [("X-Original-URI", "/../x")])) != nil)
        #expect(Self.refusal(Self.head(.GET, "/forward", [("X-Original-URI", "*")])) != nil)
        #expect(Self.refusal(Self.head(.GET, "/forward", [("X-Original-URI", "user")])) != nil)
    }

    @Test func aRequestNamingNoneOrTwoIsRefused() throws {
        #expect(Self.refusal(Self.head(.GET, "/forward"))?.contains("X-Original-URI") == true)
        #expect(Self.refusal(Self.head(.GET, "/forward?x=1")) != nil)
        #expect(Self.refusal(Self.head(.GET, "/forward/", [("X-Forwarded-Uri", "/admin")]))?.contains("not both") == true, "Traefik's address with a slash")
        #expect(Self.asked(Self.head(.GET, "/forward/"))?.target == "/", "Envoy asking about /")
        #expect(Self.refusal(Self.head(.GET, "/forward", [("X-Original-URI", "/a"), ("X-Original-URI", "/b")]))?.contains("more than one") == true)
        #expect(Self.refusal(Self.head(.GET, "/forward", [("X-Original-URI", "/a"), ("X-Original-Method", "get")])) != nil)
        #expect(Self.refusal(Self.head(.GET, "/forward", [("X-Original-URI", "/a"), ("X-Original-Method", "GET\r\nX: y")])) != nil)
        // Only methods the public listener takes: each method is a label in the metrics.
        #expect(Self.refusal(Self.head(.GET, "/forward", [("X-Forwarded-Uri", "/a"), ("X-Forwarded-Method", "AAAAB")]))?.contains("not one the gateway serves") == true)
        #expect(Self.asked(Self.head(.GET, "/forward", [("X-Forwarded-Uri", "/a"), ("X-Forwarded-Method", "PROPFIND")]))?.method == "PROPFIND")
    }
}
