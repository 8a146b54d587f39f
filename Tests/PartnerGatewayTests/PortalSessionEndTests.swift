import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// When a portal session ends, on every instance (docs/portal.md, "Sessions"): wall-clock
/// bounds, so these run alone among the process tests.
@Suite("Portal: a session ends everywhere, on time", .timingSensitive)
struct PortalSessionEndTests {
    /// Two instances share one Redis: a member removed, a partner disabled or a sign-out on the
    /// first is refused by the second within a second (no instance keeps a session in memory).
    @Test func aRemovedMembersOpenSessionIsRefusedOnASecondInstanceWithinASecond() async throws {
        let redis = try await RedisServer()
        let yaml = PortalAPI.yaml(redis: redis)
        let first = try await GatewayProcess(yaml: yaml)
        let second = try await GatewayProcess(yaml: yaml)
        let partner = try await DriverAPI.createPartner(first, name: "Acme")
        let removed = try await PortalAPI.member(first, partnerID: partner, email: "removed@acme.example", role: "developer")
        let signedOut = try await PortalAPI.member(first, partnerID: partner, email: "out@acme.example", role: "viewer")
        for member in [removed, signedOut] {
            #expect(try await PortalAPI.call(second, .GET, "/keys", as: member).status == 200, "the session works on the second instance")
        }

        let clock = ContinuousClock()
        func refusedOnSecond(_ member: PortalMember, after change: () async throws -> Void) async throws -> Duration {
            try await change()
            let changed = clock.now
            try await eventually(timeout: .seconds(5), interval: .milliseconds(20)) {
                try await PortalAPI.call(second, .GET, "/keys", as: member).status == 401
            }
            return clock.now - changed
        }
        let afterRemoval = try await refusedOnSecond(removed) {
            let status = try await DriverAPI.admin(first, .DELETE, "/v1/partners/\(partner)/members/\(removed.memberID)").status
            #expect(status == 204)
        }
        #expect(afterRemoval < .seconds(1), "refused \(afterRemoval) after the removal")
        let afterSignOut = try await refusedOnSecond(signedOut) {
            let status = try await PortalAPI.call(first, .DELETE, "/session", as: signedOut).status
            #expect(status == 204)
        }
        #expect(afterSignOut < .seconds(1), "refused \(afterSignOut) after the sign-out")

        let kept = try await PortalAPI.member(first, partnerID: partner, email: "kept@acme.example", role: "partner_admin")
        #expect(try await PortalAPI.call(second, .GET, "/members", as: kept).status == 200)
        let afterDisable = try await refusedOnSecond(kept) {
            let status = try await DriverAPI.admin(first, .POST, "/v1/partners/\(partner)/disable").status
            #expect(status == 200)
        }
        #expect(afterDisable < .seconds(1), "refused \(afterDisable) after the partner was disabled")
        // Ended, not paused: enabling the partner again does not bring the session back.
        #expect(try await DriverAPI.admin(first, .POST, "/v1/partners/\(partner)/enable").status == 200)
        #expect(try await PortalAPI.call(second, .GET, "/members", as: kept).status == 401)
        #expect(try await PortalAPI.signIn(second, email: "kept@acme.example").memberID == kept.memberID)
    }

    /// `portal.session_idle` and `portal.session_max`: used without pause a session still ends
    /// at its absolute end; unused, at its idle end.
    @Test func theIdleAndAbsoluteLifetimesHold() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: PortalAPI.yaml(redis: redis, portal: "session_idle: 2s, session_max: 5s"))
        let partner = try await DriverAPI.createPartner(gateway, name: "Acme")
        let busy = try await PortalAPI.member(gateway, partnerID: partner, email: "asha@acme.example", role: "viewer")
        let clock = ContinuousClock()
        let opened = clock.now
        var lastAccepted = opened
        while clock.now - opened < .seconds(15) {
            let answer = try await PortalAPI.call(gateway, .GET, "/me", as: busy)
            if answer.status == 401 { break }
            #expect(answer.status == 200)
            lastAccepted = clock.now
        }
        #expect(lastAccepted - opened > .seconds(4) && lastAccepted - opened < .seconds(6), "ended \(lastAccepted - opened) after sign-in")

        // Unused: its key goes at the idle end (watched in Redis, which touches no session),
        // well before the absolute one, and the next call is refused.
        let idle = try await PortalAPI.signIn(gateway, email: "asha@acme.example")
        #expect(try await PortalAPI.call(gateway, .GET, "/me", as: idle).status == 200)
        let used = clock.now
        let pattern = "pg:member:{\(idle.memberID)}:session:*"
        try await eventually(timeout: .seconds(10), interval: .milliseconds(50)) { try await redis.cli("--scan", "--pattern", pattern).isEmpty }
        #expect(clock.now - used < .seconds(4), "ended \(clock.now - used) after its last use")
        #expect(try await PortalAPI.call(gateway, .GET, "/me", as: idle).status == 401)
    }
}
