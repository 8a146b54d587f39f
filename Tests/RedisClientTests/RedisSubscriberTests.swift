import Foundation
import RedisClient
import Testing
import TestSupport

/// The invalidation subscriber resets the caches only once Redis has confirmed the
/// subscription: a reset before that would leave a window in which an invalidation reaches
/// nobody and a stale entry is cached again.
///
/// Redis's `CLIENT PAUSE ... ALL` holds every client's commands, `SUBSCRIBE` included, for a
/// known time, so the confirmation cannot come before the pause ends: a reset seen earlier is
/// the bug.
@Suite(.serialized, .timingSensitive) struct RedisSubscriberTests {
    static let pause = Duration.milliseconds(800)

    private func subscriber(_ server: RedisServer, _ events: SubscriberEvents) throws -> RedisSubscriber {
        RedisSubscriber(
            configuration: RedisConfiguration(url: try RedisURL(server.url), poolSize: 1, timeout: .seconds(3), reconnectBackoff: .milliseconds(50)),
            channels: ["pg:invalidate", "pg:other"],
            onReset: { events.reset() },
            onMessage: { _, payload in events.message(payload) }
        )
    }

    /// Pauses every client of `server` for ``pause``; returns when the pause began.
    private func pauseClients(_ server: RedisServer) async throws -> ContinuousClock.Instant {
        let before = ContinuousClock.now
        #expect(try await server.cli("CLIENT", "PAUSE", String(Self.pause.milliseconds), "ALL") == "OK")
        return before
    }

    @Test func theFirstResetWaitsForTheConfirmation() async throws {
        let server = try await RedisServer()
        let events = SubscriberEvents()
        let pausedAt = try await pauseClients(server)
        let task = Task { try await subscriber(server, events).run() }
        defer { task.cancel() }
        try await eventually(timeout: .seconds(5)) { events.resets >= 1 }
        let first = try #require(events.resetTimes.first)
        #expect(first - pausedAt >= Self.pause - .milliseconds(20), "reset \(first - pausedAt) after the pause began, before Redis confirmed")
        // Confirmed means subscribed: what is published now arrives.
        try await server.cli("PUBLISH", "pg:invalidate", "after-reset")
        try await eventually(timeout: .seconds(2)) { events.messages.contains("after-reset") }
    }

    @Test func everyReconnectWaitsForTheConfirmation() async throws {
        let server = try await RedisServer()
        let events = SubscriberEvents()
        let task = Task { try await subscriber(server, events).run() }
        defer { task.cancel() }
        try await eventually(timeout: .seconds(5)) { events.resets >= 1 }
        // Drop the subscription and hold Redis in one go: the subscriber reconnects at once,
        // but its new SUBSCRIBE is answered only when the pause ends.
        let before = ContinuousClock.now
        let result = try await ShortCommand.run("/bin/sh", ["-c",
            "printf 'CLIENT KILL TYPE pubsub\\nCLIENT PAUSE \(Self.pause.milliseconds) ALL\\n' | redis-cli -p \(server.port)"])
        #expect(result.status == 0)
        try await eventually(timeout: .seconds(5)) {
            events.resetTimes.contains { $0 - before >= Self.pause - .milliseconds(20) }
        }
        // A reset when the loss is noticed is fine (it only empties the caches); what matters is
        // that no reset claims a subscription before Redis has one: none between the loss and
        // the end of the pause except that first one.
        let afterLoss = events.resetTimes.filter { $0 > before }
        let early = afterLoss.filter { $0 - before < Self.pause - .milliseconds(20) }
        #expect(early.count <= 1, "resets during the pause: \(early.map { $0 - before })")
        try await server.cli("PUBLISH", "pg:other", "after-reconnect")
        try await eventually(timeout: .seconds(2)) { events.messages.contains("after-reconnect") }
    }
}

extension Duration {
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
