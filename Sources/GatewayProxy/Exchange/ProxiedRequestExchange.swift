import NIOHTTP1

/// What a connection handler tells a proxied request's exchange about the client (an HTTP/1
/// connection's request or an owned HTTP/2 stream).
package protocol ProxiedRequestExchange: AnyObject {
    /// Admission, then the upstream: the request goes on its way.
    func start(memo: inout ProxyEngine.ConnectionMemo)

    /// A body part (or the end) of the request, as the client sends it.
    func requestPart(_ part: HTTPServerRequestPart)

    /// Reading the request failed (a parser error inside its body).
    func clientFailed(_ error: any Error)

    /// The connection's read has been handed over: what it brought goes upstream in one write.
    func clientReadComplete()

    /// The client takes more of the response again.
    func clientWritabilityChanged()

    /// The client went (the stream reset, the connection gone); after the response's end this
    /// changes nothing.
    func clientClosed()

    /// The listener drains: a response that may never end on its own (an event stream) ends at
    /// the end of an event, its upstream connection closed.
    func drain()
}

extension ProxyExchange: ProxiedRequestExchange {}
