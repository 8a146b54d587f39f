@testable import GatewayServer
import NIOCore
import NIOHTTP1
@testable import PartnerGateway
import Testing

/// How the endpoints' responder takes requests, without sockets: answered from the head, the
/// body passed on up to one byte over what the endpoints read, the rest of a body discarded
/// after the answer, the next request only after both, a part out of turn closing, and input
/// gone bad refused or closing after the answer.
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

    @Test func aPartOutOfTurnClosesOnceAndNothingIsAnsweredAfter() {
        var answering = Machine(bodyLimit: 16)
        _ = answering.read(.head(Self.get))
        _ = answering.read(.end(nil))
        #expect(answering.read(.head(Self.get)) == .close)
        #expect(answering.read(.head(Self.get)) == .none)

        var idle = Machine(bodyLimit: 16)
        #expect(idle.read(.body(Self.bytes(1))) == .close)

        var draining = Machine(bodyLimit: 16)
        _ = draining.read(.head(Self.post))
        _ = draining.answered()
        #expect(draining.read(.head(Self.get)) == .close)
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

    @Test func theDateIsInTheIMFFixdateForm() {
        #expect(ResponseDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(ResponseDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
    }
}
