import GatewayEdge
import GatewayObservability
import HTTPTypes
import Hummingbird
import NIOCore

/// The access line of every request Hummingbird answers (the proxy engine writes its own
/// with the same ``AccessLogRecord``), recorded once the whole response is known: a body of
/// known length (every JSON answer) when the response is handed over, a streamed one once its
/// last byte has passed, counted on the way.
///
/// Why not count every body: a wrapped body is a streamed one to Hummingbird, which then
/// hands the head, the body and its end to NIO one by one: two writes to the socket instead
/// of one (docs/DECISIONS.md, "Endpoint answers in one write").
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext
    let listener: String
    let writer: AccessLogWriter
    let clientAddress: ClientAddress

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let started = ContinuousClock.now
        var response = try await next(request, context)
        let facts = context.facts
        let record = AccessLogRecord(
            listener: listener,
            requestID: context.requestID,
            method: request.method.rawValue,
            route: RouteLabel.of(endpointPath: context.endpointPath),
            status: response.status.code,
            duration: .zero,
            client: clientAddress.resolve(peer: context.peerAddress, headers: request.headers),
            bytesIn: request.headers[.contentLength].flatMap { Int($0) } ?? 0,
            bytesOut: 0,
            traceID: context.traceID
        )
        let writer = self.writer
        let body = response.body
        if let length = body.contentLength {
            writer.record(record.completed(facts: facts.current, bytesOut: length, started: started))
            return response
        }
        response.body = ResponseBody { bodyWriter in
            let sent = CountingBodyWriter.Count()
            defer { writer.record(record.completed(facts: facts.current, bytesOut: sent.bytes, started: started)) }
            try await body.write(CountingBodyWriter(base: bodyWriter, count: sent))
        }
        return response
    }
}

extension AccessLogRecord {
    /// The record with what is known once the body has ended.
    func completed(facts: RequestFacts.Values, bytesOut: Int, started: ContinuousClock.Instant) -> AccessLogRecord {
        var record = self
        record.duration = .now - started
        record.userID = facts.userID
        record.partnerID = facts.partnerID
        record.auth = facts.auth
        record.keyID = facts.keyID
        record.decision = facts.decision
        record.upstreamDuration = facts.upstreamDuration
        if let bytesIn = facts.bytesIn { record.bytesIn = bytesIn }
        record.bytesOut = bytesOut
        return record
    }
}
