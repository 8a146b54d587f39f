import Dispatch
import Foundation
import Testing
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Slow clients are cut off: 500 connections that send part of a request head
/// and then nothing must neither starve normal clients nor live past
/// `server.header_read_timeout`.
@Suite("Hardening: slowloris", .serialized, .timingSensitive)
struct SlowlorisTests {
    static let slowCount = 500
    /// Requests before the slow heads arrive, for comparison.
    static let normalCount = 300
    static let headerReadTimeout = Duration.seconds(3)

    @Test func fiveHundredSlowHeadsNeitherStarveOthersNorLinger() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: HardeningYAML.make(
            redis: redis, upstream: upstream, server: "{header_read_timeout: 3s, idle_timeout: 60s}"
        ))
        // Each slow connection is a descriptor in both processes.
        let gatewayLimit = try Self.openFilesLimit(pid: gateway.process.pid)
        try #require(gatewayLimit > Self.slowCount + 200, "the gateway may open only \(gatewayLimit) files")
        var ourLimit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &ourLimit)
        try #require(Int(ourLimit.rlim_cur) > Self.slowCount + 200, "the test may open only \(ourLimit.rlim_cur) files")
        // Warm up the client's connection pool and the route, and measure without slow heads.
        #expect(try await DriverHTTP.call(gateway.baseURL + "/open/warm").status == 200)
        let baseline = try await Self.normalRequests(gateway)
        let descriptorsBefore = try Self.openDescriptors(pid: gateway.process.pid)

        let slow = try await SlowHeads.open(count: Self.slowCount, port: gateway.port)
        defer { slow.closeAll() }
        // Watched from now on (on a Dispatch thread), so each closure is timed when it happens.
        async let closures = slow.waitForAllClosed(timeout: .seconds(10))
        // The gateway has accepted every slow connection (each holds a descriptor there).
        try await eventually(timeout: .seconds(5)) {
            try Self.openDescriptors(pid: gateway.process.pid) >= descriptorsBefore + Self.slowCount
        }
        let clock = ContinuousClock()
        let normalStart = clock.now
        // Normal clients until the gateway starts closing slow heads: every one of these
        // requests was made while all 500 were open.
        let latencies = try await Self.normalRequests(gateway, count: 5000, until: { slow.anyClosed })
        let normalEnd = clock.now
        _ = try await closures

        #expect(latencies.allSatisfy { $0.status == 200 })
        let baselineP99 = quantile(baseline.map(\.elapsed), 0.99)
        let p50 = quantile(latencies.map(\.elapsed), 0.5)
        let p99 = quantile(latencies.map(\.elapsed), 0.99)
        #expect(p99 < .milliseconds(100), "p99 \(p99)")
        let lifetimes = slow.lifetimes
        let shortest = lifetimes.min() ?? .zero
        let longest = lifetimes.max() ?? .zero
        #expect(lifetimes.count == Self.slowCount)
        #expect(shortest >= Self.headerReadTimeout - .milliseconds(100), "closed after \(shortest)")
        #expect(longest <= Self.headerReadTimeout + .milliseconds(1500), "closed after \(longest)")
        #expect(latencies.count >= 200, "only \(latencies.count) normal requests before the first closure")
        print("slowloris: \(Self.normalCount) normal requests before: p99 \(baselineP99.milliseconds) ms; \(latencies.count) during \(Self.slowCount) open slow heads: p50 \(p50.milliseconds) ms, p99 \(p99.milliseconds) ms (bound 100 ms), in \((normalEnd - normalStart).milliseconds) ms; slow heads closed by the gateway after \(shortest.milliseconds)-\(longest.milliseconds) ms (header_read_timeout \(Self.headerReadTimeout.milliseconds) ms); opening them took \((slow.openedAt.last! - slow.openedAt.first!).milliseconds) ms; gateway open-files limit \(gatewayLimit)")
    }

    /// `GET /healthz` on the public listener (the one the slow heads occupy) from two
    /// concurrent clients: `count` of them, or as many as are made before `stop()` turns
    /// true; their responses.
    static func normalRequests(_ gateway: GatewayProcess, count: Int = normalCount, until stop: @escaping @Sendable () -> Bool = { false }) async throws -> [DriverResponse] {
        try await withThrowingTaskGroup(of: [DriverResponse].self) { group in
            let workers = 2
            for worker in 0..<workers {
                group.addTask {
                    var answers: [DriverResponse] = []
                    for index in stride(from: worker, to: count, by: workers) {
                        if stop() { break }
                        answers.append(try await DriverHTTP.call(gateway.baseURL + "/healthz?n=\(index)"))
                    }
                    return answers
                }
            }
            return try await group.reduce(into: [DriverResponse]()) { $0 += $1 }
        }
    }

    static func openDescriptors(pid: pid_t) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count
    }

    /// The soft `Max open files` of a process, from `/proc/<pid>/limits`.
    static func openFilesLimit(pid: pid_t) throws -> Int {
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let line = try #require(limits.split(whereSeparator: \.isNewline).first { $0.hasPrefix("Max open files") })
        let fields = line.dropFirst("Max open files".count).split(separator: " ")
        return try #require(Int(fields.first ?? ""))
    }
}

