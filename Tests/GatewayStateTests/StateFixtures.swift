import Foundation
import GatewayContract
@testable import GatewayState

/// Gateway states built in memory, as the admin API would list them.
enum StateFixtures {
    static let created = Date(timeIntervalSince1970: 1_795_000_000)
    static let now = Date(timeIntervalSince1970: 1_796_000_000)

    static func partner(
        _ id: String, _ name: String, status: String = "active", scopes: [String] = ["sdk_tokens:mint"], rate: Double = 50, burst: Int = 100,
        cidrs: [String] = [], quota: QuotaSetting? = nil, maxKeys: Int = 20, revision: Int = 1
    ) -> PartnerInfo {
        PartnerInfo(
            partnerID: id, name: name, status: status, scopes: scopes, rateLimit: .init(rate: rate, burst: burst), createdAt: created,
            allowedCIDRs: cidrs, quota: quota, maxKeys: maxKeys, revision: revision
        )
    }

    static func key(
        _ id: String, of partner: String, name: String? = nil, status: String = "active", scopes: [String] = ["sdk_tokens:mint"],
        expiresAt: Date? = nil, meta: [String: String] = [:], cidrs: [String] = [], quota: QuotaSetting? = nil, revision: Int = 1
    ) -> KeyInfo {
        KeyInfo(
            keyID: id, partnerID: partner, start: "pgk_live_AbCd", name: name, meta: meta, status: status, scopes: scopes, createdAt: created,
            expiresAt: expiresAt, lastUsedAt: nil, allowedCIDRs: cidrs, quota: quota, revision: revision
        )
    }

    static func member(_ id: String, of partner: String, _ email: String, name: String, role: String = "developer", revision: Int = 1) -> MemberInfo {
        MemberInfo(memberID: id, partnerID: partner, email: email, name: name, role: role, revision: revision)
    }

    static func admin(_ id: String, _ name: String, role: String = "operator", status: String = "active", start: String = "pga_live_Q7x4", expiresAt: Date? = nil) -> AdminInfo {
        AdminInfo(adminID: id, name: name, role: role, status: status, start: start, createdAt: created, expiresAt: expiresAt, createdBy: "root", revision: 1)
    }

    /// Two partners, one with an allowlist, a quota, its own max_keys and members; keys live,
    /// rotated and ended; admins.
    static let snapshot = GatewaySnapshot(
        partners: [
            partner("ptr_00000000000000a2", "Rapido", rate: 0.5, burst: 5),
            partner(
                "ptr_00000000000000a1", "NammaYatri", scopes: ["sdk_tokens:mint", "rides:read"], cidrs: ["10.0.0.0/8"],
                quota: QuotaSetting(limit: 100_000, period: "month"), maxKeys: 5
            ),
        ],
        keys: [
            "ptr_00000000000000a1": [
                key("key_00000000000000b2", of: "ptr_00000000000000a1", name: "checkout", scopes: ["rides:read"], meta: ["team": "payments", "env": "prod"], cidrs: ["10.1.0.0/16"]),
                key("key_00000000000000b1", of: "ptr_00000000000000a1", name: "checkout", status: "expiring", expiresAt: Date(timeIntervalSince1970: 1_796_086_400)),
                key("key_00000000000000b3", of: "ptr_00000000000000a1", name: "old", status: "revoked"),
                key("key_00000000000000b4", of: "ptr_00000000000000a1", status: "expired", expiresAt: created),
            ],
            "ptr_00000000000000a2": [key("key_00000000000000c1", of: "ptr_00000000000000a2", name: "true", quota: QuotaSetting(limit: 5, period: "day"))],
        ],
        members: [
            "ptr_00000000000000a1": [
                member("mbr_00000000000000e2", of: "ptr_00000000000000a1", "ravi@nammayatri.example", name: "Ravi", role: "viewer", revision: 3),
                member("mbr_00000000000000e1", of: "ptr_00000000000000a1", "asha@nammayatri.example", name: "Asha", role: "partner_admin"),
            ],
            "ptr_00000000000000a2": [],
        ],
        admins: [admin("adm_00000000000000d1", "asha", expiresAt: Date(timeIntervalSince1970: 1_800_000_000)), admin("adm_00000000000000d2", "ravi", status: "revoked")]
    )

    static func document(_ text: String, environment: [String: String] = [:]) throws -> StateDocument {
        try StateFileReader(environment: environment).read([StateFileReader.Source(path: "state.yaml", text: text)])
    }
}
