import ArgumentParser
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOCore
import NIOSSL
import Logging

/// `echo-upstream`: a demo upstream that responses every request with JSON describing what it
/// received (method, path, query, headers, body size), so a newcomer sees exactly what the
/// gateway forwards. Query parameters for trying the gateway's edges:
/// - `delay_ms=N` delays the response (timeouts, graceful shutdown);
/// - `stream_bytes=N` answers N bytes instead of the JSON, streamed in 64 KiB chunks of
///   ``streamPattern`` (large downloads, memory under load, byte-exact passthrough);
/// - `fail_after_bytes=N` with `stream_bytes` breaks the connection after N of them (an
///   upstream failing mid-body);
/// - `trailer=VALUE` sends the body chunked and ends it with the trailer `X-Echo-Trailer`.
@main
struct EchoUpstream: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo-upstream",
        abstract: "Answers every request with JSON describing what it received."
    )

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on.") var port = 9001
    @Option(help: "Serve HTTPS with this PEM certificate (chain), with --tls-key-file.") var tlsCertFile: String?
    @Option(help: "PEM private key of --tls-cert-file.") var tlsKeyFile: String?
    @Option(help: "With TLS: require a client certificate issued by this PEM CA (mutual TLS).") var tlsClientCAFile: String?

    func run() async throws {
        let router = Router()
        router.addMiddleware { EchoMiddleware() }
        let app = Application(
            router: router,
            server: try server(),
            configuration: .init(address: .hostname(host, port: port), serverName: "echo-upstream"),
            logger: Logger(label: "echo-upstream")
        )
        try await app.runService()
    }

    /// Plain HTTP/1.1, or HTTPS when given a certificate (to try `https://` upstreams).
    private func server() throws -> HTTPServerBuilder {
        guard let tlsCertFile, let tlsKeyFile else { return .http1() }
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(tlsCertFile).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: tlsKeyFile, format: .pem))
        )
        if let tlsClientCAFile {
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(tlsClientCAFile))
            tls.certificateVerification = .noHostnameVerification
        }
        return try .tls(.http1(), tlsConfiguration: tls)
    }
}

/// Answers everything; the router behind it is never reached.
struct EchoMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        context.logger.info("received \(request.method.rawValue) \(request.uri.path)")
        let query = request.uri.queryParameters
        if let delay = query["delay_ms"].flatMap({ Int($0) }), delay > 0 {
            try await Task.sleep(for: .milliseconds(min(delay, 600_000)))
        }
        var bodyBytes = 0
        for try await chunk in request.body {
            bodyBytes += chunk.readableBytes
        }
        if let size = query["stream_bytes"].flatMap({ Int($0) }), size >= 0 {
            return Self.stream(size: size, failAfter: query["fail_after_bytes"].flatMap { Int($0) }, trailer: query["trailer"].map(String.init))
        }
        var headers: [String: [String]] = [:]
        for field in request.headers {
            headers[field.name.canonicalName, default: []].append(field.value)
        }
        // `status=500`: answer with that status (tests of how the gateway counts upstream errors).
        let status = query["status"].flatMap { Int($0) }.flatMap { (200...599).contains($0) ? HTTPResponse.Status(code: $0) : nil }
        let echo = Echo(
            method: request.method.rawValue,
            path: request.uri.path,
            query: request.uri.query ?? "",
            headers: headers,
            bodyBytes: bodyBytes
        )
        var response = try context.responseEncoder.encode(echo, from: request, context: context)
        if let status { response.status = status }
        return response
    }

    private static func stream(size: Int, failAfter: Int?, trailer: String?) -> Response {
        let chunk = ByteBuffer(bytes: StreamPattern.bytes)
        let body = ResponseBody(contentLength: trailer == nil ? size : nil) { writer in
            var sent = 0
            while sent < size {
                var part = chunk
                let count = min(chunk.readableBytes, size - sent)
                part = part.getSlice(at: 0, length: count)!
                if let failAfter, sent + count > failAfter {
                    throw EchoFailure()
                }
                try await writer.write(part)
                sent += count
            }
            try await writer.finish(trailer.map { [HTTPField.Name("X-Echo-Trailer")!: $0] })
        }
        return Response(status: .ok, headers: [.contentType: "application/octet-stream"], body: body)
    }
}

/// Thrown mid-body on purpose (`fail_after_bytes`): Hummingbird closes the connection.
struct EchoFailure: Error {}

struct Echo: Encodable {
    let method: String
    let path: String
    let query: String
    let headers: [String: [String]]
    let bodyBytes: Int

    enum CodingKeys: String, CodingKey {
        case method, path, query, headers
        case bodyBytes = "body_bytes"
    }
}

/// 64 KiB of pseudo-random bytes (a fixed linear congruential sequence), repeated to make
/// `stream_bytes` bodies: any byte lost, duplicated or reordered by the gateway shows.
enum StreamPattern {
    static let bytes: [UInt8] = {
        var state: UInt32 = 12_345
        return (0..<65_536).map { _ in
            state = state &* 1_103_515_245 &+ 12_345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
    }()
}
