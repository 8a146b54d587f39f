import GatewayEdge
import NIOCore
import NIOHTTP1

extension EndpointResponder {
    /// One request at a time: answered from its head on, its body passed to the endpoint as it
    /// arrives (up to `bodyLimit` bytes and one more: what an endpoint reads at most, so it
    /// refuses a longer body as it would one that long), and discarded once the answer is out.
    /// The next request may come once both the answer and the request have ended. Every input
    /// is tried in every state in `EndpointResponderStateMachineTests`.
    ///
    /// A part out of that order is not what NIO's decoder behind ``HTTP1ConnectionHandler``
    /// or a stream passes on: it is an ``IllegalInputCheck`` (debug builds stop), and a
    /// release build closes the connection (or stream). Once the input went bad, whatever
    /// still comes closes too, and is legal: errors and parts come on their own paths.
    struct StateMachine {
        enum State: Equatable {
            case idle
            /// The answer is under way and the request's body still coming: `kept` bytes of it
            /// passed on so far.
            case receiving(kept: Int)
            /// The answer is under way; the request has ended.
            case received
            /// The answer is under way and the input went bad: the connection closes after it.
            case failing
            /// The answer is out and the request's body still coming: discarded.
            case draining
            case closed
        }

        enum ReadAction: Equatable {
            case none
            /// Start the answer; `body`: a body may follow (else the request is bodiless).
            case answer(HTTPRequestHead, body: Bool)
            /// Pass this much of the body to the endpoint.
            case pass(ByteBuffer)
            /// The body has ended.
            case endBody
            case close
        }

        enum ErrorAction: Equatable {
            case none
            /// No request under way: `400` in the error shape, then close.
            case refuse
            /// The body the endpoint reads fails with the error; close after the answer.
            case failBody
            case close
        }

        private(set) var state = State.idle
        /// What an endpoint reads of a body at most (``GatewayRequestContext/bodyLimit``).
        let bodyLimit: Int
        private var check: IllegalInputCheck

        init(bodyLimit: Int, check: IllegalInputCheck = .asserting) {
            self.bodyLimit = bodyLimit
            self.check = check
        }

        /// Illegal inputs seen (a ``IllegalInputCheck/counting`` machine's).
        var illegalInputs: Int { check.count }

        /// A request part from the connection. A head without `Content-Length` or
        /// `Transfer-Encoding` has no body over HTTP/1.1; over HTTP/2 only the stream's end
        /// says so. After the close, parts still on their way are nothing.
        mutating func read(_ part: HTTPServerRequestPart) -> ReadAction {
            switch state {
            case .idle:
                switch part {
                case .head(let head):
                    let body = head.version.major >= 2 || RequestEdge.declaresBody(head)
                    state = .receiving(kept: 0)
                    return .answer(head, body: body)
                case .body, .end:
                    return outOfTurn("a body before a head")
                }
            case .receiving(let kept):
                switch part {
                case .head:
                    return outOfTurn("a head while a body is coming")
                case .body(var chunk):
                    let room = bodyLimit + 1 - kept
                    guard room > 0 else { return .none }
                    if chunk.readableBytes > room { chunk = chunk.getSlice(at: chunk.readerIndex, length: room)! }
                    state = .receiving(kept: kept + chunk.readableBytes)
                    return .pass(chunk)
                case .end:
                    state = .received
                    return .endBody
                }
            case .received:
                return outOfTurn("a part before the answer ended")
            case .failing:
                state = .closed
                return .close
            case .draining:
                switch part {
                case .head:
                    return outOfTurn("a head while a body is coming")
                case .body:
                    return .none
                case .end:
                    state = .idle
                    return .none
                }
            case .closed:
                return .none
            }
        }

        /// The input went bad.
        mutating func failed() -> ErrorAction {
            switch state {
            case .idle:
                state = .closed
                return .refuse
            case .receiving:
                state = .failing
                return .failBody
            case .received, .failing:
                state = .failing
                return .none
            case .draining:
                state = .closed
                return .close
            case .closed:
                return .none
            }
        }

        /// The answer's end is being written: true when the connection closes after it. Else
        /// the next request may come (within that very write, when it was read already), or
        /// the rest of this one's body. After the close: false (a task's answer may end after
        /// its connection closed). Illegal with no answer under way (each ends once): false.
        mutating func answered() -> Bool {
            switch state {
            case .receiving:
                state = .draining
                return false
            case .received:
                state = .idle
                return false
            case .failing:
                state = .closed
                return true
            case .idle, .draining:
                check.illegal("endpoint responder: an answer ended with none under way (\(state))")
                return false
            case .closed:
                return false
            }
        }

        /// The connection closed (or the request cannot be answered): nothing more.
        mutating func closed() {
            state = .closed
        }

        private mutating func outOfTurn(_ what: String) -> ReadAction {
            check.illegal("endpoint responder: \(what) (\(state))")
            state = .closed
            return .close
        }
    }
}
