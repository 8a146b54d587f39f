import Foundation

/// Debian's nginx in front of an upstream with the gateway as its authorizer, configured with
/// docs/edges.md's `auth_request` block exactly as written, only its three addresses replaced
/// (`scripts/lib/nginx-edge.py`): what the document tells operators to run is what is tested.
/// One process (`master_process off`), its files in a ``TemporaryFolder``.
public final class NginxEdge: Sendable {
    public let port: Int
    private let process: ChildProcess
    private let folder: TemporaryFolder

    /// The repository, from this file's place in it.
    public static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// nginx on a free loopback port, asking the authorization listener on `authzPort` and
    /// passing allowed requests to `upstreamPort`.
    public init(authzPort: Int, upstreamPort: Int) async throws {
        let port = LoopbackPort.free()
        self.port = port
        folder = try TemporaryFolder("pg-nginx")
        let rendered = try await ShortCommand.run("/usr/bin/env", [
            "python3", Self.repository.appendingPathComponent("scripts/lib/nginx-edge.py").path,
            "--listen", "127.0.0.1:\(port)", "--authz", "127.0.0.1:\(authzPort)", "--app", "127.0.0.1:\(upstreamPort)",
        ])
        guard rendered.status == 0 else { throw NginxFailed(log: rendered.stderr) }
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
        let process = self.process
        let folder = self.folder
        try await eventually(timeout: .seconds(10)) {
            guard process.isRunning else {
                throw NginxFailed(log: (try? String(contentsOfFile: folder.path("error.log"), encoding: .utf8)) ?? "")
            }
            return LoopbackPort.isAccepting(port)
        }
    }

    deinit {
        process.kill9()
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// nginx's error log (every refusal other than 401 and 403 is logged there as an
    /// "auth request unexpected status").
    public var errorLog: String {
        (try? String(contentsOfFile: folder.path("error.log"), encoding: .utf8)) ?? ""
    }

    public struct NginxFailed: Error, CustomStringConvertible {
        public let log: String
        public var description: String { "nginx did not start (apt-get install nginx: scripts/install-deps.sh):\n\(log)" }
    }
}
