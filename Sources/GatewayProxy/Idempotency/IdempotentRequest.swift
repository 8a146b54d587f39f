import Foundation
import GatewayAdmission
import GatewayConfiguration
import GatewayEdge
import GatewayObservability
import GatewayPrimitives
import Logging
import NIOCore
import NIOHTTP1

/// One keyed request's ``IdempotencyStateMachine``, with its I/O: the lock, renewal, store and
/// release steps (``IdempotencyStore``) on the request's loop, the renewal timer, sealing and
/// opening the stored response. What concerns the exchange (forward, refuse, replay) goes to
/// `decided`, on the same loop. Lives on that loop only.
package final class IdempotentRequest {
    package enum Decision {
        case forward
        case refuse(GatewayError)
        case replay(IdempotentResponse)
    }

    private var machine: IdempotencyStateMachine
    private let store: IdempotencyStore
    private let recordKey: String
    /// The driver whose request this is, to list the record under (erasure finds it there).
    private let userID: String?
    /// The record's value while this request holds the lock (set when it asks for it): release
    /// and renewal act only on a record that still holds it, and the store's reply is compared with it.
    private var lockValue = ""
    /// Asks the machine whether to renew the lock, while the request is forwarded.
    private var renewal: RepeatedTask?
    private var fingerprint = ""
    private let settings: GatewayConfig.Route.Idempotency
    private let route: ProxyRoute
    private let requestID: String
    private let eventLoop: any EventLoop
    private let logger: Logger
    /// The exchange's, holding it strongly (a weak reference would give every exchange a
    /// side table and slow reference counting): dropped once it has been told, or when the
    /// exchange ends untold, which breaks the cycle.
    private var decided: ((Decision) -> Void)?

    package init(
        key: String, caller: String, userID: String?, request: ProxyEngine.Request, store: IdempotencyStore,
        settings: GatewayConfig.Route.Idempotency, maxBodyBytes: Int, eventLoop: any EventLoop, logger: Logger,
        decided: @escaping (Decision) -> Void
    ) {
        let route = request.route
        machine = IdempotencyStateMachine(
            method: request.method, target: request.head.target, maxBodyBytes: maxBodyBytes, maxStoredBody: settings.maxStoredBody,
            lockLifetime: route.idempotencyLockLifetime
        )
        self.store = store
        recordKey = store.secrets.recordKey(route: route.name, caller: caller, key: key)
        self.userID = userID
        self.settings = settings
        self.route = route
        requestID = request.requestID
        self.eventLoop = eventLoop
        self.logger = logger
        self.decided = decided
    }

    /// How long the lock holds if this gateway dies mid-request: the route's timeout for each
    /// try, and a margin. Worked out once per route.
    package static func lockLifetime(timeout: Duration, attempts: Int) -> Duration {
        timeout * (attempts + 1) + .seconds(5)
    }

    /// Still reading the request's body for its fingerprint.
    package var readsBody: Bool { machine.readsBody }

    /// A part of the request as the client sends it, while ``readsBody``.
    package func requestPart(_ part: HTTPServerRequestPart) {
        switch part {
        case .head: break
        case .body(let chunk): perform(machine.requestBody(chunk))
        case .end: perform(machine.requestEnded(at: .now()))
        }
    }

    /// A request without a body: its fingerprint is known at once.
    package func requestEnded() {
        perform(machine.requestEnded(at: .now()))
    }

    package func responseHead(status: Int, headers: HTTPHeaders) {
        machine.responseHead(status: status, headers: headers)
    }

    package func responseBody(_ chunk: ByteBuffer) {
        machine.responseBody(chunk)
    }

    package func responseEnded() {
        machine.responseEnded()
    }

    /// The exchange is over, however it ended.
    package func finished() {
        decided = nil
        renewal?.cancel()
        renewal = nil
        perform(machine.finished(at: .now()))
    }

    /// Tells the exchange, once.
    private func decide(_ decision: Decision) {
        let decided = decided
        self.decided = nil
        decided?(decision)
    }

    private func perform(_ action: IdempotencyStateMachine.Action) {
        switch action {
        case .none:
            break
        case .lock(let fingerprint):
            self.fingerprint = fingerprint
            lockValue = IdempotencyRecord.lock(fingerprint: fingerprint, owner: IdempotencyOwner.next())
            // The callbacks hold this request (one reference), not copies of its fields.
            let bound = NIOLoopBound(self, eventLoop: eventLoop)
            store.lock(recordKey, fingerprint: fingerprint, lockValue: lockValue, lifetime: route.idempotencyLockLifetime, on: eventLoop) { result in
                let request = bound.value
                request.perform(request.machine.locked(request.outcome(result)))
            }
            listUnderUser()
        case .refuse(let error):
            if error == IdempotencyStateMachine.inFlight { IdempotencyMetrics.counted(route: route.name, .conflict) }
            if error == IdempotencyStateMachine.mismatch { IdempotencyMetrics.counted(route: route.name, .mismatch) }
            decide(.refuse(error))
        case .forward:
            let interval = TimeAmount(IdempotencyStateMachine.renewalInterval(lockLifetime: route.idempotencyLockLifetime))
            let bound = NIOLoopBound(self, eventLoop: eventLoop)
            renewal = eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
                let request = bound.value
                request.perform(request.machine.renewalDue(at: .now()))
            }
            decide(.forward)
        case .replay(let response):
            IdempotencyMetrics.counted(route: route.name, .replayed)
            decide(.replay(response))
        case .store(let response):
            let sealed: Data
            do {
                sealed = try store.secrets.seal(response.encoded(), recordKey: recordKey)
            } catch {
                perform(.release)
                return
            }
            let stored = IdempotencyRecord.stored(fingerprint: fingerprint, sealed: sealed)
            let bound = NIOLoopBound(self, eventLoop: eventLoop)
            store.store(recordKey, lockValue: lockValue, storedValue: stored, lifetime: settings.ttl.duration, on: eventLoop) { result in
                bound.value.stored(result)
            }
        case .release:
            let bound = NIOLoopBound(self, eventLoop: eventLoop)
            store.release(recordKey, lockValue: lockValue, on: eventLoop) { error in
                bound.value.logger.warning("freeing an Idempotency-Key failed; its lock expires", metadata: ["route": .string(bound.value.route.name), "error": "\(error)"])
            }
        case .renew:
            let bound = NIOLoopBound(self, eventLoop: eventLoop)
            store.renew(recordKey, lockValue: lockValue, lifetime: route.idempotencyLockLifetime, on: eventLoop) { result in
                let request = bound.value
                switch result {
                case .success(true): request.machine.renewed(.held)
                case .success(false):
                    request.machine.renewed(.lost)
                    request.logger.warning("an Idempotency-Key lock was lost while its response streamed", metadata: [
                        "route": .string(request.route.name), "request_id": .string(request.requestID),
                    ])
                case .failure(let error):
                    request.machine.renewed(.failed)
                    request.logger.warning("renewing an Idempotency-Key lock failed", metadata: [
                        "route": .string(request.route.name), "request_id": .string(request.requestID), "error": "\(error)",
                    ])
                }
            }
            listUnderUser()
        case .lockExpired:
            stored(.success(.expired))
        }
    }

    /// A driver's record is listed under them for as long as it may live: the lock's lifetime
    /// from now (or from a renewal), then the stored answer's `ttl`.
    private func listUnderUser() {
        guard let userID else { return }
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        IdempotencyUserIndex.add(
            recordKey, userID: userID, lifetime: route.idempotencyLockLifetime + settings.ttl.duration, redis: store.redis, on: eventLoop
        ) { error in
            bound.value.logger.warning("listing an Idempotency-Key record under its user failed", metadata: [
                "route": .string(bound.value.route.name), "error": "\(error)",
            ])
        }
    }

    private func stored(_ result: Result<IdempotencyStore.Stored, any Error>) {
        switch result {
        case .success(.stored):
            IdempotencyMetrics.counted(route: route.name, .stored)
        case .success(.expired):
            logger.warning("an idempotent response was not stored: its lock had expired", metadata: ["route": .string(route.name), "request_id": .string(requestID)])
        case .success(.replacedOther):
            IdempotencyMetrics.counted(route: route.name, .stored)
            logger.warning("an idempotent response replaced another request's record: its lock had been lost", metadata: [
                "route": .string(route.name), "request_id": .string(requestID),
            ])
        case .failure(let error):
            logger.warning("storing an idempotent response failed; its lock expires", metadata: [
                "route": .string(route.name), "request_id": .string(requestID), "error": "\(error)",
            ])
        }
    }

    private func outcome(_ result: Result<IdempotencyLock, any Error>) -> IdempotencyStateMachine.LockOutcome {
        switch result {
        case .success(.acquired): return .acquired
        case .success(.inFlight): return .inFlight
        case .success(.mismatch): return .mismatch
        case .success(.stored(let sealed)):
            guard let plaintext = store.secrets.open(sealed, recordKey: recordKey), let response = IdempotentResponse.decoded(plaintext) else {
                logger.error("a stored idempotent response does not open (users.phone_key_env changed?)", metadata: ["route": .string(route.name), "request_id": .string(requestID)])
                return .stored(nil)
            }
            return .stored(response)
        case .failure(let error):
            logger.warning("Idempotency-Key lock failed: answered 503", metadata: ["route": .string(route.name), "request_id": .string(requestID), "error": "\(error)"])
            return .failed
        }
    }
}

