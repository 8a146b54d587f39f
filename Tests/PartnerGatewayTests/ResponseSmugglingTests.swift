import Foundation
import Testing
import TestSupport

/// An upstream's answers that two parsers could frame two ways, against a real gateway: the
/// client gets `502 UPSTREAM_UNAVAILABLE`, never the answer hidden behind them, and the
/// connection that carried them is never used again (the next request goes on a new one).
@Suite("Upstream responses: smuggling attempts (processes)", .realProcesses)
struct ResponseSmugglingTests {
    /// The hidden answer: what a request sent next on the connection would be handed.
    static let hidden = "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\nsmuggled"

    @Test(arguments: [
        "Content-Length: 5\r\nContent-Length: \(hidden.utf8.count + 5)",
        "Content-Length: 5, \(hidden.utf8.count + 5)",
        "Content-Length: \(hidden.utf8.count + 5)\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: gzip",
        "Content-Length : 5",
        "X-Pad: a\r\n Content-Length: \(hidden.utf8.count + 5)",
        "X-Pad: a\nContent-Length: \(hidden.utf8.count + 5)",
    ])
    func ambiguousFramingIsA502AndTheConnectionIsNotReused(fields: String) async throws {
        let (statuses, requests) = try await Self.twoRequests(firstAnsweredWith: "HTTP/1.1 200 OK\r\n\(fields)\r\n\r\nhello" + Self.hidden)
        #expect(statuses == [502, 200], "\(statuses)")
        Self.expectTwoConnections(requests)
    }

    /// A well-framed answer with another one behind it in the same read: the first goes to its
    /// client, the second to nobody (the gateway never pipelines, so nothing asked for it).
    @Test func anAnswerNobodyAskedForIsNeverHandedOn() async throws {
        let (statuses, requests) = try await Self.twoRequests(firstAnsweredWith: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" + Self.hidden)
        #expect(statuses == [200, 200], "\(statuses)")
        Self.expectTwoConnections(requests)
    }

    /// The upstream saw `/r/first`, then `/r/second` on another connection.
    private static func expectTwoConnections(_ requests: [String]) {
        let seen = requests.map { $0.split(separator: " ") }
        #expect(seen.map { $0.last.map(String.init) } == ["/r/first", "/r/second"], "\(requests)")
        #expect(Set(seen.map(\.first)).count == 2, "the second request went on the connection of the first: \(requests)")
    }

    /// `/r/first` then `/r/second` on one client connection (one event loop, one pool), the
    /// first answered by the upstream with `answer`: the statuses the client got, and each
    /// request as the upstream saw it (its connection's number and its path; the readiness
    /// probe took a number too).
    private static func twoRequests(firstAnsweredWith answer: String) async throws -> ([Int], [String]) {
        let hex = answer.utf8.map { String(format: "%02x", $0) }.joined()
        let upstream = try await ScriptedUpstream(serving: """
            numbers = iter(range(1, 1000))
            def serve(connection):
                number = next(numbers)
                for head in request_heads(connection):
                    path = head.split(b" ")[1].decode()
                    print(number, path, flush=True)
                    if path.endswith("/first"):
                        connection.sendall(bytes.fromhex("\(hex)"))
                    else:
                        body = b"ok %d" % number
                        connection.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: %d\\r\\n\\r\\n" % len(body) + body)
            """)
        defer { upstream.stop() }
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: TestConfig.yaml(redisURL: redis.url, extra: """
            routes:
              - {name: r, path_prefix: /r, upstream: "\(upstream.url)", auth: none, timeout: 5s}
            """))
        let (statuses, _) = try await RawClient.requestsThenIdle(
            port: gateway.port, requests: [RawClient.get("/r/first"), RawClient.get("/r/second")], every: .zero, awaitClose: false
        )
        let requests = upstream.log.split(separator: "\n").map(String.init)
        return (statuses, requests)
    }
}
