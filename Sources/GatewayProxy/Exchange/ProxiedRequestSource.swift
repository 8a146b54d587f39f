import GatewayEdge
import NIOCore
import NIOHTTP1

/// Who takes a connection's proxied requests (``HTTP1ConnectionHandler`` for an HTTP/1
/// connection, ``HTTP2StreamRouter`` for an HTTP/2 connection's streams): the proxy engine,
/// which starts a ``ProxyExchange`` for a request one of its routes takes.
///
/// A protocol so that the connection handlers' work (order, keep-alive, frames, flow control)
/// is tested in memory with exchanges the test drives, apart from admission and upstreams.
package protocol ProxiedRequestSource: AnyObject {
    /// The exchange of `head` (already through the edge rules), answering through `client`
    /// (an ``HTTP1ConnectionHandler`` or an ``HTTP2ProxyStream``), not yet started
    /// (``ProxiedRequestExchange/start(memo:)``); nil when no route takes the request.
    func makeExchange(
        for head: ClientRequestHead,
        answeringThrough client: any ProxyDownstream,
        memo: inout ProxyEngine.ConnectionMemo,
        on eventLoop: any EventLoop
    ) -> (any ProxiedRequestExchange)?

    /// Whether a route takes `head`'s path, matched on the connection's own copy of the routes
    /// (in `memo`) as ``makeExchange(for:answeringThrough:memo:on:)`` matches: its body is
    /// timed between reads (``BodyReadDeadline/Limit``). Asked when the head arrives, before
    /// a pipelined request's exchange is made; no lock or shared count is taken per request.
    func takes(_ head: ClientRequestHead, memo: inout ProxyEngine.ConnectionMemo) -> Bool
}

extension ProxyEngine: ProxiedRequestSource {
    package func makeExchange(
        for head: ClientRequestHead,
        answeringThrough client: any ProxyDownstream,
        memo: inout ConnectionMemo,
        on eventLoop: any EventLoop
    ) -> (any ProxiedRequestExchange)? {
        guard let request = request(for: head, memo: &memo) else { return nil }
        return ProxyExchange(request: request, engine: self, client: client, eventLoop: eventLoop)
    }

    package func takes(_ head: ClientRequestHead, memo: inout ConnectionMemo) -> Bool {
        routes.match(head.path, holding: &memo.routes)?.hasUpstream == true
    }
}
