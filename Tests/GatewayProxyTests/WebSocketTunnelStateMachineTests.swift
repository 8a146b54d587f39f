import NIOCore
import NIOHTTP1
@testable import GatewayEdge
@testable import GatewayProxy
import Testing
import TestSupport

/// The upgraded phase without sockets: which handshakes upgrade, frame boundaries, the
/// tunnel's machine with every input in every state (illegal pairs, marked `✗`, tried on a
/// ``IllegalInputCheck/counting`` machine for the answer a release build gives), the
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

    // MARK: Every input in every state

    enum Input: String, StateMachineTableInput {
        /// A whole frame from the client (masked, 4 bytes of payload: 10 bytes).
        case client
        /// The first 4 of those 10 bytes.
        case clientStart
        /// A whole frame from the upstream (unmasked, 4 bytes of payload: 6 bytes).
        case upstream
        /// The first 4 of those 6 bytes.
        case upstreamStart
        case close, end

        static let clientFrame = WebSocketTunnelStateMachineTests.frame(length: 4, masked: true)
        static let upstreamFrame = WebSocketTunnelStateMachineTests.frame(length: 4, masked: false)

        func apply(to tunnel: inout Tunnel) -> String {
            switch self {
            case .client:
                return Self.describe(Self.clientFrame.withUnsafeBytes { tunnel.read(from: .client, $0) })
            case .clientStart:
                return Self.describe(Self.clientFrame.withUnsafeBytes { tunnel.read(from: .client, UnsafeRawBufferPointer(rebasing: $0[..<4])) })
            case .upstream:
                return Self.describe(Self.upstreamFrame.withUnsafeBytes { tunnel.read(from: .upstream, $0) })
            case .upstreamStart:
                return Self.describe(Self.upstreamFrame.withUnsafeBytes { tunnel.read(from: .upstream, UnsafeRawBufferPointer(rebasing: $0[..<4])) })
            case .close:
                let sides = tunnel.close(code: 1008)
                return sides.isEmpty ? "-" : "close " + sides.map { $0 == .client ? "client" : "upstream" }.joined(separator: "+")
            case .end:
                return tunnel.end() == .closeConnections ? "end" : "-"
            }
        }

        private static func describe(_ forward: Tunnel.Forward) -> String {
            if forward.count == 0, forward.thenClose == nil { return "-" }
            return "forward \(forward.count)" + (forward.thenClose == nil ? "" : ", close")
        }
    }

    /// Every state, each by a path of legal inputs: open with each direction between frames or
    /// not, closing with the client's, the upstream's or both frames still going, both close
    /// frames sent, and ended.
    static let states: [(name: String, path: [Input])] = [
        ("open", []),
        ("open, client mid-frame", [.clientStart]),
        ("open, upstream mid-frame", [.upstreamStart]),
        ("closing, client's frame", [.clientStart, .close]),
        ("closing, upstream's frame", [.upstreamStart, .close]),
        ("closing, both frames", [.clientStart, .upstreamStart, .close]),
        ("closed", [.close]),
        ("ended", [.end]),
    ]

    /// The state's kind, as the table names it.
    static func kind(_ state: Tunnel.State) -> String {
        switch state {
        case .open(let fromClient, let fromUpstream):
            switch (fromClient.isAtBoundary, fromUpstream.isAtBoundary) {
            case (true, true): "open"
            case (false, true): "open, client mid-frame"
            case (true, false): "open, upstream mid-frame"
            case (false, false): "open, both mid-frame"
            }
        case .closing(_, .closeSent, .closeSent): "closed"
        case .closing(_, .finishingFrame, .closeSent): "closing, client's frame"
        case .closing(_, .closeSent, .finishingFrame): "closing, upstream's frame"
        case .closing(_, .finishingFrame, .finishingFrame): "closing, both frames"
        case .ended: "ended"
        }
    }

    /// Per state, per input: "action → next state", `✗` first when the input is illegal there.
    static let table: [String: [Input: String]] = [
        "open": [
            .client: "forward 10 → open",
            .clientStart: "forward 4 → open, client mid-frame",
            .upstream: "forward 6 → open",
            .upstreamStart: "forward 4 → open, upstream mid-frame",
            .close: "close client+upstream → closed",
            .end: "end → ended",
        ],
        "open, client mid-frame": [
            .client: "forward 10 → open, client mid-frame",
            .clientStart: "forward 4 → open, client mid-frame",
            .upstream: "forward 6 → open, client mid-frame",
            .upstreamStart: "forward 4 → open, both mid-frame",
            .close: "close client → closing, client's frame",
            .end: "end → ended",
        ],
        "open, upstream mid-frame": [
            .client: "forward 10 → open, upstream mid-frame",
            .clientStart: "forward 4 → open, both mid-frame",
            .upstream: "forward 6 → open, upstream mid-frame",
            .upstreamStart: "forward 4 → open, upstream mid-frame",
            .close: "close upstream → closing, upstream's frame",
            .end: "end → ended",
        ],
        "closing, client's frame": [
            .client: "forward 6, close → closed",
            .clientStart: "forward 4 → closing, client's frame",
            .upstream: "- → closing, client's frame",
            .upstreamStart: "- → closing, client's frame",
            .close: "- → closing, client's frame",
            .end: "end → ended",
        ],
        "closing, upstream's frame": [
            .client: "- → closing, upstream's frame",
            .clientStart: "- → closing, upstream's frame",
            .upstream: "forward 2, close → closed",
            .upstreamStart: "forward 2, close → closed",
            .close: "- → closing, upstream's frame",
            .end: "end → ended",
        ],
        "closing, both frames": [
            .client: "forward 6, close → closing, upstream's frame",
            .clientStart: "forward 4 → closing, both frames",
            .upstream: "forward 2, close → closing, client's frame",
            .upstreamStart: "forward 2, close → closing, client's frame",
            .close: "- → closing, both frames",
            .end: "end → ended",
        ],
        "closed": [
            .client: "- → closed",
            .clientStart: "- → closed",
            .upstream: "- → closed",
            .upstreamStart: "- → closed",
            .close: "- → closed",
            .end: "end → ended",
        ],
        "ended": [
            .client: "✗ - → ended",
            .clientStart: "✗ - → ended",
            .upstream: "✗ - → ended",
            .upstreamStart: "✗ - → ended",
            .close: "- → ended",
            .end: "- → ended",
        ],
    ]

    /// 8 states × 6 inputs.
    @Test func everyInputInEveryStateIsDecided() {
        let pairs = StateMachineTable<Tunnel, Input>.check(
            Self.table, paths: Self.states, from: { Tunnel(check: .counting) }, illegalInputs: \.illegalInputs, kind: { Self.kind($0.state) }
        )
        #expect(pairs == 48)
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
        _ = connection.headAdmitted(ClientRequestHead(Self.head([("Connection", "Upgrade"), ("Upgrade", "websocket")])), now: now)
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
        _ = hummingbird.headAdmitted(ClientRequestHead(Self.head([])), now: now)
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
