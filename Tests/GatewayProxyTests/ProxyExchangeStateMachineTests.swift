import NIOCore
import NIOHTTP1
@testable import GatewayEdge
@testable import GatewayProxy
import Testing

/// Every path of one proxied request, decided by ``ProxyExchange/StateMachine`` without a
/// socket: admission, the target and the connection, the body held and sent, back-pressure both
/// ways, the retry rule, what the fleet is told, and the response to every failure. Every state
/// and input pair is in `ProxyExchangeStateMachineTests+Table.swift`.
@Suite("Proxy: the exchange's state machine (in memory)")
struct ProxyExchangeStateMachineTests {
    typealias Machine = ProxyExchange.StateMachine

    static let chunk = ByteBuffer(string: "hello")

    /// A machine for a `GET` without a body, admitted and forwarding on a connection.
    private static func forwardingGET(reused: Bool) -> Machine {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100)
        admit(&machine)
        #expect(machine.connected(reused: reused) == .sendHead(held: []))
        return machine
    }

    /// Admitted, with `target` picked for its first try: waiting for the connection.
    private static func admit(_ machine: inout Machine, target: Int = 0) {
        #expect(machine.admitted(declaredLength: nil) == .pickTarget)
        #expect(machine.picked(target: target) == .acquireConnection)
    }

    // MARK: Admission and the connection

    @Test func bodyPartsWaitForAdmissionAndTheConnectionThenGoInOrder() {
        var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 100)
        #expect(machine.admissionPending() == .pauseRequestBody)
        #expect(machine.requestPart(.body(Self.chunk)) == .none)
        #expect(machine.admitted(declaredLength: nil) == .pickTarget)
        #expect(machine.picked(target: 0) == .acquireConnection)
        #expect(machine.waitingForConnection() == .pauseRequestBody)
        #expect(machine.requestPart(.end(nil)) == .none)
        #expect(machine.connected(reused: false) == .sendHead(held: [.body(Self.chunk), .end(nil)]))
        #expect(machine.requestPart(.body(Self.chunk)) == .sendBody(Self.chunk))
        #expect(machine.requestPart(.end(nil)) == .sendEnd)
        #expect(machine.headSent() == .resumeRequestBody, "the body ended: read the next request")
        #expect(machine.bodyBytes == 5)
    }

    /// A request framed upstream as bodiless never has a body part written after its head, in
    /// whichever state the part arrives: it is answered `400` and the connection closed.
    @Test func aBodyPartOnARequestFramedAsBodilessIsNeverSent() {
        let refusal = Machine.Action.fail(
            .invalidRequest("the request carries a body its head did not declare"), closeAfter: true, failure: "undeclared_request_body"
        )
        let refusalWhileTrying = Machine.Action.fail(
            .invalidRequest("the request carries a body its head did not declare"), closeAfter: true, failure: "undeclared_request_body",
            report: .neutral
        )
        var admitting = Machine(method: .GET, hasBody: false, maxBodyBytes: 100)
        #expect(admitting.requestPart(.body(Self.chunk)) == refusal)
        #expect(admitting.isFinished)
        #expect(admitting.admitted(declaredLength: nil) == .none, "a refused request never asks for a connection")

        var connecting = Machine(method: .DELETE, hasBody: false, maxBodyBytes: 100)
        Self.admit(&connecting)
        #expect(connecting.requestPart(.body(Self.chunk)) == refusalWhileTrying, "the try says nothing about its target")
        #expect(connecting.connected(reused: false) == .releaseUnusedConnection)

        var forwarding = Self.forwardingGET(reused: false)
        #expect(forwarding.requestPart(.body(Self.chunk)) == refusalWhileTrying)
        #expect(forwarding.requestPart(.body(Self.chunk)) == .none, "nothing more after the refusal")
        #expect(forwarding.bodyBytes == 0)

        var answered = Self.forwardingGET(reused: false)
        #expect(answered.upstreamHead(status: 200) == .writeResponseHead)
        #expect(answered.requestPart(.body(Self.chunk)) == .abandon(failure: "undeclared_request_body"), "after the head: the response is cut")
    }

    @Test func aBodylessRequestEndsWithItsHead() {
        var machine = Self.forwardingGET(reused: false)
        #expect(machine.headSent() == .resumeRequestBody)
        #expect(machine.requestPart(.end(nil)) == .none, "the head ended it already")
    }

    @Test func theBodyResumesOnceTheHeadWent() {
        var machine = Machine(method: .PUT, hasBody: true, maxBodyBytes: 100)
        _ = machine.admitted(declaredLength: 10)
        _ = machine.picked(target: 0)
        _ = machine.connected(reused: true)
        #expect(machine.headSent() == .resumeRequestBody)
    }

    @Test func aRefusalIsAnsweredAndNothingElseHappens() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100)
        let refusal = GatewayError.invalidRequest("no")
        #expect(machine.admissionRefused(refusal) == .fail(refusal, closeAfter: false, failure: nil))
        #expect(machine.isFinished)
        #expect(machine.admitted(declaredLength: nil) == .none)
        #expect(machine.requestPart(.end(nil)) == .none)
        #expect(machine.clientClosed() == .none)
    }

    @Test func aDeclaredLengthOverTheLimitIs413BeforeAnyConnection() {
        var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 100)
        #expect(machine.admitted(declaredLength: 101) == .fail(.payloadTooLarge, closeAfter: false, failure: "body_too_large"))
        #expect(machine.isFinished)
    }

    @Test func aConnectionThatComesAfterTheEndGoesBackToThePoolUnused() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100)
        Self.admit(&machine)
        #expect(machine.clientClosed() == .clientGone(report: .neutral), "the try ends saying nothing about its target")
        #expect(machine.connected(reused: false) == .releaseUnusedConnection)
    }

    @Test func aRefusedConnectionIs502() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100)
        Self.admit(&machine)
        #expect(machine.upstreamFailed(.refused) == .fail(.upstreamUnavailable, closeAfter: false, failure: "refused", report: .failed))
        #expect(machine.isFinished)
        #expect(machine.tries == 1)
    }

    // MARK: The body limit and a broken body

    @Test func aBodyThatGrowsPastTheLimitIs413BeforeTheResponseAndACutAfterIt() {
        var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 8)
        Self.admit(&machine)
        _ = machine.connected(reused: false)
        #expect(machine.requestPart(.body(Self.chunk)) == .sendBody(Self.chunk))
        #expect(machine.requestPart(.body(Self.chunk)) == .fail(.payloadTooLarge, closeAfter: false, failure: "body_too_large", report: .neutral))

        var answered = Machine(method: .POST, hasBody: true, maxBodyBytes: 8)
        Self.admit(&answered)
        _ = answered.connected(reused: false)
        #expect(answered.upstreamHead(status: 200) == .writeResponseHead)
        _ = answered.requestPart(.body(Self.chunk))
        #expect(answered.requestPart(.body(Self.chunk)) == .abandon(failure: "body_too_large"))
    }

    @Test func aBrokenRequestBodyIs400AndClosesOrCutsTheResponse() {
        var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 100)
        _ = machine.admitted(declaredLength: nil)
        #expect(machine.clientFailed() == .fail(.invalidRequest("the request body is malformed or incomplete"), closeAfter: true, failure: "broken_request_body"))

        var answered = Machine(method: .POST, hasBody: true, maxBodyBytes: 100)
        Self.admit(&answered)
        _ = answered.connected(reused: false)
        _ = answered.upstreamHead(status: 200)
        #expect(answered.clientFailed() == .abandon(failure: "broken_request_body"))
        #expect(answered.clientFailed() == .none, "once over, nothing more")
    }

    // MARK: Back-pressure

    @Test func theClientsBodyPausesWhileTheUpstreamCannotTakeMore() {
        var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 100)
        Self.admit(&machine)
        _ = machine.connected(reused: false)
        #expect(machine.upstreamWritable() == .none, "not paused")
        #expect(machine.upstreamNotWritable() == .pauseRequestBody)
        #expect(machine.headSent() == .none, "still paused: the head's resume waits for writability")
        #expect(machine.upstreamWritable() == .resumeRequestBody)
        #expect(machine.upstreamWritable() == .none)
        _ = machine.requestPart(.end(nil))
        #expect(machine.upstreamNotWritable() == .none, "the body ended: nothing to pause")
    }

    /// Parts read before a pause took hold still arrive; the end among them must not leave
    /// the client paused for good.
    @Test func theEndArrivingWhilePausedStillResumesTheClient() {
        var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 100)
        Self.admit(&machine)
        _ = machine.connected(reused: false)
        #expect(machine.upstreamNotWritable() == .pauseRequestBody)
        #expect(machine.requestPart(.end(nil)) == .sendEnd)
        #expect(machine.upstreamWritable() == .resumeRequestBody)
    }

    @Test func theUpstreamsResponsePausesWhileTheClientCannotTakeMore() {
        var machine = Self.forwardingGET(reused: false)
        #expect(machine.upstreamHead(status: 200) == .writeResponseHead)
        #expect(machine.clientWritable() == .none, "not paused")
        #expect(machine.upstreamBody(Self.chunk) == .writeResponseBody(Self.chunk))
        machine.clientNotWritable()
        #expect(machine.awaitingClient)
        #expect(machine.clientWritable() == .resumeUpstream)
        #expect(!machine.awaitingClient)
        #expect(machine.upstreamEnd() == .endResponse)
        #expect(machine.status == 200)
        #expect(machine.clientClosed() == .none, "closing as the end is written is not the client going away")
        machine.responseEnded()
        #expect(machine.isFinished)
    }

    // MARK: Upstream failures and the retry rule

    @Test func aStaleReusedConnectionIsRetriedOnceForABodylessIdempotentRequest() {
        var machine = Self.forwardingGET(reused: true)
        #expect(machine.upstreamFailed(.closed) == .retry(excluding: TargetSet(), report: .failed), "the one target again")
        #expect(machine.picked(target: 0) == .acquireConnection)
        #expect(machine.connected(reused: true) == .sendHead(held: []))
        #expect(machine.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset", report: .failed), "never twice")
        #expect(machine.tries == 2)
    }

    @Test(arguments: [HTTPMethod.GET, .HEAD, .OPTIONS, .DELETE, .PUT])
    func idempotentMethodsAreRetried(method: HTTPMethod) {
        var machine = Machine(method: method, hasBody: false, maxBodyBytes: 100)
        Self.admit(&machine)
        _ = machine.connected(reused: true)
        #expect(machine.upstreamFailed(.closed) == .retry(excluding: TargetSet(), report: .failed))
    }

    @Test func nothingElseIsRetried() {
        // A POST: it may have been acted on.
        var post = Machine(method: .POST, hasBody: false, maxBodyBytes: 100)
        Self.admit(&post)
        _ = post.connected(reused: true)
        #expect(post.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset", report: .failed))
        // A body: it cannot be sent again.
        var put = Machine(method: .PUT, hasBody: true, maxBodyBytes: 100)
        Self.admit(&put)
        _ = put.connected(reused: true)
        #expect(put.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset", report: .failed))
        // A new connection: the upstream really closed it.
        var fresh = Self.forwardingGET(reused: false)
        #expect(fresh.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset", report: .failed))
        // A timeout or a malformed answer: not a stale connection. A timeout says nothing of
        // the target's health.
        var slow = Self.forwardingGET(reused: true)
        #expect(slow.upstreamFailed(.timeout) == .fail(.upstreamTimeout, closeAfter: false, failure: "timeout", report: .neutral))
        var broken = Self.forwardingGET(reused: true)
        #expect(broken.upstreamFailed(.malformedResponse) == .fail(.upstreamUnavailable, closeAfter: false, failure: "malformed", report: .failed))
        // A response had started.
        var started = Self.forwardingGET(reused: true)
        _ = started.upstreamHead(status: 200)
        #expect(started.upstreamFailed(.closed) == .abandon(failure: "reset"))
    }

    // MARK: Retries on a fleet of targets

    private static let fleet = Machine.RetryPolicy(attempts: 2, otherTargets: true)

    /// Not sent: any method goes to another target, its held body with it.
    @Test func anUnsentRequestGoesToAnotherTargetWhateverItsMethod() {
        var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 100, retries: Self.fleet)
        Self.admit(&machine, target: 2)
        _ = machine.requestPart(.body(Self.chunk))
        #expect(machine.upstreamFailed(.refused) == .retry(excluding: TargetSet(bits: 0b100), report: .failed))
        #expect(machine.tries == 1)
        #expect(machine.picked(target: 0) == .acquireConnection)
        #expect(machine.tries == 2)
        _ = machine.requestPart(.end(nil))
        #expect(machine.connected(reused: false) == .sendHead(held: [.body(Self.chunk), .end(nil)]))
    }

    /// Each retry excludes every target tried so far.
    @Test func atMostAttemptsFurtherTries() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, retries: Self.fleet)
        Self.admit(&machine, target: 0)
        #expect(machine.upstreamFailed(.refused) == .retry(excluding: TargetSet(bits: 0b1), report: .failed))
        #expect(machine.picked(target: 1) == .acquireConnection)
        _ = machine.connected(reused: false)
        #expect(machine.upstreamFailed(.closed) == .retry(excluding: TargetSet(bits: 0b11), report: .failed), "sent on a new connection: retried on a fleet")
        #expect(machine.picked(target: 2) == .acquireConnection)
        #expect(machine.upstreamFailed(.refused) == .fail(.upstreamUnavailable, closeAfter: false, failure: "refused", report: .failed))
        #expect(machine.tries == 3)
    }

    /// Sent: only an idempotent request without a body, and only before any answer.
    @Test func aSentRequestIsRetriedOnlyWhenThatIsSafe() {
        var post = Machine(method: .POST, hasBody: false, maxBodyBytes: 100, retries: Self.fleet)
        Self.admit(&post)
        _ = post.connected(reused: false)
        #expect(post.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset", report: .failed))
        var put = Machine(method: .PUT, hasBody: true, maxBodyBytes: 100, retries: Self.fleet)
        Self.admit(&put)
        _ = put.connected(reused: true)
        #expect(put.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset", report: .failed))
        var slow = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, retries: Self.fleet)
        Self.admit(&slow)
        _ = slow.connected(reused: false)
        #expect(slow.upstreamFailed(.timeout) == .fail(.upstreamTimeout, closeAfter: false, failure: "timeout", report: .neutral))
        var started = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, retries: Self.fleet)
        Self.admit(&started)
        _ = started.connected(reused: false)
        _ = started.upstreamHead(status: 200)
        #expect(started.upstreamFailed(.closed) == .abandon(failure: "reset"))
    }

    @Test func noRetriesWhenAttemptsIsZero() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, retries: .init(attempts: 0, otherTargets: true))
        Self.admit(&machine)
        #expect(machine.upstreamFailed(.refused) == .fail(.upstreamUnavailable, closeAfter: false, failure: "refused", report: .failed))
        var single = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, retries: .init(attempts: 0, otherTargets: false))
        Self.admit(&single)
        _ = single.connected(reused: true)
        #expect(single.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset", report: .failed))
    }

    /// On one target a refused connection is not tried again.
    @Test func aSingleTargetIsNotRetriedAfterARefusal() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100)
        Self.admit(&machine)
        #expect(machine.upstreamFailed(.refused) == .fail(.upstreamUnavailable, closeAfter: false, failure: "refused", report: .failed))
    }

    /// The retry could not be had (the budget is spent): the failure it was to make up for is
    /// answered; the fleet was told of it when the retry was decided.
    @Test func aRefusedRetryAnswersTheFailure() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, retries: Self.fleet)
        Self.admit(&machine)
        #expect(machine.upstreamFailed(.timeout) == .retry(excluding: TargetSet(bits: 1), report: .neutral))
        #expect(machine.retryRefused() == .fail(.upstreamTimeout, closeAfter: false, failure: "timeout"))
        #expect(machine.isFinished)
        #expect(machine.tries == 1)
    }

    @Test func noTargetIsAnsweredAtOnce() {
        var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 100, retries: Self.fleet)
        #expect(machine.admitted(declaredLength: nil) == .pickTarget)
        #expect(machine.noTarget() == .fail(.upstreamUnavailable, closeAfter: false, failure: "no_target"))
        #expect(machine.isFinished)
        #expect(machine.tries == 0)
    }

    /// No target left for a retry (all tried, ejected or unhealthy): the failure it was to make
    /// up for is answered, not `no_target`.
    @Test func noTargetForARetryAnswersTheFailure() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, retries: Self.fleet)
        Self.admit(&machine)
        #expect(machine.upstreamFailed(.refused) == .retry(excluding: TargetSet(bits: 1), report: .failed))
        #expect(machine.noTarget() == .fail(.upstreamUnavailable, closeAfter: false, failure: "refused"))
        #expect(machine.tries == 1)
    }

    /// The fleet hears of each try once: its answer (``Machine/Action/writeResponseHead``) or
    /// its failure, or that it says nothing when the request ended otherwise.
    @Test func theFleetIsToldOfEachTryOnce() {
        var answered = Self.forwardingGET(reused: false)
        #expect(answered.upstreamHead(status: 503) == .writeResponseHead)
        #expect(answered.clientClosed() == .clientGone(), "told at the head: nothing more")
        var waiting = Self.forwardingGET(reused: false)
        #expect(waiting.clientClosed() == .clientGone(report: .neutral))
        var admitting = Machine(method: .GET, hasBody: false, maxBodyBytes: 100)
        #expect(admitting.clientClosed() == .clientGone(), "no try yet")
        var broken = Machine(method: .POST, hasBody: true, maxBodyBytes: 100)
        #expect(broken.admitted(declaredLength: nil) == .pickTarget)
        #expect(broken.clientFailed() == .fail(
            .invalidRequest("the request body is malformed or incomplete"), closeAfter: true, failure: "broken_request_body"
        ), "picking: no try under way")
    }

    @Test func aFailureMidResponseCutsTheClientsConnection() {
        var machine = Self.forwardingGET(reused: false)
        _ = machine.upstreamHead(status: 200)
        _ = machine.upstreamBody(Self.chunk)
        #expect(machine.upstreamFailed(.timeout) == .abandon(failure: "timeout"))
        #expect(machine.isFinished)
        #expect(machine.status == 200, "the status the client saw is kept for the record")
        #expect(machine.tries == 1)
        #expect(machine.upstreamFailed(.closed) == .none)
    }

    @Test func partsOutOfOrderFromTheUpstreamAreMalformed() {
        var bodyFirst = Self.forwardingGET(reused: false)
        #expect(bodyFirst.upstreamBody(Self.chunk) == .fail(.upstreamUnavailable, closeAfter: false, failure: "malformed", report: .failed))
        var twoHeads = Self.forwardingGET(reused: false)
        _ = twoHeads.upstreamHead(status: 200)
        #expect(twoHeads.upstreamHead(status: 200) == .abandon(failure: "malformed"))
        var endFirst = Self.forwardingGET(reused: true)
        #expect(endFirst.upstreamEnd() == .fail(.upstreamUnavailable, closeAfter: false, failure: "malformed", report: .failed))
    }

    @Test func partsForAnExchangeThatIsNotForwardingAreRefused() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100)
        _ = machine.clientClosed()
        #expect(machine.upstreamHead(status: 200) == nil)
        #expect(machine.upstreamBody(Self.chunk) == nil)
        #expect(machine.upstreamEnd() == nil)
    }

    /// Only a handshake's route may switch protocols, and only once the request ended; the
    /// fleet hears the `101` as an answer.
    @Test func aWebSocketHandshakeUpgrades() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, upgrade: true)
        Self.admit(&machine)
        _ = machine.connected(reused: false)
        #expect(machine.upstreamHead(status: 101) == .upgrade)
        #expect(machine.status == 101 && machine.isFinished)
        var unasked = Self.forwardingGET(reused: false)
        #expect(unasked.upstreamHead(status: 101) == .fail(.upstreamUnavailable, closeAfter: false, failure: "malformed", report: .failed))
    }

    @Test func theClientGoingAwayAbortsWhateverIsUnderWay() {
        for steps in 0...3 {
            var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 100)
            if steps >= 1 { Self.admit(&machine) }
            if steps >= 2 { _ = machine.connected(reused: false) }
            if steps >= 3 { _ = machine.upstreamHead(status: 200) }
            let report: UpstreamFleet.Outcome? = steps == 1 || steps == 2 ? .neutral : nil
            #expect(machine.clientClosed() == .clientGone(report: report), "after \(steps) steps")
            #expect(machine.clientClosed() == .none)
            #expect(machine.requestPart(.body(Self.chunk)) == .none)
        }
    }
}
