import NIOCore
import NIOHTTP1
import Testing

@testable import GatewayEdge

/// The request edge as pure values (``RequestEdge``, ``BodyReadDeadline``, ``HeadReadDeadline``):
/// head admission (`400`, the HTTP/2 header limit's `431`), the body deadlines, and the `408`
/// decision every protocol asks. Events in, decisions out; no channel and no clock but the
/// instants the test passes.
@Suite("Request edge rules")
struct RequestEdgeTests {
    private static func head(_ uri: String, _ fields: [(String, String)] = []) -> HTTPRequestHead {
        HTTPRequestHead(version: .http1_1, method: .GET, uri: uri, headers: HTTPHeaders([("Host", "x")] + fields))
    }

    // MARK: Heads

    @Test func aHeadThatPassesGoesOnCanonical() throws {
        let edge = RequestEdge(maxHeaderListSize: 4096, bodyReadTimeout: .seconds(1))
        let admitted = try edge.admit(Self.head("/user//x/../list?q=1")).get()
        #expect(admitted.uri == "/user/list?q=1")
    }

    @Test(arguments: [
        [("Authorization", "Bearer a"), ("authorization", "Bearer b")],
        [("X-API-Key", "a"), ("x-api-key", "b")],
        [("Connection", "Content-Length")],
        [("Transfer-Encoding", "gzip")],
    ])
    func aHeadTheRulesRefuseIs400(fields: [(String, String)]) {
        let edge = RequestEdge(maxHeaderListSize: nil, bodyReadTimeout: .seconds(1))
        guard case .failure(let error) = edge.admit(Self.head("/x", fields)) else {
            Issue.record("admitted \(fields)")
            return
        }
        #expect(error.status == .badRequest)
    }

    @Test func aHeaderListOverTheLimitIs431AndOneAtItPasses() {
        let base = Self.head("/x")
        let size = RequestEdge.headerListSize(of: ClientRequestHead(base))
        #expect(size == 7 + 3 + 32 + 5 + 2 + 32 + 4 + 1 + 32)
        let exact = RequestEdge(maxHeaderListSize: size, bodyReadTimeout: .seconds(1))
        #expect((try? exact.admit(base).get()) != nil, "a head at the limit was refused")
        let smaller = RequestEdge(maxHeaderListSize: size - 1, bodyReadTimeout: .seconds(1))
        #expect(smaller.admit(base) == .failure(.headersTooLarge))
        // Without a limit (HTTP/1: its parser limits the head) size is not looked at.
        let unlimited = RequestEdge(maxHeaderListSize: nil, bodyReadTimeout: .seconds(1))
        #expect((try? unlimited.admit(Self.head("/x", [("X-Big", String(repeating: "a", count: 100_000))])).get()) != nil)
    }

    @Test func aBodyIsDeclaredByALengthAboveZeroOrATransferCoding() {
        #expect(!RequestEdge.declaresBody(Self.head("/x")))
        #expect(!RequestEdge.declaresBody(Self.head("/x", [("Content-Length", "0")])))
        #expect(RequestEdge.declaresBody(Self.head("/x", [("Content-Length", "3")])))
        #expect(RequestEdge.declaresBody(Self.head("/x", [("Transfer-Encoding", "chunked")])))
    }

    // MARK: The 408 decision

    @Test func aStalledBodyIs408BeforeTheResponseStartedAndACloseAfter() {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var before = RequestEdge(maxHeaderListSize: nil, bodyReadTimeout: .seconds(3))
        #expect(before.bodyStarted(limit: .betweenReads, now: start) == .expire(at: start + .seconds(3)))
        #expect(before.bodyDeadlinePassed(responseStarted: false) == .answer(.requestTimeout))
        #expect(before.bodyDeadlinePassed(responseStarted: false) == nil, "one stall was decided twice")

        var after = RequestEdge(maxHeaderListSize: nil, bodyReadTimeout: .seconds(3))
        _ = after.bodyStarted(limit: .betweenReads, now: start)
        #expect(after.bodyDeadlinePassed(responseStarted: true) == .close)

        var ended = RequestEdge(maxHeaderListSize: nil, bodyReadTimeout: .seconds(3))
        _ = ended.bodyStarted(limit: .wholeBody, now: start)
        #expect(ended.bodyEnded() == .clear)
        #expect(ended.bodyDeadlinePassed(responseStarted: false) == nil, "an ended body timed out")
    }

    @Test func onlyAFinalStatusStartsAResponse() {
        #expect(!RequestEdge.startsResponse(status: 100))
        #expect(RequestEdge.startsResponse(status: 200))
        #expect(RequestEdge.startsResponse(status: 404))
    }

    // MARK: Head and body deadlines

