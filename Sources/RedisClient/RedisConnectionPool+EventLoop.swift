import NIOCore

extension RedisConnectionPool {
    /// ``run(_:keys:arguments:)`` for a caller on an event loop that carries on in future
    /// callbacks rather than in a Swift task (a proxied request's rate-limit check): the reply
    /// completes a future on `eventLoop`, and an error reply fails it as
    /// ``RedisError/server(_:)``.
    ///
    /// When a slot on `eventLoop` is connected, the call is written there (one flush per loop
    /// tick) and its reply completes the future on the same thread: no task, no executor hop,
    /// no formatting. Everything rarer goes through the asynchronous ``run(_:keys:arguments:)``,
    /// which already knows how: no connection ready (dialling, backing off), a script that
    /// must wait for replicas, Redis having lost the script (`NOSCRIPT`: the source is sent),
    /// a demoted primary under Sentinel (`READONLY`: sent again to the new one), a cluster
    /// slot that moved or is moving (the redirection is followed). The timeout,
    /// the observer's callbacks and the errors are the asynchronous call's.
    public func run(_ call: RedisScriptCall, on eventLoop: any EventLoop) -> EventLoopFuture<RedisValue> {
        guard configuration.waitReplicas == 0 || !call.script.waitsForReplicas,
              let connection = readyConnection(for: call, on: eventLoop)
        else { return runInTask(call, on: eventLoop) }
        let observer = self.observer
        let started = observer.map { observer in
            observer.started()
            return ContinuousClock.now
        }
        let replied = eventLoop.makePromise(of: RedisValue.self)
        connection.send(formatted: call.evalSHA, deadline: .now() + TimeAmount(configuration.timeout), promise: replied)
        let answered = eventLoop.makePromise(of: RedisValue.self)
        replied.futureResult.whenComplete { result in
            let elapsed = started.map { .now - $0 } ?? .zero
            let failure: RedisError?
            switch result {
            case .success(.error(let message)): failure = .server(message)
            case .success: failure = nil
            case .failure(let error): failure = error as? RedisError ?? .connection("\(error)")
            }
            observer?.finished("EVALSHA", elapsed, failure)
            guard let failure else {
                observer?.scriptFinished(call.script.name, elapsed, false)
                answered.completeWith(result)
                return
            }
            // `MOVED`/`ASK`/`TRYAGAIN`/`CLUSTERDOWN`: the cluster's redirections, which the
            // asynchronous call follows (Redis did not run the script on this node).
            if failure.isNoScript || failure.isClusterRedirection || (failure.isReadOnly && self.configuration.sentinel != nil) {
                answered.completeWith(self.runInTask(call, on: eventLoop))
                return
            }
            observer?.scriptFinished(call.script.name, elapsed, true)
            answered.fail(failure)
        }
        return answered.futureResult
    }

    private func runInTask(_ call: RedisScriptCall, on eventLoop: any EventLoop) -> EventLoopFuture<RedisValue> {
        eventLoop.makeFutureWithTask {
            try await self.run(call.script, keys: call.keys, arguments: call.arguments)
        }
    }
}
