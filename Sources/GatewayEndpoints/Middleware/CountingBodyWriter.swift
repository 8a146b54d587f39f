import HTTPTypes
import Hummingbird
import NIOCore

/// A response body writer that counts the bytes it passes on, for the access log.
struct CountingBodyWriter: ResponseBodyWriter {
    /// The running total, read after the body has ended (the writer itself is consumed).
    final class Count {
        var bytes = 0
    }

    var base: any ResponseBodyWriter
    let count: Count

    mutating func write(_ buffer: ByteBuffer) async throws {
        count.bytes += buffer.readableBytes
        try await base.write(buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await base.finish(trailingHeaders)
    }
}
