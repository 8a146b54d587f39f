import NIOCore

/// One call of ``RedisConnectionPool``: what it writes in one go on one connection, where
/// that goes, what it writes instead when Redis has lost a script, and the `WAIT` that follows
/// a write replicas must confirm.
///
/// A struct of a few words, so the event-loop path carries it in the one closure it makes
/// per call anyway.
struct RedisRequest: Sendable {
    enum Body: Sendable {
        /// One command sent as it is.
        case command(RedisCommand)
        /// Commands sent as they are.
        case commands([RedisCommand])
        /// A script call's prepared `EVALSHA` (its `EVAL` after `NOSCRIPT`).
        case script(RedisScriptCall)
    }

    enum Target: Sendable {
        /// The primary serving the slot (any primary for nil), following redirections.
        case slot(Int?)
        /// That node and no other (a check that must hold on every primary).
        case node(RedisNodePool)
    }

    var body: Body
    let target: Target
    /// How many replicas must confirm the write (`WAIT` follows it); 0: none.
    let confirmations: Int
    let waitTimeout: Duration
    /// The source is sent (`EVAL`) rather than its SHA-1: set once Redis answered `NOSCRIPT`.
    var sendsSource = false

    init(_ commands: [RedisCommand], to target: Target) {
        body = .commands(commands)
        self.target = target
        confirmations = 0
        waitTimeout = .zero
    }

    /// One command, or one script call, followed by `WAIT` when `confirmations` replicas
    /// must confirm its write.
    init(_ command: RedisCommand, to target: Target, confirmations: Int, waitTimeout: Duration) {
        body = .command(command)
        self.target = target
        self.confirmations = confirmations
        self.waitTimeout = waitTimeout
    }

    init(_ call: RedisScriptCall, to target: Target, confirmations: Int = 0, waitTimeout: Duration = .zero) {
        body = .script(call)
        self.target = target
        self.confirmations = confirmations
        self.waitTimeout = waitTimeout
    }

    /// The script this request runs, if it runs one.
    var script: RedisScriptCall? {
        if case .script(let call) = body { return call }
        return nil
    }

    /// For the observer: the command's name, or the first command's.
    var name: String {
        switch body {
        case .command(let command): command.name
        case .commands(let commands): commands.first?.name ?? ""
        case .script: sendsSource ? "EVAL" : "EVALSHA"
        }
    }

    /// How many replies come back: several arrive as one `.array`.
    var replyCount: Int {
        let written = switch body {
        case .command: 1
        case .commands(let commands): commands.count
        case .script: 1
        }
        return written + (confirmations > 0 ? 1 : 0)
    }

    /// The bytes to write. A command, or a script run as prepared, is written as it is,
    /// without a copy, unless `WAIT` follows it.
    func payload(allocator: ByteBufferAllocator) -> ByteBuffer {
        let written: ByteBuffer
        switch body {
        case .command(let command):
            written = command.encoded
        case .commands(let commands):
            var batch = allocator.buffer(capacity: 64 * commands.count)
            for command in commands { command.encode(into: &batch) }
            written = batch
        case .script(let call):
            written = sendsSource ? call.eval : call.evalSHA
        }
        guard confirmations > 0 else { return written }
        var payload = allocator.buffer(capacity: written.readableBytes + 64)
        payload.writeImmutableBuffer(written)
        RedisCommand.wait(replicas: confirmations, timeout: waitTimeout).encode(into: &payload)
        return payload
    }
}
