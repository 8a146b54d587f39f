import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayEdge
@testable import GatewayProxy
@testable import PartnerGateway

/// One HTTP/1 connection's machine (``HTTP1ConnectionHandler/StateMachine``) on its own: the
/// order of requests and answers for every mix of proxied and Hummingbird requests (with and
/// without bodies, `HEAD`, pipelined at once, answered early or late), keep-alive and closing,
/// refusals in turn, shutdown, the `408` and idle decisions, the one own error, and when
/// reading stops and resumes. Events in, actions out: no channel, no clock.
@Suite("HTTP/1 connection state machine")
struct HTTP1ConnectionStateMachineTests {
    typealias Machine = HTTP1ConnectionHandler.StateMachine

    private static let refused = GatewayError.invalidRequest("two Authorization headers")

    private static func head(_ uri: String = "/x", method: HTTPMethod = .GET, version: HTTPVersion = .http1_1, close: Bool = false) -> HTTPRequestHead {
        var head = HTTPRequestHead(version: version, method: method, uri: uri)
        if close { head.headers.add(name: "Connection", value: "close") }
        return head
    }

    /// Reads a whole request without a body.
    private static func read(_ machine: inout Machine, _ head: HTTPRequestHead = head()) {
        machine.headAdmitted(head)
        machine.received(.part(.end(nil)))
    }

