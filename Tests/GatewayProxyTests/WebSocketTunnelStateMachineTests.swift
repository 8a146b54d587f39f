import NIOCore
import NIOHTTP1
@testable import GatewayEdge
@testable import GatewayProxy
import Testing

/// The upgraded phase without sockets: which handshakes upgrade, frame boundaries, the
/// gateway's close frames between frames, the `101` in the exchange's machine and the
/// connection's, and `stream_idle_timeout` on a test clock.
@Suite("Proxy: WebSocket tunnels (in memory)")
struct WebSocketTunnelStateMachineTests {
    typealias Tunnel = WebSocketTunnel.StateMachine

    /// A frame's bytes: `masked` as a client sends it (the key is fixed; only lengths matter here).
    static func frame(opcode: UInt8 = 1, length: Int, masked: Bool) -> [UInt8] {
        var bytes: [UInt8] = [0x80 | opcode]
        let bit: UInt8 = masked ? 0x80 : 0
        if length < 126 {
            bytes.append(bit | UInt8(length))
        } else if length < 65536 {
            bytes += [bit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            bytes.append(bit | 127)
            bytes += (0..<8).reversed().map { UInt8((length >> ($0 * 8)) & 0xFF) }
        }
        if masked { bytes += [1, 2, 3, 4] }
        return bytes + [UInt8](repeating: 0x61, count: length)
    }

    @Test(arguments: [0, 5, 125, 126, 65535, 65536, 70000])
    func boundariesAreFoundWhateverTheLengthAndHoweverTheBytesAreSplit(length: Int) {
        for masked in [false, true] {
            let bytes = Self.frame(length: length, masked: masked) + Self.frame(opcode: 9, length: 3, masked: masked)
            let first = Self.frame(length: length, masked: masked).count
            for split in [1, 2, 3, 7, 1000] {
                var boundary = WebSocketFrameBoundary()
                var offset = 0
                var ends: [Int] = []
                while offset < bytes.count {
                    let piece = Array(bytes[offset..<min(offset + split, bytes.count)])
                    var index = 0
                    while index < piece.count {
                        piece.withUnsafeBytes { raw in
                            let rest = UnsafeRawBufferPointer(rebasing: raw[index...])
                            var count = boundary.scan(rest, stopAtBoundary: true)
                            // At a boundary already: the next frame's first byte.
                            if count == 0 { count = boundary.scan(UnsafeRawBufferPointer(rebasing: rest[..<1]), stopAtBoundary: false) }
                            index += count
                        }
                        if boundary.isAtBoundary { ends.append(offset + index) }
                    }
                    offset += piece.count
                }
                #expect(Set(ends) == [first, bytes.count], "length \(length) masked \(masked) split \(split): \(ends)")
            }
        }
    }

    @Test func openTunnelsForwardEverything() {
        var tunnel = Tunnel()
        let bytes = Self.frame(length: 10, masked: true)
        let forward = bytes.withUnsafeBytes { tunnel.read(from: .client, UnsafeRawBufferPointer(rebasing: $0[..<4])) }
        #expect(forward == .init(count: 4, thenClose: nil))
    }

    @Test func closingBetweenFramesSendsBothCloseFramesAtOnce() {
        var tunnel = Tunnel()
        let bytes = Self.frame(length: 10, masked: true)
        _ = bytes.withUnsafeBytes { tunnel.read(from: .client, $0) }
        #expect(tunnel.close(code: 1008) == [.client, .upstream])
        #expect(tunnel.closeFramesSent)
        #expect(tunnel.close(code: 1001) == [], "only the first close counts")
        // Whatever arrives afterwards goes nowhere.
        let after = bytes.withUnsafeBytes { tunnel.read(from: .client, $0) }
        #expect(after == .init(count: 0, thenClose: nil))
    }

    @Test func closingMidFrameLetsThatFrameFinishThenCloses() {
        var tunnel = Tunnel()
        let upstreamFrame = Self.frame(length: 300, masked: false)
        _ = upstreamFrame.withUnsafeBytes { tunnel.read(from: .upstream, UnsafeRawBufferPointer(rebasing: $0[..<100])) }
        // The client-bound direction is mid-frame; the upstream-bound one is between frames.
        #expect(tunnel.close(code: 1008) == [.upstream])
        #expect(!tunnel.closeFramesSent)
        // The rest of the frame goes, then the close; the next frame does not.
        let rest = Array(upstreamFrame[100...]) + Self.frame(length: 5, masked: false)
        let forward = rest.withUnsafeBytes { tunnel.read(from: .upstream, $0) }
        #expect(forward == .init(count: upstreamFrame.count - 100, thenClose: 1008))
        #expect(tunnel.closeFramesSent)
    }

    @Test func closeFramesAreMaskedTowardTheUpstreamOnly() {
        let plain = WebSocketTunnel.closeFrame(code: 1008, masked: false, allocator: ByteBufferAllocator())
        #expect(Array(plain.readableBytesView) == [0x88, 0x02, 0x03, 0xF0])
        let masked = WebSocketTunnel.closeFrame(code: 1008, masked: true, allocator: ByteBufferAllocator())
        let bytes = Array(masked.readableBytesView)
        #expect(bytes.count == 8 && bytes[0] == 0x88 && bytes[1] == 0x82)
        #expect([bytes[6] ^ bytes[2], bytes[7] ^ bytes[3]] == [0x03, 0xF0])
    }

    // MARK: Handshakes

    static func head(_ fields: [(String, String)], method: HTTPMethod = .GET, version: HTTPVersion = .http1_1) -> HTTPRequestHead {
        HTTPRequestHead(version: version, method: method, uri: "/live", headers: HTTPHeaders(fields))
    }

    @Test func onlyAWebSocketHandshakeOnAWebSocketRouteUpgrades() {
        let websocket = [("Connection", "keep-alive, Upgrade"), ("Upgrade", "websocket")]
        #expect(WebSocketHandshake.of(Self.head(websocket), websocketRoute: true) == .websocket)
        #expect(WebSocketHandshake.of(Self.head([("Upgrade", "websocket")]), websocketRoute: true) == .none)
        #expect(WebSocketHandshake.of(Self.head([]), websocketRoute: false) == .none)
        for (head, route) in [
            (Self.head(websocket), false),
            (Self.head([("Connection", "Upgrade"), ("Upgrade", "h2c")]), true),
            (Self.head(websocket, method: .POST), true),
            (Self.head(websocket, version: .http1_0), true),
        ] {
            guard case .refused(let error) = WebSocketHandshake.of(head, websocketRoute: route) else {
                Issue.record("\(head) on a websocket route \(route) was not refused")
                continue
            }
            #expect(error.status.code == 400 && error.code == "INVALID_REQUEST")
        }
    }

    @Test func theExchangeUpgradesOnlyAHandshakeItWasAskedFor() {
        var asked = ProxyExchange.StateMachine(method: .GET, hasBody: false, maxBodyBytes: 100, upgrade: true)
        _ = asked.admitted(declaredLength: nil)
        _ = asked.picked(target: 0)
        _ = asked.connected(reused: false)
        _ = asked.headSent()
        #expect(asked.upstreamHead(status: 101) == .upgrade)
        #expect(asked.status == 101 && asked.isFinished)
        // The client going away now is the tunnel's business, not the exchange's.
        #expect(asked.clientClosed() == .none)

        var notAsked = ProxyExchange.StateMachine(method: .GET, hasBody: false, maxBodyBytes: 100)
        _ = notAsked.admitted(declaredLength: nil)
        _ = notAsked.picked(target: 0)
        _ = notAsked.connected(reused: false)
        _ = notAsked.headSent()
        guard case .fail(let error, _, _, _) = notAsked.upstreamHead(status: 101) else {
            Issue.record("an unasked-for 101 was not refused")
            return
        }
        #expect(error.status.code == 502)
    }

    @Test func theConnectionBecomesTheTunnelsOnlyForAProxiedRequestWithNothingBehindIt() {
        let now = NIODeadline.uptimeNanoseconds(0)
        var connection = HTTP1ConnectionHandler.StateMachine()
        _ = connection.headAdmitted(Self.head([("Connection", "Upgrade"), ("Upgrade", "websocket")]), now: now)
        _ = connection.endRead(nil, now: now)
        guard case .start = connection.next() else {
            Issue.record("the head was not started")
            return
        }
        _ = connection.assigned(.proxy)
        _ = connection.next()
        guard case .upgrade = connection.upgradeAnswered() else {
            Issue.record("the proxied request's connection did not become the tunnel's")
            return
        }
        #expect(connection.discardsInput)
        guard case .close = connection.upgradeAnswered() else {
            Issue.record("upgraded twice")
            return
        }

        var hummingbird = HTTP1ConnectionHandler.StateMachine()
        _ = hummingbird.headAdmitted(Self.head([]), now: now)
        _ = hummingbird.next()
        _ = hummingbird.assigned(.hummingbird)
        let endpointUpgraded: Bool
        if case .upgrade = hummingbird.upgradeAnswered() { endpointUpgraded = true } else { endpointUpgraded = false }
        #expect(!endpointUpgraded)
    }

    @Test func theTokenSubprotocolBecomesAuthorizationAndLeavesTheRealOneAlone() {
        let token = "header.claims.signature"
        let encoded = "aGVhZGVyLmNsYWltcy5zaWduYXR1cmU"  // base64url, no padding
        var head = Self.head([("Sec-WebSocket-Protocol", "rides.v1, \(WebSocketTokenProtocol.prefix)\(encoded)")])
        #expect(WebSocketTokenProtocol.apply(to: &head, bearerRoute: true) == nil)
        #expect(head.headers["authorization"] == ["Bearer \(token)"])
        #expect(head.headers["sec-websocket-protocol"] == ["rides.v1"])

        var untouched = Self.head([("Sec-WebSocket-Protocol", "rides.v1")])
        #expect(WebSocketTokenProtocol.apply(to: &untouched, bearerRoute: true) == nil)
        #expect(untouched.headers["authorization"].isEmpty)

        for (fields, bearer, code) in [
            ([("Sec-WebSocket-Protocol", "\(WebSocketTokenProtocol.prefix)\(encoded)")], true, "INVALID_REQUEST"),
            ([("Sec-WebSocket-Protocol", "a, \(WebSocketTokenProtocol.prefix)\(encoded)"), ("Authorization", "Bearer x")], true, "INVALID_REQUEST"),
            ([("Sec-WebSocket-Protocol", "a, \(WebSocketTokenProtocol.prefix)\(encoded)")], false, "INVALID_REQUEST"),
            ([("Sec-WebSocket-Protocol", "a, \(WebSocketTokenProtocol.prefix)***")], true, "INVALID_TOKEN"),
            ([("Sec-WebSocket-Protocol", "a, \(WebSocketTokenProtocol.prefix)")], true, "INVALID_TOKEN"),
        ] {
            var refused = Self.head(fields)
            #expect(WebSocketTokenProtocol.apply(to: &refused, bearerRoute: bearer)?.code == code, "\(fields)")
        }
    }

    // MARK: stream_idle_timeout

    @Test func silenceForTheWholeTimeoutClosesAndTrafficPushesTheDeadlineBack() {
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var idle = StreamIdleDeadline(timeout: .seconds(300), now: start)
        #expect(idle.firstDeadline == start + .seconds(300))
        // Traffic (a ping counts) at 200 s: the timer firing at 300 s looks again at 500 s.
        idle.activity(at: start + .seconds(200))
        #expect(idle.deadlinePassed(now: start + .seconds(300)) == .later(start + .seconds(500)))
        #expect(idle.deadlinePassed(now: start + .seconds(499)) == .later(start + .seconds(500)))
        #expect(idle.deadlinePassed(now: start + .seconds(500)) == .expired)
    }
}
