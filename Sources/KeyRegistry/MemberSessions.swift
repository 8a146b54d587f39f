import Crypto
import Foundation
import GatewayPrimitives
import RedisClient

/// Members' portal sessions in Redis, read on every portal call.
///
/// A session is a random secret the browser holds in the `pg_portal` cookie, with the member's
/// id in front (`mbr_….<64 hex>`) so that it is found in its member's slot; Redis keeps only its
/// SHA-256. It ends when unused for `idle` (the key's expiry, renewed by each call), `lifetime`
/// after sign-in whatever happens, at sign-out, when its member is removed, and when its partner
/// is disabled (``endAll(partnerID:)``). No instance caches a session, so each of these is
/// refused everywhere from the next call on.
public struct MemberSessions: Sendable {
    /// What a session's cookie holds, and when the session ends at the latest.
    public struct Opened: Sendable {
        public let token: String
        public let expiresAt: Date
    }

    let redis: RedisConnectionPool
    public let idle: Duration
    public let lifetime: Duration

    public init(redis: RedisConnectionPool, idle: Duration, lifetime: Duration) {
        self.redis = redis
        self.idle = idle
        self.lifetime = lifetime
    }

    /// Opens a session for `member`; nil when the member was removed meanwhile.
    public func open(for member: Member) async throws -> Opened? {
        let secret = RandomHex.string(byteCount: 32)
        let hash = Self.hash(secret)
        let reply = try await redis.run(
            MemberScripts.openSession,
            keys: [RegistryKeys.member(member.id), RegistryKeys.memberSessions(member.id), RegistryKeys.memberSession(member.id, hash: hash)],
            arguments: [String(idle.inMilliseconds), String(lifetime.inMilliseconds), hash]
        )
        guard let expires = reply.int, expires > 0 else { return nil }
        return Opened(token: member.id + "." + secret, expiresAt: Date(timeIntervalSince1970: Double(expires) / 1000))
    }

    /// The member a session's token belongs to and when it ends at the latest, starting its
    /// idle time again; nil for a malformed, unknown, ended or expired session, or a removed
    /// member.
    public func member(for token: String) async throws -> (member: Member, expiresAt: Date)? {
        guard let (memberID, hash) = Self.parse(token) else { return nil }
        let reply = try await redis.run(
            MemberScripts.checkSession,
            keys: [RegistryKeys.memberSession(memberID, hash: hash), RegistryKeys.member(memberID)],
            arguments: [String(idle.inMilliseconds)]
        )
        guard let parts = reply.array, parts.count >= 2, parts[0].string == "ok", let expires = parts[1].string.flatMap(Double.init),
            let member = MemberRegistry.member(id: memberID, from: KeyRegistry.hashFields(.array(Array(parts.dropFirst(2)))))
        else { return nil }
        return (member, Date(timeIntervalSince1970: expires / 1000))
    }

    /// Signs a session out; a token naming nothing changes nothing.
    public func close(_ token: String) async throws {
        guard let (memberID, hash) = Self.parse(token) else { return }
        _ = try await redis.run(
            MemberScripts.closeSession,
            keys: [RegistryKeys.memberSession(memberID, hash: hash), RegistryKeys.memberSessions(memberID)], arguments: [hash]
        )
    }

    /// Ends every session of every member of the partner (it was disabled), one member at a
    /// time; ``member(for:)``'s callers also refuse the sessions of a disabled partner, so a
    /// failure half way grants nothing.
    public func endAll(partnerID: String) async throws {
        for memberID in try await MemberRegistry(redis: redis).memberIDs(partnerID: partnerID) {
            let set = RegistryKeys.memberSessions(memberID)
            let hashes = try await redis.send(.smembers(set)).array?.compactMap(\.string) ?? []
            _ = try await redis.run(MemberScripts.endSessions, keys: [set] + hashes.map { RegistryKeys.memberSession(memberID, hash: $0) }, arguments: [])
        }
    }

    /// `mbr_<16 hex>.<64 hex>` as the member's id and the secret's hash; nil for anything else.
    static func parse(_ token: String) -> (memberID: String, hash: String)? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, Member.isID(parts[0]), parts[1].utf8.count == 64,
            parts[1].utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) })
        else { return nil }
        return (String(parts[0]), hash(String(parts[1])))
    }

    static func hash(_ secret: String) -> String {
        Hex.encode(SHA256.hash(data: Array(secret.utf8)), count: SHA256.byteCount)
    }
}
