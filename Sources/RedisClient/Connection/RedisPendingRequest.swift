import NIOCore

/// Commands written to a connection together, and whoever waits for their replies.
///
/// A request holds one or more commands already encoded as RESP. It is complete when
/// `replyCount` replies have arrived (replies come back in the order commands were sent).
struct RedisPendingRequest: Sendable {
    enum Waiter: Sendable {
        case single(CheckedContinuation<RedisValue, any Error>)
        case many(CheckedContinuation<[RedisValue], any Error>)
        /// The pool's calls (``RedisConnectionPool/execute(_:on:)``) wait without a Swift task
        /// or a future: one reply as it is, several as one `.array` of them, called on the
        /// connection's loop.
        case callback(@Sendable (Result<RedisValue, any Error>) -> Void)
    }

    var payload: ByteBuffer
    var replyCount: Int
    var deadline: NIODeadline
    var waiter: Waiter

    /// Hands over the reply of a one-command request.
    func succeed(_ reply: RedisValue) {
        switch waiter {
        case .single(let continuation): continuation.resume(returning: reply)
        case .many(let continuation): continuation.resume(returning: [reply])
        case .callback(let callback): callback(.success(reply))
        }
    }

    /// Hands over every reply of a request of several commands, in order.
    func succeed(_ replies: [RedisValue]) {
        switch waiter {
        case .single(let continuation): continuation.resume(returning: .array(replies))
        case .many(let continuation): continuation.resume(returning: replies)
        case .callback(let callback): callback(.success(.array(replies)))
        }
    }

    func fail(_ error: RedisError) {
        switch waiter {
        case .single(let continuation): continuation.resume(throwing: error)
        case .many(let continuation): continuation.resume(throwing: error)
        case .callback(let callback): callback(.failure(error))
        }
    }
}
