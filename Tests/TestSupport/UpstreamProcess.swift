import Foundation

/// The demo echo upstream, as a real process on a free loopback port.
public final class EchoUpstreamProcess: Sendable {
    public let port: Int
    public let logPath: String
    /// Whether it serves HTTPS.
    public let secure: Bool
    private let process: ChildProcess
    private let folder: TemporaryFolder

    /// Plain HTTP, or HTTPS with `tls` as its certificate; with `clientCAFile` as well it
    /// accepts only clients showing a certificate from that CA (mutual TLS). `port`: a stopped
    /// upstream's, to start it again in its place; nil: a free one.
    public init(port: Int? = nil, tls: TestCertificates.Issued? = nil, clientCAFile: String? = nil) async throws {
        let port = port ?? LoopbackPort.free()
        self.port = port
        secure = tls != nil
        folder = try TemporaryFolder("pg-echo-\(port)")
        logPath = folder.path("echo.log")
        var arguments = ["--host", "127.0.0.1", "--port", String(port)]
        if let tls { arguments += ["--tls-cert-file", tls.certFile, "--tls-key-file", tls.keyFile] }
        if let clientCAFile { arguments += ["--tls-client-ca-file", clientCAFile] }
        process = try ChildProcess(BuiltProduct.path("echo-upstream"), arguments, outputPath: logPath)
        let process = self.process
        try await eventually(timeout: .seconds(10)) {
            guard process.isRunning else { throw UpstreamExited(log: (try? String(contentsOfFile: self.logPath, encoding: .utf8)) ?? "") }
            return LoopbackPort.isAccepting(port)
        }
    }

    public var url: String { "\(secure ? "https" : "http")://127.0.0.1:\(port)" }

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

    deinit {
        process.kill9()
    }

    public func stop() {
        process.kill9()
    }
}

public struct UpstreamExited: FinalFailure, CustomStringConvertible {
    public let log: String
    public var description: String { "echo-upstream exited during start-up:\n\(log)" }
}
