import NIOCore
import NIOHTTP1
@testable import GatewayEdge
@testable import GatewayProxy
import Testing

/// Every input in every state of ``ProxyExchange/StateMachine``: what it answers, where it
/// leaves the machine, and whether the machine calls it illegal. Illegal inputs are checked for
/// their release answer: each machine here is made with ``IllegalInputCheck/counting``, which
/// counts them instead of stopping at the assertion.
extension ProxyExchangeStateMachineTests {
    /// Where a machine is: its state, with the steps and response states that answer inputs
    /// differently.
    enum Phase: String, CaseIterable, CustomStringConvertible {
        case admitting, picking, retrying, acquiring, waitingForHead, streaming, ending, finished
        var description: String { rawValue }

        init(_ state: Machine.State) {
            switch state {
            case .admitting: self = .admitting
            case .connecting(let connecting):
                switch connecting.step {
                case .picking(after: nil): self = .picking
                case .picking(after: .some): self = .retrying
                case .acquiring: self = .acquiring
                }
            case .forwarding(let forwarding):
                switch forwarding.response {
                case .waitingForHead: self = .waitingForHead
                case .streaming: self = .streaming
                case .ending: self = .ending
                }
            case .finished: self = .finished
            }
        }
    }

    /// What an input returned.
    enum Answer: Equatable {
        case action(Machine.Action)
        case part(Machine.Action?)
        case bool(Bool)
        case nothing
    }

    /// A `PUT` with a body on a fleet of several targets, brought to `phase` by legal inputs.
    static func machine(in phase: Phase) -> Machine {
        var machine = Machine(
            method: .PUT, hasBody: true, maxBodyBytes: 100, retries: .init(attempts: 2, otherTargets: true), check: .counting
        )
        guard phase != .admitting else { return machine }
        _ = machine.admitted(declaredLength: nil)
        guard phase != .picking else { return machine }
        _ = machine.picked(target: 0)
        if phase == .retrying {
            _ = machine.upstreamFailed(.refused)
            return machine
        }
        guard phase != .acquiring else { return machine }
        _ = machine.connected(reused: false)
        guard phase != .waitingForHead else { return machine }
        _ = machine.upstreamHead(status: 200)
        guard phase != .streaming else { return machine }
        _ = machine.upstreamEnd()
        guard phase != .ending else { return machine }
        machine.responseEnded()
        return machine
    }

    /// One pair's expectation: the answer, the phase after, and whether the input is illegal there.
    struct Expected {
        var answer: Answer
        var then: Phase?
        var illegal: Bool
    }

    /// Legal here; `then` nil: the phase does not change.
    static func legal(_ answer: Answer, _ then: Phase? = nil) -> Expected { Expected(answer: answer, then: then, illegal: false) }
    /// Illegal here, answered `answer` in release builds.
    static func illegal(_ answer: Answer, _ then: Phase? = nil) -> Expected { Expected(answer: answer, then: then, illegal: true) }

    struct Input: CustomStringConvertible {
        var description: String
        var apply: @Sendable (inout Machine) -> Answer
        /// By phase, in ``Phase/allCases`` order.
        var expected: [Expected]
    }

    static var failed: Machine.Action { .fail(.upstreamUnavailable, closeAfter: false, failure: "malformed", report: .failed) }
    static var broken: GatewayError { .invalidRequest("the request body is malformed or incomplete") }

