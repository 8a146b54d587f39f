import Foundation
import KeyRegistry
import Synchronization

/// Active admin credentials the authorization listener has read from Redis, each kept for at
/// most ``lifetime``: a service verifying keys calls many times a second, and two Redis reads
/// per call would cost more than the verification (docs/DECISIONS.md, "The verify API").
/// A revoked or expired credential is refused within ``lifetime`` everywhere, as keys and
/// sessions are; refusals are never remembered.
final class RememberedAdminCredentials: Sendable {
    static let lifetime: Duration = .seconds(1)

    private struct Entry {
        let record: AdminRecord
        let until: ContinuousClock.Instant
    }

    private let entries = Mutex([String: Entry]())
    /// Enough for every service of a deployment; past it the table starts again.
    private let limit = 1_000

    /// The credential whose secret hashes to `hash`, when it was read less than ``lifetime`` ago
    /// and is still unexpired.
    func record(hash: String, now: Date = Date()) -> AdminRecord? {
        let instant = ContinuousClock.now
        return entries.withLock { entries in
            guard let entry = entries[hash] else { return nil }
            guard entry.until > instant, entry.record.status(at: now) == .active else {
                entries[hash] = nil
                return nil
            }
            return entry.record
        }
    }

    func remember(_ record: AdminRecord, hash: String) {
        let until = ContinuousClock.now + Self.lifetime
        entries.withLock { entries in
            if entries.count >= limit { entries.removeAll(keepingCapacity: true) }
            entries[hash] = Entry(record: record, until: until)
        }
    }
}
