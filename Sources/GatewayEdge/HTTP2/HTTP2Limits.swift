import NIOCore
import NIOHTTP2

/// HTTP/2's own limits on the TLS listener, set explicitly rather than left to library
/// defaults (documented in docs/tls.md).
package enum HTTP2Limits {
    /// Streams one client connection may have open at once (RFC 9113 recommends at least
    /// 100); more are refused with `REFUSED_STREAM`.
    package static let maxConcurrentStreams = 100
    /// The flow-control window each stream starts with (the RFC's default): how much of a
    /// request body a client may send ahead of the gateway reading it.
    package static let initialStreamWindow = 65_535
    /// The window the gateway keeps open per stream as it reads bodies (and for the connection).
    package static let targetStreamWindow = 1 << 20
    /// Answer bytes a stream may have written and not yet sent (held back by the client's
    /// flow-control window or a full socket) before its upstream's reading stops; it starts
    /// again below the low watermark. NIOHTTP2's defaults for a child channel.
    package static let streamOutboundHighWatermark = 8196
    package static let streamOutboundLowWatermark = 4092
    /// How long a connection sent GOAWAY, with no stream open, waits for the client's PING
    /// acknowledgement before it is closed regardless (``HTTP2StreamRouter``).
    package static let goAwayGrace = TimeAmount.seconds(2)
    /// Malformed header blocks one connection may send (each resets its stream) before it is
    /// closed with GOAWAY `ENHANCE_YOUR_CALM`: NIOHTTP2's glitch limit, which counted them
    /// while its validation ran.
    package static let maxMalformedBlocks = 200

    /// The header list size NIOHTTP2's decoder accepts and the gateway advertises
    /// (`SETTINGS_MAX_HEADER_LIST_SIZE`), above `server.max_header_bytes`: a list over
    /// `max_header_bytes` is answered `431` in the error shape (``StreamEdgeHandler``);
    /// only one over this limit, which the decoder must refuse, costs the connection (GOAWAY).
    package static func decoderHeaderListSize(maxHeaderBytes: Int) -> Int {
        4 * maxHeaderBytes
    }

    package static func configuration(maxHeaderBytes: Int) -> NIOHTTP2Handler.Configuration {
        var configuration = NIOHTTP2Handler.Configuration()
        configuration.connection.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: decoderHeaderListSize(maxHeaderBytes: maxHeaderBytes)),
            HTTP2Setting(parameter: .initialWindowSize, value: initialStreamWindow),
        ]
        // Header blocks are checked by the gateway, in the pass that reads them
        // (``HTTP2FieldRules``, ``HTTP2RequestHead``), not a second time by NIOHTTP2. Responses
        // are the gateway's own blocks (``HTTP2ResponseBlock``, NIO's HTTP/1 codec), made valid.
        configuration.connection.headerBlockValidation = .disabled
        configuration.stream.targetWindowSize = targetStreamWindow
        return configuration
    }
}
