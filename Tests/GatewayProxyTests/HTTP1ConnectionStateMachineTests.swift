import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayEdge
@testable import GatewayProxy

/// One HTTP/1 connection's machine (``HTTP1ConnectionHandler/StateMachine``) on its own: the
/// order of requests and answers for every mix of proxied and Hummingbird requests (with and
/// without bodies, `HEAD`, pipelined at once, answered early or late), keep-alive and closing,
/// refusals in turn, shutdown, the `408` and idle decisions, the one own error, and when
/// reading stops and resumes. Events in, actions out: no channel, no clock.
@Suite("HTTP/1 connection state machine")
struct HTTP1ConnectionStateMachineTests {
    typealias Machine = HTTP1ConnectionHandler.StateMachine

    private static let refused = GatewayError.invalidRequest("two Authorization headers")

    private static func head(_ uri: String = "/x", method: HTTPMethod = .GET, version: HTTPVersion = .http1_1, close: Bool = false) -> ClientRequestHead {
        var head = HTTPRequestHead(version: version, method: method, uri: uri)
        if close { head.headers.add(name: "Connection", value: "close") }
        return ClientRequestHead(head)
    }

    static let now = NIODeadline.uptimeNanoseconds(1_000_000_000)

    /// Reads a whole request without a body.
    private static func read(_ machine: inout Machine, _ head: ClientRequestHead = head()) {
        _ = machine.headAdmitted(head, now: now)
        _ = machine.endRead(nil, now: now)
    }

    /// Starts the next request for `owner` and hands out its parts; false when nothing started.
    @discardableResult
    private static func start(_ machine: inout Machine, as owner: Machine.Owner = .proxy) -> Bool {
        guard case .start = machine.next() else { return false }
        _ = machine.assigned(owner)
        while !isNone(machine.next()) {}
        return true
    }

    static func isNone(_ action: Machine.Action) -> Bool {
        if case .none = action { return true }
        return false
    }

    static func ended(_ machine: inout Machine) -> String {
        describe(machine.responseEnded(now: now))
    }

    // MARK: Order across owners

    /// One pipelined request: who answers it, whether it has a body, whether it is a `HEAD`,
    /// and whether its response ends before its request has (an early answer, like a refusal).
    struct Request: CustomStringConvertible {
        let owner: Machine.Owner
        let withBody: Bool
        let answersEarly: Bool
        var isHEAD = false

        var description: String { "\(owner)\(withBody ? "+body" : "")\(answersEarly ? "+early" : "")\(isHEAD ? "+HEAD" : "")" }

        func parts(index: Int) -> [ClientRequestPart] {
            let prefix = owner == .proxy ? "/route" : "/healthz"
            let method: HTTPMethod = isHEAD ? .HEAD : withBody ? .POST : .GET
            var head = HTTPRequestHead(version: .http1_1, method: method, uri: "\(prefix)/\(index)")
            if withBody { head.headers.add(name: "Content-Length", value: "2") }
            var parts: [ClientRequestPart] = [.head(ClientRequestHead(head))]
            if withBody {
                parts.append(.body(ByteBuffer(string: "a")))
                parts.append(.body(ByteBuffer(string: "b")))
            }
            parts.append(.end(nil))
            return parts
        }
    }

    /// What each owner was given, in order ("head /route/0", "body", "end"), and for each response
    /// whether it went without a body.
    struct Delivered {
        var proxy: [String] = []
        var hummingbird: [String] = []
        var started: [String] = []
        var bodiless: [Bool] = []
        var endActions: [String] = []
    }