extension IdempotentRequest {
    package enum Start {
        /// Not a keyed request: the exchange goes on as usual (the header, if any, is forwarded).
        case notKeyed
        case refused(GatewayError)
        /// The exchange holds the request (and its body) until `decided` says what to do.
        case keyed(IdempotentRequest)
    }

    /// Whether `request`, admitted as `identity`, is a keyed one, once its caller is known.
    package static func start(
        _ request: ProxyEngine.Request, identity: ProxyIdentity, engine: ProxyEngine, on eventLoop: any EventLoop,
        decided: @escaping (Decision) -> Void
    ) -> Start {
        guard let settings = request.route.idempotency, let store = engine.idempotency else { return .notKeyed }
        switch IdempotencyKeyHeader.read(method: request.head.method, head: request.head, required: settings.required) {
        case .notKeyed:
            return .notKeyed
        case .refused(let error):
            return .refused(error)
        case .keyed(let key):
            return .keyed(IdempotentRequest(
                key: key, caller: caller(of: identity, clientIP: request.clientIP), userID: identity.userID, request: request, store: store,
                settings: settings, maxBodyBytes: engine.maxBodyBytes, eventLoop: eventLoop, logger: engine.logger, decided: decided
            ))
        }
    }

    /// Whose keys a request's are: the part of a record's name that says who the caller is. A
    /// driver's credential counts with its channel and partner: two partners enrolling one
    /// driver neither read each other's stored answers nor claim each other's keys.
    package static func caller(of identity: ProxyIdentity, clientIP: String?) -> String {
        if let userID = identity.userID {
            return "user:" + userID + " channel:" + (identity.channel ?? "") + " partner:" + (identity.partnerID ?? "")
        }
        return identity.partnerID.map { "partner:" + $0 } ?? "ip:" + (clientIP ?? "")
    }
}