    /// Starts the next request for `owner` and hands out its parts; false when nothing started.
    @discardableResult
    private static func start(_ machine: inout Machine, as owner: Machine.Owner = .proxy) -> Bool {
        guard case .start = machine.next() else { return false }
        machine.assign(owner)
        while machine.next() != nil {}
        return true
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

        func parts(index: Int) -> [HTTPServerRequestPart] {
            let prefix = owner == .proxy ? "/route" : "/healthz"
            let method: HTTPMethod = isHEAD ? .HEAD : withBody ? .POST : .GET
            var head = HTTPRequestHead(version: .http1_1, method: method, uri: "\(prefix)/\(index)")
            if withBody { head.headers.add(name: "Content-Length", value: "2") }
            var parts: [HTTPServerRequestPart] = [.head(head)]
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
        var endActions: [Machine.ResponseEndAction] = []
    }

    /// Runs `requests` written at once through a machine, answering each request when its end
    /// has arrived (or at its head, when it answers early), and returns what each owner received.
    static func run(_ requests: [Request]) -> Delivered {
        var machine = Machine()
        var delivered = Delivered()
        var current: Request?
        for (index, request) in requests.enumerated() {
            for part in request.parts(index: index) {
                if case .head(let head) = part {
                    machine.headAdmitted(head)
                } else {
                    machine.received(.part(part))
                }
            }
        }
        func answer() {
            machine.responseHeadWritten(status: 200)
            delivered.bodiless.append(machine.responseIsBodiless)
            delivered.endActions.append(machine.responseEnded())
        }
        var progressed = true
        while progressed {
            progressed = false
            while let action = machine.next() {
                progressed = true
                switch action {
                case .start(let head, _):
                    let index = Int(head.uri.split(separator: "/").last!)!
                    current = requests[index]
                    delivered.started.append(head.uri)
                    machine.assign(current!.owner)
                    record("head \(head.uri)", to: current!.owner, in: &delivered)
                    if current!.answersEarly { answer() }
                case .deliver(let part, let owner):
                    switch part {
                    case .head(let head): record("head \(head.uri)", to: owner, in: &delivered)
                    case .body: record("body", to: owner, in: &delivered)
                    case .end:
                        record("end", to: owner, in: &delivered)
                        if let request = current, !request.answersEarly { answer() }
                    }
                case .deliverError(let error, _):
                    Issue.record("unexpected error \(error)")
                }
            }
        }
        #expect(machine.answersOutstanding == 0)
        #expect(!machine.isBusy)
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
                case .head(let head): events.append("head \(head.uri)")
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
                        if case .head(let head) = part { head.uri } else { nil }
                    }! }, "\(requests)")
                    #expect(delivered.proxy == Self.expected(requests, owner: .proxy), "\(requests)")
                    #expect(delivered.hummingbird == Self.expected(requests, owner: .hummingbird), "\(requests)")
                    #expect(delivered.endActions == [.write, .write, .write], "\(requests)")
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
        machine.assign(.proxy)
        guard case .deliver(.end, .proxy) = machine.next() else { Issue.record("no end"); return }
        let waiting = machine.next()
        #expect(waiting.map { "\($0)" } == nil, "the second request started before the first was answered")
        #expect(machine.responseEnded() == .write)
        guard case .start(let head, _) = machine.next() else { Issue.record("no second start"); return }
        #expect(head.uri == "/route/1")
    }

    @Test func anExpectContinueIsAnsweredWhenItsRequestsTurnComes() {
        var machine = Machine()
        Self.read(&machine, Self.head("/first"))
        machine.headAdmitted(Self.head("/upload", method: .POST), expectsContinue: true)
        guard case .start(_, let firstContinue) = machine.next() else { Issue.record("no start"); return }
        #expect(!firstContinue)
        machine.assign(.hummingbird)
        _ = machine.next()
        #expect(machine.responseEnded() == .write)
        guard case .start(_, let secondContinue) = machine.next() else { Issue.record("no second start"); return }
        #expect(secondContinue, "the 100 Continue was not asked for")
    }

    // MARK: Keep-alive and closing

    @Test func nothingAfterAResponseWithoutKeepAliveIsTakenAndTheConnectionLingersOnce() {
        var machine = Machine()
        Self.read(&machine, Self.head("/route/0", close: true))
        Self.read(&machine, Self.head("/route/1"))
        Self.start(&machine)
        #expect(machine.responseEnded() == .flushThenLinger)
        let first = machine.startLingering()
        let second = machine.startLingering()
        #expect(first)
        #expect(!second, "a second lingering close was started")
        #expect(machine.next().map { "\($0)" } == nil)
        #expect(machine.closing)
        #expect(machine.waitingCount == 0)
        #expect(machine.discardsInput)
    }

    @Test func http10WithoutKeepAliveClosesAndWithKeepAliveStaysOpen() {
        var plain = Machine()
        Self.read(&plain, Self.head(version: .http1_0))
        Self.start(&plain)
        #expect(plain.responseEnded() == .flushThenLinger)

        var keptAlive = Machine()
        var head = Self.head(version: .http1_0)
        head.headers.add(name: "Connection", value: "keep-alive")
        Self.read(&keptAlive, head)
        Self.start(&keptAlive)
        #expect(keptAlive.responseEnded() == .write)
    }

    @Test func pipelinedRequestsKeepTheConnectionUntilTheOneThatCloses() {
        var machine = Machine()
        Self.read(&machine, Self.head("/a"))
        Self.read(&machine, Self.head("/b", close: true))
        Self.read(&machine, Self.head("/c"))
        Self.start(&machine, as: .hummingbird)
        #expect(machine.responseEnded() == .write)
        Self.start(&machine)
        #expect(machine.responseEnded() == .flushThenLinger)
        #expect(!Self.start(&machine), "the request behind the closing one was started")
        #expect(machine.discardsInput, "input after the closing request was still taken")
    }

    @Test func anEarlyResponseWaitsForItsRequestsEndBeforeTheNextStarts() {
        var machine = Machine()
        machine.headAdmitted(Self.head("/route/0", method: .POST))
        Self.start(&machine)
        #expect(machine.responseEnded() == .write)
        #expect(machine.answersOutstanding == 0)
        machine.received(.part(.body(ByteBuffer(string: "late"))))
        machine.received(.part(.end(nil)))
        Self.read(&machine, Self.head("/route/1"))
        guard case .deliver(.body, .proxy) = machine.next(), case .deliver(.end, .proxy) = machine.next() else {
            Issue.record("the rest of the early-answered request did not reach its owner")
            return
        }
        guard case .start(let head, _) = machine.next() else { Issue.record("no next start"); return }
        #expect(head.uri == "/route/1")
    }

    // MARK: Refusals, parser errors, shutdown

    @Test func aRefusedHeadIsAnsweredAfterTheAnswersBeforeIt() {
        var machine = Machine()
        Self.read(&machine, Self.head("/a"))
        Self.read(&machine, Self.head("/b"))
        #expect(machine.headRefused(Self.refused) == .none)
        #expect(machine.discardsInput)
        Self.start(&machine)
        #expect(machine.responseEnded() == .write)
        Self.start(&machine, as: .hummingbird)
        #expect(machine.responseEnded() == .writeThenRespondToRefusal(Self.refused))
    }

    @Test func aRefusedHeadWithNothingOutstandingIsAnsweredAtOnce() {
        var machine = Machine()
        #expect(machine.headRefused(Self.refused) == .respondToRefusal(Self.refused))
    }

    @Test func aHeadTooLargeIsAnsweredInItsTurn() {
        var idle = Machine()
        #expect(idle.parserFailed(headerOverflow: true) == .respondAndClose(.headersTooLarge))

        var busy = Machine()
        Self.read(&busy)
        #expect(busy.parserFailed(headerOverflow: true) == Machine.ConnectionAction.none, "the 431 overtook the answer before it")
        Self.start(&busy)
        #expect(busy.responseEnded() == .writeThenRespondToRefusal(.headersTooLarge))
    }

    @Test func gracefulShutdownClosesWhenIdleElseAfterTheLastResponse() {
        var idle = Machine()
        #expect(idle.quiesce() == .close)

        var busy = Machine()
        Self.read(&busy, Self.head("/a"))
        Self.read(&busy, Self.head("/b"))
        #expect(busy.quiesce() == .none)
        Self.start(&busy)
        #expect(busy.responseEnded() == .write)
        Self.start(&busy, as: .hummingbird)
        #expect(busy.responseEnded() == .flushThenClose)
    }

    @Test func theConnectionAnswersAtMostOneErrorOfItsOwn() {
        var machine = Machine()
        guard case .respondAndClose = machine.parserFailed(headerOverflow: false) else {
            Issue.record("a malformed request was not answered")
            return
        }
        #expect(machine.parserFailed(headerOverflow: true) == Machine.ConnectionAction.none)
        #expect(machine.headRefused(Self.refused) == .none)
        #expect(machine.bodyStalled(.answer(.requestTimeout)) == .none)
    }

    @Test func aParserErrorInsideAnAnsweredRequestGoesToItsOwner() {
        var machine = Machine()
        machine.headAdmitted(Self.head("/route/0", method: .POST))
        guard case .start = machine.next() else { Issue.record("no start"); return }
        machine.assign(.proxy)
        #expect(machine.parserFailed(headerOverflow: false) == nil)
        machine.received(.error(HTTPParserError.invalidChunkSize))
        guard case .deliverError(_, .proxy) = machine.next() else {
            Issue.record("the error did not reach the request's owner")
            return
        }
    }

    // MARK: Deadlines

    @Test func aStalledBodyIs408OnlyForTheOneOutstandingRequestBeforeItsResponseStarted() {
        var before = Machine()
        before.headAdmitted(Self.head(method: .POST))
        Self.start(&before)
        #expect(!before.stalledBodyResponseStarted)
        var edge = RequestEdge(maxHeaderListSize: nil, bodyReadTimeout: .seconds(1))
        _ = edge.bodyStarted(limit: .wholeBody, now: .uptimeNanoseconds(0))
        let stall = edge.bodyDeadlinePassed(responseStarted: before.stalledBodyResponseStarted)
        #expect(stall == .answer(.requestTimeout))
        #expect(before.bodyStalled(stall!) == .respondAndClose(.requestTimeout))

        var interim = Machine()
        interim.headAdmitted(Self.head(method: .POST))
        Self.start(&interim)
        interim.responseHeadWritten(status: 100)
        #expect(!interim.stalledBodyResponseStarted, "a 100 Continue counted as the answer")

        var after = Machine()
        after.headAdmitted(Self.head(method: .POST))
        Self.start(&after)
        after.responseHeadWritten(status: 200)
        #expect(after.stalledBodyResponseStarted)
        #expect(after.bodyStalled(.close) == .close)

        var behind = Machine()
        Self.read(&behind, Self.head("/a"))
        behind.headAdmitted(Self.head("/b", method: .POST))
        #expect(behind.stalledBodyResponseStarted, "a 408 could overtake the answer before it")
    }

    @Test func theIdleDeadlineClosesOnlyWithNoResponseOutstanding() {
        var machine = Machine()
        #expect(machine.idleDeadlinePassed())
        Self.read(&machine)
        #expect(!machine.idleDeadlinePassed())
        Self.start(&machine)
        _ = machine.responseEnded()
        #expect(machine.idleDeadlinePassed())
    }

    // MARK: Reading

    @Test func readingStopsWhilePipelinedPartsPileUpAndResumesWhenTheyAreTaken() {
        var machine = Machine()
        Self.read(&machine, Self.head("/route/0"))
        Self.start(&machine)
        let first = machine.readRequested()
        #expect(first)
        for index in 1...Machine.maxWaiting / 2 {
            Self.read(&machine, Self.head("/route/\(index)"))
        }
        let piledUp = machine.readRequested()
        #expect(!piledUp, "read on with \(machine.waitingCount) parts waiting")
        let stillHeld = machine.releaseHeldRead()
        #expect(!stillHeld)
        _ = machine.responseEnded()
        Self.start(&machine)
        let released = machine.releaseHeldRead()
        #expect(released, "the held read did not go once parts were taken")
        let twice = machine.releaseHeldRead()
        #expect(!twice, "one held read went twice")
    }

    @Test func readingStopsWhileTheBodyIsPausedAndResumesAfter() {
        var machine = Machine()
        machine.pauseBody()
        let paused = machine.readRequested()
        #expect(!paused)
        let held = machine.releaseHeldRead()
        #expect(!held)
        machine.resumeBody()
        let released = machine.releaseHeldRead()
        #expect(released)
        let reads = machine.readRequested()
        #expect(reads)
    }

    @Test func aClosedConnectionTakesNothingMore() {
        var machine = Machine()
        Self.read(&machine)
        machine.closed()
        Self.read(&machine)
        #expect(machine.next().map { "\($0)" } == nil)
        #expect(machine.answersOutstanding == 0)
        #expect(machine.discardsInput)
    }
}
