import Crypto
import GatewayEdge
import GatewayPrimitives
import HTTPTypes
import NIOCore
import NIOHTTP1

/// What one keyed request (`POST`/`PATCH` with `Idempotency-Key` on a route with
/// `idempotency`) does next, decided without I/O: inputs in (body parts, the lock's outcome,
/// the upstream's response, the exchange's end), actions out; ``IdempotentRequest`` performs
/// them. Tested without Redis or sockets (`IdempotencyStateMachineTests`).
///
/// The rules, each once:
/// - the whole body is read (up to `max_body_bytes`, else `413`) before anything else, so its
///   digest is part of the request's fingerprint (method, target, body);
/// - the lock's outcome: free → forward and record; in flight → `409` with `Retry-After`;
///   another fingerprint → `422`; stored → the stored response; Redis failing → `503`, never
///   forwarded unprotected;
/// - the response is stored only when it ended whole, below `500` and within
///   `max_stored_body`; any other end frees the key so a retry is forwarded;
/// - the lock is renewed every third of its lifetime while the request is forwarded, however
///   long the response streams, and the answer is stored only while the lock surely holds by
///   the gateway's clock (the store overwrites the record unchecked).
///
/// Every input is tried in every state (`IdempotencyStateMachineTests`). An input its state
/// cannot have (the exchange's or the request's bug) is an ``IllegalInputCheck``: debug builds
/// stop; release builds give the answer documented at the input, which is nothing.
package struct IdempotencyStateMachine {
    package enum State {
        case readingBody(digest: SHA256, bytes: Int)
        /// The lock was asked for at `askedAt`: its lifetime in Redis starts then or later.
        case locking(askedAt: NIODeadline)
        case forwarding(Forwarding)
        /// The exchange ended while the lock was being taken: a lock that comes is freed.
        case abandoned
        case done
        /// Only inside an input, so that the recorded body is appended to in place, not copied.
        case modifying
    }

    /// A forwarded request: its lock and its response as recorded so far.
    package struct Forwarding {
        package var lock: Lock
        package var response: Response
    }

    package enum Lock: Equatable {
        /// The last confirmed lock or renewal was asked for at `since`: its lifetime started
        /// then at the earliest.
        case held(since: NIODeadline)
        /// A renewal asked for at `askedAt` is under way; until it answers, `since` stands.
        case renewing(since: NIODeadline, askedAt: NIODeadline)
        /// A renewal found the record no longer this request's: never renewed again, and
        /// nothing is stored over it.
        case lost
    }

    package enum Response: Equatable {
        case awaitingHead
        /// Recorded as it streams (its fields without the framing).
        case recording(IdempotentResponse)
        /// Over `max_stored_body`: its body is not kept, and it is never stored.
        case tooLarge(ended: Bool)
        /// Ended whole: stored at the finish when below `500`.
        case ended(IdempotentResponse)
    }

    /// What renewing the lock found.
    package enum Renewal {
        /// The record still held this request's lock: its lifetime starts again.
        case held
        /// The record was gone or another's.
        case lost
        /// Redis did not answer: the last lifetime stands, the next tick tries again.
        case failed
    }

    /// What the lock script found, the stored response already opened (nil: it did not open).
    package enum LockOutcome {
        case acquired, inFlight, mismatch
        case stored(IdempotentResponse?)
        /// Redis did not answer.
        case failed
    }

    package enum Action: Equatable {
        case none
        /// Run the lock script with this fingerprint.
        case lock(fingerprint: String)
        /// Answer in the error shape, nothing forwarded.
        case refuse(GatewayError)
        /// Forward the request (its held body) and record the response.
        case forward
        /// Answer with the stored response, nothing forwarded.
        case replay(IdempotentResponse)
        /// Store the recorded response (owner-checked).
        case store(IdempotentResponse)
        /// Free the key (owner-checked).
        case release
        /// Push the lock's expiry a lifetime on (owner-checked).
        case renew
        /// The response would have been stored, but the lock may have run out: nothing is written.
        case lockExpired
    }

    package private(set) var state = State.readingBody(digest: SHA256(), bytes: 0)
    private let method: String
    private let target: String
    private let maxBodyBytes: Int
    private let maxStoredBody: Int
    private let lockLifetime: Duration
    private var check: IllegalInputCheck

    package init(
        method: String, target: String, maxBodyBytes: Int, maxStoredBody: Int, lockLifetime: Duration, check: IllegalInputCheck = .asserting
    ) {
        self.method = method
        self.target = target
        self.maxBodyBytes = maxBodyBytes
        self.maxStoredBody = maxStoredBody
        self.lockLifetime = lockLifetime
        self.check = check
    }

    /// Illegal inputs seen (a ``IllegalInputCheck/counting`` machine's).
    package var illegalInputs: Int { check.count }

    /// How often ``renewalDue(at:)`` is asked while forwarding: a third of the lifetime, so
    /// one renewal lost or slow still leaves another before the lock runs out.
    package static func renewalInterval(lockLifetime: Duration) -> Duration {
        lockLifetime / 3
    }

    package var readsBody: Bool {
        switch state {
        case .readingBody: true
        case .locking, .forwarding, .abandoned, .done, .modifying: false
        }
    }

    // MARK: The request

    /// A part of the body. Illegal once the body is read (the exchange passes parts only
    /// while ``readsBody``): nothing.
    package mutating func requestBody(_ chunk: ByteBuffer) -> Action {
        switch state {
        case .readingBody(var digest, var bytes):
            bytes += chunk.readableBytes
            guard bytes <= maxBodyBytes else {
                state = .done
                return .refuse(.payloadTooLarge)
            }
            chunk.withUnsafeReadableBytes { digest.update(bufferPointer: $0) }
            state = .readingBody(digest: digest, bytes: bytes)
            return .none
        case .locking, .forwarding, .abandoned, .done:
            illegal("a body part after the body was read")
            return .none
        case .modifying:
            preconditionFailure("\(#function) inside an input")
        }
    }

    /// The request's body is all in (or it had none) at `now`: the fingerprint is known.
    /// Illegal once the body is read: nothing.
    package mutating func requestEnded(at now: NIODeadline) -> Action {
        switch state {
        case .readingBody(let digest, _):
            state = .locking(askedAt: now)
            var fingerprint = SHA256()
            LengthPrefixed.withMessage([method, target, Hex.encode(digest.finalize(), count: SHA256.byteCount)]) {
                fingerprint.update(bufferPointer: $0)
            }
            return .lock(fingerprint: Hex.encode(fingerprint.finalize(), count: SHA256.byteCount))
        case .locking, .forwarding, .abandoned, .done:
            illegal("the body's end after the body was read")
            return .none
        case .modifying:
            preconditionFailure("\(#function) inside an input")
        }
    }

    /// The lock script's answer, to the one lock asked for. Illegal in any other state: nothing.
    package mutating func locked(_ outcome: LockOutcome) -> Action {
        switch state {
        case .locking(let askedAt):
            switch outcome {
            case .acquired:
                state = .forwarding(Forwarding(lock: .held(since: askedAt), response: .awaitingHead))
                return .forward
            case .inFlight:
                state = .done
                return .refuse(Self.inFlight)
            case .mismatch:
                state = .done
                return .refuse(Self.mismatch)
            case .stored(let response?):
                state = .done
                return .replay(response)
            case .stored(nil):
                state = .done
                return .refuse(.internalError)
            case .failed:
                state = .done
                return .refuse(.serviceUnavailable)
            }
        case .abandoned:
            state = .done
            if case .acquired = outcome { return .release }
            return .none
        case .readingBody, .forwarding, .done:
            illegal("a lock's answer without a lock asked for")
            return .none
        case .modifying:
            preconditionFailure("\(#function) inside an input")
        }
    }

    // MARK: The response

    /// The upstream's head (one per forwarded request: the exchange passes no `1xx`).
    /// Illegal before forwarding or after the head: the first head stands.
    package mutating func responseHead(status: Int, headers: HTTPHeaders) {
        switch state {
        case .forwarding(var forwarding):
            switch forwarding.response {
            case .awaitingHead:
                forwarding.response = .recording(IdempotentResponse(status: status, headers: headers, body: []))
                state = .forwarding(forwarding)
            case .recording, .tooLarge, .ended:
                illegal("a second response head")
            }
        case .readingBody, .locking, .abandoned, .done:
            illegal("a response head for a request not forwarded")
        case .modifying:
            preconditionFailure("\(#function) inside an input")
        }
    }

    /// A part of the response's body: recorded up to `max_stored_body`. Illegal before its
    /// head or after its end: not recorded.
    package mutating func responseBody(_ chunk: ByteBuffer) {
        switch state {
        case .forwarding(var forwarding):
            switch forwarding.response {
            case .recording(var response):
                // Out of the state while it grows, so the body is appended to in place.
                state = .modifying
                forwarding.response = .awaitingHead
                if response.body.count + chunk.readableBytes > maxStoredBody {
                    forwarding.response = .tooLarge(ended: false)
                } else {
                    response.body += chunk.readableBytesView
                    forwarding.response = .recording(response)
                }
                state = .forwarding(forwarding)
            case .tooLarge(ended: false):
                break
            case .awaitingHead, .tooLarge(ended: true), .ended:
                illegal("a response body part outside the response")
            }
        case .readingBody, .locking, .abandoned, .done:
            illegal("a response body part for a request not forwarded")
        case .modifying:
            preconditionFailure("\(#function) inside an input")
        }
    }

    /// The response ended whole. Illegal before its head or after its end: nothing.
    package mutating func responseEnded() {
        switch state {
        case .forwarding(var forwarding):
            switch forwarding.response {
            case .recording(let response):
                forwarding.response = .ended(response)
                state = .forwarding(forwarding)
            case .tooLarge(ended: false):
                forwarding.response = .tooLarge(ended: true)
                state = .forwarding(forwarding)
            case .awaitingHead, .tooLarge(ended: true), .ended:
                illegal("a response's end outside the response")
            }
        case .readingBody, .locking, .abandoned, .done:
            illegal("a response's end for a request not forwarded")
        case .modifying:
            preconditionFailure("\(#function) inside an input")
        }
    }

    // MARK: The lock's lifetime

    /// The renewal timer fired at `now`: renew unless a renewal is under way or the lock is
    /// lost. Illegal unless forwarding (the timer runs from the forward to the finish, and
    /// its cancellation on the loop stops a tick due): nothing.
    package mutating func renewalDue(at now: NIODeadline) -> Action {
        switch state {
        case .forwarding(var forwarding):
            switch forwarding.lock {
            case .held(let since):
                forwarding.lock = .renewing(since: since, askedAt: now)
                state = .forwarding(forwarding)
                return .renew
            case .renewing, .lost:
                return .none
            }
        case .readingBody, .locking, .abandoned, .done:
            illegal("a renewal tick while not forwarding")
            return .none
        case .modifying:
            preconditionFailure("\(#function) inside an input")
        }
    }

    /// A renewal's answer. After the finish it changes nothing (Redis answered late).
    /// Illegal without a renewal under way: nothing.
    package mutating func renewed(_ renewal: Renewal) {
        switch state {
        case .forwarding(var forwarding):
            switch forwarding.lock {
            case .renewing(let since, let askedAt):
                switch renewal {
                case .held: forwarding.lock = .held(since: askedAt)
                case .lost: forwarding.lock = .lost
                case .failed: forwarding.lock = .held(since: since)
                }
                state = .forwarding(forwarding)
            case .held, .lost:
                illegal("a renewal's answer without a renewal")
            }
        case .done:
            break
        case .readingBody, .locking, .abandoned:
            illegal("a renewal's answer before forwarding")
        case .modifying:
            preconditionFailure("\(#function) inside an input")
        }
    }

    /// The exchange is over (answered, cut, or its client gone) at `now`. A refused or
    /// replayed request finishes once decided; a second finish is nothing. Illegal once
    /// abandoned (the exchange ends once): nothing, and a lock that comes is still freed.
    package mutating func finished(at now: NIODeadline) -> Action {
        switch state {
        case .readingBody:
            state = .done
            return .none
        case .locking:
            state = .abandoned
            return .none
        case .forwarding(let forwarding):
            state = .done
            guard case .ended(let response) = forwarding.response, response.status < 500 else { return .release }
            let since: NIODeadline
            switch forwarding.lock {
            case .held(let held), .renewing(let held, _): since = held
            case .lost: return .lockExpired
            }
            // A second's margin for the clocks and the store's trip to Redis.
            guard now - since < TimeAmount(lockLifetime - .seconds(1)) else { return .lockExpired }
            return .store(response)
        case .done:
            return .none
        case .abandoned:
            illegal("the exchange finished twice")
            return .none
        case .modifying:
            preconditionFailure("\(#function) inside an input")
        }
    }

    private mutating func illegal(_ what: String) {
        check.illegal("idempotent request: \(what) (\(state))")
    }

    // MARK: Refusals

    /// `409`: a repeat while the first request is still with the upstream.
    package static let inFlight = GatewayError(
        .conflict, "CONFLICT", "a request with this Idempotency-Key is still being processed; retry later",
        headers: [.retryAfter: "1"]
    )

    /// `422`: the key was used for another request.
    package static let mismatch = GatewayError(
        .unprocessableContent, "IDEMPOTENCY_KEY_REUSED", "this Idempotency-Key was used for a different request"
    )
}
