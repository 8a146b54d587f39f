import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// What the admin API refuses to store, against a real gateway process and Redis: keys wider
/// than their partner, and text that would rewrite an operator's terminal when printed.
@Suite("Admin API: scopes only narrow, no control or bidi characters", .realProcesses)
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

    /// C0 and C1 controls, DEL, bidi overrides, embeddings, isolates and marks, and line
    /// separators, in partner names, key names and metadata values.
    static let hostile: [String] = [
        "\u{9B}31mred", "pay\u{202E}gpj.exe", "a\u{2066}b", "a\u{200F}b", "a\u{061C}b", "a\u{85}b",
        "a\u{2028}b", "bell\u{07}", "tab\tname", "del\u{7F}",
    ]

    @Test func namesAndMetadataWithControlOrBidiCharactersAreRefused() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        let partnerID = try await DriverAPI.createPartner(gateway, name: "Plain")
        for text in Self.hostile {
            let escaped = text.unicodeScalars.map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7F ? String($0) : String(format: "\\u{%X}", $0.value) }.joined()
            let calls: [(HTTPMethod, String, String)] = [
                (.POST, "/v1/partners", DriverHTTP.json(["name": text])),
                (.PATCH, "/v1/partners/\(partnerID)", DriverHTTP.json(["name": text])),
                (.POST, "/v1/partners/\(partnerID)/keys", DriverHTTP.json(["name": text])),
                (.POST, "/v1/partners/\(partnerID)/keys", DriverHTTP.json(["meta": ["team": text]])),
            ]
            for (method, path, body) in calls {
                let answer = try await DriverAPI.admin(gateway, method, path, body: body)
                #expect(answer.status == 400, "\(method) \(path) \(escaped): \(answer)")
                #expect(answer.code == "INVALID_REQUEST", "\(method) \(path) \(escaped): \(answer)")
                #expect(answer.isErrorShape, "\(method) \(path) \(escaped): \(answer)")
            }
        }
        // Nothing of them was stored.
        let partners = try await DriverAPI.admin(gateway, .GET, "/v1/partners")
        #expect((partners.json["items"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["Plain"], "\(partners)")
        let keys = try await DriverAPI.admin(gateway, .GET, "/v1/partners/\(partnerID)/keys")
        #expect((keys.json["items"] as? [Any])?.isEmpty == true, "\(keys)")

        // Other scripts, and the joiners they are written with, are names like any other.
        for name in ["ನಮ್ಮ ಯಾತ್ರಿ", "क्ष‍ि", "Café Müller", "یاتری"] {
            let answer = try await DriverAPI.admin(gateway, .POST, "/v1/partners", body: DriverHTTP.json(["name": name]))
            #expect(answer.status == 201, "\(name): \(answer)")
        }
    }
}
