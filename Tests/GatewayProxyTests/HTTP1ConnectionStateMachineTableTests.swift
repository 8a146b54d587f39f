import NIOCore
import NIOHTTP1
import Testing
import TestSupport

@testable import GatewayEdge
@testable import GatewayProxy

/// Every state of ``HTTP1ConnectionHandler/StateMachine`` meets every input: each state is
/// reached by a short path of inputs, each input applied to a fresh copy, and the action, the
/// next state and whether the input was illegal compared with ``expected``, one line a pair.
///
/// Illegal inputs do not stop the test at the machine's assertion: the machine is made with
/// ``IllegalInputCheck/counting``, so the table shows the answer a release build gives (marked
/// `ILLEGAL`). The paths themselves must
/// be legal. A change to the machine shows as the lines that differ.
@Suite("HTTP/1 connection state machine: every state × every input")
struct HTTP1ConnectionStateMachineTableTests {
    typealias Machine = HTTP1ConnectionHandler.StateMachine
    typealias Described = HTTP1ConnectionStateMachineTests

    static let now = Described.now

    static func head(_ uri: String, method: HTTPMethod = .GET, close: Bool = false) -> ClientRequestHead {
        var head = HTTPRequestHead(version: .http1_1, method: method, uri: uri)
        if close { head.headers.add(name: "Connection", value: "close") }
        return ClientRequestHead(head)
    }

    /// A request read whole, started and handed to the proxy up to its end.
    static func answering(_ machine: inout Machine) {
        _ = machine.headAdmitted(head("/a"), now: now)
        _ = machine.endRead(nil, now: now)
        _ = machine.next()
        _ = machine.assigned(.proxy)
        _ = machine.next()
    }

    /// A body read, started and handed to the proxy, its end not read.
    static func reading(_ machine: inout Machine, close: Bool = false) {
        _ = machine.headAdmitted(head("/a", method: .POST, close: close), now: now)
        _ = machine.next()
        _ = machine.assigned(.proxy)
    }

    /// Computed: a stored array of closures is not `Sendable`.
    static var states: [(name: String, reach: (inout Machine) -> Void)] { [
        ("open, idle", { _ in }),
        ("open, starting", { machine in
            _ = machine.headAdmitted(head("/a"), now: now)
            _ = machine.next()
        }),
        ("open, reading", { reading(&$0) }),
        ("open, reading, answer started", { machine in
            reading(&machine)
            _ = machine.responseHeadWritten(status: 200)
        }),
        ("open, answering", { answering(&$0) }),
        ("open, answered early", { machine in
            reading(&machine)
            _ = machine.responseEnded(now: now)
        }),
        ("open, a request queued", { machine in
            answering(&machine)
            _ = machine.headAdmitted(head("/b"), now: now)
            _ = machine.endRead(nil, now: now)
        }),
        ("input ended", { machine in
            answering(&machine)
            _ = machine.inputClosed()
        }),
        ("draining, idle", { _ = $0.drain(now: now) }),
        ("draining, answering", { machine in
            answering(&machine)
            _ = machine.drain(now: now)
        }),
        ("refusing", { machine in
            answering(&machine)
            _ = machine.headRefused(.invalidRequest("refused"))
        }),
        ("finishing", { machine in
            reading(&machine, close: true)
            _ = machine.responseEnded(now: now)
        }),
        ("closing", { _ = $0.parserFailed(.invalidChunkSize) }),
        ("lingering", { machine in
            _ = machine.headRefused(.invalidRequest("refused"))
            _ = machine.lingeringStarts(now: now)
        }),
        ("upgraded", { machine in
            answering(&machine)
            _ = machine.upgradeAnswered()
        }),
        ("closed", { _ = $0.closed() }),
        ("read held", { machine in
            answering(&machine)
            for index in 0..<Machine.maxWaiting / 2 {
                _ = machine.headAdmitted(head("/\(index)"), now: now)
                _ = machine.endRead(nil, now: now)
            }
            _ = machine.readRequested()
        }),
        ("body paused", { machine in
            reading(&machine)
            _ = machine.bodyPaused()
        }),
        ("body paused, read held", { machine in
            reading(&machine)
            _ = machine.bodyPaused()
            _ = machine.readRequested()
        }),
    ] }

    static var inputs: [(name: String, apply: (inout Machine) -> Machine.Action)] { [
        ("connectionActive", { $0.connectionActive(now: now) }),
        ("headAdmitted", { $0.headAdmitted(head("/n"), now: now) }),
        ("bodyRead", { $0.bodyRead(ByteBuffer(string: "b")) }),
        ("endRead", { $0.endRead(nil, now: now) }),
        ("errorCaught", { $0.errorCaught(ChannelError.ioOnClosedChannel) }),
        ("parserFailed", { $0.parserFailed(.invalidChunkSize) }),
        ("parserFailed overflow", { $0.parserFailed(.headerOverflow) }),
        ("headRefused", { $0.headRefused(.invalidRequest("refused")) }),
        ("inputDiscarded", { $0.inputDiscarded(now: now) }),
        ("assigned", { $0.assigned(.hummingbird) }),
        ("next", { $0.next() }),
        ("responseHeadWritten 100", { $0.responseHeadWritten(status: 100) }),
        ("responseHeadWritten 200", { $0.responseHeadWritten(status: 200) }),
        ("responseEnded", { $0.responseEnded(now: now) }),
        ("upgradeAnswered", { $0.upgradeAnswered() }),
        ("lingeringStarts", { $0.lingeringStarts(now: now) }),
        ("inputClosed", { $0.inputClosed() }),
        ("drain", { $0.drain(now: now) }),
        ("bodyStalled answer", { $0.bodyStalled(.answer(.requestTimeout)) }),
        ("bodyStalled close", { $0.bodyStalled(.close) }),
        ("idleTimerFired before the park delay", { $0.idleTimerFired(now: now + .milliseconds(50), parkable: true) }),
        ("idleTimerFired parkable", { $0.idleTimerFired(now: now + .seconds(1), parkable: true) }),
        ("idleTimerFired at the idle deadline", { $0.idleTimerFired(now: now + .seconds(10), parkable: true) }),
        ("readRequested", { $0.readRequested() }),
        ("bodyPaused", { $0.bodyPaused() }),
        ("bodyResumed", { $0.bodyResumed() }),
        ("closed", { $0.closed() }),
    ] }

