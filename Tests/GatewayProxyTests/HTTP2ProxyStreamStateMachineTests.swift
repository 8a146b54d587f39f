import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import TestSupport
import Testing

@testable import GatewayEdge
@testable import GatewayProxy

/// ``HTTP2ProxyStream/StateMachine`` without a socket: every input in every state, from a
/// table, then the paths that matter most (the window, END_STREAM on the last frame, the reset
/// after an answer that ends early, the watermarks, the stalled body).
///
/// Illegal pairs are tried on machines made with ``IllegalInputCheck/counting``: a debug build
/// would stop at them, so the table checks the answer a release build gives and that the
/// machine counted the input as illegal (cells marked `✗`), and no other.
@Suite("HTTP/2: an owned stream's state machine (in memory)")
struct HTTP2ProxyStreamStateMachineTests {
    typealias Machine = HTTP2ProxyStream.StateMachine

    static let now = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let edge = RequestEdge(maxHeaderListSize: nil, bodyReadTimeout: .seconds(5))
    static let chunk = ByteBuffer(string: "xy")
    static let block: HPACKHeaders = [":status": "200"]

    enum Input: String, CaseIterable {
        case start, data, dataEnd, trailers, ready, pause, resume, want
        case head, head1xx, body, end, abort, flush, sent, writable, closed, deadline

        func apply(to machine: inout Machine) -> Machine.Action {
            switch self {
            case .start: machine.start()
            case .data: machine.dataReceived(chunk, length: 2, endStream: false)
            case .dataEnd: machine.dataReceived(chunk, length: 2, endStream: true)
            case .trailers: machine.trailersReceived()
            case .ready: machine.readyForPart()
            case .pause: machine.pause()
            case .resume: machine.resume()
            case .want: machine.bodyWanted(now: now)
            case .head: machine.responseHead(status: 200, block: block)
            case .head1xx: machine.responseHead(status: 103, block: block)
            case .body: machine.responseBody(chunk)
            case .end: machine.responseEnd(trailers: nil, closingAfter: false)
            case .abort: machine.abort()
            case .flush: machine.flush()
            case .sent: machine.bytesSent(2, connectionWritable: true)
            case .writable: machine.connectionWritable()
            case .closed: machine.streamClosed()
            case .deadline: machine.bodyDeadlinePassed()
            }
        }
    }

    /// Every state the machine has, each by a path of legal inputs: before the start (the head
    /// ended the stream, the body coming, the body's end received), each request side with
    /// each response side (the body timed where it is open), and closed.
    static let states: [(name: String, requestOpen: Bool, path: [Input])] = {
        var states: [(String, Bool, [Input])] = [
            ("start-", false, []),
            ("start~", true, [.data]),
            ("start.", true, [.dataEnd]),
        ]
        let requests: [(String, Bool, [Input])] = [
            ("open", true, [.start, .want]),
            ("paused", true, [.start, .want, .pause, .data]),
            ("handing", true, [.data, .start, .want]),
            ("ended", false, [.start]),
        ]
        let responses: [(String, [Input])] = [("wait", []), ("live", [.head, .body]), ("over", [.abort])]
        for (request, open, path) in requests {
            for (response, more) in responses {
                states.append(("\(request)/\(response)", open, path + more))
            }
        }
        states.append(("closed", true, [.start, .closed]))
        return states
    }()

    static func machine(_ requestOpen: Bool, _ path: [Input]) -> Machine {
        var machine = Machine(requestOpen: requestOpen, edge: edge, check: .counting)
        for input in path { _ = input.apply(to: &machine) }
        return machine
    }

    /// The state's kind, as the table names it.
    static func kind(_ state: Machine.State) -> String {
        switch state {
        case .awaitingStart(nil): return "start-"
        case .awaitingStart(let held?): return held.end ? "start." : "start~"
        case .streaming(let request, let response):
            let side: String
            switch request {
            case .open: side = "open"
            case .paused: side = "paused"
            case .handingOver: side = "handing"
            case .ended: side = "ended"
            }
            switch response {
            case .awaitingHead: return side + "/wait"
            case .streaming: return side + "/live"
            case .ended: return side + "/over"
            }
        case .closed: return "closed"
        case .modifying: return "modifying"
        }
    }

