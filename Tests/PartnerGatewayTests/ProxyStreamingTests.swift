import AsyncHTTPClient
import Foundation
import NIOCore
import Testing
import TestSupport

/// Bodies stream through the gateway: memory stays flat under many large transfers, and an
/// upstream that breaks mid-body breaks the client's response visibly instead of ending it
/// early. Real gateway, echo upstream and Redis processes.
@Suite("Proxy: streaming and mid-body failures", .serialized, .realProcesses)
struct ProxyStreamingTests {
    private static func start(maxBodyBytes: Int = 1_048_576) async throws -> (RedisServer, EchoUpstreamProcess, GatewayProcess) {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        let yaml = DriverYAML.make(redis: redis) + "max_body_bytes: \(maxBodyBytes)\nroutes:\n"
            + "  - {name: files, path_prefix: /files, upstream: \(upstream.url), auth: none, timeout: 60s}\n"
        let gateway = try await GatewayProcess(yaml: yaml)
        return (redis, upstream, gateway)
    }

    @Test func residentMemoryStaysFlatWhileTwentyClientsMoveFiftyMebibytesEachWay() async throws {
        let size = 50 * 1_048_576
        let clients = 20
        let (_, upstream, gateway) = try await Self.start(maxBodyBytes: size)
        defer { upstream.stop() }
        // Warm up (connection pools, buffers, lazily built tables) before the baseline.
        _ = try await Self.transfer(gateway, bytes: 1_048_576)
        let baseline = try ProcessMemory.residentBytes(pid: gateway.process.pid)

        let sampler = Task {
            var peak = baseline
            while !Task.isCancelled {
                peak = max(peak, (try? ProcessMemory.residentBytes(pid: gateway.process.pid)) ?? 0)
                try? await Task.sleep(for: .milliseconds(50))
            }
            return peak
        }
        let clock = ContinuousClock()
        let started = clock.now
        let downloaded = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<clients {
                group.addTask { try await Self.transfer(gateway, bytes: size) }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        let elapsed = clock.now - started
        sampler.cancel()
        let peak = await sampler.value
        let growth = peak - baseline
        print("ProxyStreamingTests: \(clients) clients x \(size >> 20) MiB up and down in \(elapsed); gateway RSS \(baseline >> 20) MiB before, peak \(peak >> 20) MiB (growth \(growth >> 10) KiB, bound 20 MiB)")
        #expect(downloaded == Array(repeating: size, count: clients))
        #expect(growth < 20 * 1_048_576, "resident memory grew by \(growth >> 10) KiB")
    }

    /// Uploads `bytes` (generated as it goes, never held whole) and downloads as many,
    /// counting them without keeping them; the number of bytes downloaded.
    private static func transfer(_ gateway: GatewayProcess, bytes: Int) async throws -> Int {
        var request = HTTPClientRequest(url: gateway.baseURL + "/files/up-and-down?stream_bytes=\(bytes)")
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.body = .stream(GeneratedBody(size: bytes), length: .known(Int64(bytes)))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(300))
        guard response.status == .ok else {
            throw ProxyStreamingFailure(what: "status \(response.status.code)")
        }
        var received = 0
        for try await chunk in response.body {
            received += chunk.readableBytes
        }
        return received
    }

    @Test func anUpstreamFailingMidBodyAbortsTheClientConnection() async throws {
        let (_, upstream, gateway) = try await Self.start()
        defer { upstream.stop() }
        // With a Content-Length: the client gets fewer bytes than announced, then a close.
        let declared = try await RawDownload.get(port: gateway.port, path: "/files/broken?stream_bytes=1000000&fail_after_bytes=300000")
        print("ProxyStreamingTests: upstream failed after 300000 of 1000000 bytes; client got status \(declared.status ?? 0), \(declared.body.count) body bytes, closed: \(declared.closed)")
        #expect(declared.status == 200)
        #expect(declared.closed)
        #expect(declared.body.count < 1_000_000)
        #expect(declared.contentLength == 1_000_000)

        // Chunked: the final zero-length chunk never comes, so the client cannot take the
        // body for complete.
        let chunked = try await RawClient.exchange(
            port: gateway.port, send: "GET /files/broken?stream_bytes=1000000&fail_after_bytes=300000&trailer=x HTTP/1.1\r\nHost: x\r\n\r\n"
        )
        #expect(chunked.closed)
        #expect(chunked.text.lowercased().contains("transfer-encoding: chunked"))
        #expect(!chunked.text.hasSuffix("\r\n0\r\n\r\n") && !chunked.text.lowercased().contains("x-echo-trailer"), "the broken body ended like a complete one")

        // The gateway itself is fine afterwards.
        let after = try await DriverHTTP.call(gateway.baseURL + "/files/after")
        #expect(after.status == 200)
    }
}

struct ProxyStreamingFailure: Error, CustomStringConvertible {
    let what: String
    var description: String { what }
}

/// `size` bytes of request body made 64 KiB at a time as the client sends them.
struct GeneratedBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let size: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var left: Int
        mutating func next() async -> ByteBuffer? {
            guard left > 0 else { return nil }
            let count = Swift.min(left, 65_536)
            left -= count
            return ByteBuffer(repeating: UInt8(ascii: "u"), count: count)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(left: size) }
}

/// A process's resident memory from `/proc/PID/status`.
enum ProcessMemory {
    struct Unreadable: Error {}

    static func residentBytes(pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kib = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        else { throw Unreadable() }
        return kib * 1024
    }
}

/// One raw `GET` whose body is kept as bytes (``RawClient`` decodes text), read until the
/// announced length or until the server closes.
enum RawDownload {
    struct Reply {
        let status: Int?
        let contentLength: Int?
        let body: Data
        let closed: Bool
    }

    static func get(port: Int, path: String) async throws -> Reply {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try blockingGet(port: port, path: path) })
            }
        }
    }

    private static func blockingGet(port: Int, path: String) throws -> Reply {
        let fd = try RawClient.connectedSocket(port: port, readTimeout: 30)
        defer { close(fd) }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }

        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var closed = false
        var head: (status: Int?, contentLength: Int?, bodyStart: Int)?
        while true {
            if head == nil, let end = received.range(of: Data("\r\n\r\n".utf8)) {
                let text = String(decoding: received[..<end.lowerBound], as: UTF8.self)
                let status = text.hasPrefix("HTTP/1.1 ") ? Int(text.dropFirst(9).prefix(3)) : nil
                let length = text.split(separator: "\r\n")
                    .first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) }
                head = (status, length, end.upperBound)
            }
            if let head, let length = head.contentLength, received.count - head.bodyStart >= length { break }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { received.append(contentsOf: buffer[0..<n]); continue }
            if n == 0 || errno == ECONNRESET { closed = true }
            break
        }
        guard let head else { return Reply(status: nil, contentLength: nil, body: Data(), closed: closed) }
        return Reply(status: head.status, contentLength: head.contentLength, body: received[head.bodyStart...], closed: closed)
    }
}
