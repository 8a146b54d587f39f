import NIOCore
import NIOHTTP1

extension StreamEdgeHandler {
    /// What an HTTP/2 child channel's request edge does next, decided without I/O: the
    /// request's parts, its errors, reads, the response's parts and the body's deadline in,
    /// actions out; ``StreamEdgeHandler`` only performs them. Every input is tried in every
    /// state without sockets (`StreamEdgeStateMachineTests`).
    ///
    /// An input its state cannot have (NIOHTTP2's codec or the handlers after this one out of
    /// order) is an ``IllegalInputCheck``: debug builds stop; release builds close the stream
    /// (writing the part first, for a write), or do nothing once it closed.
    package struct StateMachine {
        package enum State: Equatable {
            /// No head yet.
            case awaitingHead
            /// The head went on to the handlers after this one, which answer for the stream from
            /// now on; `responseStarted` once a response head (not a `1xx`) was written.
            case passed(body: Body, responseStarted: Bool)
            /// Answered in the error shape here (a refused head, a stalled body): what the client
            /// still sends is dropped. `headPassed`: the handlers after this one saw the head.
            case refused(headPassed: Bool)
            /// The channel went inactive.
            case closed
        }

        package enum Body: Equatable {
            /// The body is still coming, timed by `limit`; `timed` once a read ended with it open.
            case reading(limit: BodyReadDeadline.Limit, timed: Bool)
            /// The request's end came.
            case ended
        }

        package enum Action: Equatable {
            case none
            /// Pass on the head as admitted (its target canonical).
            case passHead(HTTPRequestHead)
            /// Apply `timer` to the body's deadline, then pass on the part read.
            case pass(timer: DeadlineTimer.Change)
            /// Answer `error` in the error shape, then close the stream.
            case refuse(GatewayError)
            /// Pass on the error caught.
            case fireError
            case changeTimer(DeadlineTimer.Change)
            /// Write the response's part.
            case write
            /// Write the response's part, then close the stream once it is written.
            case writeThenClose
            case close
            /// The channel went: stop timing the body.
            case cancelTimer
        }

        package private(set) var state = State.awaitingHead
        private var edge: RequestEdge
        /// The public listener's routes: their bodies are timed between reads, every other body
        /// (the gateway's own endpoints) as a whole.
        private let proxiedRoutes: (any ProxiedPaths)?
        private var check: IllegalInputCheck

        package init(edge: RequestEdge, proxiedRoutes: (any ProxiedPaths)?, check: IllegalInputCheck = .asserting) {
            self.edge = edge
            self.proxiedRoutes = proxiedRoutes
            self.check = check
        }

        /// Illegal inputs seen (a ``IllegalInputCheck/counting`` machine's).
        package var illegalInputs: Int { check.count }

        // MARK: The request

        /// The request's head: passed on if ``RequestEdge`` admits it, else refused. Illegal
        /// once a head passed: a close. Once refused or closed, what is read is dropped (a read
        /// under way may go on after a refusal closed the channel).
        package mutating func headReceived(_ head: HTTPRequestHead) -> Action {
            switch state {
            case .awaitingHead:
                switch edge.admit(head) {
                case .success(let admitted):
                    state = .passed(body: .reading(limit: .of(target: admitted.uri, proxiedRoutes: proxiedRoutes), timed: false), responseStarted: false)
                    return .passHead(admitted)
                case .failure(let error):
                    state = .refused(headPassed: false)
                    return .refuse(error)
                }
            case .passed:
                check.illegal("a second request head on a stream")
                return .close
            case .refused, .closed:
                return .none
            }
        }

        /// A part of the request's body. Illegal before the head and after the end: a close.
        /// Dropped once refused or closed.
        package mutating func bodyReceived() -> Action {
            switch state {
            case .passed(.reading, _):
                return .pass(timer: edge.bodyRead())
            case .awaitingHead, .passed(.ended, _):
                check.illegal("a request body part outside its body")
                return .close
            case .refused, .closed:
                return .none
            }
        }

        /// The request's end. Illegal and legal as ``bodyReceived()``.
        package mutating func endReceived() -> Action {
            switch state {
            case .passed(.reading, let responseStarted):
                state = .passed(body: .ended, responseStarted: responseStarted)
                return .pass(timer: edge.bodyEnded())
            case .awaitingHead, .passed(.ended, _):
                check.illegal("a request end outside its body")
                return .close
            case .refused, .closed:
                return .none
            }
        }

        /// Reading the request failed. Before any head went on (NIOHTTP2's HTTP/1 codec cannot
        /// make a head without `:authority`, nor of a `CONNECT`) no handler after this one would
        /// answer: `400` here. Legal in every state.
        package mutating func errorCaught() -> Action {
            switch state {
            case .awaitingHead:
                state = .refused(headPassed: false)
                return .refuse(.invalidRequest("the request head is not a valid HTTP/2 request"))
            case .passed, .refused(headPassed: true), .closed:
                return .fireError
            case .refused(headPassed: false):
                return .none
            }
        }

        /// A read ended: a body still open after it is on its way, and timed from `now` (once).
        /// Legal in every state.
        package mutating func readComplete(now: NIODeadline) -> Action {
            switch state {
            case .passed(.reading(limit: let limit, timed: false), let responseStarted):
                state = .passed(body: .reading(limit: limit, timed: true), responseStarted: responseStarted)
                return .changeTimer(edge.bodyStarted(limit: limit, now: now))
            case .awaitingHead, .passed(.reading(limit: _, timed: true), _), .passed(.ended, _), .refused, .closed:
                return .none
            }
        }

        /// The handlers after this one ask for more input. Legal in every state.
        package mutating func readRequested(now: NIODeadline) -> Action {
            switch state {
            case .passed(.reading(limit: _, timed: true), _):
                return .changeTimer(edge.readRequested(now: now))
            case .awaitingHead, .passed(.reading(limit: _, timed: false), _), .passed(.ended, _), .refused, .closed:
                return .none
            }
        }

        // MARK: The response

        /// A response head with `status` is written. Illegal before any head passed (only this
        /// handler answers then, below it): written, then the stream closed.
        package mutating func responseHead(status: Int) -> Action {
            switch state {
            case .passed(let body, let responseStarted):
                state = .passed(body: body, responseStarted: responseStarted || RequestEdge.startsResponse(status: status))
                return .write
            case .refused, .closed:
                return .write
            case .awaitingHead:
                return writtenOutOfTurn()
            }
        }

        /// A response body part is written. Illegal as ``responseHead(status:)``.
        package mutating func responseBody() -> Action {
            switch state {
            case .passed, .refused, .closed:
                return .write
            case .awaitingHead:
                return writtenOutOfTurn()
            }
        }

        /// The response's end is written. While the client is still sending (Hummingbird
        /// answers without reading a body it does not need) the stream closes once it is
        /// written, as on HTTP/1.1 the connection would. Illegal as ``responseHead(status:)``.
        package mutating func responseEnd() -> Action {
            switch state {
            case .passed(.reading, _):
                return .writeThenClose
            case .passed(.ended, _), .refused, .closed:
                return .write
            case .awaitingHead:
                return writtenOutOfTurn()
            }
        }

        // MARK: Time and the end

        /// The body's deadline passed: `408` if no response has started, else the stream closes.
        /// Illegal before a head (nothing times the body then): nothing.
        package mutating func bodyDeadlinePassed() -> Action {
            switch state {
            case .passed(_, let responseStarted):
                switch edge.bodyDeadlinePassed(responseStarted: responseStarted) {
                case nil:
                    return .none
                case .answer(let error)?:
                    // Answered before whoever serves the request could; its own response then
                    // finds the stream closed.
                    state = .refused(headPassed: true)
                    return .refuse(error)
                case .close?:
                    return .close
                }
            case .awaitingHead:
                check.illegal("a body deadline before the head")
                return .none
            case .refused, .closed:
                return .none
            }
        }

        /// The channel went inactive. Illegal twice: nothing.
        package mutating func channelInactive() -> Action {
            switch state {
            case .awaitingHead, .passed, .refused:
                state = .closed
                _ = edge.bodyEnded()
                return .cancelTimer
            case .closed:
                check.illegal("a channel inactive twice")
                return .none
            }
        }

        private mutating func writtenOutOfTurn() -> Action {
            check.illegal("a response written before any request head passed")
            return .writeThenClose
        }
    }
}
