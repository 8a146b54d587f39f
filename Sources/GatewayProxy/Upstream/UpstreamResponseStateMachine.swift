import NIOCore
import NIOHTTP1

/// The state of one pooled upstream connection, for ``UpstreamResponseHandler``: whether an
/// exchange is under way, whether its reader takes parts or paused, what was read ahead of
/// it, and why the connection can no longer be used once it cannot.
///
/// It holds no channel and performs nothing: it says what to do next (``Next``) and the
/// handler does it, one step at a time, because pushing a part can make the reader pause,
/// abort or (after the end) start the connection's next exchange before the handler looks
/// again.
package struct UpstreamResponseStateMachine {
    package enum Reader: Equatable {
        case none
        /// Takes parts as they come.
        case active
        /// Asked for a pause (its client is slow): parts wait, nothing more is read.
        case paused
    }

    package enum Next: Equatable {
        /// Give the reader this part; after `.end` the reader is detached.
        case push(HTTPClientResponsePart)
        /// Nothing is buffered: read from the upstream.
        case read
        /// Tell the reader the response cannot complete; it is detached.
        case fail(UpstreamError)
        /// The reader is paused or gone: nothing to do.
        case wait
    }

    package private(set) var reader = Reader.none
    /// Parts read but not taken yet (only while the reader is paused, or before it looks).
    private var buffered = CircularBuffer<HTTPClientResponsePart>(initialCapacity: 4)
    /// Why the connection can no longer be used, once it cannot.
    package private(set) var failure: UpstreamError?
    /// Between a request being sent and its response's end.
    private var inExchange = false
    private var responseEnded = false
    private var keepAlive = true
    /// Whether the current request's end was written (an upstream may answer before that).
    package private(set) var requestEnded = false

    /// Whether the connection can carry another request: the last response ended cleanly,
    /// both sides want keep-alive, and nothing failed.
    package var canCarryAnotherRequest: Bool {
        !inExchange && requestEnded && failure == nil && keepAlive
    }

    /// Whether the upstream owes the reader something (the route timeout runs).
    package var readerIsWaiting: Bool { reader == .active }

    /// Between exchanges, after a response ended: one read stays pending so an upstream
    /// closing the idle connection is noticed in the pool.
    package var isIdleAfterAResponse: Bool { !inExchange && responseEnded }

    /// A request was sent; its reader is active from now on.
    package mutating func requestSent(keepAlive: Bool, hasBody: Bool) throws(UpstreamError) {
        if let failure { throw failure }
        precondition(reader == .none, "one exchange per upstream connection")
        inExchange = true
        responseEnded = false
        self.keepAlive = keepAlive
        buffered.removeAll(keepingCapacity: true)
        requestEnded = !hasBody
        reader = .active
    }

    package mutating func requestBodyEnded() {
        requestEnded = true
    }

    /// A part read from the upstream: what to do with it now (push it when the reader takes
    /// parts and nothing waits before it, else it waits), or `.fail` for bytes that arrive
    /// while no exchange is under way.
    package mutating func partRead(_ part: HTTPClientResponsePart) -> Next {
        guard inExchange else { return .fail(.malformedResponse) }
        switch part {
        case .head(let head):
            if !head.isKeepAlive { keepAlive = false }
        case .body:
            break
        case .end:
            responseEnded = true
            inExchange = false
        }
        guard reader == .active, buffered.isEmpty else {
            buffered.append(part)
            return .wait
        }
        if case .end = part { reader = .none }
        return .push(part)
    }

    /// What the reader gets next from what is buffered: a part, a read, or the failure that
    /// ended the connection after the parts before it.
    package mutating func next() -> Next {
        guard reader == .active else { return .wait }
        guard let part = buffered.popFirst() else {
            if let failure {
                reader = .none
                return .fail(failure)
            }
            return .read
        }
        if case .end = part { reader = .none }
        return .push(part)
    }

    /// The reader declined a part: it pauses.
    package mutating func readerPaused() {
        if reader == .active { reader = .paused }
    }

    /// The reader wants parts again; false when it was not paused.
    package mutating func readerResumed() -> Bool {
        guard reader == .paused else { return false }
        reader = .active
        return true
    }

    /// The connection failed (closed, reset, malformed, timed out); true when the reader must
    /// be told now (it is then detached). A paused reader still has parts to take first: it
    /// hears of the failure from ``next()`` once it resumes and has taken them.
    package mutating func failed(_ error: UpstreamError) -> Bool {
        if failure == nil { failure = error }
        guard reader == .active else { return false }
        reader = .none
        return true
    }

    /// The reader gave the connection up itself: it is not told.
    package mutating func aborted(_ error: UpstreamError) {
        reader = .none
        if failure == nil { failure = error }
    }
}
