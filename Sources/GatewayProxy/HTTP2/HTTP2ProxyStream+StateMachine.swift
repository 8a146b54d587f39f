import GatewayEdge
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2

extension HTTP2ProxyStream {
    /// What an owned HTTP/2 stream does next, decided without I/O: the client's frames, the
    /// exchange's calls, write completions and the body's deadline in, actions out.
    /// ``HTTP2ProxyStream`` only performs the actions. Modelled on AsyncHTTPClient's
    /// `HTTPRequestStateMachine`: the state is an enum whose cases carry their data, and every
    /// input is tried in every state without sockets (`HTTP2ProxyStreamStateMachineTests`).
    ///
    /// The rules it holds, each once:
    /// - request parts reach the exchange in order, none before it started, none while it is
    ///   paused; the stream's window is opened again only for what it took
    ///   (``StreamReceiveWindow``), so a client is never more than that ahead of the upstream;
    /// - the last response frame is held until the next write or flush, so that the end's
    ///   END_STREAM goes on it (no empty DATA frame after it);
    /// - a response that ends while the request is still coming resets the stream (NO_ERROR,
    ///   PROTOCOL_ERROR when the request cannot be read further) so the client stops sending;
    /// - answer bytes written and not yet gone count against the stream's watermarks;
    /// - a stalled body (``RequestEdge``) is `408` while no response has started, else a reset.
    ///
    /// An input its state cannot have (the router's or the exchange's bug) is an
    /// ``IllegalInputCheck``: debug builds stop; release builds give the answer documented at
    /// the input, which is nothing unless a reset can still end the stream cleanly.
    package struct StateMachine {
        package enum State {
            /// The head came: the exchange starts at the end of its read. `held`: the body so far,
            /// nil when the head ended the stream.
            case awaitingStart(held: HeldParts?)
            case streaming(Request, Response)
            /// The stream closed, or its stalled body ended it: nothing more goes either way.
            case closed
            /// Only inside an input, so that held parts are changed in place, not copied.
            case modifying
        }

        /// The request's side once the exchange started.
        package enum Request {
            /// The body is still coming, and the exchange takes each part as it arrives.
            case open
            /// The exchange takes no parts for now: they wait.
            case paused(HeldParts)
            /// Parts wait and the exchange takes them again, one at a time (``readyForPart()``):
            /// it may pause again between two.
            case handingOver(HeldParts)
            /// The end went to the exchange, or the head ended the stream: nothing more comes.
            case ended
        }

        package struct HeldParts {
            /// Body parts not yet taken, in order.
            package var chunks: [ByteBuffer]
            /// The client's END_STREAM came after them: the end is handed over last.
            package var end: Bool
        }

        package enum Response {
            /// No final head yet; `informational`: a `1xx` head's frame, held for the next write.
            case awaitingHead(informational: HPACKHeaders?)
            /// The final head was written. `held`: the last frame, kept for END_STREAM;
            /// `pendingBytes`: body bytes written and not yet gone to the network.
            case streaming(held: Frame?, pendingBytes: Int)
            /// END_STREAM or RST_STREAM was written: nothing more goes out.
            case ended
        }

        /// A response frame as the machine holds it (DATA counts against the watermarks).
        package enum Frame: Equatable {
            case headers(HPACKHeaders)
            case data(ByteBuffer)
        }

        package enum Action: Equatable {
            case none
            /// Start the exchange, then perform ``readyForPart()``.
            case startExchange
            /// Apply `timer` to the body's deadline, hand `part` to the exchange, then perform
            /// ``readyForPart()``.
            case deliver(HTTPServerRequestPart, timer: DeadlineTimer.Change)
            /// Apply `timer` to the body's deadline, then perform ``readyForPart()``.
            case handOver(timer: DeadlineTimer.Change)
            /// Send a WINDOW_UPDATE of `increment` for the stream, then perform ``readyForPart()``.
            case sendWindowUpdate(Int)
            /// The exchange takes parts again: perform ``readyForPart()``, then
            /// ``bodyWanted(now:)``, then flush.
            case resumeBody
            case changeTimer(DeadlineTimer.Change)
            /// Write the frame; DATA is counted until it has gone (``bytesSent(_:connectionWritable:)``).
            case write(Frame)
            /// Write the frame, if any, as ``write(_:)``, then flush.
            case flush(Frame?)
            /// Write `before`, if any, as ``write(_:)``, then `last` with END_STREAM, and flush; then,
            /// with `reset`, RST_STREAM with it, flushed again (NIOHTTP2 drops a stream's DATA still
            /// waiting in it when a reset follows, hence the first flush).
            case endStream(before: Frame?, last: Frame, reset: HTTP2ErrorCode?)
            /// RST_STREAM with `code`, flushed.
            case reset(HTTP2ErrorCode)
            /// The client takes more of the response: tell the exchange.
            case notifyWritable
            /// Cancel the body's timer, drop the exchange and tell it the client went.
            case clientClosed
            /// The body stalled: answer `answer` (HEADERS, then its body with END_STREAM) and
            /// reset NO_ERROR, or with nil reset INTERNAL_ERROR; flush; then as ``clientClosed``.
            case stalled(answer: GatewayError?)
        }

        package private(set) var state: State
        /// The request body's flow-control window: kept over the whole stream, credited only
        /// while the body is still coming.
        private var window = StreamReceiveWindow()
        /// The body's deadline (proxied bodies are timed between reads).
        private var edge: RequestEdge
        private var check: IllegalInputCheck

        package init(requestOpen: Bool, edge: RequestEdge, check: IllegalInputCheck = .asserting) {
            state = .awaitingStart(held: requestOpen ? HeldParts(chunks: [], end: false) : nil)
            self.edge = edge
            self.check = check
        }

        /// Illegal inputs seen (a ``IllegalInputCheck/counting`` machine's).
        package var illegalInputs: Int { check.count }

        package var isClosed: Bool {
            if case .closed = state { return true }
            return false
        }

        /// Answer body bytes written and not yet gone.
        package var pendingBytes: Int {
            if case .streaming(_, .streaming(_, let pendingBytes)) = state { return pendingBytes }
            return 0
        }

        // MARK: The exchange's start

        /// The read that brought the head ended. Illegal once started or closed (the router
        /// starts each open stream once): nothing.
        package mutating func start() -> Action {
            switch state {
            case .awaitingStart(let held):
                state = .streaming(held.map(Request.taking) ?? .ended, .awaitingHead(informational: nil))
                return .startExchange
            case .streaming, .closed:
                check.illegal("a stream's exchange starts once, before the stream closes")
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        // MARK: The request

        /// A DATA frame: `chunk`, of `length` flow-controlled bytes (padding included). Illegal
        /// after the client's END_STREAM (NIOHTTP2 refuses it): nothing. After the stream closed:
        /// nothing (frames in flight when a stalled body reset it).
        package mutating func dataReceived(_ chunk: ByteBuffer, length: Int, endStream: Bool) -> Action {
            switch state {
            case .awaitingStart(.some(var held)):
                guard !held.end else { return dataAfterEnd() }
                state = .modifying
                let timer = hold(chunk, length: length, endStream: endStream, in: &held)
                state = .awaitingStart(held: held)
                return .handOver(timer: timer)
            case .awaitingStart(.none), .streaming(.ended, _):
                return dataAfterEnd()
            case .streaming(.open, let response):
                // Straight to the exchange; what follows the part (the end, or the window's
                // update) waits for it as held parts would.
                let timer = bodyRead(length, endStream: endStream)
                if chunk.readableBytes == 0, endStream {
                    state = .streaming(.ended, response)
                    return .deliver(.end(nil), timer: timer)
                }
                state = .streaming(.handingOver(HeldParts(chunks: [], end: endStream)), response)
                return chunk.readableBytes > 0 ? .deliver(.body(chunk), timer: timer) : .handOver(timer: timer)
            case .streaming(.paused(var held), let response):
                guard !held.end else { return dataAfterEnd() }
                state = .modifying
                let timer = hold(chunk, length: length, endStream: endStream, in: &held)
                state = .streaming(.paused(held), response)
                return .handOver(timer: timer)
            case .streaming(.handingOver(var held), let response):
                guard !held.end else { return dataAfterEnd() }
                state = .modifying
                let timer = hold(chunk, length: length, endStream: endStream, in: &held)
                state = .streaming(.handingOver(held), response)
                return .handOver(timer: timer)
            case .closed:
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        /// Trailers: a HEADERS frame with END_STREAM after the head. Illegal and legal as
        /// ``dataReceived(_:length:endStream:)``.
        package mutating func trailersReceived() -> Action {
            switch state {
            case .awaitingStart(.some(var held)):
                guard !held.end else { return dataAfterEnd() }
                held.end = true
                state = .awaitingStart(held: held)
                return .handOver(timer: edge.bodyEnded())
            case .awaitingStart(.none), .streaming(.ended, _):
                return dataAfterEnd()
            case .streaming(.open, let response):
                state = .streaming(.ended, response)
                return .deliver(.end(nil), timer: edge.bodyEnded())
            case .streaming(.paused(var held), let response):
                guard !held.end else { return dataAfterEnd() }
                held.end = true
                state = .streaming(.paused(held), response)
                return .handOver(timer: edge.bodyEnded())
            case .streaming(.handingOver(var held), let response):
                guard !held.end else { return dataAfterEnd() }
                held.end = true
                state = .streaming(.handingOver(held), response)
                return .handOver(timer: edge.bodyEnded())
            case .closed:
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        /// The exchange is done with what it was last handed (its start, a part, a frame's
        /// window): a WINDOW_UPDATE when one is due while the body is coming, else the next
        /// waiting part if it may have one, else nothing. Legal in every state. `open` has nothing
        /// to check: every input that moves the window passes through a state with parts.
        package mutating func readyForPart() -> Action {
            switch state {
            case .awaitingStart(let held):
                guard let held, !held.end else { return .none }
                return windowUpdate()
            case .streaming(.open, _):
                return .none
            case .streaming(.paused(let held), _):
                return held.end ? .none : windowUpdate()
            case .streaming(.handingOver(var held), let response):
                if !held.end, let increment = window.update() { return .sendWindowUpdate(increment) }
                if !held.chunks.isEmpty {
                    state = .modifying
                    let chunk = held.chunks.removeFirst()
                    window.taken(chunk.readableBytes)
                    state = .streaming(.handingOver(held), response)
                    return .deliver(.body(chunk), timer: .keep)
                }
                state = .streaming(held.end ? .ended : .open, response)
                return held.end ? .deliver(.end(nil), timer: .keep) : .none
            case .streaming(.ended, _), .closed:
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        /// The exchange cannot take parts for now. Illegal before it started: nothing.
        package mutating func pause() -> Action {
            switch state {
            case .awaitingStart:
                check.illegal("an exchange paused before it started")
            case .streaming(.open, let response):
                state = .streaming(.paused(HeldParts(chunks: [], end: false)), response)
            case .streaming(.handingOver(let held), let response):
                state = .streaming(.paused(held), response)
            case .streaming(.paused, _), .streaming(.ended, _), .closed:
                break
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
            return .none
        }

        /// The exchange takes parts again. Illegal before it started: nothing.
        package mutating func resume() -> Action {
            switch state {
            case .awaitingStart:
                check.illegal("an exchange resumed before it started")
                return .none
            case .streaming(.paused(let held), let response):
                state = .streaming(.taking(held), response)
                return .resumeBody
            case .streaming(.open, _), .streaming(.handingOver, _), .streaming(.ended, _), .closed:
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        /// The gateway asks for more of the body (a read ended, the exchange resumed): a body
        /// still coming and not paused is timed from `now`. Illegal before the start (the router
        /// starts a stream before its read completes): nothing.
        package mutating func bodyWanted(now: NIODeadline) -> Action {
            switch state {
            case .awaitingStart:
                check.illegal("a body asked for before its exchange started")
                return .none
            case .streaming(.open, _):
                return .changeTimer(edge.bodyWanted(limit: .betweenReads, now: now))
            case .streaming(.handingOver(let held), _):
                return held.end ? .none : .changeTimer(edge.bodyWanted(limit: .betweenReads, now: now))
            case .streaming(.paused, _), .streaming(.ended, _), .closed:
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        // MARK: The response

        /// A response head with `status`, as its header block. Illegal before the start and
        /// after END_STREAM or RST_STREAM: nothing; after the final head: a reset.
        package mutating func responseHead(status: Int, block: HPACKHeaders) -> Action {
            switch state {
            case .streaming(let request, .awaitingHead(let informational)):
                if RequestEdge.startsResponse(status: status) {
                    state = .streaming(request, .streaming(held: .headers(block), pendingBytes: 0))
                } else {
                    state = .streaming(request, .awaitingHead(informational: block))
                }
                return informational.map { .write(.headers($0)) } ?? .none
            case .streaming(let request, .streaming):
                return resetOutOfOrder("a second response head", request: request)
            case .awaitingStart, .streaming(_, .ended):
                return writtenOutOfTurn("a response head")
            case .closed:
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        /// A body part of the response. Illegal before the final head: a reset (nothing before the
        /// start); after the end: nothing.
        package mutating func responseBody(_ chunk: ByteBuffer) -> Action {
            switch state {
            case .streaming(let request, .streaming(let held, let pendingBytes)):
                state = .streaming(request, .streaming(held: .data(chunk), pendingBytes: pendingBytes + chunk.readableBytes))
                return held.map(Action.write) ?? .none
            case .streaming(let request, .awaitingHead):
                return resetOutOfOrder("a response body before its head", request: request)
            case .awaitingStart, .streaming(_, .ended):
                return writtenOutOfTurn("a response body")
            case .closed:
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        /// The response's end, with `trailers` if it has any; `closingAfter`: the request cannot
        /// be read further. Illegal and legal as ``responseBody(_:)``.
        package mutating func responseEnd(trailers: HPACKHeaders?, closingAfter: Bool) -> Action {
            switch state {
            case .streaming(let request, .streaming(let held, _)):
                let reset: HTTP2ErrorCode? = request.isOpen ? (closingAfter ? .protocolError : .noError) : nil
                state = .streaming(request, .ended)
                if let trailers { return .endStream(before: held, last: .headers(trailers), reset: reset) }
                return .endStream(before: nil, last: held ?? .data(ByteBuffer()), reset: reset)
            case .streaming(let request, .awaitingHead):
                return resetOutOfOrder("a response ended before its head", request: request)
            case .awaitingStart, .streaming(_, .ended):
                return writtenOutOfTurn("a response ended")
            case .closed:
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        /// The exchange breaks the response off: the stream only is reset. Illegal before the
        /// start and after the end: nothing.
        package mutating func abort() -> Action {
            switch state {
            case .streaming(let request, .awaitingHead), .streaming(let request, .streaming):
                state = .streaming(request, .ended)
                return .reset(.internalError)
            case .awaitingStart, .streaming(_, .ended):
                return writtenOutOfTurn("a response aborted")
            case .closed:
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        /// The exchange flushes: the held frame goes (END_STREAM can no longer join it). Illegal
        /// before the start: a flush all the same.
        package mutating func flush() -> Action {
            switch state {
            case .streaming(let request, .awaitingHead(let informational)):
                state = .streaming(request, .awaitingHead(informational: nil))
                return .flush(informational.map(Frame.headers))
            case .streaming(let request, .streaming(let held, let pendingBytes)):
                state = .streaming(request, .streaming(held: nil, pendingBytes: pendingBytes))
                return .flush(held)
            case .awaitingStart:
                check.illegal("a response flushed before the start")
                return .flush(nil)
            case .streaming(_, .ended), .closed:
                return .flush(nil)
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        /// `size` counted DATA bytes went to the network (or were dropped with the stream);
        /// `connectionWritable`: the connection's. Below the low watermark the exchange may read
        /// its upstream again. Illegal before the final head (no DATA is counted then): nothing.
        package mutating func bytesSent(_ size: Int, connectionWritable: Bool) -> Action {
            switch state {
            case .streaming(let request, .streaming(let held, let pendingBytes)):
                state = .streaming(request, .streaming(held: held, pendingBytes: pendingBytes - size))
                let writable = pendingBytes - size <= HTTP2Limits.streamOutboundLowWatermark && connectionWritable
                return writable ? .notifyWritable : .none
            case .awaitingStart, .streaming(_, .awaitingHead):
                check.illegal("answer bytes sent before the answer's head")
                return .none
            case .streaming(_, .ended), .closed:
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        /// The connection takes writes again. Legal in every state.
        package mutating func connectionWritable() -> Action {
            switch state {
            case .streaming(_, .streaming(_, let pendingBytes)):
                return pendingBytes < HTTP2Limits.streamOutboundHighWatermark ? .notifyWritable : .none
            case .awaitingStart, .streaming(_, .awaitingHead), .streaming(_, .ended), .closed:
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        // MARK: The stream's end

        /// The stream closed (reset by the client, both sides ended, the connection gone).
        /// Legal in every state: once closed, it changes nothing.
        package mutating func streamClosed() -> Action {
            switch state {
            case .awaitingStart, .streaming:
                state = .closed
                _ = edge.bodyEnded()
                return .clientClosed
            case .closed:
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        /// The body's deadline passed. Illegal before the start (nothing times the body then):
        /// nothing.
        package mutating func bodyDeadlinePassed() -> Action {
            switch state {
            case .awaitingStart:
                check.illegal("a body deadline before the exchange started")
                return .none
            case .streaming(_, let response):
                guard let stall = edge.bodyDeadlinePassed(responseStarted: response.started) else { return .none }
                state = .closed
                switch (stall, response) {
                case (.answer(let error), _):
                    return .stalled(answer: error)
                case (.close, .ended):
                    // Already ended or reset: the exchange only is told.
                    return .clientClosed
                case (.close, .awaitingHead), (.close, .streaming):
                    return .stalled(answer: nil)
                }
            case .closed:
                return .none
            case .modifying:
                preconditionFailure("\(#function) inside an input")
            }
        }

        // MARK: Helpers

        /// Before the exchange started nothing can be answered; after END_STREAM or RST_STREAM
        /// nothing more goes out.
        private mutating func writtenOutOfTurn(_ what: String) -> Action {
            check.illegal("\(what) before the start or after the end")
            return .none
        }

        /// A response out of order cannot be mended: the stream is reset.
        private mutating func resetOutOfOrder(_ what: String, request: Request) -> Action {
            check.illegal(what)
            state = .streaming(request, .ended)
            return .reset(.internalError)
        }

        private mutating func dataAfterEnd() -> Action {
            check.illegal("request data after the client's END_STREAM")
            return .none
        }

        /// The window and the deadline for a DATA frame; with END_STREAM the body is over.
        private mutating func bodyRead(_ length: Int, endStream: Bool) -> DeadlineTimer.Change {
            window.received(length)
            let read = edge.bodyRead()
            guard endStream else { return read }
            let ended = edge.bodyEnded()
            return ended == .keep ? read : ended
        }

        /// A DATA frame's chunk joins the held parts: the window and the deadline as for any.
        private mutating func hold(_ chunk: ByteBuffer, length: Int, endStream: Bool, in held: inout HeldParts) -> DeadlineTimer.Change {
            let timer = bodyRead(length, endStream: endStream)
            if chunk.readableBytes > 0 {
                window.held(chunk.readableBytes)
                held.chunks.append(chunk)
            }
            if endStream { held.end = true }
            return timer
        }

        private mutating func windowUpdate() -> Action {
            window.update().map(Action.sendWindowUpdate) ?? .none
        }
    }
}

extension HTTP2ProxyStream.StateMachine.Request {
    /// The exchange takes parts again: handed over one at a time while any wait.
    package static func taking(_ held: HTTP2ProxyStream.StateMachine.HeldParts) -> Self {
        held.chunks.isEmpty && !held.end ? .open : .handingOver(held)
    }

    /// The client is still sending: its window is kept open, and a response that ends now
    /// resets the stream.
    package var isOpen: Bool {
        switch self {
        case .open: true
        case .paused(let held), .handingOver(let held): !held.end
        case .ended: false
        }
    }
}

extension HTTP2ProxyStream.StateMachine.Response {
    /// Whether a `408` could no longer replace the response.
    package var started: Bool {
        switch self {
        case .awaitingHead: false
        case .streaming, .ended: true
        }
    }
}
