import NIOCore
import NIOHTTP1

/// One request forwarded over a pooled connection, up to the response head.
///
/// The request body (if any) uploads in its own task while the response is awaited, so an
/// upstream that answers as it reads (an echo, a transcoder) cannot deadlock against the
/// gateway. A small response that arrived whole comes back complete; anything else as an
/// ``UpstreamBodyStream`` that reads from the upstream only as fast as the client takes it.
enum UpstreamExchange {
    enum Body: Sendable {
        /// The whole body (nil when empty) and trailers, read with the head.
        case complete(ByteBuffer?, trailers: HTTPHeaders?)
        case streaming(UpstreamBodyStream)
    }

    /// The failures of a request as the client will see them.
    enum Failure: Error, Equatable {
        /// The request body went over `max_body_bytes` while it streamed.
        case bodyTooLarge
        /// The client's request body broke off or was malformed (its chunks, its length).
        case brokenRequestBody
        case upstream(UpstreamError)
        /// A reused connection closed before any answer (internal: retried or made `.closed`).
        case staleConnection
    }

    /// Sends `head` and `body`, and returns the response head once it arrives within
    /// `timeout`. Retries once, on a new connection, only a request without a body whose
    /// method is idempotent and whose reused connection closed before any answer: the upstream
    /// may have closed an idle connection just as it was taken, and such a request cannot have
    /// done anything twice.
    static func run<RequestBody: AsyncSequence & Sendable>(
        _ head: HTTPRequestHead,
        body: RequestBody?,
        pool: UpstreamPool,
        timeout: TimeAmount
    ) async throws(Failure) -> (HTTPResponseHead, Body) where RequestBody.Element == ByteBuffer {
        do {
            return try await attempt(head, body: body, pool: pool, timeout: timeout, mayBeStale: true)
        } catch .staleConnection {
            guard body == nil && head.method.isSafeToRetry else { throw .upstream(.closed) }
            return try await attempt(head, body: body, pool: pool, timeout: timeout, mayBeStale: false)
        }
    }

    private static func attempt<RequestBody: AsyncSequence & Sendable>(
        _ head: HTTPRequestHead,
        body: RequestBody?,
        pool: UpstreamPool,
        timeout: TimeAmount,
        mayBeStale: Bool
    ) async throws(Failure) -> (HTTPResponseHead, Body) where RequestBody.Element == ByteBuffer {
        let connection: UpstreamConnection
        let reused: Bool
        do {
            (connection, reused) = try await pool.connection(connectTimeout: min(timeout, .seconds(2)))
        } catch {
            throw .upstream(.refused)
        }
        var upload: Task<Void, any Error>?
        do {
            try await connection.send(head, hasBody: body != nil)
            if let body {
                upload = Task { try await send(body, over: connection) }
            }
            let first = try await connection.nextPart(timeout: timeout)
            guard case .head(let responseHead) = first else { throw UpstreamError.malformedResponse }
            if upload == nil, let rest = try await connection.takeIfComplete() {
                await pool.release(connection)
                return (responseHead, complete(rest))
            }
            let stream = UpstreamBodyStream(connection: connection, pool: pool, timeout: timeout, upload: upload)
            return (responseHead, .streaming(stream))
        } catch {
            connection.abort(.closed)
            if let upload, case .failure(let uploadError) = await upload.result, !(uploadError is UpstreamError) {
                throw uploadError is BodyTooLarge ? .bodyTooLarge : .brokenRequestBody
            }
            let failure = error as? UpstreamError ?? .closed
            if failure == .closed && reused && mayBeStale {
                throw .staleConnection
            }
            throw .upstream(failure)
        }
    }

    private static func send<RequestBody: AsyncSequence & Sendable>(
        _ body: RequestBody, over connection: UpstreamConnection
    ) async throws where RequestBody.Element == ByteBuffer {
        // Errors from the client's body (too large, broken) stay as they are; errors writing
        // to the upstream become ``UpstreamError``, so the two are answered differently.
        do {
            for try await chunk in body {
                do {
                    try await connection.sendBody(chunk)
                } catch {
                    throw UpstreamError.closed
                }
            }
            do {
                try await connection.sendEnd()
            } catch {
                throw UpstreamError.closed
            }
        } catch {
            connection.abort(.closed)
            throw error
        }
    }

    private static func complete(_ parts: [HTTPClientResponsePart]) -> Body {
        var bytes: ByteBuffer?
        var trailers: HTTPHeaders?
        for part in parts {
            switch part {
            case .body(var chunk):
                if bytes == nil { bytes = chunk } else { bytes!.writeBuffer(&chunk) }
            case .end(let end):
                trailers = end
            case .head:
                break
            }
        }
        return .complete(bytes, trailers: trailers)
    }
}

/// Thrown by the request body's sequence once more than `max_body_bytes` went through.
struct BodyTooLarge: Error {}

extension HTTPMethod {
    /// Methods RFC 9110 calls idempotent and that carry no body here: safe to send twice.
    var isSafeToRetry: Bool {
        switch self {
        case .GET, .HEAD, .OPTIONS, .DELETE, .PUT, .TRACE: true
        default: false
        }
    }
}
