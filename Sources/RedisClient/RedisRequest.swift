import NIOCore

/// One call of ``RedisConnectionPool``: what it writes in one go on one connection, where
/// that goes, and what it writes instead when Redis has lost a script.
///
/// A struct of a few words, so the event-loop path carries it in the one closure it makes
/// per call anyway.
struct RedisRequest: Sendable {
    enum Body: Sendable {
        /// Commands sent as they are.
        case commands([RedisCommand])
        /// A script call's prepared `EVALSHA` (its `EVAL` after `NOSCRIPT`), followed by
        /// `WAIT` when `confirmations` replicas must confirm its writes.
        case script(RedisScriptCall, confirmations: Int, waitTimeout: Duration)
    }

    enum Target: Sendable {
        /// The primary serving the slot (any primary for nil), following redirections.
        case slot(Int?)
        /// That node and no other (a check that must hold on every primary).
        case node(RedisNodePool)
    }

    var body: Body
    let target: Target
    /// The source is sent (`EVAL`) rather than its SHA-1: set once Redis answered `NOSCRIPT`.
    var sendsSource = false

    init(_ commands: [RedisCommand], to target: Target) {
        body = .commands(commands)
        self.target = target
    }

    init(_ call: RedisScriptCall, to target: Target, confirmations: Int = 0, waitTimeout: Duration = .zero) {
        body = .script(call, confirmations: confirmations, waitTimeout: waitTimeout)
        self.target = target
    }

    /// The script this request runs, if it runs one.
    var script: RedisScriptCall? {
        if case .script(let call, _, _) = body { return call }
        return nil
    }

    /// For the observer: the command's name, or the first command's.
    var name: String {
        switch body {
        case .commands(let commands): commands.first?.name ?? ""
        case .script: sendsSource ? "EVAL" : "EVALSHA"
        }
    }

    /// How many replies come back: several arrive as one `.array`.
    var replyCount: Int {
        switch body {
        case .commands(let commands): commands.count
        case .script(_, let confirmations, _): confirmations > 0 ? 2 : 1
        }
    }

    /// The bytes to write. A script run as prepared is written as it is, without a copy.
    func payload(allocator: ByteBufferAllocator) throws(RedisError) -> ByteBuffer {
        switch body {
        case .commands(let commands):
            var payload = allocator.buffer(capacity: 64 * commands.count)
            for command in commands { try Hiredis.format(command, into: &payload) }
            return payload
        case .script(let call, let confirmations, let waitTimeout):
            guard sendsSource || confirmations > 0 else { return call.evalSHA }
            var payload = allocator.buffer(capacity: call.evalSHA.readableBytes + 64)
            if sendsSource {
                try Hiredis.format(.eval(call.script, keys: call.keys, bytes: call.arguments), into: &payload)
            } else {
                payload.writeImmutableBuffer(call.evalSHA)
            }
            if confirmations > 0 {
                try Hiredis.format(.wait(replicas: confirmations, timeout: waitTimeout), into: &payload)
            }
            return payload
        }
    }
}
