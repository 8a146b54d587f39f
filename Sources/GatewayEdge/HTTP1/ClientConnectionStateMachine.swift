import HTTPTypes

/// The requests and responses of one client connection as ``ClientProtectionHandler`` sees
/// them, as a state machine that is told what happened and returns what to do: which
/// requests are in flight and whether the connection stays open after each, when a refused
/// head is answered (in its turn, after the responses before it), when the connection closes
/// (after a response without keep-alive, on graceful shutdown, on a stalled body, when idle)
/// and that it answers at most one error of its own.
///
/// It holds no channel, timer or clock, so every rule is tested without sockets; the handler
/// performs the actions.
package struct ClientConnectionStateMachine {
    package enum Action: Equatable {
        case none
        /// Write `error` as a whole response announcing `Connection: close`, then close.
        case answerAndClose(GatewayError)
        /// Write the refused head's `error` as above, then close lingering.
        case answerRefusal(GatewayError)
        case close
    }

    /// What to do with a response's `.end`.
    package enum ResponseEndAction: Equatable {
        /// Write it; the connection stays open.
        case write
        /// Write it, then answer the refused head that waited behind it.
        case writeThenAnswerRefusal(GatewayError)
        /// Write and flush it, then close lingering (the request did not keep alive).
        case flushThenLinger
        /// Write and flush it, then close (graceful shutdown, nothing else in flight).
        case flushThenClose
    }

    /// For each request read whose response has not ended yet, in order: whether the
    /// connection stays open after that response (not for `Connection: close`, nor for
    /// HTTP/1.0 without keep-alive).
    private var keepAliveAfter: [Bool] = []
    /// Whether a response head (not a `1xx`) has been written for the oldest request in
    /// flight and its end not yet.
    private var responseStarted = false
    /// A head ``RequestHeadRules`` refused: answered once the responses before it are out.
    private var refusal: GatewayError?
    private var closeWhenDone = false
    /// The connection is closing after a response: what still arrives is discarded.
    private var lingering = false
    /// The connection's own error answer went out (there is at most one).
    private var answered = false

    package var requestsInFlight: Int { keepAliveAfter.count }

    /// Whether what the client sends now is dropped: a head was refused, or the connection
    /// is closing after a response.
    package var discardsInput: Bool { lingering || refusal != nil }

    /// A head passed the rules and goes on.
    package mutating func headAdmitted(keepAlive: Bool) {
        keepAliveAfter.append(keepAlive)
    }

    /// A head the rules refused: answered now when no response is outstanding, else right
    /// after the last one (``responseEnded()``). Input is discarded from now on.
    package mutating func headRefused(_ error: GatewayError) -> Action {
        refusal = error
        return requestsInFlight == 0 ? answerRefusal() : .none
    }

    /// A response head was written.
    package mutating func responseHeadWritten(statusCode: Int) {
        if statusCode >= 200 { responseStarted = true }
    }

    /// A response's `.end` is being written.
    package mutating func responseEnded() -> ResponseEndAction {
        responseStarted = false
        let keepAlive = keepAliveAfter.isEmpty ? true : keepAliveAfter.removeFirst()
        if refusal != nil && requestsInFlight == 0 && keepAlive {
            if case .answerRefusal(let error) = answerRefusal() { return .writeThenAnswerRefusal(error) }
            return .write
        }
        if !keepAlive { return .flushThenLinger }
        if closeWhenDone && requestsInFlight == 0 { return .flushThenClose }
        return .write
    }

    /// The connection starts closing lingering; false when it already is.
    package mutating func startLingering() -> Bool {
        guard !lingering else { return false }
        lingering = true
        return true
    }

    /// Graceful shutdown: close now when idle, else once the responses under way are out.
    package mutating func quiesce() -> Action {
        guard requestsInFlight == 0 else {
            closeWhenDone = true
            return .none
        }
        return .close
    }

    /// The HTTP parser refused the input. Nil: the error belongs to the request whose
    /// response is under way, and goes on to whoever owns it.
    package mutating func parserFailed(headerOverflow: Bool) -> Action? {
        if headerOverflow {
            return answerAndClose(.headersTooLarge)
        }
        guard requestsInFlight == 0 else { return nil }
        return answerAndClose(.invalidRequest("the request is malformed"))
    }

    /// The request body stalled past its deadline. It belongs to the newest request; its
    /// answer may go out only when that is also the oldest and nothing of its response has
    /// been sent, else the connection just closes.
    package mutating func bodyTimedOut() -> Action {
        guard requestsInFlight == 1 && !responseStarted else { return .close }
        return answerAndClose(.requestTimeout)
    }

    /// The idle deadline passed: close unless a request is under way (then look again a
    /// timeout later, `false`).
    package func idleDeadlinePassed() -> Bool {
        requestsInFlight == 0
    }

    private mutating func answerAndClose(_ error: GatewayError) -> Action {
        guard !answered else { return .none }
        answered = true
        return .answerAndClose(error)
    }

    private mutating func answerRefusal() -> Action {
        guard let refusal, !answered else { return .none }
        answered = true
        return .answerRefusal(refusal)
    }
}
