import GatewayEdge
import NIOCore
import NIOHTTP1

extension HTTP1ConnectionHandler {
    /// One HTTP/1 client connection's requests and answers, decided without I/O: inputs in
    /// (heads the edge admitted or refused, body parts, errors, answers' heads and ends from
    /// the proxy engine and from Hummingbird alike, reads asked for, shutdown, deadlines),
    /// one ``Action`` out. ``HTTP1ConnectionHandler`` only performs them. Modelled on NIO's
    /// `HTTPServerPipelineHandler` (one request under way, the rest held), Hummingbird's
    /// `HTTPConnectionStateHandler` (the idle deadline returned, not kept by the handler) and
    /// AsyncHTTPClient's `HTTP1ConnectionStateMachine` (the state an enum whose cases carry
    /// their data; ``State/modifying`` so the queue is never copied on a transition). Every
    /// state meets every input in `HTTP1ConnectionStateMachineTests`, without sockets.
    ///
    /// The rules it holds, each once:
    /// - one request is under way at a time (``Turn``): its parts go to whoever answers it
    ///   (``Owner``), and the next request's parts wait until both its request and its
    ///   response have ended, so pipelined requests are answered in order whichever mix of
    ///   routes and endpoints they are;
    /// - a response to `HEAD` has no body; a request without keep-alive (`Connection: close`,
    ///   HTTP/1.0 without keep-alive) is the connection's last: nothing after it is taken, and
    ///   the connection closes lingering (``Phase/finishing``, ``State/lingering(_:)``);
    /// - `Expect: 100-continue` is answered when its request's turn comes;
    /// - a head the edge refused is answered in its turn, after the responses before it
    ///   (``Phase/refusing(_:)``), and nothing after it is taken; a parser error is the
    ///   connection's to answer only when no answer is outstanding (else its request's owner
    ///   gets it), a head too large always is;
    /// - a client that sent all it will (half-closed) is answered, then the connection closes
    ///   (``Phase/inputEnded``);
    /// - the listener's drain (graceful shutdown) loses no request (``Phase/draining``): the
    ///   next final response says `Connection: close` and the connection closes lingering after
    ///   it; an idle connection waits ``drainIdleGrace`` for a request its client may be sending
    ///   already, then closes lingering (stop sending, drop what arrives), never with a reset;
    /// - a stalled body's `408` (``RequestEdge``) can go out only for the one request
    ///   outstanding, before its response started;
    /// - the connection answers at most one error of its own: after it, ``State/closing``;
    /// - reading is held while the proxied body is paused or ``maxWaiting`` parts wait
    ///   (``Reading``), so neither a pipelining client nor a fast upload grows memory;
    /// - the idle deadline closes only a connection with no response outstanding, and an idle
    ///   one parks after ``ConnectionParking/delay`` (the arithmetic is here, the timer the
    ///   handler's).
    ///
    /// An input the handler cannot send in a state (a head read after input is discarded, an
    /// owner assigned to no request, a lingering close nobody asked for) is illegal: it calls
    /// ``IllegalInputCheck`` (debug builds stop there) and gets the answer named where it is
    /// caught, in release builds: dropped when it is input, else the connection closes.
    package struct StateMachine {
        package enum Owner: Equatable {
            case proxy
            case hummingbird
        }

        /// Something read, waiting for its turn.
        package enum Input {
            /// An admitted head; `expectsContinue`: answered `100 Continue` when its turn comes.
            case head(ClientRequestHead, expectsContinue: Bool)
            case body(ByteBuffer)
            case end(HTTPHeaders?)
            /// A decoding error, in order with the parts around it.
            case error(any Error)
        }

        package enum State {
            /// Requests are taken and answered in order; `phase` is how the connection ends.
            case active(Pipeline, Phase)
            /// The connection's last answer is written or being written; it closes (or lingers
            /// once that answer is out): nothing more is taken or answered.
            case closing
            /// The output is closed; what the client still sends is dropped until the deadline.
            case lingering(LingerDeadline)
            /// Answered `101`: the connection is a WebSocket tunnel's, nothing on it is HTTP.
            case upgraded
            /// Closed, or parked: the handler goes.
            case closed
            /// Only while a transition is under way: the pipeline has been taken out of the
            /// state, so changing it copies no buffer.
            case modifying
        }

        package enum Phase: Equatable {
            case open
            /// The client sent all it will: close once no response is outstanding.
            case inputEnded
            /// The listener drains: the next final response is the last and says so
            /// (``drainsWithResponse(status:)``); idle, the connection closes after ``drainIdleGrace``.
            case draining
            /// A head was refused: `error` is answered once the responses before it are out;
            /// input is dropped from now on. Boxed: an error is larger than the pipeline.
            indirect case refusing(GatewayError)
            /// The response to a request without keep-alive ended before that request did: its
            /// last parts still go to its owner, nothing after it is taken.
            case finishing
        }

        /// What the connection holds of the requests read and not done with.
        package struct Pipeline {
            /// Read and not yet handed out, in order. Made once per connection and reused.
            package var waiting = CircularBuffer<Input>(initialCapacity: 4)
            /// Heads in ``waiting``: requests whose answers are outstanding, behind ``turn``.
            package var queued = 0
            package var turn = Turn.idle

            /// Admitted requests whose responses have not ended.
            package var answersOutstanding: Int {
                switch turn {
                case .idle, .answeredEarly: queued
                case .starting, .reading, .answering: queued + 1
                }
            }
        }

        /// The request whose turn it is, as far as it got.
        package enum Turn: Equatable {
            /// None: the next head in the pipeline starts when asked for.
            case idle
            /// Its head was handed out (``Action/start(_:sendContinue:)``); its owner is being decided.
            case starting(Request)
            /// Its parts go to `owner`.
            case reading(Request, Owner, Response)
            /// Its end went to `owner`; its response has not ended.
            case answering(Request, Owner, Response)
            /// Its response ended first; the rest of its parts still go to `owner`.
            case answeredEarly(Request, Owner)
        }

        /// What a request says about its answer and the connection after it.
        package struct Request: Equatable {
            /// Its response has no body.
            package let isHEAD: Bool
            /// The connection stays open after its response (false too once its response said
            /// `Connection: close` while the listener drains).
            package var keepAlive: Bool

            package init(_ head: ClientRequestHead) {
                isHEAD = head.method == .HEAD
                keepAlive = head.isKeepAlive
            }
        }

        /// How far the response of the request under way went, before its end.
        package enum Response: Equatable {
            case awaited
            /// A final head (not a `1xx`) was written.
            case started
        }

        /// Whether reads the channel asks for go on.
        package enum Reading: Equatable {
            case reading
            /// A read waits for ``maxWaiting`` parts to be taken.
            case held
            /// The body under way cannot take more: the next read asked for waits.
            case paused
            /// Paused, and a read waits.
            case pausedHolding
        }

        package enum Action {
            case none
            /// The next request's head, answered `100 Continue` first when `sendContinue`: the
            /// handler decides who answers it and reports ``assigned(_:)`` before asking for more.
            case start(ClientRequestHead, sendContinue: Bool)
            /// A part of the request under way, for its owner.
            case deliver(HTTPServerRequestPart, to: Owner)
            case deliverError(any Error, to: Owner)
            /// Pass a read on to the channel.
            case read
            /// Write the response's end; the connection stays open, its idle timer set so.
            case writeEnd(idleTimer: DeadlineTimer.Change)
            /// Write the response's end, then ``respondAndLinger(_:)`` the refused head behind it.
            case writeEndThenRespond(GatewayError)
            /// Write and flush the response's end, then report ``lingeringStarts(now:)``.
            case writeEndThenLinger
            /// Write and flush the response's end, then close.
            case writeEndThenClose
            /// Write `error` as a whole response announcing `Connection: close`, then close.
            case respondAndClose(GatewayError)
            /// Write `error` as above, then report ``lingeringStarts(now:)``.
            case respondAndLinger(GatewayError)
            case close
            /// Close the output and move the lingering timer so.
            case startLingering(DeadlineTimer.Change)
            case lingerTimer(DeadlineTimer.Change)
            case idleTimer(DeadlineTimer.Change)
            /// Park the connection (``ConnectionParking``) until `idleDeadline`; this machine is done.
            case park(idleDeadline: NIODeadline?)
            /// Join the connection to its upstream's as a WebSocket tunnel.
            case upgrade
        }

        /// Parts (of pipelined requests) that may wait before reading stops.
        package static let maxWaiting = 64

        /// How long an idle connection stays open once the listener drains: a client that
        /// sends request after request has sent its next one by then, and gets its answer with
        /// `Connection: close`; an idle pooled connection is closed (lingering) after it.
        package static let drainIdleGrace = TimeAmount.seconds(1)

        package private(set) var state = State.active(Pipeline(), .open)
        package private(set) var reading = Reading.reading
        private var check: IllegalInputCheck
        /// Illegal inputs seen (a ``IllegalInputCheck/counting`` machine's).
        package var illegalInputs: Int { check.count }
        private let idleTimeout: TimeAmount?
        /// How long after becoming idle the connection parks, when it parks at all and before
        /// its idle timeout.
        private let parkAfter: TimeAmount?
        /// When the connection last became idle: a head or an end read, a response ended.
        private var idleSince = NIODeadline.uptimeNanoseconds(0)

        package init(idleTimeout: TimeAmount? = nil, parks: Bool = false, check: IllegalInputCheck = .asserting) {
            self.check = check
            self.idleTimeout = idleTimeout
            // Parking after the idle timeout would never happen.
            let parksFirst = idleTimeout.map { $0 > ConnectionParking.delay } ?? true
            parkAfter = parks && parksFirst ? ConnectionParking.delay : nil
        }

        // MARK: Queries

        /// Whether what the client sends now is dropped: a head was refused, or the connection
        /// is closing. ``inputDiscarded(now:)`` instead of reading it.
        package var discardsInput: Bool {
            switch state {
            case .active(_, let phase):
                switch phase {
                case .open, .inputEnded, .draining, .finishing: false
                case .refusing: true
                }
            case .closing, .lingering, .upgraded, .closed, .modifying: true
            }
        }

        /// Whether the response under way is to a `HEAD` request: it has no body.
        package var responseIsBodiless: Bool {
            switch state {
            case .active(let pipeline, _):
                switch pipeline.turn {
                case .idle: false
                case .starting(let request), .reading(let request, _, _), .answering(let request, _, _),
                    .answeredEarly(let request, _):
                    request.isHEAD
                }
            case .closing, .lingering, .upgraded, .closed, .modifying: false
            }
        }

        /// Whether the final response whose head is about to be written ends the connection
        /// because the listener drains: nothing waits behind its request, and its head says
        /// `Connection: close` (``responseHeadWritten(status:)`` makes it the last). A `101`
        /// never does: the connection becomes a WebSocket's, sent `1001` instead.
        package func drainsWithResponse(status: Int) -> Bool {
            guard case .active(let pipeline, .draining) = state, pipeline.queued == 0,
                RequestEdge.startsResponse(status: status), status != 101
            else { return false }
            switch pipeline.turn {
            case .reading(_, _, .awaited), .answering(_, _, .awaited): return true
            case .idle, .starting, .reading, .answering, .answeredEarly: return false
            }
        }

        /// Whether the listener drains (a connection upgraded now is sent `1001` at once).
        package var isDraining: Bool {
            if case .active(_, .draining) = state { return true }
            return false
        }

        /// Whether a stalled body can no longer be answered `408` in its turn: its request
        /// is not the only one outstanding, or its response has started.
        package var stalledBodyResponseStarted: Bool {
            switch state {
            case .active(let pipeline, _):
                switch pipeline.turn {
                case .idle: pipeline.queued != 1
                case .starting: pipeline.queued != 0
                case .reading(_, _, let response), .answering(_, _, let response): pipeline.queued != 0 || response == .started
                case .answeredEarly: true
                }
            case .closing, .lingering, .upgraded, .closed, .modifying: true
            }
        }

        // MARK: Reading the client

        /// A head the edge admitted: it waits behind the requests before it.
        package mutating func headAdmitted(_ head: ClientRequestHead, expectsContinue: Bool = false, now: NIODeadline) -> Action {
            switch state {
            case .active(var pipeline, let phase):
                switch phase {
                case .open, .inputEnded, .draining:
                    idleSince = now
                    state = .modifying
                    pipeline.waiting.append(.head(head, expectsContinue: expectsContinue))
                    pipeline.queued += 1
                    state = .active(pipeline, phase)
                    return .none
                case .finishing:
                    // Behind the connection's last request: never taken.
                    return .none
                case .refusing:
                    return illegal("a head read after a refused one", answer: .none)
                }
            case .closing, .lingering, .upgraded, .closed, .modifying:
                return illegal("a head read while input is discarded", answer: .none)
            }
        }

        /// A body part of the request being read.
        package mutating func bodyRead(_ chunk: ByteBuffer) -> Action {
            received(.body(chunk), what: "a body part")
        }

        /// The end of the request being read.
        package mutating func endRead(_ trailers: HTTPHeaders?, now: NIODeadline) -> Action {
            received(.end(trailers), what: "a request's end", now: now)
        }

        /// `now`: the input counts as activity (``idleTimerFired(now:parkable:)``).
        private mutating func received(_ input: Input, what: String, now: NIODeadline? = nil) -> Action {
            switch state {
            case .active(var pipeline, let phase):
                switch phase {
                case .open, .inputEnded, .draining, .finishing:
                    if let now { idleSince = now }
                    state = .modifying
                    pipeline.waiting.append(input)
                    state = .active(pipeline, phase)
                    return .none
                case .refusing:
                    return illegal("\(what) read after a refused head", answer: .none)
                }
            case .closing, .lingering, .upgraded, .closed, .modifying:
                return illegal("\(what) read while input is discarded", answer: .none)
            }
        }

        /// What was read while ``discardsInput``: dropped, and a lingering close waits on.
        package mutating func inputDiscarded(now: NIODeadline) -> Action {
            switch state {
            case .active(_, let phase):
                switch phase {
                case .refusing: return .none
                case .open, .inputEnded, .draining, .finishing: return illegal("input discarded while it is taken", answer: .none)
                }
            case .lingering(let linger):
                return .lingerTimer(linger.bytesRead(now: now))
            case .closing, .upgraded, .closed:
                return .none
            case .modifying:
                return illegal("input discarded mid-transition", answer: .none)
            }
        }

        /// A head the edge refused: answered now when no response is outstanding, else right
        /// after the last one. Input is discarded from now on.
        package mutating func headRefused(_ error: GatewayError) -> Action {
            switch state {
            case .active(let pipeline, let phase):
                switch phase {
                case .open, .inputEnded, .draining, .finishing:
                    return refuse(error, pipeline: pipeline)
                case .refusing:
                    return illegal("a head refused after a refused one", answer: .none)
                }
            case .closing, .lingering, .upgraded, .closed, .modifying:
                return illegal("a head refused while input is discarded", answer: .none)
            }
        }

        private mutating func refuse(_ error: GatewayError, pipeline: Pipeline) -> Action {
            guard pipeline.answersOutstanding > 0 else {
                state = .closing
                return .respondAndLinger(error)
            }
            state = .modifying
            state = .active(pipeline, .refusing(error))
            return .none
        }

        /// The HTTP parser refused the input: the connection answers it when no answer is
        /// outstanding; otherwise a head too large is answered in its turn, and any other
        /// error goes on in order to whoever answers its request.
        package mutating func parserFailed(_ error: HTTPParserError) -> Action {
            switch state {
            case .active(let pipeline, let phase):
                switch phase {
                case .open, .inputEnded, .draining, .finishing:
                    if pipeline.answersOutstanding == 0 {
                        state = .closing
                        return .respondAndClose(error == .headerOverflow ? .headersTooLarge : .invalidRequest("the request is malformed"))
                    }
                    if error == .headerOverflow { return refuse(.headersTooLarge, pipeline: pipeline) }
                    return received(.error(error), what: "a parser error")
                case .refusing:
                    return .none
                }
            case .closing, .lingering, .upgraded, .closed:
                return .none
            case .modifying:
                return illegal("a parser error mid-transition", answer: .close)
            }
        }

        /// Any other error the pipeline caught, in order with the parts around it.
        package mutating func errorCaught(_ error: any Error) -> Action {
            switch state {
            case .active(var pipeline, let phase):
                state = .modifying
                pipeline.waiting.append(.error(error))
                state = .active(pipeline, phase)
                return .none
            case .closing, .lingering, .upgraded, .closed:
                return .none
            case .modifying:
                return illegal("an error mid-transition", answer: .close)
            }
        }

        // MARK: Handing out

        /// Who answers the request ``next()`` just started.
        package mutating func assigned(_ owner: Owner) -> Action {
            switch state {
            case .active(var pipeline, let phase):
                switch pipeline.turn {
                case .starting(let request):
                    state = .modifying
                    pipeline.turn = .reading(request, owner, .awaited)
                    state = .active(pipeline, phase)
                    return .none
                case .idle, .reading, .answering, .answeredEarly:
                    return illegal("an owner assigned to no request starting", answer: .close)
                }
            case .closing, .lingering, .upgraded, .closed, .modifying:
                return illegal("an owner assigned to no request starting", answer: .close)
            }
        }

        /// The next thing to do, or ``Action/none`` when everything waits (for an owner's
        /// decision, for the answer under way, or for more input).
        package mutating func next() -> Action {
            switch state {
            case .active(var pipeline, let phase):
                state = .modifying
                let action = take(from: &pipeline, phase: phase)
                // `take` leaves `.modifying` when the connection moved on.
                if case .modifying = state { state = .active(pipeline, phase) }
                return action
            case .closing, .lingering, .upgraded, .closed:
                return releaseHeldRead(waiting: 0)
            case .modifying:
                return illegal("asked for the next action mid-transition", answer: .close)
            }
        }

        private mutating func take(from pipeline: inout Pipeline, phase: Phase) -> Action {
            switch pipeline.turn {
            case .idle:
                guard let input = pipeline.waiting.popFirst() else { return releaseHeldRead(waiting: 0) }
                switch input {
                case .head(let head, let expectsContinue):
                    pipeline.queued -= 1
                    pipeline.turn = .starting(Request(head))
                    return .start(head, sendContinue: expectsContinue)
                // A part without a head cannot come from the decoder; the endpoints' responder
                // answers input gone bad between requests.
                case .body(let chunk):
                    return .deliver(.body(chunk), to: .hummingbird)
                case .end(let trailers):
                    return .deliver(.end(trailers), to: .hummingbird)
                case .error(let error):
                    return .deliverError(error, to: .hummingbird)
                }
            case .starting, .answering:
                return releaseHeldRead(waiting: pipeline.waiting.count)
            case .reading(let request, let owner, let response):
                guard let input = pipeline.waiting.popFirst() else { return releaseHeldRead(waiting: 0) }
                switch input {
                case .head:
                    return illegal("a head before the end of the request under way", answer: .close)
                case .body(let chunk):
                    return .deliver(.body(chunk), to: owner)
                case .end(let trailers):
                    pipeline.turn = .answering(request, owner, response)
                    return .deliver(.end(trailers), to: owner)
                case .error(let error):
                    return .deliverError(error, to: owner)
                }
            case .answeredEarly(let request, let owner):
                guard let input = pipeline.waiting.popFirst() else { return releaseHeldRead(waiting: 0) }
                switch input {
                case .head:
                    return illegal("a head before the end of the request under way", answer: .close)
                case .body(let chunk):
                    return .deliver(.body(chunk), to: owner)
                case .end(let trailers):
                    pipeline.turn = .idle
                    // The connection's last request is done: nothing after it is taken.
                    if !request.keepAlive { state = .closing }
                    return .deliver(.end(trailers), to: owner)
                case .error(let error):
                    return .deliverError(error, to: owner)
                }
            }
        }

        // MARK: Answers

        /// A response's head was written (by the proxy engine or Hummingbird).
        package mutating func responseHeadWritten(status: Int) -> Action {
            let last = drainsWithResponse(status: status)
            switch state {
            case .active(var pipeline, let phase):
                switch pipeline.turn {
                case .reading(var request, let owner, .awaited) where RequestEdge.startsResponse(status: status):
                    state = .modifying
                    if last { request.keepAlive = false }
                    pipeline.turn = .reading(request, owner, .started)
                    state = .active(pipeline, phase)
                case .answering(var request, let owner, .awaited) where RequestEdge.startsResponse(status: status):
                    state = .modifying
                    if last { request.keepAlive = false }
                    pipeline.turn = .answering(request, owner, .started)
                    state = .active(pipeline, phase)
                case .starting:
                    return illegal("a response before its request was assigned", answer: .close)
                // An interim head, a second head, or an answer between requests (a 400 for
                // input gone bad): nothing changes.
                case .idle, .reading, .answering, .answeredEarly:
                    break
                }
                return .none
            case .closing, .lingering, .upgraded, .closed:
                return .none
            case .modifying:
                return illegal("a response head mid-transition", answer: .close)
            }
        }

        /// The response under way ends (its end is about to be written): what that means for
        /// the connection. Then ask for ``next()``.
        package mutating func responseEnded(now: NIODeadline) -> Action {
            idleSince = now
            switch state {
            case .active(var pipeline, let phase):
                let request: Request
                switch pipeline.turn {
                case .reading(let reading, let owner, _):
                    request = reading
                    pipeline.turn = .answeredEarly(reading, owner)
                case .answering(let answering, _, _):
                    request = answering
                    pipeline.turn = .idle
                case .idle, .answeredEarly:
                    // An answer between requests, or a second one: written as it is.
                    return .writeEnd(idleTimer: idleTimerChange(now: now, phase: phase))
                case .starting:
                    return illegal("a response ended before its request was assigned", answer: .writeEndThenClose)
                }
                state = .modifying
                if case .refusing(let error) = phase, pipeline.queued == 0, request.keepAlive {
                    state = .closing
                    return .writeEndThenRespond(error)
                }
                if !request.keepAlive {
                    let finished = pipeline.turn == .idle
                    state = finished ? .closing : .active(pipeline, .finishing)
                    return .writeEndThenLinger
                }
                if phase == .inputEnded, pipeline.queued == 0 {
                    state = .closing
                    return .writeEndThenClose
                }
                state = .active(pipeline, phase)
                return .writeEnd(idleTimer: idleTimerChange(now: now, phase: phase))
            case .closing, .lingering, .upgraded, .closed:
                return .writeEnd(idleTimer: .keep)
            case .modifying:
                return illegal("a response's end mid-transition", answer: .writeEndThenClose)
            }
        }

        /// The proxied request under way was answered `101`: the connection is a WebSocket
        /// tunnel's from now on, nothing more on it is HTTP. ``Action/close`` when it cannot be
        /// (the request is not the proxy's, or more was read behind it).
        package mutating func upgradeAnswered() -> Action {
            switch state {
            case .active(let pipeline, _):
                switch pipeline.turn {
                case .answering(_, .proxy, _) where pipeline.waiting.isEmpty && pipeline.queued == 0:
                    state = .upgraded
                    return .upgrade
                case .idle, .starting, .reading, .answering, .answeredEarly:
                    state = .closed
                    return .close
                }
            case .closing, .lingering, .upgraded, .closed:
                state = .closed
                return .close
            case .modifying:
                return illegal("an upgrade mid-transition", answer: .close)
            }
        }

        /// The last answer was written (``Action/writeEndThenLinger``,
        /// ``Action/respondAndLinger(_:)``): the connection closes lingering.
        package mutating func lingeringStarts(now: NIODeadline) -> Action {
            switch state {
            case .active(_, let phase):
                switch phase {
                case .finishing:
                    break
                case .open, .inputEnded, .draining, .refusing:
                    return illegal("a lingering close nobody asked for", answer: .close)
                }
            case .closing:
                break
            case .lingering, .upgraded, .closed:
                return .none
            case .modifying:
                return illegal("a lingering close mid-transition", answer: .close)
            }
            var linger = LingerDeadline()
            let change = linger.started(now: now)
            state = .lingering(linger)
            return .startLingering(change)
        }

        // MARK: The connection

        /// The connection became active: the idle deadline counts from now.
        package mutating func connectionActive(now: NIODeadline) -> Action {
            switch state {
            case .active:
                idleSince = now
                let change = idleTimerChange(now: now)
                return change == .keep ? .none : .idleTimer(change)
            case .closing, .lingering, .upgraded, .closed:
                return .none
            case .modifying:
                return illegal("activity mid-transition", answer: .close)
            }
        }

        /// The client sent all it will (it half-closed): close now when no response is
        /// outstanding, else once they are out.
        package mutating func inputClosed() -> Action {
            switch state {
            case .active(let pipeline, let phase):
                switch phase {
                case .open, .inputEnded, .draining, .finishing:
                    guard pipeline.answersOutstanding == 0 else {
                        state = .modifying
                        state = .active(pipeline, .inputEnded)
                        return .none
                    }
                    state = .closing
                    return .close
                case .refusing:
                    // The refusal closes the connection after the last response.
                    return .none
                }
            case .closing, .lingering, .upgraded:
                state = .closing
                return .close
            case .closed:
                return .none
            case .modifying:
                return illegal("input closed mid-transition", answer: .close)
            }
        }

        /// The listener drains (graceful shutdown): the connection's next final response says
        /// `Connection: close` and is its last; idle, it waits ``drainIdleGrace`` for a request.
        /// A connection that ends anyway (its last request, a refusal, its input) goes on so.
        package mutating func drain(now: NIODeadline) -> Action {
            switch state {
            case .active(let pipeline, let phase):
                switch phase {
                case .open:
                    state = .modifying
                    state = .active(pipeline, .draining)
                    guard pipeline.answersOutstanding == 0 else { return .none }
                    idleSince = now
                    return .idleTimer(idleTimerChange(now: now, phase: .draining))
                case .inputEnded, .draining, .refusing, .finishing:
                    return .none
                }
            case .closing, .lingering, .upgraded, .closed:
                return .none
            case .modifying:
                return illegal("a drain mid-transition", answer: .close)
            }
        }

        /// The body stalled; `stall` is the edge's decision (``RequestEdge/bodyDeadlinePassed(responseStarted:)``,
        /// asked with ``stalledBodyResponseStarted``).
        package mutating func bodyStalled(_ stall: RequestEdge.Stall) -> Action {
            switch state {
            case .active:
                state = .closing
                switch stall {
                case .answer(let error): return .respondAndClose(error)
                case .close: return .close
                }
            case .closing, .lingering, .upgraded, .closed:
                switch stall {
                case .answer:
                    return illegal("a 408 asked for with no request to answer", answer: .close)
                case .close:
                    closes()
                    return .close
                }
            case .modifying:
                return illegal("a stalled body mid-transition", answer: .close)
            }
        }

        /// The idle timer fired. `parkable`: the handler could leave the pipeline now (no read
        /// or action under way, the decoder holds no part of a head).
        package mutating func idleTimerFired(now: NIODeadline, parkable: Bool) -> Action {
            let idleDeadline = idleTimeout.map { idleSince + $0 }
            let idleDeadlinePassed = idleDeadline.map { now >= $0 } ?? false
            switch state {
            case .active(let pipeline, .draining) where pipeline.answersOutstanding == 0:
                let drainDeadline = idleSince + Self.drainIdleGrace
                guard now >= drainDeadline || idleDeadlinePassed else {
                    return .idleTimer(.expire(at: min(drainDeadline, idleDeadline ?? drainDeadline)))
                }
                var linger = LingerDeadline()
                let change = linger.started(now: now)
                state = .lingering(linger)
                return .startLingering(change)
            case .active(let pipeline, let phase):
                if idleDeadlinePassed, let idleTimeout {
                    guard pipeline.answersOutstanding == 0 else {
                        // A response is outstanding: look again a timeout later.
                        idleSince = now
                        return .idleTimer(.expire(at: now + idleTimeout))
                    }
                    state = .closing
                    return .close
                }
                if let parkAfter {
                    let parkDeadline = idleSince + parkAfter
                    if now < parkDeadline { return .idleTimer(.expire(at: parkDeadline)) }
                    if parkable, phase == .open, pipeline.turn == .idle, pipeline.waiting.isEmpty, reading == .reading {
                        state = .closed
                        return .park(idleDeadline: idleDeadline)
                    }
                }
                return .idleTimer(idleDeadline.map { .expire(at: $0) } ?? .clear)
            case .closing, .lingering:
                if idleDeadlinePassed {
                    state = .closing
                    return .close
                }
                return .idleTimer(idleDeadline.map { .expire(at: $0) } ?? .clear)
            case .upgraded, .closed:
                return .none
            case .modifying:
                return illegal("the idle timer mid-transition", answer: .close)
            }
        }

        /// The connection closed (or is being closed): nothing waits any more.
        package mutating func closed() -> Action {
            state = .closed
            return .none
        }

        /// Where the idle timer goes after activity at `now`: parking first, when it parks; the
        /// drain's grace while the listener drains.
        private func idleTimerChange(now: NIODeadline, phase: Phase = .open) -> DeadlineTimer.Change {
            if phase == .draining {
                return .expire(at: now + min(Self.drainIdleGrace, idleTimeout ?? Self.drainIdleGrace))
            }
            guard let first = parkAfter ?? idleTimeout else { return .keep }
            return .expire(at: now + first)
        }

        // MARK: Reading

        /// The channel asks to read: ``Action/read`` to pass it on now; otherwise it is held
        /// until ``next()`` or ``bodyResumed()`` lets it go.
        package mutating func readRequested() -> Action {
            switch reading {
            case .reading, .held:
                if waitingCount >= Self.maxWaiting {
                    reading = .held
                    return .none
                }
                reading = .reading
                return .read
            case .paused, .pausedHolding:
                reading = .pausedHolding
                return .none
            }
        }

        /// The request under way cannot take body parts for now; reading stops.
        package mutating func bodyPaused() -> Action {
            switch reading {
            case .reading, .paused: reading = .paused
            case .held, .pausedHolding: reading = .pausedHolding
            }
            return .none
        }

        /// Reading may go on for the request under way.
        package mutating func bodyResumed() -> Action {
            switch reading {
            case .reading, .paused:
                reading = .reading
                return .none
            case .held, .pausedHolding:
                reading = .held
                return releaseHeldRead(waiting: waitingCount)
            }
        }

        private var waitingCount: Int {
            switch state {
            case .active(let pipeline, _): pipeline.waiting.count
            case .closing, .lingering, .upgraded, .closed, .modifying: 0
            }
        }

        private mutating func releaseHeldRead(waiting: Int) -> Action {
            switch reading {
            case .held where waiting < Self.maxWaiting:
                reading = .reading
                return .read
            case .reading, .held, .paused, .pausedHolding:
                return .none
            }
        }

        /// Reports an illegal input and gives its release answer; an answer that closes leaves
        /// the connection ``State/closing``.
        private mutating func illegal(_ what: String, answer: Action) -> Action {
            check.illegal("HTTP/1 connection: \(what) (\(state))")
            switch answer {
            case .close, .writeEndThenClose: closes()
            case .none, .start, .deliver, .deliverError, .read, .writeEnd, .writeEndThenRespond, .writeEndThenLinger,
                .respondAndClose, .respondAndLinger, .startLingering, .lingerTimer, .idleTimer, .park, .upgrade:
                break
            }
            return answer
        }

        /// The connection is being closed (a closed one stays so).
        private mutating func closes() {
            switch state {
            case .closed: break
            case .active, .closing, .lingering, .upgraded, .modifying: state = .closing
            }
        }
    }
}