    /// Runs `requests` written at once through a machine, answering each request when its end
    /// has arrived (or at its head, when it answers early), and returns what each owner received.
    static func run(_ requests: [Request]) -> Delivered {
        var machine = Machine(idleTimeout: .seconds(10), parks: true)
        var delivered = Delivered()
        var current: Request?
        for (index, request) in requests.enumerated() {
            for part in request.parts(index: index) {
                switch part {
                case .head(let head): _ = machine.headAdmitted(head, now: now)
                case .body(let chunk): _ = machine.bodyRead(chunk)
                case .end(let trailers): _ = machine.endRead(trailers, now: now)
                }
            }
        }
        func answer() {
            _ = machine.responseHeadWritten(status: 200)
            delivered.bodiless.append(machine.responseIsBodiless)
            delivered.endActions.append(ended(&machine))
        }
        var progressed = true
        while progressed {
            progressed = false
            while true {
                let action = machine.next()
                if isNone(action) { break }
                progressed = true
                switch action {
                case .start(let head, _):
                    let index = Int(head.target.split(separator: "/").last!)!
                    current = requests[index]
                    delivered.started.append(head.target)
                    _ = machine.assigned(current!.owner)
                    record("head \(head.target)", to: current!.owner, in: &delivered)
                    if current!.answersEarly { answer() }
                case .deliver(let part, let owner):
                    switch part {
                    case .head(let head): record("head \(head.uri)", to: owner, in: &delivered)
                    case .body: record("body", to: owner, in: &delivered)
                    case .end:
                        record("end", to: owner, in: &delivered)
                        if let request = current, !request.answersEarly { answer() }
                    }
                default:
                    Issue.record("unexpected \(describe(action))")
                }
            }
        }
        guard case .active(let pipeline, .open) = machine.state else {
            Issue.record("not open: \(describe(machine))")
            return delivered
        }
        #expect(pipeline.answersOutstanding == 0)
        #expect(pipeline.turn == .idle)
        return delivered
    }

    static func record(_ event: String, to owner: Machine.Owner, in delivered: inout Delivered) {
        switch owner {
        case .proxy: delivered.proxy.append(event)
        case .hummingbird: delivered.hummingbird.append(event)
        }
    }

    /// What an owner should have received: each of its requests whole, in request order.
    static func expected(_ requests: [Request], owner: Machine.Owner) -> [String] {
        var events: [String] = []
        for (index, request) in requests.enumerated() where request.owner == owner {
            for part in request.parts(index: index) {
                switch part {
                case .head(let head): events.append("head \(head.target)")
                case .body: events.append("body")
                case .end: events.append("end")
                }
            }
        }
        return events
    }

    static let kinds: [Request] = [
        Request(owner: .proxy, withBody: false, answersEarly: false),
        Request(owner: .proxy, withBody: true, answersEarly: false),
        Request(owner: .proxy, withBody: true, answersEarly: true),
        Request(owner: .hummingbird, withBody: false, answersEarly: false),
        Request(owner: .hummingbird, withBody: true, answersEarly: true),
    ]

