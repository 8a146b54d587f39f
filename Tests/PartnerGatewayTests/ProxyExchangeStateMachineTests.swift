import NIOCore
import NIOHTTP1
@testable import GatewayEdge
@testable import GatewayProxy
@testable import PartnerGateway
import Testing

/// Every path of one proxied request, decided by ``ProxyExchange/StateMachine`` without a
/// socket: admission, the connection, the body held and sent, back-pressure both ways, the
/// retry rule and the response to every failure.
@Suite("Proxy: the exchange's state machine (in memory)")
struct ProxyExchangeStateMachineTests {
    typealias Machine = ProxyExchange.StateMachine

    private static let chunk = ByteBuffer(string: "hello")

    /// A machine for a `GET` without a body, admitted and forwarding on a connection.
    private static func forwardingGET(reused: Bool) -> Machine {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100)
        #expect(machine.admitted(declaredLength: nil) == .acquireConnection)
        #expect(machine.connected(reused: reused) == .sendHead(held: []))
        return machine
    }

    // MARK: Admission and the connection

    @Test func bodyPartsWaitForAdmissionAndTheConnectionThenGoInOrder() {
        var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 100)
        #expect(machine.admissionPending() == .pauseRequestBody)
        #expect(machine.requestPart(.body(Self.chunk)) == .none)
        #expect(machine.admitted(declaredLength: nil) == .acquireConnection)
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
        var admitting = Machine(method: .GET, hasBody: false, maxBodyBytes: 100)
        #expect(admitting.requestPart(.body(Self.chunk)) == refusal)
        #expect(admitting.isFinished)
        #expect(admitting.admitted(declaredLength: nil) == .none, "a refused request never asks for a connection")

        var connecting = Machine(method: .DELETE, hasBody: false, maxBodyBytes: 100)
        #expect(connecting.admitted(declaredLength: nil) == .acquireConnection)
        #expect(connecting.requestPart(.body(Self.chunk)) == refusal)
        #expect(connecting.connected(reused: false) == .releaseUnusedConnection)

        var forwarding = Self.forwardingGET(reused: false)
        #expect(forwarding.requestPart(.body(Self.chunk)) == refusal)
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
        _ = machine.admitted(declaredLength: nil)
        #expect(machine.clientClosed() == .clientGone)
        #expect(machine.connected(reused: false) == .releaseUnusedConnection)
    }

    @Test func aRefusedConnectionIs502() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100)
        _ = machine.admitted(declaredLength: nil)
        #expect(machine.upstreamFailed(.refused) == .fail(.upstreamUnavailable, closeAfter: false, failure: "refused"))
        #expect(machine.isFinished)
    }

    // MARK: The body limit and a broken body

    @Test func aBodyThatGrowsPastTheLimitIs413BeforeTheResponseAndACutAfterIt() {
        var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 8)
        _ = machine.admitted(declaredLength: nil)
        _ = machine.connected(reused: false)
        #expect(machine.requestPart(.body(Self.chunk)) == .sendBody(Self.chunk))
        #expect(machine.requestPart(.body(Self.chunk)) == .fail(.payloadTooLarge, closeAfter: false, failure: "body_too_large"))

        var answered = Machine(method: .POST, hasBody: true, maxBodyBytes: 8)
        _ = answered.admitted(declaredLength: nil)
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
        _ = answered.admitted(declaredLength: nil)
        _ = answered.connected(reused: false)
        _ = answered.upstreamHead(status: 200)
        #expect(answered.clientFailed() == .abandon(failure: "broken_request_body"))
        #expect(answered.clientFailed() == .none, "once over, nothing more")
    }

    // MARK: Back-pressure

    @Test func theClientsBodyPausesWhileTheUpstreamCannotTakeMore() {
        var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 100)
        _ = machine.admitted(declaredLength: nil)
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
        _ = machine.admitted(declaredLength: nil)
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
        #expect(machine.upstreamFailed(.closed) == .retry)
        #expect(machine.connected(reused: true) == .sendHead(held: []))
        #expect(machine.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset"), "never twice")
    }

    @Test(arguments: [HTTPMethod.GET, .HEAD, .OPTIONS, .DELETE, .PUT])
    func idempotentMethodsAreRetried(method: HTTPMethod) {
        var machine = Machine(method: method, hasBody: false, maxBodyBytes: 100)
        _ = machine.admitted(declaredLength: nil)
        _ = machine.connected(reused: true)
        #expect(machine.upstreamFailed(.closed) == .retry)
    }

    @Test func nothingElseIsRetried() {
        // A POST: it may have been acted on.
        var post = Machine(method: .POST, hasBody: false, maxBodyBytes: 100)
        _ = post.admitted(declaredLength: nil)
        _ = post.connected(reused: true)
        #expect(post.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset"))
        // A body: it cannot be sent again.
        var put = Machine(method: .PUT, hasBody: true, maxBodyBytes: 100)
        _ = put.admitted(declaredLength: nil)
        _ = put.connected(reused: true)
        #expect(put.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset"))
        // A new connection: the upstream really closed it.
        var fresh = Self.forwardingGET(reused: false)
        #expect(fresh.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset"))
        // A timeout or a malformed answer: not a stale connection.
        var slow = Self.forwardingGET(reused: true)
        #expect(slow.upstreamFailed(.timeout) == .fail(.upstreamTimeout, closeAfter: false, failure: "timeout"))
        var broken = Self.forwardingGET(reused: true)
        #expect(broken.upstreamFailed(.malformedResponse) == .fail(.upstreamUnavailable, closeAfter: false, failure: "malformed"))
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
        _ = machine.admitted(declaredLength: nil)
        _ = machine.requestPart(.body(Self.chunk))
        #expect(machine.upstreamFailed(.refused) == .retry)
        #expect(machine.retries == 1)
        _ = machine.requestPart(.end(nil))
        #expect(machine.connected(reused: false) == .sendHead(held: [.body(Self.chunk), .end(nil)]))
    }

    @Test func atMostAttemptsFurtherTries() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, retries: Self.fleet)
        _ = machine.admitted(declaredLength: nil)
        #expect(machine.upstreamFailed(.refused) == .retry)
        _ = machine.connected(reused: false)
        #expect(machine.upstreamFailed(.closed) == .retry, "sent on a new connection: retried on a fleet")
        #expect(machine.upstreamFailed(.refused) == .fail(.upstreamUnavailable, closeAfter: false, failure: "refused"))
        #expect(machine.retries == 2)
    }

    /// Sent: only an idempotent request without a body, and only before any answer.
    @Test func aSentRequestIsRetriedOnlyWhenThatIsSafe() {
        var post = Machine(method: .POST, hasBody: false, maxBodyBytes: 100, retries: Self.fleet)
        _ = post.admitted(declaredLength: nil)
        _ = post.connected(reused: false)
        #expect(post.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset"))
        var put = Machine(method: .PUT, hasBody: true, maxBodyBytes: 100, retries: Self.fleet)
        _ = put.admitted(declaredLength: nil)
        _ = put.connected(reused: true)
        #expect(put.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset"))
        var slow = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, retries: Self.fleet)
        _ = slow.admitted(declaredLength: nil)
        _ = slow.connected(reused: false)
        #expect(slow.upstreamFailed(.timeout) == .fail(.upstreamTimeout, closeAfter: false, failure: "timeout"))
        var started = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, retries: Self.fleet)
        _ = started.admitted(declaredLength: nil)
        _ = started.connected(reused: false)
        _ = started.upstreamHead(status: 200)
        #expect(started.upstreamFailed(.closed) == .abandon(failure: "reset"))
    }

    @Test func noRetriesWhenAttemptsIsZero() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, retries: .init(attempts: 0, otherTargets: true))
        _ = machine.admitted(declaredLength: nil)
        #expect(machine.upstreamFailed(.refused) == .fail(.upstreamUnavailable, closeAfter: false, failure: "refused"))
        var single = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, retries: .init(attempts: 0, otherTargets: false))
        _ = single.admitted(declaredLength: nil)
        _ = single.connected(reused: true)
        #expect(single.upstreamFailed(.closed) == .fail(.upstreamUnavailable, closeAfter: false, failure: "reset"))
    }

    /// On one target a refused connection is not tried again.
    @Test func aSingleTargetIsNotRetriedAfterARefusal() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100)
        _ = machine.admitted(declaredLength: nil)
        #expect(machine.upstreamFailed(.refused) == .fail(.upstreamUnavailable, closeAfter: false, failure: "refused"))
    }

    /// The retry could not be had (budget, no target left): the failure is answered.
    @Test func aRefusedRetryAnswersTheFailure() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100, retries: Self.fleet)
        _ = machine.admitted(declaredLength: nil)
        #expect(machine.upstreamFailed(.refused) == .retry)
        #expect(machine.retryRefused(.refused) == .fail(.upstreamUnavailable, closeAfter: false, failure: "refused"))
        #expect(machine.isFinished)
        #expect(machine.retryRefused(.refused) == .none)
    }

    @Test func noTargetIsAnsweredAtOnce() {
        var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 100, retries: Self.fleet)
        _ = machine.admitted(declaredLength: nil)
        #expect(machine.noTarget() == .fail(.upstreamUnavailable, closeAfter: false, failure: "no_target"))
        #expect(machine.isFinished)
    }

    @Test func aFailureMidResponseCutsTheClientsConnection() {
        var machine = Self.forwardingGET(reused: false)
        _ = machine.upstreamHead(status: 200)
        _ = machine.upstreamBody(Self.chunk)
        #expect(machine.upstreamFailed(.timeout) == .abandon(failure: "timeout"))
        #expect(machine.isFinished)
        #expect(machine.status == 200, "the status the client saw is kept for the record")
        #expect(machine.upstreamFailed(.closed) == .none)
    }

    @Test func partsOutOfOrderFromTheUpstreamAreMalformed() {
        var bodyFirst = Self.forwardingGET(reused: false)
        #expect(bodyFirst.upstreamBody(Self.chunk) == .fail(.upstreamUnavailable, closeAfter: false, failure: "malformed"))
        var twoHeads = Self.forwardingGET(reused: false)
        _ = twoHeads.upstreamHead(status: 200)
        #expect(twoHeads.upstreamHead(status: 200) == .abandon(failure: "malformed"))
        var endFirst = Self.forwardingGET(reused: true)
        #expect(endFirst.upstreamEnd() == .fail(.upstreamUnavailable, closeAfter: false, failure: "malformed"))
    }

    @Test func partsForAnExchangeThatIsNotForwardingAreRefused() {
        var machine = Machine(method: .GET, hasBody: false, maxBodyBytes: 100)
        #expect(machine.upstreamHead(status: 200) == nil)
        _ = machine.clientClosed()
        #expect(machine.upstreamBody(Self.chunk) == nil)
        #expect(machine.upstreamEnd() == nil)
    }

    @Test func theClientGoingAwayAbortsWhateverIsUnderWay() {
        for steps in 0...3 {
            var machine = Machine(method: .POST, hasBody: true, maxBodyBytes: 100)
            if steps >= 1 { _ = machine.admitted(declaredLength: nil) }
            if steps >= 2 { _ = machine.connected(reused: false) }
            if steps >= 3 { _ = machine.upstreamHead(status: 200) }
            #expect(machine.clientClosed() == .clientGone, "after \(steps) steps")
            #expect(machine.clientClosed() == .none)
            #expect(machine.requestPart(.body(Self.chunk)) == .none)
        }
    }
}
