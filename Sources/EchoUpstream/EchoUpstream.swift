import ArgumentParser
import Hummingbird
import Logging

/// `echo-upstream`: a demo upstream that answers every request with JSON describing what it
/// received (method, path, query, headers, body size), so a newcomer sees exactly what the
/// gateway forwards. `?delay_ms=N` delays the answer, for trying timeouts and graceful
/// shutdown.
@main
struct EchoUpstream: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "echo-upstream",
        abstract: "Answers every request with JSON describing what it received."
    )

    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on.") var port = 9001

    func run() async throws {
        let router = Router()
        router.addMiddleware { EchoMiddleware() }
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: "echo-upstream"),
            logger: Logger(label: "echo-upstream")
        )
        try await app.runService()
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
        var headers: [String: [String]] = [:]
        for field in request.headers {
            headers[field.name.canonicalName, default: []].append(field.value)
        }
        let echo = Echo(
            method: request.method.rawValue,
            path: request.uri.path,
            query: request.uri.query ?? "",
            headers: headers,
            bodyBytes: bodyBytes
        )
        return try context.responseEncoder.encode(echo, from: request, context: context)
    }
}

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
