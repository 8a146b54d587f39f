import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// `X-Gateway-Assertion` and `GET /.well-known/jwks.json` (docs/public-api.md) against a real gateway
/// process, echo upstream and Redis, verified with PyJWT as an upstream would.
@Suite("Gateway assertions and JWKS", .realProcesses)
struct AssertionTests {
    /// Two more routes next to DriverYAML's bearer `user-profile`: a partner route and an open one.
    private static func routes(_ upstream: EchoUpstreamProcess) -> String {
        """
          - {name: partner-orders, path_prefix: /orders, upstream: \(upstream.url), auth: api_key}
          - {name: public-status, path_prefix: /status, upstream: \(upstream.url), auth: none}
        """
    }

    private static func yaml(redis: RedisServer, upstream: EchoUpstreamProcess, assertion: String? = nil) -> String {
        var text = DriverYAML.make(redis: redis, upstream: upstream, tokens: "{issuer: test-issuer}") + routes(upstream) + "\n"
        if let assertion { text += "assertion: \(assertion)\n" }
        return text
    }

    static func jwks(_ gateway: GatewayProcess) async throws -> DriverResponse {
        let answer = try await DriverHTTP.call(gateway.baseURL + "/.well-known/jwks.json")
        try #require(answer.status == 200, "jwks: \(answer)")
        return answer
    }

    /// Verifies `token` with PyJWT against `jwks` (its key chosen by the token's `kid`); the
    /// header, the claims, and whether a wrong audience and a tampered token are refused.
    static func verify(_ token: String, jwks: String, audience: String, issuer: String = "test-issuer") async throws -> [String: Any] {
        let output = try await DriverPython.run(
            """
            import json, sys, jwt
            token, jwks, aud, iss = sys.argv[1:5]
            header = jwt.get_unverified_header(token)
            jwk = next(k for k in json.loads(jwks)["keys"] if k["kid"] == header["kid"])
            key = jwt.PyJWK(jwk).key
            claims = jwt.decode(token, key, algorithms=["ES256"], audience=aud, issuer=iss)
            def refused(t, a):
                try:
                    jwt.decode(t, key, algorithms=["ES256"], audience=a, issuer=iss)
                    return False
                except jwt.InvalidTokenError:
                    return True
            h, p, s = token.split(".")
            tampered = ".".join([h, p, ("A" if s[0] != "A" else "B") + s[1:]])
            print(json.dumps({"header": header, "claims": claims,
                              "wrong_audience_refused": refused(token, "another-route"),
                              "tampered_refused": refused(tampered, aud)}))
            """,
            [token, jwks, audience, issuer]
        )
        return try DriverPython.jsonObject(output)
    }