    @Test func everyMixOfThreePipelinedRequestsReachesItsOwnersWholeAndInOrder() {
        var mixes = 0
        for first in Self.kinds {
            for second in Self.kinds {
                for third in Self.kinds {
                    let requests = [first, second, third]
                    let delivered = Self.run(requests)
                    #expect(delivered.started == requests.indices.map { requests[$0].parts(index: $0).first.flatMap { part in
                        if case .head(let head) = part { head.target } else { nil }
                    }! }, "\(requests)")
                    #expect(delivered.proxy == Self.expected(requests, owner: .proxy), "\(requests)")
                    #expect(delivered.hummingbird == Self.expected(requests, owner: .hummingbird), "\(requests)")
                    #expect(delivered.endActions == ["writeEnd idle expire +100ms", "writeEnd idle expire +100ms", "writeEnd idle expire +100ms"], "\(requests)")
                    mixes += 1
                }
            }
        }
        #expect(mixes == 125)
    }

    /// `HEAD` requests among others, for both owners: exactly their responses go without a body.
    @Test func onlyTheAnswersToHEADRequestsGoWithoutABody() {
        let requests = [
            Request(owner: .proxy, withBody: false, answersEarly: false, isHEAD: true),
            Request(owner: .hummingbird, withBody: false, answersEarly: false),
            Request(owner: .hummingbird, withBody: false, answersEarly: false, isHEAD: true),
            Request(owner: .proxy, withBody: true, answersEarly: false),
        ]
        let delivered = Self.run(requests)
        #expect(delivered.bodiless == [true, false, true, false])
        #expect(delivered.hummingbird == ["head /healthz/1", "end", "head /healthz/2", "end"])
    }

    /// Two proxied requests and an endpoint written at once: the second proxied request's end
    /// stays with the proxy, and Hummingbird gets its own request whole.
    @Test func theSecondProxiedRequestsEndNeverReachesHummingbird() {
        let requests = [
            Request(owner: .proxy, withBody: false, answersEarly: false),
            Request(owner: .proxy, withBody: false, answersEarly: false),
            Request(owner: .hummingbird, withBody: false, answersEarly: false),
        ]
        let delivered = Self.run(requests)
        #expect(delivered.proxy == ["head /route/0", "end", "head /route/1", "end"])
        #expect(delivered.hummingbird == ["head /healthz/2", "end"])
    }

    @Test func theNextRequestWaitsForTheResponseUnderWay() {
        var machine = Machine()
        for index in 0..<2 { Self.read(&machine, Self.head("/route/\(index)")) }
        guard case .start = machine.next() else { Issue.record("no start"); return }
        _ = machine.assigned(.proxy)
        guard case .deliver(.end, .proxy) = machine.next() else { Issue.record("no end"); return }
        #expect(Self.isNone(machine.next()), "the second request started before the first was answered")
        #expect(Self.ended(&machine) == "writeEnd idle keep")
        guard case .start(let head, _) = machine.next() else { Issue.record("no second start"); return }
        #expect(head.target == "/route/1")
    }

    @Test func anExpectContinueIsAnsweredWhenItsRequestsTurnComes() {
        var machine = Machine()
        Self.read(&machine, Self.head("/first"))
        _ = machine.headAdmitted(Self.head("/upload", method: .POST), expectsContinue: true, now: Self.now)
        guard case .start(_, let firstContinue) = machine.next() else { Issue.record("no start"); return }
        #expect(!firstContinue)
        _ = machine.assigned(.hummingbird)
        _ = machine.next()
        #expect(Self.ended(&machine) == "writeEnd idle keep")
        guard case .start(_, let secondContinue) = machine.next() else { Issue.record("no second start"); return }
        #expect(secondContinue, "the 100 Continue was not asked for")
    }

    // MARK: Keep-alive and closing

    @Test func nothingAfterAResponseWithoutKeepAliveIsTakenAndTheConnectionLingersOnce() {
        var machine = Machine()
        Self.read(&machine, Self.head("/route/0", close: true))
        Self.read(&machine, Self.head("/route/1"))
        Self.start(&machine)
        #expect(Self.ended(&machine) == "writeEndThenLinger")
        #expect(Self.describe(machine) == "closing")
        #expect(machine.discardsInput)
        #expect(Self.describe(machine.lingeringStarts(now: Self.now)) == "startLingering expire +5000ms")
        #expect(Self.describe(machine.lingeringStarts(now: Self.now)) == "none", "a second lingering close was started")
        #expect(Self.isNone(machine.next()))
        #expect(Self.describe(machine.inputDiscarded(now: Self.now + .seconds(1))) == "lingerTimer expire +6000ms")
    }

    @Test func http10WithoutKeepAliveClosesAndWithKeepAliveStaysOpen() {
        var plain = Machine()
        Self.read(&plain, Self.head(version: .http1_0))
        Self.start(&plain)
        #expect(Self.ended(&plain) == "writeEndThenLinger")

        var keptAlive = Machine()
        var head = HTTPRequestHead(version: .http1_0, method: .GET, uri: "/x")
        head.headers.add(name: "Connection", value: "keep-alive")
        Self.read(&keptAlive, ClientRequestHead(head))
        Self.start(&keptAlive)
        #expect(Self.ended(&keptAlive) == "writeEnd idle keep")
    }

    @Test func pipelinedRequestsKeepTheConnectionUntilTheOneThatCloses() {
        var machine = Machine()
        Self.read(&machine, Self.head("/a"))
        Self.read(&machine, Self.head("/b", close: true))
        Self.read(&machine, Self.head("/c"))
        Self.start(&machine, as: .hummingbird)
        #expect(Self.ended(&machine) == "writeEnd idle keep")
        Self.start(&machine)
        #expect(Self.ended(&machine) == "writeEndThenLinger")
        #expect(!Self.start(&machine), "the request behind the closing one was started")
        #expect(machine.discardsInput, "input after the closing request was still taken")
    }

    @Test func anEarlyResponseWaitsForItsRequestsEndBeforeTheNextStarts() {
        var machine = Machine()
        _ = machine.headAdmitted(Self.head("/route/0", method: .POST), now: Self.now)
        Self.start(&machine)
        #expect(Self.ended(&machine) == "writeEnd idle keep")
        _ = machine.bodyRead(ByteBuffer(string: "late"))
        _ = machine.endRead(nil, now: Self.now)
        Self.read(&machine, Self.head("/route/1"))
        guard case .deliver(.body, .proxy) = machine.next(), case .deliver(.end, .proxy) = machine.next() else {
            Issue.record("the rest of the early-answered request did not reach its owner")
            return
        }
        guard case .start(let head, _) = machine.next() else { Issue.record("no next start"); return }
        #expect(head.target == "/route/1")
    }

    /// The last request answered before its body is in: the rest of the body still reaches
    /// its owner, then nothing more is taken.
    @Test func anEarlyAnswerWithoutKeepAliveFinishesItsRequestThenCloses() {
        var machine = Machine()
        _ = machine.headAdmitted(Self.head("/route/0", method: .POST, close: true), now: Self.now)
        Self.start(&machine)
        #expect(Self.ended(&machine) == "writeEndThenLinger")
        #expect(!machine.discardsInput)
        _ = machine.bodyRead(ByteBuffer(string: "late"))
        _ = machine.endRead(nil, now: Self.now)
        _ = machine.headAdmitted(Self.head("/route/1"), now: Self.now)
        guard case .deliver(.body, .proxy) = machine.next(), case .deliver(.end, .proxy) = machine.next() else {
            Issue.record("the rest of the early-answered request did not reach its owner")
            return
        }
        #expect(Self.isNone(machine.next()))
        #expect(Self.describe(machine) == "closing")
    }

    // MARK: Refusals, parser errors, shutdown

    @Test func aRefusedHeadIsAnsweredAfterTheAnswersBeforeIt() {
        var machine = Machine()
        Self.read(&machine, Self.head("/a"))
        Self.read(&machine, Self.head("/b"))
        #expect(Self.isNone(machine.headRefused(Self.refused)))
        #expect(machine.discardsInput)
        Self.start(&machine)
        #expect(Self.ended(&machine) == "writeEnd idle keep")
        Self.start(&machine, as: .hummingbird)
        #expect(Self.ended(&machine) == "writeEndThenRespond INVALID_REQUEST")
    }

    @Test func aRefusedHeadWithNothingOutstandingIsAnsweredAtOnce() {
        var machine = Machine()
        #expect(Self.describe(machine.headRefused(Self.refused)) == "respondAndLinger INVALID_REQUEST")
    }

    @Test func aHeadTooLargeIsAnsweredInItsTurn() {
        var idle = Machine()
        #expect(Self.describe(idle.parserFailed(.headerOverflow)) == "respondAndClose HEADERS_TOO_LARGE")

        var busy = Machine()
        Self.read(&busy)
        #expect(Self.isNone(busy.parserFailed(.headerOverflow)), "the 431 overtook the answer before it")
        Self.start(&busy)
        #expect(Self.ended(&busy) == "writeEndThenRespond HEADERS_TOO_LARGE")
    }

    @Test func aClientThatSentAllItWillIsAnsweredThenClosed() {
        var idle = Machine()
        #expect(Self.describe(idle.inputClosed()) == "close")

        var busy = Machine()
        Self.read(&busy, Self.head("/a"))
        Self.read(&busy, Self.head("/b"))
        #expect(Self.isNone(busy.inputClosed()))
        Self.start(&busy)
        #expect(Self.ended(&busy) == "writeEnd idle keep")
        Self.start(&busy, as: .hummingbird)
        #expect(Self.ended(&busy) == "writeEndThenClose")
    }

    /// The listener drains: nothing in flight or about to be sent is lost. The next final
    /// response says `Connection: close` and the connection closes lingering after it (never
    /// with a reset); a response already under way finishes, and the connection then waits the
    /// grace for the client's next request, which gets the close.
    @Test func aDrainAnswersTheNextRequestWithCloseAndLosesNone() {
        let grace = Int(Machine.drainIdleGrace.nanoseconds / 1_000_000)

        var idle = Machine(idleTimeout: .seconds(10))
        #expect(Self.describe(idle.drain(now: Self.now)) == "idleTimer expire +\(grace)ms")
        #expect(idle.isDraining)
        #expect(Self.describe(idle.idleTimerFired(now: Self.now + .milliseconds(500), parkable: true)) == "idleTimer expire +\(grace)ms")
        Self.read(&idle, Self.head("/a"))
        _ = idle.next()
        _ = idle.assigned(.proxy)
        #expect(idle.drainsWithResponse(status: 200), "the request sent within the grace is answered with close")
        _ = idle.responseHeadWritten(status: 200)
        #expect(Self.ended(&idle) == "writeEndThenLinger")

        var quiet = Machine(idleTimeout: .seconds(10))
        _ = quiet.drain(now: Self.now)
        guard case .startLingering = quiet.idleTimerFired(now: Self.now + Machine.drainIdleGrace, parkable: true) else {
            Issue.record("an idle connection is closed lingering once the grace is over")
            return
        }

        var streaming = Machine(idleTimeout: .seconds(10))
        Self.read(&streaming, Self.head("/a"))
        Self.start(&streaming)
        _ = streaming.responseHeadWritten(status: 200)
        #expect(Self.isNone(streaming.drain(now: Self.now)))
        #expect(!streaming.drainsWithResponse(status: 200), "its head went out before the drain")
        #expect(Self.ended(&streaming) == "writeEnd idle expire +\(grace)ms", "kept for the next request")
        Self.read(&streaming, Self.head("/b"))
        Self.start(&streaming)
        #expect(streaming.drainsWithResponse(status: 200))
        _ = streaming.responseHeadWritten(status: 200)
        #expect(Self.ended(&streaming) == "writeEndThenLinger")

        var pipelined = Machine(idleTimeout: .seconds(10))
        Self.read(&pipelined, Self.head("/a"))
        Self.read(&pipelined, Self.head("/b"))
        _ = pipelined.drain(now: Self.now)
        Self.start(&pipelined)
        #expect(!pipelined.drainsWithResponse(status: 200), "a request waits behind it: answered too")
        _ = pipelined.responseHeadWritten(status: 200)
        #expect(Self.ended(&pipelined) == "writeEnd idle expire +\(grace)ms")
        Self.start(&pipelined, as: .hummingbird)
        #expect(pipelined.drainsWithResponse(status: 200))
        #expect(!pipelined.drainsWithResponse(status: 101), "an upgrade is sent 1001 instead")
        #expect(!pipelined.drainsWithResponse(status: 100))
    }

    @Test func theConnectionAnswersAtMostOneErrorOfItsOwn() {
        var machine = Machine()
        guard case .respondAndClose = machine.parserFailed(.invalidChunkSize) else {
            Issue.record("a malformed request was not answered")
            return
        }
        #expect(Self.isNone(machine.parserFailed(.headerOverflow)))
        #expect(machine.discardsInput, "a refused head would have been read")
        #expect(machine.stalledBodyResponseStarted, "a 408 could follow")
    }

    @Test func aParserErrorInsideAnAnsweredRequestGoesToItsOwner() {
        var machine = Machine()
        _ = machine.headAdmitted(Self.head("/route/0", method: .POST), now: Self.now)
        guard case .start = machine.next() else { Issue.record("no start"); return }
        _ = machine.assigned(.proxy)
        #expect(Self.isNone(machine.parserFailed(.invalidChunkSize)))
        guard case .deliverError(_, .proxy) = machine.next() else {
            Issue.record("the error did not reach the request's owner")
            return
        }
    }

    // MARK: Deadlines

    @Test func aStalledBodyIs408OnlyForTheOneOutstandingRequestBeforeItsResponseStarted() {
        var before = Machine()
        _ = before.headAdmitted(Self.head(method: .POST), now: Self.now)
        Self.start(&before)
        #expect(!before.stalledBodyResponseStarted)
        var edge = RequestEdge(maxHeaderListSize: nil, bodyReadTimeout: .seconds(1))
        _ = edge.bodyStarted(limit: .wholeBody, now: .uptimeNanoseconds(0))
        let stall = edge.bodyDeadlinePassed(responseStarted: before.stalledBodyResponseStarted)
        #expect(stall == .answer(.requestTimeout))
        #expect(Self.describe(before.bodyStalled(stall!)) == "respondAndClose REQUEST_TIMEOUT")

        var interim = Machine()
        _ = interim.headAdmitted(Self.head(method: .POST), now: Self.now)
        Self.start(&interim)
        _ = interim.responseHeadWritten(status: 100)
        #expect(!interim.stalledBodyResponseStarted, "a 100 Continue counted as the answer")

        var after = Machine()
        _ = after.headAdmitted(Self.head(method: .POST), now: Self.now)
        Self.start(&after)
        _ = after.responseHeadWritten(status: 200)
        #expect(after.stalledBodyResponseStarted)
        #expect(Self.describe(after.bodyStalled(.close)) == "close")

        var behind = Machine()
        Self.read(&behind, Self.head("/a"))
        _ = behind.headAdmitted(Self.head("/b", method: .POST), now: Self.now)
        #expect(behind.stalledBodyResponseStarted, "a 408 could overtake the answer before it")
    }

    @Test func theIdleDeadlineClosesOnlyWithNoResponseOutstanding() {
        var machine = Machine(idleTimeout: .seconds(2))
        #expect(Self.describe(machine.connectionActive(now: Self.now)) == "idleTimer expire +2000ms")
        Self.read(&machine)
        #expect(Self.describe(machine.idleTimerFired(now: Self.now + .seconds(1), parkable: true)) == "idleTimer expire +2000ms")
        #expect(Self.describe(machine.idleTimerFired(now: Self.now + .seconds(2), parkable: true)) == "idleTimer expire +4000ms")
        Self.start(&machine)
        #expect(Self.describe(machine.responseEnded(now: Self.now + .seconds(3))) == "writeEnd idle expire +5000ms")
        #expect(Self.describe(machine.idleTimerFired(now: Self.now + .seconds(4), parkable: true)) == "idleTimer expire +5000ms")
        #expect(Self.describe(machine.idleTimerFired(now: Self.now + .seconds(5), parkable: true)) == "close")
    }

    /// Idle for ``ConnectionParking/delay`` with nothing outstanding, the connection parks
    /// until its idle deadline; not while it cannot (the handler says), nor while a request is
    /// under way, and a response's end brings the timer back to the delay.
    @Test func anIdleConnectionParksAfterTheDelayUntilItsIdleDeadline() {
        var machine = Machine(idleTimeout: .seconds(2), parks: true)
        #expect(Self.describe(machine.connectionActive(now: Self.now)) == "idleTimer expire +100ms")
        #expect(Self.describe(machine.idleTimerFired(now: Self.now + .milliseconds(100), parkable: false)) == "idleTimer expire +2000ms")
        Self.read(&machine)
        #expect(Self.describe(machine.idleTimerFired(now: Self.now + .milliseconds(200), parkable: true)) == "idleTimer expire +2000ms")
        Self.start(&machine)
        #expect(Self.describe(machine.responseEnded(now: Self.now + .milliseconds(300))) == "writeEnd idle expire +400ms")
        #expect(Self.describe(machine.idleTimerFired(now: Self.now + .milliseconds(400), parkable: true)) == "park until +2300ms")
        #expect(Self.describe(machine) == "closed")

        var noTimeout = Machine(idleTimeout: nil, parks: true)
        #expect(Self.describe(noTimeout.connectionActive(now: Self.now)) == "idleTimer expire +100ms")
        #expect(Self.describe(noTimeout.idleTimerFired(now: Self.now + .milliseconds(100), parkable: false)) == "idleTimer clear")
        #expect(Self.describe(noTimeout.idleTimerFired(now: Self.now + .milliseconds(100), parkable: true)) == "park until none")

        var shortTimeout = Machine(idleTimeout: .milliseconds(50), parks: true)
        #expect(Self.describe(shortTimeout.connectionActive(now: Self.now)) == "idleTimer expire +50ms", "parked after its idle timeout")
    }

    // MARK: Reading

    @Test func readingStopsWhilePipelinedPartsPileUpAndResumesWhenTheyAreTaken() {
        var machine = Machine()
        Self.read(&machine, Self.head("/route/0"))
        Self.start(&machine)
        #expect(Self.describe(machine.readRequested()) == "read")
        for index in 1...Machine.maxWaiting / 2 {
            Self.read(&machine, Self.head("/route/\(index)"))
        }
        #expect(Self.isNone(machine.readRequested()), "read on with parts waiting")
        #expect(Self.isNone(machine.next()))
        _ = machine.responseEnded(now: Self.now)
        guard case .start = machine.next() else { Issue.record("no start"); return }
        _ = machine.assigned(.proxy)
        _ = machine.next()
        #expect(Self.describe(machine.next()) == "read", "the held read did not go once parts were taken")
        #expect(Self.isNone(machine.next()), "one held read went twice")
    }

    @Test func readingStopsWhileTheBodyIsPausedAndResumesAfter() {
        var machine = Machine()
        _ = machine.bodyPaused()
        #expect(Self.isNone(machine.readRequested()))
        #expect(Self.isNone(machine.next()))
        #expect(Self.describe(machine.bodyResumed()) == "read")
        #expect(Self.describe(machine.readRequested()) == "read")
        #expect(Self.isNone(machine.bodyResumed()))
    }

    @Test func aClosedConnectionTakesNothingMore() {
        var machine = Machine()
        Self.read(&machine)
        _ = machine.closed()
        #expect(machine.discardsInput)
        #expect(Self.isNone(machine.next()))
        #expect(Self.describe(machine.responseEnded(now: Self.now)) == "writeEnd idle keep")
    }
}

