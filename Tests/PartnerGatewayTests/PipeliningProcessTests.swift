import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// Pipelined keep-alive requests written at once, across both engines (the event-loop fast
/// path and Hummingbird) and the gateway's own endpoints: every request answered, in order,
/// and the connection still open. Each request carries its own `X-Request-Id`, which its
/// answer repeats, so the order is read off the answers.
@Suite("Pipelining across route kinds and endpoints (processes)", .serialized)
struct PipeliningProcessTests {
    @Test func threePipelinedRequestsOverTheFastPathAndHummingbirdAreAllAnswered() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop(); redis.kill() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis) + """
            routes:
              - {name: user, path_prefix: /user, upstream: \(upstream.url), auth: none}

            """)
        let requests = ["/user/1", "/user/2", "/healthz"].enumerated().map { index, path in
            "GET \(path) HTTP/1.1\r\nHost: x\r\nX-Request-Id: pipe-\(index)\r\n\r\n"
        }
        let result = try await RawClient.pipeline(port: gateway.port, requests: requests)
        #expect(result.answers.map(\.requestID) == ["pipe-0", "pipe-1", "pipe-2"], "\(result.answers)")
        #expect(result.answers.map(\.status) == [200, 200, 200])
        #expect(result.stillOpen)
    }

    @Test func aHundredPipelinedRequestsOfEveryKindAreAnsweredInOrder() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop(); redis.kill() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis) + """
            routes:
              - {name: open, path_prefix: /echo, upstream: \(upstream.url), auth: none}
              - {name: user, path_prefix: /user, upstream: \(upstream.url), auth: bearer}
              - {name: limited, path_prefix: /limited, upstream: \(upstream.url), auth: bearer, rate_limit: {per: user, capacity: 1000, refill_per_second: 100}}
              - {name: partner, path_prefix: /papi, upstream: \(upstream.url), auth: api_key}

            """)
        let pair = try await DriverAPI.login(gateway, phone: "9876500077")
        let partner = try await DriverAPI.createPartner(gateway, name: "Pipelining")
        let key = try await DriverAPI.createKey(gateway, partnerID: partner)
        let bearer = "Authorization: Bearer \(pair.accessToken)\r\n"
        let apiKey = "X-API-Key: \(key)\r\n"
        let body = #"{"refresh_token":"0000"}"#
        // (request without its X-Request-Id and final CRLF, expected status)
        let kinds: [(String, Int)] = [
            ("GET /echo/a HTTP/1.1\r\nHost: x\r\n", 200),                          // none: fast path
            ("GET /echo/b HTTP/1.1\r\nHost: x\r\n", 200),                          // two fast ones in a row
            ("GET /user/b HTTP/1.1\r\nHost: x\r\n\(bearer)", 200),                 // bearer: fast path once cached
            ("GET /limited/c HTTP/1.1\r\nHost: x\r\n\(bearer)", 200),              // rate-limited: Hummingbird
            ("GET /papi/d HTTP/1.1\r\nHost: x\r\n\(apiKey)", 200),                 // api_key: Hummingbird
            ("POST /echo/e HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n", 200),    // a body: Hummingbird
            ("GET /healthz HTTP/1.1\r\nHost: x\r\n", 200),
            ("GET /.well-known/jwks.json HTTP/1.1\r\nHost: x\r\n", 200),
            ("GET /partner/v1/whoami HTTP/1.1\r\nHost: x\r\n\(apiKey)", 200),
            ("POST /auth/token/refresh HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n", 401),
            ("GET /nowhere HTTP/1.1\r\nHost: x\r\n", 404),
            ("GET /user/f HTTP/1.1\r\nHost: x\r\n", 401),                           // bearer without a token
        ]
        var requests: [String] = []
        var expected: [Int] = []
        for index in 0..<100 {
            let (head, status) = kinds[index % kinds.count]
            let payload = head.hasPrefix("POST /echo") ? "hello" : head.hasPrefix("POST /auth") ? body : ""
            requests.append(head + "X-Request-Id: pipe-\(index)\r\n\r\n" + payload)
            expected.append(status)
        }
        let result = try await RawClient.pipeline(port: gateway.port, requests: requests)
        print("PipeliningProcessTests: \(result.answers.count) answers to 100 pipelined requests, connection \(result.stillOpen ? "open" : "closed")")
        #expect(result.answers.count == 100)
        #expect(result.answers.map(\.requestID) == (0..<100).map { "pipe-\($0)" }, "\(result.answers.map(\.requestID))")
        #expect(result.answers.map(\.status) == expected, "\(result.answers)")
        #expect(result.stillOpen)
    }
}

