import GatewayEdge
import NIOCore
import NIOHTTP1

/// The state of one pooled upstream connection, for ``UpstreamResponseHandler``: whether an
/// exchange is under way, whether its reader takes parts or paused, what was read ahead of
/// it, and why the connection can no longer be used once it cannot.
///
/// It holds no channel and performs nothing: it says what to do next (``Next``) and the
/// handler does it, one step at a time, because pushing a part can make the reader pause,
/// abort or (after the end) start the connection's next exchange before the handler looks
/// again. Every input is tried in every state without sockets
/// (`UpstreamResponseStateMachineTests`).
///
/// What the upstream sends is never illegal: bytes it should not send fail the connection.
/// An input from the handler or the exchange that its state cannot have is an
/// ``IllegalInputCheck`` (debug builds stop); release builds give the answer documented at
/// the input, which leaves the exchange under way untouched.
package struct UpstreamResponseStateMachine {
    package enum State: Equatable {
        /// No reader: before the first request, or after the reader took its response's end.
        case idle(Exchange)
        /// A request was sent and its reader takes parts, or (`paused`, its client is slow) lets
        /// them wait and nothing more is read.
        case reading(Exchange, paused: Bool)
        /// The connection failed while its reader was paused: it takes the parts read before
        /// the failure first, then hears of it (unless the response's end was among them).
        case failing(UpstreamError, paused: Bool)
        /// The connection failed and its reader, if any, knows or gave it up: nothing more.
        case failed(UpstreamError)
    }

    /// The last request sent on the connection and its response, as far as they went.
    package struct Exchange: Equatable {
        /// The response's end was read (the reader may still have to take it).
        package var responseEnded: Bool
        /// Neither side said `Connection: close`.
        package var keepAlive: Bool
        /// The request's end was written (an upstream may answer before that).
        package var requestEnded: Bool

        /// A connection no request was sent on yet.
        static let fresh = Exchange(responseEnded: false, keepAlive: true, requestEnded: false)
    }

    package enum Reader: Equatable {
        case none
        /// Takes parts as they come.
        case active
        /// Asked for a pause (its client is slow): parts wait, nothing more is read.
        case paused
    }

    package enum Next: Equatable {
        /// Give the reader this part; after `.end` the reader is detached.
        case push(UpstreamResponsePart)
        /// Nothing is buffered: read from the upstream.
        case read
        /// Tell the reader the response cannot complete; it is detached.
        case fail(UpstreamError)
        /// The reader is paused or gone: nothing to do.
        case wait
    }

    package private(set) var state = State.idle(.fresh)
    /// Parts read but not taken yet (only while the reader is paused, or before it looks).
    /// Outside ``State`` so its storage, allocated once per connection, serves every exchange
    /// on it and is appended to in place.
    private var buffered = CircularBuffer<UpstreamResponsePart>(initialCapacity: 4)
    private var check: IllegalInputCheck

    package init(check: IllegalInputCheck = .asserting) {
        self.check = check
    }

    /// Illegal inputs seen (a ``IllegalInputCheck/counting`` machine's).
    package var illegalInputs: Int { check.count }

    /// Parts waiting for the reader.
    var bufferedParts: Int { buffered.count }

    package var reader: Reader {
        switch state {
        case .reading(_, let paused), .failing(_, let paused): paused ? .paused : .active
        case .idle, .failed: .none
        }
    }

    /// Why the connection can no longer be used, once it cannot.
    package var failure: UpstreamError? {
        switch state {
        case .failing(let error, _), .failed(let error): error
        case .idle, .reading: nil
        }
    }

    /// Whether the current request's end was written (an upstream may answer before that),
    /// or nothing more will be: the connection failed.
    package var requestEnded: Bool {
        switch state {
        case .idle(let exchange), .reading(let exchange, _): exchange.requestEnded
        case .failing, .failed: true
        }
    }

    /// Whether the connection can carry another request: the last response ended cleanly,
    /// both sides want keep-alive, and nothing failed.
    package var canCarryAnotherRequest: Bool {
        switch state {
        case .idle(let exchange), .reading(let exchange, _): exchange.responseEnded && exchange.requestEnded && exchange.keepAlive
        case .failing, .failed: false
        }
    }

    /// Whether the upstream owes the reader something (the route timeout runs).
    package var readerIsWaiting: Bool { reader == .active }

    /// Between exchanges, after a response ended: one read stays pending so an upstream
    /// closing the idle connection is noticed in the pool.
    package var isIdleAfterAResponse: Bool {
        switch state {
        case .idle(let exchange), .reading(let exchange, _): exchange.responseEnded
        case .failing, .failed: false
        }
    }

    // MARK: The request

    /// A request was sent; its reader is active from now on. A failed connection refuses it
    /// with its failure. Illegal while another exchange's reader is attached (the pool hands
    /// out an idle connection only): refused with `.closed`, the exchange under way untouched.
    package mutating func requestSent(keepAlive: Bool, hasBody: Bool) throws(UpstreamError) {
        switch state {
        case .idle:
            buffered.removeAll(keepingCapacity: true)
            state = .reading(Exchange(responseEnded: false, keepAlive: keepAlive, requestEnded: !hasBody), paused: false)
        case .reading:
            illegal("one exchange at a time per upstream connection")
            throw .closed
        case .failing(let error, _):
            illegal("one exchange at a time per upstream connection")
            throw error
        case .failed(let error):
            throw error
        }
    }

    /// The request's end was written, maybe after its response ended. Illegal once it was
    /// written, before any request, or after the connection failed (nothing is written then):
    /// nothing.
    package mutating func requestBodyEnded() {
        switch state {
        case .idle(var exchange) where !exchange.requestEnded && exchange.responseEnded:
            exchange.requestEnded = true
            state = .idle(exchange)
        case .reading(var exchange, let paused) where !exchange.requestEnded:
            exchange.requestEnded = true
            state = .reading(exchange, paused: paused)
        case .idle, .reading, .failing, .failed:
            illegal("a request's end is written once, while its connection works")
        }
    }

    // MARK: The response

    /// A part read from the upstream: what to do with it now (push it when the reader takes
    /// parts and nothing waits before it, else it waits), or `.fail` for bytes that arrive
    /// while no response is owed. After a failure the parser's leftovers are dropped: the
    /// failure is the reader's answer.
    package mutating func partRead(_ part: UpstreamResponsePart) -> Next {
        switch state {
        case .reading(var exchange, let paused) where !exchange.responseEnded:
            switch part {
            case .head(let head):
                if !head.isKeepAlive { exchange.keepAlive = false }
            case .body:
                break
            case .end:
                exchange.responseEnded = true
            }
            guard !paused, buffered.isEmpty else {
                state = .reading(exchange, paused: paused)
                buffered.append(part)
                return .wait
            }
            if case .end = part {
                state = .idle(exchange)
            } else {
                state = .reading(exchange, paused: false)
            }
            return .push(part)
        case .idle, .reading:
            return .fail(.malformedResponse)
        case .failing, .failed:
            return .wait
        }
    }

    /// What the reader gets next from what is buffered: a part, a read, or the failure that
    /// ended the connection after the parts before it. Nothing (`.wait`) while the reader is
    /// paused or detached.
    package mutating func next() -> Next {
        switch state {
        case .reading(let exchange, paused: false):
            guard let part = buffered.popFirst() else { return .read }
            if case .end = part { state = .idle(exchange) }
            return .push(part)
        case .failing(let error, paused: false):
            guard let part = buffered.popFirst() else {
                state = .failed(error)
                return .fail(error)
            }
            // The response ended whole before the connection failed: nothing to tell.
            if case .end = part { state = .failed(error) }
            return .push(part)
        case .idle, .reading(_, paused: true), .failing(_, paused: true), .failed:
            return .wait
        }
    }

    /// The reader declined a part: it pauses. Illegal unless it takes parts (it declines
    /// only a part it was given): nothing.
    package mutating func readerPaused() {
        switch state {
        case .reading(let exchange, paused: false):
            state = .reading(exchange, paused: true)
        case .failing(let error, paused: false):
            state = .failing(error, paused: true)
        case .idle, .reading(_, paused: true), .failing(_, paused: true), .failed:
            illegal("only a reader taking parts pauses")
        }
    }

    /// The reader wants parts again; false when it was not paused (its client became
    /// writable again without a pause, or after it let the connection go).
    package mutating func readerResumed() -> Bool {
        switch state {
        case .reading(let exchange, paused: true):
            state = .reading(exchange, paused: false)
            return true
        case .failing(let error, paused: true):
            state = .failing(error, paused: false)
            return true
        case .idle, .reading(_, paused: false), .failing(_, paused: false), .failed:
            return false
        }
    }

    // MARK: Failure

    /// The connection failed (closed, reset, malformed, timed out); true when the reader must
    /// be told now (it is then detached). A paused reader still has parts to take first: it
    /// hears of the failure from ``next()`` once it resumes and has taken them. The first
    /// failure is the one kept.
    package mutating func failed(_ error: UpstreamError) -> Bool {
        switch state {
        case .reading(_, paused: false):
            state = .failed(error)
            return true
        case .reading(_, paused: true):
            state = .failing(error, paused: true)
            return false
        case .idle:
            state = .failed(error)
            return false
        case .failing, .failed:
            return false
        }
    }

    /// The reader (or the pool, for an idle connection) gave the connection up itself: it is
    /// not told. The first failure is the one kept.
    package mutating func aborted(_ error: UpstreamError) {
        switch state {
        case .idle, .reading:
            state = .failed(error)
        case .failing(let first, _):
            state = .failed(first)
        case .failed:
            break
        }
    }

    private mutating func illegal(_ what: String) {
        check.illegal("upstream connection: \(what) (\(state))")
    }
}