extension HTTP1ConnectionStateMachineTests {
    /// An action as the tests compare it (errors by code, deadlines from ``now``).
    static func describe(_ action: Machine.Action) -> String {
        switch action {
        case .none: "none"
        case .start(let head, let sendContinue): "start \(head.method) \(head.target)\(sendContinue ? " +continue" : "")"
        case .deliver(let part, let owner): "deliver \(describe(part)) to \(owner)"
        case .deliverError(_, let owner): "deliver error to \(owner)"
        case .read: "read"
        case .writeEnd(let change): "writeEnd idle \(describe(change))"
        case .writeEndThenRespond(let error): "writeEndThenRespond \(error.code)"
        case .writeEndThenLinger: "writeEndThenLinger"
        case .writeEndThenClose: "writeEndThenClose"
        case .respondAndClose(let error): "respondAndClose \(error.code)"
        case .respondAndLinger(let error): "respondAndLinger \(error.code)"
        case .close: "close"
        case .startLingering(let change): "startLingering \(describe(change))"
        case .lingerTimer(let change): "lingerTimer \(describe(change))"
        case .idleTimer(let change): "idleTimer \(describe(change))"
        case .park(let deadline): "park until \(deadline.map { "+\(($0 - now).nanoseconds / 1_000_000)ms" } ?? "none")"
        case .upgrade: "upgrade"
        }
    }

