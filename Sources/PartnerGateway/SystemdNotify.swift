import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// systemd's readiness protocol (sd_notify(3)): one datagram of `KEY=VALUE` lines to the Unix
/// socket named by `NOTIFY_SOCKET`, which a `Type=notify` unit sets. Without it, nothing is sent.
enum SystemdNotify {
    static func send(_ message: String, environment: [String: String] = ProcessInfo.processInfo.environment) {
        #if os(Linux)
        guard var path = environment["NOTIFY_SOCKET"], !path.isEmpty else { return }
        // A leading `@` names an abstract socket: a NUL byte in the address.
        let abstract = path.hasPrefix("@")
        if abstract { path.removeFirst() }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let offset = abstract ? 1 : 0
        guard bytes.count + offset < MemoryLayout.size(ofValue: address.sun_path) else { return }
        withUnsafeMutableBytes(of: &address.sun_path) { sunPath in
            for (index, byte) in bytes.enumerated() { sunPath[index + offset] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + offset + bytes.count + (abstract ? 0 : 1))
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let payload = Array(message.utf8)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                sendto(descriptor, payload, payload.count, Int32(MSG_NOSIGNAL), socketAddress, length)
            }
        }
        #endif
    }
}