    @Test func theFirstHeadIsTimedFromTheConnectionAndLaterOnesFromTheirFirstByte() {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var deadline = HeadReadDeadline(timeout: .seconds(2))
        #expect(deadline.connectionOpened(now: start) == .expire(at: start + .seconds(2)))
        #expect(deadline.bytesRead(now: start + .seconds(1)) == .keep, "a later byte of the same head moved its deadline")
        #expect(deadline.headArrived() == .clear)
        #expect(deadline.bytesRead(now: start + .seconds(3)) == .keep, "a body or pipelined bytes started a head clock")
        #expect(deadline.responseEnded(now: start + .seconds(4)) == .keep)
        #expect(deadline.bytesRead(now: start + .seconds(9)) == .expire(at: start + .seconds(11)))
    }

    @Test func aHeadStartedBeforeTheResponseEndedIsTimedFromThatEnd() {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var deadline = HeadReadDeadline(timeout: .seconds(2))
        _ = deadline.connectionOpened(now: start)
        _ = deadline.headArrived()
        #expect(deadline.bytesRead(now: start + .seconds(1)) == .keep, "the request's own body started a head clock")
        deadline.requestEnded()
        // The client had the whole response and sent the next head's start before the response's
        // end went through the pipeline.
        #expect(deadline.bytesRead(now: start + .seconds(2)) == .keep)
        #expect(deadline.responseEnded(now: start + .seconds(3)) == .expire(at: start + .seconds(5)))

        // A body read before the request's end never counts as the next request.
        var withBody = HeadReadDeadline(timeout: .seconds(2))
        _ = withBody.connectionOpened(now: start)
        _ = withBody.headArrived()
        _ = withBody.bytesRead(now: start + .seconds(1))
        withBody.requestEnded()
        #expect(withBody.responseEnded(now: start + .seconds(3)) == .keep, "an idle keep-alive connection got a head clock")
    }

    @Test func aLingeringCloseAwaitsNoHead() {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var deadline = HeadReadDeadline(timeout: .seconds(2))
        _ = deadline.connectionOpened(now: start)
        _ = deadline.headArrived()
        // Answered (a 413) before its body arrived; the rest of the body is read while lingering.
        #expect(deadline.responseEnded(now: start + .seconds(1)) == .keep)
        #expect(deadline.connectionClosing() == .clear)
        #expect(deadline.bytesRead(now: start + .seconds(2)) == .keep, "the rest of an answered body started a head clock")
        #expect(!deadline.awaitsFirstByte)
    }

    @Test func lingeringEndsAfterSilenceOrAtItsTotal() {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var linger = LingerDeadline()
        #expect(linger.bytesRead(now: start) == .keep, "a connection not lingering got a linger deadline")
        #expect(linger.started(now: start) == .expire(at: start + LingerDeadline.silence))
        #expect(linger.bytesRead(now: start + .seconds(4)) == .expire(at: start + .seconds(4) + LingerDeadline.silence))
        #expect(linger.bytesRead(now: start + LingerDeadline.total - .seconds(1)) == .expire(at: start + LingerDeadline.total))
    }

    @Test func aProxiedBodyIsTimedBetweenReadsAndAnEndpointBodyAsAWhole() {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var proxied = RequestEdge(maxHeaderListSize: nil, bodyReadTimeout: .seconds(3))
        #expect(proxied.bodyStarted(limit: .betweenReads, now: start) == .expire(at: start + .seconds(3)))
        #expect(proxied.bodyRead() == .clear)
        #expect(proxied.readRequested(now: start + .seconds(2)) == .expire(at: start + .seconds(5)))
        #expect(proxied.bodyDeadlinePassed(responseStarted: false) != nil)

        var endpoint = RequestEdge(maxHeaderListSize: nil, bodyReadTimeout: .seconds(3))
        #expect(endpoint.bodyStarted(limit: .wholeBody, now: start) == .expire(at: start + .seconds(3)))
        #expect(endpoint.bodyRead() == .keep)
        #expect(endpoint.readRequested(now: start + .seconds(2)) == .expire(at: start + .seconds(3)))
        #expect(endpoint.bodyEnded() == .clear)
        #expect(endpoint.bodyDeadlinePassed(responseStarted: false) == nil, "an ended body timed out")
    }

    @Test func aProxiedBodyIsNotTimedWhileTheGatewayIsNotReading() {
        var edge = RequestEdge(maxHeaderListSize: nil, bodyReadTimeout: .seconds(3))
        _ = edge.bodyStarted(limit: .betweenReads, now: .uptimeNanoseconds(0))
        _ = edge.bodyRead()
        #expect(edge.bodyDeadlinePassed(responseStarted: false) == nil, "timed out while the gateway was not asking for more")
    }
}
