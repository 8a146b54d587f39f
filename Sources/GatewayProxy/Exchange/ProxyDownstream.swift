import NIOCore
import NIOHTTP1

/// The downstream side of a ``ProxyExchange`` (its client): where its response goes and how the
/// reading of its request is steered. ``HTTP1ConnectionHandler`` is one for an HTTP/1.1 connection (its
/// pipeline and state machine), ``HTTP2ProxyStream`` one for an HTTP/2
/// stream driven from the connection's frames.
///
/// Why a protocol: the exchange's rules (admission, the upstream, failures and their responses,
/// the record) are the same for both protocols and stay in one place; only the writing and the
/// closing differ: an HTTP/1.1 answer is closed by closing the connection, an HTTP/2 one by
/// resetting its stream only. The response's head is handed over as a ``ProxyResponseHead`` so
/// that each protocol writes its fields in its own form (HTTP/1.1 bytes, an HTTP/2 header
/// block) straight from the header rules.
package protocol ProxyDownstream: AnyObject {
    /// Writes the response's head without flushing it.
    func writeResponseHead(_ head: ProxyResponseHead)

    /// Writes a part of the response's body without flushing it.
    func writeResponseBody(_ chunk: ByteBuffer)

    /// Writes the response's end and flushes (an HTTP/1.1 connection at the end of the loop's
    /// pass: ``PassFlushes``); with `closingAfter`, the connection is closed once it is written
    /// (a request that cannot be read further).
    func endResponse(trailers: HTTPHeaders?, closingAfter: Bool)

    func flushResponse()

    /// Whether the client takes more of the response now; when not,
    /// ``ProxyExchange/clientWritabilityChanged()`` follows once it does.
    var responseWritable: Bool { get }

    /// Breaks the response off mid-way, so the client sees it incomplete.
    func abortResponse()

    /// Inside a read from the client: what the exchange sends upstream meanwhile is flushed
    /// at the read's end (``ProxyExchange/clientReadComplete()``).
    var readUnderWay: Bool { get }

    /// The exchange cannot take its request's body for now.
    func pauseRequestBody()

    /// The exchange can take body parts again.
    func resumeRequestBody()

    /// The exchange's response has ended (written, or the client is being closed).
    func exchangeAnswered()

    /// The `101` was written: join the client's connection and `upstream` in a
    /// ``WebSocketTunnel``, returned; nil when this client cannot (the upstream is then closed).
    func upgrade(to upstream: UpstreamConnection, idleTimeout: TimeAmount) -> WebSocketTunnel?
}

extension ProxyDownstream {
    /// Clients that never receive a handshake (HTTP/2 streams: `Upgrade` is not an HTTP/2 field).
    package func upgrade(to upstream: UpstreamConnection, idleTimeout: TimeAmount) -> WebSocketTunnel? {
        upstream.abort(.closed)
        return nil
    }
}
