import Foundation
import GatewayContract
import Testing

/// The JSON the admin API writes and gatewayctl reads: field names, `null` for absent values,
/// RFC 3339 times.
@Suite struct WireShapeTests {
    private func object(_ value: some Encodable) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: try AdminJSON.encoder().encode(value)) as? [String: Any])
    }

    private let created = Date(timeIntervalSince1970: 1_795_000_000)

    @Test func keyInfoKeepsAbsentValuesAsNull() throws {
        let info = KeyInfo(keyID: "key_1", partnerID: "ptr_1", start: "pgk_live_AbCd", name: nil, meta: [:], status: "active",
                           scopes: ["sdk_tokens:mint"], createdAt: created, expiresAt: nil, lastUsedAt: nil)
        let json = try object(info)
        #expect(Set(json.keys) == ["key_id", "partner_id", "start", "name", "meta", "status", "scopes", "created_at", "expires_at", "last_used_at"])
        #expect(json["name"] is NSNull && json["expires_at"] is NSNull && json["last_used_at"] is NSNull)
        #expect(json["created_at"] as? String == "2026-11-18T11:06:40Z")
        let back = try AdminJSON.decoder().decode(KeyInfo.self, from: try AdminJSON.encoder().encode(info))
        #expect(back == info)
    }

    @Test func newKeyLeavesOutWhatIsUnset() throws {
        #expect(try object(NewKey()).isEmpty)
        let json = try object(NewKey(expiresIn: "90d", name: "checkout", meta: ["team": "payments"]))
        #expect(Set(json.keys) == ["expires_in", "name", "meta"])
    }

    @Test func partnerUpdateKnowsWhenItIsEmpty() throws {
        #expect(PartnerUpdate().isEmpty)
        #expect(!PartnerUpdate(burst: 5).isEmpty)
        #expect(try object(PartnerUpdate(rate: 2)).keys.sorted() == ["rate"])
    }

    @Test func errorBodyShape() throws {
        let text = String(decoding: try AdminJSON.encoder().encode(ErrorBody(code: "CONFLICT", message: "key key_1 is already revoked")), as: UTF8.self)
        #expect(text == #"{"error":{"code":"CONFLICT","message":"key key_1 is already revoked"}}"#)
    }

    @Test func partnerRoundTrips() throws {
        let partner = PartnerInfo(partnerID: "ptr_1", name: "NammaYatri", status: "active", scopes: ["sdk_tokens:mint"],
                                  rateLimit: .init(rate: 0.5, burst: 10), createdAt: created)
        let json = try object(partner)
        #expect(Set(json.keys) == ["partner_id", "name", "status", "scopes", "rate_limit", "created_at"])
        #expect(try AdminJSON.decoder().decode(PartnerInfo.self, from: try AdminJSON.encoder().encode(partner)) == partner)
    }
}
