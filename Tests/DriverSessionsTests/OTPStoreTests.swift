import DriverSessions
import Foundation
import Testing
import TestSupport

@Suite("OTPStore against a real redis-server", .realProcesses)
struct OTPStoreTests {
    @Test func rightCodeIsAcceptedOnceThenMissing() async throws {
        let fixture = try await Fixture()
        let store = fixture.otpStore()
        let driver = try phone("9876543210")
        #expect(try await store.check("123456", for: driver) == .missing)
        try await store.issue("123456", for: driver)
        #expect(try await store.check("123456", for: driver) == .accepted)
        #expect(try await store.check("123456", for: driver) == .missing)
        #expect(try await store.check("654321", for: driver) == .missing)
        // The same phone in another spelling shares the OTP; another phone has none.
        try await store.issue("222222", for: driver)
        #expect(try await store.check("222222", for: try phone("9876543211")) == .missing)
        #expect(try await store.check("222222", for: try phone("+919876543210")) == .accepted)
        await fixture.close()
    }

    @Test func aNewTriggerReplacesTheEarlierCode() async throws {
        let fixture = try await Fixture()
        let store = fixture.otpStore()
        let driver = try phone("9876543210")
        try await store.issue("111111", for: driver)
        try await store.issue("222222", for: driver)
        #expect(try await store.check("111111", for: driver) == .wrong(attemptsLeft: 4))
        #expect(try await store.check("222222", for: driver) == .accepted)
        await fixture.close()
    }

    @Test func wrongCodesCountDownThenLockUntilANewTrigger() async throws {
        let fixture = try await Fixture()
        let store = fixture.otpStore()
        let driver = try phone("9876543210")
        try await store.issue("123456", for: driver)
        #expect(try await store.check("000000", for: driver) == .wrong(attemptsLeft: 4))
        #expect(try await store.check("000001", for: driver) == .wrong(attemptsLeft: 3))
        #expect(try await store.check("000002", for: driver) == .wrong(attemptsLeft: 2))
        #expect(try await store.check("000003", for: driver) == .wrong(attemptsLeft: 1))
        #expect(try await store.check("000004", for: driver) == .locked)
        // Locked: even the right code is refused, and the lock counts nothing more.
        #expect(try await store.check("123456", for: driver) == .locked)
        #expect(try await store.check("000005", for: driver) == .locked)
        let tag = fixture.hasher.tag(for: driver)
        #expect(try await fixture.server.cli("HGET", "pg:otp:{\(tag)}", "attempts") == "5")
        #expect(try await fixture.server.cli("GET", "pg:otpfail:{\(tag)}") == "5")
        // A new trigger unlocks with a fresh code.
        try await store.issue("654321", for: driver)
        #expect(try await fixture.server.cli("HGET", "pg:otp:{\(tag)}", "attempts") == "0")
        #expect(try await store.check("123456", for: driver) == .wrong(attemptsLeft: 4))
        #expect(try await store.check("654321", for: driver) == .accepted)
        await fixture.close()
    }

    @Test func smallerAttemptLimitLocksSooner() async throws {
        let fixture = try await Fixture()
        let store = fixture.otpStore(OTPPolicy(maxAttempts: 2))
        let driver = try phone("7000000001")
        try await store.issue("123456", for: driver)
        #expect(try await store.check("000000", for: driver) == .wrong(attemptsLeft: 1))
        #expect(try await store.check("000000", for: driver) == .locked)
        #expect(try await store.check("123456", for: driver) == .locked)
        await fixture.close()
    }

    /// 50 parallel wrong guesses evaluate at most 5.
    @Test func fiftyParallelWrongGuessesEvaluateAtMostFive() async throws {
        let fixture = try await Fixture(poolSize: 8)
        let store = fixture.otpStore()
        let driver = try phone("9876543210")
        try await store.issue("424242", for: driver)
        let verdicts = try await withThrowingTaskGroup(of: OTPVerdict.self) { group in
            for guess in 0..<50 {
                let code = String(format: "%06d", guess)
                group.addTask { try await store.check(code, for: driver) }
            }
            return try await group.reduce(into: [OTPVerdict]()) { $0.append($1) }
        }
        #expect(verdicts.count == 50)
        let wrong = verdicts.filter { if case .wrong = $0 { true } else { false } }
        let locked = verdicts.filter { $0 == .locked }
        // Exactly 4 plain wrong answers (attempts left 4, 3, 2, 1), one locking answer, and
        // every other guess refused as locked without being evaluated.
        #expect(wrong.count == 4)
        #expect(Set(wrong) == [.wrong(attemptsLeft: 4), .wrong(attemptsLeft: 3), .wrong(attemptsLeft: 2), .wrong(attemptsLeft: 1)])
        #expect(locked.count == 46)
        #expect(wrong.count + locked.count == 50)
        let tag = fixture.hasher.tag(for: driver)
        #expect(try await fixture.server.cli("HGET", "pg:otp:{\(tag)}", "attempts") == "5")
        #expect(try await fixture.server.cli("GET", "pg:otpfail:{\(tag)}") == "5")
        #expect(try await store.check("424242", for: driver) == .locked)
        await fixture.close()
    }

