import Foundation
import Testing
@testable import gatewayctl

@Suite struct JSONOutputTests {
    private func parse(_ value: some Encodable) throws -> [String: Any] {
        let document = try JSONOutput.document(value)
        return try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])
    }

    @Test func absentTimesStayAsNull() throws {
        let key = KeyRecord(
            keyID: "key_1", status: "active", scopes: ["sdk_tokens:mint"],
            createdAt: "2026-11-22T03:30:00Z", expiresAt: nil, lastUsedAt: nil
        )
        let object = try parse(key)
        #expect(object["expires_at"] is NSNull)
        #expect(object["last_used_at"] is NSNull)
        #expect(Set(object.keys) == ["key_id", "status", "scopes", "created_at", "expires_at", "last_used_at"])
        #expect(try JSONOutput.document(key).contains(#""expires_at" : null"#))
    }

    @Test func createdAndRotatedKeysKeepTheirNulls() throws {
        let created = CreatedKey(
            keyID: "key_1", partnerID: "ptr_1", key: "pgk_live_x", scopes: [],
            createdAt: "2026-11-22T03:30:00Z", expiresAt: nil
        )
        #expect(try parse(created)["expires_at"] is NSNull)
        let rotated = RotatedKey(keyID: "key_2", key: "pgk_live_y", previousKeyID: "key_1", previousKeyExpiresAt: nil)
        #expect(try parse(rotated)["previous_key_expires_at"] is NSNull)
        let entry = AuditEntry(at: "2026-11-22T03:30:00Z", actor: nil, action: "key.rotate", target: "key_1", source: nil)
        let object = try parse(entry)
        #expect(object["actor"] is NSNull)
        #expect(object["source"] is NSNull)
    }

    @Test func aPartnerRoundTripsWithTheAPIsFieldNames() throws {
        let json = #"""
            {"partner_id": "ptr_4f9c2a7d1e3b5a60", "name": "NammaYatri", "status": "active",
             "scopes": ["sdk_tokens:mint"], "rate_limit": {"rate": 50, "burst": 100},
             "created_at": "2026-11-22T03:30:00Z"}
            """#
        let partner = try JSONDecoder().decode(Partner.self, from: Data(json.utf8))
        let original = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? NSDictionary)
        #expect(try parse(partner) as NSDictionary == original)
    }

    @Test func aListIsOneDocumentWithSlashesUnescaped() throws {
        let entries = [
            AuditEntry(at: "2026-11-22T03:30:01Z", actor: "asha@ops/1", action: "key.create", target: "key_1", source: "10.0.0.1"),
            AuditEntry(at: "2026-11-22T03:30:00Z", actor: "asha@ops/1", action: "partner.create", target: "ptr_1", source: "10.0.0.1"),
        ]
        let document = try JSONOutput.document(entries)
        #expect(document.contains("asha@ops/1"))
        let array = try #require(try JSONSerialization.jsonObject(with: Data(document.utf8)) as? [[String: Any]])
        #expect(array.map { $0["action"] as? String } == ["key.create", "partner.create"])
    }

    @Test func theRequestBodiesLeaveOutWhatWasNotGiven() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        func text(_ value: some Encodable) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }
        #expect(try text(NewPartner(name: "N", rate: nil, burst: nil, scopes: nil)) == #"{"name":"N"}"#)
        #expect(try text(NewPartner(name: "N", rate: 5, burst: 10, scopes: ["a:b"])) == #"{"burst":10,"name":"N","rate":5,"scopes":["a:b"]}"#)
        #expect(try text(NewKey(scopes: nil, expiresIn: "90d")) == #"{"expires_in":"90d"}"#)
        #expect(try text(KeyRotation(grace: "0s")) == #"{"grace":"0s"}"#)
    }
}
