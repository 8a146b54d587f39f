import Foundation
import Testing
import TestSupport

/// Session management for support staff through the admin API, against a real gateway
/// process: find a driver by phone, list their sessions, end one of them; all audited.
@Suite("Admin API: users and their sessions", .realProcesses)
struct SessionAdminTests {
    @Test func findListAndRevokeOneSession() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, upstream: upstream))
        let partnerID = try await DriverAPI.createPartner(gateway, name: "NammaYatri")
        let key = try await DriverAPI.createKey(gateway, partnerID: partnerID)
        let otp = try await DriverAPI.login(gateway, phone: "9876543210")
        let sdk = try DriverTokenPair(try await DriverAPI.mint(gateway, key: key, phone: "9876543210", driverID: "NY-1"))
        _ = try DriverTokenPair(try await DriverAPI.refresh(gateway, otp.refreshToken))

        // Found by phone in any accepted spelling; the response masks the number.
        let found = try await DriverAPI.admin(gateway, .POST, "/v1/users/find", body: #"{"phone": "+919876543210"}"#)
        #expect(found.status == 200, "\(found)")
        #expect(Set(found.json.keys) == ["user_id", "phone", "created_at", "live_sessions"])
        #expect(found.string("user_id") == otp.userID)
        #expect(found.string("phone") == "******3210")
        #expect(found.json["live_sessions"] as? Int == 2)
        #expect(!found.text.contains("9876543210"))

        // Both sessions, newest first, never a token.
        let listed = try await DriverAPI.admin(gateway, .GET, "/v1/users/\(otp.userID)/sessions")
        #expect(listed.status == 200, "\(listed)")
        let page = try #require(try JSONSerialization.jsonObject(with: Data(listed.text.utf8)) as? [String: Any])
        #expect(page["next_cursor"] is NSNull)
        let sessions = try #require(page["items"] as? [[String: Any]])
        #expect(sessions.map { $0["session_id"] as? String } == [sdk.sessionID, otp.sessionID])
        #expect(sessions.map { $0["channel"] as? String } == ["partner_sdk", "otp"])
        #expect(sessions[0]["partner_id"] as? String == partnerID)
        #expect(sessions[1]["partner_id"] is NSNull)
        for session in sessions {
            #expect(Set(session.keys) == ["session_id", "channel", "partner_id", "created_at", "last_refreshed_at", "expires_at"])
        }
        #expect(sessions[1]["last_refreshed_at"] as? String != nil)
        for token in [otp.refreshToken, otp.accessToken, sdk.refreshToken, sdk.accessToken] {
            #expect(!listed.text.contains(token))
        }

        // One session ends; the other keeps working.
        let otpSession = try #require(otp.sessionID)
        let revoked = try await DriverAPI.admin(gateway, .POST, "/v1/users/\(otp.userID)/sessions/\(otpSession)/revoke")
        #expect(revoked.status == 200, "\(revoked)")
        #expect(Set(revoked.json.keys) == ["user_id", "session_id", "revoked_at"])
        #expect(try await DriverAPI.profile(gateway, token: otp.accessToken).status == 401)
        #expect(try await DriverAPI.profile(gateway, token: sdk.accessToken).status == 200)
        #expect(try await DriverAPI.refresh(gateway, sdk.refreshToken).status == 200)
        let after = try await DriverAPI.admin(gateway, .POST, "/v1/users/find", body: #"{"phone": "9876543210"}"#)
        #expect(after.json["live_sessions"] as? Int == 1)

        // Every call is in the audit log, the phone masked.
        let audit = try await DriverAPI.admin(gateway, .GET, "/v1/audit?limit=10")
        let auditPage = try JSONSerialization.jsonObject(with: Data(audit.text.utf8)) as? [String: Any]
        let actions = (auditPage?["items"] as? [[String: Any]] ?? []).compactMap { $0["action"] as? String }
        #expect(actions.starts(with: ["users.find", "session.revoke", "sessions.list", "users.find"]), "\(actions)")
        #expect(!audit.text.contains("9876543210"))
    }

    @Test func unknownAndMalformedInputGetsClearErrors() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        let login = try await DriverAPI.login(gateway, phone: "9876543210")
        let stranger = try await DriverAPI.login(gateway, phone: "9123456789")
        let strangerSession = try #require(stranger.sessionID)
        let cases: [(String, String, String?, UInt, String)] = [
            ("POST", "/v1/users/find", #"{"phone": "9000000000"}"#, 404, "NOT_FOUND"),
            ("POST", "/v1/users/find", #"{"phone": "12345"}"#, 400, "INVALID_PHONE"),
            ("POST", "/v1/users/find", #"{"phone": 98}"#, 400, "INVALID_REQUEST"),
            ("POST", "/v1/users/find", nil, 400, "INVALID_REQUEST"),
            ("GET", "/v1/users/usr_000000000000000000000000/sessions", nil, 404, "NOT_FOUND"),
            ("GET", "/v1/users/nobody/sessions", nil, 404, "NOT_FOUND"),
            ("POST", "/v1/users/\(login.userID)/sessions/\(strangerSession)/revoke", nil, 404, "NOT_FOUND"),
            ("POST", "/v1/users/\(login.userID)/sessions/not-a-session/revoke", nil, 404, "NOT_FOUND"),
        ]
        for (method, path, body, status, code) in cases {
            let answer = try await DriverAPI.admin(gateway, method == "GET" ? .GET : .POST, path, body: body)
            #expect(answer.status == status, "\(method) \(path): \(answer)")
            #expect(answer.code == code, "\(method) \(path): \(answer)")
            #expect(answer.isErrorShape)
        }
        // The stranger's session was not touched.
        #expect(try await DriverAPI.refresh(gateway, stranger.refreshToken).status == 200)
    }
}
