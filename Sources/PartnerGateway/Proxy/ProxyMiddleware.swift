import AsyncHTTPClient
import DriverTokens
import HTTPTypes
import Hummingbird
import KeyRegistry
import Logging
import NIOCore
import NIOHTTP1

/// Forwards every request that matches a `routes` entry to its upstream; everything else goes
/// on to the gateway's own router.
///
/// Bodies stream both ways (AsyncHTTPClient reads the request body as the client sends it and
/// hands the response body over as it arrives), so memory does not grow with body size.
struct ProxyMiddleware: RouterMiddleware {
    typealias Context = GatewayRequestContext

    let routes: RouteTable
    let httpClient: HTTPClient
    let clientAddress: ClientAddress
    let apiKeys: APIKeyAuthenticator
    let bearer: BearerAuthenticator
    /// Signs the `X-Gateway-Assertion` of authenticated routes.
    let assertions: AssertionSigner
    let policies: RateLimitPolicies
    let rateLimits: RateLimitGate
    let onStoreError: GatewayConfig.RateLimits.StoreErrorPolicy
    let maxBodyBytes: Int
    let logger: Logger

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
        context.coreContext.endpointPath.value = "route:\(route.name)"
        let clientIP = clientAddress.resolve(peer: context.peerAddress, headers: request.headers)
        var identity = try await authenticate(request, route: route, clientIP: clientIP)
        var limitHeaders = HTTPFields()
        if let bucket = policies.route(route, userID: identity.userID, partnerID: identity.partnerID, clientIP: clientIP) {
            limitHeaders = try await rateLimits.admit([bucket], policy: "route", onStoreError: .storePolicy(onStoreError))
        }
        if let channel = identity.channel, let subject = identity.userID ?? identity.partnerID {
            // Signed only once admitted. api_key routes have no user: the partner is the subject.
            identity.assertion = try await assertions.assertion(
                subject: subject, channel: channel, partnerID: identity.partnerID, audience: route.name
            )
        }
        var response = try await forward(request, to: route, identity: identity, clientIP: clientIP, context: context)
        response.headers.append(contentsOf: limitHeaders)
        return response
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

    private func forward(_ request: Request, to route: ProxyRoute, identity: Identity, clientIP: String?, context: Context) async throws -> Response {
        let declaredLength = request.headers[.contentLength].flatMap { Int($0) }
        if let declaredLength, declaredLength > maxBodyBytes {
            throw GatewayError.payloadTooLarge
        }
        var outbound = HTTPClientRequest(url: route.upstreamURL(path: Substring(request.uri.path), query: request.uri.query.map { Substring($0) }))
        outbound.method = HTTPMethod(rawValue: request.method.rawValue)
        outbound.headers = ForwardedHeaders.request(
            from: request.headers,
            route: route,
            identity: identity.headers,
            requestID: context.requestID,
            clientIP: clientIP,
            host: request.head.authority
        )
        if declaredLength != nil || request.headers[.transferEncoding] != nil {
            let limited = LimitedBody(base: request.body, limit: maxBodyBytes)
            let length: HTTPClientRequest.Body.Length = declaredLength.map { .known(Int64($0)) } ?? .unknown
            outbound.body = .stream(limited, length: length)
        }
        let upstream: HTTPClientResponse
        do {
            upstream = try await httpClient.execute(outbound, timeout: TimeAmount(route.timeout), logger: logger)
        } catch let error as GatewayError {
            throw error
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw GatewayError(.gatewayTimeout, "UPSTREAM_TIMEOUT", "the upstream service did not answer in time")
        } catch {
            if error is BodyTooLarge { throw GatewayError.payloadTooLarge }
            logger.warning("upstream unavailable", metadata: ["route": .string(route.name), "error": .string("\(error)")])
            throw GatewayError(.badGateway, "UPSTREAM_UNAVAILABLE", "the upstream service is unavailable")
        }
        return Response(
            status: HTTPResponse.Status(code: Int(upstream.status.code), reasonPhrase: upstream.status.reasonPhrase),
            headers: ForwardedHeaders.response(from: upstream.headers),
            body: ResponseBody(asyncSequence: upstream.body)
        )
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

struct BodyTooLarge: Error {}

extension HTTPField.Name {
    static let xAPIKey = HTTPField.Name("X-API-Key")!
}
