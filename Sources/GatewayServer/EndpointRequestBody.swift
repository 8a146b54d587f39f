import NIOCore
import Synchronization

/// A request's body as an endpoint reads it (Hummingbird's `RequestBody`), fed by
/// ``EndpointResponder`` as the parts arrive. What the responder passes on is bounded (what an
/// endpoint reads at most), so nothing here waits for the reader. A part already in is read
/// without suspending, which is the usual case: a small body comes in the head's read.
final class EndpointRequestBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer

    private struct State {
        var parts = CircularBuffer<ByteBuffer>(initialCapacity: 2)
        var ended = false
        var failure: (any Error)?
        var reader: CheckedContinuation<ByteBuffer?, any Error>?
    }

    private enum Next {
        case part(ByteBuffer)
        case end
        case failure(any Error)
        case wait
    }

    private let state = Mutex(State())

    func append(_ part: ByteBuffer) {
        let reader = state.withLock { state -> CheckedContinuation<ByteBuffer?, any Error>? in
            guard let reader = state.reader else {
                state.parts.append(part)
                return nil
            }
            state.reader = nil
            return reader
        }
        reader?.resume(returning: part)
    }

    /// The body ended, or broke off with `failure` (input gone bad, the connection closed).
    func finish(failure: (any Error)? = nil) {
        let reader = state.withLock { state -> CheckedContinuation<ByteBuffer?, any Error>? in
            guard !state.ended else { return nil }
            state.ended = true
            state.failure = failure
            defer { state.reader = nil }
            return state.reader
        }
        if let failure { reader?.resume(throwing: failure) } else { reader?.resume(returning: nil) }
    }

    private func next() async throws -> ByteBuffer? {
        switch state.withLock({ Self.take(&$0) }) {
        case .part(let part): return part
        case .end: return nil
        case .failure(let error): throw error
        case .wait: break
        }
        return try await withCheckedThrowingContinuation { continuation in
            let now = state.withLock { state -> Next in
                let next = Self.take(&state)
                if case .wait = next { state.reader = continuation }
                return next
            }
            switch now {
            case .part(let part): continuation.resume(returning: part)
            case .end: continuation.resume(returning: nil)
            case .failure(let error): continuation.resume(throwing: error)
            case .wait: break
            }
        }
    }

    private static func take(_ state: inout State) -> Next {
        if let part = state.parts.popFirst() { return .part(part) }
        guard state.ended else { return .wait }
        return state.failure.map { .failure($0) } ?? .end
    }

    struct AsyncIterator: AsyncIteratorProtocol {
        let body: EndpointRequestBody

        mutating func next() async throws -> ByteBuffer? {
            try await body.next()
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(body: self)
    }
}
