import Foundation

/// An edge the gateway does not replace, in front of an upstream with the gateway's
/// authorization listener as its authorizer, configured with docs/edges.md's block for it
/// exactly as written, only its addresses replaced (`scripts/lib/edge-config.py`): what the
/// document tells operators to run is what is tested. One process, its files in a
/// ``TemporaryFolder``.
public final class ForwardAuthEdge: Sendable {
    /// The edges docs/edges.md gives a configuration the tests run.
    public enum Kind: String, CaseIterable, Sendable, CustomStringConvertible {
        /// Debian's nginx with `auth_request`.
        case nginx
        /// Debian's HAProxy with the `auth-request` Lua script (scripts/lib/haproxy).
        case haproxy

        public var description: String { rawValue }
    }

    public let kind: Kind
    public let port: Int
    private let process: ChildProcess
    private let folder: TemporaryFolder

    /// The repository, from this file's place in it.
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The edge on a free loopback port, asking the authorization listener on `authzPort` and
    /// passing allowed requests to `upstreamPort`.
    public init(_ kind: Kind, authzPort: Int, upstreamPort: Int) async throws {
        self.kind = kind
        let port = LoopbackPort.free()
        self.port = port
        folder = try TemporaryFolder("pg-\(kind)")
        let rendered = try await ShortCommand.run("/usr/bin/env", [
            "python3", Self.repository.appendingPathComponent("scripts/lib/edge-config.py").path, kind.rawValue,
            "--listen", "127.0.0.1:\(port)", "--authz", "127.0.0.1:\(authzPort)", "--app", "127.0.0.1:\(upstreamPort)",
        ])
        guard rendered.status == 0 else { throw EdgeFailed(kind: kind, log: rendered.stderr) }
        let folder = self.folder
        switch kind {
        case .nginx:
            try rendered.stdout.write(toFile: folder.path("edge.conf"), atomically: true, encoding: .utf8)
            let directory = folder.path
            let main = """
            daemon off;
            master_process off;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log warn;
            events { worker_connections 1024; }
            http {
                access_log \(directory)/access.log;
                client_body_temp_path \(directory)/body; proxy_temp_path \(directory)/proxy;
                fastcgi_temp_path \(directory)/fastcgi; uwsgi_temp_path \(directory)/uwsgi; scgi_temp_path \(directory)/scgi;
                include \(directory)/edge.conf;
            }
            """
            try main.write(toFile: folder.path("nginx.conf"), atomically: true, encoding: .utf8)
            process = try ChildProcess(
                "/usr/sbin/nginx", ["-c", folder.path("nginx.conf"), "-e", folder.path("error.log")], outputPath: folder.path("output.log")
            )
        case .haproxy:
            // The block is a whole haproxy.cfg; -db keeps HAProxy in the foreground, its alerts on stderr.
            try rendered.stdout.write(toFile: folder.path("haproxy.cfg"), atomically: true, encoding: .utf8)
            process = try ChildProcess("/usr/sbin/haproxy", ["-db", "-f", folder.path("haproxy.cfg")], outputPath: folder.path("error.log"))
        }
        let process = self.process
        try await eventually(timeout: .seconds(10)) {
            guard process.isRunning else {
                throw EdgeFailed(kind: kind, log: (try? String(contentsOfFile: folder.path("error.log"), encoding: .utf8)) ?? "")
            }
            return LoopbackPort.isAccepting(port)
        }
    }

    deinit {
        process.kill9()
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The edge's error log (nginx logs every refusal other than 401 and 403 there as an "auth
    /// request unexpected status").
    public var errorLog: String {
        (try? String(contentsOfFile: folder.path("error.log"), encoding: .utf8)) ?? ""
    }

    public struct EdgeFailed: Error, CustomStringConvertible {
        public let kind: Kind
        public let log: String
        public var description: String { "\(kind) did not start (apt-get install: scripts/install-deps.sh):\n\(log)" }
    }
}
