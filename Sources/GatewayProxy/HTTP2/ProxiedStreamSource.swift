import NIOCore
import NIOHTTP1

/// Who takes an HTTP/2 connection's proxied streams (``HTTP2StreamRouter``): the proxy engine,
/// which starts a ``ProxyExchange`` for a request one of its routes takes.
///
/// A protocol so that the connection handler's frame and flow-control work is tested in memory
/// with exchanges the test drives, apart from admission and upstreams.
package protocol ProxiedStreamSource: AnyObject {
    /// The exchange of `head` (already through the edge rules), answering through `stream`,
    /// not yet started (``ProxiedStreamExchange/start(memo:)``); nil when no route takes the
    /// request.
    func makeExchange(
        for head: HTTPRequestHead,
        answeringThrough stream: HTTP2ProxyStream,
        memo: inout ProxyEngine.ConnectionMemo,
        on eventLoop: any EventLoop
    ) -> (any ProxiedStreamExchange)?
}

extension ProxyEngine: ProxiedStreamSource {
    package func makeExchange(
        for head: HTTPRequestHead,
        answeringThrough stream: HTTP2ProxyStream,
        memo: inout ConnectionMemo,
        on eventLoop: any EventLoop
    ) -> (any ProxiedStreamExchange)? {
        guard let request = request(for: head, memo: &memo) else { return nil }
        return ProxyExchange(request: request, engine: self, client: stream, eventLoop: eventLoop)
    }
}
