import NIOCore
import RedisClient
import Synchronization

/// Token-bucket checks gathered per event loop and loop tick. Checks of the same buckets made
/// together (the connections of one busy user or partner, read in one tick) go to Redis as one
/// run of ``TokenBucketScript`` that decides each of them in the order they were made, exactly
/// as one run per check would: limits stay exact, and Redis and the gateway do one script,
/// one write and one reply for the lot. A check waits no longer than alone: until the loop
/// has handled what woke it, when its command would have been flushed anyway.
///
/// This runs for every request on a rate-limited route, so it is kept to what a check needs:
/// its loop's table is found without a lock (the tables of the Redis pool's loops are made up
/// front), its batch by a hash worked out once per prepared check, and it waits as one
/// callback rather than a promise.
final class TokenBucketBatches: Sendable {
    private let redis: RedisConnectionPool
    /// The pending checks of each loop of the Redis pool's group: read-only once made.
    private let byPoolLoop: [ObjectIdentifier: NIOLoopBoundBox<Pending>]
    /// Those of loops outside that group (a caller with its own), made on first use.
    private let byOtherLoop = Mutex<[ObjectIdentifier: NIOLoopBoundBox<Pending>]>([:])

    init(redis: RedisConnectionPool) {
        self.redis = redis
        var byPoolLoop: [ObjectIdentifier: NIOLoopBoundBox<Pending>] = [:]
        for eventLoop in redis.eventLoopGroup.makeIterator() {
            byPoolLoop[ObjectIdentifier(eventLoop)] = .makeBoxSendingValue(Pending(), eventLoop: eventLoop)
        }
        self.byPoolLoop = byPoolLoop
    }

    /// `check`, whose prepared script call is `call`, decided with the other checks of its
    /// buckets made on `eventLoop` in this tick; `decided` is called on `eventLoop`.
    func check(_ check: RateLimitCheck, call: RedisScriptCall, on eventLoop: any EventLoop, then decided: @escaping RateLimitDecided) {
        // Read here, where a traced caller still runs inside its request: the run is sent later.
        let parent = redis.currentTraceParent()
        if eventLoop.inEventLoop {
            add(check, call, decided, parent, on: eventLoop)
        } else {
            eventLoop.execute { self.add(check, call, decided, parent, on: eventLoop) }
        }
    }

    /// The checks waiting on one loop, by the buckets they check.
    private struct Pending {
        var batches: [BatchKey: Batch] = [:]
        var sendScheduled = false
    }

    /// A check's buckets as a dictionary key: hashed by the hash its check worked out once,
    /// compared by reference first (a connection's requests share their check).
    private struct BatchKey: Hashable {
        let check: RateLimitCheck

        static func == (lhs: BatchKey, rhs: BatchKey) -> Bool {
            lhs.check === rhs.check || lhs.check.batchKey == rhs.check.batchKey
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(check.batchHash)
        }
    }

    private struct Batch {
        let check: RateLimitCheck
        let call: RedisScriptCall
        var waiting: [RateLimitDecided]
        /// The traced request of the first check, whose span the run becomes.
        let parent: RedisTraceParent?
    }

    private func add(
        _ check: RateLimitCheck, _ call: RedisScriptCall, _ decided: @escaping RateLimitDecided, _ parent: RedisTraceParent?,
        on eventLoop: any EventLoop
    ) {
        let pending = self.pending(on: eventLoop)
        let scheduled = pending.withValue { pending in
            let key = BatchKey(check: check)
            if pending.batches[key]?.waiting.append(decided) == nil {
                pending.batches[key] = Batch(check: check, call: call, waiting: [decided], parent: parent)
            }
            defer { pending.sendScheduled = true }
            return pending.sendScheduled
        }
        guard !scheduled else { return }
        eventLoop.execute {
            let taken = pending.withValue { pending in
                pending.sendScheduled = false
                defer { pending.batches.removeAll(keepingCapacity: true) }
                return pending.batches
            }
            for batch in taken.values { self.send(batch, on: eventLoop) }
        }
    }

    /// This loop's pending checks.
    private func pending(on eventLoop: any EventLoop) -> NIOLoopBoundBox<Pending> {
        let id = ObjectIdentifier(eventLoop)
        if let pending = byPoolLoop[id] { return pending }
        return byOtherLoop.withLock { byOtherLoop in
            if let pending = byOtherLoop[id] { return pending }
            let pending = NIOLoopBoundBox.makeBoxSendingValue(Pending(), eventLoop: eventLoop)
            byOtherLoop[id] = pending
            return pending
        }
    }

    /// One script run for the batch: the prepared call as it is for one check, else with the
    /// number of checks as its last argument (the prepared call ends with a count of 1).
    private func send(_ batch: Batch, on eventLoop: any EventLoop) {
        let buckets = batch.check.buckets
        let waiting = batch.waiting
        let call = waiting.count == 1 ? batch.call : batch.call.replacingLastArgument(with: String(waiting.count))
        redis.run(call, on: eventLoop, tracedUnder: batch.parent) { result in
            do {
                try RedisRateLimiter.decide(from: result.get(), buckets: buckets, requests: waiting.count) { request, decision in
                    waiting[request](.success(decision))
                }
            } catch {
                for decided in waiting { decided(.failure(error)) }
            }
        }
    }
}
