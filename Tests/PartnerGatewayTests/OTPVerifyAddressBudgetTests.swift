import Foundation
import Testing
import TestSupport

/// `rate_limits.otp_verify_failures_per_ip` against a real gateway and Redis: one client
/// address guessing codes across many phones runs out of failures, whatever each phone's
/// own caps still allow. Addresses come through a trusted proxy's `X-Forwarded-For`, since
/// loopback tests have one source address.
@Suite("Driver login: OTP verify failures per client address", .realProcesses)
struct OTPVerifyAddressBudgetTests {
    static func gateway(_ redis: RedisServer, capacity: Int) async throws -> GatewayProcess {
        try await GatewayProcess(yaml: DriverYAML.make(
            redis: redis,
            rateLimits: """
                {otp_trigger_per_phone: {capacity: 100, refill_per_second: 10}, \
                otp_trigger_per_ip: {capacity: 1000, refill_per_second: 100}, \
                otp_verify_failures_per_ip: {capacity: \(capacity), refill_per_second: 0.001}}
                """,
            extra: "trusted_proxies: [127.0.0.1/32]"
        ))
    }

    static func verify(_ gateway: GatewayProcess, phone: String, otp: String, from client: String) async throws -> DriverResponse {
        try await DriverAPI.post(
            gateway, "/auth/otp/verify", body: DriverHTTP.json(["phone": phone, "otp": otp]), headers: [("X-Forwarded-For", client)])
    }

    @Test func oneAddressGuessingAcrossPhonesRunsOutOfFailures() async throws {
        let redis = try await RedisServer()
        let gateway = try await Self.gateway(redis, capacity: 4)
        let attacker = "203.0.113.7"
        let phones = (0..<8).map { "90000002\(String(format: "%02d", $0))" }
        for phone in phones {
            #expect(try await DriverAPI.trigger(gateway, phone: phone).status == 200)
        }
        // A success costs nothing: the driver behind the same address logs in first.
        #expect(try await Self.verify(gateway, phone: phones[7], otp: DriverAPI.uatCode, from: attacker).status == 200)
        // One wrong code per phone: every phone's own caps (5 per OTP, 20 a day) are far off.
        for phone in phones.prefix(4) {
            let wrong = try await Self.verify(gateway, phone: phone, otp: "000000", from: attacker)
            #expect(wrong.status == 401, "\(wrong)")
            #expect(wrong.code == "INVALID_OTP")
        }
        let refused = try await Self.verify(gateway, phone: phones[4], otp: "000000", from: attacker)
        #expect(refused.status == 429, "\(refused)")
        #expect(refused.code == "RATE_LIMIT_EXCEEDED", "\(refused)")
        #expect(refused.isErrorShape, "\(refused)")
        #expect((refused.header("Retry-After").flatMap { Int($0) } ?? 0) >= 1, "\(refused.headers)")
        // Over budget the code is not even looked at: a right guess is refused like a wrong
        // one, so the address learns nothing more.
        let right = try await Self.verify(gateway, phone: phones[5], otp: DriverAPI.uatCode, from: attacker)
        #expect(right.status == 429, "\(right)")
        // The phone's OTP was not spent by the refused attempt: another address logs in with it.
        let other = try await Self.verify(gateway, phone: phones[5], otp: DriverAPI.uatCode, from: "198.51.100.9")
        #expect(other.status == 200, "\(other)")
    }
}
