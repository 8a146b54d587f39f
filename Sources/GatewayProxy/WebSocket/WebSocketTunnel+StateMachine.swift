extension WebSocketTunnel {
    /// An end of a tunnel.
    package enum Side: Equatable, Sendable {
        case client
        case upstream

        package var other: Side { self == .client ? .upstream : .client }
    }

    /// What an upgraded connection does with what it reads, decided without I/O
    /// (`WebSocketTunnelStateMachineTests`). The rules:
    /// - open, every byte read from one side goes to the other as it is: frames are forwarded,
    ///   not decoded, so the client's stay masked and the upstream's unmasked as RFC 6455 wants;
    /// - the gateway closes (a credential ended, shutdown, silence) by sending each side a close
    ///   frame of its own with one code, between two frames of that direction: at once when the
    ///   direction is at a frame's end, else right after the frame under way, whose remaining
    ///   bytes still go; nothing after it is forwarded.
    package struct StateMachine {
        package enum Phase: Equatable {
            case open
            /// The gateway's close frames carry `code`.
            case closing(code: UInt16)
        }

        /// What to do with bytes read from a side.
        package struct Forward: Equatable {
            /// How many of the bytes go to the other side; the rest are dropped.
            package var count: Int
            /// Then send the other side the gateway's close frame with this code.
            package var thenClose: UInt16?
        }

        package private(set) var phase = Phase.open
        private var fromClient = WebSocketFrameBoundary()
        private var fromUpstream = WebSocketFrameBoundary()
        private var closeSentToClient = false
        private var closeSentToUpstream = false

        package init() {}

        /// Both sides have the gateway's close frame.
        package var closeFramesSent: Bool { closeSentToClient && closeSentToUpstream }

        /// `bytes` were read from `side`.
        package mutating func read(from side: Side, _ bytes: UnsafeRawBufferPointer) -> Forward {
            switch phase {
            case .open:
                _ = scan(from: side, bytes, stopAtBoundary: false)
                return Forward(count: bytes.count, thenClose: nil)
            case .closing(let code):
                if closeSent(to: side.other) { return Forward(count: 0, thenClose: nil) }
                let count = scan(from: side, bytes, stopAtBoundary: true)
                guard boundary(from: side).isAtBoundary else { return Forward(count: count, thenClose: nil) }
                markCloseSent(to: side.other)
                return Forward(count: count, thenClose: code)
            }
        }

        /// The gateway closes with `code`: the sides to send the close frame now (those whose
        /// incoming direction is between frames). Only the first close counts.
        package mutating func close(code: UInt16) -> [Side] {
            guard phase == .open else { return [] }
            phase = .closing(code: code)
            var now: [Side] = []
            for side in [Side.client, .upstream] where boundary(from: side.other).isAtBoundary {
                markCloseSent(to: side)
                now.append(side)
            }
            return now
        }

        private func boundary(from side: Side) -> WebSocketFrameBoundary {
            side == .client ? fromClient : fromUpstream
        }

        private mutating func scan(from side: Side, _ bytes: UnsafeRawBufferPointer, stopAtBoundary: Bool) -> Int {
            switch side {
            case .client: fromClient.scan(bytes, stopAtBoundary: stopAtBoundary)
            case .upstream: fromUpstream.scan(bytes, stopAtBoundary: stopAtBoundary)
            }
        }

        private func closeSent(to side: Side) -> Bool {
            side == .client ? closeSentToClient : closeSentToUpstream
        }

        private mutating func markCloseSent(to side: Side) {
            if side == .client { closeSentToClient = true } else { closeSentToUpstream = true }
        }
    }
}
