import Foundation

/// The demo echo upstream, as a real process on a free loopback port.
public final class EchoUpstreamProcess: Sendable {
    public let port: Int
    public let logPath: String
    private let process: ChildProcess

    public init() async throws {
        let port = LoopbackPort.free()
        self.port = port
        logPath = FileManager.default.temporaryDirectory.appendingPathComponent("pg-echo-\(port).log").path
        process = try ChildProcess(BuiltProduct.path("echo-upstream"), ["--host", "127.0.0.1", "--port", String(port)], outputPath: logPath)
        let process = self.process
        try await eventually(timeout: .seconds(10)) {
            guard process.isRunning else { throw SpawnFailed(executable: "echo-upstream", errno: 0) }
            return LoopbackPort.isAccepting(port)
        }
    }

    public var url: String { "http://127.0.0.1:\(port)" }

    /// What the upstream printed: a `received METHOD PATH` line per request, on arrival.
    public var log: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Every request target path the upstream received, in order, exactly as it arrived
    /// (from its `received METHOD PATH` lines).
    public var receivedPaths: [String] {
        log.split(separator: "\n").compactMap { line in
            guard let marker = line.range(of: "received ") else { return nil }
            let words = line[marker.upperBound...].split(separator: " ")
            return words.count >= 2 ? String(words[1]) : nil
        }
    }

    public func stop() {
        process.kill9()
    }
}