    static func describe(_ timer: DeadlineTimer.Change) -> String {
        switch timer {
        case .keep: ""
        case .clear: " clear"
        case .expire: " expire"
        }
    }

    static func describe(_ frame: Machine.Frame?) -> String {
        switch frame {
        case nil: ""
        case .headers?: "HEADERS"
        case .data?: "DATA"
        }
    }

    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none: "-"
        case .startExchange: "start"
        case .deliver(.body, let timer): "deliver body" + describe(timer)
        case .deliver(.end, let timer): "deliver end" + describe(timer)
        case .deliver(.head, _): "deliver head"
        case .handOver(let timer): "handOver" + describe(timer)
        case .sendWindowUpdate: "WINDOW_UPDATE"
        case .resumeBody: "resume"
        case .changeTimer(let timer): "timer" + describe(timer)
        case .write(let frame): "write " + describe(frame)
        case .flush(let frame): frame == nil ? "flush" : "flush " + describe(frame)
        case .endStream(let before, let last, let reset):
            "end " + (before == nil ? "" : describe(before) + "+") + describe(last) + (reset.map { " RST \($0.networkCode)" } ?? "")
        case .reset(let code): "RST \(code.networkCode)"
        case .notifyWritable: "writable"
        case .clientClosed: "clientClosed"
        case .stalled(let answer): answer == nil ? "stalled RST" : "stalled 408"
        }
    }

    /// Per state, per input: "action → next state", `✗` first when the input is illegal there.
    static let table: [String: [Input: String]] = [
        "start-": [
            .start: "start → ended/wait",
            .data: "✗ - → start-",
            .dataEnd: "✗ - → start-",
            .trailers: "✗ - → start-",
            .ready: "- → start-",
            .pause: "✗ - → start-",
            .resume: "✗ - → start-",
            .want: "✗ - → start-",
            .head: "✗ - → start-",
            .head1xx: "✗ - → start-",
            .body: "✗ - → start-",
            .end: "✗ - → start-",
            .abort: "✗ - → start-",
            .flush: "✗ flush → start-",
            .sent: "✗ - → start-",
            .writable: "- → start-",
            .closed: "clientClosed → closed",
            .deadline: "✗ - → start-",
        ],
        "start~": [
            .start: "start → handing/wait",
            .data: "handOver → start~",
            .dataEnd: "handOver → start.",
            .trailers: "handOver → start.",
            .ready: "WINDOW_UPDATE → start~",
            .pause: "✗ - → start~",
            .resume: "✗ - → start~",
            .want: "✗ - → start~",
            .head: "✗ - → start~",
            .head1xx: "✗ - → start~",
            .body: "✗ - → start~",
            .end: "✗ - → start~",
            .abort: "✗ - → start~",
            .flush: "✗ flush → start~",
            .sent: "✗ - → start~",
            .writable: "- → start~",
            .closed: "clientClosed → closed",
            .deadline: "✗ - → start~",
        ],
        "start.": [
            .start: "start → handing/wait",
            .data: "✗ - → start.",
            .dataEnd: "✗ - → start.",
            .trailers: "✗ - → start.",
            .ready: "- → start.",
            .pause: "✗ - → start.",
            .resume: "✗ - → start.",
            .want: "✗ - → start.",
            .head: "✗ - → start.",
            .head1xx: "✗ - → start.",
            .body: "✗ - → start.",
            .end: "✗ - → start.",
            .abort: "✗ - → start.",
            .flush: "✗ flush → start.",
            .sent: "✗ - → start.",
            .writable: "- → start.",
            .closed: "clientClosed → closed",
            .deadline: "✗ - → start.",
        ],
        "open/wait": [
            .start: "✗ - → open/wait",
            .data: "deliver body clear → handing/wait",
            .dataEnd: "deliver body clear → handing/wait",
            .trailers: "deliver end clear → ended/wait",
            .ready: "- → open/wait",
            .pause: "- → paused/wait",
            .resume: "- → open/wait",
            .want: "timer → open/wait",
            .head: "- → open/live",
            .head1xx: "- → open/wait",
            .body: "✗ RST 2 → open/over",
            .end: "✗ RST 2 → open/over",
            .abort: "RST 2 → open/over",
            .flush: "flush → open/wait",
            .sent: "✗ - → open/wait",
            .writable: "- → open/wait",
            .closed: "clientClosed → closed",
            .deadline: "stalled 408 → closed",
        ],
        "open/live": [
            .start: "✗ - → open/live",
            .data: "deliver body clear → handing/live",
            .dataEnd: "deliver body clear → handing/live",
            .trailers: "deliver end clear → ended/live",
            .ready: "- → open/live",
            .pause: "- → paused/live",
            .resume: "- → open/live",
            .want: "timer → open/live",
            .head: "✗ RST 2 → open/over",
            .head1xx: "✗ RST 2 → open/over",
            .body: "write DATA → open/live",
            .end: "end DATA RST 0 → open/over",
            .abort: "RST 2 → open/over",
            .flush: "flush DATA → open/live",
            .sent: "writable → open/live",
            .writable: "writable → open/live",
            .closed: "clientClosed → closed",
            .deadline: "stalled RST → closed",
        ],
        "open/over": [
            .start: "✗ - → open/over",
            .data: "deliver body clear → handing/over",
            .dataEnd: "deliver body clear → handing/over",
            .trailers: "deliver end clear → ended/over",
            .ready: "- → open/over",
            .pause: "- → paused/over",
            .resume: "- → open/over",
            .want: "timer → open/over",
            .head: "✗ - → open/over",
            .head1xx: "✗ - → open/over",
            .body: "✗ - → open/over",
            .end: "✗ - → open/over",
            .abort: "✗ - → open/over",
            .flush: "flush → open/over",
            .sent: "- → open/over",
            .writable: "- → open/over",
            .closed: "clientClosed → closed",
            .deadline: "clientClosed → closed",
        ],
        "paused/wait": [
            .start: "✗ - → paused/wait",
            .data: "handOver clear → paused/wait",
            .dataEnd: "handOver clear → paused/wait",
            .trailers: "handOver clear → paused/wait",
            .ready: "WINDOW_UPDATE → paused/wait",
            .pause: "- → paused/wait",
            .resume: "resume → handing/wait",
            .want: "- → paused/wait",
            .head: "- → paused/live",
            .head1xx: "- → paused/wait",
            .body: "✗ RST 2 → paused/over",
            .end: "✗ RST 2 → paused/over",
            .abort: "RST 2 → paused/over",
            .flush: "flush → paused/wait",
            .sent: "✗ - → paused/wait",
            .writable: "- → paused/wait",
            .closed: "clientClosed → closed",
            .deadline: "- → paused/wait",
        ],
        "paused/live": [
            .start: "✗ - → paused/live",
            .data: "handOver clear → paused/live",
            .dataEnd: "handOver clear → paused/live",
            .trailers: "handOver clear → paused/live",
            .ready: "WINDOW_UPDATE → paused/live",
            .pause: "- → paused/live",
            .resume: "resume → handing/live",
            .want: "- → paused/live",
            .head: "✗ RST 2 → paused/over",
            .head1xx: "✗ RST 2 → paused/over",
            .body: "write DATA → paused/live",
            .end: "end DATA RST 0 → paused/over",
            .abort: "RST 2 → paused/over",
            .flush: "flush DATA → paused/live",
            .sent: "writable → paused/live",
            .writable: "writable → paused/live",
            .closed: "clientClosed → closed",
            .deadline: "- → paused/live",
        ],
        "paused/over": [
            .start: "✗ - → paused/over",
            .data: "handOver clear → paused/over",
            .dataEnd: "handOver clear → paused/over",
            .trailers: "handOver clear → paused/over",
            .ready: "WINDOW_UPDATE → paused/over",
            .pause: "- → paused/over",
            .resume: "resume → handing/over",
            .want: "- → paused/over",
            .head: "✗ - → paused/over",
            .head1xx: "✗ - → paused/over",
            .body: "✗ - → paused/over",
            .end: "✗ - → paused/over",
            .abort: "✗ - → paused/over",
            .flush: "flush → paused/over",
            .sent: "- → paused/over",
            .writable: "- → paused/over",
            .closed: "clientClosed → closed",
            .deadline: "- → paused/over",
        ],
        "handing/wait": [
            .start: "✗ - → handing/wait",
            .data: "handOver clear → handing/wait",
            .dataEnd: "handOver clear → handing/wait",
            .trailers: "handOver clear → handing/wait",
            .ready: "WINDOW_UPDATE → handing/wait",
            .pause: "- → paused/wait",
            .resume: "- → handing/wait",
            .want: "timer → handing/wait",
            .head: "- → handing/live",
            .head1xx: "- → handing/wait",
            .body: "✗ RST 2 → handing/over",
            .end: "✗ RST 2 → handing/over",
            .abort: "RST 2 → handing/over",
            .flush: "flush → handing/wait",
            .sent: "✗ - → handing/wait",
            .writable: "- → handing/wait",
            .closed: "clientClosed → closed",
            .deadline: "stalled 408 → closed",
        ],
        "handing/live": [
            .start: "✗ - → handing/live",
            .data: "handOver clear → handing/live",
            .dataEnd: "handOver clear → handing/live",
            .trailers: "handOver clear → handing/live",
            .ready: "WINDOW_UPDATE → handing/live",
            .pause: "- → paused/live",
            .resume: "- → handing/live",
            .want: "timer → handing/live",
            .head: "✗ RST 2 → handing/over",
            .head1xx: "✗ RST 2 → handing/over",
            .body: "write DATA → handing/live",
            .end: "end DATA RST 0 → handing/over",
            .abort: "RST 2 → handing/over",
            .flush: "flush DATA → handing/live",
            .sent: "writable → handing/live",
            .writable: "writable → handing/live",
            .closed: "clientClosed → closed",
            .deadline: "stalled RST → closed",
        ],
        "handing/over": [
            .start: "✗ - → handing/over",
            .data: "handOver clear → handing/over",
            .dataEnd: "handOver clear → handing/over",
            .trailers: "handOver clear → handing/over",
            .ready: "WINDOW_UPDATE → handing/over",
            .pause: "- → paused/over",
            .resume: "- → handing/over",
            .want: "timer → handing/over",
            .head: "✗ - → handing/over",
            .head1xx: "✗ - → handing/over",
            .body: "✗ - → handing/over",
            .end: "✗ - → handing/over",
            .abort: "✗ - → handing/over",
            .flush: "flush → handing/over",
            .sent: "- → handing/over",
            .writable: "- → handing/over",
            .closed: "clientClosed → closed",
            .deadline: "clientClosed → closed",
        ],
        "ended/wait": [
            .start: "✗ - → ended/wait",
            .data: "✗ - → ended/wait",
            .dataEnd: "✗ - → ended/wait",
            .trailers: "✗ - → ended/wait",
            .ready: "- → ended/wait",
            .pause: "- → ended/wait",
            .resume: "- → ended/wait",
            .want: "- → ended/wait",
            .head: "- → ended/live",
            .head1xx: "- → ended/wait",
            .body: "✗ RST 2 → ended/over",
            .end: "✗ RST 2 → ended/over",
            .abort: "RST 2 → ended/over",
            .flush: "flush → ended/wait",
            .sent: "✗ - → ended/wait",
            .writable: "- → ended/wait",
            .closed: "clientClosed → closed",
            .deadline: "- → ended/wait",
        ],
        "ended/live": [
            .start: "✗ - → ended/live",
            .data: "✗ - → ended/live",
            .dataEnd: "✗ - → ended/live",
            .trailers: "✗ - → ended/live",
            .ready: "- → ended/live",
            .pause: "- → ended/live",
            .resume: "- → ended/live",
            .want: "- → ended/live",
            .head: "✗ RST 2 → ended/over",
            .head1xx: "✗ RST 2 → ended/over",
            .body: "write DATA → ended/live",
            .end: "end DATA → ended/over",
            .abort: "RST 2 → ended/over",
            .flush: "flush DATA → ended/live",
            .sent: "writable → ended/live",
            .writable: "writable → ended/live",
            .closed: "clientClosed → closed",
            .deadline: "- → ended/live",
        ],
        "ended/over": [
            .start: "✗ - → ended/over",
            .data: "✗ - → ended/over",
            .dataEnd: "✗ - → ended/over",
            .trailers: "✗ - → ended/over",
            .ready: "- → ended/over",
            .pause: "- → ended/over",
            .resume: "- → ended/over",
            .want: "- → ended/over",
            .head: "✗ - → ended/over",
            .head1xx: "✗ - → ended/over",
            .body: "✗ - → ended/over",
            .end: "✗ - → ended/over",
            .abort: "✗ - → ended/over",
            .flush: "flush → ended/over",
            .sent: "- → ended/over",
            .writable: "- → ended/over",
            .closed: "clientClosed → closed",
            .deadline: "- → ended/over",
        ],
        "closed": [
            .start: "✗ - → closed",
            .data: "- → closed",
            .dataEnd: "- → closed",
            .trailers: "- → closed",
            .ready: "- → closed",
            .pause: "- → closed",
            .resume: "- → closed",
            .want: "- → closed",
            .head: "- → closed",
            .head1xx: "- → closed",
            .body: "- → closed",
            .end: "- → closed",
            .abort: "- → closed",
            .flush: "flush → closed",
            .sent: "- → closed",
            .writable: "- → closed",
            .closed: "- → closed",
            .deadline: "- → closed",
        ],
    ]

    /// 16 states × 18 inputs.
    @Test func everyInputInEveryStateIsDecided() {
        let table = StateMachineTable<Machine, Input>(
            cells: Self.table, illegalInputs: \.illegalInputs, kind: { Self.kind($0.state) },
            apply: { input, machine in Self.describe(input.apply(to: &machine)) }
        )
        let pairs = table.check(Self.states.map { ($0.name, Self.machine($0.requestOpen, $0.path)) })
        #expect(pairs == 288)
    }

    // MARK: Paths

    static func bytes(_ count: Int) -> ByteBuffer {
        ByteBuffer(repeating: UInt8(ascii: "b"), count: count)
    }

    /// The body that came with the head waits for the start; the window is opened once to the
    /// target, counting what waits as unread, and never again while the exchange takes it.
    @Test func theBodyWaitsForTheStartAndTheWindowIsCreditedOnce() {
        var machine = Machine(requestOpen: true, edge: Self.edge)
        #expect(machine.dataReceived(Self.bytes(15_000), length: 15_000, endStream: false) == .handOver(timer: .keep))
        let credit = HTTP2Limits.targetStreamWindow - HTTP2Limits.initialStreamWindow
        #expect(machine.readyForPart() == .sendWindowUpdate(credit))
        #expect(machine.readyForPart() == .none, "nothing goes before the start")
        #expect(machine.dataReceived(Self.bytes(15_000), length: 15_000, endStream: false) == .handOver(timer: .keep))
        #expect(machine.readyForPart() == .none)
        #expect(machine.start() == .startExchange)
        #expect(machine.readyForPart() == .deliver(.body(Self.bytes(15_000)), timer: .keep))
        #expect(machine.readyForPart() == .deliver(.body(Self.bytes(15_000)), timer: .keep))
        #expect(machine.readyForPart() == .none)
        guard case .streaming(.open, _) = machine.state else {
            Issue.record("not open: \(machine.state)")
            return
        }
    }

    /// A frame's body and its END_STREAM: the end waits if the exchange paused on the body.
    @Test func theEndWaitsWhenTheExchangePausesOnTheLastPart() {
        var machine = Self.machine(true, [.start])
        #expect(machine.dataReceived(Self.chunk, length: 2, endStream: true) == .deliver(.body(Self.chunk), timer: .keep))
        #expect(machine.pause() == .none)
        #expect(machine.readyForPart() == .none, "no window update once the client ended")
        #expect(machine.resume() == .resumeBody)
        #expect(machine.readyForPart() == .deliver(.end(nil), timer: .keep))
        #expect(machine.readyForPart() == .none)
        #expect(machine.bodyWanted(now: Self.now) == .none, "an ended body is not timed")
    }

    /// The body is timed from the first ask for more, between reads, and cleared by a read.
    @Test func theBodyIsTimedBetweenReads() {
        var machine = Self.machine(true, [.start])
        #expect(machine.bodyWanted(now: Self.now) == .changeTimer(.expire(at: Self.now + .seconds(5))))
        #expect(machine.bodyWanted(now: Self.now + .seconds(1)) == .changeTimer(.keep), "still waiting since the first ask")
        #expect(machine.dataReceived(Self.chunk, length: 2, endStream: false) == .deliver(.body(Self.chunk), timer: .clear))
        #expect(machine.bodyWanted(now: Self.now + .seconds(2)) == .changeTimer(.expire(at: Self.now + .seconds(7))))
        #expect(machine.pause() == .none)
        #expect(machine.bodyWanted(now: Self.now + .seconds(3)) == .none, "a paused body is not asked for")
    }

    /// END_STREAM goes on the last frame written: the head, the last body part, or trailers.
    @Test func endStreamGoesOnTheLastFrame() {
        var headOnly = Self.machine(false, [.start])
        #expect(headOnly.responseHead(status: 204, block: Self.block) == .none)
        #expect(headOnly.responseEnd(trailers: nil, closingAfter: false) == .endStream(before: nil, last: .headers(Self.block), reset: nil))

        var body = Self.machine(false, [.start, .head])
        #expect(body.responseBody(Self.chunk) == .write(.headers(Self.block)))
        #expect(body.pendingBytes == 2)
        #expect(body.responseEnd(trailers: nil, closingAfter: false) == .endStream(before: nil, last: .data(Self.chunk), reset: nil))

        var flushed = Self.machine(false, [.start, .head, .body])
        #expect(flushed.flush() == .flush(.data(Self.chunk)))
        #expect(flushed.flush() == .flush(nil))
        #expect(flushed.responseEnd(trailers: nil, closingAfter: false) == .endStream(before: nil, last: .data(ByteBuffer()), reset: nil))

        var trailed = Self.machine(false, [.start, .head, .body])
        let trailers: HPACKHeaders = ["grpc-status": "0"]
        #expect(trailed.responseEnd(trailers: trailers, closingAfter: false) == .endStream(before: .data(Self.chunk), last: .headers(trailers), reset: nil))
    }

    /// An answer that ends while the request is still coming resets the stream: NO_ERROR, or
    /// PROTOCOL_ERROR when the request cannot be read further.
    @Test func anAnswerEndingBeforeTheRequestResetsTheStream() {
        var early = Self.machine(true, [.start, .head])
        #expect(early.responseEnd(trailers: nil, closingAfter: false) == .endStream(before: nil, last: .headers(Self.block), reset: .noError))
        var refused = Self.machine(true, [.start, .pause, .head])
        #expect(refused.responseEnd(trailers: nil, closingAfter: true) == .endStream(before: nil, last: .headers(Self.block), reset: .protocolError))
        var complete = Self.machine(true, [.start, .dataEnd, .ready, .head])
        #expect(complete.responseEnd(trailers: nil, closingAfter: true) == .endStream(before: nil, last: .headers(Self.block), reset: nil))
    }

    /// Answer bytes written and not yet gone: above the high watermark the exchange waits,
    /// at or below the low one it is told to go on (the connection writable too).
    @Test func theWatermarksHoldTheUpstreamForASlowClient() {
        var machine = Self.machine(false, [.start, .head])
        #expect(machine.responseBody(Self.bytes(9_000)) == .write(.headers(Self.block)))
        #expect(machine.flush() == .flush(.data(Self.bytes(9_000))))
        #expect(machine.pendingBytes == 9_000)
        #expect(machine.connectionWritable() == .none, "above the high watermark")
        #expect(machine.bytesSent(4_000, connectionWritable: true) == .none, "above the low watermark")
        #expect(machine.bytesSent(1_000, connectionWritable: false) == .none, "the connection itself is full")
        #expect(machine.bytesSent(1, connectionWritable: true) == .notifyWritable)
        #expect(machine.connectionWritable() == .notifyWritable)
    }

    /// A stalled body: `408` while nothing of the answer went, else a reset; either way the
    /// stream is over for the exchange.
    @Test func aStalledBodyIs408OnlyBeforeTheAnswer() {
        var before = Self.machine(true, [.start, .want])
        #expect(before.bodyDeadlinePassed() == .stalled(answer: .requestTimeout))
        #expect(before.isClosed)
        #expect(before.streamClosed() == .none, "the exchange was told once")

        var after = Self.machine(true, [.start, .want, .head])
        #expect(after.bodyDeadlinePassed() == .stalled(answer: nil))

        var reading = Self.machine(true, [.start, .want, .data])
        #expect(reading.bodyDeadlinePassed() == .none, "a body that arrived is not late")
    }
}
