import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatewayEdge

/// The request edge on an HTTP/2 stream's child channel (``StreamEdgeHandler``, its rules
/// ``RequestEdge``'s), on an embedded event loop whose clock the test moves: a refused head is
/// `400`, a header list over the limit `431`; a body that stops arriving is answered `408` in the
/// error shape and the stream closed, or, once the response started, the stream just closes; a
/// request that ended with its head is never timed.
@Suite("HTTP/2 stream body timeout on a test clock")
struct StreamEdgeHandlerTests {
    private static func stream() async throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(StreamEdgeHandler(maxHeaderBytes: 4096, bodyReadTimeout: .seconds(10), proxiedRoutes: nil))
        try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        return channel
    }

    /// Delivers `parts` as one read.
    private static func read(_ channel: EmbeddedChannel, _ parts: HTTPServerRequestPart...) throws {
        for part in parts { try channel.writeInbound(part) }
        channel.pipeline.fireChannelReadComplete()
    }

    private static let post = HTTPRequestHead(version: .http2, method: .POST, uri: "/auth/otp/trigger")

    @Test func aStalledBodyIs408InTheErrorShapeAndTheStreamCloses() async throws {
        let channel = try await Self.stream()
        try Self.read(channel, .head(Self.post))
        try Self.read(channel, .body(ByteBuffer(string: "{\"phone\":")))
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        guard case .head(let head) = try channel.readOutbound(as: HTTPServerResponsePart.self),
              case .body(.byteBuffer(let body)) = try channel.readOutbound(as: HTTPServerResponsePart.self) else {
            Issue.record("no 408 answer")
            return
        }
        #expect(head.status == .requestTimeout)
        #expect(String(buffer: body) == #"{"error":{"code":"REQUEST_TIMEOUT","message":"the request body did not arrive in time"}}"#)
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == .end(nil))
        #expect(!channel.isActive)
        // What the client still sends is dropped.
        try channel.writeInbound(HTTPServerRequestPart.body(ByteBuffer(string: "\"1\"}")))
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) != nil)  // the head
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) != nil)  // the first part
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == nil)
    }

    @Test func aRequestThatEndsWithItsHeadIsNeverTimed() async throws {
        let channel = try await Self.stream()
        try Self.read(channel, .head(Self.post), .end(nil))
        channel.embeddedEventLoop.advanceTime(by: .hours(1))
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil)
        #expect(channel.isActive)
    }

    @Test func aBodyThatArrivesInTimeIsNotAnswered() async throws {
        let channel = try await Self.stream()
        try Self.read(channel, .head(Self.post))
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        try Self.read(channel, .body(ByteBuffer(string: "{}")), .end(nil))
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(try channel.readOutbound(as: HTTPServerResponsePart.self) == nil)
        #expect(channel.isActive)
    }

    /// The response written to the stream so far: its status and error code.
    private static func answer(_ channel: EmbeddedChannel) throws -> (status: UInt?, body: String) {
        var status: UInt?
        var body = ""
        while let part = try channel.readOutbound(as: HTTPServerResponsePart.self) {
            switch part {
            case .head(let head): status = head.status.code
            case .body(.byteBuffer(let buffer)): body += String(buffer: buffer)
            default: break
            }
        }
        return (status, body)
    }

    @Test func aRefusedHeadIs400AndIsNotPassedOn() async throws {
        let channel = try await Self.stream()
        var head = HTTPRequestHead(version: .http2, method: .GET, uri: "/partner/v1/x")
        head.headers.add(name: "x-api-key", value: "a")
        head.headers.add(name: "x-api-key", value: "b")
        try Self.read(channel, .head(head), .end(nil))
        let (status, body) = try Self.answer(channel)
        #expect(status == 400)
        #expect(body.contains("INVALID_REQUEST"))
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == nil)
        #expect(!channel.isActive)
    }

    @Test func aHeaderListOverTheLimitIs431() async throws {
        let channel = try await Self.stream()
        var head = HTTPRequestHead(version: .http2, method: .GET, uri: "/healthz")
        head.headers.add(name: "x-big", value: String(repeating: "v", count: 4096))
        try Self.read(channel, .head(head), .end(nil))
        let (status, body) = try Self.answer(channel)
        #expect(status == 431)
        #expect(body.contains("HEADERS_TOO_LARGE"))
        #expect(try channel.readInbound(as: HTTPServerRequestPart.self) == nil)
    }

    @Test func aStallAfterTheResponseStartedClosesTheStreamWithout408() async throws {
        let channel = try await Self.stream()
        try Self.read(channel, .head(Self.post))
        try channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http2, status: .ok)))
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        let (status, body) = try Self.answer(channel)
        #expect(status == 200)
        #expect(body.isEmpty, "a 408 followed the answer's head")
        #expect(!channel.isActive)
    }
}
