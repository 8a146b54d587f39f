import Hummingbird
import HummingbirdTesting
import NIOConcurrencyHelpers
import Testing
import TestSupport

/// `least_request` against two in-process upstreams, one answering at once and one after
/// 300 ms: the slow one holds its requests in flight longer, so it is picked less. The delay is
/// long next to what a loaded machine adds to the fast one's answers, which the test's parallel
/// neighbours can stretch to tens of milliseconds.
@Suite("Upstream fleets: least request", .realProcesses)
struct UpstreamFleetLeastRequestTests {
    /// Serves `GET /lr/:id` after `delay`, counting the requests; runs `body` with its port.
    private static func serve(delay: Duration, count: NIOLockedValueBox<Int>, _ body: @Sendable (Int) async throws -> Void) async throws {
        let router = Router()
        router.get("/lr/:id") { _, _ -> HTTPResponse.Status in
            count.withLockedValue { $0 += 1 }
            if delay > .zero { try await Task.sleep(for: delay) }
            return .ok
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        try await app.test(.live) { client in
            try await body(try #require(client.port))
        }
    }

    @Test func aSlowTargetGetsFewerRequests() async throws {
        let redis = try await RedisServer()
        let fast = NIOLockedValueBox(0)
        let slow = NIOLockedValueBox(0)
        try await Self.serve(delay: .zero, count: fast) { fastPort in
            try await Self.serve(delay: .milliseconds(300), count: slow) { slowPort in
                let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
                    routes:
                      - name: lr
                        path_prefix: /lr
                        auth: none
                        balance: least_request
                        upstream: [http://127.0.0.1:\(slowPort), http://127.0.0.1:\(fastPort)]
                    """))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for client in 0..<20 {
                        group.addTask {
                            for index in 0..<10 {
                                let answer = try await DriverHTTP.call(gateway.baseURL + "/lr/\(client)-\(index)")
                                #expect(answer.status == 200, "\(answer)")
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
        }
        let (fastCount, slowCount) = (fast.withLockedValue { $0 }, slow.withLockedValue { $0 })
        print("UpstreamFleetLeastRequestTests: fast \(fastCount), slow \(slowCount)")
        #expect(fastCount + slowCount == 200)
        // Round robin would give each 100; here the slow one gets less than half of what the
        // fast one gets.
        #expect(slowCount * 2 < fastCount, "fast \(fastCount), slow \(slowCount)")
    }
}
