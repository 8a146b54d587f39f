import Foundation
import Testing
import TestSupport

/// What one partner can learn and change about a driver through SDK mints, when another
/// partner (or the driver, by OTP) got there first: against a real gateway and Redis.
@Suite("Driver login: SDK mints across partners", .realProcesses)
struct PartnerEnrolmentPrivacyTests {
    @Test func aSecondPartnerLearnsNothingOfTheFirstAndOverwritesNothing() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        let first = try await DriverAPI.createPartner(gateway, name: "NammaYatri")
        let firstKey = try await DriverAPI.createKey(gateway, partnerID: first)
        let second = try await DriverAPI.createPartner(gateway, name: "Other")
        let secondKey = try await DriverAPI.createKey(gateway, partnerID: second)
        let phone = "9845012399"

        let enrolled = try DriverTokenPair(try await DriverAPI.mint(gateway, key: firstKey, phone: phone, driverID: "NY-1", name: "Ravi Kumar"))
        #expect(enrolled.isNewUser)

        // The second partner's first mint for the phone looks exactly like a first
        // registration: is_new_user says whether this partner enrolled the driver before.
        let probe = try await DriverAPI.mint(gateway, key: secondKey, phone: phone, driverID: "OT-9", name: "Someone Else")
        let probed = try DriverTokenPair(probe)
        #expect(probed.isNewUser, "a partner must not learn that another one registered the phone: \(probe)")
        #expect(probed.userID == enrolled.userID, "one user per phone")
        #expect(!(try DriverTokenPair(try await DriverAPI.mint(gateway, key: secondKey, phone: phone, driverID: "OT-9"))).isNewUser)
        #expect(!(try DriverTokenPair(try await DriverAPI.mint(gateway, key: firstKey, phone: phone, driverID: "NY-1"))).isNewUser)

        // The name the first partner gave is still there; the second one's is kept apart.
        let user = "pg:user:{\(enrolled.userID)}"
        let fields = try await redis.cli("HGETALL", user)
        #expect(fields.contains("Ravi Kumar"), "the first partner's name was overwritten: \(fields)")
        #expect(fields.contains("Someone Else"), "\(fields)")
        #expect(try await redis.cli("HGET", user, "name") != "Someone Else", "\(fields)")
    }

    @Test func aDriverWhoLoggedInByOTPIsStillNewToEachPartner() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        let partner = try await DriverAPI.createPartner(gateway, name: "NammaYatri")
        let key = try await DriverAPI.createKey(gateway, partnerID: partner)
        let direct = try await DriverAPI.login(gateway, phone: "9845012398")
        #expect(direct.isNewUser)

        let minted = try DriverTokenPair(try await DriverAPI.mint(gateway, key: key, phone: "9845012398", driverID: "NY-2"))
        #expect(minted.userID == direct.userID)
        #expect(minted.isNewUser, "the partner must not learn that the driver registered by OTP")
        // The driver's own later login still knows them.
        #expect(!(try await DriverAPI.login(gateway, phone: "9845012398")).isNewUser)
    }
}
