import GatewayEdge
import NIOCore
import NIOHTTP1

extension HTTP1ConnectionHandler {
    /// One HTTP/1 client connection's requests and answers, decided without I/O: inputs in
    /// (heads the edge admitted or refused, body parts, errors, answers' heads and ends from
    /// the proxy engine and from Hummingbird alike, reads asked for, shutdown, deadlines),
    /// actions out. ``HTTP1ConnectionHandler`` only performs them. Modelled on NIO's
    /// `HTTPServerPipelineHandler` (one request under way, the rest held) and AsyncHTTPClient's
    /// `HTTP1ConnectionStateMachine`; every rule is a test without sockets
    /// (`HTTP1ConnectionStateMachineTests`).
    ///
    /// The rules it holds, each once:
    /// - one request is under way at a time: its parts go to whoever answers it (``Owner``), and
    ///   the next request's parts wait until both its request and its response have ended, so
    ///   pipelined requests are answered in order whichever mix of routes and endpoints they are;
    /// - per request: whether it is a `HEAD` (its response has no body), whether the connection
    ///   stays open after its response (not for `Connection: close`, nor HTTP/1.0 without
    ///   keep-alive: then the connection closes lingering and nothing after it is taken), and
    ///   whether its response has started and ended;
    /// - `Expect: 100-continue` is answered when its request's turn comes;
    /// - a head the edge refused is answered in its turn, after the responses before it, and
    ///   nothing after it is taken; a parser error is the connection's to answer only when no
    ///   answer is outstanding (else its request's owner gets it), a head too large always is;
    /// - graceful shutdown closes at once when no response is outstanding, else after the last;
    /// - a stalled body's `408` (``RequestEdge``) can go out only for the one request
    ///   outstanding, before its response started;
    /// - the connection answers at most one error of its own;
    /// - reading is held while the proxied body is paused or ``maxWaiting`` parts wait, so
    ///   neither a pipelining client nor a fast upload grows memory;
    /// - the idle deadline closes only a connection with no response outstanding.
    package struct StateMachine {
        package enum Owner: Equatable {
            case proxy
            case hummingbird
        }

        package enum Input {
            case part(HTTPServerRequestPart)
            /// A decoding error, in order with the parts around it.
            case error(any Error)
        }

        /// What to do with what was read (``next()``).
        package enum Action {
            /// The next request's head, answered `100 Continue` first when `sendContinue`: the
            /// handler decides who answers it and calls ``assign(_:)`` before asking for more.
            case start(HTTPRequestHead, sendContinue: Bool)
            /// A part of the request under way, for its owner.
            case deliver(HTTPServerRequestPart, to: Owner)
            case deliverError(any Error, to: Owner)
        }

        /// The connection's own responses and closes.
        package enum ConnectionAction: Equatable {
            case none
            /// Write `error` as a whole response announcing `Connection: close`, then close.
            case respondAndClose(GatewayError)
            /// Write the refused head's `error` as above, then close lingering.
            case respondToRefusal(GatewayError)
            case close
        }

        /// What to do with a response's end.
        package enum ResponseEndAction: Equatable {
            /// Write it; the connection stays open.
            case write
            /// Write it, then answer the refused head that waited behind it.
            case writeThenRespondToRefusal(GatewayError)
            /// Write and flush it, then close lingering (the request did not keep alive).
            case flushThenLinger
            /// Write and flush it, then close (graceful shutdown, nothing else outstanding).
            case flushThenClose
        }

        /// Parts (of pipelined requests) that may wait before reading stops.
        package static let maxWaiting = 64

        /// A request admitted and not done with (its request or its response not ended).
        private struct Request {
            package let isHEAD: Bool
            package let keepAlive: Bool
            package let expectsContinue: Bool
            /// Its head was handed out (``Action/start(_:sendContinue:)``).
            package var started = false
            package var owner: Owner?
            package var requestEnded = false
            /// A final response head (not a `1xx`) was written.
            package var responseStarted = false
            package var responseEnded = false
        }

        /// Oldest first; the first is under way once started. Kept in one buffer of values:
        /// its storage is made once per connection and reused by every request.
        private var requests = CircularBuffer<Request>(initialCapacity: 4)
        /// Read and not yet handed out, in order.
        private var waiting = CircularBuffer<Input>(initialCapacity: 4)
        /// A head the edge refused: answered once the responses before it are out.
        private var refusal: GatewayError?
        /// Graceful shutdown: close once no response is outstanding.
        private var closeWhenDone = false
        /// Closing after a response without keep-alive: what still arrives is discarded.
        private var lingering = false
        /// Nothing more is taken (a response without keep-alive finished, or the connection went).
        package private(set) var closing = false
        /// The connection's own error response went out (there is at most one).
        private var answered = false
        /// A read the channel asked for and the handler held back.
        private var readHeld = false
        private var bodyPaused = false

        /// Whether a request is under way (started, its request or answer not ended).
        package var isBusy: Bool { requests.first?.started ?? false }

        package var waitingCount: Int { waiting.count }

        /// Requests admitted whose responses have not ended (only the first one's can have).
        package var answersOutstanding: Int {
            guard let first = requests.first else { return 0 }
            return first.responseEnded ? requests.count - 1 : requests.count
        }

        /// Whether nothing is outstanding or waiting, and the connection stays open for more:
        /// it may be parked (``ConnectionParking``).
        package var isIdle: Bool {
            requests.isEmpty && waiting.isEmpty && !discardsInput && !closeWhenDone && !readHeld && !bodyPaused
        }

        /// Whether what the client sends now is dropped: a head was refused, or the connection
        /// is closing after a response.
        package var discardsInput: Bool { lingering || closing || refusal != nil }

        /// Whether the response under way is to a `HEAD` request: it has no body.
        package var responseIsBodiless: Bool { requests.first?.isHEAD ?? false }

        /// Whether a stalled body can no longer be answered `408` in its turn: its request
        /// (the newest) is not the only one outstanding, or its response has started.
        package var stalledBodyResponseStarted: Bool {
            guard requests.count == 1, let request = requests.first else { return true }
            return request.responseStarted || request.responseEnded
        }

        // MARK: Requests

        /// A head the edge admitted: it waits behind the requests before it.
        package mutating func headAdmitted(_ head: HTTPRequestHead, expectsContinue: Bool = false) {
            guard !closing else { return }
            requests.append(Request(isHEAD: head.method == .HEAD, keepAlive: head.isKeepAlive, expectsContinue: expectsContinue))
            waiting.append(.part(.head(head)))
        }

        /// A body part, an end or a decoding error, read in order.
        package mutating func received(_ input: Input) {
            guard !closing else { return }
            waiting.append(input)
        }

        /// A head the edge refused: answered now when no response is outstanding, else right
        /// after the last one (``responseEnded()``). Input is discarded from now on.
        package mutating func headRefused(_ error: GatewayError) -> ConnectionAction {
            refusal = error
            return answersOutstanding == 0 ? respondToRefusal() : .none
        }

        /// Who answers the request ``next()`` just started.
        package mutating func assign(_ owner: Owner) {
            precondition(isBusy && requests.first?.owner == nil, "assign follows start")
            requests[requests.startIndex].owner = owner
        }

        /// The next thing to do, or nil when everything waits (for an owner's decision, for the
        /// answer under way, or for more input).
        package mutating func next() -> Action? {
            while true {
                guard let request = requests.first, request.started else {
                    guard let input = waiting.popFirst() else { return nil }
                    switch input {
                    case .part(.head(let head)):
                        guard let request = requests.first else { return nil }
                        requests[requests.startIndex].started = true
                        return .start(head, sendContinue: request.expectsContinue)
                    case .part(let part):
                        // A body without a head cannot come from the decoder; the endpoints' responder closes on it.
                        return .deliver(part, to: .hummingbird)
                    case .error(let error):
                        return .deliverError(error, to: .hummingbird)
                    }
                }
                guard let owner = request.owner else { return nil }
                if !request.requestEnded {
                    guard let input = waiting.popFirst() else { return nil }
                    switch input {
                    case .part(.end(let trailers)):
                        requests[requests.startIndex].requestEnded = true
                        return .deliver(.end(trailers), to: owner)
                    case .part(let part):
                        return .deliver(part, to: owner)
                    case .error(let error):
                        return .deliverError(error, to: owner)
                    }
                }
                guard request.responseEnded else { return nil }
                requests.removeFirst()
                if !request.keepAlive {
                    // The connection closes after this response: nothing after it is taken.
                    closing = true
                    waiting.removeAll()
                    return nil
                }
            }
        }

        // MARK: Answers

        /// A response's head was written (by the proxy engine or Hummingbird).
        package mutating func responseHeadWritten(status: Int) {
            guard RequestEdge.startsResponse(status: status), requests.first?.started == true else { return }
            requests[requests.startIndex].responseStarted = true
        }

        /// The response under way ends (its end is being written): what that means for the
        /// connection. Then ask for ``next()``.
        package mutating func responseEnded() -> ResponseEndAction {
            guard let request = requests.first, request.started, !request.responseEnded else { return .write }
            requests[requests.startIndex].responseEnded = true
            let outstanding = requests.count - 1
            if refusal != nil && outstanding == 0 && request.keepAlive {
                if case .respondToRefusal(let error) = respondToRefusal() { return .writeThenRespondToRefusal(error) }
                return .write
            }
            if !request.keepAlive { return .flushThenLinger }
            if closeWhenDone && outstanding == 0 { return .flushThenClose }
            return .write
        }

        /// The connection starts closing lingering; false when it already is.
        package mutating func startLingering() -> Bool {
            guard !lingering else { return false }
            lingering = true
            return true
        }

        // MARK: The connection

        /// Graceful shutdown: close now when no response is outstanding, else once they are out.
        package mutating func quiesce() -> ConnectionAction {
            guard answersOutstanding == 0 else {
                closeWhenDone = true
                return .none
            }
            return .close
        }

        /// The HTTP parser refused the input. Nil: the error belongs to the request whose response
        /// is outstanding, and goes on to whoever answers it (``received(_:)``).
        package mutating func parserFailed(headerOverflow: Bool) -> ConnectionAction? {
            if discardsInput { return ConnectionAction.none }
            if headerOverflow {
                // Answered in its turn, like a refused head, when answers are outstanding.
                return answersOutstanding == 0 ? respondAndClose(.headersTooLarge) : headRefused(.headersTooLarge)
            }
            guard answersOutstanding == 0 else { return nil }
            return respondAndClose(.invalidRequest("the request is malformed"))
        }

        /// The body stalled; `stall` is the edge's decision (``RequestEdge/bodyDeadlinePassed(responseStarted:)``,
        /// asked with ``stalledBodyResponseStarted``).
        package mutating func bodyStalled(_ stall: RequestEdge.Stall) -> ConnectionAction {
            switch stall {
            case .answer(let error): respondAndClose(error)
            case .close: .close
            }
        }

        /// The idle deadline passed: close unless a response is outstanding (then look again a
        /// timeout later, `false`).
        package func idleDeadlinePassed() -> Bool {
            answersOutstanding == 0
        }

        /// The proxied request under way was answered `101`: the connection is a WebSocket
        /// tunnel's from now on, nothing more on it is HTTP. False when it cannot be (the
        /// request is not the proxy's, or more was read behind it).
        package mutating func upgraded() -> Bool {
            guard requests.count == 1, waiting.isEmpty, let request = requests.first, request.owner == .proxy, request.requestEnded,
                !closing
            else { return false }
            closed()
            return true
        }

        /// The connection closed (or is being closed): nothing waits any more.
        package mutating func closed() {
            closing = true
            requests.removeAll()
            waiting.removeAll()
        }

        private mutating func respondAndClose(_ error: GatewayError) -> ConnectionAction {
            guard !answered else { return .none }
            answered = true
            return .respondAndClose(error)
        }

        private mutating func respondToRefusal() -> ConnectionAction {
            guard let refusal, !answered else { return .none }
            answered = true
            return .respondToRefusal(refusal)
        }

        // MARK: Reading

        /// The request under way cannot take body parts for now; reading stops.
        package mutating func pauseBody() {
            bodyPaused = true
        }

        /// Reading may go on for the request under way.
        package mutating func resumeBody() {
            bodyPaused = false
        }

        /// The channel asks to read: whether to pass that on now. Otherwise the read is held
        /// until ``releaseHeldRead()`` says so.
        package mutating func readRequested() -> Bool {
            if bodyPaused || waiting.count >= Self.maxWaiting {
                readHeld = true
                return false
            }
            return true
        }

        /// Whether a held read may go now (call after anything that may have unblocked reading).
        package mutating func releaseHeldRead() -> Bool {
            guard readHeld, !bodyPaused, waiting.count < Self.maxWaiting else { return false }
            readHeld = false
            return true
        }
    }
}
