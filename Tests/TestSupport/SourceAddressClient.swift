import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 request to a gateway on 127.0.0.1 from a chosen loopback source address
/// (`127.0.0.2`): what an allowlist sees as the caller. Blocking socket calls run on a Dispatch
/// thread, never on the cooperative pool.
public enum SourceAddressClient {
    public struct Reply: Sendable {
        public let status: Int
        public let text: String
    }

    public static func get(port: Int, path: String, key: String, from source: String) async throws -> Reply {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try blockingGet(port: port, path: path, key: key, from: source) })
            }
        }
    }

    public struct SocketFailure: Error {
        public let what: String
        public let code: Int32
    }

    private static func blockingGet(port: Int, path: String, key: String, from source: String) throws -> Reply {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketFailure(what: "socket", code: errno) }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw SocketFailure(what: "bind", code: errno) }
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = in_port_t(UInt16(port).bigEndian)
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw SocketFailure(what: "connect", code: errno) }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: gateway\r\nX-API-Key: \(key)\r\nConnection: close\r\n\r\n".utf8)
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw SocketFailure(what: "send", code: errno) }
            sent += n
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        let text = String(decoding: received, as: UTF8.self)
        let statusLine = text.split(separator: "\r\n", maxSplits: 1).first ?? ""
        let parts = statusLine.split(separator: " ")
        return Reply(status: parts.count > 1 ? Int(parts[1]) ?? 0 : 0, text: text)
    }
}
