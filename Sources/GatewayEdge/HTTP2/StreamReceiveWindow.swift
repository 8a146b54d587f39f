/// The flow-control window an owned HTTP/2 stream (``HTTP2ProxyStream``) gives its client for
/// the request body, kept as NIOHTTP2 keeps a child channel's: the window is opened again up
/// to ``HTTP2Limits/targetStreamWindow`` once it has fallen to half of that, counting the bytes
/// the exchange has not taken yet as still in the window, so that held bytes are never
/// credited twice and a client can never send more than the target ahead of the exchange.
package struct StreamReceiveWindow {
    package init() {}

    /// What the client may still send, as it sees it.
    private var open = HTTP2Limits.initialStreamWindow
    /// Received and not yet taken by the exchange.
    private var heldBytes = 0

    /// A DATA frame arrived: `size` is its flow-controlled length (padding included).
    package mutating func received(_ size: Int) {
        open -= size
    }

    /// `size` bytes were received but wait for the exchange.
    package mutating func held(_ size: Int) {
        heldBytes += size
    }

    /// The exchange took `size` held bytes.
    package mutating func taken(_ size: Int) {
        heldBytes -= size
    }

    /// The increment to send in a WINDOW_UPDATE now, if one is due; counted as sent.
    package mutating func update() -> Int? {
        let target = HTTP2Limits.targetStreamWindow
        let effective = open + heldBytes
        guard effective <= target / 2 else { return nil }
        let increment = target - effective
        open += increment
        return increment
    }
}
