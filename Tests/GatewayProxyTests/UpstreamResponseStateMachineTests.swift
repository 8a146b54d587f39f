import NIOCore
import NIOHTTP1
import Testing
import TestSupport

import GatewayEdge
@testable import GatewayProxy

/// The rules of a pooled upstream connection (``UpstreamResponseStateMachine``), in memory:
/// every input in every state, from a table, then parts pushed as read, held while the reader
/// is paused, a failure told only after the parts before it, and when a connection may be
/// reused.
///
/// Illegal pairs are tried on machines made with ``IllegalInputCheck/counting``: the table
/// checks the answer a release build gives and that the machine counted the input (`✗`).
@Suite("Upstream connection state machine")
struct UpstreamResponseStateMachineTests {
    typealias Machine = UpstreamResponseStateMachine

    enum Input: String, StateMachineTableInput {
        case sent, sentBody, bodyEnded, head, body, end, next, pause, resume, fail, abort

        func apply(to machine: inout Machine) -> String {
            switch self {
            case .sent, .sentBody:
                do {
                    try machine.requestSent(keepAlive: true, hasBody: self == .sentBody)
                    return "sent"
                } catch {
                    return "throws " + UpstreamResponseStateMachineTests.describe(error)
                }
            case .bodyEnded:
                machine.requestBodyEnded()
                return "-"
            case .head: return describe(machine.partRead(UpstreamResponseStateMachineTests.head))
            case .body: return describe(machine.partRead(UpstreamResponseStateMachineTests.body))
            case .end: return describe(machine.partRead(UpstreamResponseStateMachineTests.end))
            case .next: return describe(machine.next())
            case .pause:
                machine.readerPaused()
                return "-"
            case .resume: return machine.readerResumed() ? "resumed" : "-"
            case .fail: return machine.failed(.closed) ? "tell" : "-"
            case .abort:
                machine.aborted(.timeout)
                return "-"
            }
        }

        private func describe(_ next: Machine.Next) -> String {
            switch next {
            case .push(.head): "push head"
            case .push(.body): "push body"
            case .push(.end): "push end"
            case .read: "read"
            case .fail(let error): "fail " + UpstreamResponseStateMachineTests.describe(error)
            case .wait: "wait"
            }
        }
    }

    static func describe(_ error: UpstreamError) -> String {
        switch error {
        case .refused: "refused"
        case .closed: "closed"
        case .timeout: "timeout"
        case .malformedResponse: "malformed"
        }
    }

    /// Every state, each by a path of legal inputs: before any request, between exchanges (the
    /// request's body still going or not), reading, paused (with nothing, a part, or the end
    /// waiting), resumed with parts waiting, failed with parts still owed, and failed.
    static let states: [(name: String, path: [Input])] = [
        ("fresh", []),
        ("idle", [.sent, .head, .end]),
        ("idle, body going", [.sentBody, .head, .end]),
        ("reading", [.sent]),
        ("reading, body going", [.sentBody]),
        ("paused", [.sent, .head, .pause]),
        ("paused, holding", [.sent, .head, .pause, .body]),
        ("paused, ended", [.sent, .head, .pause, .end]),
        ("resumed", [.sent, .head, .pause, .body, .resume]),
        ("failing", [.sent, .head, .pause, .body, .fail]),
        ("failing, resumed", [.sent, .head, .pause, .body, .fail, .resume]),
        ("failed", [.fail]),
    ]

    /// The state's kind, as the table names it.
    static func kind(_ machine: Machine) -> String {
        switch machine.state {
        case .idle(let exchange):
            guard exchange.responseEnded else { return "fresh" }
            return exchange.requestEnded ? "idle" : "idle, body going"
        case .reading(let exchange, let paused):
            let waiting = machine.bufferedParts > 0
            let base = paused ? (waiting ? (exchange.responseEnded ? "paused, ended" : "paused, holding") : "paused") : (waiting ? "resumed" : "reading")
            return base + (exchange.requestEnded ? "" : ", body going")
        case .failing(_, let paused):
            return paused ? "failing" : "failing, resumed"
        case .failed:
            return "failed"
        }
    }

