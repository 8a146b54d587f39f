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

    /// A port nobody holds and no other test of this process was given.
    public static func free() -> Int {
        while true {
            let port = kernelChosenPort()
            let isNew = handedOut.withLock { $0.insert(port).inserted }
            if isNew { return port }
        }
    }

    /// A port the kernel just handed out and nobody holds: bind to port 0, read it, close.
    private static func kernelChosenPort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        precondition(fd >= 0, "socket() failed")
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress -> Int32 in
                guard bind(fd, socketAddress, length) == 0 else { return -1 }
                return getsockname(fd, socketAddress, &length)
            }
        }
        precondition(bound == 0, "bind() failed")
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` right now.
    public static func isAccepting(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
