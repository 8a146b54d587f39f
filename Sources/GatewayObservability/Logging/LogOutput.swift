import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Where log lines go: a file descriptor written with whole `write(2)` calls, one writer at a
/// time.
///
/// The log handler's lines and the access log's batches share standard error; the lock
/// keeps a line from landing inside a 64 KiB batch when the output is a pipe (where writes
/// above `PIPE_BUF` are not atomic).
package final class LogOutput: Sendable {
    private let descriptor: Mutex<Int32>

    package init(descriptor: Int32) {
        self.descriptor = Mutex(descriptor)
    }

    package static let standardError = LogOutput(descriptor: STDERR_FILENO)

    /// Writes all of `bytes`, retrying short writes and interruptions; an output that fails
    /// (closed, full disk) loses the bytes rather than stopping the gateway.
    package func write(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        descriptor.withLock { descriptor in
            bytes.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = Foundation.write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if written > 0 {
                        offset += written
                    } else if written < 0 && errno == EINTR {
                        continue
                    } else {
                        return
                    }
                }
            }
        }
    }
}
