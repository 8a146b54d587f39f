import GatewayEdge
import NIOCore
import NIOHTTP1

extension EndpointResponder {
    /// One request at a time: answered from its head on, its body passed to the endpoint as it
    /// arrives (up to `bodyLimit` bytes and one more: what an endpoint reads at most, so it
    /// refuses a longer body as it would one that long), and discarded once the answer is out.
    /// The next request may come once both the answer and the request have ended. Anything out
    /// of that order closes the connection (or stream).
    struct StateMachine {
        enum State: Equatable {
            case idle
            /// The answer is under way. `bodyOpen` until the request's end; `kept` bytes of its
            /// body passed on; `closesAfter` when the input went bad meanwhile.
            case answering(bodyOpen: Bool, kept: Int, closesAfter: Bool)
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

        init(bodyLimit: Int) {
            self.bodyLimit = bodyLimit
        }

        /// A request part from the connection. A head without `Content-Length` or
        /// `Transfer-Encoding` has no body over HTTP/1.1; over HTTP/2 only the stream's end
        /// says so.
        mutating func read(_ part: HTTPServerRequestPart) -> ReadAction {
            switch (part, state) {
            case (.head(let head), .idle):
                let body = head.version.major >= 2 || RequestEdge.declaresBody(head)
                state = .answering(bodyOpen: true, kept: 0, closesAfter: false)
                return .answer(head, body: body)
            case (.body(var chunk), .answering(true, let kept, let closesAfter)):
                let room = bodyLimit + 1 - kept
                guard room > 0 else { return .none }
                if chunk.readableBytes > room { chunk = chunk.getSlice(at: chunk.readerIndex, length: room)! }
                state = .answering(bodyOpen: true, kept: kept + chunk.readableBytes, closesAfter: closesAfter)
                return .pass(chunk)
            case (.end, .answering(true, let kept, let closesAfter)):
                state = .answering(bodyOpen: false, kept: kept, closesAfter: closesAfter)
                return .endBody
            case (.body, .draining):
                return .none
            case (.end, .draining):
                state = .idle
                return .none
            case (_, .closed):
                return .none
            default:
                // Not from NIO's decoder behind HTTP1ConnectionHandler, nor from a stream: a
                // request is passed on after the one before has been answered and has ended.
                state = .closed
                return .close
            }
        }

        /// The input went bad.
        mutating func failed() -> ErrorAction {
            switch state {
            case .closed:
                return .none
            case .idle:
                state = .closed
                return .refuse
            case .answering(let bodyOpen, let kept, _):
                state = .answering(bodyOpen: false, kept: kept, closesAfter: true)
                return bodyOpen ? .failBody : .none
            case .draining:
                state = .closed
                return .close
            }
        }

        /// The answer's end is being written: true when the connection closes after it. Else
        /// the next request may come (within that very write, when it was read already), or
        /// the rest of this one's body.
        mutating func answered() -> Bool {
            guard case .answering(let bodyOpen, _, let closesAfter) = state else { return false }
            if closesAfter {
                state = .closed
                return true
            }
            state = bodyOpen ? .draining : .idle
            return false
        }

        mutating func closed() {
            state = .closed
        }
    }
}
