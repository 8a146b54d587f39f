import NIOCore
import NIOEmbedded
import NIOHTTP1
import GatewayEdge
@testable import GatewayProxy
import Testing

/// `timeout` bounds the wait for a response's head, `stream_idle_timeout` the silences after
/// it, on a test clock (``UpstreamResponseHandler``); the same rule through a real gateway is
/// in Tests/PartnerGatewayTests/StreamIdleTimeoutTests.swift.
@Suite("Proxy: stream idle timeout")
struct StreamIdleTimeoutTests {
    final class Sink: UpstreamResponseSink {
        var parts = 0
        var failure: UpstreamError?
        func upstreamPart(_ part: UpstreamResponsePart) -> Bool {
            parts += 1
            return true
        }
        func upstreamReadComplete() {}
        func upstreamWritabilityChanged() {}
        func upstreamFailed(_ error: UpstreamError) { failure = error }
    }

    /// A GET sent upstream with a route timeout of 1 s and a stream idle timeout of 5 s.
    private static func sentWithTimeouts() throws -> (EmbeddedChannel, Sink) {
        let channel = EmbeddedChannel()
        let handler = UpstreamResponseHandler(eventLoop: channel.embeddedEventLoop)
        try channel.pipeline.syncOperations.addHandler(handler)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        var head = UpstreamRequestHead(method: .GET, target: "/events", allocator: channel.allocator)
        head.end(framing: .bodiless)
        let sink = Sink()
        try handler.send(head, to: sink, timeout: .seconds(1), streamIdleTimeout: .seconds(5))
        return (channel, sink)
    }

    @Test func theRouteTimeoutBoundsTheHeadAndTheStreamIdleTimeoutTheSilencesAfterIt() throws {
        let (channel, sink) = try Self.sentWithTimeouts()
        let loop = channel.embeddedEventLoop

        loop.advanceTime(by: .milliseconds(900))
        try channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"))
        // Far longer than the route timeout: the stream is still quiet within its own.
        loop.advanceTime(by: .milliseconds(4999))
        #expect(sink.failure == nil, "a started stream was timed by the route timeout")
        try channel.writeInbound(ByteBuffer(string: "9\r\ndata: 1\n\n\r\n"))
        loop.advanceTime(by: .milliseconds(4999))
        #expect(sink.failure == nil, "a body part did not restart the stream idle timeout")
        loop.advanceTime(by: .milliseconds(1))
        #expect(sink.failure == .timeout)
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    @Test func withoutAHeadTheRouteTimeoutStillApplies() throws {
        let (channel, sink) = try Self.sentWithTimeouts()
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(sink.failure == .timeout)
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }
}