    /// Per state, per input: "action → next state", `✗` first when the input is illegal there.
    static let table: [String: [Input: String]] = [
        "fresh": [
            .sent: "sent → reading",
            .sentBody: "sent → reading, body going",
            .bodyEnded: "✗ - → fresh",
            .head: "fail malformed → fresh",
            .body: "fail malformed → fresh",
            .end: "fail malformed → fresh",
            .next: "wait → fresh",
            .pause: "✗ - → fresh",
            .resume: "- → fresh",
            .fail: "- → failed",
            .abort: "- → failed",
        ],
        "idle": [
            .sent: "sent → reading",
            .sentBody: "sent → reading, body going",
            .bodyEnded: "✗ - → idle",
            .head: "fail malformed → idle",
            .body: "fail malformed → idle",
            .end: "fail malformed → idle",
            .next: "wait → idle",
            .pause: "✗ - → idle",
            .resume: "- → idle",
            .fail: "- → failed",
            .abort: "- → failed",
        ],
        "idle, body going": [
            .sent: "sent → reading",
            .sentBody: "sent → reading, body going",
            .bodyEnded: "- → idle",
            .head: "fail malformed → idle, body going",
            .body: "fail malformed → idle, body going",
            .end: "fail malformed → idle, body going",
            .next: "wait → idle, body going",
            .pause: "✗ - → idle, body going",
            .resume: "- → idle, body going",
            .fail: "- → failed",
            .abort: "- → failed",
        ],
        "reading": [
            .sent: "✗ throws closed → reading",
            .sentBody: "✗ throws closed → reading",
            .bodyEnded: "✗ - → reading",
            .head: "push head → reading",
            .body: "push body → reading",
            .end: "push end → idle",
            .next: "read → reading",
            .pause: "- → paused",
            .resume: "- → reading",
            .fail: "tell → failed",
            .abort: "- → failed",
        ],
        "reading, body going": [
            .sent: "✗ throws closed → reading, body going",
            .sentBody: "✗ throws closed → reading, body going",
            .bodyEnded: "- → reading",
            .head: "push head → reading, body going",
            .body: "push body → reading, body going",
            .end: "push end → idle, body going",
            .next: "read → reading, body going",
            .pause: "- → paused, body going",
            .resume: "- → reading, body going",
            .fail: "tell → failed",
            .abort: "- → failed",
        ],
        "paused": [
            .sent: "✗ throws closed → paused",
            .sentBody: "✗ throws closed → paused",
            .bodyEnded: "✗ - → paused",
            .head: "wait → paused, holding",
            .body: "wait → paused, holding",
            .end: "wait → paused, ended",
            .next: "wait → paused",
            .pause: "✗ - → paused",
            .resume: "resumed → reading",
            .fail: "- → failing",
            .abort: "- → failed",
        ],
        "paused, holding": [
            .sent: "✗ throws closed → paused, holding",
            .sentBody: "✗ throws closed → paused, holding",
            .bodyEnded: "✗ - → paused, holding",
            .head: "wait → paused, holding",
            .body: "wait → paused, holding",
            .end: "wait → paused, ended",
            .next: "wait → paused, holding",
            .pause: "✗ - → paused, holding",
            .resume: "resumed → resumed",
            .fail: "- → failing",
            .abort: "- → failed",
        ],
        "paused, ended": [
            .sent: "✗ throws closed → paused, ended",
            .sentBody: "✗ throws closed → paused, ended",
            .bodyEnded: "✗ - → paused, ended",
            .head: "fail malformed → paused, ended",
            .body: "fail malformed → paused, ended",
            .end: "fail malformed → paused, ended",
            .next: "wait → paused, ended",
            .pause: "✗ - → paused, ended",
            .resume: "resumed → resumed",
            .fail: "- → failing",
            .abort: "- → failed",
        ],
        "resumed": [
            .sent: "✗ throws closed → resumed",
            .sentBody: "✗ throws closed → resumed",
            .bodyEnded: "✗ - → resumed",
            .head: "wait → resumed",
            .body: "wait → resumed",
            .end: "wait → resumed",
            .next: "push body → reading",
            .pause: "- → paused, holding",
            .resume: "- → resumed",
            .fail: "tell → failed",
            .abort: "- → failed",
        ],
        "failing": [
            .sent: "✗ throws closed → failing",
            .sentBody: "✗ throws closed → failing",
            .bodyEnded: "✗ - → failing",
            .head: "wait → failing",
            .body: "wait → failing",
            .end: "wait → failing",
            .next: "wait → failing",
            .pause: "✗ - → failing",
            .resume: "resumed → failing, resumed",
            .fail: "- → failing",
            .abort: "- → failed",
        ],
        "failing, resumed": [
            .sent: "✗ throws closed → failing, resumed",
            .sentBody: "✗ throws closed → failing, resumed",
            .bodyEnded: "✗ - → failing, resumed",
            .head: "wait → failing, resumed",
            .body: "wait → failing, resumed",
            .end: "wait → failing, resumed",
            .next: "push body → failing, resumed",
            .pause: "- → failing",
            .resume: "- → failing, resumed",
            .fail: "- → failing, resumed",
            .abort: "- → failed",
        ],
        "failed": [
            .sent: "throws closed → failed",
            .sentBody: "throws closed → failed",
            .bodyEnded: "✗ - → failed",
            .head: "wait → failed",
            .body: "wait → failed",
            .end: "wait → failed",
            .next: "wait → failed",
            .pause: "✗ - → failed",
            .resume: "- → failed",
            .fail: "- → failed",
            .abort: "- → failed",
        ],
    ]

    /// 12 states × 11 inputs.
    @Test func everyInputInEveryStateIsDecided() {
        let pairs = StateMachineTable<Machine, Input>.check(
            Self.table, paths: Self.states, from: { Machine(check: .counting) }, illegalInputs: \.illegalInputs, kind: Self.kind
        )
        #expect(pairs == 132)
    }

    /// The failure after a response's end, while the reader was paused on it (an upstream
    /// closing after `Connection: close`): the reader takes the whole response and is not told.
    @Test func aFailureAfterTheEndIsNotTold() throws {
        var machine = try Self.sent()
        _ = machine.partRead(Self.head)
        machine.readerPaused()
        _ = machine.partRead(Self.end)
        let told = machine.failed(.closed)
        #expect(!told)
        let resumed = machine.readerResumed()
        #expect(resumed)
        let end = machine.next()
        #expect(end == .push(Self.end))
        let after = machine.next()
        #expect(after == .wait)
        #expect(machine.failure == .closed)
    }

    fileprivate static let head = UpstreamResponsePart.head(UpstreamResponseHead(status: .ok, fields: []))
    fileprivate static let body = UpstreamResponsePart.body(ByteBuffer(string: "chunk"))
    fileprivate static let end = UpstreamResponsePart.end(nil)

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
        var parser = HTTP1ResponseParser()
        parser.expectResponse(to: .GET)
        var bytes = ByteBuffer(string: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        let head = try #require(try parser.next(&bytes))
        _ = machine.partRead(head)
        _ = machine.partRead(Self.end)
        #expect(!machine.canCarryAnotherRequest)
    }
}