    @Test func bearerRouteAssertionVerifiesWithPyJWTAndIsReused() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream))
        let login = try await DriverAPI.login(gateway, phone: "9876500011")

        let first = try await DriverAPI.profile(gateway, token: login.accessToken)
        #expect(first.status == 200, "\(first)")
        let token = try #require(DriverEcho.single(first, "X-Gateway-Assertion"), "\(first)")
        let jwks = try await Self.jwks(gateway)
        let keys = try #require(jwks.json["keys"] as? [[String: Any]])
        try #require(keys.count == 1, "\(jwks)")
        #expect(keys[0]["kty"] as? String == "EC")
        #expect(keys[0]["crv"] as? String == "P-256")
        #expect(keys[0]["alg"] as? String == "ES256")
        #expect(keys[0]["use"] as? String == "sig")
        #expect(keys[0]["d"] == nil)
        // No keys configured: an ephemeral key, kid = 16 hex characters.
        let kid = try #require(keys[0]["kid"] as? String)
        #expect(kid.count == 16 && kid.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(gateway.log.contains("ephemeral"), "\(gateway.log)")

        let verified = try await Self.verify(token, jwks: jwks.text, audience: "user-profile")
        let header = try #require(verified["header"] as? [String: Any])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["kid"] as? String == kid)
        let claims = try #require(verified["claims"] as? [String: Any])
        #expect(claims["sub"] as? String == login.userID)
        #expect(claims["channel"] as? String == "otp")
        #expect(claims["aud"] as? String == "user-profile")
        #expect(claims["iss"] as? String == "test-issuer")
        #expect(claims["partner_id"] == nil)
        let iat = try #require(claims["iat"] as? Int)
        let exp = try #require(claims["exp"] as? Int)
        #expect(exp > iat && exp - iat <= 300)
        #expect(abs(iat - Int(Date().timeIntervalSince1970)) < 30)
        #expect(verified["wrong_audience_refused"] as? Bool == true)
        #expect(verified["tampered_refused"] as? Bool == true)

        // Reuse: the next call within the second gets the very same string.
        let second = try await DriverAPI.profile(gateway, token: login.accessToken)
        #expect(DriverEcho.single(second, "X-Gateway-Assertion") == token)
        // Another user gets their own.
        let other = try await DriverAPI.login(gateway, phone: "9876500012")
        let otherCall = try await DriverAPI.profile(gateway, token: other.accessToken)
        let otherToken = try #require(DriverEcho.single(otherCall, "X-Gateway-Assertion"))
        #expect(otherToken != token)
        #expect(DriverJWT.claims(otherToken)?["sub"] as? String == other.userID)
    }

    @Test func apiKeyRouteAssertionNamesThePartner() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream))
        let partnerID = try await DriverAPI.createPartner(gateway, name: "Orders Co")
        let key = try await DriverAPI.createKey(gateway, partnerID: partnerID)

        let answer = try await DriverHTTP.call(gateway.baseURL + "/orders/1", headers: [("X-API-Key", key)])
        #expect(answer.status == 200, "\(answer)")
        let token = try #require(DriverEcho.single(answer, "X-Gateway-Assertion"), "\(answer)")
        let verified = try await Self.verify(token, jwks: try await Self.jwks(gateway).text, audience: "partner-orders")
        let claims = try #require(verified["claims"] as? [String: Any])
        #expect(claims["sub"] as? String == partnerID)
        #expect(claims["partner_id"] as? String == partnerID)
        #expect(claims["channel"] as? String == "api_key")
        #expect(claims["aud"] as? String == "partner-orders")
    }

    @Test func openRoutesGetNoAssertionAndSpoofedOnesNeverArrive() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream))
        let login = try await DriverAPI.login(gateway, phone: "9876500013")
        let genuine = try #require(DriverEcho.single(try await DriverAPI.profile(gateway, token: login.accessToken), "X-Gateway-Assertion"))

        // An open route: nothing signed, and a replayed (genuine) or forged assertion is dropped.
        for spoofed in [genuine, "forged.assertion.value"] {
            let open = try await DriverHTTP.call(gateway.baseURL + "/status", headers: [("X-Gateway-Assertion", spoofed)])
            #expect(open.status == 200, "\(open)")
            #expect(DriverEcho.header(open, "X-Gateway-Assertion") == nil, "\(open)")
        }
        // A bearer route: the client's is replaced by the gateway's own, exactly one.
        let bearer = try await DriverHTTP.call(gateway.baseURL + "/user/profile", headers: [
            ("Authorization", "Bearer \(login.accessToken)"),
            ("X-Gateway-Assertion", "forged.assertion.value"),
        ])
        #expect(DriverEcho.single(bearer, "X-Gateway-Assertion") == genuine, "\(bearer)")
        // Refused requests are never forwarded, so nothing is signed for them.
        let refused = try await DriverAPI.profile(gateway, authorization: nil)
        #expect(refused.status == 401)
    }

    @Test func configuredPEMKeysAreUsedAndAllPublished() async throws {
        let folder = try TemporaryFolder("pg-assertion")
        defer { withExtendedLifetime(folder) {} }
        let directory = folder.url
        let signing = directory.appendingPathComponent("a1.pem").path
        let previous = directory.appendingPathComponent("a0.pem").path
        // One PKCS#8 key and one SEC1 key, both written by python's cryptography.
        _ = try await DriverPython.run(
            """
            import sys
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            for path, fmt in ((sys.argv[1], serialization.PrivateFormat.PKCS8),
                              (sys.argv[2], serialization.PrivateFormat.TraditionalOpenSSL)):
                pem = ec.generate_private_key(ec.SECP256R1()).private_bytes(
                    serialization.Encoding.PEM, fmt, serialization.NoEncryption())
                open(path, "wb").write(pem)
            """,
            [signing, previous]
        )
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let assertion = "{ttl: 2m, signing_keys: [{kid: a1, private_key_file: \(signing)}, {kid: a0, private_key_file: \(previous)}]}"
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream, assertion: assertion))
        #expect(!gateway.log.contains("ephemeral"), "\(gateway.log)")
        let jwks = try await Self.jwks(gateway)
        let keys = try #require(jwks.json["keys"] as? [[String: Any]])
        #expect(keys.compactMap { $0["kid"] as? String } == ["a1", "a0"])

        let login = try await DriverAPI.login(gateway, phone: "9876500014")
        let answer = try await DriverAPI.profile(gateway, token: login.accessToken)
        let token = try #require(DriverEcho.single(answer, "X-Gateway-Assertion"), "\(answer)")
        let verified = try await Self.verify(token, jwks: jwks.text, audience: "user-profile")
        #expect((verified["header"] as? [String: Any])?["kid"] as? String == "a1")
        let claims = try #require(verified["claims"] as? [String: Any])
        #expect((claims["exp"] as? Int ?? 0) - (claims["iat"] as? Int ?? 0) == 120)
    }

    /// A key that cannot be read or is not a P-256 private key stops start-up with one line.
    @Test(arguments: ["missing", "garbage", "ttl"])
    func badAssertionKeysExitWithOneLine(_ problem: String) async throws {
        let folder = try TemporaryFolder("pg-assertion")
        defer { withExtendedLifetime(folder) {} }
        let directory = folder.url
        let garbage = directory.appendingPathComponent("garbage.pem").path
        try "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n".write(toFile: garbage, atomically: true, encoding: .utf8)
        let (assertion, expected) = switch problem {
        case "missing":
            ("{signing_keys: [{kid: a1, private_key_file: \(directory.path)/nope.pem}]}", "config error: assertion.signing_keys[0].private_key_file: cannot read")
        case "garbage":
            ("{signing_keys: [{kid: a1, private_key_file: \(garbage)}]}", "config error: assertion.signing_keys[0].private_key_file:")
        default:
            ("{ttl: 10m}", "config error: assertion.ttl:")
        }
        let yaml = "otp:\n  mode: uat\nassertion: \(assertion)\n"
        let gateway = try await GatewayProcess(yaml: yaml, waitUntilListening: false)
        let code = try await gateway.process.waitForExit(timeout: .seconds(20))
        #expect(code != 0)
        let lines = gateway.log.split(separator: "\n")
        #expect(lines.count == 1, "\(gateway.log)")
        #expect(lines.first?.hasPrefix(expected) == true, "\(gateway.log)")
        #expect(lines.first?.contains("a1") == true || problem == "ttl", "\(gateway.log)")
    }
}