    @Test func anOldRightCodeIsExpiredNotMissing() async throws {
        let fixture = try await Fixture()
        let lifetime = Duration.milliseconds(300)
        let store = fixture.otpStore(OTPPolicy(lifetime: lifetime))
        let driver = try phone("9876543210")
        let tag = fixture.hasher.tag(for: driver)
        try await store.issue("123456", for: driver)
        let createdAt = try #require(Int64(try await fixture.server.cli("HGET", "pg:otp:{\(tag)}", "created_at")))
        // The record outlives the code (lifetime + retention).
        let ttl = try #require(Int64(try await fixture.server.cli("PTTL", "pg:otp:{\(tag)}")))
        #expect(ttl > 300)
        // Wait, by Redis's own clock (the scripts' clock), until the lifetime has passed.
        try await eventually(timeout: .seconds(10), interval: .milliseconds(25)) {
            try await fixture.redisNowMilliseconds() - createdAt >= 300
        }
        #expect(try await store.check("123456", for: driver) == .expired)
        #expect(try await store.check("123456", for: driver) == .expired)
        // An expired code is not a wrong attempt.
        #expect(try await fixture.server.cli("EXISTS", "pg:otpfail:{\(tag)}") == "0")
        // A new trigger gives a working code again.
        let fresh = fixture.otpStore()
        try await fresh.issue("999999", for: driver)
        #expect(try await fresh.check("999999", for: driver) == .accepted)
        await fixture.close()
    }

    @Test func dailyFailureBudgetSurvivesANewTrigger() async throws {
        let fixture = try await Fixture()
        let store = fixture.otpStore(OTPPolicy(maxFailuresPerWindow: 3))
        let driver = try phone("9876543210")
        let tag = fixture.hasher.tag(for: driver)
        try await store.issue("111111", for: driver)
        #expect(try await store.check("000000", for: driver) == .wrong(attemptsLeft: 4))
        #expect(try await store.check("000001", for: driver) == .wrong(attemptsLeft: 3))
        // A new trigger resets the OTP's attempts, not the phone's failures.
        try await store.issue("222222", for: driver)
        #expect(try await store.check("000000", for: driver) == .wrong(attemptsLeft: 4))
        #expect(try await fixture.server.cli("GET", "pg:otpfail:{\(tag)}") == "3")
        let windowTTL = try #require(Int64(try await fixture.server.cli("PTTL", "pg:otpfail:{\(tag)}")))
        #expect(windowTTL > 86_000_000 && windowTTL <= 86_400_000)
        // Budget spent: even the right code is refused, for this OTP and the next.
        #expect(try await store.check("222222", for: driver) == .dailyLimitReached)
        try await store.issue("333333", for: driver)
        #expect(try await store.check("333333", for: driver) == .dailyLimitReached)
        #expect(try await store.check("000000", for: driver) == .dailyLimitReached)
        // Refusals spend nothing more.
        #expect(try await fixture.server.cli("GET", "pg:otpfail:{\(tag)}") == "3")
        // Another phone has its own budget.
        let other = try phone("9876543211")
        try await store.issue("444444", for: other)
        #expect(try await store.check("444444", for: other) == .accepted)
        await fixture.close()
    }

    @Test func redisHoldsNoPlaintextPhoneOrCode() async throws {
        let fixture = try await Fixture()
        let store = fixture.otpStore()
        let driver = try phone("9876543210")
        try await store.issue("123456", for: driver)
        #expect(try await store.check("000000", for: driver) == .wrong(attemptsLeft: 4))
        let dump = try await fixture.everything()
        #expect(dump.contains("pg:otp:{"), "the scan must see the OTP record")
        #expect(dump.contains("pg:otpfail:{"))
        #expect(!dump.contains("9876543210"))
        #expect(!dump.contains("123456"))
        #expect(!dump.contains("000000"))
        // The stored digest is an HMAC, not a plain SHA-256 of the code.
        let tag = fixture.hasher.tag(for: driver)
        #expect(tag.count == 32)
        let digest = try await fixture.server.cli("HGET", "pg:otp:{\(tag)}", "digest")
        #expect(digest.count == 64)
        #expect(digest == fixture.hasher.otpDigest(code: "123456", phoneTag: tag))
        #expect(digest != fixture.hasher.otpDigest(code: "123456", phoneTag: fixture.hasher.tag(for: try phone("9876543211"))))
        await fixture.close()
    }

    @Test func generatedCodesAreSixDigits() {
        let codes = (0..<2_000).map { _ in OTPStore.generateCode() }
        for code in codes {
            #expect(code.count == 6 && code.allSatisfy(\.isASCII) && code.allSatisfy(\.isNumber))
        }
        #expect(Set(codes).count > 1_900)
        #expect(codes.contains { $0.hasPrefix("0") })
    }

    @Test func phoneKeyMustBeLongEnough() {
        #expect(throws: DriverSessionsError.self) { try PhoneHasher(key: Array(repeating: 1, count: 31)) }
        #expect((try? PhoneHasher(key: Array(repeating: 1, count: 32))) != nil)
    }
}
