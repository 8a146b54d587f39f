import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import TestSupport

/// Pipelined keep-alive requests of every kind, written at once, against a real gateway: the
/// proxy engine and Hummingbird take turns on one connection, so the responses must come back
/// one per request, in order, and the connection must stay open.
@Suite("Public listener: pipelining across every route kind", .realProcesses)
struct PipeliningTests {
    private static func yaml(redis: RedisServer, upstream: EchoUpstreamProcess) -> String {
        DriverYAML.make(redis: redis, upstream: upstream) + """
              - {name: orders, path_prefix: /orders, upstream: \(upstream.url), auth: api_key}
              - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none}
              - name: limited
                path_prefix: /limited
                upstream: \(upstream.url)
                auth: bearer
                rate_limit: {per: user, capacity: 1000, refill_per_second: 100}

            """
    }

    /// Two proxied requests and one of the gateway's own endpoints in one write: once the
    /// second proxied request's end reached Hummingbird without its head, and the third was
    /// never answered.
    @Test func twoProxiedRequestsAndAnEndpointWrittenAtOnceAreAllAnswered() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream))
        let requests = ["/open/1", "/open/2", "/healthz"].enumerated().map { index, path in
            "GET \(path) HTTP/1.1\r\nHost: x\r\nX-Request-Id: pipe-\(index)\r\n\r\n"
        }
        let (answers, stillOpen) = try await RawClient.pipelined(port: gateway.port, requests: requests)
        try #require(answers.count == 3, "\(answers)")
        for (index, answer) in answers.enumerated() {
            #expect(answer.hasPrefix("HTTP/1.1 200 "), "answer \(index): \(answer)")
            #expect(answer.lowercased().contains("x-request-id: pipe-\(index)\r\n"), "answer \(index) out of order: \(answer)")
        }
        #expect(stillOpen)
    }

    /// Proxied answers are written as bytes past NIO's encoder, Hummingbird's through it (which
    /// is not paired with the decoder): the responses to `HEAD` carry no body either way, in
    /// order with the response after them.
    @Test func answersToHEADCarryNoBodyWhoeverAnswersThem() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream))
        let request = "HEAD /open/a HTTP/1.1\r\nHost: x\r\nX-Request-Id: pipe-0\r\n\r\n"
            + "HEAD /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: pipe-1\r\n\r\n"
            + "GET /open/b HTTP/1.1\r\nHost: x\r\nX-Request-Id: pipe-2\r\nConnection: close\r\n\r\n"
        let reply = try await RawClient.exchange(port: gateway.port, send: request)
        #expect(reply.closed)
        let answers = Array(reply.text.components(separatedBy: "HTTP/1.1 ").dropFirst())
        try #require(answers.count == 3, "\(reply.text)")
        #expect(answers[0].hasPrefix("200 "), "\(answers[0])")
        // Hummingbird has no `HEAD` route for it: its 404 has a JSON body, which must not go out.
        #expect(answers[1].hasPrefix("404 ") && answers[1].contains("Content-Length: "), "\(answers[1])")
        #expect(answers[2].hasPrefix("200 "), "\(answers[2])")
        for (index, answer) in answers.enumerated() {
            #expect(answer.lowercased().contains("x-request-id: pipe-\(index)\r\n"), "answer \(index) out of order: \(answer)")
        }
        for answer in answers.prefix(2) {
            #expect(answer.hasSuffix("\r\n\r\n"), "an answer to HEAD has a body: \(answer)")
        }
        #expect(answers[2].contains("\"path\""), "\(answers[2])")
    }

    @Test func aHundredPipelinedRequestsOfEveryKindAreAnsweredInOrderOnAnOpenConnection() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream))
        let token = try await DriverAPI.login(gateway, phone: "9876500071").accessToken
        let partner = try await DriverAPI.createPartner(gateway, name: "pipelining", rate: 10000, burst: 10000)
        let key = try await DriverAPI.createKey(gateway, partnerID: partner)

        // Every kind in turn: bearer, API key, open, rate-limited, an upload, the gateway's own
        // endpoints, and refusals (no token, no key) that never reach an upstream.
        let kinds: [(String, Int) -> String] = [
            { "GET /user/\($1) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nX-Request-Id: \($0)\r\n\r\n" },
            { "GET /orders/\($1) HTTP/1.1\r\nHost: x\r\nX-API-Key: \(key)\r\nX-Request-Id: \($0)\r\n\r\n" },
            { "GET /open/\($1) HTTP/1.1\r\nHost: x\r\nX-Request-Id: \($0)\r\n\r\n" },
            { "GET /limited/\($1) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nX-Request-Id: \($0)\r\n\r\n" },
            { "POST /open/\($1) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 11\r\nX-Request-Id: \($0)\r\n\r\n{\"n\":12345}" },
            { id, _ in "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: \(id)\r\n\r\n" },
            { id, _ in "GET /.well-known/jwks.json HTTP/1.1\r\nHost: x\r\nX-Request-Id: \(id)\r\n\r\n" },
            { id, _ in "GET /partner/v1/whoami HTTP/1.1\r\nHost: x\r\nX-API-Key: \(key)\r\nX-Request-Id: \(id)\r\n\r\n" },
            { "GET /user/\($1) HTTP/1.1\r\nHost: x\r\nX-Request-Id: \($0)\r\n\r\n" },
            { "GET /orders/\($1) HTTP/1.1\r\nHost: x\r\nX-Request-Id: \($0)\r\n\r\n" },
        ]
        let expectedStatus = [200, 200, 200, 200, 200, 200, 200, 200, 401, 401]
        let requests = (0..<100).map { index in kinds[index % kinds.count]("req-\(index)", index) }

        let (answers, stillOpen) = try await RawClient.pipelined(port: gateway.port, requests: requests)
        try #require(answers.count == 100, "\(answers.count) answers: \(answers.last ?? "")")
        for (index, answer) in answers.enumerated() {
            #expect(answer.hasPrefix("HTTP/1.1 \(expectedStatus[index % kinds.count]) "), "answer \(index): \(answer)")
            #expect(answer.lowercased().contains("x-request-id: req-\(index)\r\n"), "answer \(index) out of order: \(answer)")
        }
        #expect(stillOpen, "the connection was closed after the pipelined answers")
    }

    /// A connection remembers its last API key (an edge may carry several partners' calls on
    /// one connection): each request is still answered as its own key's partner, and a key
    /// differing from the remembered one in its last character only is refused.
    @Test func keysOfTwoPartnersOnOneConnectionEachGetTheirOwnPartner() async throws {
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: Self.yaml(redis: redis, upstream: upstream))
        let first = try await DriverAPI.createPartner(gateway, name: "first", rate: 10000, burst: 10000)
        let second = try await DriverAPI.createPartner(gateway, name: "second", rate: 10000, burst: 10000)
        let firstKey = try await DriverAPI.createKey(gateway, partnerID: first)
        let secondKey = try await DriverAPI.createKey(gateway, partnerID: second)
        let last = firstKey.last!
        let nearKey = String(firstKey.dropLast()) + (last == "a" ? "b" : "a")
        let keys = [firstKey, firstKey, secondKey, firstKey, nearKey, firstKey, secondKey, secondKey]
        let requests = keys.enumerated().map { index, key in
            "GET /orders/\(index) HTTP/1.1\r\nHost: x\r\nX-API-Key: \(key)\r\nX-Request-Id: key-\(index)\r\n\r\n"
        }
        let (answers, stillOpen) = try await RawClient.pipelined(port: gateway.port, requests: requests)
        try #require(answers.count == keys.count, "\(answers)")
        for (index, answer) in answers.enumerated() {
            switch keys[index] {
            case nearKey:
                #expect(answer.hasPrefix("HTTP/1.1 401 ") && answer.contains("INVALID_API_KEY"), "answer \(index): \(answer)")
            case let key:
                let partner = key == firstKey ? first : second
                #expect(answer.hasPrefix("HTTP/1.1 200 "), "answer \(index): \(answer)")
                #expect(answer.contains("\"x-gateway-partner-id\":[\"\(partner)\"]"), "answer \(index) is not \(partner)'s: \(answer)")
            }
        }
        #expect(stillOpen)
    }
}

extension RawClient {
    /// Sends every request in one write, reads one response per request (each framed by its
    /// `Content-Length`), then checks with one more request that the connection is still open.
    static func pipelined(port: Int, requests: [String]) async throws -> ([String], Bool) {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result {
                    let fd = try connectedSocket(port: port, readTimeout: 10)
                    defer { close(fd) }
                    _ = sendAll(fd, requests.joined())
                    var reader = ResponseReader(fd: fd)
                    var answers: [String] = []
                    while answers.count < requests.count, let answer = reader.next() {
                        answers.append(answer)
                    }
                    _ = sendAll(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                    let stillOpen = reader.next()?.hasPrefix("HTTP/1.1 200 ") ?? false
                    return (answers, stillOpen)
                })
            }
        }
    }
}
