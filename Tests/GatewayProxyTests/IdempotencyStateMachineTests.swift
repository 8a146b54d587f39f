import Foundation
import GatewayAdmission
import NIOCore
import NIOHTTP1
@testable import GatewayEdge
@testable import GatewayProxy
import Testing
import TestSupport

/// Every path of one keyed request (`Idempotency-Key`), decided by ``IdempotencyStateMachine``
/// without Redis or a socket (every input in every state from a table, illegal pairs, marked
/// `✗`, tried on a ``IllegalInputCheck/counting`` machine for the answer a release build
/// gives), with the key header's reading and the record's secrets.
@Suite("Idempotency: the keyed request's state machine (in memory)")
struct IdempotencyStateMachineTests {
    typealias Machine = IdempotencyStateMachine

    /// The test clock's start, and the lock's lifetime in Redis (a route's timeouts plus 5 s).
    static let t0 = NIODeadline.uptimeNanoseconds(1_000_000_000_000)
    static let lockLifetime = Duration.seconds(15)

    static func at(_ seconds: Double) -> NIODeadline {
        t0 + .nanoseconds(Int64(seconds * 1e9))
    }

    private static func machine(
        method: String = "POST", target: String = "/rides/1/accept", maxBodyBytes: Int = 100, maxStoredBody: Int = 10,
        check: IllegalInputCheck = .asserting
    ) -> Machine {
        Machine(method: method, target: target, maxBodyBytes: maxBodyBytes, maxStoredBody: maxStoredBody, lockLifetime: lockLifetime, check: check)
    }

