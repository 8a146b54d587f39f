#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

import Synchronization

/// Free TCP ports on 127.0.0.1 for the servers a test starts.
public enum LoopbackPort {
    /// Every port handed out in this process. Tests run in parallel and restart servers on
    /// their port; without this, a port freed by a stopped server could be handed to another
    /// test's server, and the restarted one would find a stranger in its place.
    private static let handedOut = Mutex(Set<Int>())

    /// Where the ports come from: below Linux's ephemeral range (32768-60999), from which the
    /// kernel picks the local port of every outgoing connection. A port taken from that range
    /// and freed until the server binds it could meanwhile become the source port of some
    /// client's connection (thousands of them while other tests and benchmarks run), and the
    /// server would then fail to start. Test processes running side by side start at random
    /// places in the range, and a port is only handed out after a bind to it succeeded.
    private static let range = 15_000..<32_768

    /// The next port to try: a random start per process, then upward (wrapping).
    private static let next = Mutex(Int.random(in: range))

    /// A port nobody holds and no other test of this process was given.
    public static func free() -> Int {
        while true {
            let port = next.withLock { next -> Int in
                let port = next
                next = next + 1 < range.upperBound ? next + 1 : range.lowerBound
                return port
            }
            guard canBind(port) else { continue }
            let isNew = handedOut.withLock { $0.insert(port).inserted }
            if isNew { return port }
        }
    }

    /// Whether nobody holds `port` on 127.0.0.1: bind to it, then close.
    private static func canBind(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        precondition(fd >= 0, "socket() failed")
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` right now.
    public static func isAccepting(_ port: Int) -> Bool {
        guard let fd = try? connect(port) else { return false }
        close(fd)
        return true
    }

    /// A blocking TCP socket connected to 127.0.0.1:`port`, whose reads give up after
    /// `readTimeout` seconds when one is given. The caller closes it.
    public static func connect(_ port: Int, readTimeout: Int? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError(what: "socket", code: errno) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            close(fd)
            throw SocketError(what: "connect", code: code)
        }
        if let readTimeout {
            var timeout = timeval(tv_sec: readTimeout, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
        return fd
    }

    public struct SocketError: Error {
        public let what: String
        public let code: Int32
        public init(what: String, code: Int32) {
            self.what = what
            self.code = code
        }
    }
}

#if canImport(Glibc)
private let systemConnect = Glibc.connect
#elseif canImport(Darwin)
private let systemConnect = Darwin.connect
#endif
