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
package struct IdempotencyStateMachine {
    package enum State {
        case readingBody(digest: SHA256, bytes: Int)
        /// The lock was asked for at `askedAt`: its lifetime in Redis starts then or later.
        case locking(askedAt: NIODeadline)
        case forwarding(Recording)
        /// The exchange ended while the lock was being taken: a lock that comes is freed.
        case abandoned
        case done
    }

    package struct Recording {
        package var status: Int?
        package var headers = HTTPHeaders()
        package var body: [UInt8] = []
        package var tooLarge = false
        package var ended = false
        /// When the lock's current lifetime started at the earliest: the last confirmed lock
        /// or renewal was asked for then.
        package var lockHeldFrom: NIODeadline
        /// When the renewal under way was asked for.
        package var renewalAskedAt: NIODeadline?
        /// A renewal found the record no longer this request's.
        package var lockLost = false
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

    package init(method: String, target: String, maxBodyBytes: Int, maxStoredBody: Int, lockLifetime: Duration) {
        self.method = method
        self.target = target
        self.maxBodyBytes = maxBodyBytes
        self.maxStoredBody = maxStoredBody
        self.lockLifetime = lockLifetime
    }

    /// How often ``renewalDue(at:)`` is asked while forwarding: a third of the lifetime, so
    /// one renewal lost or slow still leaves another before the lock runs out.
    package static func renewalInterval(lockLifetime: Duration) -> Duration {
        lockLifetime / 3
    }

    package var readsBody: Bool {
        if case .readingBody = state { return true }
        return false
    }

    // MARK: The request

    package mutating func requestBody(_ chunk: ByteBuffer) -> Action {
        guard case .readingBody(var digest, var bytes) = state else { return .none }
        bytes += chunk.readableBytes
        guard bytes <= maxBodyBytes else {
            state = .done
            return .refuse(.payloadTooLarge)
        }
        chunk.withUnsafeReadableBytes { digest.update(bufferPointer: $0) }
        state = .readingBody(digest: digest, bytes: bytes)
        return .none
    }

    /// The request's body is all in (or it had none) at `now`: the fingerprint is known.
    package mutating func requestEnded(at now: NIODeadline) -> Action {
        guard case .readingBody(let digest, _) = state else { return .none }
        state = .locking(askedAt: now)
        var fingerprint = SHA256()
        LengthPrefixed.withMessage([method, target, Hex.encode(digest.finalize(), count: SHA256.byteCount)]) {
            fingerprint.update(bufferPointer: $0)
        }
        return .lock(fingerprint: Hex.encode(fingerprint.finalize(), count: SHA256.byteCount))
    }

    package mutating func locked(_ outcome: LockOutcome) -> Action {
        let askedAt: NIODeadline
        switch state {
        case .locking(let asked):
            askedAt = asked
        case .abandoned:
            state = .done
            if case .acquired = outcome { return .release }
            return .none
        default:
            return .none
        }
        switch outcome {
        case .acquired:
            state = .forwarding(Recording(lockHeldFrom: askedAt))
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
    }

    // MARK: The response

    package mutating func responseHead(status: Int, headers: HTTPHeaders) {
        guard case .forwarding(var recording) = state, recording.status == nil else { return }
        recording.status = status
        recording.headers = headers
        state = .forwarding(recording)
    }

    package mutating func responseBody(_ chunk: ByteBuffer) {
        guard case .forwarding(var recording) = state, !recording.tooLarge else { return }
        // Out of the state while it grows, so the array is not copied on every append.
        state = .done
        if recording.body.count + chunk.readableBytes > maxStoredBody {
            recording.tooLarge = true
            recording.body = []
        } else {
            recording.body += chunk.readableBytesView
        }
        state = .forwarding(recording)
    }

    package mutating func responseEnded() {
        guard case .forwarding(var recording) = state else { return }
        recording.ended = true
        state = .forwarding(recording)
    }

    // MARK: The lock's lifetime

    /// The renewal timer fired at `now`: renew unless a renewal is under way or the lock is lost.
    package mutating func renewalDue(at now: NIODeadline) -> Action {
        guard case .forwarding(var recording) = state, recording.renewalAskedAt == nil, !recording.lockLost else { return .none }
        recording.renewalAskedAt = now
        state = .forwarding(recording)
        return .renew
    }

    package mutating func renewed(_ renewal: Renewal) {
        guard case .forwarding(var recording) = state, let askedAt = recording.renewalAskedAt else { return }
        recording.renewalAskedAt = nil
        switch renewal {
        case .held: recording.lockHeldFrom = askedAt
        case .lost: recording.lockLost = true
        case .failed: break
        }
        state = .forwarding(recording)
    }

    /// The exchange is over (answered, cut, or its client gone) at `now`.
    package mutating func finished(at now: NIODeadline) -> Action {
        switch state {
        case .readingBody:
            state = .done
            return .none
        case .locking:
            state = .abandoned
            return .none
        case .forwarding(let recording):
            state = .done
            guard recording.ended, !recording.tooLarge, let status = recording.status, status < 500 else { return .release }
            // A second's margin for the clocks and the store's trip to Redis.
            guard !recording.lockLost, now - recording.lockHeldFrom < TimeAmount(lockLifetime - .seconds(1)) else { return .lockExpired }
            return .store(IdempotentResponse(status: status, headers: recording.headers, body: recording.body))
        case .abandoned, .done:
            return .none
        }
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
