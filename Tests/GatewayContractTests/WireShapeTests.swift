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
        #expect(Set(json.keys) == [
            "key_id", "partner_id", "start", "name", "meta", "status", "scopes", "created_at", "expires_at", "last_used_at", "allowed_cidrs", "quota",
            "revision",
        ])
        #expect(json["name"] is NSNull && json["expires_at"] is NSNull && json["last_used_at"] is NSNull && json["quota"] is NSNull)
        #expect(json["allowed_cidrs"] as? [String] == [])
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
        #expect(Set(json.keys) == ["partner_id", "name", "status", "scopes", "rate_limit", "created_at", "allowed_cidrs", "quota", "max_keys", "revision"])
        #expect(try AdminJSON.decoder().decode(PartnerInfo.self, from: try AdminJSON.encoder().encode(partner)) == partner)
        let limited = PartnerInfo(partnerID: "ptr_1", name: "NammaYatri", status: "active", scopes: [], rateLimit: .init(rate: 1, burst: 1),
                                  createdAt: created, allowedCIDRs: ["203.0.113.0/24"], quota: QuotaSetting(limit: 100_000, period: "month"))
        #expect(try AdminJSON.decoder().decode(PartnerInfo.self, from: try AdminJSON.encoder().encode(limited)) == limited)
        // What a gateway from before allowlists and quotas sends still reads.
        let old = #"{"partner_id":"ptr_1","name":"N","status":"active","scopes":[],"rate_limit":{"rate":1,"burst":1},"created_at":"2026-11-18T11:06:40Z"}"#
        let read = try AdminJSON.decoder().decode(PartnerInfo.self, from: Data(old.utf8))
        #expect(read.allowedCIDRs.isEmpty && read.quota == nil && read.maxKeys == 20)
    }

    /// The members API's shapes, exactly as docs/admin-api.md has them.
    @Test func memberShapes() throws {
        let member = MemberInfo(memberID: "mbr_1", partnerID: "ptr_1", email: "asha@acme.example", name: "Asha", role: "developer")
        #expect(try object(member).keys.sorted() == ["email", "member_id", "name", "partner_id", "revision", "role"])
        #expect(try object(NewMember(email: "a@b.example", name: "A", role: "viewer")).keys.sorted() == ["email", "name", "role"])
        #expect(try object(NewMember(memberID: "mbr_1", email: "a@b.example", name: "A", role: "viewer"))["member_id"] as? String == "mbr_1")
        let older = try AdminJSON.decoder().decode(
            MemberInfo.self, from: Data(#"{"member_id": "mbr_1", "partner_id": "ptr_1", "email": "a@b.example", "name": "A", "role": "viewer"}"#.utf8)
        )
        #expect(older.revision == 0, "a gateway from before member revisions sends none")
        #expect(try object(MemberUpdate(role: "viewer")).keys.sorted() == ["role"])
        #expect(MemberUpdate().isEmpty && !MemberUpdate(name: "x").isEmpty)
        #expect(try object(KeyUpdate(scopes: ["a"])).keys.sorted() == ["scopes"])
        let csv = UsageInfo(keyID: "key_1", timeZone: "UTC", days: [.init(date: "2026-11-22", allowed: 3, refusedAuth: 1, refusedLimit: 0, refusedQuota: 0, upstream2xx: 2, upstream4xx: 1, upstream5xx: 0)]).csv
        #expect(csv == "date,allowed,refused_auth,refused_limit,refused_quota,upstream_2xx,upstream_4xx,upstream_5xx\r\n2026-11-22,3,1,0,0,2,1,0\r\n")
    }

    @Test func updatesTellAQuotaLeftAloneFromOneRemoved() throws {
        let decoder = AdminJSON.decoder()
        let absent = try decoder.decode(KeyUpdate.self, from: Data(#"{"name": "checkout"}"#.utf8))
        #expect(absent.quota == nil && !absent.removesQuota && !absent.isEmpty)
        let removed = try decoder.decode(KeyUpdate.self, from: Data(#"{"quota": null}"#.utf8))
        #expect(removed.removesQuota && !removed.isEmpty)
        let set = try decoder.decode(PartnerUpdate.self, from: Data(#"{"quota": {"limit": 5, "period": "day"}, "allowed_cidrs": ["::1/128"]}"#.utf8))
        #expect(set.quota == QuotaSetting(limit: 5, period: "day") && set.allowedCIDRs == ["::1/128"] && !set.removesQuota)
        #expect(try decoder.decode(PartnerUpdate.self, from: Data("{}".utf8)).isEmpty)
        #expect(String(decoding: try AdminJSON.encoder().encode(KeyUpdate(removesQuota: true)), as: UTF8.self) == #"{"quota":null}"#)
    }
}
