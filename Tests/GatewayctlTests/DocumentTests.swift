import Foundation
import GatewayContract
import Testing
import Yams
@testable import gatewayctl

/// `-o json` and `-o yaml`: one document with the admin API's field names and values.
@Suite struct DocumentTests {
    private let time = Date(timeIntervalSince1970: 1_795_000_000)

    private var key: KeyInfo {
        KeyInfo(keyID: "key_1", partnerID: "ptr_1", start: "pgk_live_AbCd", name: nil, meta: ["team": "payments"], status: "active",
                scopes: ["sdk_tokens:mint"], createdAt: time, expiresAt: nil, lastUsedAt: nil)
    }

    @Test func jsonKeepsAbsentValuesAsNull() throws {
        let document = try Document.json(key)
        #expect(document.contains(#""expires_at" : null"#))
        #expect(document.contains(#""created_at" : "2026-11-18T11:06:40Z""#))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])
        #expect(object["name"] is NSNull && object["last_used_at"] is NSNull)
    }

    @Test func yamlHoldsTheSameValues() throws {
        let page = Page(items: [key], nextCursor: "key_1")
        let yaml = try Document.yaml(page)
        let parsed = try #require(try Yams.load(yaml: yaml) as? [String: Any])
        #expect(parsed["next_cursor"] as? String == "key_1")
        let item = try #require((parsed["items"] as? [[String: Any]])?.first)
        #expect(item["key_id"] as? String == "key_1")
        #expect(item["created_at"] as? String == "2026-11-18T11:06:40Z", "times stay the API's strings, got \(yaml)")
        #expect(item["name"] is NSNull || item["name"] == nil)
        #expect((item["meta"] as? [String: String]) == ["team": "payments"])
        #expect(item["scopes"] as? [String] == ["sdk_tokens:mint"])
    }

    @Test func yamlQuotesStringsThatLookLikeOtherThings() throws {
        let partner = PartnerInfo(partnerID: "ptr_1", name: "null", status: "true", scopes: ["50"], rateLimit: .init(rate: 0.5, burst: 10), createdAt: time)
        let yaml = try Document.yaml(partner)
        let parsed = try #require(try Yams.load(yaml: yaml) as? [String: Any])
        #expect(parsed["name"] as? String == "null", "\(yaml)")
        #expect(parsed["status"] as? String == "true")
        #expect(parsed["scopes"] as? [String] == ["50"])
        let limit = try #require(parsed["rate_limit"] as? [String: Any])
        #expect(limit["rate"] as? Double == 0.5)
        #expect(limit["burst"] as? Int == 10)
    }

    @Test func aPartnerRoundTripsWithTheAPIsFieldNames() throws {
        let json = #"""
            {"partner_id": "ptr_4f9c2a7d1e3b5a60", "name": "NammaYatri", "status": "active",
             "scopes": ["sdk_tokens:mint"], "rate_limit": {"rate": 50, "burst": 100},
             "created_at": "2026-11-22T03:30:00Z", "allowed_cidrs": ["203.0.113.0/24"],
             "quota": {"limit": 100000, "period": "month"}, "max_keys": 20, "revision": 3}
            """#
        let partner = try AdminJSON.decoder().decode(PartnerInfo.self, from: Data(json.utf8))
        let original = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? NSDictionary)
        let printed = try #require(try JSONSerialization.jsonObject(with: Data(try Document.json(partner).utf8)) as? NSDictionary)
        #expect(printed == original)
    }

    @Test func theRequestBodiesLeaveOutWhatWasNotGiven() throws {
        func text(_ value: some Encodable) throws -> String { String(decoding: try AdminJSON.encoder().encode(value), as: UTF8.self) }
        #expect(try text(NewPartner(name: "N")) == #"{"name":"N"}"#)
        #expect(try text(NewPartner(name: "N", rate: 5, burst: 10, scopes: ["a:b"])) == #"{"burst":10,"name":"N","rate":5,"scopes":["a:b"]}"#)
        #expect(try text(NewKey(expiresIn: "90d")) == #"{"expires_in":"90d"}"#)
        #expect(try text(KeyRotation(grace: "0s")) == #"{"grace":"0s"}"#)
        #expect(try text(PartnerUpdate(burst: 7)) == #"{"burst":7}"#)
    }
}
