import NIOCore
import NIOHTTP1
import Testing

import GatewayEdge
@testable import GatewayProxy

/// ``EventStreamEnd``: where an event stream may end while the listener drains, whichever way
/// the upstream cut its bytes into parts.
@Suite("Event streams end at an event's end")
struct EventStreamEndTests {
    @Test func anEventEndsAtABlankLineInAnyOfItsLineEnds() {
        for stream in ["data: a\n\n", "data: a\r\n\r\n", "data: a\r\r", "id: 1\ndata: a\n\ndata: b\n\n", ": keep-alive\n\n"] {
            var end = EventStreamEnd()
            end.passed(ByteBuffer(string: stream))
            #expect(end.atEventEnd, "\(stream.debugDescription)")
        }
        for stream in ["data: a\n", "data: a\r\n", "data: a\n\ndata: b", "id: 1\r\n\r"] {
            var end = EventStreamEnd()
            end.passed(ByteBuffer(string: stream))
            #expect(!end.atEventEnd, "\(stream.debugDescription)")
        }
    }

    /// The blank line split over parts, down to a byte each, still ends the event.
    @Test func partsAsSmallAsAByte() {
        var end = EventStreamEnd()
        #expect(end.atEventEnd, "nothing passed yet: nothing is cut")
        for byte in "data: a\r\n\r\n" {
            end.passed(ByteBuffer(string: String(byte)))
        }
        #expect(end.atEventEnd)
        end.passed(ByteBuffer())
        #expect(end.atEventEnd, "an empty part changes nothing")
        end.passed(ByteBuffer(string: "d"))
        #expect(!end.atEventEnd)
    }

    @Test func onlyEventStreamsAreEnded() {
        #expect(EventStreamEnd.isEventStream(UpstreamResponseHead(status: .ok, fields: [("Content-Type", "text/event-stream; charset=utf-8")])))
        #expect(EventStreamEnd.isEventStream(UpstreamResponseHead(status: .ok, fields: [("content-type", "Text/Event-Stream")])))
        #expect(!EventStreamEnd.isEventStream(UpstreamResponseHead(status: .ok, fields: [("Content-Type", "application/json")])))
        #expect(!EventStreamEnd.isEventStream(UpstreamResponseHead(status: .ok, fields: [])))
    }
}
