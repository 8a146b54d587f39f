import Foundation

/// An upstream written as a few lines of Python, on a free loopback port: for behaviour no
/// ready-made server shows on demand (closing a reused connection unanswered, numbering its
/// connections, counting the segments a request arrived in). The script defines
/// `serve(connection)`, run on a thread of its own for every connection accepted;
/// `request_heads(connection)` yields the heads of the body-less requests that arrive on it,
/// one by one; `requests(connection)` each request's head and `Content-Length` body.
public struct ScriptedUpstream: Sendable {
    public let port: Int
    /// What the script printed (stdout and stderr).
    public let logPath: String
    private let process: ChildProcess
    private let folder: TemporaryFolder

    public init(serving serve: String) async throws {
        let port = LoopbackPort.free()
        let script = """
            import socket, struct, sys, threading
            server = socket.socket()
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind(("127.0.0.1", int(sys.argv[1])))
            server.listen(64)
            def request_heads(connection):
                data = b""
                while True:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                    while b"\\r\\n\\r\\n" in data:
                        head, data = data.split(b"\\r\\n\\r\\n", 1)
                        yield head
            def requests(connection):
                data = b""
                while True:
                    while b"\\r\\n\\r\\n" not in data:
                        chunk = connection.recv(65536)
                        if not chunk:
                            return
                        data += chunk
                    head, data = data.split(b"\\r\\n\\r\\n", 1)
                    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\\r\\n")[1:] if line.lower().startswith(b"content-length:")), 0)
                    while len(data) < length:
                        chunk = connection.recv(65536)
                        if not chunk:
                            return
                        data += chunk
                    yield head, data[:length]
                    data = data[length:]
            \(serve)
            while True:
                client, _ = server.accept()
                threading.Thread(target=serve, args=(client,), daemon=True).start()
            """
        let folder = try TemporaryFolder("pg-scripted-\(port)")
        let logPath = folder.path("upstream.log")
        let process = try ChildProcess("/usr/bin/python3", ["-c", script, String(port)], outputPath: logPath)
        do {
            try await eventually(timeout: .seconds(10)) { LoopbackPort.isAccepting(port) }
        } catch {
            process.kill9()
            throw error
        }
        self.port = port
        self.logPath = logPath
        self.process = process
        self.folder = folder
    }

    /// What the script printed so far.
    public var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// What a route's `upstream:` names.
    public var url: String { "http://127.0.0.1:\(port)" }

    public func stop() {
        process.kill9()
    }
}
