import Foundation
@testable import GatewayEndpoints
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
@testable import GatewayObservability
@testable import PartnerGateway
import RedisClient
import Testing
import TestSupport

@Suite("Admin listener: token and metrics", .realProcesses)
struct AdminListenerTests {
    private func adminApp(redis: RedisServer) async throws -> some ApplicationProtocol {
        let config = try TestConfig.load(TestConfig.yaml(redisURL: redis.url))
        GatewayMetrics.bootstrap()
        return Application(router: buildAdminRouter(try await GatewayDependencies(config: config, logger: Logger(label: "test"))))
    }

    @Test func tokenIsRequired() async throws {
        let redis = try await RedisServer()
        try await adminApp(redis: redis).test(.router) { client in
            for headers: HTTPFields in [[:], [.authorization: "Bearer wrong-token-wrong-token"], [.authorization: "Basic \(GatewayProcess.adminToken)"], [.authorization: "Bearer "]] {
                try await client.execute(uri: "/v1/partners", method: .get, headers: headers) { response in
                    #expect(response.status == .unauthorized)
                    let body = try JSONDecoder().decode(ErrorBody.self, from: Data(buffer: response.body))
                    #expect(body.error.code == "UNAUTHORIZED")
                }
            }
            // The right token gets past the check (no such admin path yet: 404, not 401).
            try await client.execute(uri: "/v1/nothing-here", method: .get, headers: [.authorization: "Bearer \(GatewayProcess.adminToken)"]) { response in
                #expect(response.status == .notFound)
            }
        }
    }

    @Test func metricsArePrometheusText() async throws {
        let redis = try await RedisServer()
        let publicApp = try await buildApplication(TestConfig.load(TestConfig.yaml(redisURL: redis.url)), logger: Logger(label: "test"))
        try await publicApp.test(.router) { client in
            for _ in 0..<3 {
                try await client.execute(uri: "/healthz", method: .get) { _ in }
            }
            try await client.execute(uri: "/partner/v1/whoami", method: .get, headers: [HTTPField.Name("X-API-Key")!: "pgk_live_not-a-key"]) { _ in }
        }
        try await adminApp(redis: redis).test(.router) { client in
            try await client.execute(uri: "/v1/partners", method: .post, headers: [.authorization: "Bearer \(GatewayProcess.adminToken)"], body: ByteBuffer(string: #"{"name": "Metered"}"#)) { response in
                #expect(response.status == .created)
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType]?.hasPrefix("text/plain") == true)
                let text = String(buffer: response.body)
                #expect(text.contains("# TYPE gateway_http_requests_total counter"))
                #expect(text.contains(#"listener="public""#))
                #expect(text.contains(#"route="/healthz""#))
                #expect(text.contains(#"status="200""#))
                #expect(text.contains("gateway_http_request_duration_seconds_bucket"))
                // Key verifications by result and admin actions by kind.
                #expect(text.contains(#"gateway_api_key_verifications_total{result="invalid"}"#))
                #expect(text.contains(#"gateway_admin_actions_total{action="partner.create"}"#))
            }
        }
    }
}
