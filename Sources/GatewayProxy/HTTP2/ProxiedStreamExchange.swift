import NIOHTTP1

/// What an owned HTTP/2 stream tells its exchange about the client.
package protocol ProxiedStreamExchange: AnyObject {
    /// Admission, then the upstream: the request goes on its way.
    func start(memo: inout ProxyEngine.ConnectionMemo)

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
