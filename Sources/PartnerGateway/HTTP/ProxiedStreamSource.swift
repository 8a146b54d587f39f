import NIOCore
import NIOHTTP1

/// Who takes an HTTP/2 connection's proxied streams (``HTTP2ProxyStreams``): the proxy engine,
/// which starts a ``ProxyExchange`` for a request one of its routes takes.
///
/// A protocol so that the connection handler's frame and flow-control work is tested in memory
/// with exchanges the test drives, apart from admission and upstreams.
protocol ProxiedStreamSource: AnyObject {
    /// Starts the exchange of `head` (already through the edge rules), answering through
    /// `stream`, and returns it; nil when no route takes the request.
    func startExchange(
        for head: HTTPRequestHead,
        answeringThrough stream: HTTP2ProxyStream,
        memo: inout ProxyEngine.ConnectionMemo,
        on eventLoop: any EventLoop
    ) -> (any ProxiedStreamExchange)?
}

/// What an owned HTTP/2 stream tells its exchange about the client.
protocol ProxiedStreamExchange: AnyObject {
    /// A body part (or the end) of the request, as the client sends it.
    func requestPart(_ part: HTTPServerRequestPart)

    /// The connection's read has been handed over: what it brought goes upstream in one write.
    func clientReadComplete()

    /// The stream takes more of the answer again.
    func clientWritabilityChanged()

    /// The stream closed (reset by the client, the connection gone); after the answer's end
    /// this changes nothing.
    func clientClosed()
}

extension ProxyExchange: ProxiedStreamExchange {}

extension ProxyEngine: ProxiedStreamSource {
    func startExchange(
        for head: HTTPRequestHead,
        answeringThrough stream: HTTP2ProxyStream,
        memo: inout ConnectionMemo,
        on eventLoop: any EventLoop
    ) -> (any ProxiedStreamExchange)? {
        guard let request = request(for: head, peerIP: memo.peerIP) else { return nil }
        let exchange = ProxyExchange(request: request, engine: self, client: stream, eventLoop: eventLoop)
        exchange.start(memo: &memo)
        return exchange
    }
}
