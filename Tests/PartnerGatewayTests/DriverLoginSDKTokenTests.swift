import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// `POST /partner/v1/sdk-token` (docs/public-api.md) against a real gateway process, with partners and
/// keys made through the admin API.
@Suite("Driver login: partner SDK tokens", .realProcesses)
struct DriverLoginSDKTokenTests {
    @Test func keysScopesDisabledPartnersRatesAndBodies() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        let partnerID = try await DriverAPI.createPartner(gateway, name: "NammaYatri")
        let key = try await DriverAPI.createKey(gateway, partnerID: partnerID)
        // A key narrowed to no scope at all (a key can never hold one its partner lacks).
        let unscopedKey = try await DriverAPI.createKey(gateway, partnerID: partnerID, scopes: [])

        let minted = try await DriverAPI.mint(gateway, key: key, phone: "9876543210", driverID: "NY-123", name: "Ravi Kumar")
        let pair = try DriverTokenPair(minted)
        #expect(pair.isNewUser)
        #expect(minted.json["token_type"] as? String == "Bearer")
        #expect(minted.json["expires_in"] as? Int == 86400)
        #expect(minted.json["access_token_expires_at"] is Int)
        #expect(minted.header("RateLimit-Limit") != nil, "\(minted.headers)")

        let missing = try await DriverAPI.mint(gateway, key: nil, phone: "9876543210", driverID: "NY-123")
        #expect(missing.status == 401, "\(missing)")
        #expect(missing.code == "MISSING_API_KEY")
        #expect(missing.isErrorShape)
        for garbage in ["garbage", "pgk_live_nope", String(key.dropLast()) + (key.hasSuffix("A") ? "B" : "A")] {
            let invalid = try await DriverAPI.mint(gateway, key: garbage, phone: "9876543210", driverID: "NY-123")
            #expect(invalid.status == 401, "\(invalid)")
            #expect(invalid.code == "INVALID_API_KEY")
            #expect(invalid.isErrorShape)
        }
        // A key in the query string is never looked at.
        let query = try await DriverAPI.post(gateway, "/partner/v1/sdk-token?api_key=\(key)", body: #"{"phone": "9876543210", "driver_id": "NY-123"}"#)
        #expect(query.status == 401)
        #expect(query.code == "MISSING_API_KEY")

        let forbidden = try await DriverAPI.mint(gateway, key: unscopedKey, phone: "9876543210", driverID: "NY-123")
        #expect(forbidden.status == 403, "\(forbidden)")
        #expect(forbidden.code == "FORBIDDEN")
        #expect(forbidden.isErrorShape)

        // Bodies are checked (after the key).
        let bodies: [(String, String, String)] = [
            ("missing driver_id", #"{"phone": "9876543210"}"#, "INVALID_REQUEST"),
            ("empty driver_id", #"{"phone": "9876543210", "driver_id": ""}"#, "INVALID_REQUEST"),
            ("driver_id with a space", #"{"phone": "9876543210", "driver_id": "NY 123"}"#, "INVALID_REQUEST"),
            ("numeric driver_id", #"{"phone": "9876543210", "driver_id": 123}"#, "INVALID_REQUEST"),
            ("missing phone", #"{"driver_id": "NY-123"}"#, "INVALID_REQUEST"),
            ("bad phone", #"{"phone": "12345", "driver_id": "NY-123"}"#, "INVALID_PHONE"),
            ("not JSON", "{", "INVALID_REQUEST"),
            ("empty", "", "INVALID_REQUEST"),
        ]
        for (what, body, code) in bodies {
            let answer = try await DriverAPI.mint(gateway, key: key, body: body)
            #expect(answer.status == 400, "\(what): \(answer)")
            #expect(answer.code == code, "\(what): \(answer)")
            #expect(answer.isErrorShape, "\(what): \(answer)")
        }

        // A disabled partner's key is refused with 403.
        let disabled = try await DriverAPI.admin(gateway, .POST, "/v1/partners/\(partnerID)/disable")
        #expect(disabled.status == 200, "\(disabled)")
        try await eventually(timeout: .seconds(2), interval: .milliseconds(10)) {
            try await DriverAPI.mint(gateway, key: key, phone: "9876543210", driverID: "NY-123").status == 403
        }
        let refused = try await DriverAPI.mint(gateway, key: key, phone: "9876543210", driverID: "NY-123")
        #expect(refused.code == "FORBIDDEN")
        #expect(refused.isErrorShape)
        _ = try await DriverAPI.admin(gateway, .POST, "/v1/partners/\(partnerID)/enable")
        try await eventually(timeout: .seconds(2), interval: .milliseconds(10)) {
            try await DriverAPI.mint(gateway, key: key, phone: "9876543210", driverID: "NY-123").status == 200
        }
    }

    @Test func thePartnersRateLimitsItsMints() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        let limited = try await DriverAPI.createPartner(gateway, name: "Limited", rate: 0.001, burst: 2)
        let limitedKey = try await DriverAPI.createKey(gateway, partnerID: limited)
        let other = try await DriverAPI.createPartner(gateway, name: "Other")
        let otherKey = try await DriverAPI.createKey(gateway, partnerID: other)

        for (index, remaining) in [1, 0].enumerated() {
            let answer = try await DriverAPI.mint(gateway, key: limitedKey, phone: "981234567\(index)", driverID: "D-\(index)")
            #expect(answer.status == 200, "\(answer)")
            #expect(answer.header("RateLimit-Limit") == "2")
            #expect(answer.header("RateLimit-Remaining") == String(remaining))
        }
        let refused = try await DriverAPI.mint(gateway, key: limitedKey, phone: "9812345672", driverID: "D-2")
        #expect(refused.status == 429, "\(refused)")
        #expect(refused.code == "RATE_LIMIT_EXCEEDED")
        #expect(refused.isErrorShape)
        #expect((refused.header("Retry-After").flatMap { Int($0) } ?? 0) >= 1, "\(refused.headers)")
        // Another partner has its own budget.
        #expect(try await DriverAPI.mint(gateway, key: otherKey, phone: "9812345672", driverID: "D-2").status == 200)
    }

    @Test func oneUserPerPhoneAcrossChannelsAndSDKClaimsReachTheUpstream() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, upstream: upstream))
        let partnerID = try await DriverAPI.createPartner(gateway, name: "NammaYatri")
        let key = try await DriverAPI.createKey(gateway, partnerID: partnerID)
        let phone = "9845012345"

        let direct = try await DriverAPI.login(gateway, phone: phone)
        #expect(direct.isNewUser)
        let sdk = try DriverTokenPair(try await DriverAPI.mint(gateway, key: key, phone: "+91" + phone, driverID: "NY-42", name: "Asha"))
        #expect(sdk.userID == direct.userID)
        // The partner's first enrolment of the driver: it is not told the phone was known.
        #expect(sdk.isNewUser)
        #expect(sdk.sessionID != direct.sessionID)

        let claims = try #require(DriverJWT.claims(sdk.accessToken))
        #expect(claims["channel"] as? String == "partner_sdk")
        #expect(claims["partner_id"] as? String == partnerID)
        #expect(claims["user_id"] as? String == direct.userID)
        #expect(DriverJWT.header(sdk.accessToken)?["kid"] as? String == "k1")

        let forwarded = try await DriverAPI.profile(gateway, token: sdk.accessToken)
        #expect(forwarded.status == 200, "\(forwarded)")
        #expect(DriverEcho.single(forwarded, "X-Gateway-User-Id") == direct.userID)
        #expect(DriverEcho.single(forwarded, "X-Gateway-Auth-Channel") == "partner_sdk")
        #expect(DriverEcho.single(forwarded, "X-Gateway-Partner-Id") == partnerID)

        // A refresh of the SDK pair keeps the channel and the partner.
        let refreshed = try DriverTokenPair(try await DriverAPI.refresh(gateway, sdk.refreshToken))
        #expect(refreshed.userID == direct.userID)
        #expect(!refreshed.isNewUser)
        let refreshedClaims = try #require(DriverJWT.claims(refreshed.accessToken))
        #expect(refreshedClaims["channel"] as? String == "partner_sdk")
        #expect(refreshedClaims["partner_id"] as? String == partnerID)
        #expect(refreshedClaims["sid"] as? String == sdk.sessionID)
        let again = try await DriverAPI.profile(gateway, token: refreshed.accessToken)
        #expect(DriverEcho.single(again, "X-Gateway-Auth-Channel") == "partner_sdk")
        #expect(DriverEcho.single(again, "X-Gateway-Partner-Id") == partnerID)

        // The OTP session still says otp; a phone first seen through the SDK is a new user there.
        let otpAgain = try await DriverAPI.profile(gateway, token: direct.accessToken)
        #expect(DriverEcho.single(otpAgain, "X-Gateway-Auth-Channel") == "otp")
        let fresh = try DriverTokenPair(try await DriverAPI.mint(gateway, key: key, phone: "9845012346", driverID: "NY-43"))
        #expect(fresh.isNewUser)
        let later = try await DriverAPI.login(gateway, phone: "9845012346")
        #expect(later.userID == fresh.userID)
        #expect(!later.isNewUser)
    }
}