    static func describe(_ change: DeadlineTimer.Change) -> String {
        switch change {
        case .keep: "keep"
        case .clear: "clear"
        case .expire(let deadline): "expire +\((deadline - now).nanoseconds / 1_000_000)ms"
        }
    }

    static func describe(_ part: HTTPServerRequestPart) -> String {
        switch part {
        case .head(let head): "head \(head.uri)"
        case .body: "body"
        case .end: "end"
        }
    }

    /// The machine's state: its lifecycle, the request whose turn it is, what waits, and reading.
    static func describe(_ machine: Machine) -> String {
        let lifecycle: String
        switch machine.state {
        case .active(let pipeline, let phase):
            let phaseName: String
            switch phase {
            case .open: phaseName = "open"
            case .inputEnded: phaseName = "input ended"
            case .draining: phaseName = "draining"
            case .refusing(let error): phaseName = "refusing \(error.code)"
            case .finishing: phaseName = "finishing"
            }
            let turn: String
            switch pipeline.turn {
            case .idle: turn = "idle"
            case .starting: turn = "starting"
            case .reading(_, let owner, let response): turn = "reading(\(owner), \(response))"
            case .answering(_, let owner, let response): turn = "answering(\(owner), \(response))"
            case .answeredEarly(_, let owner): turn = "answeredEarly(\(owner))"
            }
            lifecycle = "\(phaseName) \(turn) queued \(pipeline.queued) waiting \(pipeline.waiting.count)"
        case .closing: lifecycle = "closing"
        case .lingering: lifecycle = "lingering"
        case .upgraded: lifecycle = "upgraded"
        case .closed: lifecycle = "closed"
        case .modifying: lifecycle = "modifying"
        }
        return machine.reading == .reading ? lifecycle : "\(lifecycle) [\(machine.reading)]"
    }
}
