import GatewayEdge

/// Takes an upstream response's parts on the connection's event loop as they are read
/// (``ProxyExchange``): pushed with plain calls, with no promise, future or timer per part.
package protocol UpstreamResponseSink: AnyObject {
    /// One part of the response. Returns whether to go on reading; `false` pauses the
    /// connection (nothing more is read from the upstream) until
    /// ``UpstreamResponseHandler/resume()``. After `.end` the sink is detached.
    func upstreamPart(_ part: UpstreamResponsePart) -> Bool

    /// The parts of one read from the upstream have all been handed over: the moment to flush
    /// what was written for them.
    func upstreamReadComplete()

    /// The upstream connection can take more of the request body, or can no longer.
    func upstreamWritabilityChanged()

    /// The response cannot complete; the sink is detached and the connection closed.
    func upstreamFailed(_ error: UpstreamError)
}
