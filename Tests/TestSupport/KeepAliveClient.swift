import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// One keep-alive connection to a gateway, for tests that must send several requests on the
/// same connection with other steps in between (what the gateway remembers per connection).
/// Blocking socket calls run on a Dispatch thread, never on the cooperative pool.
public final class KeepAliveClient: @unchecked Sendable {
    private let fd: Int32
    private var reader: RawClient.ResponseReader
    private let queue = DispatchQueue(label: "keep-alive-client")

    public init(port: Int) throws {
        fd = try RawClient.connectedSocket(port: port, readTimeout: 10)
        reader = RawClient.ResponseReader(fd: fd)
    }

    /// Sends `request` and returns the whole response (empty when the connection closed).
    public func send(_ request: String) async -> String {
        await withCheckedContinuation { continuation in
            queue.async {
                _ = RawClient.sendAll(self.fd, request)
                continuation.resume(returning: self.reader.next() ?? "")
            }
        }
    }

    public func close() {
        queue.sync { _ = Glibc.close(fd) }
    }
}
