import Foundation
import Testing
import TestSupport

/// `tokens.refresh_reuse_interval` against a real gateway process and Redis: what a
/// driver's app on a flaky mobile network sees when it retries a refresh.
@Suite("Driver sessions: refresh retries within the reuse interval", .realProcesses)
struct DriverRefreshRetryTests {
    /// The response to a refresh was lost; the app retries with the same token.
    @Test func aLostResponseRetriedWithinTheIntervalGetsTheSameRefreshToken() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, upstream: upstream))
        let login = try await DriverAPI.login(gateway, phone: "9876543210")

        let lost = try DriverTokenPair(try await DriverAPI.refresh(gateway, login.refreshToken))
        let retry = try DriverTokenPair(try await DriverAPI.refresh(gateway, login.refreshToken))
        #expect(retry.refreshToken == lost.refreshToken)
        #expect(retry.userID == login.userID)
        #expect(retry.sessionID == login.sessionID)
        #expect(retry.accessToken != login.accessToken)
        #expect(try await DriverAPI.profile(gateway, token: retry.accessToken).status == 200)
        #expect(try await DriverAPI.profile(gateway, token: lost.accessToken).status == 200)

        // The session goes on from that token as if the first response had arrived.
        let next = try DriverTokenPair(try await DriverAPI.refresh(gateway, retry.refreshToken))
        #expect(next.sessionID == login.sessionID)
        #expect(try await DriverAPI.profile(gateway, token: next.accessToken).status == 200)
    }

    /// Only the immediate predecessor is forgiven: a grandparent revokes the session.
    @Test func aGrandparentIsReuseEvenWithinTheInterval() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, upstream: upstream))
        let login = try await DriverAPI.login(gateway, phone: "9876543210")
        let first = try DriverTokenPair(try await DriverAPI.refresh(gateway, login.refreshToken))
        let second = try DriverTokenPair(try await DriverAPI.refresh(gateway, first.refreshToken))

        let grandparent = try await DriverAPI.refresh(gateway, login.refreshToken)
        #expect(grandparent.status == 401, "\(grandparent)")
        #expect(grandparent.code == "INVALID_TOKEN")
        #expect(try await DriverAPI.refresh(gateway, second.refreshToken).status == 401)
        #expect(try await DriverAPI.profile(gateway, token: second.accessToken).status == 401)
    }

    /// A spent token in an attacker's hands: within the interval it gets the live successor
    /// (what the interval cannot tell from a retry), but once the successor has itself been
    /// rotated the window is over for its predecessor, and the driver's retry of it is reuse,
    /// which ends the session for both: the attacker's token stops working.
    @Test func rotatingTheSuccessorEndsTheWindowForItsPredecessor() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        // The longest interval allowed, so every step below is well inside it.
        let gateway = try await GatewayProcess(
            yaml: DriverYAML.make(redis: redis, upstream: upstream, tokens: "{refresh_reuse_interval: 60s}"))
        let login = try await DriverAPI.login(gateway, phone: "9876543210")
        let a = login.refreshToken
        let b = try DriverTokenPair(try await DriverAPI.refresh(gateway, a))
        let stolen = try DriverTokenPair(try await DriverAPI.refresh(gateway, a))
        #expect(stolen.refreshToken == b.refreshToken)
        let c = try DriverTokenPair(try await DriverAPI.refresh(gateway, b.refreshToken))
        #expect(c.sessionID == login.sessionID)

        let retried = try await DriverAPI.refresh(gateway, a)
        #expect(retried.status == 401, "\(retried)")
        #expect(retried.code == "INVALID_TOKEN")
        #expect(retried.isErrorShape)
        let afterwards = try await DriverAPI.refresh(gateway, c.refreshToken)
        #expect(afterwards.status == 401, "the session must be revoked: \(afterwards)")
        #expect(try await DriverAPI.profile(gateway, token: c.accessToken).status == 401)
        #expect(try await redis.cli("HGET", "pg:rtfam:{\(try #require(login.sessionID))}", "state") == "revoked")
    }

    /// Dashboards tell flaky networks from copied tokens: a retry within the interval and a
    /// detected reuse are counted apart.
    @Test func retriesAndDetectedReuseAreCountedApart() async throws {
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis))
        let login = try await DriverAPI.login(gateway, phone: "9876543210")
        let first = try DriverTokenPair(try await DriverAPI.refresh(gateway, login.refreshToken))
        #expect(try await DriverAPI.refresh(gateway, login.refreshToken).status == 200)
        #expect(try await DriverAPI.refresh(gateway, login.refreshToken).status == 200)
        #expect(try await DriverAPI.refresh(gateway, first.refreshToken).status == 200)
        #expect(try await DriverAPI.refresh(gateway, login.refreshToken).status == 401)
        let metrics = try await DriverAPI.admin(gateway, .GET, "/metrics").text
        #expect(metrics.contains(#"gateway_token_refreshes_total{result="rotated"} 2"#), "\(metrics)")
        #expect(metrics.contains(#"gateway_token_refreshes_total{result="retried"} 2"#), "\(metrics)")
        #expect(metrics.contains(#"gateway_token_refreshes_total{result="reused"} 1"#), "\(metrics)")
        #expect(metrics.contains("gateway_refresh_token_reuse_total 1"), "\(metrics)")
    }

    /// 20 concurrent refreshes with one token (an app whose calls all noticed the expiry at
    /// once): all 200, one refresh token, and that pair works.
    @Test func twentyConcurrentRefreshesAllSucceedWithOneRefreshToken() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, upstream: upstream))
        let login = try await DriverAPI.login(gateway, phone: "9123456780")
        let answers = try await withThrowingTaskGroup(of: DriverResponse.self) { group in
            for _ in 0..<20 {
                group.addTask { try await DriverAPI.refresh(gateway, login.refreshToken) }
            }
            return try await group.reduce(into: [DriverResponse]()) { $0.append($1) }
        }
        let pairs = try answers.map { try DriverTokenPair($0) }
        let refreshTokens = Set(pairs.map(\.refreshToken))
        print("20 concurrent refreshes with one token: \(answers.filter { $0.status == 200 }.count) x 200, \(refreshTokens.count) refresh token(s)")
        #expect(pairs.count == 20)
        #expect(refreshTokens.count == 1)
        for pair in pairs {
            #expect(pair.sessionID == login.sessionID)
            #expect(try await DriverAPI.profile(gateway, token: pair.accessToken).status == 200)
        }
        let shared = try #require(refreshTokens.first)
        #expect(try await DriverAPI.refresh(gateway, shared).status == 200)
    }

    @Test func afterTheIntervalTheRetryIsReuse() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(
            yaml: DriverYAML.make(redis: redis, upstream: upstream, tokens: "{refresh_reuse_interval: 500ms}"))
        let login = try await DriverAPI.login(gateway, phone: "9876543210")
        let refreshed = try DriverTokenPair(try await DriverAPI.refresh(gateway, login.refreshToken))
        let sessionID = try #require(login.sessionID)
        // Wait on Redis's clock, which the refresh script reads, until the interval is over.
        let refreshedAt = try #require(Int64(try await redis.cli("HGET", "pg:rtfam:{\(sessionID)}", "refreshed_at")))
        try await eventually(timeout: .seconds(5), interval: .milliseconds(20)) {
            let time = try await redis.cli("TIME").split(separator: "\n")
            return (Int64(time.first ?? "") ?? 0) * 1000 + (Int64(time.last ?? "") ?? 0) / 1000 > refreshedAt + 500
        }
        let late = try await DriverAPI.refresh(gateway, login.refreshToken)
        #expect(late.status == 401, "\(late)")
        #expect(late.code == "INVALID_TOKEN")
        #expect(try await DriverAPI.refresh(gateway, refreshed.refreshToken).status == 401)
        #expect(try await DriverAPI.profile(gateway, token: refreshed.accessToken).status == 401)
    }

    /// `refresh_reuse_interval: 0` is the strict rule: the lost-answer retry is reuse.
    @Test func aZeroIntervalTreatsEveryRetryAsReuse() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(
            yaml: DriverYAML.make(redis: redis, upstream: upstream, tokens: "{refresh_reuse_interval: 0}"))
        let login = try await DriverAPI.login(gateway, phone: "9876543210")
        let refreshed = try DriverTokenPair(try await DriverAPI.refresh(gateway, login.refreshToken))
        let retry = try await DriverAPI.refresh(gateway, login.refreshToken)
        #expect(retry.status == 401, "\(retry)")
        #expect(retry.code == "INVALID_TOKEN")
        #expect(try await DriverAPI.refresh(gateway, refreshed.refreshToken).status == 401)
        #expect(try await DriverAPI.profile(gateway, token: refreshed.accessToken).status == 401)
    }
}