    /// Rows: inputs; columns: admitting, picking, retrying, acquiring, waitingForHead, streaming,
    /// ending, finished.
    static var table: [Input] { [
        Input(description: "admissionPending()", apply: { .action($0.admissionPending()) }, expected: [
            legal(.action(.pauseRequestBody)), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)),
            illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), legal(.action(.none)),
        ]),
        Input(description: "admitted(declaredLength:)", apply: { .action($0.admitted(declaredLength: nil)) }, expected: [
            legal(.action(.pickTarget), .picking), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)),
            illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), legal(.action(.none)),
        ]),
        Input(description: "answeredFromStore(status:)", apply: { .bool($0.answeredFromStore(status: 201)) }, expected: [
            legal(.bool(true), .finished), illegal(.bool(false)), illegal(.bool(false)), illegal(.bool(false)),
            illegal(.bool(false)), illegal(.bool(false)), illegal(.bool(false)), legal(.bool(false)),
        ]),
        Input(description: "admissionRefused(_:)", apply: { .action($0.admissionRefused(.invalidRequest("no"))) }, expected: [
            legal(.action(.fail(.invalidRequest("no"), closeAfter: false, failure: nil)), .finished), illegal(.action(.none)),
            illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)),
            legal(.action(.none)),
        ]),
        Input(description: "preflightAnswered()", apply: { .bool($0.preflightAnswered()) }, expected: [
            legal(.bool(true), .finished), illegal(.bool(false)), illegal(.bool(false)), illegal(.bool(false)),
            illegal(.bool(false)), illegal(.bool(false)), illegal(.bool(false)), legal(.bool(false)),
        ]),
        Input(description: "picked(target:)", apply: { .action($0.picked(target: 1)) }, expected: [
            illegal(.action(.none)), legal(.action(.acquireConnection), .acquiring), legal(.action(.acquireConnection), .acquiring),
            illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)),
        ]),
        Input(description: "noTarget()", apply: { .action($0.noTarget()) }, expected: [
            illegal(.action(.none)),
            legal(.action(.fail(.upstreamUnavailable, closeAfter: false, failure: "no_target")), .finished),
            legal(.action(.fail(.upstreamUnavailable, closeAfter: false, failure: "refused")), .finished),
            illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)),
        ]),
        Input(description: "retryRefused()", apply: { .action($0.retryRefused()) }, expected: [
            illegal(.action(.none)),
            illegal(.action(.fail(.upstreamUnavailable, closeAfter: false, failure: "no_target")), .finished),
            legal(.action(.fail(.upstreamUnavailable, closeAfter: false, failure: "refused")), .finished),
            illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)),
        ]),
        Input(description: "waitingForConnection()", apply: { .action($0.waitingForConnection()) }, expected: [
            illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), legal(.action(.pauseRequestBody)),
            illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)),
        ]),
        Input(description: "connected(reused:)", apply: { .action($0.connected(reused: false)) }, expected: [
            illegal(.action(.releaseUnusedConnection)), illegal(.action(.releaseUnusedConnection)),
            illegal(.action(.releaseUnusedConnection)), legal(.action(.sendHead(held: [])), .waitingForHead),
            illegal(.action(.releaseUnusedConnection)), illegal(.action(.releaseUnusedConnection)),
            illegal(.action(.releaseUnusedConnection)), legal(.action(.releaseUnusedConnection)),
        ]),
        Input(description: "headSent()", apply: { .action($0.headSent()) }, expected: [
            illegal(.action(.none)), legal(.action(.none)), legal(.action(.none)), legal(.action(.none)),
            legal(.action(.resumeRequestBody)), legal(.action(.resumeRequestBody)), legal(.action(.resumeRequestBody)), legal(.action(.none)),
        ]),
        Input(description: "requestPart(.head)", apply: { .action($0.requestPart(.head(HTTPRequestHead(version: .http1_1, method: .PUT, uri: "/")))) }, expected: [
            illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)),
            illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), legal(.action(.none)),
        ]),
        Input(description: "requestPart(.body)", apply: { .action($0.requestPart(.body(Self.chunk))) }, expected: [
            legal(.action(.none)), legal(.action(.none)), legal(.action(.none)), legal(.action(.none)),
            legal(.action(.sendBody(Self.chunk))), legal(.action(.sendBody(Self.chunk))), legal(.action(.sendBody(Self.chunk))),
            legal(.action(.none)),
        ]),
        Input(description: "requestPart(.end)", apply: { .action($0.requestPart(.end(nil))) }, expected: [
            legal(.action(.none)), legal(.action(.none)), legal(.action(.none)), legal(.action(.none)),
            legal(.action(.sendEnd)), legal(.action(.sendEnd)), legal(.action(.sendEnd)), legal(.action(.none)),
        ]),
        Input(description: "upstreamNotWritable()", apply: { .action($0.upstreamNotWritable()) }, expected: [
            illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)),
            legal(.action(.pauseRequestBody)), legal(.action(.pauseRequestBody)), legal(.action(.pauseRequestBody)), legal(.action(.none)),
        ]),
        Input(description: "upstreamWritable()", apply: { .action($0.upstreamWritable()) }, expected: [
            illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)),
            legal(.action(.none)), legal(.action(.none)), legal(.action(.none)), legal(.action(.none)),
        ]),
        Input(description: "clientFailed()", apply: { .action($0.clientFailed()) }, expected: [
            legal(.action(.fail(Self.broken, closeAfter: true, failure: "broken_request_body")), .finished),
            legal(.action(.fail(Self.broken, closeAfter: true, failure: "broken_request_body")), .finished),
            legal(.action(.fail(Self.broken, closeAfter: true, failure: "broken_request_body")), .finished),
            legal(.action(.fail(Self.broken, closeAfter: true, failure: "broken_request_body", report: .neutral)), .finished),
            legal(.action(.fail(Self.broken, closeAfter: true, failure: "broken_request_body", report: .neutral)), .finished),
            legal(.action(.abandon(failure: "broken_request_body")), .finished), legal(.action(.abandon(failure: "broken_request_body")), .finished),
            legal(.action(.none)),
        ]),
        Input(description: "clientClosed()", apply: { .action($0.clientClosed()) }, expected: [
            legal(.action(.clientGone()), .finished), legal(.action(.clientGone()), .finished), legal(.action(.clientGone()), .finished),
            legal(.action(.clientGone(report: .neutral)), .finished), legal(.action(.clientGone(report: .neutral)), .finished),
            legal(.action(.clientGone()), .finished), legal(.action(.none)), legal(.action(.none)),
        ]),
        Input(description: "upstreamHead(status: 200)", apply: { .part($0.upstreamHead(status: 200)) }, expected: [
            illegal(.part(nil)), illegal(.part(nil)), illegal(.part(nil)), illegal(.part(nil)),
            legal(.part(.writeResponseHead), .streaming), legal(.part(.abandon(failure: "malformed")), .finished),
            legal(.part(.abandon(failure: "malformed")), .finished), legal(.part(nil)),
        ]),
        Input(description: "upstreamHead(status: 101)", apply: { .part($0.upstreamHead(status: 101)) }, expected: [
            illegal(.part(nil)), illegal(.part(nil)), illegal(.part(nil)), illegal(.part(nil)),
            legal(.part(Self.failed), .finished), legal(.part(.abandon(failure: "malformed")), .finished),
            legal(.part(.abandon(failure: "malformed")), .finished), legal(.part(nil)),
        ]),
        Input(description: "upstreamBody(_:)", apply: { .part($0.upstreamBody(Self.chunk)) }, expected: [
            illegal(.part(nil)), illegal(.part(nil)), illegal(.part(nil)), illegal(.part(nil)),
            legal(.part(Self.failed), .finished), legal(.part(.writeResponseBody(Self.chunk))),
            legal(.part(.abandon(failure: "malformed")), .finished), legal(.part(nil)),
        ]),
        Input(description: "upstreamEnd()", apply: { .part($0.upstreamEnd()) }, expected: [
            illegal(.part(nil)), illegal(.part(nil)), illegal(.part(nil)), illegal(.part(nil)),
            legal(.part(Self.failed), .finished), legal(.part(.endResponse), .ending),
            legal(.part(.abandon(failure: "malformed")), .finished), legal(.part(nil)),
        ]),
        Input(description: "clientNotWritable()", apply: { $0.clientNotWritable(); return .nothing }, expected: [
            illegal(.nothing), illegal(.nothing), illegal(.nothing), illegal(.nothing),
            illegal(.nothing), legal(.nothing), illegal(.nothing), legal(.nothing),
        ]),
        // An event stream ended by the drain: only a response under way can end early.
        Input(description: "streamEndsEarly()", apply: { .bool($0.streamEndsEarly()) }, expected: [
            legal(.bool(false)), legal(.bool(false)), legal(.bool(false)), legal(.bool(false)),
            legal(.bool(false)), legal(.bool(true), .ending), legal(.bool(false)), legal(.bool(false)),
        ]),
        Input(description: "clientWritable()", apply: { .action($0.clientWritable()) }, expected: [
            legal(.action(.none)), legal(.action(.none)), legal(.action(.none)), legal(.action(.none)),
            legal(.action(.none)), legal(.action(.none)), legal(.action(.none)), legal(.action(.none)),
        ]),
        Input(description: "responseEnded()", apply: { $0.responseEnded(); return .nothing }, expected: [
            illegal(.nothing, .finished), illegal(.nothing, .finished), illegal(.nothing, .finished), illegal(.nothing, .finished),
            illegal(.nothing, .finished), illegal(.nothing, .finished), legal(.nothing, .finished), legal(.nothing),
        ]),
        Input(description: "upstreamFailed(.closed)", apply: { .action($0.upstreamFailed(.closed)) }, expected: [
            illegal(.action(.none)), illegal(.action(.none)), illegal(.action(.none)),
            legal(.action(.retry(excluding: TargetSet(bits: 1), report: .failed)), .retrying),
            legal(.action(.fail(.upstreamUnavailable, closeAfter: false, failure: "reset", report: .failed)), .finished),
            legal(.action(.abandon(failure: "reset")), .finished), legal(.action(.abandon(failure: "reset")), .finished),
            legal(.action(.none)),
        ]),
    ] }

    @Test func theTableHasEveryStateForEveryInput() {
        #expect(Self.table.count == 27)
        for input in Self.table {
            #expect(input.expected.count == Phase.allCases.count, "\(input)")
        }
    }

    @Test(arguments: Phase.allCases)
    func everyInputInState(_ phase: Phase) {
        for input in Self.table {
            let expected = input.expected[Phase.allCases.firstIndex(of: phase)!]
            var machine = Self.machine(in: phase)
            #expect(Phase(machine.state) == phase, "the setup reaches \(phase)")
            #expect(machine.illegalInputs == 0, "the setup of \(phase) is legal")
            let answer = input.apply(&machine)
            #expect(answer == expected.answer, "\(input) in \(phase)")
            #expect(Phase(machine.state) == expected.then ?? phase, "\(input) in \(phase) leaves the machine")
            #expect(machine.illegalInputs == (expected.illegal ? 1 : 0), "\(input) in \(phase): \(machine.illegalInputs) illegal inputs reported")
        }
    }
}
