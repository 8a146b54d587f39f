import Foundation
import GatewayContract
import RedisClient

/// Appends audit entries to one trail's hash chain, one batch at a time per gateway instance.
///
/// Entries waiting while a batch is written go together in the next one, so a burst of admin
/// calls costs a few Redis round trips rather than one contended append each. Each batch is
/// hashed against the head this instance last saw; when another instance appended meanwhile
/// the script refuses and answers the real head, and the batch is hashed again against it.
actor AuditChainWriter {
    /// Entries per script call: bounded so one call stays short for Redis.
    static let maximumBatch = 100
    /// Refusals in a row before giving up: each means another instance appended, so this is
    /// only reached when Redis is answering but the chain keeps moving for seconds.
    static let maximumAttempts = 200

    private let redis: RedisConnectionPool
    private let stream: String
    private let maximumEntries: Int
    private var head = (hash: "", seq: 0)
    private var pending: [(entry: AuditLog.Entry, continuation: CheckedContinuation<AuditLog.Entry, any Error>)] = []
    private var draining = false

    init(redis: RedisConnectionPool, stream: String, maximumEntries: Int) {
        self.redis = redis
        self.stream = stream
        self.maximumEntries = maximumEntries
    }

    func append(_ entry: AuditLog.Entry) async throws -> AuditLog.Entry {
        try await withCheckedThrowingContinuation { continuation in
            pending.append((entry, continuation))
            if !draining {
                draining = true
                Task { await self.drain() }
            }
        }
    }

    private func drain() async {
        while !pending.isEmpty {
            let batch = Array(pending.prefix(Self.maximumBatch))
            pending.removeFirst(batch.count)
            do {
                let written = try await write(batch.map(\.entry))
                for (item, entry) in zip(batch, written) { item.continuation.resume(returning: entry) }
            } catch {
                for item in batch { item.continuation.resume(throwing: error) }
            }
        }
        draining = false
    }

    private func write(_ entries: [AuditLog.Entry]) async throws -> [AuditLog.Entry] {
        for _ in 0..<Self.maximumAttempts {
            var sealed: [AuditLog.Entry] = []
            var previous = head
            var arguments = [head.hash, String(head.seq), String(maximumEntries)]
            for var entry in entries {
                entry.seq = previous.seq + 1
                entry.prevHash = previous.hash
                let hash = AuditChain.hash(
                    seq: previous.seq + 1, at: entry.at, actorID: entry.actorID, actor: entry.actor, action: entry.action,
                    target: entry.target, source: entry.source, note: entry.note, prevHash: previous.hash
                )
                entry.hash = hash
                previous = (hash, previous.seq + 1)
                arguments += AuditLog.fields(of: entry)
                sealed.append(entry)
            }
            let reply = try await redis.run(AuditScripts.append, keys: [stream, RegistryKeys.auditTrimmed(stream)], arguments: arguments)
            guard let parts = reply.array, let verdict = parts.first?.string else {
                throw RedisError.protocolViolation("audit-append returned \(reply)")
            }
            if verdict == "moved", parts.count == 3 {
                head = (parts[1].string ?? "", Int(parts[2].string ?? "") ?? 0)
                continue
            }
            guard verdict == "ok", parts.count == sealed.count + 1 else {
                throw RedisError.protocolViolation("audit-append returned \(parts.count) values")
            }
            for index in sealed.indices { sealed[index].id = parts[index + 1].string ?? "" }
            head = previous
            return sealed
        }
        throw RedisError.protocolViolation("audit-append: the chain moved \(Self.maximumAttempts) times in a row")
    }
}
