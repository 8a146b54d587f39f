import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayProxy

/// The rules of a pooled upstream connection (``UpstreamResponseStateMachine``), in memory:
/// parts pushed as read, held while the reader is paused, a failure told only after the
/// parts before it, and when a connection may be reused.
@Suite("Upstream connection state machine")
struct UpstreamResponseStateMachineTests {
    private static let head = HTTPClientResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok))
    private static let body = HTTPClientResponsePart.body(ByteBuffer(string: "chunk"))
    private static let end = HTTPClientResponsePart.end(nil)

    private static func sent(hasBody: Bool = false) throws -> UpstreamResponseStateMachine {
        var machine = UpstreamResponseStateMachine()
        try machine.requestSent(keepAlive: true, hasBody: hasBody)
        return machine
    }

    @Test func partsArePushedAsReadAndTheConnectionIsReusableAfterTheEnd() throws {
        var machine = try Self.sent()
        let step1 = machine.next()
        #expect(step1 == .read)
        let step2 = machine.partRead(Self.head)
        #expect(step2 == .push(Self.head))
        let step3 = machine.partRead(Self.body)
        #expect(step3 == .push(Self.body))
        #expect(!machine.canCarryAnotherRequest)
        let step4 = machine.partRead(Self.end)
        #expect(step4 == .push(Self.end))
        #expect(machine.reader == .none)
        #expect(machine.canCarryAnotherRequest)
        #expect(machine.isIdleAfterAResponse)
    }

    @Test func partsWaitWhileTheReaderIsPausedAndComeInOrderWhenItResumes() throws {
        var machine = try Self.sent()
        _ = machine.partRead(Self.head)
        machine.readerPaused()
        #expect(!machine.readerIsWaiting, "the route timeout would run while the client is slow")
        let step5 = machine.partRead(Self.body)
        #expect(step5 == .wait)
        let step6 = machine.partRead(Self.end)
        #expect(step6 == .wait)
        let step7 = machine.next()
        #expect(step7 == .wait)
        let step8 = machine.readerResumed()
        #expect(step8)
        let step9 = machine.next()
        #expect(step9 == .push(Self.body))
        let step10 = machine.next()
        #expect(step10 == .push(Self.end))
        let step11 = machine.next()
        #expect(step11 == .wait, "the reader is detached after the end")
    }

    @Test func aFailureWhilePausedIsToldAfterThePartsBeforeIt() throws {
        var machine = try Self.sent()
        _ = machine.partRead(Self.head)
        machine.readerPaused()
        _ = machine.partRead(Self.body)
        let step12 = machine.failed(.closed)
        #expect(!step12, "a paused reader was told before taking its parts")
        let step13 = machine.readerResumed()
        #expect(step13)
        let step14 = machine.next()
        #expect(step14 == .push(Self.body))
        let step15 = machine.next()
        #expect(step15 == .fail(.closed))
        #expect(machine.reader == .none)
        var refusal: UpstreamError?
        do {
            try machine.requestSent(keepAlive: true, hasBody: false)
        } catch {
            refusal = error
        }
        #expect(refusal == .closed, "a failed connection took another request")
    }

    @Test func bytesWhileIdleMeanTheUpstreamIsOutOfStep() {
        var machine = UpstreamResponseStateMachine()
        let step16 = machine.partRead(Self.head)
        #expect(step16 == .fail(.malformedResponse))
    }

    @Test func aConnectionIsNotReusedAfterAResponseThatCameBeforeTheRequestBodyEnded() throws {
        var machine = try Self.sent(hasBody: true)
        _ = machine.partRead(Self.head)
        _ = machine.partRead(Self.end)
        #expect(!machine.canCarryAnotherRequest)
        machine.requestBodyEnded()
        #expect(machine.canCarryAnotherRequest)
    }

    @Test func anUpstreamThatClosesAfterItsResponseIsNotReused() throws {
        var machine = UpstreamResponseStateMachine()
        try machine.requestSent(keepAlive: true, hasBody: false)
        var head = HTTPResponseHead(version: .http1_1, status: .ok)
        head.headers.add(name: "Connection", value: "close")
        _ = machine.partRead(.head(head))
        _ = machine.partRead(Self.end)
        #expect(!machine.canCarryAnotherRequest)
    }
}
