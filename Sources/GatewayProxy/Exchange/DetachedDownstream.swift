import NIOCore
import NIOHTTP1

/// Where a keyed request's response goes once its client has gone (``ProxyExchange/clientClosed()``):
/// nowhere, at any pace. The exchange runs on to the upstream's answer, which is stored, so the
/// client's retry is replayed it rather than reaching the upstream a second time.
final class DetachedDownstream: ProxyDownstream {
    func writeResponseHead(_ head: ProxyResponseHead) {}
    func writeResponseBody(_ chunk: ByteBuffer) {}
    func endResponse(trailers: HTTPHeaders?, closingAfter: Bool) {}
    func flushResponse() {}
    var responseWritable: Bool { true }
    func abortResponse() {}
    var readUnderWay: Bool { false }
    func pauseRequestBody() {}
    func resumeRequestBody() {}
    func exchangeAnswered() {}
}
