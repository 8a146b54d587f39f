import NIOCore
import NIOEmbedded
import NIOHTTP1
import Testing

@testable import GatewayEdge
@testable import GatewayProxy

/// Idle keep-alive connections parked without their HTTP handlers (``ConnectionParking``), in
/// memory on a test clock: when a connection parks and when it must not, its next request
/// answered as before, its idle timeout and a graceful shutdown while parked.
@Suite("Parked idle connections (in memory)")
struct ConnectionParkingTests {
    typealias Scripted = HTTP1ConnectionHandlerTests.ScriptedSource

    /// The handlers a test connection parks and gets back: NIO's codec and the connection
    /// handler, as the listener's channel sets them up.
    final class TestHandlers: ParkableHandlers, @unchecked Sendable {
        let source = Scripted()
        let lots = ConnectionParking()
        let idleTimeout: TimeAmount?
        private(set) var restored = 0

        init(idleTimeout: TimeAmount?) {
            self.idleTimeout = idleTimeout
        }

        func addRequestHandlers(to pipeline: ChannelPipeline.SynchronousOperations, watcher: RequestStartWatcher) throws {
            restored += 1
            try add(to: pipeline, watcher: watcher)
        }

        func add(to pipeline: ChannelPipeline.SynchronousOperations, watcher: RequestStartWatcher?) throws {
            try pipeline.addHandler(HTTPResponseEncoder(configuration: .init()), name: "encoder")
            try pipeline.addHandler(HTTP1ConnectionHandler(
                headerReadTimeout: .seconds(30), idleTimeout: idleTimeout, bodyReadTimeout: .seconds(30), maxHeadBytes: 8192,
                proxy: source, watcher: watcher, parking: (lots, self)
            ), name: "connection")
        }

        func removeRequestHandlers(from pipeline: ChannelPipeline.SynchronousOperations) {
            for name in ["connection", "encoder"] { pipeline.removeHandler(name: name, promise: nil) }
        }
    }

    struct Connection {
        let channel = EmbeddedChannel()
        let handlers: TestHandlers

        init(idleTimeout: TimeAmount? = .seconds(60)) async throws {
            handlers = TestHandlers(idleTimeout: idleTimeout)
            try handlers.add(to: channel.pipeline.syncOperations, watcher: nil)
            try await channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).get()
        }

        var watcher: RequestStartWatcher { get throws { try channel.pipeline.syncOperations.handler(type: RequestStartWatcher.self) } }

        /// Whether the connection holds its HTTP handlers (not parked).
        var hasHandlers: Bool { (try? channel.pipeline.syncOperations.handler(type: HTTP1ConnectionHandler.self)) != nil }

        func send(_ text: String) throws {
            try channel.writeInbound(ByteBuffer(string: text))
        }

        /// Sends a proxied `GET` and answers it.
        func getAnswered(_ path: String = "/proxied") throws {
            try send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
            handlers.source.exchanges.last?.answer(body: "ok")
        }

        func wait(_ time: TimeAmount) {
            channel.embeddedEventLoop.advanceTime(by: time)
        }

