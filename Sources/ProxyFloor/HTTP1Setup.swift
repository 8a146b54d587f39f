import NIOCore
import NIOHTTP1

/// An HTTP/1.1 connection's handlers, by how heads are read.
struct HTTP1Setup: Sendable {
    let heads: ProxyFloor.Heads
    let upstream: SocketAddress

    func configure(_ channel: any Channel) throws {
        switch heads {
        case .codec:
            try channel.pipeline.syncOperations.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: false)
            try channel.pipeline.syncOperations.addHandler(FloorClientHandler<CodecHeads>(upstream: upstream))
        case .bytes:
            try channel.pipeline.syncOperations.addHandler(FloorClientHandler<ByteHeads>(upstream: upstream))
        }
    }
}
