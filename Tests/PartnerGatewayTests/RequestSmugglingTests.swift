import Foundation
import Testing
import TestSupport

/// Request smuggling attempts against a real gateway, with an upstream that records what its
/// parser saw (``RecordingUpstream``): each is refused at the edge, and nothing of it, least of
/// all the request hidden in its body, reaches the upstream.
@Suite("Request edge: smuggling attempts (processes)", .realProcesses)
struct RequestSmugglingTests {
    /// The hidden request: a bearer route, a forged identity, no token.
    static let hidden = "GET /user/profile?smuggled=1 HTTP/1.1\r\nHost: up\r\nX-Gateway-User-Id: usr_victim\r\nContent-Length: 0\r\n\r\n"

    @Test(arguments: [
        "Connection: content-length\r\nContent-Length: \(hidden.utf8.count)",
        "Connection: keep-alive, Content-Length\r\nContent-Length: \(hidden.utf8.count)",
        "Connection: host\r\nContent-Length: \(hidden.utf8.count)",
        "Connection: transfer-encoding\r\nContent-Length: \(hidden.utf8.count)",
        // Framing two parsers could read two ways, refused by the request parser itself.
        "Content-Length: \(hidden.utf8.count)\r\nContent-Length: \(hidden.utf8.count)",
        "Content-Length: \(hidden.utf8.count), \(hidden.utf8.count)",
        "Content-Length: \(hidden.utf8.count)\r\nTransfer-Encoding: chunked",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
        "Content-Length : \(hidden.utf8.count)",
        "X-Pad: a\r\n Content-Length: \(hidden.utf8.count)",
        "X-Pad: a\nContent-Length: \(hidden.utf8.count)",
        "X-Pad: a\rContent-Length: \(hidden.utf8.count)",
    ])
    func ambiguousFramingIsRefusedAndNothingReachesTheUpstream(fields: String) async throws {
        let stack = try await RecordedGateway(routes: [("echo", "/echo", "none"), ("user", "/user", "bearer")])
        defer { stack.stop() }
        let (upstream, gateway) = (stack.upstream, stack.gateway)

        let attack = "POST /echo/a HTTP/1.1\r\nHost: gw\r\n\(fields)\r\n\r\n\(Self.hidden)"
        // A victim's request right behind it on the same connection, as a pooled upstream
        // connection would carry it next.
        let victim = "GET /echo/victim HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n"
        let reply = try await RawClient.exchange(port: gateway.port, send: attack + victim)
        #expect(reply.status == 400, "\(reply.text)")
        #expect(reply.body.contains("INVALID_REQUEST"), "\(reply.text)")
        let seen = upstream.requests.map { "\($0.method) \($0.target)" }
        #expect(!seen.contains { $0.contains("smuggled") }, "the hidden request reached the upstream: \(seen)")
        #expect(!seen.contains("POST /echo/a"), "the refused request reached the upstream: \(seen)")
    }

    /// A transfer coding the gateway cannot pass on as it came (anything but `chunked`).
    @Test func aTransferCodingOtherThanChunkedIsRefused() async throws {
        let stack = try await RecordedGateway(routes: [("echo", "/echo", "none")])
        defer { stack.stop() }
        let (upstream, gateway) = (stack.upstream, stack.gateway)
        let request = "POST /echo/a HTTP/1.1\r\nHost: gw\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
        let reply = try await RawClient.exchange(port: gateway.port, send: request)
        #expect(reply.status == 400, "\(reply.text)")
        #expect(upstream.requests.isEmpty, "\(upstream.requests.map(\.target))")
    }
}
