import NIOCore
import NIOHTTP1
import TestSupport
import Testing

@testable import GatewayEdge

/// ``StreamEdgeHandler/StateMachine`` without a socket: every input in every state, from a
/// table. Illegal pairs are tried on machines made with ``IllegalInputCheck/counting``, so
/// the table checks the answer a release build gives and that exactly the cells marked `✗`
/// were counted as illegal (a debug build stops at them).
@Suite("HTTP/2: a child channel's request edge as a state machine (in memory)")
struct StreamEdgeStateMachineTests {
    typealias Machine = StreamEdgeHandler.StateMachine

    static let now = NIODeadline.uptimeNanoseconds(1_000_000_000)
    static let post = HTTPRequestHead(version: .http2, method: .POST, uri: "/auth/otp/trigger")
    static let refusedHead: HTTPRequestHead = {
        var head = HTTPRequestHead(version: .http2, method: .GET, uri: "/partner/v1/x")
        head.headers.add(name: "x-api-key", value: "a")
        head.headers.add(name: "x-api-key", value: "b")
        return head
    }()

    enum Input: String, CaseIterable {
        case head, refusedHead, body, end, error, readComplete, read
        case responseHead, response1xx, responseBody, responseEnd, deadline, inactive

        func apply(to machine: inout Machine) -> Machine.Action {
            switch self {
            case .head: machine.headReceived(post)
            case .refusedHead: machine.headReceived(StreamEdgeStateMachineTests.refusedHead)
            case .body: machine.bodyReceived()
            case .end: machine.endReceived()
            case .error: machine.errorCaught()
            case .readComplete: machine.readComplete(now: now)
            case .read: machine.readRequested(now: now)
            case .responseHead: machine.responseHead(status: 200)
            case .response1xx: machine.responseHead(status: 100)
            case .responseBody: machine.responseBody()
            case .responseEnd: machine.responseEnd()
            case .deadline: machine.bodyDeadlinePassed()
            case .inactive: machine.channelInactive()
            }
        }
    }

    /// Every state, each by a path of legal inputs.
    static let states: [(name: String, path: [Input])] = [
        ("awaitingHead", []),
        ("reading", [.head]),
        ("reading+answered", [.head, .responseHead]),
        ("timed", [.head, .readComplete]),
        ("timed+answered", [.head, .readComplete, .responseHead]),
        ("ended", [.head, .end]),
        ("ended+answered", [.head, .end, .responseHead]),
        ("refused", [.refusedHead]),
        ("refused(passed)", [.head, .readComplete, .deadline]),
        ("closed", [.head, .inactive]),
    ]

