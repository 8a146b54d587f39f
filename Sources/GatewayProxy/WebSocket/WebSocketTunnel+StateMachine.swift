import GatewayEdge

extension WebSocketTunnel {
    /// An end of a tunnel.
    package enum Side: Equatable, Sendable {
        case client
        case upstream

        package var other: Side { self == .client ? .upstream : .client }
    }

    /// What an upgraded connection does with what it reads, decided without I/O; every input
    /// is tried in every state in `WebSocketTunnelStateMachineTests`. The rules:
    /// - open, every byte read from one side goes to the other as it is: frames are forwarded,
    ///   not decoded, so the client's stay masked and the upstream's unmasked as RFC 6455 wants;
    /// - the gateway closes (a credential ended, shutdown, silence) by sending each side a close
    ///   frame of its own with one code, between two frames of that direction: at once when the
    ///   direction is at a frame's end, else right after the frame under way, whose remaining
    ///   bytes still go; nothing after it is forwarded;
    /// - the tunnel ends once (a side closed, the close frames' grace ran out): both
    ///   connections close, and nothing more is read.
    ///
    /// A read after the end is an ``IllegalInputCheck`` (the handlers are detached then):
    /// debug builds stop; release builds forward nothing.
    package struct StateMachine {
        package enum State: Equatable {
            /// Each direction's frames followed, to know where the next one starts.
            case open(fromClient: WebSocketFrameBoundary, fromUpstream: WebSocketFrameBoundary)
            /// The gateway's close frames carry `code`; each direction is named by the side
            /// its bytes come from.
            case closing(code: UInt16, fromClient: Direction, fromUpstream: Direction)
            /// Both connections are closing: nothing more goes either way.
            case ended
        }

        /// A direction of a closing tunnel.
        package enum Direction: Equatable {
            /// Its receiver still waits for the gateway's close frame: the frame under way goes
            /// first.
            case finishingFrame(WebSocketFrameBoundary)
            /// Its receiver has the gateway's close frame: nothing more goes to it.
            case closeSent
        }

        /// What to do with bytes read from a side.
        package struct Forward: Equatable {
            /// How many of the bytes go to the other side; the rest are dropped.
            package var count: Int
            /// Then send the other side the gateway's close frame with this code.
            package var thenClose: UInt16?

            static let nothing = Forward(count: 0, thenClose: nil)
        }

        package enum EndAction: Equatable {
            /// Close both connections after what was written to them, and stop the timers.
            case closeConnections
            /// Ended already.
            case none
        }

        package private(set) var state = State.open(fromClient: WebSocketFrameBoundary(), fromUpstream: WebSocketFrameBoundary())
        private var check: IllegalInputCheck

        package init(check: IllegalInputCheck = .asserting) {
            self.check = check
        }

        /// Illegal inputs seen (a ``IllegalInputCheck/counting`` machine's).
        package var illegalInputs: Int { check.count }

        /// Both sides have the gateway's close frame.
        package var closeFramesSent: Bool {
            switch state {
            case .closing(_, .closeSent, .closeSent): true
            case .open, .closing, .ended: false
            }
        }

        package var hasEnded: Bool {
            switch state {
            case .ended: true
            case .open, .closing: false
            }
        }

        /// `bytes` were read from `side`. Illegal once ended: nothing forwarded.
        package mutating func read(from side: Side, _ bytes: UnsafeRawBufferPointer) -> Forward {
            switch state {
            case .open(var fromClient, var fromUpstream):
                switch side {
                case .client: _ = fromClient.scan(bytes, stopAtBoundary: false)
                case .upstream: _ = fromUpstream.scan(bytes, stopAtBoundary: false)
                }
                state = .open(fromClient: fromClient, fromUpstream: fromUpstream)
                return Forward(count: bytes.count, thenClose: nil)
            case .closing(let code, var fromClient, var fromUpstream):
                let forward: Forward
                switch side {
                case .client: forward = Self.finish(&fromClient, bytes, code: code)
                case .upstream: forward = Self.finish(&fromUpstream, bytes, code: code)
                }
                state = .closing(code: code, fromClient: fromClient, fromUpstream: fromUpstream)
                return forward
            case .ended:
                check.illegal("WebSocket tunnel: a read after the end")
                return .nothing
            }
        }

        /// The gateway closes with `code`: the sides to send the close frame now (those whose
        /// incoming direction is between frames). Only the first close counts; after the end,
        /// nothing is sent.
        package mutating func close(code: UInt16) -> [Side] {
            switch state {
            case .open(let fromClient, let fromUpstream):
                let toUpstream = fromClient.isAtBoundary
                let toClient = fromUpstream.isAtBoundary
                state = .closing(
                    code: code, fromClient: toUpstream ? .closeSent : .finishingFrame(fromClient),
                    fromUpstream: toClient ? .closeSent : .finishingFrame(fromUpstream)
                )
                switch (toClient, toUpstream) {
                case (true, true): return [.client, .upstream]
                case (true, false): return [.client]
                case (false, true): return [.upstream]
                case (false, false): return []
                }
            case .closing, .ended:
                return []
            }
        }

        /// A side's connection closed, the close frames' grace ran out, or a handler was not in
        /// its pipeline at the start: the tunnel ends, once.
        package mutating func end() -> EndAction {
            switch state {
            case .open, .closing:
                state = .ended
                return .closeConnections
            case .ended:
                return .none
            }
        }

        /// The bytes of a closing direction: the rest of the frame under way, then the close frame.
        private static func finish(_ direction: inout Direction, _ bytes: UnsafeRawBufferPointer, code: UInt16) -> Forward {
            switch direction {
            case .finishingFrame(var boundary):
                let count = boundary.scan(bytes, stopAtBoundary: true)
                guard boundary.isAtBoundary else {
                    direction = .finishingFrame(boundary)
                    return Forward(count: count, thenClose: nil)
                }
                direction = .closeSent
                return Forward(count: count, thenClose: code)
            case .closeSent:
                return .nothing
            }
        }
    }
}
