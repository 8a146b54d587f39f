import Foundation
import Testing
import TestSupport

/// Erasing a driver against real processes: afterwards Redis holds nothing that names the
/// user or the phone's digest (but the audit trail's `user.erase` entry), no stored
/// `Idempotency-Key` answer and no spent refresh token of theirs, every token is refused,
/// and the phone logs in again as a new user.
@Suite("Admin API: erasing a driver", .realProcesses)
struct UserErasureTests {
    /// Every key name and value in Redis but the audit trails, as one text (a test-sized
    /// keyspace: KEYS is fine here).
    static func dump(_ redis: RedisServer) async throws -> String {
        try await redis.cli("EVAL", """
            local out = {}
            for _, key in ipairs(redis.call('KEYS', '*')) do
              if not key:find('pg:audit', 1, true) then
                out[#out + 1] = key
                local kind = redis.call('TYPE', key)['ok']
                local values = {}
                if kind == 'string' then values = {redis.call('GET', key)}
                elseif kind == 'hash' then values = redis.call('HGETALL', key)
                elseif kind == 'set' then values = redis.call('SMEMBERS', key)
                elseif kind == 'zset' then values = redis.call('ZRANGE', key, 0, -1)
                elseif kind == 'list' then values = redis.call('LRANGE', key, 0, -1)
                else values = {'<' .. kind .. '>'} end
                for _, value in ipairs(values) do out[#out + 1] = tostring(value) end
              end
            end
            return table.concat(out, '\\n')
            """, "0")
    }

    @Test func erasureLeavesNothingButTheAuditTrailsErasureEntry() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let yaml = DriverYAML.make(redis: redis, extra: """
            routes:
              - {name: user-profile, path_prefix: /user, upstream: \(upstream.url), auth: bearer, rate_limit: {per: user, capacity: 100, refill_per_second: 10}}
              - {name: rides, path_prefix: /rides, upstream: \(upstream.url), auth: bearer, idempotency: {ttl: 24h}}
            """)
        let first = try await GatewayProcess(yaml: yaml)
        let second = try await GatewayProcess(yaml: yaml)
        let partnerID = try await DriverAPI.createPartner(first, name: "NammaYatri")
        let key = try await DriverAPI.createKey(first, partnerID: partnerID)
        let otp = try await DriverAPI.login(first, phone: "9876543210")
        #expect(otp.isNewUser)
        let sdk = try DriverTokenPair(try await DriverAPI.mint(second, key: key, phone: "9876543210", driverID: "NY-1", name: "Ravi"))
        // Two rotations: the first token is then neither the family's current nor its previous.
        let rotated = try DriverTokenPair(try await DriverAPI.refresh(first, otp.refreshToken))
        let refreshed = try DriverTokenPair(try await DriverAPI.refresh(second, rotated.refreshToken))
        // Stored answers of keyed requests, whose upstream saw the user (and here their name and phone).
        for (index, token) in [refreshed.accessToken, sdk.accessToken].enumerated() {
            let keyed = try await DriverHTTP.call(
                first.baseURL + "/rides/\(index)/accept", method: .POST,
                headers: [("Idempotency-Key", "accept-\(index)"), ("Authorization", "Bearer \(token)")],
                body: #"{"name": "Ravi", "phone": "9876543210"}"#
            )
            #expect(keyed.status == 200, "\(keyed)")
        }
        try await eventually { try await redis.cli("--scan", "--pattern", "pg:idem:*").split(separator: "\n").count == 2 }
        #expect(try await DriverAPI.admin(first, .POST, "/v1/users/find", body: #"{"phone": "9876543210"}"#).status == 200)
        #expect(try await DriverAPI.profile(second, token: refreshed.accessToken).status == 200)
        // A wrong OTP leaves failure state under the phone's digest too.
        #expect(try await DriverAPI.trigger(first, phone: "9876543210").status == 200)
        #expect(try await DriverAPI.verify(first, phone: "9876543210", otp: "000000").status == 401)
        let phoneTag = try #require(try await redis.cli("HGET", "pg:user:{\(otp.userID)}", "phone_tag").split(separator: "\n").first.map(String.init))
        #expect(phoneTag.count == 32)
        let before = try await Self.dump(redis)
        #expect(before.contains(otp.userID) && before.contains(phoneTag))

        let support = try await AdminRoleTests.credential(first, name: "asha", role: "support")
        let erased = try await AdminRoleTests.call(second, support.token, .POST, "/v1/users/\(otp.userID)/erase")
        #expect(erased.status == 200, "\(erased)")
        #expect(Set(erased.json.keys) == ["user_id", "erased_at"] && erased.string("user_id") == otp.userID)

        let after = try await Self.dump(redis)
        #expect(!after.contains(otp.userID), "\(after)")
        #expect(!after.contains(phoneTag), "\(after)")
        #expect(!after.contains("NY-1") && !after.contains("Ravi") && !after.contains("******3210"))
        #expect(!after.contains("pg:idem:"), "stored answers of the user's keyed requests: \(after)")
        #expect(!after.contains("pg:rt:"), "spent refresh tokens: \(after)")
        // The trail names the user in the erasure's own entry only, never in a lookup.
        let trail = try await redis.cli("XRANGE", "pg:audit", "-", "+")
        #expect(trail.components(separatedBy: otp.userID).count == 2, "\(trail)")

        // Every token dies on both instances.
        for gateway in [first, second] {
            for access in [otp.accessToken, sdk.accessToken, refreshed.accessToken] {
                #expect(try await DriverAPI.profile(gateway, token: access).status == 401)
            }
        }
        for refresh in [refreshed.refreshToken, sdk.refreshToken, rotated.refreshToken, otp.refreshToken] {
            #expect(try await DriverAPI.refresh(second, refresh).status == 401)
        }
        // The trail keeps the id and the fact, and nothing about the phone.
        let entries = try await AdminRoleTests.auditEntries(first)
        let entry = try #require(entries.first { $0["action"] as? String == "user.erase" })
        #expect(entry["target"] as? String == otp.userID && entry["actor"] as? String == "asha")
        let lookup = try #require(entries.first { $0["action"] as? String == "users.find" })
        #expect(lookup["target"] as? String != otp.userID)
        #expect(try await DriverAPI.admin(first, .POST, "/v1/users/\(otp.userID)/erase").code == "NOT_FOUND")
        #expect(try await DriverAPI.admin(first, .POST, "/v1/users/find", body: #"{"phone": "9876543210"}"#).code == "NOT_FOUND")

        // The same phone is a new user now.
        let again = try await DriverAPI.login(second, phone: "9876543210")
        #expect(again.isNewUser && again.userID != otp.userID)
        #expect(try await DriverAPI.profile(first, token: again.accessToken).status == 200)
    }
}
