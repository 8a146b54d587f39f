import Foundation
import Hummingbird
import KeyRegistry

/// The admin API's JSON (docs/ADMIN_API.md). Optional times are always present, as `null`
/// when there is none, so clients can rely on every documented field being there.

struct PartnerBody: ResponseEncodable {
    struct RateLimit: Codable { let rate: Double; let burst: Int }
    let partnerID: String
    let name: String
    let status: String
    let scopes: [String]
    let rateLimit: RateLimit
    let createdAt: Date

    enum CodingKeys: String, CodingKey {
        case name, status, scopes
        case partnerID = "partner_id"
        case rateLimit = "rate_limit"
        case createdAt = "created_at"
    }

    init(_ partner: Partner) {
        partnerID = partner.id
        name = partner.name
        status = partner.status.rawValue
        scopes = partner.scopes
        rateLimit = .init(rate: partner.rate, burst: partner.burst)
        createdAt = partner.createdAt
    }
}

struct CreatePartnerRequest: Decodable {
    let name: String
    let rate: Double?
    let burst: Int?
    let scopes: [String]?
}

struct CreateKeyRequest: Decodable {
    let scopes: [String]?
    let expiresIn: String?
    enum CodingKeys: String, CodingKey {
        case scopes
        case expiresIn = "expires_in"
    }
}

struct RotateKeyRequest: Decodable {
    let grace: String?
}

struct CreatedKeyBody: ResponseEncodable {
    let keyID: String
    let partnerID: String
    let key: String
    let scopes: [String]
    let createdAt: Date
    let expiresAt: Date?

    enum CodingKeys: String, CodingKey {
        case key, scopes
        case keyID = "key_id"
        case partnerID = "partner_id"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(partnerID, forKey: .partnerID)
        try container.encode(key, forKey: .key)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
    }
}

struct KeyBody: Encodable {
    let keyID: String
    let status: String
    let scopes: [String]
    let createdAt: Date
    let expiresAt: Date?
    let lastUsedAt: Date?

    enum CodingKeys: String, CodingKey {
        case status, scopes
        case keyID = "key_id"
        case createdAt = "created_at"
        case expiresAt = "expires_at"
        case lastUsedAt = "last_used_at"
    }

    init(_ record: KeyRecord, now: Date) {
        keyID = record.id
        status = record.status(at: now).rawValue
        scopes = record.scopes
        createdAt = record.createdAt
        expiresAt = record.expiresAt
        lastUsedAt = record.lastUsedAt
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(status, forKey: .status)
        try container.encode(scopes, forKey: .scopes)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(expiresAt, forKey: .expiresAt)
        try container.encode(lastUsedAt, forKey: .lastUsedAt)
    }
}

struct RotatedKeyBody: ResponseEncodable {
    let keyID: String
    let key: String
    let previousKeyID: String
    let previousKeyExpiresAt: Date?

    enum CodingKeys: String, CodingKey {
        case key
        case keyID = "key_id"
        case previousKeyID = "previous_key_id"
        case previousKeyExpiresAt = "previous_key_expires_at"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(key, forKey: .key)
        try container.encode(previousKeyID, forKey: .previousKeyID)
        try container.encode(previousKeyExpiresAt, forKey: .previousKeyExpiresAt)
    }
}

struct RevokedKeyBody: ResponseEncodable {
    let keyID: String
    let status: String
    enum CodingKeys: String, CodingKey {
        case status
        case keyID = "key_id"
    }
}

struct AuditEntryBody: Encodable {
    let at: Date
    let actor: String
    let action: String
    let target: String
    let source: String

    init(_ entry: AuditLog.Entry) {
        at = entry.at
        actor = entry.actor
        action = entry.action
        target = entry.target
        source = entry.source
    }
}

/// A JSON array response (Hummingbird encodes top-level arrays through this wrapper).
struct ListBody<Element: Encodable>: ResponseEncodable {
    let items: [Element]
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(items)
    }
}
