import Foundation
@testable import GatewayEndpoints
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
@testable import PartnerGateway
import Testing
import TestSupport

@Suite("Public listener: health, readiness, errors, request ids", .realProcesses)
struct PublicListenerTests {
    private func app(redis: RedisServer, extra: String = "") async throws -> some ApplicationProtocol {
        try await buildApplication(TestConfig.load(TestConfig.yaml(redisURL: redis.url, extra: extra)), logger: Logger(label: "test"))
    }

    @Test func healthzAndRequestID() async throws {
        let redis = try await RedisServer()
        try await app(redis: redis).test(.router) { client in
            try await client.execute(uri: "/healthz", method: .get) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == #"{"status":"ok"}"#)
                let id = try #require(response.headers[.xRequestID])
                #expect(id.count == 32)
            }
            try await client.execute(uri: "/healthz", method: .get, headers: [.xRequestID: "trace-abc.123:9"]) { response in
                #expect(response.headers[.xRequestID] == "trace-abc.123:9")
            }
            // An insane id (spaces, too long) is replaced, never echoed.
            try await client.execute(uri: "/healthz", method: .get, headers: [.xRequestID: "evil id\\r\\n"]) { response in
                #expect(response.headers[.xRequestID] != "evil id\\r\\n")
                #expect(response.headers[.xRequestID]?.count == 32)
            }
        }
    }

    @Test func readyzFollowsRedis() async throws {
        let redis = try await RedisServer()
        try await app(redis: redis).test(.router) { client in
            try await client.execute(uri: "/readyz", method: .get) { response in
                #expect(response.status == .ok)
            }
            await redis.stop()
            // Readiness follows what the gateway already knows (its subscription's heartbeat),
            // not a PING per probe: it turns as soon as the loss is noticed.
            try await eventually(timeout: .seconds(5)) {
                try await client.execute(uri: "/readyz", method: .get) { $0.status == .serviceUnavailable }
            }
            try await client.execute(uri: "/readyz", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                let body = try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body))
                #expect(body.error.code == "SERVICE_UNAVAILABLE")
                #expect(response.headers[.xRequestID] != nil)
            }
            try await redis.start()
            try await eventually(timeout: .seconds(2)) {
                try await client.execute(uri: "/readyz", method: .get) { $0.status == .ok }
            }
        }
    }

    @Test func unknownPathsAndMethodsGetTheSpecShape() async throws {
        let redis = try await RedisServer()
        try await app(redis: redis).test(.router) { client in
            try await client.execute(uri: "/no/such/thing?x=1", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == "application/json")
                #expect(response.headers[.xRequestID] != nil)
                let body = try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body))
                #expect(body.error.code == "NOT_FOUND")
                #expect(!body.error.message.isEmpty)
            }
            try await client.execute(uri: "/healthz", method: .delete) { response in
                #expect(response.status.code >= 400 && response.status.code < 500)
                let body = try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body))
                #expect(["METHOD_NOT_ALLOWED", "NOT_FOUND"].contains(body.error.code))
            }
        }
    }
}

/// The gateway's error shape, decoded strictly: a response that is not in it fails the test.
struct ErrorBody: Decodable {
    struct Detail: Decodable {
        let code: String
        let message: String
    }
    let error: Detail
}
