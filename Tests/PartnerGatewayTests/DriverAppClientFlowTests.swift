import Foundation
import Testing
import TestSupport

/// The refresh flow a driver's app follows (README, "Refreshing on mobile networks"), run
/// against a real gateway: it must never force the driver to log in again.
@Suite("Driver sessions: the app's refresh flow never forces a new login", .realProcesses)
struct DriverAppClientFlowTests {
    /// A driver's app, written the way the client guide says: it refreshes proactively (five
    /// minutes before the access token expires), shares one refresh among all the calls that
    /// need it, replaces both tokens together on success, and retries a refresh whose response
    /// never arrived with the same refresh token. Any 401 means "log in again".
    actor DriverApp {
        let gateway: GatewayProcess
        private var accessToken: String
        private var refreshToken: String
        private var accessExpiresAt: Int
        private var refreshing: Task<Void, any Error>?
        /// How many coming refresh answers the network loses (the request reached the gateway).
        private var answersToLose = 0
        private(set) var forcedLogins = 0
        private(set) var refreshRequests = 0
        /// The burst of calls under way (``expectBurst(of:)``): how many, how many have asked
        /// for a token, and a refresh waiting for the rest. On a loaded machine a task of the
        /// burst can start after the shared refresh ended, and (tokens live less than the
        /// margin) would refresh again: a burst's calls all ask before its refresh goes out.
        private var burstSize = 0
        private var burstArrived = 0
        private var burstComplete: [CheckedContinuation<Void, Never>] = []

        init(gateway: GatewayProcess, login: DriverTokenPair) throws {
            self.gateway = gateway
            accessToken = login.accessToken
            refreshToken = login.refreshToken
            accessExpiresAt = try #require(login.answer.json["access_token_expires_at"] as? Int)
        }

        func loseNextAnswers(_ count: Int) { answersToLose = count }

        /// The next `count` calls are one burst (screens loading at once).
        func expectBurst(of count: Int) {
            burstSize = count
            burstArrived = 0
        }

        /// A bearer call the way the app makes it.
        func callProfile() async throws -> UInt {
            burstArrived += 1
            if burstArrived == burstSize {
                for waiter in burstComplete { waiter.resume() }
                burstComplete = []
            }
            let token = try await validAccessToken()
            let status = try await DriverAPI.profile(gateway, token: token).status
            if status == 401 { forcedLogins += 1 }
            return status
        }

        /// What a second copy of the app (a background task holding the same tokens, with no
        /// shared lock) does: refresh on its own, at the same moment.
        func uncoordinatedRefresh() async throws -> DriverResponse {
            try await DriverAPI.refresh(gateway, refreshToken)
        }

        private func validAccessToken() async throws -> String {
            if accessExpiresAt > Int(Date().timeIntervalSince1970) + 300 { return accessToken }
            if let refreshing {
                try await refreshing.value
                return accessToken
            }
            let task = Task { try await self.refresh() }
            refreshing = task
            defer { refreshing = nil }
            try await task.value
            return accessToken
        }

        /// One refresh, retried with the same token when the response is lost.
        private func refresh() async throws {
            if burstArrived < burstSize { await withCheckedContinuation { burstComplete.append($0) } }
            for _ in 0..<3 {
                refreshRequests += 1
                let answer = try await DriverAPI.refresh(gateway, refreshToken)
                if answersToLose > 0 {
                    answersToLose -= 1
                    continue
                }
                guard answer.status == 200 else {
                    forcedLogins += 1
                    throw ForcedLogin(answer: answer)
                }
                let pair = try DriverTokenPair(answer)
                accessToken = pair.accessToken
                refreshToken = pair.refreshToken
                accessExpiresAt = try #require(answer.json["access_token_expires_at"] as? Int)
                return
            }
            throw ForcedLogin(answer: nil)
        }
    }

    struct ForcedLogin: Error, CustomStringConvertible {
        let answer: DriverResponse?
        var description: String { "the app had to log in again: \(answer.map { "\($0)" } ?? "every retry lost")" }
    }

    @Test func proactiveSharedAndRetriedRefreshesNeverForceALogin() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        // Access tokens live 4 minutes, so every round is inside the five-minute margin and
        // starts with a proactive refresh.
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, upstream: upstream, tokens: "{access_ttl: 4m}"))
        let app = try DriverApp(gateway: gateway, login: try await DriverAPI.login(gateway, phone: "9876543210"))

        for round in 0..<6 {
            // Rounds 1 and 4: the network loses the refresh answer (once, then twice).
            if round == 1 { await app.loseNextAnswers(1) }
            if round == 4 { await app.loseNextAnswers(2) }
            // Ten screens load at once and all need a token.
            await app.expectBurst(of: 10)
            let statuses = try await withThrowingTaskGroup(of: UInt.self) { group in
                for _ in 0..<10 { group.addTask { try await app.callProfile() } }
                return try await group.reduce(into: [UInt]()) { $0.append($1) }
            }
            #expect(statuses.allSatisfy { $0 == 200 }, "round \(round): \(statuses)")
        }
        // A second copy of the app refreshes with the same token at the same moment as the
        // app itself: both succeed, and the app carries on.
        async let background = app.uncoordinatedRefresh()
        let foreground = try await app.callProfile()
        #expect(try await background.status == 200)
        #expect(foreground == 200)
        #expect(try await app.callProfile() == 200)

        let requests = await app.refreshRequests
        print("driver app flow: 6 rounds of 10 concurrent calls, 3 lost refresh answers, \(requests) refresh requests, \(await app.forcedLogins) forced logins")
        #expect(await app.forcedLogins == 0)
        #expect(requests == 6 + 3 + 2)
    }
}
