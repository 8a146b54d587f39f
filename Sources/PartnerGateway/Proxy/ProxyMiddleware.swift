import DriverTokens
import HTTPTypes
import Hummingbird
import KeyRegistry
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Forwards every request that matches a `routes` entry to its upstream; everything else goes
/// on to the gateway's own router.
///
/// Bodies stream both ways through ``UpstreamExchange`` (the request body as the client sends
/// it, the response as the client takes it), so memory does not grow with body size.
struct ProxyMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    let routes: RouteTable
    let clientAddress: ClientAddress
    let apiKeys: APIKeyAuthenticator
    let bearer: BearerAuthenticator
    /// Signs the `X-Gateway-Assertion` of authenticated routes.
    let assertions: AssertionSigner
    let policies: RateLimitPolicies
    let rateLimits: RateLimitGate
    let maxBodyBytes: Int

    /// Who the gateway says the caller is, as the upstream will read it.
    struct Identity {
        var userID: String?
        var partnerID: String?
        var channel: String?
        /// The signed `X-Gateway-Assertion`; only authenticated routes get one.
        var assertion: String?

        var headers: [(String, String)] {
            var headers: [(String, String)] = []
            if let userID { headers.append(("X-Gateway-User-Id", userID)) }
            if let channel { headers.append(("X-Gateway-Auth-Channel", channel)) }
            if let partnerID { headers.append(("X-Gateway-Partner-Id", partnerID)) }
            if let assertion { headers.append(("X-Gateway-Assertion", assertion)) }
            return headers
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let route = routes.match(Substring(request.uri.path)) else {
            return try await next(request, context)
        }
        context.coreContext.endpointPath.value = route.endpointLabel
        let clientIP = clientAddress.resolve(peer: context.peerAddress, headers: request.headers)
        var identity: Identity
        do {
            identity = try await authenticate(request, route: route, clientIP: clientIP)
        } catch {
            context.facts.update { $0.auth = Self.refusalCode(error) }
            throw error
        }
        context.facts.update { [identity] facts in
            facts.userID = identity.userID
            facts.partnerID = identity.partnerID
            facts.auth = route.auth == .none ? "none" : "ok"
        }
        var limitHeaders = HTTPFields()
        if let bucket = policies.route(route, userID: identity.userID, partnerID: identity.partnerID, clientIP: clientIP) {
            limitHeaders = try await rateLimits.admit([bucket], policy: "route", onStoreError: .storePolicy(policies.limits.onStoreError))
        }
        if let channel = identity.channel, let subject = identity.userID ?? identity.partnerID {
            // Signed only once admitted. api_key routes have no user: the partner is the subject.
            identity.assertion = try await assertions.assertion(
                subject: subject, channel: channel, partnerID: identity.partnerID, audience: route.name
            )
        }
        var response = try await forward(request, to: route, identity: identity, context: context)
        response.headers.append(contentsOf: limitHeaders)
        return response
    }

    /// The access log's `auth` for a refused caller: the answer's error code.
    private static func refusalCode(_ error: any Error) -> String {
        switch error {
        case let error as GatewayError: error.code
        case let error as any GatewayErrorConvertible: error.gatewayError.code
        default: "error"
        }
    }

    private func authenticate(_ request: Request, route: ProxyRoute, clientIP: String?) async throws -> Identity {
        switch route.auth {
        case .none:
            return Identity()
        case .bearer:
            let claims = try await bearer.authenticate(request.headers)
            return Identity(userID: claims.userID, partnerID: claims.channel.partnerID, channel: claims.channel.name)
        case .apiKey:
            let caller = try await apiKeys.authenticate(request.headers, clientIP: clientIP, scope: route.scope)
            return Identity(userID: nil, partnerID: caller.partner.id, channel: "api_key")
        }
    }

    private func forward(_ request: Request, to route: ProxyRoute, identity: Identity, context: Context) async throws -> Response {
        let declaredLength = request.headers[.contentLength].flatMap { Int($0) }
        if let declaredLength, declaredLength > maxBodyBytes {
            route.metrics.failed("body_too_large")
            throw GatewayError.payloadTooLarge
        }
        let chunked = declaredLength == nil && request.headers[.transferEncoding] != nil
        var headers = ForwardedHeaders.request(
            from: HTTPHeaders(request.headers),
            route: route,
            identity: identity.headers,
            requestID: context.requestID,
            forwardedFor: clientAddress.forwardedFor(peer: context.peerAddress, earlierHops: request.headers[values: .xForwardedFor]),
            host: request.head.authority
        )
        if chunked { headers.add(name: "Transfer-Encoding", value: "chunked") }
        let head = HTTPRequestHead(
            version: .http1_1,
            method: HTTPMethod(rawValue: request.method.rawValue),
            uri: route.upstreamTarget(path: Substring(request.uri.path), query: request.uri.query.map { Substring($0) }),
            headers: headers
        )
        let body = declaredLength != nil || chunked ? LimitedBody(base: request.body, limit: maxBodyBytes) : nil
        let started = ContinuousClock.now
        let responseHead: HTTPResponseHead
        let responseBody: UpstreamExchange.Body
        do {
            (responseHead, responseBody) = try await UpstreamExchange.run(head, body: body, pool: route.pool, timeout: TimeAmount(route.timeout))
        } catch .bodyTooLarge {
            route.metrics.failed("body_too_large")
            throw GatewayError.payloadTooLarge
        } catch .brokenRequestBody {
            route.metrics.failed("broken_request_body")
            throw GatewayError(.badRequest, "INVALID_REQUEST", "the request body is malformed or incomplete")
        } catch .upstream(.timeout) {
            route.metrics.failed(UpstreamError.timeout.description)
            throw GatewayError.upstreamTimeout
        } catch {
            let kind = if case .upstream(let failure) = error { failure.description } else { UpstreamError.closed.description }
            route.metrics.failed(kind)
            context.logger.warning("upstream unavailable", metadata: ["route": .string(route.name), "kind": .string(kind)])
            throw GatewayError.upstreamUnavailable
        }
        let upstreamDuration = ContinuousClock.now - started
        route.metrics.answered(status: Int(responseHead.status.code), after: upstreamDuration)
        context.facts.update { $0.upstreamDuration = upstreamDuration }
        return Response(
            status: HTTPResponse.Status(code: Int(responseHead.status.code), reasonPhrase: responseHead.status.reasonPhrase),
            headers: ForwardedHeaders.responseFields(from: responseHead.headers),
            body: Self.clientBody(responseBody, route: route, logger: context.logger)
        )
    }

    /// The client's response body. When the upstream fails mid-body the error propagates out
    /// of the writer, which makes Hummingbird close the client's connection without the final
    /// chunk: the client sees a broken body, never a truncated one that looks complete.
    private static func clientBody(_ body: UpstreamExchange.Body, route: ProxyRoute, logger: Logger) -> ResponseBody {
        switch body {
        case .complete(let bytes, nil):
            return bytes.map { ResponseBody(byteBuffer: $0) } ?? ResponseBody()
        case .complete(let bytes, let trailers?):
            return ResponseBody { writer in
                if let bytes { try await writer.write(bytes) }
                try await writer.finish(ForwardedHeaders.trailers(from: trailers))
            }
        case .streaming(let stream):
            return ResponseBody { writer in
                do {
                    while true {
                        switch try await stream.next() {
                        case .chunk(let chunk):
                            try await writer.write(chunk)
                        case .end(let trailers):
                            try await writer.finish(trailers.map(ForwardedHeaders.trailers(from:)))
                            return
                        }
                    }
                } catch let error as UpstreamError {
                    route.metrics.failed(error.description)
                    logger.warning("upstream failed mid-body; closing the client connection", metadata: ["route": .string(route.name), "kind": .string(error.description)])
                    throw error
                } catch {
                    stream.abandon()
                    throw error
                }
            }
        }
    }
}

/// A request body that fails once more than `limit` bytes have gone through, so a chunked
/// body without a `Content-Length` is held to `max_body_bytes` while it streams.
struct LimitedBody<Base: AsyncSequence & Sendable>: AsyncSequence, Sendable where Base.Element == ByteBuffer {
    typealias Element = ByteBuffer
    let base: Base
    let limit: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let limit: Int
        var seen = 0

        mutating func next() async throws -> ByteBuffer? {
            guard let chunk = try await base.next() else { return nil }
            seen += chunk.readableBytes
            if seen > limit { throw BodyTooLarge() }
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), limit: limit)
    }
}

extension HTTPField.Name {
    static let xAPIKey = HTTPField.Name("X-API-Key")!
}