        func written() throws -> String {
            var text = ""
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
            return text
        }
    }

    @Test func anIdleConnectionParksAndItsNextRequestIsAnsweredAsBefore() async throws {
        let connection = try await Connection()
        try connection.getAnswered("/proxied/1")
        #expect(try connection.written().hasPrefix("HTTP/1.1 200 OK"))
        connection.wait(ConnectionParking.delay - .milliseconds(1))
        #expect(connection.hasHandlers, "parked before its delay")
        connection.wait(.milliseconds(1))
        #expect(!connection.hasHandlers, "idle for the delay and not parked")
        #expect(try connection.watcher.isParked)
        #expect((try? connection.channel.pipeline.syncOperations.handler(type: HTTPResponseEncoder.self)) == nil)

        try connection.getAnswered("/proxied/2")
        #expect(connection.handlers.restored == 1)
        #expect(connection.handlers.source.exchanges.map(\.head.target) == ["/proxied/1", "/proxied/2"])
        #expect(try connection.written().hasPrefix("HTTP/1.1 200 OK"))
        #expect(try !connection.watcher.isParked)
        connection.wait(ConnectionParking.delay)
        #expect(!connection.hasHandlers, "parked only once")
    }

    @Test func aBusyConnectionDoesNotPark() async throws {
        let connection = try await Connection()
        for _ in 0..<5 {
            try connection.getAnswered()
            connection.wait(ConnectionParking.delay - .milliseconds(10))
        }
        #expect(connection.hasHandlers)
        #expect(connection.handlers.restored == 0)
    }

    @Test func aParkedConnectionClosesAtItsIdleTimeoutAndNotBefore() async throws {
        let connection = try await Connection(idleTimeout: .seconds(2))
        try connection.getAnswered()
        connection.wait(ConnectionParking.delay)
        #expect(!connection.hasHandlers)
        connection.wait(.seconds(2) - ConnectionParking.delay - .milliseconds(1))
        #expect(connection.channel.isActive, "closed before its idle timeout")
        connection.wait(.milliseconds(1))
        #expect(!connection.channel.isActive, "not closed at its idle timeout while parked")
    }

    @Test func aConnectionWokenFromParkingIsNotClosedByItsOldIdleDeadline() async throws {
        let connection = try await Connection(idleTimeout: .seconds(2))
        try connection.getAnswered()
        connection.wait(.seconds(1))
        #expect(!connection.hasHandlers)
        try connection.getAnswered()
        connection.wait(.seconds(1))
        #expect(connection.channel.isActive, "closed by the idle deadline of its earlier parking")
        connection.wait(.seconds(1))
        #expect(!connection.channel.isActive)
    }

    /// The decoder may hold the start of the next request when the bytes read since the last
    /// response did not end a head: dropping it would corrupt that request.
    @Test func aConnectionHoldingPartOfAHeadDoesNotPark() async throws {
        let connection = try await Connection()
        try connection.send("GET /proxied/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /proxied/2 HTT")
        connection.handlers.source.exchanges[0].answer(body: "one")
        connection.wait(.seconds(1))
        #expect(connection.hasHandlers, "parked with half a request in its decoder")
        try connection.send("P/1.1\r\nHost: x\r\n\r\n")
        #expect(connection.handlers.source.exchanges.map(\.head.target) == ["/proxied/1", "/proxied/2"])

        // The same after a body, which need not end in CRLF CRLF: a read ending one is needed.
        connection.handlers.source.exchanges[1].answer(body: "two")
        try connection.send("POST /proxied/3 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        connection.handlers.source.exchanges[2].answer(body: "three")
        connection.wait(.seconds(1))
        #expect(connection.hasHandlers)
        try connection.getAnswered()
        connection.wait(ConnectionParking.delay)
        #expect(!connection.hasHandlers)
    }

    @Test func aConnectionWithAResponseOutstandingDoesNotPark() async throws {
        let connection = try await Connection()
        try connection.send("GET /proxied HTTP/1.1\r\nHost: x\r\n\r\n")
        connection.wait(.seconds(1))
        #expect(connection.hasHandlers)
        connection.handlers.source.exchanges[0].answer(body: "late")
        #expect(try connection.written().hasSuffix("late"))
    }

    @Test func aConnectionThatReachedTheEndpointsParksOnceAnswered() async throws {
        let connection = try await Connection()
        try connection.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        while try connection.channel.readInbound(as: HTTPServerRequestPart.self) != nil {}
        connection.wait(.seconds(1))
        #expect(connection.hasHandlers, "parked with the answer outstanding")
        try connection.channel.writeOutbound(HTTPServerResponsePart.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: ["content-length": "0"])))
        try connection.channel.writeOutbound(HTTPServerResponsePart.end(nil))
        try connection.getAnswered()
        connection.wait(ConnectionParking.delay)
        #expect(!connection.hasHandlers)
    }

    @Test func aParkedConnectionClosesWhenTheClientStopsSending() async throws {
        let connection = try await Connection()
        try connection.getAnswered()
        connection.wait(ConnectionParking.delay)
        #expect(!connection.hasHandlers)
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(!connection.channel.isActive)
    }

    /// The listener drains: a parked connection gets its handlers back and is drained like an
    /// idle one, so a request its client sends within the grace is answered (with a close).
    @Test func aParkedConnectionWakesForTheDrain() async throws {
        let connection = try await Connection()
        try connection.getAnswered()
        _ = try connection.written()
        connection.wait(ConnectionParking.delay)
        #expect(!connection.hasHandlers)
        connection.channel.pipeline.fireUserInboundEventTriggered(ChannelShouldQuiesceEvent())
        #expect(connection.hasHandlers)
        #expect(connection.channel.isActive)
        connection.wait(.milliseconds(500))
        try connection.getAnswered("/proxied/late")
        #expect(try connection.written().contains("connection: close\r\n"))
    }

    /// A connection that closes while parked leaves only a stale entry, dropped at its deadline;
    /// neither keeps the connection's handlers.
    @Test func aConnectionClosedWhileParkedLeavesNothingBehind() async throws {
        weak var watcher: RequestStartWatcher?
        let lots = try await {
            let connection = try await Connection(idleTimeout: .seconds(2))
            try connection.getAnswered()
            connection.wait(ConnectionParking.delay)
            watcher = try connection.watcher
            try await connection.channel.close()
            #expect(connection.handlers.lots.lot(on: connection.channel.embeddedEventLoop, handlers: connection.handlers).count == 1)
            connection.wait(.seconds(3))
            connection.handlers.source.exchanges.removeAll()  // the test's exchanges hold the old handler
            return connection.handlers.lots.lot(on: connection.channel.embeddedEventLoop, handlers: connection.handlers)
        }()
        #expect(lots.count == 0)
        #expect(watcher == nil, "the watcher outlived its parked connection")
    }
}

/// ``TransientReadBuffers``: what NIO's read-buffer pool is told, so that it keeps no buffer
/// but the first, small one.
@Suite("Read buffers kept by no idle connection")
struct TransientReadBuffersTests {
    @Test func theFirstReadIsSmallAndThePoolIsNeverOfferedABufferToKeep() {
        var buffers = TransientReadBuffers()
        let allocator = ByteBufferAllocator()
        #expect(buffers.buffer(allocator: allocator).capacity == TransientReadBuffers.firstReadBytes)
        #expect(buffers.nextBufferSize() == nil, "a size lets NIO's pool reuse, and so keep, a buffer")
        var mayGrow = buffers.record(actualReadBytes: TransientReadBuffers.firstReadBytes)
        #expect(mayGrow)
        #expect(buffers.buffer(allocator: allocator).capacity >= 2048)
        // Small reads never tell the pool the next buffer will not grow: it would reuse its own.
        for _ in 0..<10 {
            mayGrow = buffers.record(actualReadBytes: 10)
            #expect(mayGrow)
        }
        #expect(buffers.buffer(allocator: allocator).capacity >= 1024)
        for _ in 0..<10 { _ = buffers.record(actualReadBytes: 70_000) }
        #expect(buffers.buffer(allocator: allocator).capacity >= 65536)
    }
}
