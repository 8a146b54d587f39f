import GatewayEdge
import NIOCore
import NIOHTTP1

extension ProxyExchange {
    /// What one proxied request does next, decided without I/O: inputs in (admission, the
    /// target picked, the upstream connection, request and response parts, writability,
    /// failures), actions out. ``ProxyExchange`` only performs the actions. Modelled on
    /// AsyncHTTPClient's `HTTPRequestStateMachine`: the state is an enum whose cases carry their
    /// data, so a flag can never outlive the phase it belongs to, and every path is a test
    /// without sockets (`ProxyExchangeStateMachineTests`).
    ///
    /// The rules it holds, each once:
    /// - body parts wait while admission and the connection are under way, then go in order;
    /// - the request body is held to `max_body_bytes` (`413` before the response started);
    /// - back-pressure both ways: the client's body pauses while the upstream cannot take
    ///   more, the upstream's response pauses while the client cannot;
    /// - the retry rule (``RetryPolicy``): a request that was not sent (no connection could be
    ///   had) goes to another target, whatever its method; one that was sent and whose
    ///   connection closed before any answer goes again only without a body and with an
    ///   idempotent method; never more than `attempts` times, never to a target tried already.
    ///   On a route of one target, only a reused pooled connection (it may have gone stale) is
    ///   worth a second try;
    /// - when the fleet is told how a try went (once per try: its answer, its failure, or
    ///   nothing to say when the request ended otherwise);
    /// - every failure's answer: before the response's head, `502`/`504`/`413`/`400` in the error
    ///   shape; after it, the client's connection is cut so a broken body never looks whole.
    ///
    /// Every input is decided for every state by an explicit `switch`. An input the exchange
    /// never gives in a state (it would be out of step with itself) goes to the machine's
    /// ``IllegalInputCheck``, which stops a debug build; a release build goes on with the answer
    /// each input documents for it, chosen to end the request rather than leave it hanging or
    /// send anything twice.
    package struct StateMachine {
        package enum State {
            /// Waiting for admission; body parts are held.
            case admitting(held: [HTTPServerRequestPart])
            /// Admitted, picking a target or waiting for a connection to it; body parts are held.
            case connecting(Connecting)
            /// The request is with the upstream.
            case forwarding(Forwarding)
            /// The response ended, failed, or the client went away; `status` is the upstream's, when
            /// its head reached the client; `tries`: how many targets were tried.
            case finished(status: Int?, tries: Int)
        }

        /// The request's tries so far.
        package struct Tries: Equatable {
            /// The targets tried (the fleet's indices): a retry on a fleet of several goes elsewhere.
            package var targets = TargetSet()
            /// Tries started, the current one included (the access log's `tries`).
            package var count = 0
        }

        package struct Connecting {
            /// Body parts that arrived meanwhile: sent after the head.
            package var held: [HTTPServerRequestPart]
            package var tries: Tries
            package var step: Step
        }

        package enum Step: Equatable {
            /// A target is being picked for the next try. `after`: why the last try failed (nil
            /// before the first), which is what a retry that cannot be had answers.
            case picking(after: UpstreamError?)
            /// The try's connection to target `index` is being had; the fleet is still to be told
            /// how the try went.
            case acquiring(target: Int)
        }

        package struct Forwarding {
            /// The connection came from the pool's idle ones (it may have gone stale there).
            package var reused: Bool
            package var tries: Tries
            /// The request's end has been passed on (a request without a body ends with its head).
            package var requestEnded: Bool
            /// The client's body is paused while the upstream connection is not writable. Apart
            /// from ``requestEnded``: parts read before the pause took hold (the end among them)
            /// still arrive, and the client must be resumed all the same.
            package var requestPaused: Bool
            package var response: ResponseState
        }

        package enum ResponseState: Equatable {
            /// No head yet: the fleet is still to be told how the try went.
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
            /// The request's first try: count the request in its route's retry budget, then pick
            /// a target (``picked(target:)`` or ``noTarget()`` follows).
            case pickTarget
            /// Take an idle pooled connection to the picked target, or queue for one
            /// (``connected(reused:)``, ``waitingForConnection()`` or ``upstreamFailed(_:)`` follows).
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
            /// Tell the fleet the try was answered (its status), then write the response's head
            /// to the client (``ProxyResponseHead`` from the upstream's).
            case writeResponseHead
            case writeResponseBody(ByteBuffer)
            /// The connection back to the pool, then the response's end to the client.
            case endResponse
            /// Abort the upstream connection (if any), tell the fleet `report` (when a try was
            /// under way), then answer the client in the error shape; `failure` is the metrics'
            /// kind when the route counts one.
            case fail(GatewayError, closeAfter: Bool, failure: String?, report: UpstreamFleet.Outcome? = nil)
            /// Abort the upstream connection (if any) and cut the client's connection.
            case abandon(failure: String)
            /// Tell the fleet `report`, abort the upstream connection (if any); then, if the
            /// route's retry budget allows, pick a target that is none of `excluding`
            /// (``picked(target:)`` or ``noTarget()`` follows), else ``retryRefused()``.
            case retry(excluding: TargetSet, report: UpstreamFleet.Outcome)
            /// The client went away: abort the upstream connection, tell the fleet `report` (when
            /// a try was under way), record nothing.
            case clientGone(report: UpstreamFleet.Outcome? = nil)
            /// The upstream switched protocols for the client's WebSocket handshake: tell the
            /// fleet the try was answered, write the `101`, then join the two connections (the
            /// upstream's leaves the pool).
            case upgrade
        }

        /// How many further tries a request may have, and where.
        package struct RetryPolicy: Equatable, Sendable {
            /// Further tries, at most.
            package var attempts: Int
            /// Another target can take a retry (a fleet of several); otherwise only a stale
            /// reused connection is worth one.
            package var otherTargets: Bool

            /// A route of one target: one retry after a stale connection.
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
        /// The request is a WebSocket handshake its route takes: only then may the upstream
        /// answer `101`.
        private let upgrade: Bool
        private var check: IllegalInputCheck
        /// Illegal inputs seen (a ``IllegalInputCheck/counting`` machine's).
        package var illegalInputs: Int { check.count }

        /// `method`, `hasBody` and `retries` decide the retry rule; `maxBodyBytes` the body limit.
        package init(
            method: HTTPMethod, hasBody: Bool, maxBodyBytes: Int, retries: RetryPolicy = .single, upgrade: Bool = false,
            check: IllegalInputCheck = .asserting
        ) {
            self.upgrade = upgrade
            self.hasBody = hasBody
            self.isRetryable = !hasBody && method.isSafeToRetry
            self.retryPolicy = retries
            self.maxBodyBytes = maxBodyBytes
            self.check = check
        }

        /// The upstream's status as the client was sent it, once the response's head went.
        package var status: Int? {
            switch state {
            case .admitting, .connecting:
                return nil
            case .finished(let status, _):
                return status
            case .forwarding(let forwarding):
                switch forwarding.response {
                case .waitingForHead: return nil
                case .streaming(let status, _), .ending(let status): return status
                }
            }
        }

        /// Targets tried so far.
        package var tries: Int {
            switch state {
            case .admitting: 0
            case .connecting(let connecting): connecting.tries.count
            case .forwarding(let forwarding): forwarding.tries.count
            case .finished(_, let tries): tries
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

        /// Whether the upstream's reading is paused for the client.
        package var awaitingClient: Bool {
            guard case .forwarding(let forwarding) = state, case .streaming(_, let paused) = forwarding.response else { return false }
            return paused
        }

        /// A try is under way and the fleet has not been told how it went: its connection is
        /// being had, or its request is with the upstream and no head came back.
        private var tryUnderWay: Bool {
            switch state {
            case .admitting, .finished:
                return false
            case .connecting(let connecting):
                if case .acquiring = connecting.step { return true }
                return false
            case .forwarding(let forwarding):
                return forwarding.response == .waitingForHead
            }
        }

        // MARK: Admission

        /// Admission takes an asynchronous step: the body waits. Illegal once admitted: `.none`.
        package mutating func admissionPending() -> Action {
            switch state {
            case .admitting:
                return hasBody ? .pauseRequestBody : .none
            case .finished:
                // Over before it started (its client gone, its body refused).
                return .none
            case .connecting, .forwarding:
                illegal("admissionPending()")
                return .none
            }
        }

        /// Admitted; `declaredLength` is the request's `Content-Length`, if any. Illegal while
        /// connecting or forwarding (admitted twice): `.none`.
        package mutating func admitted(declaredLength: Int?) -> Action {
            switch state {
            case .admitting(let held):
                if let declaredLength, declaredLength > maxBodyBytes {
                    finish(status: nil)
                    return .fail(.payloadTooLarge, closeAfter: false, failure: "body_too_large")
                }
                state = .connecting(Connecting(held: held, tries: Tries(), step: .picking(after: nil)))
                return .pickTarget
            case .finished:
                // The client went away, or its body was refused, while admission took its step.
                return .none
            case .connecting, .forwarding:
                illegal("admitted(declaredLength:)")
                return .none
            }
        }

        /// A stored response answers the request (`Idempotency-Key`): nothing goes upstream.
        /// False: the exchange is not waiting to be forwarded any more (illegal unless finished).
        package mutating func answeredFromStore(status: Int) -> Bool {
            switch state {
            case .admitting:
                finish(status: status)
                return true
            case .finished:
                return false
            case .connecting, .forwarding:
                illegal("answeredFromStore(status:)")
                return false
            }
        }

        /// Illegal while connecting or forwarding: `.none`.
        package mutating func admissionRefused(_ refusal: GatewayError) -> Action {
            switch state {
            case .admitting:
                finish(status: nil)
                return .fail(refusal, closeAfter: false, failure: nil)
            case .finished:
                return .none
            case .connecting, .forwarding:
                illegal("admissionRefused(_:)")
                return .none
            }
        }

        /// A CORS preflight the gateway answers itself: no admission, no upstream. False when the
        /// exchange is over already; it comes before admission or not at all (illegal once
        /// admitted: false).
        package mutating func preflightAnswered() -> Bool {
            switch state {
            case .admitting:
                finish(status: nil)
                return true
            case .finished:
                return false
            case .connecting, .forwarding:
                illegal("preflightAnswered()")
                return false
            }
        }

        // MARK: The target and the connection

        /// The fleet picked target `index` for the next try. Illegal unless picking: `.none`
        /// (the exchange hands the target back untried).
        package mutating func picked(target index: Int) -> Action {
            switch state {
            case .connecting(var connecting):
                switch connecting.step {
                case .picking:
                    connecting.tries.targets.insert(index)
                    connecting.tries.count += 1
                    connecting.step = .acquiring(target: index)
                    state = .connecting(connecting)
                    return .acquireConnection
                case .acquiring:
                    illegal("picked(target:) while acquiring")
                    return .none
                }
            case .admitting, .forwarding, .finished:
                illegal("picked(target:)")
                return .none
            }
        }

        /// No target of the route takes the try (all ejected, unhealthy or tried): the first
        /// try is `502 no_target`; a retry answers the failure it was to make up for. Illegal
        /// unless picking: `.none`.
        package mutating func noTarget() -> Action {
            switch state {
            case .connecting(let connecting):
                switch connecting.step {
                case .picking(after: nil):
                    finish(status: nil)
                    return .fail(.upstreamUnavailable, closeAfter: false, failure: "no_target")
                case .picking(after: let failure?):
                    return answer(failure)
                case .acquiring:
                    illegal("noTarget() while acquiring")
                    return .none
                }
            case .admitting, .forwarding, .finished:
                illegal("noTarget()")
                return .none
            }
        }

        /// The retry that ``upstreamFailed(_:)`` decided cannot be had (the route's retry budget
        /// is spent): the failure is answered after all. Illegal before a first try failed:
        /// answered as ``noTarget()``; elsewhere: `.none`.
        package mutating func retryRefused() -> Action {
            switch state {
            case .connecting(let connecting):
                switch connecting.step {
                case .picking(after: let failure?):
                    return answer(failure)
                case .picking(after: nil):
                    illegal("retryRefused() before any try")
                    return noTarget()
                case .acquiring:
                    illegal("retryRefused() while acquiring")
                    return .none
                }
            case .admitting, .forwarding, .finished:
                illegal("retryRefused()")
                return .none
            }
        }

        /// No idle connection: the exchange waits in the pool's queue, and the body with it.
        /// Illegal unless acquiring: `.none`.
        package mutating func waitingForConnection() -> Action {
            switch state {
            case .connecting(let connecting):
                switch connecting.step {
                case .acquiring:
                    return hasBody ? .pauseRequestBody : .none
                case .picking:
                    illegal("waitingForConnection() while picking")
                    return .none
                }
            case .admitting, .forwarding, .finished:
                illegal("waitingForConnection()")
                return .none
            }
        }

        /// A connection is the exchange's: an idle pooled one (`reused`) or a new one. After the
        /// end it goes back unused; illegal anywhere but acquiring and finished, where it
        /// goes back unused too.
        package mutating func connected(reused: Bool) -> Action {
            switch state {
            case .connecting(let connecting):
                switch connecting.step {
                case .acquiring:
                    state = .forwarding(Forwarding(
                        reused: reused, tries: connecting.tries, requestEnded: !hasBody, requestPaused: false, response: .waitingForHead
                    ))
                    return .sendHead(held: connecting.held)
                case .picking:
                    illegal("connected(reused:) while picking")
                    return .releaseUnusedConnection
                }
            case .finished:
                // The client went away while the exchange waited in the pool's queue.
                return .releaseUnusedConnection
            case .admitting, .forwarding:
                illegal("connected(reused:)")
                return .releaseUnusedConnection
            }
        }

        /// After the head and the held parts went: read from the client again (its body, or
        /// the next request) unless the upstream is not taking the body. Illegal while admitting: `.none`.
        package mutating func headSent() -> Action {
            switch state {
            case .forwarding(let forwarding):
                return forwarding.requestPaused ? .none : .resumeRequestBody
            case .connecting, .finished:
                // The flush that sent the head found the connection closed: retried or answered.
                return .none
            case .admitting:
                illegal("headSent()")
                return .none
            }
        }

        // MARK: The request body

        /// A body part (or the end) of the request, as the client sends it. The head never
        /// comes this way (illegal: ignored), nor a part after the end (illegal: ignored).
        ///
        /// A body part of a request whose head declared none is refused in every state: its head
        /// went upstream framed as bodiless, and bytes written after it would be read there as
        /// a request of their own (smuggling). The edge frames every body it lets through, so
        /// this is the last line, not the rule.
        package mutating func requestPart(_ part: HTTPServerRequestPart) -> Action {
            switch part {
            case .head:
                switch state {
                case .finished:
                    return .none
                case .admitting, .connecting, .forwarding:
                    illegal("requestPart(.head)")
                    return .none
                }
            case .body(let chunk):
                switch state {
                case .finished:
                    return .none
                case .admitting(var held):
                    guard hasBody else { return refuseUndeclaredBody() }
                    held.append(part)
                    state = .admitting(held: held)
                    return .none
                case .connecting(var connecting):
                    guard hasBody else { return refuseUndeclaredBody() }
                    connecting.held.append(part)
                    state = .connecting(connecting)
                    return .none
                case .forwarding(let forwarding):
                    guard hasBody else { return refuseUndeclaredBody() }
                    guard !forwarding.requestEnded else {
                        illegal("requestPart(.body) after the end")
                        return .none
                    }
                    bodyBytes += chunk.readableBytes
                    guard bodyBytes <= maxBodyBytes else { return fail(.payloadTooLarge, failure: "body_too_large") }
                    return .sendBody(chunk)
                }
            case .end:
                switch state {
                case .finished:
                    return .none
                case .admitting(var held):
                    held.append(part)
                    state = .admitting(held: held)
                    return .none
                case .connecting(var connecting):
                    connecting.held.append(part)
                    state = .connecting(connecting)
                    return .none
                case .forwarding(var forwarding):
                    // A request without a body ended with its head (``UpstreamRequestHead``).
                    guard !forwarding.requestEnded else { return .none }
                    forwarding.requestEnded = true
                    state = .forwarding(forwarding)
                    return .sendEnd
                }
            }
        }

        private mutating func refuseUndeclaredBody() -> Action {
            fail(.invalidRequest("the request carries a body its head did not declare"), closeAfter: true, failure: "undeclared_request_body")
        }

        /// The upstream connection stopped taking body parts after one was sent (and flushed).
        /// Illegal before forwarding: `.none`.
        package mutating func upstreamNotWritable() -> Action {
            switch state {
            case .forwarding(var forwarding):
                guard !forwarding.requestEnded, !forwarding.requestPaused else { return .none }
                forwarding.requestPaused = true
                state = .forwarding(forwarding)
                return .pauseRequestBody
            case .finished:
                // The flush that found the connection full also found it failed.
                return .none
            case .admitting, .connecting:
                illegal("upstreamNotWritable()")
                return .none
            }
        }

        /// Illegal before forwarding (there is no connection): `.none`.
        package mutating func upstreamWritable() -> Action {
            switch state {
            case .forwarding(var forwarding):
                guard forwarding.requestPaused else { return .none }
                forwarding.requestPaused = false
                state = .forwarding(forwarding)
                return .resumeRequestBody
            case .finished:
                return .none
            case .admitting, .connecting:
                illegal("upstreamWritable()")
                return .none
            }
        }

        /// The client's request could not be decoded (a broken chunk, a body cut short).
        package mutating func clientFailed() -> Action {
            switch state {
            case .admitting, .connecting, .forwarding:
                return fail(.invalidRequest("the request body is malformed or incomplete"), closeAfter: true, failure: "broken_request_body")
            case .finished:
                return .none
            }
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
            let report: UpstreamFleet.Outcome? = tryUnderWay ? .neutral : nil
            finish(status: status)
            return .clientGone(report: report)
        }

        // MARK: The response

        /// The upstream's response head. Nil: the exchange is not forwarding (the part is
        /// refused); illegal before forwarding (there is no connection), nil too.
        package mutating func upstreamHead(status: Int) -> Action? {
            switch state {
            case .forwarding(var forwarding):
                switch forwarding.response {
                case .waitingForHead:
                    if status == 101 {
                        // A switch nobody asked for (or before the request ended) is out of step.
                        guard upgrade, forwarding.requestEnded else { return upstreamFailed(.malformedResponse) }
                        finish(status: 101)
                        return .upgrade
                    }
                    forwarding.response = .streaming(status: status, paused: false)
                    state = .forwarding(forwarding)
                    return .writeResponseHead
                case .streaming, .ending:
                    return upstreamFailed(.malformedResponse)
                }
            case .finished:
                return nil
            case .admitting, .connecting:
                illegal("upstreamHead(status:)")
                return nil
            }
        }

        /// Nil as for ``upstreamHead(status:)``.
        package mutating func upstreamBody(_ chunk: ByteBuffer) -> Action? {
            switch state {
            case .forwarding(let forwarding):
                switch forwarding.response {
                case .streaming:
                    return .writeResponseBody(chunk)
                case .waitingForHead, .ending:
                    return upstreamFailed(.malformedResponse)
                }
            case .finished:
                return nil
            case .admitting, .connecting:
                illegal("upstreamBody(_:)")
                return nil
            }
        }

        /// Nil as for ``upstreamHead(status:)``.
        package mutating func upstreamEnd() -> Action? {
            switch state {
            case .forwarding(var forwarding):
                switch forwarding.response {
                case .streaming(let status, _):
                    forwarding.response = .ending(status: status)
                    state = .forwarding(forwarding)
                    return .endResponse
                case .waitingForHead, .ending:
                    return upstreamFailed(.malformedResponse)
                }
            case .finished:
                return nil
            case .admitting, .connecting:
                illegal("upstreamEnd()")
                return nil
            }
        }

        /// The response ends here, before the upstream's end (an event stream while the
        /// listener drains): true while it streams, and its end is then being written.
        package mutating func streamEndsEarly() -> Bool {
            guard case .forwarding(var forwarding) = state, case .streaming(let status, _) = forwarding.response else { return false }
            forwarding.response = .ending(status: status)
            state = .forwarding(forwarding)
            return true
        }

        /// The client stopped taking the response after a part was written (and flushed).
        /// Illegal unless the response is streaming: nothing changes.
        package mutating func clientNotWritable() {
            switch state {
            case .forwarding(var forwarding):
                switch forwarding.response {
                case .streaming(let status, _):
                    forwarding.response = .streaming(status: status, paused: true)
                    state = .forwarding(forwarding)
                case .waitingForHead, .ending:
                    illegal("clientNotWritable() before or after the body")
                }
            case .finished:
                // The write that filled the client's buffer also found it gone.
                break
            case .admitting, .connecting:
                illegal("clientNotWritable()")
            }
        }

        /// The client can take more; it may say so in any state.
        package mutating func clientWritable() -> Action {
            switch state {
            case .forwarding(var forwarding):
                guard case .streaming(let status, true) = forwarding.response else { return .none }
                forwarding.response = .streaming(status: status, paused: false)
                state = .forwarding(forwarding)
                return .resumeUpstream
            case .admitting, .connecting, .finished:
                return .none
            }
        }

        /// The response's end was handed to the client: the exchange is over. Illegal unless
        /// the end was being written (or the exchange ended as it was): over all the same.
        package mutating func responseEnded() {
            switch state {
            case .forwarding(let forwarding):
                if case .ending = forwarding.response {} else { illegal("responseEnded() before the end") }
            case .finished:
                return
            case .admitting, .connecting:
                illegal("responseEnded()")
            }
            finish(status: status)
        }

        // MARK: Failures

        /// The upstream failed (or its connection could not be had: `.refused`). Illegal while
        /// admitting or picking (there is no connection): `.none`.
        package mutating func upstreamFailed(_ error: UpstreamError) -> Action {
            // A timeout says nothing about the target's health; anything else counts against it.
            let report: UpstreamFleet.Outcome = error == .timeout ? .neutral : .failed
            switch state {
            case .finished:
                // The pool's queue, left as the exchange ended, fails the wait.
                return .none
            case .admitting:
                illegal("upstreamFailed(_:)")
                return .none
            case .connecting(let connecting):
                switch connecting.step {
                case .picking:
                    illegal("upstreamFailed(_:) while picking")
                    return .none
                case .acquiring:
                    // Nothing was sent: any request may go to another target, its held body with it.
                    if retryPolicy.otherTargets, connecting.tries.count - 1 < retryPolicy.attempts {
                        state = .connecting(Connecting(held: connecting.held, tries: connecting.tries, step: .picking(after: error)))
                        return .retry(excluding: connecting.tries.targets, report: report)
                    }
                    return answer(error, report: report)
                }
            case .forwarding(let forwarding):
                switch forwarding.response {
                case .waitingForHead:
                    // Sent, and the connection closed before any answer: safe to send again if
                    // nothing of the request can have been acted on twice. On a single target, only
                    // a reused connection is worth it: it may have been closed by the upstream just
                    // as it was taken (a new one that closed says the upstream really did).
                    let retries = forwarding.tries.count - 1
                    if error == .closed, isRetryable, retries < retryPolicy.attempts,
                        retryPolicy.otherTargets || (forwarding.reused && retries == 0)
                    {
                        state = .connecting(Connecting(held: [], tries: forwarding.tries, step: .picking(after: error)))
                        return .retry(excluding: retryPolicy.otherTargets ? forwarding.tries.targets : TargetSet(), report: report)
                    }
                    return answer(error, report: report)
                case .streaming, .ending:
                    finish(status: status)
                    return .abandon(failure: error.description)
                }
            }
        }

        /// Answers a failure in the error shape while no response has started, else cuts the
        /// client's connection; a try under way says nothing about its target.
        private mutating func fail(_ error: GatewayError, closeAfter: Bool = false, failure: String) -> Action {
            let status = self.status
            let report: UpstreamFleet.Outcome? = tryUnderWay ? .neutral : nil
            finish(status: status)
            return status != nil ? .abandon(failure: failure) : .fail(error, closeAfter: closeAfter, failure: failure, report: report)
        }

        /// Answers an upstream failure before any response: `504` for a timeout, else `502`.
        private mutating func answer(_ error: UpstreamError, report: UpstreamFleet.Outcome? = nil) -> Action {
            finish(status: nil)
            return .fail(error == .timeout ? .upstreamTimeout : .upstreamUnavailable, closeAfter: false, failure: error.description, report: report)
        }

        private mutating func finish(status: Int?) {
            state = .finished(status: status, tries: tries)
        }

        private mutating func illegal(_ input: StaticString) {
            check.illegal("ProxyExchange.StateMachine: \(input) in \(state)")
        }
    }
}
