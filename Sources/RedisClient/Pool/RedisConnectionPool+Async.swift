import NIOCore

/// The pool's API for Swift tasks: each call is one ``RedisRequest`` run by the event-loop
/// primitive (``execute(_:on:)``), awaited. Nothing here handles an error of its own.
extension RedisConnectionPool {
    /// Sends one command; an error reply is thrown as ``RedisError/server(_:)``.
    public func send(_ command: RedisCommand) async throws -> RedisValue {
        let slot = try topologyPool.slot(of: command.keys, in: command.name)
        return try await execute(RedisRequest([command], to: .slot(slot)), on: eventLoopGroup.any()).get().throwingServerError()
    }

    /// Sends every command in one round trip (on a cluster, one per slot the keys live on, all
    /// at once); returns each reply, error replies included, in order. Keyless commands go
    /// with the command before them; on a cluster a write goes on its own, so following a
    /// redirection never runs another command twice.
    public func pipeline(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        var batches: [(slot: Int?, indices: [Int])] = []
        var previous: Int?
        for (index, command) in commands.enumerated() {
            let slot = try topologyPool.slot(of: command.keys, in: command.name) ?? previous
            if let last = batches.indices.last, batches[last].slot == slot, slot == nil || command.isReadOnly {
                batches[last].indices.append(index)
            } else {
                batches.append((slot, [index]))
            }
            previous = slot
        }
        let eventLoop = eventLoopGroup.any()
        let answers = batches.map { batch in
            execute(RedisRequest(batch.indices.map { commands[$0] }, to: .slot(batch.slot)), on: eventLoop)
        }
        var replies = [RedisValue](repeating: .null, count: commands.count)
        for (batch, answer) in zip(batches, answers) {
            let reply = try await answer.get()
            guard batch.indices.count > 1 else {
                replies[batch.indices[0]] = reply
                continue
            }
            for (index, value) in zip(batch.indices, reply.array ?? []) { replies[index] = value }
        }
        return replies
    }

    /// Runs the commands inside `MULTI`/`EXEC` in one round trip. Nothing else can interleave:
    /// the whole block is one write on one connection. Returns `EXEC`'s replies. On a cluster
    /// every key must be in one slot (else ``RedisError/crossSlot(_:)``, nothing sent).
    public func transaction(_ commands: [RedisCommand]) async throws -> [RedisValue] {
        let slot = try topologyPool.slot(of: commands.flatMap(\.keys), in: "transaction")
        let reply = try await execute(RedisRequest([.multi] + commands + [.exec], to: .slot(slot)), on: eventLoopGroup.any()).get()
        let replies = reply.array ?? []
        for reply in replies.dropLast() { _ = try reply.throwingServerError() }
        switch try replies.last?.throwingServerError() {
        case .array(let results): return results
        default: throw RedisError.server("EXECABORT transaction discarded")
        }
    }

    /// Runs a Lua script by `EVALSHA`, sending its source with `EVAL` only when Redis has lost
    /// it (after a restart or `SCRIPT FLUSH`). On a cluster every key must be in one slot
    /// (else ``RedisError/crossSlot(_:)``). Inside a traced request the run is a span of it.
    public func run(_ script: RedisScript, keys: [String], arguments: [String]) async throws -> RedisValue {
        let call = try RedisScriptCall(script, keys: keys, arguments: arguments)
        return try await run(call, on: eventLoopGroup.any(), tracedUnder: currentTraceParent()).get()
    }

    /// `PING` within the timeout to every primary: what `/readyz` asks. On a cluster every
    /// slot must have a primary, too.
    public func ping() async throws {
        for (_, reply) in try await sendToEveryPrimary(.ping()) { _ = try reply.throwingServerError() }
        if let problem = topologyPool.readinessProblem() { throw problem }
    }

    /// Sends `command` (one without keys: `INFO`, `CONFIG GET`) to every primary, for checks
    /// that must hold on each. Error replies are returned, not thrown.
    public func sendToEveryPrimary(_ command: RedisCommand) async throws -> [(node: String, reply: RedisValue)] {
        let eventLoop = eventLoopGroup.any()
        let primaries = try await topologyPool.primaries(on: eventLoop).get()
        let answers = primaries.map { execute(RedisRequest([command], to: .node($0)), on: eventLoop) }
        var replies: [(node: String, reply: RedisValue)] = []
        for (primary, answer) in zip(primaries, answers) {
            do {
                replies.append(("\(primary.address)", try await answer.get()))
            } catch let error as RedisError where primaries.count > 1 && error.isConnection && !error.isTLS && error != .poolClosed {
                // Of several primaries, say which one could not be reached.
                throw RedisError.connection("primary \(primary.address): \(error.detail)")
            }
        }
        return replies
    }
}
