import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
@testable import GatewayEdge
@testable import GatewayProxy
import Testing

/// ``HTTP1ConnectionHandler``'s request-edge rules in memory: an `EmbeddedChannel` whose
/// clock moves only when the test advances it, so each timeout is proven to the millisecond
/// without waiting for it.
@Suite("Request edge: body read timeout, path and credential rules (in memory)")
struct RequestEdgeHandlerTests {
    static let bodyTimeout = TimeAmount.seconds(3)

    /// A connected channel with the handler; `proxied`: a source that takes the public
    /// listener's `/upload` route.
    private static func channel(proxied: Bool = false) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(HTTP1ConnectionHandler(
            headerReadTimeout: .seconds(10), idleTimeout: .seconds(60), bodyReadTimeout: bodyTimeout, maxHeadBytes: 8192,
            proxy: proxied ? UploadRoute() : nil
        ))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 9)).wait()
        return channel
    }

    /// Says a route takes `/upload` (so its bodies are timed between reads) but makes no
    /// exchange: the requests go on through the pipeline, where the test answers them as an
    /// endpoint would, and only the body's timing differs.
    private final class UploadRoute: ProxiedRequestSource {
        func makeExchange(
            for head: ClientRequestHead, answeringThrough client: any ProxyDownstream,
            memo: inout ProxyEngine.ConnectionMemo, on eventLoop: any EventLoop
        ) -> (any ProxiedRequestExchange)? {
            nil
        }

        func takes(_ head: ClientRequestHead, memo: inout ProxyEngine.ConnectionMemo) -> Bool {
            head.path.hasPrefix("/upload/")
        }
    }

    /// A request head's bytes; without a body, the whole request.
    private static func head(_ method: HTTPMethod, _ uri: String, _ fields: [(String, String)] = []) -> ByteBuffer {
        let lines = ([("Host", "x")] + fields).map { "\($0.0): \($0.1)\r\n" }.joined()
        return ByteBuffer(string: "\(method.rawValue) \(uri) HTTP/1.1\r\n\(lines)\r\n")
    }

    private static func post(_ uri: String, length: Int) -> ByteBuffer {
        head(.POST, uri, [("Content-Length", String(length))])
    }

    private static func byte() -> ByteBuffer {
        ByteBuffer(string: "x")
    }

    /// Every response part written so far, as status codes and error codes.
    private static func answers(_ channel: EmbeddedChannel) throws -> [String] {
        var seen: [String] = []
        while let part = try channel.readOutbound(as: HTTPServerResponsePart.self) {
            switch part {
            case .head(let head): seen.append(String(head.status.code))
            case .body(.byteBuffer(let body)):
                let json = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
                seen.append(((json?["error"] as? [String: Any])?["code"] as? String) ?? "body")
            case .body: seen.append("body")
            case .end: seen.append("end")
            }
        }
        return seen
    }

    /// The request heads passed on, as their targets.
    private static func passedTargets(_ channel: EmbeddedChannel) throws -> [String] {
        var targets: [String] = []
        while let part = try channel.readInbound(as: HTTPServerRequestPart.self) {
            if case .head(let head) = part { targets.append(head.uri) }
        }
        return targets
    }

    @Test func aBodyThatNeverComesIsAnswered408AtTheTimeout() throws {
        let channel = try Self.channel()
        try channel.writeInbound(Self.post("/auth/otp/verify", length: 10))
        channel.embeddedEventLoop.advanceTime(by: Self.bodyTimeout - .milliseconds(1))
        #expect(try Self.answers(channel).isEmpty)
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(try Self.answers(channel) == ["408", "REQUEST_TIMEOUT", "end"])
        #expect(!channel.isActive)
    }

    @Test func aTrickledBodyOnTheGatewaysOwnEndpointIsCutAtTheWholeBodyDeadline() throws {
        let channel = try Self.channel(proxied: true)
        try channel.writeInbound(Self.post("/auth/otp/verify", length: 100))
        for _ in 0..<2 {
            channel.embeddedEventLoop.advanceTime(by: .seconds(1))
            channel.read()
            try channel.writeInbound(Self.byte())
        }
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(999))
        #expect(try Self.answers(channel).isEmpty)
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(1))
        #expect(try Self.answers(channel) == ["408", "REQUEST_TIMEOUT", "end"])
        #expect(!channel.isActive)
    }

    @Test func aProxiedBodyMayTrickleButNotStall() throws {
        let channel = try Self.channel(proxied: true)
        try channel.writeInbound(Self.post("/upload/file", length: 100))
        // A byte every 2.9 s for 29 s: every wait is under the timeout.
        for _ in 0..<10 {
            channel.embeddedEventLoop.advanceTime(by: .milliseconds(2900))
            try channel.writeInbound(Self.byte())
            channel.read()
        }
        #expect(try Self.answers(channel).isEmpty)
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: Self.bodyTimeout)
        #expect(try Self.answers(channel) == ["408", "REQUEST_TIMEOUT", "end"])
        #expect(!channel.isActive)
    }

    @Test func aWaitWhileTheGatewayIsNotReadingDoesNotCount() throws {
        let channel = try Self.channel(proxied: true)
        try channel.writeInbound(Self.post("/upload/file", length: 100))
        try channel.writeInbound(Self.byte())
        // Backpressure: nothing asks for more input for a minute.
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(try Self.answers(channel).isEmpty)
        #expect(channel.isActive)
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: Self.bodyTimeout)
        #expect(try Self.answers(channel) == ["408", "REQUEST_TIMEOUT", "end"])
    }

    @Test func aBodyThatEndsInTimeCancelsNothingAndAnswersNothing() throws {
        let channel = try Self.channel()
        try channel.writeInbound(Self.post("/auth/otp/verify", length: 1))
        try channel.writeInbound(Self.byte())
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        #expect(try Self.answers(channel).isEmpty)
        #expect(channel.isActive)
    }

    @Test func aStallAfterTheResponseStartedClosesWithout408() throws {
        let channel = try Self.channel(proxied: true)
        try channel.writeInbound(Self.post("/upload/file", length: 100))
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        channel.embeddedEventLoop.advanceTime(by: Self.bodyTimeout)
        #expect(try Self.answers(channel) == ["200"])
        #expect(!channel.isActive)
    }

    @Test func pathsArePassedOnCanonicalWithTheQueryAsSent() throws {
        let channel = try Self.channel()
        try channel.writeInbound(Self.head(.GET, "/user//x/../%61dmin/./list?next=/../x%2F"))
        #expect(try Self.passedTargets(channel) == ["/user/admin/list?next=/../x%2F"])
        // The next request is passed on once the first is answered.
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        try channel.writeInbound(Self.head(.GET, "http://api.example/user/list?x=1"))
        #expect(try Self.passedTargets(channel) == ["/user/list?x=1"])
    }

    @Test(arguments: [
        [("X-Probe", "1")], [("Authorization", "Bearer a"), ("authorization", "Bearer b")], [("X-API-Key", "a"), ("x-api-key", "b")],
    ])
    func refusedHeadsAre400InTheirTurnAndNeverPassedOn(extra: [(String, String)]) throws {
        let channel = try Self.channel()
        let refusedTarget = extra.count == 1 ? "/user/a%2Fb" : "/user/ok"
        // A good request, then a refused one pipelined behind it: its 400 waits for the first response.
        try channel.writeInbound(Self.head(.GET, "/healthz"))
        try channel.writeInbound(Self.head(.GET, refusedTarget, extra))
        try channel.writeInbound(Self.head(.GET, "/healthz"))
        #expect(try Self.passedTargets(channel) == ["/healthz"])
        #expect(try Self.answers(channel).isEmpty)
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok)))
        try channel.writeOutbound(HTTPServerResponsePart.end(nil))
        #expect(try Self.answers(channel) == ["200", "end", "400", "INVALID_REQUEST", "end"])
    }
}