extension RawClient {
    struct PipelinedAnswer: CustomStringConvertible {
        let status: Int
        let requestID: String?
        var description: String { "\(status) \(requestID ?? "-")" }
    }

    /// Writes every request in one send on one connection, reads the answers (each framed by
    /// `Content-Length` or chunked) until as many as requests arrived or the server stops,
    /// then checks that the connection still serves a request.
    static func pipeline(port: Int, requests: [String]) async throws -> (answers: [PipelinedAnswer], stillOpen: Bool) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let fd = try connectedSocket(port: port, readTimeout: 10)
                    defer { close(fd) }
                    _ = sendAll(fd, requests.joined())
                    var reader = ResponseReader(fd: fd)
                    var answers: [PipelinedAnswer] = []
                    while answers.count < requests.count, let answer = reader.next() {
                        answers.append(answer)
                    }
                    _ = sendAll(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: after\r\n\r\n")
                    let after = reader.next()
                    return (answers, after?.status == 200 && after?.requestID == "after")
                })
            }
        }
    }

    /// Reads HTTP/1.1 responses one by one off a blocking socket.
    private struct ResponseReader {
        let fd: Int32
        var buffer: [UInt8] = []

        mutating func next() -> PipelinedAnswer? {
            guard let headEnd = readUntil([13, 10, 13, 10]) else { return nil }
            let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
            buffer.removeFirst(headEnd + 4)
            let lines = head.components(separatedBy: "\r\n")
            guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1.1 "), let status = Int(statusLine.dropFirst(9).prefix(3)) else { return nil }
            var fields: [String: String] = [:]
            for line in lines.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            if fields["transfer-encoding"]?.lowercased() == "chunked" {
                while true {
                    guard let lineEnd = readUntil([13, 10]) else { return nil }
                    let size = Int(String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";")[0], radix: 16) ?? 0
                    buffer.removeFirst(lineEnd + 2)
                    if size == 0 {
                        guard let trailerEnd = readUntil([13, 10]) else { return nil }
                        buffer.removeFirst(trailerEnd + 2)
                        break
                    }
                    guard fill(to: size + 2) else { return nil }
                    buffer.removeFirst(size + 2)
                }
            } else {
                let length = fields["content-length"].flatMap { Int($0) } ?? 0
                guard fill(to: length) else { return nil }
                buffer.removeFirst(length)
            }
            return PipelinedAnswer(status: status, requestID: fields["x-request-id"])
        }

        /// The index where `marker` starts in the buffer, reading more until it is there.
        private mutating func readUntil(_ marker: [UInt8]) -> Int? {
            var searchFrom = 0
            while true {
                if buffer.count >= marker.count {
                    for start in searchFrom...(buffer.count - marker.count) where buffer[start..<start + marker.count].elementsEqual(marker) {
                        return start
                    }
                    searchFrom = buffer.count - marker.count + 1
                }
                guard receive() else { return nil }
            }
        }

        private mutating func fill(to count: Int) -> Bool {
            while buffer.count < count {
                guard receive() else { return false }
            }
            return true
        }

        private mutating func receive() -> Bool {
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return false }
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
    }
}
