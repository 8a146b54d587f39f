import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Testing

@testable import GatewayEdge

/// ``HTTP2StreamEndMerger`` on an embedded stream: a response's last DATA frame carries
/// END_STREAM instead of an empty frame after it, and a flush never leaves a frame behind.
@Suite("HTTP/2 END_STREAM on the last DATA frame")
struct HTTP2StreamEndMergerTests {
    private static func stream() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(HTTP2StreamEndMerger())
        return channel
    }

    private static func data(_ text: String, end: Bool = false) -> HTTP2Frame.FramePayload {
        .data(.init(data: .byteBuffer(ByteBuffer(string: text)), endStream: end))
    }

    /// The frames written out, as (kind, body, END_STREAM).
    private static func written(_ channel: EmbeddedChannel) throws -> [String] {
        var frames: [String] = []
        while let payload = try channel.readOutbound(as: HTTP2Frame.FramePayload.self) {
            switch payload {
            case .headers(let headers): frames.append("HEADERS\(headers.endStream ? " END" : "")")
            case .data(let data):
                guard case .byteBuffer(let body) = data.data else { continue }
                frames.append("DATA \(String(buffer: body))\(data.endStream ? " END" : "")")
            default: frames.append("other")
            }
        }
        return frames
    }

    @Test func theEmptyEndingDataFrameIsFoldedIntoTheLastOne() throws {
        let channel = try Self.stream()
        let head = channel.write(HTTP2Frame.FramePayload.headers(.init(headers: [":status": "200"])))
        let body = channel.write(Self.data("{\"ok\":true}"))
        let end = channel.writeAndFlush(Self.data("", end: true))
        #expect(try Self.written(channel) == ["HEADERS", "DATA {\"ok\":true} END"])
        for written in [head, body, end] {
            var done = false
            written.whenSuccess { done = true }
            #expect(done)
        }
    }

    @Test func aFlushSendsAHeldFrameAsItWas() throws {
        let channel = try Self.stream()
        channel.write(Self.data("first"), promise: nil)
        channel.flush()
        #expect(try Self.written(channel) == ["DATA first"])
        channel.write(Self.data("second"), promise: nil)
        channel.writeAndFlush(Self.data("", end: true), promise: nil)
        #expect(try Self.written(channel) == ["DATA second END"])
    }

    @Test func trailersAndNonEmptyEndsAreNotFolded() throws {
        let channel = try Self.stream()
        channel.write(Self.data("body"), promise: nil)
        channel.writeAndFlush(HTTP2Frame.FramePayload.headers(.init(headers: ["grpc-status": "0"], endStream: true)), promise: nil)
        #expect(try Self.written(channel) == ["DATA body", "HEADERS END"])
        let other = try Self.stream()
        other.write(Self.data("body"), promise: nil)
        other.writeAndFlush(Self.data("tail", end: true), promise: nil)
        #expect(try Self.written(other) == ["DATA body", "DATA tail END"])
    }
}