/// Raw sockets that each sent the start of a request head and nothing more. All blocking
/// calls run on Dispatch threads, never on the test's cooperative pool.
private final class SlowHeads: @unchecked Sendable {
    // @unchecked: `closedAt` is only touched under `lock`; the rest is immutable.
    let descriptors: [Int32]
    let openedAt: [ContinuousClock.Instant]
    private let lock = NSLock()
    private var closedAt: [Int32: ContinuousClock.Instant] = [:]

    private init(descriptors: [Int32], openedAt: [ContinuousClock.Instant]) {
        self.descriptors = descriptors
        self.openedAt = openedAt
    }

    struct SocketError: Error { let what: String; let code: Int32 }

    static func open(count: Int, port: Int) async throws -> SlowHeads {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    var descriptors: [Int32] = []
                    var openedAt: [ContinuousClock.Instant] = []
                    for index in 0..<count {
                        let fd = try connect(port: port)
                        let head = Array("GET /open/slow-\(index) HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8)
                        let sent = head.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                        guard sent == head.count else { throw SocketError(what: "send", code: errno) }
                        descriptors.append(fd)
                        openedAt.append(ContinuousClock.now)
                    }
                    return SlowHeads(descriptors: descriptors, openedAt: openedAt)
                })
            }
        }
    }

    private static func connect(port: Int) throws -> Int32 {
        try LoopbackPort.connect(port)
    }

    /// Polls until the server has closed every socket (read returns 0 or a reset); the
    /// first closure's time.
    func waitForAllClosed(timeout: Duration) async throws -> ContinuousClock.Instant {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async { [self] in
                continuation.resume(with: Result { try pollUntilClosed(timeout: timeout) })
            }
        }
    }

    private func pollUntilClosed(timeout: Duration) throws -> ContinuousClock.Instant {
        let deadline = ContinuousClock.now + timeout
        var open = Set(descriptors)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !open.isEmpty {
            guard ContinuousClock.now < deadline else { throw SocketError(what: "\(open.count) slow heads still open after \(timeout)", code: 0) }
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), 20)
            guard ready > 0 else { continue }
            let now = ContinuousClock.now
            for entry in fds where entry.revents != 0 {
                let n = buffer.withUnsafeMutableBytes { recv(entry.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                    open.remove(entry.fd)
                    lock.withLock { closedAt[entry.fd] = now }
                }
            }
        }
        return lock.withLock { closedAt.values.min() ?? deadline }
    }

    var anyClosed: Bool { lock.withLock { !closedAt.isEmpty } }

    /// How long each closed socket lived, from its request bytes being sent to its close.
    var lifetimes: [Duration] {
        lock.withLock {
            zip(descriptors, openedAt).compactMap { fd, opened in closedAt[fd].map { $0 - opened } }
        }
    }

    func closeAll() {
        for fd in descriptors { close(fd) }
    }
}
