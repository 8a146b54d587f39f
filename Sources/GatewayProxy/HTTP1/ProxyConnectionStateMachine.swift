import NIOCore
import NIOHTTP1

/// The order of requests and answers on one client connection, for ``ProxyHandler``: which
/// request is being answered, who answers it (the proxy engine or Hummingbird), what waits
/// behind it, and whether the connection may be read.
///
/// One request is under way at a time: its parts go to whoever answers it, and the next
/// request's parts wait until both its request and its response have ended. Pipelined
/// requests are therefore answered in order whichever mix of routes and endpoints they are,
/// and no part can reach an owner that did not see its head. Past ``maxWaiting`` waiting
/// parts, or while the proxied request's body is paused (admission under way, the upstream
/// not writable), the connection is not read, so neither a pipelining client nor a fast
/// upload grows memory.
///
/// It holds no channel and performs nothing: it returns what to do (``Action``), and the
/// handler does it. That keeps every rule testable without sockets.
package struct ProxyConnectionStateMachine {
    package enum Owner: Equatable {
        case proxy
        case hummingbird
    }

    package enum Input {
        case part(HTTPServerRequestPart)
        /// A decoding error, in order with the parts around it.
        case error(any Error)
    }

    package enum Action {
        /// The next request's head: the handler decides who answers it and calls
        /// ``assign(_:)`` before asking for the next action.
        case start(HTTPRequestHead)
        /// A part of the request under way, for its owner.
        case deliver(HTTPServerRequestPart, to: Owner)
        case deliverError(any Error, to: Owner)
    }

    /// Parts (of pipelined requests) that may wait before reading stops.
    package static let maxWaiting = 64

    private struct Current {
        package var owner: Owner?
        package let keepAlive: Bool
        package var requestEnded = false
        package var responseEnded = false
    }

    private var current: Current?
    private var waiting = CircularBuffer<Input>(initialCapacity: 4)
    /// A response without keep-alive was answered: nothing after it is taken.
    package private(set) var closing = false
    /// A read the channel asked for and the handler held back.
    private var readHeld = false
    private var bodyPaused = false

    /// Whether a request is under way (its head read, its request or response not ended).
    package var isBusy: Bool { current != nil }

    package var waitingCount: Int { waiting.count }

    /// Something read from the client, in order. Then ask for ``next()`` until it is nil.
    package mutating func received(_ input: Input) {
        guard !closing else { return }
        waiting.append(input)
    }

    /// Who answers the request ``next()`` just started.
    package mutating func assign(_ owner: Owner) {
        precondition(current != nil && current?.owner == nil, "assign follows start")
        current?.owner = owner
    }

    /// The next thing to do, or nil when everything waits (for an owner's decision, for the
    /// answer under way, or for more input).
    package mutating func next() -> Action? {
        while true {
            guard let request = current else {
                guard let input = waiting.popFirst() else { return nil }
                switch input {
                case .part(.head(let head)):
                    current = Current(owner: nil, keepAlive: head.isKeepAlive)
                    return .start(head)
                case .part(let part):
                    // Body without a head cannot come from the decoder; Hummingbird refuses it.
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
                    current?.requestEnded = true
                    return .deliver(.end(trailers), to: owner)
                case .part(let part):
                    return .deliver(part, to: owner)
                case .error(let error):
                    return .deliverError(error, to: owner)
                }
            }
            guard request.responseEnded else { return nil }
            current = nil
            if !request.keepAlive {
                // The connection closes after this answer (ClientProtectionHandler).
                closing = true
                waiting.removeAll()
                return nil
            }
        }
    }

    /// The answer to the request under way has ended. Then ask for ``next()``.
    package mutating func responseEnded() {
        current?.responseEnded = true
    }

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

    /// The connection closed: nothing waits any more.
    package mutating func closed() {
        closing = true
        current = nil
        waiting.removeAll()
    }
}
