@testable import GatewayServer
import NIOCore
import NIOHTTP1
@testable import GatewayEdge
import Testing
import TestSupport

/// How the endpoints' responder takes requests, without sockets: answered from the head, the
/// body passed on up to one byte over what the endpoints read, the rest of a body discarded
/// after the answer, the next request only after both, a part out of turn closing, and input
/// gone bad refused or closing after the answer; every input in every state from a table
/// (illegal pairs, marked `✗`, tried on a ``IllegalInputCheck/counting`` machine for the
/// answer a release build gives).
@Suite("Endpoints: the responder's state machine (in memory)")
struct EndpointResponderStateMachineTests {
    typealias Machine = EndpointResponder.StateMachine

    static let post = HTTPRequestHead(version: .http1_1, method: .POST, uri: "/auth/otp/verify", headers: ["content-length": "7"])
    static let get = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/healthz")

    static func bytes(_ count: Int) -> ByteBuffer {
        ByteBuffer(repeating: 0x61, count: count)
    }

    @Test func aRequestIsAnsweredFromItsHeadAndTheNextOnlyAfterTheAnswer() {
        var machine = Machine(bodyLimit: 16)
        #expect(machine.read(.head(Self.post)) == .answer(Self.post, body: true))
        #expect(machine.read(.body(ByteBuffer(string: "{\"a\":"))) == .pass(ByteBuffer(string: "{\"a\":")))
        #expect(machine.read(.body(ByteBuffer(string: "1}"))) == .pass(ByteBuffer(string: "1}")))
        #expect(machine.read(.end(nil)) == .endBody)
        #expect(machine.answered() == false)
        #expect(machine.read(.head(Self.get)) == .answer(Self.get, body: false))
        #expect(machine.read(.end(nil)) == .endBody)
    }

    @Test func overHTTP2EveryRequestMayHaveABody() {
        var machine = Machine(bodyLimit: 16)
        let head = HTTPRequestHead(version: .init(major: 2, minor: 0), method: .POST, uri: "/nowhere")
        #expect(machine.read(.head(head)) == .answer(head, body: true))
    }

    @Test(arguments: [[40], [10, 10, 10, 10], [16, 1, 5], [17, 3], [3, 20]])
    func aLongBodyIsPassedOnToOneByteOverTheLimit(chunks: [Int]) {
        var machine = Machine(bodyLimit: 16)
        _ = machine.read(.head(Self.post))
        var passed = 0
        for chunk in chunks {
            if case .pass(let part) = machine.read(.body(Self.bytes(chunk))) { passed += part.readableBytes }
        }
        #expect(passed == 17)
        #expect(machine.read(.end(nil)) == .endBody)
    }

    @Test func theRestOfABodyAfterTheAnswerIsDiscardedThenTheNextRequestComes() {
        var machine = Machine(bodyLimit: 16)
        _ = machine.read(.head(Self.post))
        _ = machine.read(.body(Self.bytes(3)))
        #expect(machine.answered() == false)
        #expect(machine.read(.body(Self.bytes(4))) == .none)
        #expect(machine.read(.end(nil)) == .none)
        #expect(machine.read(.head(Self.get)) == .answer(Self.get, body: false))
    }

    /// Parts out of turn are illegal (counted here; a debug build stops): a release build
    /// closes, once.
    @Test func aPartOutOfTurnClosesOnceAndNothingIsAnsweredAfter() {
        var answering = Machine(bodyLimit: 16, check: .counting)
        _ = answering.read(.head(Self.get))
        _ = answering.read(.end(nil))
        #expect(answering.read(.head(Self.get)) == .close)
        #expect(answering.read(.head(Self.get)) == .none)
        #expect(answering.illegalInputs == 1)

        var idle = Machine(bodyLimit: 16, check: .counting)
        #expect(idle.read(.body(Self.bytes(1))) == .close)
        #expect(idle.illegalInputs == 1)

        var draining = Machine(bodyLimit: 16, check: .counting)
        _ = draining.read(.head(Self.post))
        _ = draining.answered()
        #expect(draining.read(.head(Self.get)) == .close)
        #expect(draining.illegalInputs == 1)
    }

    @Test func inputGoneBadIsRefusedBetweenRequestsAndClosesAfterTheAnswerWithin() {
        var idle = Machine(bodyLimit: 16)
        #expect(idle.failed() == .refuse)
        #expect(idle.failed() == .none)

        var receiving = Machine(bodyLimit: 16)
        _ = receiving.read(.head(Self.post))
        #expect(receiving.failed() == .failBody)
        var answered = receiving
        #expect(answered.answered() == true)
        #expect(receiving.read(.body(Self.bytes(1))) == .close)

        var received = Machine(bodyLimit: 16)
        _ = received.read(.head(Self.get))
        _ = received.read(.end(nil))
        #expect(received.failed() == .none)
        #expect(received.answered() == true)

        var draining = Machine(bodyLimit: 16)
        _ = draining.read(.head(Self.post))
        _ = draining.answered()
        #expect(draining.failed() == .close)
    }

