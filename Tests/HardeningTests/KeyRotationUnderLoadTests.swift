import Foundation
import Synchronization
import Testing
import TestSupport

/// A partner rotates its key while its fleet keeps calling with the old one. With a
/// grace period nothing fails; once a revocation or a `--grace 0` rotation has returned, the
/// old key never succeeds again; and nothing along the way is a 5xx.
@Suite("Hardening: key rotation under load", .serialized, .timingSensitive)
struct KeyRotationUnderLoadTests {
    /// What the clients saw: every response, with when its request started.
    final class Record: Sendable {
        struct Call: Sendable {
            let key: String
            let started: ContinuousClock.Instant
            let finished: ContinuousClock.Instant
            let status: UInt
        }

        let calls = Mutex<[Call]>([])
        /// The key the clients send; they switch when the test says.
        let currentKey: Mutex<String>
        let stopped = Mutex(false)

        init(key: String) { currentKey = Mutex(key) }
    }

    @Test func fiftyClientsThroughGraceRotationRevocationAndZeroGraceRotation() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: HardeningYAML.make(redis: redis))
        let first = try await DriverAPI.partnerWithKey(gateway, name: "RotatingCo")
        let record = Record(key: first.key)
        let clock = ContinuousClock()

        let clients = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<50 {
                    group.addTask {
                        while !record.stopped.withLock({ $0 }) {
                            let key = record.currentKey.withLock { $0 }
                            let started = clock.now
                            let status = (try? await DriverAPI.whoami(gateway, key: key).status) ?? 0
                            let finished = clock.now
                            record.calls.withLock { $0.append(.init(key: key, started: started, finished: finished, status: status)) }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        func callsSoFar() -> Int { record.calls.withLock { $0.count } }
        func waitForMoreCalls(_ more: Int) async throws {
            let target = callsSoFar() + more
            try await eventually(timeout: .seconds(20)) { callsSoFar() >= target }
        }

        try await waitForMoreCalls(200)
        // 1. Rotate with a grace period: the old key keeps working.
        let rotated = try await DriverAPI.admin(gateway, .POST, "/v1/keys/\(first.keyID)/rotate", body: #"{"grace": "1h"}"#)
        try #require(rotated.status == 200, "\(rotated)")
        let second = (id: try #require(rotated.string("key_id")), key: try #require(rotated.string("key")))
        try await waitForMoreCalls(300)

        // 2. Revoke the old key while the clients still use it.
        let revokeSentAt = clock.now
        let revoke = try await DriverAPI.admin(gateway, .POST, "/v1/keys/\(first.keyID)/revoke")
        try #require(revoke.status == 200, "\(revoke)")
        let revokedAt = clock.now
        try await waitForMoreCalls(300)

        // 3. The clients move to the new key; then it is rotated with grace 0 under them.
        record.currentKey.withLock { $0 = second.key }
        try await waitForMoreCalls(300)
        let zeroGraceSentAt = clock.now
        let zeroGrace = try await DriverAPI.admin(gateway, .POST, "/v1/keys/\(second.id)/rotate", body: #"{"grace": "0s"}"#)
        try #require(zeroGrace.status == 200, "\(zeroGrace)")
        let endedAt = clock.now
        let third = try #require(zeroGrace.string("key"))
        try await waitForMoreCalls(300)
        record.stopped.withLock { $0 = true }
        try await clients.value

        let calls = record.calls.withLock { $0 }
        let serverErrors = calls.filter { $0.status >= 500 || $0.status == 0 }
        #expect(serverErrors.isEmpty, "\(serverErrors.count) requests failed with 5xx or no answer: \(serverErrors.prefix(5).map(\.status))")
        let firstKeyAfterRevoke = calls.filter { $0.key == first.key && $0.started >= revokedAt }
        let secondKeyAfterRotate = calls.filter { $0.key == second.key && $0.started >= endedAt }
        // Requests in flight while a revocation or rotation is under way may go either way.
        let firstKeyDuringGrace = calls.filter { $0.key == first.key && $0.finished < revokeSentAt }
        let secondKeyBeforeRotate = calls.filter { $0.key == second.key && $0.finished < zeroGraceSentAt }
        #expect(firstKeyDuringGrace.allSatisfy { $0.status == 200 }, "the old key failed during its grace period: \(Set(firstKeyDuringGrace.map(\.status)))")
        #expect(secondKeyBeforeRotate.allSatisfy { $0.status == 200 }, "the new key failed: \(Set(secondKeyBeforeRotate.map(\.status)))")
        #expect(!firstKeyAfterRevoke.isEmpty && !secondKeyAfterRotate.isEmpty)
        #expect(firstKeyAfterRevoke.allSatisfy { $0.status != 200 }, "\(firstKeyAfterRevoke.filter { $0.status == 200 }.count) requests with the revoked key succeeded after the revocation returned")
        #expect(secondKeyAfterRotate.allSatisfy { $0.status != 200 }, "\(secondKeyAfterRotate.filter { $0.status == 200 }.count) requests with the zero-grace-rotated key succeeded after the rotation returned")
        #expect(try await DriverAPI.whoami(gateway, key: third).status == 200)
        let refusedCodes = Set((firstKeyAfterRevoke + secondKeyAfterRotate).map(\.status)).sorted()
        print("key rotation under 50 clients: \(calls.count) requests, \(serverErrors.count) 5xx; old key during its grace \(firstKeyDuringGrace.count) x 200, new key \(secondKeyBeforeRotate.count) x 200; after revoke returned \(firstKeyAfterRevoke.count) requests with it, \(firstKeyAfterRevoke.filter { $0.status == 200 }.count) succeeded (statuses \(refusedCodes)); after the grace-0 rotation returned \(secondKeyAfterRotate.count) requests with the rotated key, \(secondKeyAfterRotate.filter { $0.status == 200 }.count) succeeded")
    }
}