    static func kind(_ state: Machine.State) -> String {
        switch state {
        case .awaitingHead: "awaitingHead"
        case .passed(.reading(_, let timed), let answered): (timed ? "timed" : "reading") + (answered ? "+answered" : "")
        case .passed(.ended, let answered): "ended" + (answered ? "+answered" : "")
        case .refused(let headPassed): headPassed ? "refused(passed)" : "refused"
        case .closed: "closed"
        }
    }

    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none: "-"
        case .passHead: "passHead"
        case .pass(let timer): "pass" + timerName(timer)
        case .refuse(let error): "refuse \(error.status.code)"
        case .fireError: "fireError"
        case .changeTimer(let timer): "timer" + timerName(timer)
        case .write: "write"
        case .writeThenClose: "writeThenClose"
        case .close: "close"
        case .cancelTimer: "cancelTimer"
        }
    }

    static func timerName(_ timer: DeadlineTimer.Change) -> String {
        switch timer {
        case .keep: ""
        case .clear: " clear"
        case .expire: " expire"
        }
    }

    /// Per state, per input: "action → next state", `✗` first when the input is illegal there.
    static let table: [String: [Input: String]] = [
        "awaitingHead": [
            .head: "passHead → reading",
            .refusedHead: "refuse 400 → refused",
            .body: "✗ close → awaitingHead",
            .end: "✗ close → awaitingHead",
            .error: "refuse 400 → refused",
            .readComplete: "- → awaitingHead",
            .read: "- → awaitingHead",
            .responseHead: "✗ writeThenClose → awaitingHead",
            .response1xx: "✗ writeThenClose → awaitingHead",
            .responseBody: "✗ writeThenClose → awaitingHead",
            .responseEnd: "✗ writeThenClose → awaitingHead",
            .deadline: "✗ - → awaitingHead",
            .inactive: "cancelTimer → closed",
        ],
        "reading": [
            .head: "✗ close → reading",
            .refusedHead: "✗ close → reading",
            .body: "pass → reading",
            .end: "pass → ended",
            .error: "fireError → reading",
            .readComplete: "timer expire → timed",
            .read: "- → reading",
            .responseHead: "write → reading+answered",
            .response1xx: "write → reading",
            .responseBody: "write → reading",
            .responseEnd: "writeThenClose → reading",
            .deadline: "- → reading",
            .inactive: "cancelTimer → closed",
        ],
        "reading+answered": [
            .head: "✗ close → reading+answered",
            .refusedHead: "✗ close → reading+answered",
            .body: "pass → reading+answered",
            .end: "pass → ended+answered",
            .error: "fireError → reading+answered",
            .readComplete: "timer expire → timed+answered",
            .read: "- → reading+answered",
            .responseHead: "write → reading+answered",
            .response1xx: "write → reading+answered",
            .responseBody: "write → reading+answered",
            .responseEnd: "writeThenClose → reading+answered",
            .deadline: "- → reading+answered",
            .inactive: "cancelTimer → closed",
        ],
        "timed": [
            .head: "✗ close → timed",
            .refusedHead: "✗ close → timed",
            .body: "pass → timed",
            .end: "pass clear → ended",
            .error: "fireError → timed",
            .readComplete: "- → timed",
            .read: "timer → timed",
            .responseHead: "write → timed+answered",
            .response1xx: "write → timed",
            .responseBody: "write → timed",
            .responseEnd: "writeThenClose → timed",
            .deadline: "refuse 408 → refused(passed)",
            .inactive: "cancelTimer → closed",
        ],
        "timed+answered": [
            .head: "✗ close → timed+answered",
            .refusedHead: "✗ close → timed+answered",
            .body: "pass → timed+answered",
            .end: "pass clear → ended+answered",
            .error: "fireError → timed+answered",
            .readComplete: "- → timed+answered",
            .read: "timer → timed+answered",
            .responseHead: "write → timed+answered",
            .response1xx: "write → timed+answered",
            .responseBody: "write → timed+answered",
            .responseEnd: "writeThenClose → timed+answered",
            .deadline: "close → timed+answered",
            .inactive: "cancelTimer → closed",
        ],
        "ended": [
            .head: "✗ close → ended",
            .refusedHead: "✗ close → ended",
            .body: "✗ close → ended",
            .end: "✗ close → ended",
            .error: "fireError → ended",
            .readComplete: "- → ended",
            .read: "- → ended",
            .responseHead: "write → ended+answered",
            .response1xx: "write → ended",
            .responseBody: "write → ended",
            .responseEnd: "write → ended",
            .deadline: "- → ended",
            .inactive: "cancelTimer → closed",
        ],
        "ended+answered": [
            .head: "✗ close → ended+answered",
            .refusedHead: "✗ close → ended+answered",
            .body: "✗ close → ended+answered",
            .end: "✗ close → ended+answered",
            .error: "fireError → ended+answered",
            .readComplete: "- → ended+answered",
            .read: "- → ended+answered",
            .responseHead: "write → ended+answered",
            .response1xx: "write → ended+answered",
            .responseBody: "write → ended+answered",
            .responseEnd: "write → ended+answered",
            .deadline: "- → ended+answered",
            .inactive: "cancelTimer → closed",
        ],
        "refused": [
            .head: "- → refused",
            .refusedHead: "- → refused",
            .body: "- → refused",
            .end: "- → refused",
            .error: "- → refused",
            .readComplete: "- → refused",
            .read: "- → refused",
            .responseHead: "write → refused",
            .response1xx: "write → refused",
            .responseBody: "write → refused",
            .responseEnd: "write → refused",
            .deadline: "- → refused",
            .inactive: "cancelTimer → closed",
        ],
        "refused(passed)": [
            .head: "- → refused(passed)",
            .refusedHead: "- → refused(passed)",
            .body: "- → refused(passed)",
            .end: "- → refused(passed)",
            .error: "fireError → refused(passed)",
            .readComplete: "- → refused(passed)",
            .read: "- → refused(passed)",
            .responseHead: "write → refused(passed)",
            .response1xx: "write → refused(passed)",
            .responseBody: "write → refused(passed)",
            .responseEnd: "write → refused(passed)",
            .deadline: "- → refused(passed)",
            .inactive: "cancelTimer → closed",
        ],
        "closed": [
            .head: "- → closed",
            .refusedHead: "- → closed",
            .body: "- → closed",
            .end: "- → closed",
            .error: "fireError → closed",
            .readComplete: "- → closed",
            .read: "- → closed",
            .responseHead: "write → closed",
            .response1xx: "write → closed",
            .responseBody: "write → closed",
            .responseEnd: "write → closed",
            .deadline: "- → closed",
            .inactive: "✗ - → closed",
        ],
    ]

    /// 10 states × 13 inputs.
    @Test func everyInputInEveryStateIsDecided() {
        let table = StateMachineTable<Machine, Input>(
            cells: Self.table, illegalInputs: \.illegalInputs, kind: { Self.kind($0.state) },
            apply: { input, machine in Self.describe(input.apply(to: &machine)) }
        )
        let states = Self.states.map { state in
            var machine = Machine(edge: RequestEdge(maxHeaderListSize: 4096, bodyReadTimeout: .seconds(10)), proxiedRoutes: nil, check: .counting)
            for input in state.path { _ = input.apply(to: &machine) }
            return (state.name, machine)
        }
        #expect(table.check(states) == 130)
    }
}
