import Foundation
import Testing
import TestSupport

/// The gateway on a TLS-only Redis (`redis-server --tls-port`, certificates made by the test):
/// every flow works, and a certificate it must not trust stops start-up with one line.
@Suite(.serialized, .realProcesses) struct TLSGatewayTests {
    @Test func everyFlowWorksOverTLS() async throws {
        let certificates = try await RedisTestCertificates()
        let redis = try await RedisServer(tls: certificates, requireClientCertificate: true)
        defer { withExtendedLifetime(redis) {} }
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(yaml: GatewayFlow.yaml(
            redisURL: redis.url,
            redisExtra: "tls: {ca_file: \(certificates.caFile), cert_file: \(certificates.clientCertificate), key_file: \(certificates.clientKey), server_name: localhost}",
            upstream: upstream
        ))
        try await GatewayFlow(gateway: gateway).run()
        // Nothing reached Redis in the clear: it has no plain port at all.
        #expect(try await redis.cli("CONFIG", "GET", "port").hasSuffix("0"))
        // The start-up check ran over TLS too.
        #expect(!gateway.log.contains("maxmemory-policy"), "\(gateway.log)")
    }

    /// A new user's three ways to get the certificate wrong: each stops start-up with one
    /// line naming the TLS refusal, and neither a trace nor a secret (the Redis password from
    /// the environment, the gateway's own keys) is printed.
    @Test(arguments: ["wrong CA", "wrong host name", "IP address without server_name"])
    func aCertificateTheGatewayMustNotTrustStopsStartUp(_ case: String) async throws {
        let certificates = try await RedisTestCertificates()
        let redis = try await RedisServer(tls: certificates)
        defer { withExtendedLifetime(redis) {} }
        let tls = switch `case` {
        case "wrong CA": "tls: {ca_file: \(certificates.otherCAFile), server_name: localhost}"
        case "wrong host name": "tls: {ca_file: \(certificates.caFile), server_name: redis.example.org}"
        // The certificate names localhost only, and the URL's host is 127.0.0.1.
        default: "tls: {ca_file: \(certificates.caFile)}"
        }
        let password = "tls-refusal-password-0123456789"
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(
            yaml: GatewayFlow.yaml(
                redisURL: redis.url.replacingOccurrences(of: "://", with: "://gateway@"),
                redisExtra: tls + "\npassword_env: GATEWAY_REDIS_PASSWORD", upstream: upstream
            ),
            environment: ["GATEWAY_REDIS_PASSWORD": password],
            waitUntilListening: false
        )
        let status = try await gateway.process.waitForExit(timeout: .seconds(20))
        #expect(status == 1)
        let lines = gateway.log.split(whereSeparator: \.isNewline)
        #expect(lines.count == 1, "one line, not a trace: \(gateway.log)")
        let reason = switch `case` {
        case "wrong CA": "certificate is not trusted"
        case "wrong host name": "certificate is not for this host (Couldn't find redis.example.org in certificate"
        default: "certificate does not list the IP address connected to (set redis.tls.server_name"
        }
        #expect(lines.first?.contains("cannot use redis: TLS refused: ") == true && lines.first?.contains(reason) == true, "\(gateway.log)")
        // No BoringSSL source path or error number: a line an operator reads, not a trace.
        #expect(!gateway.log.contains(".build/") && !gateway.log.contains("BoringSSL"), "\(gateway.log)")
        for secret in [password, GatewayProcess.adminToken, GatewayProcess.jwtSecret, GatewayProcess.phoneKey] {
            #expect(!gateway.log.contains(secret), "a secret in the log: \(gateway.log)")
        }
        #expect(!LoopbackPort.isAccepting(gateway.port))
        print("redis TLS, \(`case`): exit \(status): \(lines.first ?? "")")
    }
}
