import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayProxy
@testable import PartnerGateway

/// The order of requests and answers on one connection (``ProxyConnectionStateMachine``),
/// driven in memory: every mix of proxied and Hummingbird requests, with and without bodies,
/// pipelined at once, answered early or late; and when reading stops and resumes.
@Suite("Proxy connection state machine")
struct ProxyConnectionStateMachineTests {
    /// One pipelined request: who answers it, whether it has a body, and whether its answer
    /// ends before its request has (an early answer, like a refusal).
    struct Request: CustomStringConvertible {
        let owner: ProxyConnectionStateMachine.Owner
        let withBody: Bool
        let answersEarly: Bool

        var description: String { "\(owner)\(withBody ? "+body" : "")\(answersEarly ? "+early" : "")" }

        func parts(index: Int) -> [HTTPServerRequestPart] {
            let prefix = owner == .proxy ? "/route" : "/healthz"
            var head = HTTPRequestHead(version: .http1_1, method: withBody ? .POST : .GET, uri: "\(prefix)/\(index)")
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

    /// What each owner was given, in order: "head /route/0", "body", "end".
    struct Delivered {
        var proxy: [String] = []
        var hummingbird: [String] = []
        var started: [String] = []
    }

    /// Runs `requests` written at once through a state machine, answering each request when
    /// its end has arrived (or at its head, when it answers early), and returns what each
    /// owner received.
    static func run(_ requests: [Request]) -> Delivered {
        var machine = ProxyConnectionStateMachine()
        var delivered = Delivered()
        var current: Request?
        for (index, request) in requests.enumerated() {
            for part in request.parts(index: index) { machine.received(.part(part)) }
        }
        var progressed = true
        while progressed {
            progressed = false
            while let action = machine.next() {
                progressed = true
                switch action {
                case .start(let head):
                    let index = Int(head.uri.split(separator: "/").last!)!
                    current = requests[index]
                    delivered.started.append(head.uri)
                    machine.assign(current!.owner)
                    record("head \(head.uri)", to: current!.owner, in: &delivered)
                    if current!.answersEarly { machine.responseEnded() }
                case .deliver(let part, let owner):
                    switch part {
                    case .head(let head): record("head \(head.uri)", to: owner, in: &delivered)
                    case .body: record("body", to: owner, in: &delivered)
                    case .end:
                        record("end", to: owner, in: &delivered)
                        if let request = current, !request.answersEarly { machine.responseEnded() }
                    }
                case .deliverError(let error, _):
                    Issue.record("unexpected error \(error)")
                }
            }
        }
        return delivered
    }

    static func record(_ event: String, to owner: ProxyConnectionStateMachine.Owner, in delivered: inout Delivered) {
        switch owner {
        case .proxy: delivered.proxy.append(event)
        case .hummingbird: delivered.hummingbird.append(event)
        }
    }

    /// What an owner should have received: each of its requests whole, in request order.
    static func expected(_ requests: [Request], owner: ProxyConnectionStateMachine.Owner) -> [String] {
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
                    mixes += 1
                }
            }
        }
        #expect(mixes == 125)
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

    @Test func theNextRequestWaitsForTheAnswerUnderWay() {
        var machine = ProxyConnectionStateMachine()
        for index in 0..<2 {
            machine.received(.part(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/route/\(index)"))))
            machine.received(.part(.end(nil)))
        }
        guard case .start = machine.next() else { Issue.record("no start"); return }
        machine.assign(.proxy)
        guard case .deliver(.end, .proxy) = machine.next() else { Issue.record("no end"); return }
        let nextAnswer1 = machine.next()
        #expect(nextAnswer1.map { "\($0)" } == nil, "the second request started before the first was answered")
        machine.responseEnded()
        guard case .start(let head) = machine.next() else { Issue.record("no second start"); return }
        #expect(head.uri == "/route/1")
    }

    @Test func nothingAfterAnAnswerWithoutKeepAliveIsTaken() {
        var machine = ProxyConnectionStateMachine()
        var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: "/route/0")
        head.headers.add(name: "Connection", value: "close")
        machine.received(.part(.head(head)))
        machine.received(.part(.end(nil)))
        machine.received(.part(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/route/1"))))
        machine.received(.part(.end(nil)))
        guard case .start = machine.next() else { Issue.record("no start"); return }
        machine.assign(.proxy)
        _ = machine.next()
        machine.responseEnded()
        let nextAnswer2 = machine.next()
        #expect(nextAnswer2.map { "\($0)" } == nil)
        #expect(machine.closing)
        #expect(machine.waitingCount == 0)
    }

    @Test func readingStopsWhilePipelinedPartsPileUpAndResumesWhenTheyAreTaken() {
        var machine = ProxyConnectionStateMachine()
        machine.received(.part(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/route/0"))))
        machine.received(.part(.end(nil)))
        guard case .start = machine.next() else { Issue.record("no start"); return }
        machine.assign(.proxy)
        _ = machine.next()
        let readRequestedAnswer3 = machine.readRequested()
        #expect(readRequestedAnswer3)
        for index in 1...ProxyConnectionStateMachine.maxWaiting / 2 {
            machine.received(.part(.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/route/\(index)"))))
            machine.received(.part(.end(nil)))
        }
        let readRequestedAnswer4 = machine.readRequested()
        #expect(!readRequestedAnswer4, "read on with \(machine.waitingCount) parts waiting")
        let releaseHeldReadAnswer5 = machine.releaseHeldRead()
        #expect(!releaseHeldReadAnswer5)
        machine.responseEnded()
        guard case .start = machine.next() else { Issue.record("no start"); return }
        machine.assign(.proxy)
        _ = machine.next()
        let releaseHeldReadAnswer6 = machine.releaseHeldRead()
        #expect(releaseHeldReadAnswer6, "the held read did not go once parts were taken")
        let releaseHeldReadAnswer7 = machine.releaseHeldRead()
        #expect(!releaseHeldReadAnswer7, "one held read went twice")
    }

    @Test func readingStopsWhileTheBodyIsPausedAndResumesAfter() {
        var machine = ProxyConnectionStateMachine()
        machine.pauseBody()
        let readRequestedAnswer8 = machine.readRequested()
        #expect(!readRequestedAnswer8)
        let releaseHeldReadAnswer9 = machine.releaseHeldRead()
        #expect(!releaseHeldReadAnswer9)
        machine.resumeBody()
        let releaseHeldReadAnswer10 = machine.releaseHeldRead()
        #expect(releaseHeldReadAnswer10)
        let readRequestedAnswer11 = machine.readRequested()
        #expect(readRequestedAnswer11)
    }
}
