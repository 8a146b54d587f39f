import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// Every error the gateway answers with, in the one JSON shape of docs/public-api.md:
/// `{"error": {"code": "INVALID_OTP", "message": "human readable, no secrets"}}`.
///
/// The codes are part of the public contract (clients switch on them); the messages are for
/// people and must never echo a credential back.
package struct GatewayError: Error, Equatable {
    package let status: HTTPResponse.Status
    package let code: String
    package let message: String
    /// Extra response headers, e.g. `Retry-After` on a 429.
    package var headers: HTTPFields = [:]

    package init(_ status: HTTPResponse.Status, _ code: String, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    /// The JSON body: `{"error": {"code": ..., "message": ...}}`.
    package func body() -> ByteBuffer {
        ByteBuffer(bytes: Self.encoder.encode(code: code, message: message))
    }

    /// The head and body of this response for code that writes below Hummingbird, straight
    /// into a channel (``ProxyExchange``, ``HTTP1ConnectionHandler``).
    package func channelParts(requestID: String) -> (head: HTTPResponseHead, body: ByteBuffer) {
        let body = body()
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

    /// Writes this response whole into `context`, a handler's of HTTP/1 server parts (a stream's
    /// too), and flushes; with `closing`, announcing `Connection: close`. The future is the end's
    /// write, after which the writer closes the way it must.
    package func write(to context: ChannelHandlerContext, closing: Bool = false) -> EventLoopFuture<Void>.Isolated {
        var (head, body) = channelParts(requestID: RequestID.generate())
        if closing { head.headers.replaceOrAdd(name: "Connection", value: "close") }
        context.write(NIOAny(HTTPServerResponsePart.head(head)), promise: nil)
        context.write(NIOAny(HTTPServerResponsePart.body(.byteBuffer(body))), promise: nil)
        return context.writeAndFlush(NIOAny(HTTPServerResponsePart.end(nil))).assumeIsolated()
    }

    private static let encoder = ErrorBodyEncoder()
}

/// Encodes the error body with `JSONEncoder`, so messages are always escaped correctly.
private struct ErrorBodyEncoder: Sendable {
    private struct Body: Encodable {
        package struct Detail: Encodable {
            package let code: String
            package let message: String
        }
        package let error: Detail
    }

    package func encode(code: String, message: String) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(Body(error: .init(code: code, message: message)))) ?? Data()
        return Array(data)
    }
}

extension GatewayError {
    package static let notFound = GatewayError(.notFound, "NOT_FOUND", "no route matches this path")
    package static let methodNotAllowed = GatewayError(.methodNotAllowed, "METHOD_NOT_ALLOWED", "this path does not accept that method")
    package static let payloadTooLarge = GatewayError(.contentTooLarge, "PAYLOAD_TOO_LARGE", "the request body is too large")
    package static let upstreamTimeout = GatewayError(.gatewayTimeout, "UPSTREAM_TIMEOUT", "the upstream service did not answer in time")
    package static let upstreamUnavailable = GatewayError(.badGateway, "UPSTREAM_UNAVAILABLE", "the upstream service is unavailable")
    package static let serviceUnavailable = GatewayError(.serviceUnavailable, "SERVICE_UNAVAILABLE", "the service is temporarily unavailable, try again shortly")
    package static let internalError = GatewayError(.internalServerError, "INTERNAL_ERROR", "an unexpected error occurred")
    /// A request body stopped arriving (`server.body_read_timeout`).
    package static let requestTimeout = GatewayError(.requestTimeout, "REQUEST_TIMEOUT", "the request body did not arrive in time")
    /// The request's headers exceed `server.max_header_bytes`.
    package static let headersTooLarge = GatewayError(.requestHeaderFieldsTooLarge, "HEADERS_TOO_LARGE", "the request headers are too large")
    package static let unauthorizedAdmin = GatewayError(.unauthorized, "UNAUTHORIZED", "a valid admin token is required")

    package static func notFound(what: String) -> GatewayError {
        GatewayError(.notFound, "NOT_FOUND", "no such \(what)")
    }

    /// `429 RATE_LIMIT_EXCEEDED` with `Retry-After` in whole seconds, at least 1.
    package static func rateLimited(retryAfter seconds: Double, headers: HTTPFields = [:]) -> GatewayError {
        var fields = headers
        fields[.retryAfter] = String(max(1, Int(seconds.rounded(.up))))
        return GatewayError(.tooManyRequests, "RATE_LIMIT_EXCEEDED", "too many requests, retry later", headers: fields)
    }

    package static func invalidRequest(_ message: String) -> GatewayError {
        GatewayError(.badRequest, "INVALID_REQUEST", message)
    }

    /// The error-shaped equivalent of a framework error (router 404, body limits, bad JSON).
    package static func from(status: HTTPResponse.Status) -> GatewayError {
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
package protocol GatewayErrorConvertible: Error {
    var gatewayError: GatewayError { get }
}