    @Test func aClosedConnectionAnswersNothingMore() {
        var machine = Machine(bodyLimit: 16)
        _ = machine.read(.head(Self.post))
        machine.closed()
        #expect(machine.read(.end(nil)) == .none)
        #expect(machine.answered() == false)
        #expect(machine.read(.head(Self.get)) == .none)
    }

    // MARK: Every input in every state

    enum Input: String, StateMachineTableInput {
        /// A `POST` declaring a body.
        case head
        /// 5 bytes of body, and 20 (over the limit of 16).
        case body, bigBody
        case end, failed, answered, closed

        func apply(to machine: inout Machine) -> String {
            switch self {
            case .head: return Self.describe(machine.read(.head(post)))
            case .body: return Self.describe(machine.read(.body(bytes(5))))
            case .bigBody: return Self.describe(machine.read(.body(bytes(20))))
            case .end: return Self.describe(machine.read(.end(nil)))
            case .failed:
                return switch machine.failed() {
                case .none: "-"
                case .refuse: "refuse"
                case .failBody: "failBody"
                case .close: "close"
                }
            case .answered: return machine.answered() ? "close after" : "-"
            case .closed:
                machine.closed()
                return "-"
            }
        }

        private static func describe(_ action: Machine.ReadAction) -> String {
            switch action {
            case .none: "-"
            case .answer(_, let body): body ? "answer" : "answer bodiless"
            case .pass(let part): "pass \(part.readableBytes)"
            case .endBody: "endBody"
            case .close: "close"
            }
        }
    }

    /// Every state, each by a path of legal inputs: between requests, the body coming (below
    /// the limit or past it), the request ended, the input gone bad, the rest of a body
    /// discarded after the answer, and closed.
    static let states: [(name: String, path: [Input])] = [
        ("idle", []),
        ("receiving", [.head]),
        ("receiving, full", [.head, .bigBody]),
        ("received", [.head, .end]),
        ("failing", [.head, .failed]),
        ("draining", [.head, .answered]),
        ("closed", [.closed]),
    ]

    /// The state's kind, as the table names it.
    static func kind(_ machine: Machine) -> String {
        switch machine.state {
        case .idle: "idle"
        case .receiving(let kept): kept > machine.bodyLimit ? "receiving, full" : "receiving"
        case .received: "received"
        case .failing: "failing"
        case .draining: "draining"
        case .closed: "closed"
        }
    }

    /// Per state, per input: "action → next state", `✗` first when the input is illegal there.
    static let table: [String: [Input: String]] = [
        "idle": [
            .head: "answer → receiving",
            .body: "✗ close → closed",
            .bigBody: "✗ close → closed",
            .end: "✗ close → closed",
            .failed: "refuse → closed",
            .answered: "✗ - → idle",
            .closed: "- → closed",
        ],
        "receiving": [
            .head: "✗ close → closed",
            .body: "pass 5 → receiving",
            .bigBody: "pass 17 → receiving, full",
            .end: "endBody → received",
            .failed: "failBody → failing",
            .answered: "- → draining",
            .closed: "- → closed",
        ],
        "receiving, full": [
            .head: "✗ close → closed",
            .body: "- → receiving, full",
            .bigBody: "- → receiving, full",
            .end: "endBody → received",
            .failed: "failBody → failing",
            .answered: "- → draining",
            .closed: "- → closed",
        ],
        "received": [
            .head: "✗ close → closed",
            .body: "✗ close → closed",
            .bigBody: "✗ close → closed",
            .end: "✗ close → closed",
            .failed: "- → failing",
            .answered: "- → idle",
            .closed: "- → closed",
        ],
        "failing": [
            .head: "close → closed",
            .body: "close → closed",
            .bigBody: "close → closed",
            .end: "close → closed",
            .failed: "- → failing",
            .answered: "close after → closed",
            .closed: "- → closed",
        ],
        "draining": [
            .head: "✗ close → closed",
            .body: "- → draining",
            .bigBody: "- → draining",
            .end: "- → idle",
            .failed: "close → closed",
            .answered: "✗ - → draining",
            .closed: "- → closed",
        ],
        "closed": [
            .head: "- → closed",
            .body: "- → closed",
            .bigBody: "- → closed",
            .end: "- → closed",
            .failed: "- → closed",
            .answered: "- → closed",
            .closed: "- → closed",
        ],
    ]

    /// 7 states × 7 inputs.
    @Test func everyInputInEveryStateIsDecided() {
        let pairs = StateMachineTable<Machine, Input>.check(
            Self.table, paths: Self.states, from: { Machine(bodyLimit: 16, check: .counting) }, illegalInputs: \.illegalInputs, kind: Self.kind
        )
        #expect(pairs == 49)
    }

    @Test func theDateIsInTheIMFFixdateForm() {
        #expect(ResponseDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(ResponseDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
    }
}
