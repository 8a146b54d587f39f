import NIOCore

/// Commands written to a connection together, and whoever waits for their replies.
///
/// A request holds one or more commands already encoded as RESP. It is complete when
/// `replyCount` replies have arrived (replies come back in the order commands were sent).
struct RedisPendingRequest: Sendable {
    enum Waiter: Sendable {
        case single(CheckedContinuation<RedisValue, any Error>)
        case many(CheckedContinuation<[RedisValue], any Error>)
        /// A caller on an event loop (a proxied request's rate-limit check) waits for one
        /// reply without a Swift task.
        case promise(EventLoopPromise<RedisValue>)
    }

    var payload: ByteBuffer
    var replyCount: Int
    var deadline: NIODeadline
    var waiter: Waiter

    func fail(_ error: RedisError) {
        switch waiter {
        case .single(let continuation): continuation.resume(throwing: error)
        case .many(let continuation): continuation.resume(throwing: error)
        case .promise(let promise): promise.fail(error)
        }
    }
}
