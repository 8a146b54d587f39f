import Foundation
@testable import RedisClient
import Testing
import TestSupport

/// Slot hashing and the reading of cluster redirections, without a cluster.
@Suite struct RedisHashSlotTests {
    /// Vectors from the Redis Cluster specification and `CLUSTER KEYSLOT` of Redis 7.
    @Test(arguments: [
        ("123456789", 12739), ("foo", 12182), ("{user1000}.following", 3443), ("{user1000}.followers", 3443),
        ("foo{bar}{zap}", 5061), ("{}x", 10595), ("a{}{b}", 15033), ("pg:user:{abc}:sessions", 7638), ("", 0),
    ])
    func knownVectors(key: String, slot: Int) {
        #expect(RedisHashSlot.of(key) == slot)
    }

    /// Every key shape the gateway writes, and random ones, hash as a real node says.
    @Test func agreesWithClusterKeyslot() async throws {
        let server = try await RedisServer(extraArguments: ["--cluster-enabled", "yes", "--cluster-port", String(LoopbackPort.free())])
        var keys = ["pg:rl:{route:limited:user:usr_1}", "pg:rt:{sid_9}:abc", "pg:rtfam:{sid_9}", "pg:revoked-sessions", "{", "}{", "{a", "x{}}{y}"]
        for _ in 0..<40 {
            keys.append("pg:user:{\(RedisHashSlot.randomTag(prefix: "usr_", randomDigits: 19, inSlot: Int.random(in: 0..<RedisHashSlot.count)))}")
            keys.append("pg:apikey:{\(UUID().uuidString)}")
            keys.append(String((0..<Int.random(in: 1...24)).map { _ in "ab{}:_xyz019".randomElement()! }))
        }
        // One redis-cli for every key (commands on its stdin, one a line; no key has a space).
        let script = keys.map { "CLUSTER KEYSLOT \"\($0)\"" }.joined(separator: "\n") + "\n"
        let answers = try await ShortCommand.run("/usr/bin/redis-cli", ["-p", String(server.port)], standardInput: Data(script.utf8))
            .stdout.split(whereSeparator: \.isNewline).map { Int($0) }
        #expect(answers.count == keys.count)
        for (key, answer) in zip(keys, answers) {
            #expect(answer == RedisHashSlot.of(key), "\(key)")
        }
    }

    /// A tag drawn for a slot lands in it, for every slot: its prefix, its random digits and
    /// the five chosen ones, all lowercase hex after the prefix.
    @Test func randomTagsLandInTheSlotTheyWereDrawnFor() {
        for slot in 0..<RedisHashSlot.count {
            let tag = RedisHashSlot.randomTag(prefix: "usr_", randomDigits: 19, inSlot: slot)
            #expect(RedisHashSlot.of("pg:user:{\(tag)}:sessions") == slot, "\(tag)")
            #expect(tag.hasPrefix("usr_") && tag.count == 28 && tag.dropFirst(4).allSatisfy { "0123456789abcdef".contains($0) }, "\(tag)")
        }
        let drawn = (0..<100).map { _ in RedisHashSlot.randomTag(randomDigits: 11, inSlot: 42) }
        #expect(Set(drawn).count == 100, "the random digits differ")
        #expect(drawn.allSatisfy { $0.count == 16 && RedisHashSlot.of($0) == 42 })
    }

    /// Each typed command declares its keys; the first decides the slot.
    @Test func commandsAreRoutedByTheirFirstKey() {
        let script = RedisScript(name: "t", source: "return 1")
        #expect(RedisHashSlot.of(.get("foo")) == 12182)
        #expect(RedisHashSlot.of(.evalsha(script, keys: ["{user1000}.a", "{user1000}.b"], arguments: ["arg"])) == 3443)
        #expect(RedisHashSlot.of(.evalsha(script, keys: [], arguments: ["arg"])) == nil)
        #expect(RedisHashSlot.of(.ping()) == nil)
        #expect(RedisHashSlot.of(.wait(replicas: 1, timeout: .milliseconds(100))) == nil)
        #expect(RedisHashSlot.of(.info("memory")) == nil)
        #expect(RedisHashSlot.of(.publish("{foo}", "x")) == nil, "a channel is not a key")
        #expect(RedisCommand.get("foo").isReadOnly && !RedisCommand.set("foo", "x").isReadOnly)
    }

    @Test func redirectionsAreRead() {
        let asked = RedisNodeAddress(host: "10.0.0.9", port: 7000)
        #expect(RedisRedirection(message: "MOVED 3999 127.0.0.1:6381", answeredBy: asked) == .moved(slot: 3999, to: .init(host: "127.0.0.1", port: 6381)))
        #expect(RedisRedirection(message: "ASK 3999 127.0.0.1:6381", answeredBy: asked) == .ask(slot: 3999, to: .init(host: "127.0.0.1", port: 6381)))
        #expect(RedisRedirection(message: "MOVED 12 :7002", answeredBy: asked) == .moved(slot: 12, to: .init(host: "10.0.0.9", port: 7002)))
        #expect(RedisRedirection(message: "MOVED 12 fe80::1:7002", answeredBy: asked) == .moved(slot: 12, to: .init(host: "fe80::1", port: 7002)))
        #expect(RedisRedirection(message: "TRYAGAIN Multiple keys request during rehashing of slot", answeredBy: asked) == .tryAgain)
        #expect(RedisRedirection(message: "CLUSTERDOWN The cluster is down", answeredBy: asked) == .tryAgain)
        for other in ["ERR wrong number of arguments", "MOVED 99999 127.0.0.1:1", "MOVED x 127.0.0.1:1", "ASK 1 nowhere", "NOSCRIPT No matching script"] {
            #expect(RedisRedirection(message: other, answeredBy: asked) == nil, "\(other)")
        }
        #expect(RedisRedirection(.bulkString(Array("MOVED 1 a:1".utf8)), answeredBy: asked) == nil, "only error replies redirect")
    }

    @Test func nodeAddressesAreParsed() {
        #expect(RedisNodeAddress("127.0.0.1:7000") == RedisNodeAddress(host: "127.0.0.1", port: 7000))
        #expect(RedisNodeAddress("[::1]:7000") == RedisNodeAddress(host: "::1", port: 7000))
        #expect(RedisNodeAddress("redis-1") == nil)
        #expect(RedisNodeAddress("redis-1:0") == nil)
    }
}
