import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// A blocking socket client run on a Dispatch thread (never on the cooperative pool).
public enum RawClient {
    public struct Reply: Sendable {
        public let text: String
        /// The server closed the connection (read returned 0 or reset) before `readTimeout`.
        public let closed: Bool
        public var status: Int? {
            guard text.hasPrefix("HTTP/1.1 ") else { return nil }
            return Int(text.dropFirst(9).prefix(3))
        }
        public var body: String {
            guard let range = text.range(of: "\r\n\r\n") else { return "" }
            return String(text[range.upperBound...])
        }
    }

    public struct SocketError: Error { public let what: String; public let code: Int32 }

    /// A blocking TCP socket connected to 127.0.0.1:`port` whose reads give up after
    /// `readTimeout` seconds. The caller closes it.
    public static func connectedSocket(port: Int, readTimeout: Int) throws -> Int32 {
        try LoopbackPort.connect(port, readTimeout: readTimeout)
    }

    public static func exchange(port: Int, send request: String, readTimeout: Int = 5) async throws -> Reply {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try blockingExchange(port: port, request: request, readTimeout: readTimeout) })
            }
        }
    }

    private static func blockingExchange(port: Int, request: String, readTimeout: Int) throws -> Reply {
        let fd = try connectedSocket(port: port, readTimeout: readTimeout)
        defer { close(fd) }
        // The server may close early (e.g. oversized headers): read what it said regardless.
        _ = sendAll(fd, request)
        return readUntilClosed(fd)
    }

    /// Sends all of `text`; "sent", or why it could not.
    public static func sendAll(_ fd: Int32, _ text: String) -> String {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return String(cString: strerror(errno)) }
            sent += n
        }
        return "sent"
    }

    /// Everything the server sends until it closes the connection (or the read times out).
    public static func readUntilClosed(_ fd: Int32) -> Reply {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var closed = false
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { received.append(contentsOf: buffer[0..<n]); continue }
            if n == 0 || errno == ECONNRESET { closed = true }
            break
        }
        return Reply(text: String(decoding: received, as: UTF8.self), closed: closed)
    }

    /// Reads responses framed by `Content-Length` one at a time from a blocking socket.
    public struct ResponseReader {
        public let fd: Int32
        private var buffered: [UInt8] = []

        public init(fd: Int32) {
            self.fd = fd
        }

        /// The next whole response (head and body as text), or nil when the connection closed
        /// or the read timed out first.
        public mutating func next() -> String? {
            while true {
                if let length = completeLength() {
                    let answer = String(decoding: buffered[0..<length], as: UTF8.self)
                    buffered.removeFirst(length)
                    return answer
                }
                var chunk = [UInt8](repeating: 0, count: 64 * 1024)
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { return nil }
                buffered.append(contentsOf: chunk[0..<n])
            }
        }

        /// The byte length of the first response when all of it is buffered.
        private func completeLength() -> Int? {
            let separator: [UInt8] = Array("\r\n\r\n".utf8)
            guard buffered.count >= 4,
                  let headEnd = (0...(buffered.count - 4)).first(where: { buffered[$0..<($0 + 4)].elementsEqual(separator) })
            else { return nil }
            let head = String(decoding: buffered[0..<headEnd], as: UTF8.self).lowercased()
            let length = head.split(separator: "\r\n")
                .first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            let total = headEnd + 4 + length
            return buffered.count >= total ? total : nil
        }
    }
}
