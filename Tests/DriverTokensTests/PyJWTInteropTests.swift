import DriverTokens
import Foundation
import Testing
import TestSupport

/// Checks our tokens against an independent JWT implementation (PyJWT), so a bug shared by
/// our code and jwt-kit (say, in base64url or in what the HMAC covers) cannot hide.
///
/// Needs `python3` with the `jwt` module (`python3 -m pip install pyjwt`). Missing, the
/// tests fail with that instruction rather than being skipped.
@Suite(.serialized, .realProcesses) struct PyJWTInteropTests {
    /// ASCII, so it can travel to Python through the environment.
    static let secret = "pyjwt-interop-secret-0123456789-abcdefghij-0123456789-abcdefghijklm"

    @Test func pyjwtVerifiesOurTokens() async throws {
        try await requirePyJWT()
        let key = try AccessTokenSigningKey(kid: "k1", secret: Array(Self.secret.utf8))
        let signer = try await AccessTokenSigner(keys: [key], issuer: Fixtures.issuer, timeToLive: 600)
        for channel in [AccessTokenChannel.otp, .partnerSDK(partnerID: "ptn_acme")] {
            let issued = try await signer.sign(userID: "usr_py", sessionID: Fixtures.familyID, channel: channel)
            let output = try await runPython(
                """
                import json, sys, jwt
                token = open(sys.argv[1]).read()
                claims = jwt.decode(token, sys.argv[2].encode(), algorithms=["HS256"], issuer=sys.argv[3],
                                    options={"require": ["exp", "iat", "iss", "jti"]})
                print(json.dumps({"header": jwt.get_unverified_header(token), "claims": claims}))
                """,
                file: issued.token, arguments: [Self.secret, Fixtures.issuer])
            let object = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
            let header = try #require(object["header"] as? [String: Any])
            let claims = try #require(object["claims"] as? [String: Any])
            #expect(header["alg"] as? String == "HS256")
            #expect(header["kid"] as? String == "k1")
            #expect(claims["user_id"] as? String == "usr_py")
            #expect(claims["sid"] as? String == Fixtures.familyID)
            #expect(claims["jti"] as? String == issued.claims.tokenID)
            #expect(claims["iss"] as? String == Fixtures.issuer)
            #expect(claims["channel"] as? String == channel.name)
            #expect(claims["partner_id"] as? String == channel.partnerID)
            #expect(claims["exp"] as? Int == Int(issued.claims.expiresAt.timeIntervalSince1970))
            #expect(claims["iat"] as? Int == Int(issued.claims.issuedAt.timeIntervalSince1970))
        }
    }

    @Test func pyjwtRefusesOurTokenUnderAnotherSecret() async throws {
        try await requirePyJWT()
        let key = try AccessTokenSigningKey(kid: "k1", secret: Array(Self.secret.utf8))
        let issued = try await AccessTokenSigner(keys: [key], issuer: Fixtures.issuer)
            .sign(userID: "usr_py", sessionID: Fixtures.familyID, channel: .otp)
        let output = try await runPython(
            """
            import sys, jwt
            try:
                jwt.decode(open(sys.argv[1]).read(), sys.argv[2].encode(), algorithms=["HS256"])
                print("accepted")
            except jwt.InvalidSignatureError:
                print("refused")
            """,
            file: issued.token, arguments: [Self.secret + "-other"])
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "refused")
    }

    @Test func weVerifyPyJWTTokensAndRefuseItsOtherAlgorithms() async throws {
        try await requirePyJWT()
        let key = try AccessTokenSigningKey(kid: "k1", secret: Array(Self.secret.utf8))
        let verifier = try await AccessTokenVerifier(keys: [key], issuer: Fixtures.issuer)
        let now = Int(Date().timeIntervalSince1970)
        let claims = """
            {"user_id": "usr_py", "sid": "\(Fixtures.familyID)", "jti": "py-1", "iss": "\(Fixtures.issuer)",
             "channel": "partner_sdk", "partner_id": "ptn_py", "iat": \(now), "exp": \(now + 600)}
            """
        let output = try await runPython(
            """
            import json, sys, jwt
            claims = json.loads(open(sys.argv[1]).read())
            for alg in ["HS256", "HS512", "none"]:
                key = None if alg == "none" else sys.argv[2].encode()
                print(jwt.encode(claims, key, algorithm=alg, headers={"kid": "k1"}))
            """,
            file: claims, arguments: [Self.secret])
        let tokens = output.split(separator: "\n").map(String.init)
        try #require(tokens.count == 3)

        let verified = try await verifier.verify(tokens[0])
        #expect(verified.userID == "usr_py")
        #expect(verified.channel == .partnerSDK(partnerID: "ptn_py"))
        #expect(verified.tokenID == "py-1")
        await #expect(throws: AccessTokenError.unsupportedAlgorithm) { try await verifier.verify(tokens[1]) }
        await #expect(throws: AccessTokenError.unsupportedAlgorithm) { try await verifier.verify(tokens[2]) }
    }

    private func requirePyJWT() async throws {
        let probe = try? await run(["python3", "-c", "import jwt; print(jwt.__version__)"])
        guard let probe, probe.status == 0 else {
            let reason = probe?.stderr.split(separator: "\n").last.map(String.init) ?? "python3 could not be started"
            throw PyJWTMissing(reason: reason)
        }
    }

    /// Runs `script` with `file` (written to a temporary file) and `arguments` as argv[1...].
    private func runPython(_ script: String, file contents: String, arguments: [String]) async throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("drivertokens-\(UUID().uuidString)")
        try contents.write(to: url, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: url) }
        let result = try await run(["python3", "-c", script, url.path] + arguments)
        try #require(result.status == 0, "python3 failed: \(result.stderr)")
        return result.stdout
    }

    private func run(_ arguments: [String]) async throws -> ShortCommandResult {
        try await ShortCommand.run("/usr/bin/env", arguments)
    }

    private struct PyJWTMissing: Error, CustomStringConvertible {
        let reason: String
        var description: String {
            "python3 with PyJWT is required for this test and was not found (\(reason)). "
                + "Install it with `python3 -m pip install pyjwt` or `apt-get install python3-jwt`."
        }
    }
}
