import NIOCore
import Testing

@testable import GatewayEdge
@testable import PartnerGateway

/// ``ClientConnectionStateMachine``, ``HeadReadDeadline`` and ``BodyReadDeadline`` on their
/// own: events in, actions out, no channel and no clock but the instants the test passes.
@Suite("Client connection state machines")
struct ClientConnectionStateMachineTests {
    private static let refused = GatewayError.invalidRequest("two Authorization headers")

    @Test func aResponseWithoutKeepAliveClosesLingeringOnce() {
        var machine = ClientConnectionStateMachine()
        machine.headAdmitted(keepAlive: false)
        machine.responseHeadWritten(statusCode: 200)
        #expect(machine.responseEnded() == .flushThenLinger)
        let first = machine.startLingering()
        let second = machine.startLingering()
        #expect(first)
        #expect(!second, "a second lingering close was started")
        #expect(machine.discardsInput)
    }

    @Test func pipelinedRequestsKeepTheConnectionUntilTheOneThatCloses() {
        var machine = ClientConnectionStateMachine()
        machine.headAdmitted(keepAlive: true)
        machine.headAdmitted(keepAlive: false)
        machine.headAdmitted(keepAlive: true)
        #expect(machine.responseEnded() == .write)
        #expect(machine.responseEnded() == .flushThenLinger)
        let started = machine.startLingering()
        #expect(started)
        #expect(machine.discardsInput, "input after the closing request was still taken")
    }

    @Test func aRefusedHeadIsAnsweredAfterTheResponsesBeforeIt() {
        var machine = ClientConnectionStateMachine()
        machine.headAdmitted(keepAlive: true)
        machine.headAdmitted(keepAlive: true)
        #expect(machine.headRefused(Self.refused) == .none)
        #expect(machine.discardsInput)
        #expect(machine.responseEnded() == .write)
        #expect(machine.responseEnded() == .writeThenAnswerRefusal(Self.refused))
    }

    @Test func aRefusedHeadWithNothingInFlightIsAnsweredAtOnce() {
        var machine = ClientConnectionStateMachine()
        #expect(machine.headRefused(Self.refused) == .answerRefusal(Self.refused))
    }

    @Test func gracefulShutdownClosesWhenIdleElseAfterTheLastResponse() {
        var idle = ClientConnectionStateMachine()
        #expect(idle.quiesce() == .close)

        var busy = ClientConnectionStateMachine()
        busy.headAdmitted(keepAlive: true)
        busy.headAdmitted(keepAlive: true)
        #expect(busy.quiesce() == .none)
        #expect(busy.responseEnded() == .write)
        #expect(busy.responseEnded() == .flushThenClose)
    }

    @Test func aStalledBodyIsAnswered408OnlyBeforeItsResponseStarted() {
        var before = ClientConnectionStateMachine()
        before.headAdmitted(keepAlive: true)
        #expect(before.bodyTimedOut() == .answerAndClose(.requestTimeout))

        var after = ClientConnectionStateMachine()
        after.headAdmitted(keepAlive: true)
        after.responseHeadWritten(statusCode: 200)
        #expect(after.bodyTimedOut() == .close)

        var interim = ClientConnectionStateMachine()
        interim.headAdmitted(keepAlive: true)
        interim.responseHeadWritten(statusCode: 100)
        #expect(interim.bodyTimedOut() == .answerAndClose(.requestTimeout), "a 100 Continue counted as the answer")
    }

    @Test func theConnectionAnswersAtMostOneErrorOfItsOwn() {
        var machine = ClientConnectionStateMachine()
        guard case .answerAndClose = machine.parserFailed(headerOverflow: true) else {
            Issue.record("headers too large were not answered")
            return
        }
        #expect(machine.parserFailed(headerOverflow: false) == ClientConnectionStateMachine.Action.none)
        #expect(machine.headRefused(Self.refused) == .none)
    }

    @Test func aParserErrorInsideAnAnsweredRequestGoesToItsOwner() {
        var machine = ClientConnectionStateMachine()
        machine.headAdmitted(keepAlive: true)
        #expect(machine.parserFailed(headerOverflow: false) == nil)
    }

