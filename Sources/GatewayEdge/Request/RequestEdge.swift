import NIOCore
import NIOHTTP1

/// The request edge as a pure state machine, the one place of its rules for every way a
/// request arrives: an HTTP/1 connection (``HTTP1ConnectionHandler``), an HTTP/2 child channel
/// (``StreamEdgeHandler``) and a proxied HTTP/2 stream (``HTTP2StreamRouter``, ``HTTP2ProxyStream``).
/// It holds no channel, timer or clock: the callers pass the instants and apply the
/// ``DeadlineTimer/Change``s it returns, so every rule is tested without sockets.
///
/// The rules:
/// - a head passes ``RequestHeadRules`` (refused: `400 INVALID_REQUEST`) and, where the
///   protocol does not limit it itself, the header limit (`server.max_header_bytes`, counted as
///   RFC 9113 does: `431`). HTTP/1's parser enforces the limit while it reads (its
///   `headerOverflow` is the same `431`), so HTTP/1 passes no limit here;
/// - a request body must keep arriving (`server.body_read_timeout`, timed by
///   ``BodyReadDeadline``);
/// - a stalled body is answered `408 REQUEST_TIMEOUT` only while no response to its request has
///   started; after that the response cannot be replaced, and the connection (HTTP/1) or the
///   stream (HTTP/2) just closes.
package struct RequestEdge {
    /// What a stalled body leads to (``bodyDeadlinePassed(responseStarted:)``).
    package enum Stall: Equatable {
        /// Answer `408` in the error shape, then close the connection or the stream.
        case answer(GatewayError)
        /// A response has started: close the connection or reset the stream without one.
        case close
    }

    /// The largest header list a head may have, or nil where the parser limits it.
    package let maxHeaderListSize: Int?
    private var body: BodyReadDeadline

    /// ``ProxiedPaths/anchoredPrefix`` of the listener's proxy engine.
    package let anchoredPrefix: String?

    package init(maxHeaderListSize: Int?, bodyReadTimeout: TimeAmount, anchoredPrefix: String? = nil) {
        self.maxHeaderListSize = maxHeaderListSize
        self.anchoredPrefix = anchoredPrefix
        body = BodyReadDeadline(timeout: bodyReadTimeout)
    }

    // MARK: Heads

    /// `head` as it goes on (its target canonical), or the error that refuses it: `431` over
    /// the header limit, else ``RequestHeadRules``'s `400`.
    package func admit(_ head: ClientRequestHead) -> Result<ClientRequestHead, GatewayError> {
        if let maxHeaderListSize, Self.headerListSize(of: head) > maxHeaderListSize {
            return .failure(.headersTooLarge)
        }
        return RequestHeadRules.admit(head, anchoredPrefix: anchoredPrefix)
    }

    /// The same for a head held as NIO's (an HTTP/2 stream for the gateway's own endpoints),
    /// laid out as bytes for the rules and back.
    package func admit(_ head: HTTPRequestHead) -> Result<HTTPRequestHead, GatewayError> {
        admit(ClientRequestHead(head)).map(\.requestHead)
    }

    /// The header list's size as RFC 9113 counts it (each field's name and value plus 32),
    /// the pseudo-fields `:method` and `:path` included (`:authority` arrives as `Host`).
    package static func headerListSize(of head: ClientRequestHead) -> Int {
        var size = 7 + head.method.rawValue.utf8.count + 32 + 5 + head.target.utf8.count + 32
        head.forEachField { field in
            size += field.name.count + field.value.count + 32
        }
        return size
    }

    /// Whether an HTTP/1 head declares a body (a transfer coding, or a length above zero).
    package static func declaresBody(_ head: ClientRequestHead) -> Bool {
        head.declaredBody != .none
    }

    /// The same for a head held as NIO's (one the gateway's own endpoints answer).
    package static func declaresBody(_ head: HTTPRequestHead) -> Bool {
        DeclaredBody(head.headers) != .none
    }

    /// Whether a response's head with `status` starts the response: a `1xx` (`100 Continue`) does
    /// not, a `408` may still replace it.
    package static func startsResponse(status: Int) -> Bool {
        status >= 200
    }

    // MARK: The body

    /// A request body starts: timed by `limit` from `now`.
    package mutating func bodyStarted(limit: BodyReadDeadline.Limit, now: NIODeadline) -> DeadlineTimer.Change {
        body.headRead(hasBody: true, limit: limit, now: now)
    }

    /// Part of the body arrived.
    package mutating func bodyRead() -> DeadlineTimer.Change {
        body.bodyRead()
    }

    /// The gateway asks for more input.
    package mutating func readRequested(now: NIODeadline) -> DeadlineTimer.Change {
        body.readRequested(now: now)
    }

    /// The gateway asks for more of a body still coming: the first ask starts its timing by
    /// `limit` from `now`, later ones are ``readRequested(now:)``.
    package mutating func bodyWanted(limit: BodyReadDeadline.Limit, now: NIODeadline) -> DeadlineTimer.Change {
        body.bodyWanted(limit: limit, now: now)
    }

    /// The body's end arrived, or the request or connection is done with it.
    package mutating func bodyEnded() -> DeadlineTimer.Change {
        body.bodyEnded()
    }

    /// The deadline last returned passed: nil when the body is not late after all (it ended,
    /// or the gateway was not asking for more), else what to do, given whether a response to
    /// the body's request has started (or can no longer be sent in its turn).
    package mutating func bodyDeadlinePassed(responseStarted: Bool) -> Stall? {
        guard body.deadlinePassed() else { return nil }
        return responseStarted ? .close : .answer(.requestTimeout)
    }
}
