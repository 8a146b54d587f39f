import GatewayEdge
import NIOCore
import NIOHTTP1

extension ProxyExchange {
    /// What one proxied request does next, decided without I/O: inputs in (admission, the
    /// upstream connection, request and response parts, writability, failures), actions out.
    /// ``ProxyExchange`` only performs the actions. Modelled on AsyncHTTPClient's
    /// `HTTPRequestStateMachine`: the state is an enum whose cases carry their data, so a flag
    /// can never outlive the phase it belongs to, and every path is a test without sockets
    /// (`ProxyExchangeStateMachineTests`).
    ///
    /// The rules it holds, each once:
    /// - body parts wait while admission and the connection are under way, then go in order;
    /// - the request body is held to `max_body_bytes` (`413` before the response started);
    /// - back-pressure both ways: the client's body pauses while the upstream cannot take
    ///   more, the upstream's response pauses while the client cannot;
    /// - the retry rule (``RetryPolicy``): a request that was not sent (no connection could be
    ///   had) goes to another target, whatever its method; one that was sent and whose
    ///   connection closed before any answer goes again only without a body and with an
    ///   idempotent method; never more than `attempts` times. On a route of one target, only a
    ///   reused pooled connection (it may have gone stale) is worth a second try;
    /// - every failure's answer: before the response's head, `502`/`504`/`413`/`400` in the error
    ///   shape; after it, the client's connection is cut so a broken body never looks whole.
    package struct StateMachine {
        package enum State {
            /// Waiting for admission; body parts are held.
            case admitting(held: [HTTPServerRequestPart])
            /// Admitted, waiting for an upstream connection; body parts are held. `retries`:
            /// tries so far after the first.
            case connecting(held: [HTTPServerRequestPart], retries: Int)
            /// The request is with the upstream.
            case forwarding(Forwarding)
            /// The response ended, failed, or the client went away; `status` is the upstream's, when
            /// its head reached the client.
            case finished(status: Int?)
        }

        package struct Forwarding {
            /// The connection came from the pool's idle ones (it may have gone stale there).
            package var reused: Bool
            /// Tries before this one.
            package var retries: Int
            /// The request's end has been passed on (a request without a body ends with its head).
            package var requestEnded: Bool
            /// The client's body is paused while the upstream connection is not writable. Apart
            /// from ``requestEnded``: parts read before the pause took hold (the end among them)
            /// still arrive, and the client must be resumed all the same.
            package var requestPaused: Bool
            package var response: ResponseState
        }

        package enum ResponseState: Equatable {
            case waitingForHead
            /// The head went to the client; `paused` while the client cannot take more.
            case streaming(status: Int, paused: Bool)
            /// The end is being written (on HTTP/2 that write can close the stream at once,
            /// which must not count as the client going away).
            case ending(status: Int)
        }

        /// What the exchange does for an input.
        package enum Action: Equatable {
            case none
            /// Stop reading the client's body for now.
            case pauseRequestBody
            /// Read the client's body again.
            case resumeRequestBody
            /// Take an idle pooled connection or queue for one (``connected(reused:)`` follows).
            case acquireConnection
            /// A connection came after the exchange ended: back to the pool, unused.
            case releaseUnusedConnection
            /// Send the head on the connection, then the held parts in order (each through
            /// ``requestPart(_:)`` again), then ask ``headSent()``.
            case sendHead(held: [HTTPServerRequestPart])
            case sendBody(ByteBuffer)
            case sendEnd
            /// Read the upstream's response again.
            case resumeUpstream
            /// Write the response's head to the client (``ProxyResponseHead`` from the upstream's).
            case writeResponseHead
            case writeResponseBody(ByteBuffer)
            /// The connection back to the pool, then the response's end to the client.
            case endResponse
            /// Abort the upstream connection (if any), then answer the client in the error
            /// shape; `failure` is the metrics' kind when the route counts one.
            case fail(GatewayError, closeAfter: Bool, failure: String?)
            /// Abort the upstream connection (if any) and cut the client's connection.
            case abandon(failure: String)
            /// Abort the upstream connection (if any) and acquire a new one, on another target
            /// when there is one: the retry. ``retryRefused(_:)`` if none may be had.
            case retry
            /// The client went away: abort the upstream connection, record nothing.
            case clientGone
            /// The upstream switched protocols for the client's WebSocket handshake: write
            /// the `101`, then join the two connections (the upstream's leaves the pool).
            case upgrade
        }

        /// How many further tries a request may have, and where.
        package struct RetryPolicy: Equatable, Sendable {
            /// Further tries, at most.
            package var attempts: Int
            /// Another target can take a retry (a fleet of several); otherwise only a stale
            /// reused connection is worth one.
            package var otherTargets: Bool

            /// A route of one target, as before fleets: one retry after a stale connection.
            package static let single = RetryPolicy(attempts: 1, otherTargets: false)

            package init(attempts: Int, otherTargets: Bool) {
                self.attempts = attempts
                self.otherTargets = otherTargets
            }
        }

        package private(set) var state = State.admitting(held: [])
        private let hasBody: Bool
        /// Sending the request again cannot make it happen twice: an idempotent method and
        /// no body (the body is streamed, not kept).
        private let isRetryable: Bool
        private let retryPolicy: RetryPolicy
        private let maxBodyBytes: Int
        package private(set) var bodyBytes = 0
        /// Tries after the first, so far.
        package private(set) var retries = 0

        /// `method`, `hasBody` and `retries` decide the retry rule; `maxBodyBytes` the body limit.
        /// The request is a WebSocket handshake its route takes: only then may the upstream
        /// answer `101`.
        private let upgrade: Bool

        package init(method: HTTPMethod, hasBody: Bool, maxBodyBytes: Int, retries: RetryPolicy = .single, upgrade: Bool = false) {
            self.upgrade = upgrade
            self.hasBody = hasBody
            self.isRetryable = !hasBody && method.isSafeToRetry
            self.retryPolicy = retries
            self.maxBodyBytes = maxBodyBytes
        }

        /// The upstream's status as the client was sent it, once the response's head went.
        package var status: Int? {
            switch state {
            case .admitting, .connecting:
                return nil
            case .finished(let status):
                return status
            case .forwarding(let forwarding):
                switch forwarding.response {
                case .waitingForHead: return nil
                case .streaming(let status, _), .ending(let status): return status
                }
            }
        }

        package var isFinished: Bool {
            if case .finished = state { return true }
            return false
        }

        package var isForwarding: Bool {
            if case .forwarding = state { return true }
            return false
        }

        // MARK: Admission and the connection

        /// Admission takes an asynchronous step: the body waits.
        package mutating func admissionPending() -> Action {
            hasBody ? .pauseRequestBody : .none
        }

        /// Admitted; `declaredLength` is the request's `Content-Length`, if any.
        package mutating func admitted(declaredLength: Int?) -> Action {
            guard case .admitting(let held) = state else { return .none }
            if let declaredLength, declaredLength > maxBodyBytes {
                state = .finished(status: nil)
                return .fail(.payloadTooLarge, closeAfter: false, failure: "body_too_large")
            }
            state = .connecting(held: held, retries: 0)
            return .acquireConnection
        }

        /// A stored response answers the request (`Idempotency-Key`): nothing goes upstream.
        /// False: the exchange is not waiting to be forwarded any more.
        package mutating func answeredFromStore(status: Int) -> Bool {
            guard case .admitting = state else { return false }
            state = .finished(status: status)
            return true
        }

        package mutating func admissionRefused(_ refusal: GatewayError) -> Action {
            guard case .admitting = state else { return .none }
            state = .finished(status: nil)
            return .fail(refusal, closeAfter: false, failure: nil)
        }

        /// A CORS preflight the gateway answers itself: no admission, no upstream. False when
        /// the exchange is past admitting.
        package mutating func preflightAnswered() -> Bool {
            guard case .admitting = state else { return false }
            state = .finished(status: nil)
            return true
        }

        /// No idle connection: the exchange waits in the pool's queue, and the body with it.
        package mutating func waitingForConnection() -> Action {
            guard case .connecting = state else { return .none }
            return hasBody ? .pauseRequestBody : .none
        }

        /// A connection is the exchange's: an idle pooled one (`reused`) or a new one.
        package mutating func connected(reused: Bool) -> Action {
            guard case .connecting(let held, let retries) = state else { return .releaseUnusedConnection }
            state = .forwarding(Forwarding(
                reused: reused, retries: retries, requestEnded: !hasBody, requestPaused: false, response: .waitingForHead
            ))
            return .sendHead(held: held)
        }

        /// After the head and the held parts went: read from the client again (its body, or
        /// the next request) unless the upstream is not taking the body.
        package mutating func headSent() -> Action {
            guard case .forwarding(let forwarding) = state, !forwarding.requestPaused else { return .none }
            return .resumeRequestBody
        }

        // MARK: The request body

        /// A body part (or the end) of the request, as the client sends it.
        ///
        /// A body part of a request whose head declared none is refused in every state: its head
        /// went upstream framed as bodiless, and bytes written after it would be read there as
        /// a request of their own (smuggling). The edge frames every body it lets through, so
        /// this is the last line, not the rule.
        package mutating func requestPart(_ part: HTTPServerRequestPart) -> Action {
            if case .body = part, !hasBody {
                guard !isFinished else { return .none }
                return fail(.invalidRequest("the request carries a body its head did not declare"), closeAfter: true, failure: "undeclared_request_body")
            }
            switch state {
            case .admitting(var held):
                held.append(part)
                state = .admitting(held: held)
                return .none
            case .connecting(var held, let retries):
                held.append(part)
                state = .connecting(held: held, retries: retries)
                return .none
            case .forwarding(var forwarding):
                switch part {
                case .head:
                    return .none
                case .body(let chunk):
                    bodyBytes += chunk.readableBytes
                    guard bodyBytes <= maxBodyBytes else { return fail(.payloadTooLarge, failure: "body_too_large") }
                    return .sendBody(chunk)
                case .end:
                    // A request without a body ended with its head (``UpstreamRequestHead``).
                    guard !forwarding.requestEnded else { return .none }
                    forwarding.requestEnded = true
                    state = .forwarding(forwarding)
                    return .sendEnd
                }
            case .finished:
                return .none
            }
        }

        /// The upstream connection stopped taking body parts after one was sent (and flushed).
        package mutating func upstreamNotWritable() -> Action {
            guard case .forwarding(var forwarding) = state, !forwarding.requestEnded, !forwarding.requestPaused else { return .none }
            forwarding.requestPaused = true
            state = .forwarding(forwarding)
            return .pauseRequestBody
        }

        package mutating func upstreamWritable() -> Action {
            guard case .forwarding(var forwarding) = state, forwarding.requestPaused else { return .none }
            forwarding.requestPaused = false
            state = .forwarding(forwarding)
            return .resumeRequestBody
        }

        /// The client's request could not be decoded (a broken chunk, a body cut short).
        package mutating func clientFailed() -> Action {
            guard !isFinished else { return .none }
            return fail(.invalidRequest("the request body is malformed or incomplete"), closeAfter: true, failure: "broken_request_body")
        }

        /// The client went away.
        package mutating func clientClosed() -> Action {
            switch state {
            case .finished:
                return .none
            case .forwarding(let forwarding):
                if case .ending = forwarding.response { return .none }
            case .admitting, .connecting:
                break
            }
            state = .finished(status: status)
            return .clientGone
        }

        // MARK: The response

        /// The upstream's response head. Nil: the exchange is not forwarding (the part is refused).
        package mutating func upstreamHead(status: Int) -> Action? {
            guard case .forwarding(var forwarding) = state else { return nil }
            guard forwarding.response == .waitingForHead else { return upstreamFailed(.malformedResponse) }
            if status == 101 {
                // A switch nobody asked for (or before the request ended) is out of step.
                guard upgrade, forwarding.requestEnded else { return upstreamFailed(.malformedResponse) }
                state = .finished(status: 101)
                return .upgrade
            }
            forwarding.response = .streaming(status: status, paused: false)
            state = .forwarding(forwarding)
            return .writeResponseHead
        }

        package mutating func upstreamBody(_ chunk: ByteBuffer) -> Action? {
            guard case .forwarding(let forwarding) = state else { return nil }
            guard case .streaming = forwarding.response else { return upstreamFailed(.malformedResponse) }
            return .writeResponseBody(chunk)
        }

        /// The client stopped taking the response after a part was written (and flushed).
        package mutating func clientNotWritable() {
            guard case .forwarding(var forwarding) = state, case .streaming(let status, _) = forwarding.response else { return }
            forwarding.response = .streaming(status: status, paused: true)
            state = .forwarding(forwarding)
        }

        /// Whether the upstream's reading is paused for the client.
        package var awaitingClient: Bool {
            guard case .forwarding(let forwarding) = state, case .streaming(_, let paused) = forwarding.response else { return false }
            return paused
        }

        package mutating func clientWritable() -> Action {
            guard case .forwarding(var forwarding) = state, case .streaming(let status, true) = forwarding.response else { return .none }
            forwarding.response = .streaming(status: status, paused: false)
            state = .forwarding(forwarding)
            return .resumeUpstream
        }

        package mutating func upstreamEnd() -> Action? {
            guard case .forwarding(var forwarding) = state else { return nil }
            guard case .streaming(let status, _) = forwarding.response else { return upstreamFailed(.malformedResponse) }
            forwarding.response = .ending(status: status)
            state = .forwarding(forwarding)
            return .endResponse
        }

        /// The response's end was handed to the client: the exchange is over.
        package mutating func responseEnded() {
            state = .finished(status: status)
        }

        // MARK: Failures

        /// The upstream failed (or its connection could not be had: `.refused`).
        package mutating func upstreamFailed(_ error: UpstreamError) -> Action {
            switch state {
            case .finished, .admitting:
                return .none
            case .connecting(let held, let retries):
                // Nothing was sent: any request may go to another target, its held body with it.
                if retryPolicy.otherTargets, retries < retryPolicy.attempts {
                    state = .connecting(held: held, retries: retries + 1)
                    self.retries = retries + 1
                    return .retry
                }
                state = .finished(status: nil)
                return .fail(Self.answer(for: error), closeAfter: false, failure: error.description)
            case .forwarding(let forwarding):
                // Sent, and the connection closed before any answer: safe to send again if
                // nothing of the request can have been acted on twice. On a single target, only
                // a reused connection is worth it: it may have been closed by the upstream just
                // as it was taken (a new one that closed says the upstream really did).
                if error == .closed, forwarding.response == .waitingForHead, isRetryable, forwarding.retries < retryPolicy.attempts,
                    retryPolicy.otherTargets || (forwarding.reused && forwarding.retries == 0)
                {
                    state = .connecting(held: [], retries: forwarding.retries + 1)
                    retries = forwarding.retries + 1
                    return .retry
                }
                if forwarding.response == .waitingForHead {
                    state = .finished(status: nil)
                    return .fail(Self.answer(for: error), closeAfter: false, failure: error.description)
                }
                state = .finished(status: status)
                return .abandon(failure: error.description)
            }
        }

        /// The retry that ``upstreamFailed(_:)`` decided cannot be had (no target left to try,
        /// or the route's retry budget spent): the failure is answered after all.
        package mutating func retryRefused(_ error: UpstreamError) -> Action {
            guard case .connecting = state else { return .none }
            state = .finished(status: nil)
            return .fail(Self.answer(for: error), closeAfter: false, failure: error.description)
        }

        /// No target of the route takes requests (all ejected or unhealthy): answered at once.
        package mutating func noTarget() -> Action {
            guard case .connecting = state else { return .none }
            state = .finished(status: nil)
            return .fail(.upstreamUnavailable, closeAfter: false, failure: "no_target")
        }

        /// Answers a failure in the error shape while no response has started, else cuts the
        /// client's connection.
        private mutating func fail(_ error: GatewayError, closeAfter: Bool = false, failure: String) -> Action {
            let started = status != nil
            state = .finished(status: status)
            return started ? .abandon(failure: failure) : .fail(error, closeAfter: closeAfter, failure: failure)
        }

        private static func answer(for error: UpstreamError) -> GatewayError {
            error == .timeout ? .upstreamTimeout : .upstreamUnavailable
        }
    }
}
