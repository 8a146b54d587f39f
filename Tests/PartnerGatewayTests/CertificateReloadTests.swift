import Foundation
import Testing
import TestSupport

/// A certificate replaced on disk reaches new connections without a restart, while a
/// connection opened before finishes on the certificate it started with; a replacement that
/// does not load leaves the previous one in service.
@Suite("TLS: certificate reload", .serialized, .realProcesses)
struct CertificateReloadTests {
    @Test func newConnectionsGetTheNewCertificateWhileAnOpenOneFinishes() async throws {
        let certificates = try await TestCertificates()
        let first = try await certificates.issue("first")
        let second = try await certificates.issue("second")
        // The gateway reads its own copy, which the test then replaces by renaming over it.
        let served = TestCertificates.Issued(certFile: certificates.directory + "/served.pem", keyFile: certificates.directory + "/served.key")
        try FileManager.default.copyItem(atPath: first.certFile, toPath: served.certFile)
        try FileManager.default.copyItem(atPath: first.keyFile, toPath: served.keyFile)
        let redis = try await RedisServer()
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            tls: {cert_file: \(served.certFile), key_file: \(served.keyFile)}
            routes:
              - {name: open, path_prefix: /open, upstream: \(upstream.url), auth: none}
            """))

        let output = try await Self.python(["swap", String(gateway.port), certificates.caFile, second.certFile, second.keyFile, served.certFile, served.keyFile])
        let result = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
        #expect(result["old_connection"] as? String == "first")
        #expect(result["new_connection"] as? String == "second")
        // The slow request under way on the old connection was answered after the swap, and
        // the connection still served another request.
        #expect(result["old_response_after_swap"] as? Bool == true, "\(output)")
        #expect(result["old_status"] as? Int == 200, "\(output)")
        #expect(result["old_again_status"] as? Int == 200, "\(output)")
        #expect(gateway.log.contains("tls certificate reloaded"))

        // A broken replacement: one log line, and the second certificate stays in service. The
        // swap above may have logged one already: a check that ran between its two renames saw
        // the new key beside the old certificate (docs/tls.md).
        let before = Self.failures(gateway.log)
        try "not a certificate\n".write(toFile: served.certFile, atomically: true, encoding: .utf8)
        try await eventually(timeout: .seconds(10)) { Self.failures(gateway.log).count > before.count }
        let probe = try await Self.python(["probe", String(gateway.port), certificates.caFile])
        #expect(probe.split(separator: "\n").first == "second")
        let after = Self.failures(gateway.log)
        #expect(after.count == before.count + 1, "\(after)")
        #expect(after.last?.contains("failedToLoadCertificate") == true, "\(after)")
        #expect(gateway.process.isRunning)
    }

    /// A mounted Kubernetes secret: the configured paths are links through `..data`, which an
    /// update swaps to a new folder, so the links themselves never change.
    @Test func aSymlinkSwapOfAMountedSecretReachesNewConnections() async throws {
        let certificates = try await TestCertificates()
        let manager = FileManager.default
        let mount = certificates.directory + "/mount"
        for (version, issued) in [("..2026_1", try await certificates.issue("first")), ("..2026_2", try await certificates.issue("second"))] {
            try manager.createDirectory(atPath: "\(mount)/\(version)", withIntermediateDirectories: true)
            try manager.copyItem(atPath: issued.certFile, toPath: "\(mount)/\(version)/tls.crt")
            try manager.copyItem(atPath: issued.keyFile, toPath: "\(mount)/\(version)/tls.key")
        }
        try manager.createSymbolicLink(atPath: "\(mount)/..data", withDestinationPath: "..2026_1")
        for name in ["tls.crt", "tls.key"] {
            try manager.createSymbolicLink(atPath: "\(mount)/\(name)", withDestinationPath: "..data/\(name)")
        }
        let redis = try await RedisServer()
        let gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: """
            tls: {cert_file: \(mount)/tls.crt, key_file: \(mount)/tls.key}
            """))
        #expect(try await Self.python(["probe", String(gateway.port), certificates.caFile]).hasPrefix("first"))

        try manager.createSymbolicLink(atPath: "\(mount)/..data_tmp", withDestinationPath: "..2026_2")
        #expect(rename("\(mount)/..data_tmp", "\(mount)/..data") == 0)
        try await eventually(timeout: .seconds(10)) {
            try await Self.python(["probe", String(gateway.port), certificates.caFile]).hasPrefix("second")
        }
        #expect(gateway.log.contains("tls certificate reloaded"))
        #expect(!gateway.log.contains("tls certificate not reloaded"), "one swap, both files at once")
    }

    private static func failures(_ log: String) -> [Substring] {
        log.split(separator: "\n").filter { $0.contains("tls certificate not reloaded") }
    }

    private static func python(_ arguments: [String]) async throws -> String {
        let result = try await ShortCommand.run("/usr/bin/env", ["python3", "-c", script] + arguments)
        guard result.status == 0 else { throw PythonFailed(stderr: result.stderr + result.stdout) }
        return result.stdout
    }

    struct PythonFailed: Error, CustomStringConvertible {
        let stderr: String
        var description: String { "python3 failed: \(stderr)" }
    }

    /// `swap PORT CA NEW_CERT NEW_KEY CERT KEY`: opens a connection and starts a slow request
    /// on it, renames the new certificate over the served one, waits until a new connection
    /// is shown it, then finishes the slow request and sends one more on the old connection.
    /// `probe PORT CA`: the common name a new connection is shown.
    private static let script = #"""
    import json, os, shutil, socket, ssl, sys, time

    def connect(port, ca):
        context = ssl.create_default_context(cafile=ca)
        context.set_alpn_protocols(["http/1.1"])
        return context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="127.0.0.1")

    def common_name(connection):
        return dict(pair[0] for pair in connection.getpeercert()["subject"])["commonName"]

    def response(connection):
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = connection.recv(65536)
            if not chunk: raise SystemExit("connection closed before a response head")
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        length = next(int(l.split(":", 1)[1]) for l in lines if l.lower().startswith("content-length:"))
        while len(body) < length:
            body += connection.recv(65536)
        return int(lines[0].split(" ")[1])

    def replace(source, target):
        shutil.copyfile(source, target + ".new")
        os.replace(target + ".new", target)

    mode, port, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if mode == "probe":
        probe = connect(port, ca)
        print(common_name(probe))
        raise SystemExit(0)
    new_cert, new_key, cert, key = sys.argv[4:8]
    old = connect(port, ca)
    result = {"old_connection": common_name(old)}
    old.sendall(b"GET /open/slow?delay_ms=3000 HTTP/1.1\r\nHost: gateway\r\n\r\n")
    replace(new_key, key)
    replace(new_cert, cert)
    deadline = time.monotonic() + 15
    while True:
        probe = connect(port, ca)
        name = common_name(probe)
        probe.close()
        if name != result["old_connection"] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    result["new_connection"] = name
    result["old_status"] = response(old)
    result["old_response_after_swap"] = name != result["old_connection"]
    old.sendall(b"GET /open/again HTTP/1.1\r\nHost: gateway\r\nConnection: close\r\n\r\n")
    result["old_again_status"] = response(old)
    print(json.dumps(result))
    """#
}
