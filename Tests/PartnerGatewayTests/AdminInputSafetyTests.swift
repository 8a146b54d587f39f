import Foundation
import Testing
import TestSupport

/// What the admin API refuses to store, against a real gateway process and Redis: keys wider
/// than their partner.
@Suite("Admin API: scopes only narrow", .realProcesses)
struct AdminInputSafetyTests {
    @Test func aKeyCannotHoldAScopeItsPartnerLacks() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        let partnerID = try await DriverAPI.createPartner(gateway, name: "NammaYatri")

        let wider = try await DriverAPI.admin(
            gateway, .POST, "/v1/partners/\(partnerID)/keys", body: #"{"scopes": ["sdk_tokens:mint", "admin:everything"]}"#)
        #expect(wider.status == 400, "\(wider)")
        #expect(wider.code == "INVALID_REQUEST", "\(wider)")
        #expect(wider.isErrorShape, "\(wider)")
        let message = try #require(wider.error?["message"] as? String)
        #expect(message.contains("admin:everything"), "\(message)")
        #expect(!message.contains("sdk_tokens:mint"), "only the scopes the partner lacks are named: \(message)")

        let keys = try await DriverAPI.admin(gateway, .GET, "/v1/partners/\(partnerID)/keys")
        #expect((keys.json["items"] as? [Any])?.isEmpty == true, "nothing was written: \(keys)")
        let audit = try await DriverAPI.admin(gateway, .GET, "/v1/audit?limit=1")
        #expect(((audit.json["items"] as? [[String: Any]])?.first?["action"] as? String) == "partner.create", "\(audit)")

        // Fewer scopes, or the partner's own, are fine.
        let narrow = try await DriverAPI.admin(gateway, .POST, "/v1/partners/\(partnerID)/keys", body: #"{"scopes": []}"#)
        #expect(narrow.status == 201, "\(narrow)")
        let same = try await DriverAPI.admin(gateway, .POST, "/v1/partners/\(partnerID)/keys", body: #"{"scopes": ["sdk_tokens:mint"]}"#)
        #expect(same.status == 201, "\(same)")
    }
}
