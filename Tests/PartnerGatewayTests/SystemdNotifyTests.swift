import Foundation
@testable import PartnerGateway
import Testing
import TestSupport

/// ``SystemdNotify``: the datagram systemd's `Type=notify` waits for, on the socket
/// `NOTIFY_SOCKET` names; nothing without it.
@Suite("sd_notify")
struct SystemdNotifyTests {
    @Test func readyReachesTheNotifySocket() throws {
        let folder = try TemporaryFolder("pg-notify")
        let path = folder.path("notify")
        let receiver = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(receiver >= 0)
        defer { close(receiver) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { sunPath in
            for (index, byte) in path.utf8.enumerated() { sunPath[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(receiver, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(receiver, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        SystemdNotify.send("READY=1", environment: ["NOTIFY_SOCKET": path])
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = recv(receiver, &buffer, buffer.count, 0)
        #expect(count > 0)
        #expect(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self) == "READY=1")

        // Without the variable, nothing is sent and nothing fails.
        SystemdNotify.send("READY=1", environment: [:])
    }
}