    /// The fingerprint `machine` locks with after reading `body` in the given pieces.
    private static func fingerprint(_ machine: inout Machine, body: [String]) -> String? {
        for piece in body { #expect(machine.requestBody(ByteBuffer(string: piece)) == .none) }
        guard case .lock(let fingerprint) = machine.requestEnded(at: t0) else { return nil }
        return fingerprint
    }

    /// A machine that holds the lock and forwards.
    private static func forwarding(maxStoredBody: Int = 10, check: IllegalInputCheck = .asserting) -> Machine {
        var machine = machine(maxStoredBody: maxStoredBody, check: check)
        _ = fingerprint(&machine, body: ["{}"])
        #expect(machine.locked(.acquired) == .forward)
        return machine
    }

    @Test func theFingerprintIsMethodTargetAndBodyWhateverTheChunking() throws {
        var whole = Self.machine()
        var split = Self.machine()
        let one = try #require(Self.fingerprint(&whole, body: ["{\"ride\":1}"]))
        let two = try #require(Self.fingerprint(&split, body: ["{\"ri", "de\":1}"]))
        #expect(one == two)
        // SHA-256 of "4:POST" "15:/rides/1/accept" "64:<hex SHA-256 of the body>": instances of
        // every version must agree on it, or a repeat during a rolling deploy reads as a mismatch.
        #expect(one == "545231cb83a6791b85fb11dbc7b35b3c493123866bb21289303095e5b2cfbba7")
        var otherBody = Self.machine()
        var otherTarget = Self.machine(target: "/rides/2/accept")
        var otherMethod = Self.machine(method: "PATCH")
        #expect(Self.fingerprint(&otherBody, body: ["{\"ride\":2}"]) != one)
        #expect(Self.fingerprint(&otherTarget, body: ["{\"ride\":1}"]) != one)
        #expect(Self.fingerprint(&otherMethod, body: ["{\"ride\":1}"]) != one)
    }

    @Test func aBodyOverTheLimitIsRefused413BeforeAnyLock() {
        var machine = Self.machine(maxBodyBytes: 4, check: .counting)
        #expect(machine.requestBody(ByteBuffer(string: "abc")) == .none)
        #expect(machine.requestBody(ByteBuffer(string: "de")) == .refuse(.payloadTooLarge))
        #expect(!machine.readsBody)
        #expect(machine.illegalInputs == 0)
        // The exchange passes nothing more once the body is not read: illegal, and nothing.
        #expect(machine.requestEnded(at: Self.t0) == .none)
        #expect(machine.illegalInputs == 1)
        #expect(machine.finished(at: Self.t0) == .none)
    }

    /// The stored form reads back as it was written, and a cut or altered one reads as nothing
    /// (the replay then answers `500`, never a wrong response).
    @Test func aStoredResponseReadsBackExactly() {
        let response = IdempotentResponse(
            status: 201, headers: ["Content-Type": "application/json", "Set-Cookie": "a=1", "Set-Cookie": "b=2", "Connection": "close"],
            body: Array("{\"ride\":\"accepted\",\"fare\":\"₹120\"}".utf8)
        )
        let encoded = response.encoded()
        #expect(IdempotentResponse.decoded(encoded) == response)
        #expect(response.headers.map { [$0.name, $0.value] } == [["Content-Type", "application/json"], ["Set-Cookie", "a=1"], ["Set-Cookie", "b=2"]])
        #expect(IdempotentResponse.decoded(Array(encoded.dropLast())) == nil)
        #expect(IdempotentResponse.decoded(encoded + [0]) == nil)
        #expect(IdempotentResponse.decoded([2] + encoded.dropFirst()) == nil)
        #expect(IdempotentResponse.decoded([]) == nil)
        let empty = IdempotentResponse(status: 204, headers: [:], body: [])
        #expect(IdempotentResponse.decoded(empty.encoded()) == empty)
    }

    /// A field the upstream's `Connection` names is of that connection: the first answer goes
    /// without it, and so must the replay, which has no `Connection` left to name it.
    @Test func aStoredResponseKeepsNoFieldItsConnectionNamed() {
        let response = IdempotentResponse(
            status: 200, headers: ["Connection": "keep-alive, X-Internal-Secret", "X-Internal-Secret": "hop-only", "Connection": "x-hop", "X-Hop": "1", "ETag": "\"1\""],
            body: []
        )
        #expect(response.headers.map { [$0.name, $0.value] } == [["ETag", "\"1\""]])
    }

    @Test func eachLockOutcomeHasItsAnswer() {
        let stored = IdempotentResponse(status: 201, headers: ["Content-Type": "application/json"], body: Array("{}".utf8))
        let cases: [(Machine.LockOutcome, Machine.Action)] = [
            (.acquired, .forward),
            (.inFlight, .refuse(Machine.inFlight)),
            (.mismatch, .refuse(Machine.mismatch)),
            (.stored(stored), .replay(stored)),
            (.stored(nil), .refuse(.internalError)),
            (.failed, .refuse(.serviceUnavailable)),
        ]
        for (outcome, action) in cases {
            var machine = Self.machine()
            _ = Self.fingerprint(&machine, body: [])
            #expect(machine.locked(outcome) == action)
            // Only a forwarded request has a key to store or free.
            #expect(machine.finished(at: Self.t0) == (action == .forward ? .release : .none))
        }
        #expect(Machine.inFlight.status.code == 409)
        #expect(Machine.inFlight.headers[.retryAfter] == "1")
        #expect(Machine.mismatch.status.code == 422)
    }

    @Test func aWholeResponseBelow500IsStoredWithoutItsFraming() {
        var machine = Self.forwarding()
        machine.responseHead(status: 201, headers: ["Content-Type": "text/plain", "Content-Length": "5", "Connection": "keep-alive"])
        machine.responseBody(ByteBuffer(string: "hel"))
        machine.responseBody(ByteBuffer(string: "lo"))
        machine.responseEnded()
        let expected = IdempotentResponse(status: 201, headers: ["Content-Type": "text/plain"], body: Array("hello".utf8))
        #expect(machine.finished(at: Self.t0) == .store(expected))
        #expect(expected.headers.map { [$0.name, $0.value] } == [["Content-Type", "text/plain"]])
        #expect(expected.replayHeaders["content-length"] == ["5"])
        #expect(machine.finished(at: Self.t0) == .none, "settled once")
    }

    @Test func a5xxACutResponseOrATooLargeOneFreesTheKey() {
        var failed = Self.forwarding()
        failed.responseHead(status: 500, headers: [:])
        failed.responseEnded()
        #expect(failed.finished(at: Self.t0) == .release)

        var cut = Self.forwarding()
        cut.responseHead(status: 200, headers: [:])
        cut.responseBody(ByteBuffer(string: "par"))
        #expect(cut.finished(at: Self.t0) == .release)

        var noAnswer = Self.forwarding()
        #expect(noAnswer.finished(at: Self.t0) == .release)

        var large = Self.forwarding(maxStoredBody: 4)
        large.responseHead(status: 200, headers: [:])
        large.responseBody(ByteBuffer(string: "abc"))
        large.responseBody(ByteBuffer(string: "de"))
        large.responseEnded()
        #expect(large.finished(at: Self.t0) == .release)
    }

    @Test func aLockThatComesAfterTheClientLeftIsFreed() {
        var machine = Self.machine()
        _ = Self.fingerprint(&machine, body: ["{}"])
        #expect(machine.finished(at: Self.t0) == .none)
        #expect(machine.locked(.acquired) == .release)

        var refused = Self.machine()
        _ = Self.fingerprint(&refused, body: ["{}"])
        #expect(refused.finished(at: Self.t0) == .none)
        #expect(refused.locked(.inFlight) == .none)
    }

    // MARK: Every input in every state

    enum Input: String, StateMachineTableInput {
        case body, bigBody, ended
        case acquired, inFlight, mismatch, stored, unreadable, lockFailed
        case head, responseBody, responseEnd
        case renewalDue, renewedHeld, renewedLost, renewedFailed
        /// At 1 s, and at 20 s (past the lock's lifetime).
        case finished, finishedLate

        static let storedResponse = IdempotentResponse(status: 201, headers: [:], body: [])

        func apply(to machine: inout Machine) -> String {
            switch self {
            case .body: return Self.describe(machine.requestBody(ByteBuffer(string: "abc")))
            case .bigBody: return Self.describe(machine.requestBody(ByteBuffer(repeating: 0x61, count: 9)))
            case .ended: return Self.describe(machine.requestEnded(at: t0))
            case .acquired: return Self.describe(machine.locked(.acquired))
            case .inFlight: return Self.describe(machine.locked(.inFlight))
            case .mismatch: return Self.describe(machine.locked(.mismatch))
            case .stored: return Self.describe(machine.locked(.stored(Self.storedResponse)))
            case .unreadable: return Self.describe(machine.locked(.stored(nil)))
            case .lockFailed: return Self.describe(machine.locked(.failed))
            case .head:
                machine.responseHead(status: 200, headers: [:])
                return "-"
            case .responseBody:
                machine.responseBody(ByteBuffer(string: "abc"))
                return "-"
            case .responseEnd:
                machine.responseEnded()
                return "-"
            case .renewalDue: return Self.describe(machine.renewalDue(at: at(5)))
            case .renewedHeld:
                machine.renewed(.held)
                return "-"
            case .renewedLost:
                machine.renewed(.lost)
                return "-"
            case .renewedFailed:
                machine.renewed(.failed)
                return "-"
            case .finished: return Self.describe(machine.finished(at: at(1)))
            case .finishedLate: return Self.describe(machine.finished(at: at(20)))
            }
        }

        static func describe(_ action: Machine.Action) -> String {
            switch action {
            case .none: "-"
            case .lock: "lock"
            case .refuse(let error): "refuse \(error.status.code)"
            case .forward: "forward"
            case .replay: "replay"
            case .store: "store"
            case .release: "release"
            case .renew: "renew"
            case .lockExpired: "lockExpired"
            }
        }
    }

    /// Every state, each by a path of legal inputs (bodies of 3 bytes; at most 8 read, 4
    /// stored): reading the body, locking, forwarding with the lock held, being renewed or
    /// lost, the response recorded, too large, ended whole or too large, the exchange gone
    /// while locking, and done.
    static let states: [(name: String, path: [Input])] = [
        ("reading", []),
        ("locking", [.ended]),
        ("forwarding", [.ended, .acquired]),
        ("forwarding, renewing", [.ended, .acquired, .renewalDue]),
        ("forwarding, lock lost", [.ended, .acquired, .renewalDue, .renewedLost]),
        ("recording", [.ended, .acquired, .head]),
        ("too large", [.ended, .acquired, .head, .responseBody, .responseBody]),
        ("answered", [.ended, .acquired, .head, .responseBody, .responseEnd]),
        ("answered, too large", [.ended, .acquired, .head, .responseBody, .responseBody, .responseEnd]),
        ("abandoned", [.ended, .finished]),
        ("done", [.ended, .inFlight]),
    ]

    /// The state's kind, as the table names it.
    static func kind(_ state: Machine.State) -> String {
        switch state {
        case .readingBody: return "reading"
        case .locking: return "locking"
        case .forwarding(let forwarding):
            let response = switch forwarding.response {
            case .awaitingHead: "forwarding"
            case .recording: "recording"
            case .tooLarge(ended: false): "too large"
            case .ended: "answered"
            case .tooLarge(ended: true): "answered, too large"
            }
            return switch forwarding.lock {
            case .held: response
            case .renewing: response + ", renewing"
            case .lost: response + ", lock lost"
            }
        case .abandoned: return "abandoned"
        case .done: return "done"
        case .modifying: return "modifying"
        }
    }

    /// Per state, per input: "action → next state", `✗` first when the input is illegal there.
    static let table: [String: [Input: String]] = [
        "reading": [
            .body: "- → reading",
            .bigBody: "refuse 413 → done",
            .ended: "lock → locking",
            .acquired: "✗ - → reading",
            .inFlight: "✗ - → reading",
            .mismatch: "✗ - → reading",
            .stored: "✗ - → reading",
            .unreadable: "✗ - → reading",
            .lockFailed: "✗ - → reading",
            .head: "✗ - → reading",
            .responseBody: "✗ - → reading",
            .responseEnd: "✗ - → reading",
            .renewalDue: "✗ - → reading",
            .renewedHeld: "✗ - → reading",
            .renewedLost: "✗ - → reading",
            .renewedFailed: "✗ - → reading",
            .finished: "- → done",
            .finishedLate: "- → done",
        ],
        "locking": [
            .body: "✗ - → locking",
            .bigBody: "✗ - → locking",
            .ended: "✗ - → locking",
            .acquired: "forward → forwarding",
            .inFlight: "refuse 409 → done",
            .mismatch: "refuse 422 → done",
            .stored: "replay → done",
            .unreadable: "refuse 500 → done",
            .lockFailed: "refuse 503 → done",
            .head: "✗ - → locking",
            .responseBody: "✗ - → locking",
            .responseEnd: "✗ - → locking",
            .renewalDue: "✗ - → locking",
            .renewedHeld: "✗ - → locking",
            .renewedLost: "✗ - → locking",
            .renewedFailed: "✗ - → locking",
            .finished: "- → abandoned",
            .finishedLate: "- → abandoned",
        ],
        "forwarding": [
            .body: "✗ - → forwarding",
            .bigBody: "✗ - → forwarding",
            .ended: "✗ - → forwarding",
            .acquired: "✗ - → forwarding",
            .inFlight: "✗ - → forwarding",
            .mismatch: "✗ - → forwarding",
            .stored: "✗ - → forwarding",
            .unreadable: "✗ - → forwarding",
            .lockFailed: "✗ - → forwarding",
            .head: "- → recording",
            .responseBody: "✗ - → forwarding",
            .responseEnd: "✗ - → forwarding",
            .renewalDue: "renew → forwarding, renewing",
            .renewedHeld: "✗ - → forwarding",
            .renewedLost: "✗ - → forwarding",
            .renewedFailed: "✗ - → forwarding",
            .finished: "release → done",
            .finishedLate: "release → done",
        ],
        "forwarding, renewing": [
            .body: "✗ - → forwarding, renewing",
            .bigBody: "✗ - → forwarding, renewing",
            .ended: "✗ - → forwarding, renewing",
            .acquired: "✗ - → forwarding, renewing",
            .inFlight: "✗ - → forwarding, renewing",
            .mismatch: "✗ - → forwarding, renewing",
            .stored: "✗ - → forwarding, renewing",
            .unreadable: "✗ - → forwarding, renewing",
            .lockFailed: "✗ - → forwarding, renewing",
            .head: "- → recording, renewing",
            .responseBody: "✗ - → forwarding, renewing",
            .responseEnd: "✗ - → forwarding, renewing",
            .renewalDue: "- → forwarding, renewing",
            .renewedHeld: "- → forwarding",
            .renewedLost: "- → forwarding, lock lost",
            .renewedFailed: "- → forwarding",
            .finished: "release → done",
            .finishedLate: "release → done",
        ],
        "forwarding, lock lost": [
            .body: "✗ - → forwarding, lock lost",
            .bigBody: "✗ - → forwarding, lock lost",
            .ended: "✗ - → forwarding, lock lost",
            .acquired: "✗ - → forwarding, lock lost",
            .inFlight: "✗ - → forwarding, lock lost",
            .mismatch: "✗ - → forwarding, lock lost",
            .stored: "✗ - → forwarding, lock lost",
            .unreadable: "✗ - → forwarding, lock lost",
            .lockFailed: "✗ - → forwarding, lock lost",
            .head: "- → recording, lock lost",
            .responseBody: "✗ - → forwarding, lock lost",
            .responseEnd: "✗ - → forwarding, lock lost",
            .renewalDue: "- → forwarding, lock lost",
            .renewedHeld: "✗ - → forwarding, lock lost",
            .renewedLost: "✗ - → forwarding, lock lost",
            .renewedFailed: "✗ - → forwarding, lock lost",
            .finished: "release → done",
            .finishedLate: "release → done",
        ],
        "recording": [
            .body: "✗ - → recording",
            .bigBody: "✗ - → recording",
            .ended: "✗ - → recording",
            .acquired: "✗ - → recording",
            .inFlight: "✗ - → recording",
            .mismatch: "✗ - → recording",
            .stored: "✗ - → recording",
            .unreadable: "✗ - → recording",
            .lockFailed: "✗ - → recording",
            .head: "✗ - → recording",
            .responseBody: "- → recording",
            .responseEnd: "- → answered",
            .renewalDue: "renew → recording, renewing",
            .renewedHeld: "✗ - → recording",
            .renewedLost: "✗ - → recording",
            .renewedFailed: "✗ - → recording",
            .finished: "release → done",
            .finishedLate: "release → done",
        ],
        "too large": [
            .body: "✗ - → too large",
            .bigBody: "✗ - → too large",
            .ended: "✗ - → too large",
            .acquired: "✗ - → too large",
            .inFlight: "✗ - → too large",
            .mismatch: "✗ - → too large",
            .stored: "✗ - → too large",
            .unreadable: "✗ - → too large",
            .lockFailed: "✗ - → too large",
            .head: "✗ - → too large",
            .responseBody: "- → too large",
            .responseEnd: "- → answered, too large",
            .renewalDue: "renew → too large, renewing",
            .renewedHeld: "✗ - → too large",
            .renewedLost: "✗ - → too large",
            .renewedFailed: "✗ - → too large",
            .finished: "release → done",
            .finishedLate: "release → done",
        ],
        "answered": [
            .body: "✗ - → answered",
            .bigBody: "✗ - → answered",
            .ended: "✗ - → answered",
            .acquired: "✗ - → answered",
            .inFlight: "✗ - → answered",
            .mismatch: "✗ - → answered",
            .stored: "✗ - → answered",
            .unreadable: "✗ - → answered",
            .lockFailed: "✗ - → answered",
            .head: "✗ - → answered",
            .responseBody: "✗ - → answered",
            .responseEnd: "✗ - → answered",
            .renewalDue: "renew → answered, renewing",
            .renewedHeld: "✗ - → answered",
            .renewedLost: "✗ - → answered",
            .renewedFailed: "✗ - → answered",
            .finished: "store → done",
            .finishedLate: "lockExpired → done",
        ],
        "answered, too large": [
            .body: "✗ - → answered, too large",
            .bigBody: "✗ - → answered, too large",
            .ended: "✗ - → answered, too large",
            .acquired: "✗ - → answered, too large",
            .inFlight: "✗ - → answered, too large",
            .mismatch: "✗ - → answered, too large",
            .stored: "✗ - → answered, too large",
            .unreadable: "✗ - → answered, too large",
            .lockFailed: "✗ - → answered, too large",
            .head: "✗ - → answered, too large",
            .responseBody: "✗ - → answered, too large",
            .responseEnd: "✗ - → answered, too large",
            .renewalDue: "renew → answered, too large, renewing",
            .renewedHeld: "✗ - → answered, too large",
            .renewedLost: "✗ - → answered, too large",
            .renewedFailed: "✗ - → answered, too large",
            .finished: "release → done",
            .finishedLate: "release → done",
        ],
        "abandoned": [
            .body: "✗ - → abandoned",
            .bigBody: "✗ - → abandoned",
            .ended: "✗ - → abandoned",
            .acquired: "release → done",
            .inFlight: "- → done",
            .mismatch: "- → done",
            .stored: "- → done",
            .unreadable: "- → done",
            .lockFailed: "- → done",
            .head: "✗ - → abandoned",
            .responseBody: "✗ - → abandoned",
            .responseEnd: "✗ - → abandoned",
            .renewalDue: "✗ - → abandoned",
            .renewedHeld: "✗ - → abandoned",
            .renewedLost: "✗ - → abandoned",
            .renewedFailed: "✗ - → abandoned",
            .finished: "✗ - → abandoned",
            .finishedLate: "✗ - → abandoned",
        ],
        "done": [
            .body: "✗ - → done",
            .bigBody: "✗ - → done",
            .ended: "✗ - → done",
            .acquired: "✗ - → done",
            .inFlight: "✗ - → done",
            .mismatch: "✗ - → done",
            .stored: "✗ - → done",
            .unreadable: "✗ - → done",
            .lockFailed: "✗ - → done",
            .head: "✗ - → done",
            .responseBody: "✗ - → done",
            .responseEnd: "✗ - → done",
            .renewalDue: "✗ - → done",
            .renewedHeld: "- → done",
            .renewedLost: "- → done",
            .renewedFailed: "- → done",
            .finished: "- → done",
            .finishedLate: "- → done",
        ],
    ]

    /// 11 states × 18 inputs.
    @Test func everyInputInEveryStateIsDecided() {
        let pairs = StateMachineTable<Machine, Input>.check(
            Self.table, paths: Self.states, from: { Self.machine(maxBodyBytes: 8, maxStoredBody: 4, check: .counting) },
            illegalInputs: \.illegalInputs, kind: { Self.kind($0.state) }
        )
        #expect(pairs == 198)
    }

    // MARK: The lock's lifetime

    /// A response that streams for longer than the lock's lifetime keeps the lock: it is
    /// renewed every third of the lifetime while the request is forwarded, so a retry meanwhile
    /// gets `409`, and the whole response is stored at the end.
    @Test func aResponseStreamingPastTheLockLifetimeKeepsItsLock() {
        var machine = Self.forwarding(maxStoredBody: 100, check: .counting)
        #expect(Machine.renewalInterval(lockLifetime: Self.lockLifetime) == .seconds(5))
        machine.responseHead(status: 200, headers: [:])
        var second = 5.0
        while second <= 60 {
            machine.responseBody(ByteBuffer(string: "."))
            #expect(machine.renewalDue(at: Self.at(second)) == .renew, "at \(second) s")
            #expect(machine.renewalDue(at: Self.at(second + 0.1)) == .none, "one renewal at a time")
            machine.renewed(.held)
            second += 5
        }
        machine.responseEnded()
        #expect(machine.finished(at: Self.at(62)) == .store(IdempotentResponse(status: 200, headers: [:], body: Array(String(repeating: ".", count: 12).utf8))))
        #expect(machine.illegalInputs == 0)
        // The timer is cancelled with the finish: a tick after it is illegal, and nothing.
        #expect(machine.renewalDue(at: Self.at(65)) == .none, "nothing to renew once finished")
        #expect(machine.illegalInputs == 1)
    }

    /// The store overwrites the record unchecked, so it is sent only while the lock surely
    /// holds by the gateway's clock: renewed within the last lifetime minus a second.
    @Test func withoutARenewalTheAnswerIsNotStoredOnceTheLockRanOut() {
        var unrenewed = Self.forwarding()
        #expect(Self.emptyAnswerEnds(&unrenewed, at: 14.5) == .lockExpired)

        // A renewal Redis did not answer leaves the last lifetime in force.
        var failed = Self.forwarding()
        #expect(failed.renewalDue(at: Self.at(5)) == .renew)
        failed.renewed(.failed)
        #expect(Self.emptyAnswerEnds(&failed, at: 13.9) == .store(Self.emptyAnswer))

        var retried = Self.forwarding()
        #expect(retried.renewalDue(at: Self.at(5)) == .renew)
        retried.renewed(.failed)
        #expect(retried.renewalDue(at: Self.at(10)) == .renew, "tried again at the next tick")
        retried.renewed(.held)
        #expect(Self.emptyAnswerEnds(&retried, at: 23.9) == .store(Self.emptyAnswer))

        // A lock found gone or taken is never renewed again, and nothing is stored over it.
        var lost = Self.forwarding()
        #expect(lost.renewalDue(at: Self.at(5)) == .renew)
        lost.renewed(.lost)
        #expect(lost.renewalDue(at: Self.at(10)) == .none)
        #expect(Self.emptyAnswerEnds(&lost, at: 11) == .lockExpired)
    }

    static let emptyAnswer = IdempotentResponse(status: 200, headers: [:], body: [])

    /// What `machine` decides when the upstream's empty `200` ends at `seconds`.
    private static func emptyAnswerEnds(_ machine: inout Machine, at seconds: Double) -> Machine.Action {
        machine.responseHead(status: 200, headers: [:])
        machine.responseEnded()
        return machine.finished(at: at(seconds))
    }

    /// Only a forwarded request holds a lock to renew (the timer runs only then: a tick at
    /// any other time is illegal, counted here, and renews nothing).
    @Test func nothingIsRenewedBeforeTheLockOrAfterARefusal() {
        var reading = Self.machine(check: .counting)
        #expect(reading.renewalDue(at: Self.at(5)) == .none)
        _ = Self.fingerprint(&reading, body: [])
        #expect(reading.renewalDue(at: Self.at(5)) == .none, "still locking")
        #expect(reading.locked(.inFlight) == .refuse(Machine.inFlight))
        #expect(reading.renewalDue(at: Self.at(10)) == .none)
        #expect(reading.illegalInputs == 3)
    }

    // MARK: The header

    /// The key `fields` carry for a request of `method`, read as the engine does, from its head.
    private static func read(_ method: HTTPMethod, _ fields: HTTPHeaders, required: Bool) -> IdempotencyKeyHeader.Reading {
        IdempotencyKeyHeader.read(method: method, head: ClientRequestHead(HTTPRequestHead(version: .http1_1, method: method, uri: "/", headers: fields)), required: required)
    }

    @Test func theHeaderIsReadOnPostAndPatchOnly() {
        let keyed: HTTPHeaders = ["Idempotency-Key": "\"8e03978e-40d5-43e8-bc93-6894a57f9324\""]
        #expect(Self.read(.POST, keyed, required: false) == .keyed("8e03978e-40d5-43e8-bc93-6894a57f9324"))
        #expect(Self.read(.PATCH, ["Idempotency-Key": "abc"], required: false) == .keyed("abc"))
        #expect(Self.read(.PUT, keyed, required: true) == .notKeyed)
        #expect(Self.read(.GET, [:], required: true) == .notKeyed)
        #expect(Self.read(.POST, [:], required: false) == .notKeyed)
        #expect(Self.read(.POST, [:], required: true) == .refused(IdempotencyKeyHeader.missing))
        for bad in ["", "\"\"", "a b", String(repeating: "k", count: 256), "é"] {
            #expect(Self.read(.POST, ["Idempotency-Key": bad], required: false) == .refused(IdempotencyKeyHeader.malformed), "\(bad)")
        }
        #expect(Self.read(.POST, HTTPHeaders([("Idempotency-Key", "a"), ("Idempotency-Key", "b")]), required: false) == .refused(IdempotencyKeyHeader.malformed))
    }

    // MARK: The secrets

    @Test func recordNamesHideTheKeyAndSealedResponsesOpenOnlyForTheirRecord() throws {
        let secrets = IdempotencySecrets(derivingFrom: Array("test-phone-key-0123456789abcdef0123456789".utf8))
        let name = secrets.recordKey(route: "rides", caller: "user:u1", key: "my-key-123")
        #expect(name.hasPrefix("pg:idem:{") && name.hasSuffix("}"))
        // HMAC-SHA256 (key: HKDF of the secret, "idempotency-name-v1") of "5:rides" "7:user:u1"
        // "10:my-key-123": fixed across versions, like the fingerprint.
        #expect(name == "pg:idem:{9743d5840c10946d856109c2db8a33c7f5cb8716f12bb8c4ba63ed13a46aec8b}")
        #expect(!name.contains("my-key-123") && !name.contains("u1"))
        #expect(name != secrets.recordKey(route: "rides", caller: "user:u2", key: "my-key-123"))
        #expect(name != secrets.recordKey(route: "other", caller: "user:u1", key: "my-key-123"))
        #expect(name == IdempotencySecrets(derivingFrom: Array("test-phone-key-0123456789abcdef0123456789".utf8)).recordKey(route: "rides", caller: "user:u1", key: "my-key-123"))

        let plaintext = Array("MARKER-plaintext".utf8)
        let sealed = try secrets.seal(plaintext, recordKey: name)
        #expect(!String(decoding: sealed, as: UTF8.self).contains("MARKER"))
        #expect(secrets.open(sealed, recordKey: name) == plaintext)
        #expect(secrets.open(sealed, recordKey: name + "x") == nil, "bound to its record")
        let other = IdempotencySecrets(derivingFrom: Array("another-phone-key-0123456789abcdef012345".utf8))
        #expect(other.open(sealed, recordKey: name) == nil)
    }

    /// A driver enrolled by two partners is a caller per credential: partner A's SDK token
    /// neither reads what partner B's stored under a key nor claims B's key first.
    @Test func oneUsersKeysAreSeparatePerChannelAndPartner() {
        let secrets = IdempotencySecrets(derivingFrom: Array("test-phone-key-0123456789abcdef0123456789".utf8))
        let identities = [
            ProxyIdentity(userID: "usr_1", partnerID: "ptr_a", channel: "partner_sdk"),
            ProxyIdentity(userID: "usr_1", partnerID: "ptr_b", channel: "partner_sdk"),
            ProxyIdentity(userID: "usr_1", partnerID: nil, channel: "otp"),
            ProxyIdentity(partnerID: "ptr_a", channel: "api_key"),
            ProxyIdentity.anonymous,
        ]
        let callers = identities.map { IdempotentRequest.caller(of: $0, clientIP: "10.0.0.1") }
        #expect(Set(callers).count == identities.count, "\(callers)")
        let names = callers.map { secrets.recordKey(route: "rides", caller: $0, key: "k-1") }
        #expect(Set(names).count == identities.count)
        // The same credential again is the same caller.
        #expect(IdempotentRequest.caller(of: ProxyIdentity(userID: "usr_1", partnerID: "ptr_a", channel: "partner_sdk"), clientIP: "10.0.0.2") == callers[0])
    }

    /// Each seal takes the next nonce of the process's sequence: the same response sealed
    /// twice reads differently, and no nonce comes back.
    @Test func eachSealHasItsOwnNonce() throws {
        let secrets = IdempotencySecrets(derivingFrom: Array("test-phone-key-0123456789abcdef0123456789".utf8))
        let plaintext = Array("same".utf8)
        let nonces = try (0..<1000).map { _ in Array(try secrets.seal(plaintext, recordKey: "r").prefix(12)) }
        #expect(Set(nonces).count == nonces.count)
        let nonces2 = SealingNonces()
        let first = Array(nonces2.next())
        let second = Array(nonces2.next())
        #expect(first.count == 12 && first.prefix(4) == second.prefix(4) && first != second)
    }

    /// Redis Cluster routes a script by the keys it declares: none may name one itself.
    @Test func noScriptNamesAKeyItself() {
        for script in [IdempotencyScripts.release, IdempotencyScripts.renew, IdempotencyScripts.index] {
            #expect(!script.source.contains("pg:"), "\(script.name)")
        }
    }

    // MARK: The record

    @Test func aRecordSaysWhatARequestWithAFingerprintFinds() {
        let mine = String(repeating: "a", count: 64)
        let theirs = String(repeating: "b", count: 64)
        let lock = Array(IdempotencyRecord.lock(fingerprint: mine, owner: "owner-1").utf8)
        let stored = IdempotencyRecord.stored(fingerprint: mine, sealed: Array("sealed\u{0}\u{FF}".utf8))
        #expect(IdempotencyRecord.found(nil, fingerprint: mine) == .acquired, "SET NX GET replied nil: the lock is ours")
        #expect(IdempotencyRecord.found(lock, fingerprint: mine) == .inFlight)
        #expect(IdempotencyRecord.found(lock, fingerprint: theirs) == .mismatch)
        #expect(IdempotencyRecord.found(stored, fingerprint: mine) == .stored(sealed: Array("sealed\u{0}\u{FF}".utf8)))
        #expect(IdempotencyRecord.found(stored, fingerprint: theirs) == .mismatch)
        #expect(IdempotencyRecord.found(Array("F".utf8), fingerprint: mine) == nil, "too short to read")
        #expect(IdempotencyRecord.found(Array(("X" + mine + "x").utf8), fingerprint: mine) == nil, "an unknown kind")
    }
}
