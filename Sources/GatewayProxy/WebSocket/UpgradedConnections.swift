import DriverSessions
import Foundation
import GatewayAdmission
import GatewayEdge
import GatewayObservability
import HTTPTypes
import KeyRegistry
import Logging
import NIOCore
import Synchronization

/// Every open upgraded connection of the process, by what it was opened with, so that a
/// credential's end ends them (docs/public-api.md, "WebSockets"): an access token's expiry,
/// a revocation of its session or user, a change to its key or partner announced on
/// `pg:invalidate` (every instance hears it, ``RedisSubscriber``). The connection is closed
/// with code `1008`.
///
/// One shard per event loop, touched only on its loop: registering and unregistering (once
/// per connection) take no lock beyond finding the loop's shard; an announcement visits each
/// shard on its own loop. Each shard has one timer, for its earliest token expiry.
package final class UpgradedConnections: Sendable {
    private let shards = Mutex<[Shard]>([])
    private let bearer: BearerAuthenticator?
    private let keys: KeyVerifier?
    private let logger: Logger?
    /// `server.max_websockets_per_user`, and the connections each user or key holds or is
    /// opening (once per handshake and close, never per frame).
    private let maxPerHolder: Int
    private let holders = Mutex<[String: Int]>([:])

    /// `429` at a handshake over ``maxPerHolder``.
    package static let tooMany = GatewayError(.tooManyRequests, "TOO_MANY_CONNECTIONS", "too many WebSocket connections are open for this caller")

    package init(bearer: BearerAuthenticator? = nil, keys: KeyVerifier? = nil, logger: Logger? = nil, maxPerUser: Int = .max) {
        self.bearer = bearer
        self.keys = keys
        self.logger = logger
        maxPerHolder = maxPerUser
    }

    /// Who a connection counts against: the user, else the partner key (by its hash); nil on
    /// open routes.
    package static func holder(of identity: ProxyIdentity, presentedKey: String?) -> String? {
        if let userID = identity.userID { return "u:" + userID }
        if let keyHash = presentedKey.flatMap({ APIKey($0)?.hash }) { return "k:" + keyHash }
        return identity.partnerID.map { "p:" + $0 }
    }

    /// Counts a connection being opened by `holder`; false when it holds the most already.
    package func reserve(_ holder: String) -> Bool {
        holders.withLock { holders in
            let held = holders[holder] ?? 0
            guard held < maxPerHolder else { return false }
            holders[holder] = held + 1
            return true
        }
    }

    /// A reserved connection did not open, or one that did has closed.
    package func release(_ holder: String) {
        holders.withLock { holders in
            let held = (holders[holder] ?? 1) - 1
            holders[holder] = held > 0 ? held : nil
        }
    }

    /// Registers `tunnel` (on its loop) until it ends; `holder`'s reservation is let go of then.
    ///
    /// `credential` is the one admitted, and the upstream's `101` may have taken a while: what
    /// ended it since (its expiry, a revocation, a change to its key or partner) closes the
    /// socket at once, as it would have closed one registered before.
    package func register(_ tunnel: WebSocketTunnel, credential: UpgradedCredential, holder: String?, metrics: WebSocketMetrics) {
        let shard = self.shard(for: tunnel.eventLoop)
        let id = shard.add(tunnel, credential: credential)
        metrics.opened()
        tunnel.onEnd = { [unowned tunnel] in
            shard.remove(id)
            if let holder { self.release(holder) }
            metrics.closed(reason: tunnel.endReason)
        }
        if isRevoked(credential) == true {
            tunnel.close(code: WebSocketTunnel.CloseCode.policyViolation, reason: "revoked")
        } else if let keys, let admittedAt = credential.keyInvalidations, keys.invalidations != admittedAt,
                  let entry = shard.state.value.entries[id] {
            verifyAgain(entry, id: id, in: shard)
        }
    }

    /// A `pg:invalidate` message, applied to this instance's caches already: the connections it
    /// names are checked again and closed if their credential no longer holds.
    package func invalidated(_ message: String) {
        let parts = message.split(separator: " ")
        guard parts.count >= 2 else { return }
        let kind = String(parts[0])
        let target = String(parts[1])
        for shard in shards.withLock({ $0 }) {
            shard.loop.execute { self.check(shard, kind: kind, target: target) }
        }
    }

    private func shard(for loop: any EventLoop) -> Shard {
        shards.withLock { shards in
            if let shard = shards.first(where: { $0.loop === loop }) { return shard }
            let shard = Shard(loop: loop)
            shards.append(shard)
            return shard
        }
    }

    /// On `shard`'s loop: the connections `kind` and `target` name, checked again.
    private func check(_ shard: Shard, kind: String, target: String) {
        for (id, entry) in shard.state.value.entries where entry.credential.isNamed(by: Substring(kind), Substring(target)) {
            let credential = entry.credential
            switch kind {
            case "session", "user":
                // A message naming a socket whose credential has no session cannot be checked: closed.
                if isRevoked(credential) ?? true {
                    entry.tunnel.close(code: WebSocketTunnel.CloseCode.policyViolation, reason: "revoked")
                }
            default:
                verifyAgain(entry, id: id, in: shard)
            }
        }
    }

    /// Whether the credential's login session is revoked; nil when it carries none (a key).
    private func isRevoked(_ credential: UpgradedCredential) -> Bool? {
        guard let bearer, let userID = credential.userID, let sessionID = credential.sessionID, let issuedAt = credential.issuedAt else {
            return nil
        }
        return bearer.revocations.isRevoked(userID: userID, sessionID: sessionID, issuedAt: issuedAt)
    }

    /// The key looked up again (its cache entry was just dropped): anything but valid from the
    /// socket's address closes; a valid key's expiry (a rotation's grace) becomes the socket's.
    private func verifyAgain(_ entry: Shard.Entry, id: UInt64, in shard: Shard) {
        guard let keys, let presented = entry.credential.presentedKey else { return }
        let scope = entry.credential.scope
        let clientIP = entry.credential.clientIP
        let tunnel = entry.tunnel
        shard.loop.makeFutureWithTask { try await keys.verify(presented, scope: scope) }.assumeIsolated().whenComplete { result in
            switch result {
            case .success(.valid(let key, let partner)) where NetworkAllowlist.admits(clientIP: clientIP, key: key, partner: partner):
                shard.expire(id, at: key.expiresAt)
            case .success:
                tunnel.close(code: WebSocketTunnel.CloseCode.policyViolation, reason: "revoked")
            case .failure(let error):
                // Redis could not say: the connection stays; the next announcement looks again.
                self.logger?.warning("could not verify an upgraded connection's key again", metadata: ["error": "\(type(of: error))"])
            }
        }
    }

    /// One loop's connections.
    final class Shard: Sendable {
        struct Entry {
            let tunnel: WebSocketTunnel
            let credential: UpgradedCredential
            var expiry: NIODeadline?
        }

        struct State {
            var entries: [UInt64: Entry] = [:]
            var nextID: UInt64 = 0
            var expiryTimer: Scheduled<Void>?
            var expiryDeadline: NIODeadline?
        }

        let loop: any EventLoop
        let state: NIOLoopBoundBox<State>

        init(loop: any EventLoop) {
            self.loop = loop
            state = NIOLoopBoundBox(State(), eventLoop: loop)
        }

        func add(_ tunnel: WebSocketTunnel, credential: UpgradedCredential) -> UInt64 {
            let id = state.value.nextID
            state.value.nextID += 1
            state.value.entries[id] = Entry(tunnel: tunnel, credential: credential, expiry: nil)
            expire(id, at: credential.expiresAt)
            return id
        }

        /// The connection `id` ends at `date` (none: its credential does not expire); one in the
        /// past ends at the loop's next turn.
        func expire(_ id: UInt64, at date: Date?) {
            guard state.value.entries[id] != nil else { return }
            let expiry = date.map { loop.now + .nanoseconds(Int64(max(0, $0.timeIntervalSinceNow) * 1_000_000_000)) }
            state.value.entries[id]?.expiry = expiry
            if let expiry, state.value.expiryDeadline.map({ expiry < $0 }) ?? true { armExpiry(at: expiry) }
        }

        func remove(_ id: UInt64) {
            state.value.entries.removeValue(forKey: id)
        }

        private func armExpiry(at deadline: NIODeadline) {
            state.value.expiryTimer?.cancel()
            state.value.expiryDeadline = deadline
            state.value.expiryTimer = loop.assumeIsolated().scheduleTask(deadline: deadline) { self.expiryPassed() }
        }

        /// Closes the connections whose token has expired, then waits for the next expiry.
        private func expiryPassed() {
            state.value.expiryTimer = nil
            state.value.expiryDeadline = nil
            let now = loop.now
            var next: NIODeadline?
            for entry in state.value.entries.values {
                guard let expiry = entry.expiry else { continue }
                if expiry <= now {
                    entry.tunnel.close(code: WebSocketTunnel.CloseCode.policyViolation, reason: "revoked")
                } else if next.map({ expiry < $0 }) ?? true {
                    next = expiry
                }
            }
            if let next { armExpiry(at: next) }
        }
    }
}
