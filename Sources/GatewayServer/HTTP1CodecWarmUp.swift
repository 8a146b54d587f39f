import GatewayEdge
import NIOCore
import NIOEmbedded
import NIOHTTP1

/// Runs one request and its response through the HTTP/1 parser and encoder on this thread,
/// before any listener accepts. The Swift runtime can crash when two threads instantiate the
/// same generic metadata for the first time at once (swiftlang/swift#58414): the gateway did,
/// in `ByteToMessageHandler`'s around its request decoder, when the first connections of both
/// event loops arrived together. Once instantiated here, every loop finds the metadata made.
enum HTTP1CodecWarmUp {
    static func run() {
        let channel = EmbeddedChannel()
        let pipeline = channel.pipeline.syncOperations
        try? pipeline.addHandler(HTTPResponseEncoder(configuration: .init()))
        var parser = HTTP1RequestParser(maxHeadBytes: 8192)
        var request = ByteBuffer(string: "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx")
        while let _ = try? parser.next(&request) {}
        let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["Content-Length": "1"])
        _ = try? channel.writeOutbound(HTTPServerResponsePart.head(head))
        _ = try? channel.writeOutbound(HTTPServerResponsePart.body(.byteBuffer(ByteBuffer(string: "x"))))
        _ = try? channel.writeOutbound(HTTPServerResponsePart.end(nil))
        _ = try? channel.finish()
        // The parser's parts carry the head as bytes; those HTTP1ConnectionHandler passes on to
        // the endpoints are NIO's, made first here too.
        _ = NIOAny(HTTPServerRequestPart.end(nil))
    }
}