    /// One line per state and input: `state | input -> action => next state`.
    static func table() -> [String] {
        var lines: [String] = []
        for state in states {
            for input in inputs {
                var machine = Machine(idleTimeout: .seconds(10), parks: true, check: .counting)
                _ = machine.connectionActive(now: now)
                state.reach(&machine)
                #expect(machine.illegalInputs == 0, "the path to \(state.name) is illegal")
                let action = input.apply(&machine)
                let illegal = machine.illegalInputs == 0 ? "" : "ILLEGAL "
                lines.append("\(state.name) | \(input.name) -> \(illegal)\(Described.describe(action)) => \(Described.describe(machine))")
            }
        }
        return lines
    }

    @Test func everyStateMeetsEveryInput() {
        let lines = Self.table()
        #expect(lines.count == Self.states.count * Self.inputs.count)
        let expected = Self.expected.split(separator: "\n").map(String.init)
        #expect(expected.count == lines.count, "table:\n\(lines.joined(separator: "\n"))")
        for (line, expectedLine) in zip(lines, expected) where line != expectedLine {
            Issue.record("expected \(expectedLine)\n     got \(line)")
        }
    }

    /// Reviewed line by line; regenerate from the failure's output only after reviewing again.
    static let expected = """
        open, idle | connectionActive -> idleTimer expire +100ms => open idle queued 0 waiting 0
        open, idle | headAdmitted -> none => open idle queued 1 waiting 1
        open, idle | bodyRead -> none => open idle queued 0 waiting 1
        open, idle | endRead -> none => open idle queued 0 waiting 1
        open, idle | errorCaught -> none => open idle queued 0 waiting 1
        open, idle | parserFailed -> respondAndClose INVALID_REQUEST => closing
        open, idle | parserFailed overflow -> respondAndClose HEADERS_TOO_LARGE => closing
        open, idle | headRefused -> respondAndLinger INVALID_REQUEST => closing
        open, idle | inputDiscarded -> ILLEGAL none => open idle queued 0 waiting 0
        open, idle | assigned -> ILLEGAL close => closing
        open, idle | next -> none => open idle queued 0 waiting 0
        open, idle | responseHeadWritten 100 -> none => open idle queued 0 waiting 0
        open, idle | responseHeadWritten 200 -> none => open idle queued 0 waiting 0
        open, idle | responseEnded -> writeEnd idle expire +100ms => open idle queued 0 waiting 0
        open, idle | upgradeAnswered -> close => closed
        open, idle | lingeringStarts -> ILLEGAL close => closing
        open, idle | inputClosed -> close => closing
        open, idle | drain -> idleTimer expire +1000ms => draining idle queued 0 waiting 0
        open, idle | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing
        open, idle | bodyStalled close -> close => closing
        open, idle | idleTimerFired before the park delay -> idleTimer expire +100ms => open idle queued 0 waiting 0
        open, idle | idleTimerFired parkable -> park until +10000ms => closed
        open, idle | idleTimerFired at the idle deadline -> close => closing
        open, idle | readRequested -> read => open idle queued 0 waiting 0
        open, idle | bodyPaused -> none => open idle queued 0 waiting 0 [paused]
        open, idle | bodyResumed -> none => open idle queued 0 waiting 0
        open, idle | closed -> none => closed
        open, starting | connectionActive -> idleTimer expire +100ms => open starting queued 0 waiting 0
        open, starting | headAdmitted -> none => open starting queued 1 waiting 1
        open, starting | bodyRead -> none => open starting queued 0 waiting 1
        open, starting | endRead -> none => open starting queued 0 waiting 1
        open, starting | errorCaught -> none => open starting queued 0 waiting 1
        open, starting | parserFailed -> none => open starting queued 0 waiting 1
        open, starting | parserFailed overflow -> none => refusing HEADERS_TOO_LARGE starting queued 0 waiting 0
        open, starting | headRefused -> none => refusing INVALID_REQUEST starting queued 0 waiting 0
        open, starting | inputDiscarded -> ILLEGAL none => open starting queued 0 waiting 0
        open, starting | assigned -> none => open reading(hummingbird, awaited) queued 0 waiting 0
        open, starting | next -> none => open starting queued 0 waiting 0
        open, starting | responseHeadWritten 100 -> ILLEGAL close => closing
        open, starting | responseHeadWritten 200 -> ILLEGAL close => closing
        open, starting | responseEnded -> ILLEGAL writeEndThenClose => closing
        open, starting | upgradeAnswered -> close => closed
        open, starting | lingeringStarts -> ILLEGAL close => closing
        open, starting | inputClosed -> none => input ended starting queued 0 waiting 0
        open, starting | drain -> none => draining starting queued 0 waiting 0
        open, starting | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing
        open, starting | bodyStalled close -> close => closing
        open, starting | idleTimerFired before the park delay -> idleTimer expire +100ms => open starting queued 0 waiting 0
        open, starting | idleTimerFired parkable -> idleTimer expire +10000ms => open starting queued 0 waiting 0
        open, starting | idleTimerFired at the idle deadline -> idleTimer expire +20000ms => open starting queued 0 waiting 0
        open, starting | readRequested -> read => open starting queued 0 waiting 0
        open, starting | bodyPaused -> none => open starting queued 0 waiting 0 [paused]
        open, starting | bodyResumed -> none => open starting queued 0 waiting 0
        open, starting | closed -> none => closed
        open, reading | connectionActive -> idleTimer expire +100ms => open reading(proxy, awaited) queued 0 waiting 0
        open, reading | headAdmitted -> none => open reading(proxy, awaited) queued 1 waiting 1
        open, reading | bodyRead -> none => open reading(proxy, awaited) queued 0 waiting 1
        open, reading | endRead -> none => open reading(proxy, awaited) queued 0 waiting 1
        open, reading | errorCaught -> none => open reading(proxy, awaited) queued 0 waiting 1
        open, reading | parserFailed -> none => open reading(proxy, awaited) queued 0 waiting 1
        open, reading | parserFailed overflow -> none => refusing HEADERS_TOO_LARGE reading(proxy, awaited) queued 0 waiting 0
        open, reading | headRefused -> none => refusing INVALID_REQUEST reading(proxy, awaited) queued 0 waiting 0
        open, reading | inputDiscarded -> ILLEGAL none => open reading(proxy, awaited) queued 0 waiting 0
        open, reading | assigned -> ILLEGAL close => closing
        open, reading | next -> none => open reading(proxy, awaited) queued 0 waiting 0
        open, reading | responseHeadWritten 100 -> none => open reading(proxy, awaited) queued 0 waiting 0
        open, reading | responseHeadWritten 200 -> none => open reading(proxy, started) queued 0 waiting 0
        open, reading | responseEnded -> writeEnd idle expire +100ms => open answeredEarly(proxy) queued 0 waiting 0
        open, reading | upgradeAnswered -> close => closed
        open, reading | lingeringStarts -> ILLEGAL close => closing
        open, reading | inputClosed -> none => input ended reading(proxy, awaited) queued 0 waiting 0
        open, reading | drain -> none => draining reading(proxy, awaited) queued 0 waiting 0
        open, reading | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing
        open, reading | bodyStalled close -> close => closing
        open, reading | idleTimerFired before the park delay -> idleTimer expire +100ms => open reading(proxy, awaited) queued 0 waiting 0
        open, reading | idleTimerFired parkable -> idleTimer expire +10000ms => open reading(proxy, awaited) queued 0 waiting 0
        open, reading | idleTimerFired at the idle deadline -> idleTimer expire +20000ms => open reading(proxy, awaited) queued 0 waiting 0
        open, reading | readRequested -> read => open reading(proxy, awaited) queued 0 waiting 0
        open, reading | bodyPaused -> none => open reading(proxy, awaited) queued 0 waiting 0 [paused]
        open, reading | bodyResumed -> none => open reading(proxy, awaited) queued 0 waiting 0
        open, reading | closed -> none => closed
        open, reading, answer started | connectionActive -> idleTimer expire +100ms => open reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | headAdmitted -> none => open reading(proxy, started) queued 1 waiting 1
        open, reading, answer started | bodyRead -> none => open reading(proxy, started) queued 0 waiting 1
        open, reading, answer started | endRead -> none => open reading(proxy, started) queued 0 waiting 1
        open, reading, answer started | errorCaught -> none => open reading(proxy, started) queued 0 waiting 1
        open, reading, answer started | parserFailed -> none => open reading(proxy, started) queued 0 waiting 1
        open, reading, answer started | parserFailed overflow -> none => refusing HEADERS_TOO_LARGE reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | headRefused -> none => refusing INVALID_REQUEST reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | inputDiscarded -> ILLEGAL none => open reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | assigned -> ILLEGAL close => closing
        open, reading, answer started | next -> none => open reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | responseHeadWritten 100 -> none => open reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | responseHeadWritten 200 -> none => open reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | responseEnded -> writeEnd idle expire +100ms => open answeredEarly(proxy) queued 0 waiting 0
        open, reading, answer started | upgradeAnswered -> close => closed
        open, reading, answer started | lingeringStarts -> ILLEGAL close => closing
        open, reading, answer started | inputClosed -> none => input ended reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | drain -> none => draining reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing
        open, reading, answer started | bodyStalled close -> close => closing
        open, reading, answer started | idleTimerFired before the park delay -> idleTimer expire +100ms => open reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | idleTimerFired parkable -> idleTimer expire +10000ms => open reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | idleTimerFired at the idle deadline -> idleTimer expire +20000ms => open reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | readRequested -> read => open reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | bodyPaused -> none => open reading(proxy, started) queued 0 waiting 0 [paused]
        open, reading, answer started | bodyResumed -> none => open reading(proxy, started) queued 0 waiting 0
        open, reading, answer started | closed -> none => closed
        open, answering | connectionActive -> idleTimer expire +100ms => open answering(proxy, awaited) queued 0 waiting 0
        open, answering | headAdmitted -> none => open answering(proxy, awaited) queued 1 waiting 1
        open, answering | bodyRead -> none => open answering(proxy, awaited) queued 0 waiting 1
        open, answering | endRead -> none => open answering(proxy, awaited) queued 0 waiting 1
        open, answering | errorCaught -> none => open answering(proxy, awaited) queued 0 waiting 1
        open, answering | parserFailed -> none => open answering(proxy, awaited) queued 0 waiting 1
        open, answering | parserFailed overflow -> none => refusing HEADERS_TOO_LARGE answering(proxy, awaited) queued 0 waiting 0
        open, answering | headRefused -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        open, answering | inputDiscarded -> ILLEGAL none => open answering(proxy, awaited) queued 0 waiting 0
        open, answering | assigned -> ILLEGAL close => closing
        open, answering | next -> none => open answering(proxy, awaited) queued 0 waiting 0
        open, answering | responseHeadWritten 100 -> none => open answering(proxy, awaited) queued 0 waiting 0
        open, answering | responseHeadWritten 200 -> none => open answering(proxy, started) queued 0 waiting 0
        open, answering | responseEnded -> writeEnd idle expire +100ms => open idle queued 0 waiting 0
        open, answering | upgradeAnswered -> upgrade => upgraded
        open, answering | lingeringStarts -> ILLEGAL close => closing
        open, answering | inputClosed -> none => input ended answering(proxy, awaited) queued 0 waiting 0
        open, answering | drain -> none => draining answering(proxy, awaited) queued 0 waiting 0
        open, answering | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing
        open, answering | bodyStalled close -> close => closing
        open, answering | idleTimerFired before the park delay -> idleTimer expire +100ms => open answering(proxy, awaited) queued 0 waiting 0
        open, answering | idleTimerFired parkable -> idleTimer expire +10000ms => open answering(proxy, awaited) queued 0 waiting 0
        open, answering | idleTimerFired at the idle deadline -> idleTimer expire +20000ms => open answering(proxy, awaited) queued 0 waiting 0
        open, answering | readRequested -> read => open answering(proxy, awaited) queued 0 waiting 0
        open, answering | bodyPaused -> none => open answering(proxy, awaited) queued 0 waiting 0 [paused]
        open, answering | bodyResumed -> none => open answering(proxy, awaited) queued 0 waiting 0
        open, answering | closed -> none => closed
        open, answered early | connectionActive -> idleTimer expire +100ms => open answeredEarly(proxy) queued 0 waiting 0
        open, answered early | headAdmitted -> none => open answeredEarly(proxy) queued 1 waiting 1
        open, answered early | bodyRead -> none => open answeredEarly(proxy) queued 0 waiting 1
        open, answered early | endRead -> none => open answeredEarly(proxy) queued 0 waiting 1
        open, answered early | errorCaught -> none => open answeredEarly(proxy) queued 0 waiting 1
        open, answered early | parserFailed -> respondAndClose INVALID_REQUEST => closing
        open, answered early | parserFailed overflow -> respondAndClose HEADERS_TOO_LARGE => closing
        open, answered early | headRefused -> respondAndLinger INVALID_REQUEST => closing
        open, answered early | inputDiscarded -> ILLEGAL none => open answeredEarly(proxy) queued 0 waiting 0
        open, answered early | assigned -> ILLEGAL close => closing
        open, answered early | next -> none => open answeredEarly(proxy) queued 0 waiting 0
        open, answered early | responseHeadWritten 100 -> none => open answeredEarly(proxy) queued 0 waiting 0
        open, answered early | responseHeadWritten 200 -> none => open answeredEarly(proxy) queued 0 waiting 0
        open, answered early | responseEnded -> writeEnd idle expire +100ms => open answeredEarly(proxy) queued 0 waiting 0
        open, answered early | upgradeAnswered -> close => closed
        open, answered early | lingeringStarts -> ILLEGAL close => closing
        open, answered early | inputClosed -> close => closing
        open, answered early | drain -> idleTimer expire +1000ms => draining answeredEarly(proxy) queued 0 waiting 0
        open, answered early | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing
        open, answered early | bodyStalled close -> close => closing
        open, answered early | idleTimerFired before the park delay -> idleTimer expire +100ms => open answeredEarly(proxy) queued 0 waiting 0
        open, answered early | idleTimerFired parkable -> idleTimer expire +10000ms => open answeredEarly(proxy) queued 0 waiting 0
        open, answered early | idleTimerFired at the idle deadline -> close => closing
        open, answered early | readRequested -> read => open answeredEarly(proxy) queued 0 waiting 0
        open, answered early | bodyPaused -> none => open answeredEarly(proxy) queued 0 waiting 0 [paused]
        open, answered early | bodyResumed -> none => open answeredEarly(proxy) queued 0 waiting 0
        open, answered early | closed -> none => closed
        open, a request queued | connectionActive -> idleTimer expire +100ms => open answering(proxy, awaited) queued 1 waiting 2
        open, a request queued | headAdmitted -> none => open answering(proxy, awaited) queued 2 waiting 3
        open, a request queued | bodyRead -> none => open answering(proxy, awaited) queued 1 waiting 3
        open, a request queued | endRead -> none => open answering(proxy, awaited) queued 1 waiting 3
        open, a request queued | errorCaught -> none => open answering(proxy, awaited) queued 1 waiting 3
        open, a request queued | parserFailed -> none => open answering(proxy, awaited) queued 1 waiting 3
        open, a request queued | parserFailed overflow -> none => refusing HEADERS_TOO_LARGE answering(proxy, awaited) queued 1 waiting 2
        open, a request queued | headRefused -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 1 waiting 2
        open, a request queued | inputDiscarded -> ILLEGAL none => open answering(proxy, awaited) queued 1 waiting 2
        open, a request queued | assigned -> ILLEGAL close => closing
        open, a request queued | next -> none => open answering(proxy, awaited) queued 1 waiting 2
        open, a request queued | responseHeadWritten 100 -> none => open answering(proxy, awaited) queued 1 waiting 2
        open, a request queued | responseHeadWritten 200 -> none => open answering(proxy, started) queued 1 waiting 2
        open, a request queued | responseEnded -> writeEnd idle expire +100ms => open idle queued 1 waiting 2
        open, a request queued | upgradeAnswered -> close => closed
        open, a request queued | lingeringStarts -> ILLEGAL close => closing
        open, a request queued | inputClosed -> none => input ended answering(proxy, awaited) queued 1 waiting 2
        open, a request queued | drain -> none => draining answering(proxy, awaited) queued 1 waiting 2
        open, a request queued | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing
        open, a request queued | bodyStalled close -> close => closing
        open, a request queued | idleTimerFired before the park delay -> idleTimer expire +100ms => open answering(proxy, awaited) queued 1 waiting 2
        open, a request queued | idleTimerFired parkable -> idleTimer expire +10000ms => open answering(proxy, awaited) queued 1 waiting 2
        open, a request queued | idleTimerFired at the idle deadline -> idleTimer expire +20000ms => open answering(proxy, awaited) queued 1 waiting 2
        open, a request queued | readRequested -> read => open answering(proxy, awaited) queued 1 waiting 2
        open, a request queued | bodyPaused -> none => open answering(proxy, awaited) queued 1 waiting 2 [paused]
        open, a request queued | bodyResumed -> none => open answering(proxy, awaited) queued 1 waiting 2
        open, a request queued | closed -> none => closed
        input ended | connectionActive -> idleTimer expire +100ms => input ended answering(proxy, awaited) queued 0 waiting 0
        input ended | headAdmitted -> none => input ended answering(proxy, awaited) queued 1 waiting 1
        input ended | bodyRead -> none => input ended answering(proxy, awaited) queued 0 waiting 1
        input ended | endRead -> none => input ended answering(proxy, awaited) queued 0 waiting 1
        input ended | errorCaught -> none => input ended answering(proxy, awaited) queued 0 waiting 1
        input ended | parserFailed -> none => input ended answering(proxy, awaited) queued 0 waiting 1
        input ended | parserFailed overflow -> none => refusing HEADERS_TOO_LARGE answering(proxy, awaited) queued 0 waiting 0
        input ended | headRefused -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        input ended | inputDiscarded -> ILLEGAL none => input ended answering(proxy, awaited) queued 0 waiting 0
        input ended | assigned -> ILLEGAL close => closing
        input ended | next -> none => input ended answering(proxy, awaited) queued 0 waiting 0
        input ended | responseHeadWritten 100 -> none => input ended answering(proxy, awaited) queued 0 waiting 0
        input ended | responseHeadWritten 200 -> none => input ended answering(proxy, started) queued 0 waiting 0
        input ended | responseEnded -> writeEndThenClose => closing
        input ended | upgradeAnswered -> upgrade => upgraded
        input ended | lingeringStarts -> ILLEGAL close => closing
        input ended | inputClosed -> none => input ended answering(proxy, awaited) queued 0 waiting 0
        input ended | drain -> none => input ended answering(proxy, awaited) queued 0 waiting 0
        input ended | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing
        input ended | bodyStalled close -> close => closing
        input ended | idleTimerFired before the park delay -> idleTimer expire +100ms => input ended answering(proxy, awaited) queued 0 waiting 0
        input ended | idleTimerFired parkable -> idleTimer expire +10000ms => input ended answering(proxy, awaited) queued 0 waiting 0
        input ended | idleTimerFired at the idle deadline -> idleTimer expire +20000ms => input ended answering(proxy, awaited) queued 0 waiting 0
        input ended | readRequested -> read => input ended answering(proxy, awaited) queued 0 waiting 0
        input ended | bodyPaused -> none => input ended answering(proxy, awaited) queued 0 waiting 0 [paused]
        input ended | bodyResumed -> none => input ended answering(proxy, awaited) queued 0 waiting 0
        input ended | closed -> none => closed
        draining, idle | connectionActive -> idleTimer expire +100ms => draining idle queued 0 waiting 0
        draining, idle | headAdmitted -> none => draining idle queued 1 waiting 1
        draining, idle | bodyRead -> none => draining idle queued 0 waiting 1
        draining, idle | endRead -> none => draining idle queued 0 waiting 1
        draining, idle | errorCaught -> none => draining idle queued 0 waiting 1
        draining, idle | parserFailed -> respondAndClose INVALID_REQUEST => closing
        draining, idle | parserFailed overflow -> respondAndClose HEADERS_TOO_LARGE => closing
        draining, idle | headRefused -> respondAndLinger INVALID_REQUEST => closing
        draining, idle | inputDiscarded -> ILLEGAL none => draining idle queued 0 waiting 0
        draining, idle | assigned -> ILLEGAL close => closing
        draining, idle | next -> none => draining idle queued 0 waiting 0
        draining, idle | responseHeadWritten 100 -> none => draining idle queued 0 waiting 0
        draining, idle | responseHeadWritten 200 -> none => draining idle queued 0 waiting 0
        draining, idle | responseEnded -> writeEnd idle expire +1000ms => draining idle queued 0 waiting 0
        draining, idle | upgradeAnswered -> close => closed
        draining, idle | lingeringStarts -> ILLEGAL close => closing
        draining, idle | inputClosed -> close => closing
        draining, idle | drain -> none => draining idle queued 0 waiting 0
        draining, idle | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing
        draining, idle | bodyStalled close -> close => closing
        draining, idle | idleTimerFired before the park delay -> idleTimer expire +1000ms => draining idle queued 0 waiting 0
        draining, idle | idleTimerFired parkable -> startLingering expire +6000ms => lingering
        draining, idle | idleTimerFired at the idle deadline -> startLingering expire +15000ms => lingering
        draining, idle | readRequested -> read => draining idle queued 0 waiting 0
        draining, idle | bodyPaused -> none => draining idle queued 0 waiting 0 [paused]
        draining, idle | bodyResumed -> none => draining idle queued 0 waiting 0
        draining, idle | closed -> none => closed
        draining, answering | connectionActive -> idleTimer expire +100ms => draining answering(proxy, awaited) queued 0 waiting 0
        draining, answering | headAdmitted -> none => draining answering(proxy, awaited) queued 1 waiting 1
        draining, answering | bodyRead -> none => draining answering(proxy, awaited) queued 0 waiting 1
        draining, answering | endRead -> none => draining answering(proxy, awaited) queued 0 waiting 1
        draining, answering | errorCaught -> none => draining answering(proxy, awaited) queued 0 waiting 1
        draining, answering | parserFailed -> none => draining answering(proxy, awaited) queued 0 waiting 1
        draining, answering | parserFailed overflow -> none => refusing HEADERS_TOO_LARGE answering(proxy, awaited) queued 0 waiting 0
        draining, answering | headRefused -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        draining, answering | inputDiscarded -> ILLEGAL none => draining answering(proxy, awaited) queued 0 waiting 0
        draining, answering | assigned -> ILLEGAL close => closing
        draining, answering | next -> none => draining answering(proxy, awaited) queued 0 waiting 0
        draining, answering | responseHeadWritten 100 -> none => draining answering(proxy, awaited) queued 0 waiting 0
        draining, answering | responseHeadWritten 200 -> none => draining answering(proxy, started) queued 0 waiting 0
        draining, answering | responseEnded -> writeEnd idle expire +1000ms => draining idle queued 0 waiting 0
        draining, answering | upgradeAnswered -> upgrade => upgraded
        draining, answering | lingeringStarts -> ILLEGAL close => closing
        draining, answering | inputClosed -> none => input ended answering(proxy, awaited) queued 0 waiting 0
        draining, answering | drain -> none => draining answering(proxy, awaited) queued 0 waiting 0
        draining, answering | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing
        draining, answering | bodyStalled close -> close => closing
        draining, answering | idleTimerFired before the park delay -> idleTimer expire +100ms => draining answering(proxy, awaited) queued 0 waiting 0
        draining, answering | idleTimerFired parkable -> idleTimer expire +10000ms => draining answering(proxy, awaited) queued 0 waiting 0
        draining, answering | idleTimerFired at the idle deadline -> idleTimer expire +20000ms => draining answering(proxy, awaited) queued 0 waiting 0
        draining, answering | readRequested -> read => draining answering(proxy, awaited) queued 0 waiting 0
        draining, answering | bodyPaused -> none => draining answering(proxy, awaited) queued 0 waiting 0 [paused]
        draining, answering | bodyResumed -> none => draining answering(proxy, awaited) queued 0 waiting 0
        draining, answering | closed -> none => closed
        refusing | connectionActive -> idleTimer expire +100ms => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | headAdmitted -> ILLEGAL none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | bodyRead -> ILLEGAL none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | endRead -> ILLEGAL none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | errorCaught -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 1
        refusing | parserFailed -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | parserFailed overflow -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | headRefused -> ILLEGAL none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | inputDiscarded -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | assigned -> ILLEGAL close => closing
        refusing | next -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | responseHeadWritten 100 -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | responseHeadWritten 200 -> none => refusing INVALID_REQUEST answering(proxy, started) queued 0 waiting 0
        refusing | responseEnded -> writeEndThenRespond INVALID_REQUEST => closing
        refusing | upgradeAnswered -> upgrade => upgraded
        refusing | lingeringStarts -> ILLEGAL close => closing
        refusing | inputClosed -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | drain -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing
        refusing | bodyStalled close -> close => closing
        refusing | idleTimerFired before the park delay -> idleTimer expire +100ms => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | idleTimerFired parkable -> idleTimer expire +10000ms => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | idleTimerFired at the idle deadline -> idleTimer expire +20000ms => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | readRequested -> read => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | bodyPaused -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0 [paused]
        refusing | bodyResumed -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 0 waiting 0
        refusing | closed -> none => closed
        finishing | connectionActive -> idleTimer expire +100ms => finishing answeredEarly(proxy) queued 0 waiting 0
        finishing | headAdmitted -> none => finishing answeredEarly(proxy) queued 0 waiting 0
        finishing | bodyRead -> none => finishing answeredEarly(proxy) queued 0 waiting 1
        finishing | endRead -> none => finishing answeredEarly(proxy) queued 0 waiting 1
        finishing | errorCaught -> none => finishing answeredEarly(proxy) queued 0 waiting 1
        finishing | parserFailed -> respondAndClose INVALID_REQUEST => closing
        finishing | parserFailed overflow -> respondAndClose HEADERS_TOO_LARGE => closing
        finishing | headRefused -> respondAndLinger INVALID_REQUEST => closing
        finishing | inputDiscarded -> ILLEGAL none => finishing answeredEarly(proxy) queued 0 waiting 0
        finishing | assigned -> ILLEGAL close => closing
        finishing | next -> none => finishing answeredEarly(proxy) queued 0 waiting 0
        finishing | responseHeadWritten 100 -> none => finishing answeredEarly(proxy) queued 0 waiting 0
        finishing | responseHeadWritten 200 -> none => finishing answeredEarly(proxy) queued 0 waiting 0
        finishing | responseEnded -> writeEnd idle expire +100ms => finishing answeredEarly(proxy) queued 0 waiting 0
        finishing | upgradeAnswered -> close => closed
        finishing | lingeringStarts -> startLingering expire +5000ms => lingering
        finishing | inputClosed -> close => closing
        finishing | drain -> none => finishing answeredEarly(proxy) queued 0 waiting 0
        finishing | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing
        finishing | bodyStalled close -> close => closing
        finishing | idleTimerFired before the park delay -> idleTimer expire +100ms => finishing answeredEarly(proxy) queued 0 waiting 0
        finishing | idleTimerFired parkable -> idleTimer expire +10000ms => finishing answeredEarly(proxy) queued 0 waiting 0
        finishing | idleTimerFired at the idle deadline -> close => closing
        finishing | readRequested -> read => finishing answeredEarly(proxy) queued 0 waiting 0
        finishing | bodyPaused -> none => finishing answeredEarly(proxy) queued 0 waiting 0 [paused]
        finishing | bodyResumed -> none => finishing answeredEarly(proxy) queued 0 waiting 0
        finishing | closed -> none => closed
        closing | connectionActive -> none => closing
        closing | headAdmitted -> ILLEGAL none => closing
        closing | bodyRead -> ILLEGAL none => closing
        closing | endRead -> ILLEGAL none => closing
        closing | errorCaught -> none => closing
        closing | parserFailed -> none => closing
        closing | parserFailed overflow -> none => closing
        closing | headRefused -> ILLEGAL none => closing
        closing | inputDiscarded -> none => closing
        closing | assigned -> ILLEGAL close => closing
        closing | next -> none => closing
        closing | responseHeadWritten 100 -> none => closing
        closing | responseHeadWritten 200 -> none => closing
        closing | responseEnded -> writeEnd idle keep => closing
        closing | upgradeAnswered -> close => closed
        closing | lingeringStarts -> startLingering expire +5000ms => lingering
        closing | inputClosed -> close => closing
        closing | drain -> none => closing
        closing | bodyStalled answer -> ILLEGAL close => closing
        closing | bodyStalled close -> close => closing
        closing | idleTimerFired before the park delay -> idleTimer expire +10000ms => closing
        closing | idleTimerFired parkable -> idleTimer expire +10000ms => closing
        closing | idleTimerFired at the idle deadline -> close => closing
        closing | readRequested -> read => closing
        closing | bodyPaused -> none => closing [paused]
        closing | bodyResumed -> none => closing
        closing | closed -> none => closed
        lingering | connectionActive -> none => lingering
        lingering | headAdmitted -> ILLEGAL none => lingering
        lingering | bodyRead -> ILLEGAL none => lingering
        lingering | endRead -> ILLEGAL none => lingering
        lingering | errorCaught -> none => lingering
        lingering | parserFailed -> none => lingering
        lingering | parserFailed overflow -> none => lingering
        lingering | headRefused -> ILLEGAL none => lingering
        lingering | inputDiscarded -> lingerTimer expire +5000ms => lingering
        lingering | assigned -> ILLEGAL close => closing
        lingering | next -> none => lingering
        lingering | responseHeadWritten 100 -> none => lingering
        lingering | responseHeadWritten 200 -> none => lingering
        lingering | responseEnded -> writeEnd idle keep => lingering
        lingering | upgradeAnswered -> close => closed
        lingering | lingeringStarts -> none => lingering
        lingering | inputClosed -> close => closing
        lingering | drain -> none => lingering
        lingering | bodyStalled answer -> ILLEGAL close => closing
        lingering | bodyStalled close -> close => closing
        lingering | idleTimerFired before the park delay -> idleTimer expire +10000ms => lingering
        lingering | idleTimerFired parkable -> idleTimer expire +10000ms => lingering
        lingering | idleTimerFired at the idle deadline -> close => closing
        lingering | readRequested -> read => lingering
        lingering | bodyPaused -> none => lingering [paused]
        lingering | bodyResumed -> none => lingering
        lingering | closed -> none => closed
        upgraded | connectionActive -> none => upgraded
        upgraded | headAdmitted -> ILLEGAL none => upgraded
        upgraded | bodyRead -> ILLEGAL none => upgraded
        upgraded | endRead -> ILLEGAL none => upgraded
        upgraded | errorCaught -> none => upgraded
        upgraded | parserFailed -> none => upgraded
        upgraded | parserFailed overflow -> none => upgraded
        upgraded | headRefused -> ILLEGAL none => upgraded
        upgraded | inputDiscarded -> none => upgraded
        upgraded | assigned -> ILLEGAL close => closing
        upgraded | next -> none => upgraded
        upgraded | responseHeadWritten 100 -> none => upgraded
        upgraded | responseHeadWritten 200 -> none => upgraded
        upgraded | responseEnded -> writeEnd idle keep => upgraded
        upgraded | upgradeAnswered -> close => closed
        upgraded | lingeringStarts -> none => upgraded
        upgraded | inputClosed -> close => closing
        upgraded | drain -> none => upgraded
        upgraded | bodyStalled answer -> ILLEGAL close => closing
        upgraded | bodyStalled close -> close => closing
        upgraded | idleTimerFired before the park delay -> none => upgraded
        upgraded | idleTimerFired parkable -> none => upgraded
        upgraded | idleTimerFired at the idle deadline -> none => upgraded
        upgraded | readRequested -> read => upgraded
        upgraded | bodyPaused -> none => upgraded [paused]
        upgraded | bodyResumed -> none => upgraded
        upgraded | closed -> none => closed
        closed | connectionActive -> none => closed
        closed | headAdmitted -> ILLEGAL none => closed
        closed | bodyRead -> ILLEGAL none => closed
        closed | endRead -> ILLEGAL none => closed
        closed | errorCaught -> none => closed
        closed | parserFailed -> none => closed
        closed | parserFailed overflow -> none => closed
        closed | headRefused -> ILLEGAL none => closed
        closed | inputDiscarded -> none => closed
        closed | assigned -> ILLEGAL close => closed
        closed | next -> none => closed
        closed | responseHeadWritten 100 -> none => closed
        closed | responseHeadWritten 200 -> none => closed
        closed | responseEnded -> writeEnd idle keep => closed
        closed | upgradeAnswered -> close => closed
        closed | lingeringStarts -> none => closed
        closed | inputClosed -> none => closed
        closed | drain -> none => closed
        closed | bodyStalled answer -> ILLEGAL close => closed
        closed | bodyStalled close -> close => closed
        closed | idleTimerFired before the park delay -> none => closed
        closed | idleTimerFired parkable -> none => closed
        closed | idleTimerFired at the idle deadline -> none => closed
        closed | readRequested -> read => closed
        closed | bodyPaused -> none => closed [paused]
        closed | bodyResumed -> none => closed
        closed | closed -> none => closed
        read held | connectionActive -> idleTimer expire +100ms => open answering(proxy, awaited) queued 32 waiting 64 [held]
        read held | headAdmitted -> none => open answering(proxy, awaited) queued 33 waiting 65 [held]
        read held | bodyRead -> none => open answering(proxy, awaited) queued 32 waiting 65 [held]
        read held | endRead -> none => open answering(proxy, awaited) queued 32 waiting 65 [held]
        read held | errorCaught -> none => open answering(proxy, awaited) queued 32 waiting 65 [held]
        read held | parserFailed -> none => open answering(proxy, awaited) queued 32 waiting 65 [held]
        read held | parserFailed overflow -> none => refusing HEADERS_TOO_LARGE answering(proxy, awaited) queued 32 waiting 64 [held]
        read held | headRefused -> none => refusing INVALID_REQUEST answering(proxy, awaited) queued 32 waiting 64 [held]
        read held | inputDiscarded -> ILLEGAL none => open answering(proxy, awaited) queued 32 waiting 64 [held]
        read held | assigned -> ILLEGAL close => closing [held]
        read held | next -> none => open answering(proxy, awaited) queued 32 waiting 64 [held]
        read held | responseHeadWritten 100 -> none => open answering(proxy, awaited) queued 32 waiting 64 [held]
        read held | responseHeadWritten 200 -> none => open answering(proxy, started) queued 32 waiting 64 [held]
        read held | responseEnded -> writeEnd idle expire +100ms => open idle queued 32 waiting 64 [held]
        read held | upgradeAnswered -> close => closed [held]
        read held | lingeringStarts -> ILLEGAL close => closing [held]
        read held | inputClosed -> none => input ended answering(proxy, awaited) queued 32 waiting 64 [held]
        read held | drain -> none => draining answering(proxy, awaited) queued 32 waiting 64 [held]
        read held | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing [held]
        read held | bodyStalled close -> close => closing [held]
        read held | idleTimerFired before the park delay -> idleTimer expire +100ms => open answering(proxy, awaited) queued 32 waiting 64 [held]
        read held | idleTimerFired parkable -> idleTimer expire +10000ms => open answering(proxy, awaited) queued 32 waiting 64 [held]
        read held | idleTimerFired at the idle deadline -> idleTimer expire +20000ms => open answering(proxy, awaited) queued 32 waiting 64 [held]
        read held | readRequested -> none => open answering(proxy, awaited) queued 32 waiting 64 [held]
        read held | bodyPaused -> none => open answering(proxy, awaited) queued 32 waiting 64 [pausedHolding]
        read held | bodyResumed -> none => open answering(proxy, awaited) queued 32 waiting 64 [held]
        read held | closed -> none => closed [held]
        body paused | connectionActive -> idleTimer expire +100ms => open reading(proxy, awaited) queued 0 waiting 0 [paused]
        body paused | headAdmitted -> none => open reading(proxy, awaited) queued 1 waiting 1 [paused]
        body paused | bodyRead -> none => open reading(proxy, awaited) queued 0 waiting 1 [paused]
        body paused | endRead -> none => open reading(proxy, awaited) queued 0 waiting 1 [paused]
        body paused | errorCaught -> none => open reading(proxy, awaited) queued 0 waiting 1 [paused]
        body paused | parserFailed -> none => open reading(proxy, awaited) queued 0 waiting 1 [paused]
        body paused | parserFailed overflow -> none => refusing HEADERS_TOO_LARGE reading(proxy, awaited) queued 0 waiting 0 [paused]
        body paused | headRefused -> none => refusing INVALID_REQUEST reading(proxy, awaited) queued 0 waiting 0 [paused]
        body paused | inputDiscarded -> ILLEGAL none => open reading(proxy, awaited) queued 0 waiting 0 [paused]
        body paused | assigned -> ILLEGAL close => closing [paused]
        body paused | next -> none => open reading(proxy, awaited) queued 0 waiting 0 [paused]
        body paused | responseHeadWritten 100 -> none => open reading(proxy, awaited) queued 0 waiting 0 [paused]
        body paused | responseHeadWritten 200 -> none => open reading(proxy, started) queued 0 waiting 0 [paused]
        body paused | responseEnded -> writeEnd idle expire +100ms => open answeredEarly(proxy) queued 0 waiting 0 [paused]
        body paused | upgradeAnswered -> close => closed [paused]
        body paused | lingeringStarts -> ILLEGAL close => closing [paused]
        body paused | inputClosed -> none => input ended reading(proxy, awaited) queued 0 waiting 0 [paused]
        body paused | drain -> none => draining reading(proxy, awaited) queued 0 waiting 0 [paused]
        body paused | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing [paused]
        body paused | bodyStalled close -> close => closing [paused]
        body paused | idleTimerFired before the park delay -> idleTimer expire +100ms => open reading(proxy, awaited) queued 0 waiting 0 [paused]
        body paused | idleTimerFired parkable -> idleTimer expire +10000ms => open reading(proxy, awaited) queued 0 waiting 0 [paused]
        body paused | idleTimerFired at the idle deadline -> idleTimer expire +20000ms => open reading(proxy, awaited) queued 0 waiting 0 [paused]
        body paused | readRequested -> none => open reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused | bodyPaused -> none => open reading(proxy, awaited) queued 0 waiting 0 [paused]
        body paused | bodyResumed -> none => open reading(proxy, awaited) queued 0 waiting 0
        body paused | closed -> none => closed [paused]
        body paused, read held | connectionActive -> idleTimer expire +100ms => open reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused, read held | headAdmitted -> none => open reading(proxy, awaited) queued 1 waiting 1 [pausedHolding]
        body paused, read held | bodyRead -> none => open reading(proxy, awaited) queued 0 waiting 1 [pausedHolding]
        body paused, read held | endRead -> none => open reading(proxy, awaited) queued 0 waiting 1 [pausedHolding]
        body paused, read held | errorCaught -> none => open reading(proxy, awaited) queued 0 waiting 1 [pausedHolding]
        body paused, read held | parserFailed -> none => open reading(proxy, awaited) queued 0 waiting 1 [pausedHolding]
        body paused, read held | parserFailed overflow -> none => refusing HEADERS_TOO_LARGE reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused, read held | headRefused -> none => refusing INVALID_REQUEST reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused, read held | inputDiscarded -> ILLEGAL none => open reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused, read held | assigned -> ILLEGAL close => closing [pausedHolding]
        body paused, read held | next -> none => open reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused, read held | responseHeadWritten 100 -> none => open reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused, read held | responseHeadWritten 200 -> none => open reading(proxy, started) queued 0 waiting 0 [pausedHolding]
        body paused, read held | responseEnded -> writeEnd idle expire +100ms => open answeredEarly(proxy) queued 0 waiting 0 [pausedHolding]
        body paused, read held | upgradeAnswered -> close => closed [pausedHolding]
        body paused, read held | lingeringStarts -> ILLEGAL close => closing [pausedHolding]
        body paused, read held | inputClosed -> none => input ended reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused, read held | drain -> none => draining reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused, read held | bodyStalled answer -> respondAndClose REQUEST_TIMEOUT => closing [pausedHolding]
        body paused, read held | bodyStalled close -> close => closing [pausedHolding]
        body paused, read held | idleTimerFired before the park delay -> idleTimer expire +100ms => open reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused, read held | idleTimerFired parkable -> idleTimer expire +10000ms => open reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused, read held | idleTimerFired at the idle deadline -> idleTimer expire +20000ms => open reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused, read held | readRequested -> none => open reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused, read held | bodyPaused -> none => open reading(proxy, awaited) queued 0 waiting 0 [pausedHolding]
        body paused, read held | bodyResumed -> read => open reading(proxy, awaited) queued 0 waiting 0
        body paused, read held | closed -> none => closed [pausedHolding]
        """
}
