import NIOCore
import RedisClient
import Synchronization

/// Token-bucket checks gathered per event loop and loop tick. Checks of the same buckets made
/// together (the connections of one busy user or partner, read in one tick) go to Redis as one
/// run of ``TokenBucketScript`` that decides each of them in the order they were made, exactly
/// as one run per check would: limits stay exact, and Redis and the gateway do one script,
/// one write and one reply for the lot. A check waits no longer than alone: until the loop
/// has handled what woke it, when its command would have been flushed anyway.
final class TokenBucketBatches: Sendable {
    private let redis: RedisConnectionPool
    private let byLoop = Mutex<[ObjectIdentifier: NIOLoopBound<Pending>]>([:])

    init(redis: RedisConnectionPool) {
        self.redis = redis
    }

    /// `check` (which has a ``RateLimitCheck/scriptCall``), decided with the other checks of
    /// its buckets made on `eventLoop` in this tick.
    func check(_ check: RateLimitCheck, on eventLoop: any EventLoop) -> EventLoopFuture<RateLimitDecision> {
        let promise = eventLoop.makePromise(of: RateLimitDecision.self)
        if eventLoop.inEventLoop {
            add(check, promise, on: eventLoop)
        } else {
            eventLoop.execute { self.add(check, promise, on: eventLoop) }
        }
        return promise.futureResult
    }

    /// The checks waiting on one loop, by the buckets they check.
    private final class Pending {
        var batches: [String: Batch] = [:]
        var sendScheduled = false
    }

    private struct Batch {
        let check: RateLimitCheck
        var waiting: [EventLoopPromise<RateLimitDecision>]
    }

    private func add(_ check: RateLimitCheck, _ promise: EventLoopPromise<RateLimitDecision>, on eventLoop: any EventLoop) {
        let pending = self.pending(on: eventLoop)
        let batches = pending.value
        if batches.batches[check.batchKey]?.waiting.append(promise) == nil {
            batches.batches[check.batchKey] = Batch(check: check, waiting: [promise])
        }
        guard !batches.sendScheduled else { return }
        batches.sendScheduled = true
        eventLoop.execute {
            let batches = pending.value
            batches.sendScheduled = false
            let taken = batches.batches
            batches.batches.removeAll(keepingCapacity: true)
            for batch in taken.values { self.send(batch, on: eventLoop) }
        }
    }

    /// This loop's pending checks (made on first use, on the loop).
    private func pending(on eventLoop: any EventLoop) -> NIOLoopBound<Pending> {
        let id = ObjectIdentifier(eventLoop)
        if let pending = byLoop.withLock({ $0[id] }) { return pending }
        let pending = NIOLoopBound(Pending(), eventLoop: eventLoop)
        byLoop.withLock { $0[id] = pending }
        return pending
    }

    private func send(_ batch: Batch, on eventLoop: any EventLoop) {
        let buckets = batch.check.buckets
        let requests = batch.waiting.count
        let call: RedisScriptCall
        do {
            if requests == 1, let prepared = batch.check.scriptCall {
                call = prepared
            } else {
                let (keys, arguments) = RedisRateLimiter.scriptInput(buckets)
                call = try RedisScriptCall(TokenBucketScript.script, keys: keys, arguments: arguments + [String(requests)])
            }
        } catch {
            for promise in batch.waiting { promise.fail(error) }
            return
        }
        let waiting = batch.waiting
        redis.run(call, on: eventLoop).whenComplete { result in
            do {
                let decisions = try RedisRateLimiter.decisions(from: result.get(), buckets: buckets, requests: requests)
                for (promise, decision) in zip(waiting, decisions) { promise.succeed(decision) }
            } catch {
                for promise in waiting { promise.fail(error) }
            }
        }
    }
}