    @Test func theIdleDeadlineClosesOnlyWithNothingInFlight() {
        var machine = ClientConnectionStateMachine()
        #expect(machine.idleDeadlinePassed())
        machine.headAdmitted(keepAlive: true)
        #expect(!machine.idleDeadlinePassed())
        _ = machine.responseEnded()
        #expect(machine.idleDeadlinePassed())
    }

    // MARK: Head and body deadlines

    @Test func theFirstHeadIsTimedFromTheConnectionAndLaterOnesFromTheirFirstByte() {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var deadline = HeadReadDeadline(timeout: .seconds(2))
        #expect(deadline.connectionOpened(now: start) == .expire(at: start + .seconds(2)))
        #expect(deadline.bytesRead(now: start + .seconds(1)) == .keep, "a later byte of the same head moved its deadline")
        #expect(deadline.headArrived() == .clear)
        #expect(deadline.bytesRead(now: start + .seconds(3)) == .keep, "a body or pipelined bytes started a head clock")
        #expect(deadline.responseEnded(now: start + .seconds(4)) == .keep)
        #expect(deadline.bytesRead(now: start + .seconds(9)) == .expire(at: start + .seconds(11)))
    }

    @Test func aHeadStartedBeforeTheResponseEndedIsTimedFromThatEnd() {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var deadline = HeadReadDeadline(timeout: .seconds(2))
        _ = deadline.connectionOpened(now: start)
        _ = deadline.headArrived()
        #expect(deadline.bytesRead(now: start + .seconds(1)) == .keep, "the request's own body started a head clock")
        deadline.requestEnded()
        // The client had the whole answer and sent the next head's start before the answer's
        // end went through the pipeline.
        #expect(deadline.bytesRead(now: start + .seconds(2)) == .keep)
        #expect(deadline.responseEnded(now: start + .seconds(3)) == .expire(at: start + .seconds(5)))

        // A body read before the request's end never counts as the next request.
        var withBody = HeadReadDeadline(timeout: .seconds(2))
        _ = withBody.connectionOpened(now: start)
        _ = withBody.headArrived()
        _ = withBody.bytesRead(now: start + .seconds(1))
        withBody.requestEnded()
        #expect(withBody.responseEnded(now: start + .seconds(3)) == .keep, "an idle keep-alive connection got a head clock")
    }

    @Test func aProxiedBodyIsTimedBetweenReadsAndAnEndpointBodyAsAWhole() {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var proxied = BodyReadDeadline(timeout: .seconds(3))
        #expect(proxied.headRead(hasBody: true, limit: .betweenReads, now: start) == .expire(at: start + .seconds(3)))
        #expect(proxied.bodyRead() == .clear)
        #expect(proxied.readRequested(now: start + .seconds(2)) == .expire(at: start + .seconds(5)))
        let proxiedPassed = proxied.deadlinePassed()
        #expect(proxiedPassed)

        var endpoint = BodyReadDeadline(timeout: .seconds(3))
        #expect(endpoint.headRead(hasBody: true, limit: .wholeBody, now: start) == .expire(at: start + .seconds(3)))
        #expect(endpoint.bodyRead() == .keep)
        #expect(endpoint.readRequested(now: start + .seconds(2)) == .expire(at: start + .seconds(3)))
        #expect(endpoint.bodyEnded() == .clear)
        let endpointPassed = endpoint.deadlinePassed()
        #expect(!endpointPassed, "an ended body timed out")
    }

    @Test func aProxiedBodyIsNotTimedWhileTheGatewayIsNotReading() {
        var deadline = BodyReadDeadline(timeout: .seconds(3))
        _ = deadline.headRead(hasBody: true, limit: .betweenReads, now: .uptimeNanoseconds(0))
        _ = deadline.bodyRead()
        let passed = deadline.deadlinePassed()
        #expect(!passed, "timed out while the gateway was not asking for more")
    }
}
