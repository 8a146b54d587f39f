import NIOCore
import NIOHTTP2

/// An HTTP/2 connection's handlers: NIO's defaults for the connection and its streams, and
/// either one frame handler or NIO's multiplexer with a handler per stream.
struct HTTP2Setup: @unchecked Sendable {
    // @unchecked: the pools are only used on their own loops.
    let streams: ProxyFloor.HTTP2Streams
    let pools: [ObjectIdentifier: FloorUpstreamPool]

    func configure(_ channel: any Channel) throws {
        let pool = pools[ObjectIdentifier(channel.eventLoop)]!
        let pipeline = channel.pipeline.syncOperations
        switch streams {
        case .frames:
            try pipeline.addHandler(NIOHTTP2Handler(mode: .server))
            try pipeline.addHandler(HTTP2FrameFloorHandler(pool: pool))
        case .multiplexer:
            _ = try pipeline.configureHTTP2Pipeline(
                mode: .server,
                connectionConfiguration: .init(),
                streamConfiguration: .init()
            ) { stream in
                stream.eventLoop.makeCompletedFuture {
                    try stream.pipeline.syncOperations.addHandler(HTTP2StreamFloorHandler(pool: pool))
                }
            }
        }
    }
}
