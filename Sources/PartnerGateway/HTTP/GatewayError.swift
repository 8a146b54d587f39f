import Foundation
import HTTPTypes
import Hummingbird
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Every error the gateway answers with, in the one JSON shape of docs/public-api.md:
/// `{"error": {"code": "INVALID_OTP", "message": "human readable, no secrets"}}`.
///
/// The codes are part of the public contract (clients switch on them); the messages are for
/// people and must never echo a credential back.
struct GatewayError: HTTPResponseError, Equatable {
    let status: HTTPResponse.Status
    let code: String
    let message: String
    /// Extra response headers, e.g. `Retry-After` on a 429.
    var headers: HTTPFields = [:]

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    func response(from request: Request, context: some RequestContext) throws -> Response {
        makeResponse()
    }

    func makeResponse() -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        let body = Self.encoder.encode(code: code, message: message)
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The head and body of this answer for code that writes below Hummingbird, straight
    /// into a channel (``ProxyExchange``, ``HTTP1ConnectionHandler``).
    func channelParts(requestID: String) -> (head: HTTPResponseHead, body: ByteBuffer) {
        let body = ByteBuffer(bytes: Self.encoder.encode(code: code, message: message))
        var fields = headers
        fields[.contentType] = "application/json"
        fields[.contentLength] = String(body.readableBytes)
        fields[.xRequestID] = requestID
        let head = HTTPResponseHead(
            version: .http1_1,
            status: HTTPResponseStatus(statusCode: status.code, reasonPhrase: status.reasonPhrase),
            headers: HTTPHeaders(fields)
        )
        return (head, body)
    }

    private static let encoder = ErrorBodyEncoder()
}

/// Encodes the error body with `JSONEncoder`, so messages are always escaped correctly.
private struct ErrorBodyEncoder: Sendable {
    private struct Body: Encodable {
        struct Detail: Encodable {
            let code: String
            let message: String
        }
        let error: Detail
    }

    func encode(code: String, message: String) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(Body(error: .init(code: code, message: message)))) ?? Data()
        return Array(data)
    }
}

extension GatewayError {
    static let notFound = GatewayError(.notFound, "NOT_FOUND", "no route matches this path")
    static let methodNotAllowed = GatewayError(.methodNotAllowed, "METHOD_NOT_ALLOWED", "this path does not accept that method")
    static let payloadTooLarge = GatewayError(.contentTooLarge, "PAYLOAD_TOO_LARGE", "the request body is too large")
    static let upstreamTimeout = GatewayError(.gatewayTimeout, "UPSTREAM_TIMEOUT", "the upstream service did not answer in time")
    static let upstreamUnavailable = GatewayError(.badGateway, "UPSTREAM_UNAVAILABLE", "the upstream service is unavailable")
    static let serviceUnavailable = GatewayError(.serviceUnavailable, "SERVICE_UNAVAILABLE", "the service is temporarily unavailable, try again shortly")
    static let internalError = GatewayError(.internalServerError, "INTERNAL_ERROR", "an unexpected error occurred")
    /// A request body stopped arriving (`server.body_read_timeout`).
    static let requestTimeout = GatewayError(.requestTimeout, "REQUEST_TIMEOUT", "the request body did not arrive in time")
    /// The request's headers exceed `server.max_header_bytes`.
    static let headersTooLarge = GatewayError(.requestHeaderFieldsTooLarge, "HEADERS_TOO_LARGE", "the request headers are too large")
    static let unauthorizedAdmin = GatewayError(.unauthorized, "UNAUTHORIZED", "a valid admin token is required")

    static func notFound(what: String) -> GatewayError {
        GatewayError(.notFound, "NOT_FOUND", "no such \(what)")
    }

    /// `429 RATE_LIMIT_EXCEEDED` with `Retry-After` in whole seconds, at least 1.
    static func rateLimited(retryAfter seconds: Double, headers: HTTPFields = [:]) -> GatewayError {
        var fields = headers
        fields[.retryAfter] = String(max(1, Int(seconds.rounded(.up))))
        return GatewayError(.tooManyRequests, "RATE_LIMIT_EXCEEDED", "too many requests, retry later", headers: fields)
    }

    static func invalidRequest(_ message: String) -> GatewayError {
        GatewayError(.badRequest, "INVALID_REQUEST", message)
    }

    /// The error-shaped equivalent of a framework error (router 404, body limits, bad JSON).
    static func from(status: HTTPResponse.Status) -> GatewayError {
        switch status.code {
        case 404: .notFound
        case 405: .methodNotAllowed
        case 413: .payloadTooLarge
        case 431: .headersTooLarge
        case 400..<500: GatewayError(status, "INVALID_REQUEST", "the request is malformed")
        case 503: .serviceUnavailable
        default: .internalError
        }
    }
}

/// Errors from the libraries that know which gateway error they are.
protocol GatewayErrorConvertible: Error {
    var gatewayError: GatewayError { get }
}
