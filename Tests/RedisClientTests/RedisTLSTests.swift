import Foundation
import NIOCore
import RedisClient
import Testing
import TestSupport

/// `rediss://`: every connection is TLS with the server's certificate and host name checked,
/// against a real `redis-server --tls-port` with certificates the test makes.
@Suite(.realProcesses) struct RedisTLSTests {
    private func pool(_ server: RedisServer, _ settings: RedisTLS.Settings, url: String? = nil) throws -> RedisConnectionPool {
        RedisConnectionPool(configuration: RedisConfiguration(
            url: try RedisURL(url ?? server.url), tls: try RedisTLS(settings), poolSize: 2, timeout: .seconds(2)
        ))
    }

    @Test func commandsWorkOverTLSWithTheConfiguredCA() async throws {
        let certificates = try await RedisTestCertificates()
        let server = try await RedisServer(tls: certificates)
        let redis = try pool(server, .init(caFile: certificates.caFile, serverName: "localhost"))
        defer { redis.shutdown() }
        _ = try await redis.send(.set("over-tls", "yes"))
        #expect(try await redis.send(.get("over-tls")).string == "yes")
        // The same through the server's DNS name, with no server_name.
        let byName = try pool(server, .init(caFile: certificates.caFile), url: "rediss://localhost:\(server.port)/0")
        defer { byName.shutdown() }
        #expect(try await byName.send(.get("over-tls")).string == "yes")
    }

    @Test func aClientCertificateIsPresentedWhenRedisRequiresOne() async throws {
        let certificates = try await RedisTestCertificates()
        let server = try await RedisServer(tls: certificates, requireClientCertificate: true)
        let withCertificate = try pool(server, .init(
            caFile: certificates.caFile, certificateFile: certificates.clientCertificate, privateKeyFile: certificates.clientKey,
            serverName: "localhost"
        ))
        defer { withCertificate.shutdown() }
        try await withCertificate.ping()
        let without = try pool(server, .init(caFile: certificates.caFile, serverName: "localhost"))
        defer { without.shutdown() }
        await #expect(throws: RedisError.self) { try await without.ping() }
    }

    @Test func aCertificateFromAnotherCAIsRefused() async throws {
        let certificates = try await RedisTestCertificates()
        let server = try await RedisServer(tls: certificates)
        let redis = try pool(server, .init(caFile: certificates.otherCAFile, serverName: "localhost"))
        defer { redis.shutdown() }
        let error = try await #require(throws: RedisError.self) { try await redis.ping() }
        #expect(error.isTLS, "\(error)")
    }

    @Test func aCertificateForAnotherHostIsRefused() async throws {
        let certificates = try await RedisTestCertificates()
        let server = try await RedisServer(tls: certificates)
        let redis = try pool(server, .init(caFile: certificates.caFile, serverName: "redis.example.org"))
        defer { redis.shutdown() }
        let error = try await #require(throws: RedisError.self) { try await redis.ping() }
        #expect(error.isTLS, "\(error)")
        #expect(error.description.contains("redis.example.org"), "\(error)")
        // By address with no name: the certificate lists no IP address, so it is refused too.
        let byAddress = try pool(server, .init(caFile: certificates.caFile))
        defer { byAddress.shutdown() }
        let addressError = try await #require(throws: RedisError.self) { try await byAddress.ping() }
        #expect(addressError.isTLS, "\(addressError)")
    }

    @Test func unreadableFilesAreRefusedWhenTheSettingsAreLoaded() {
        #expect(throws: RedisError.self) { try RedisTLS(.init(caFile: "/nonexistent/ca.pem")) }
        #expect(throws: RedisError.self) { try RedisTLS(.init(certificateFile: "/nonexistent/client.pem")) }
        #expect(throws: RedisError.self) { try RedisTLS(.init(serverName: "127.0.0.1")) }
    }

    @Test func theSubscriberListensOverTLS() async throws {
        let certificates = try await RedisTestCertificates()
        let server = try await RedisServer(tls: certificates)
        let configuration = RedisConfiguration(
            url: try RedisURL(server.url), tls: try RedisTLS(.init(caFile: certificates.caFile, serverName: "localhost")), poolSize: 1, timeout: .seconds(2)
        )
        let received = SubscriberEvents()
        let subscriber = RedisSubscriber(
            configuration: configuration, channels: ["pg:invalidate"],
            onReset: { received.reset() }, onMessage: { _, payload in received.message(payload) }
        )
        let task = Task { try await subscriber.run() }
        defer { task.cancel() }
        try await eventually(timeout: .seconds(5)) { received.resets >= 1 }
        let publisher = RedisConnectionPool(configuration: configuration)
        defer { publisher.shutdown() }
        try await eventually(timeout: .seconds(5)) {
            _ = try await publisher.send(.publish("pg:invalidate", "key_1"))
            return received.messages.contains("key_1")
        }
    }
}
