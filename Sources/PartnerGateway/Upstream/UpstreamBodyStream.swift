import NIOCore
import NIOHTTP1
import Synchronization

/// The rest of an upstream response after its head, read only as the client takes it.
///
/// Whoever writes the client's response calls ``next()`` until it returns `.end`; the
/// connection then goes back to the pool. If the writer stops early (the client went away, or
/// the upstream failed mid-body) it calls ``abandon()``, and if it never even started (the
/// response head could not be written), `deinit` does: the connection still holds the unread
/// rest of a response, so it is closed, never reused.
final class UpstreamBodyStream: Sendable {
    enum Part: Sendable {
        case chunk(ByteBuffer)
        /// The body ended; trailers if the upstream sent any.
        case end(HTTPHeaders?)
    }

    private let connection: UpstreamConnection
    private let pool: UpstreamPool
    private let timeout: TimeAmount
    private let upload: Task<Void, any Error>?
    private let finished = Atomic(false)

    init(connection: UpstreamConnection, pool: UpstreamPool, timeout: TimeAmount, upload: Task<Void, any Error>?) {
        self.connection = connection
        self.pool = pool
        self.timeout = timeout
        self.upload = upload
    }

    deinit {
        if !finished.load(ordering: .relaxed) {
            upload?.cancel()
            connection.abort(.closed)
        }
    }

    /// The next chunk or the end. Throws ``UpstreamError`` when the upstream fails or stalls
    /// for longer than the route timeout mid-body; the caller must then abort the client's
    /// connection, so the client cannot mistake a truncated body for a complete one.
    func next() async throws(UpstreamError) -> Part {
        let part: HTTPClientResponsePart
        do {
            part = try await connection.nextPart(timeout: timeout)
        } catch {
            abandon()
            throw error as? UpstreamError ?? .closed
        }
        switch part {
        case .body(let chunk):
            return .chunk(chunk)
        case .end(let trailers):
            finished.store(true, ordering: .relaxed)
            if let upload {
                // The upstream answered before reading the whole request body (an early
                // error): the connection is mid-request, so close it rather than wait.
                if await !connection.requestEnded { connection.abort(.closed) }
                _ = await upload.result
            }
            await pool.release(connection)
            return .end(trailers)
        case .head:
            abandon()
            throw .malformedResponse
        }
    }

    /// Stops reading: closes the connection and the request body upload.
    func abandon() {
        guard !finished.exchange(true, ordering: .relaxed) else { return }
        upload?.cancel()
        connection.abort(.closed)
    }
}
