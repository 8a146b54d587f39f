import Foundation
import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatewayEdge
@testable import PartnerGateway

/// `server.body_read_timeout` on an HTTP/2 stream (``StreamEdgeHandler``), on an embedded event
/// loop whose clock the test moves: a body that stops arriving is answered `408` in the error
/// shape and the stream closed; a request that ended with its head is never timed.
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
}
