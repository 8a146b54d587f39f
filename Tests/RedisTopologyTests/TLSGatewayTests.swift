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

    @Test(arguments: ["wrong CA", "wrong host name"])
    func aCertificateTheGatewayMustNotTrustStopsStartUp(_ case: String) async throws {
        let certificates = try await RedisTestCertificates()
        let redis = try await RedisServer(tls: certificates)
        defer { withExtendedLifetime(redis) {} }
        let tls = `case` == "wrong CA"
            ? "tls: {ca_file: \(certificates.otherCAFile), server_name: localhost}"
            : "tls: {ca_file: \(certificates.caFile), server_name: redis.example.org}"
        let upstream = try await EchoUpstreamProcess()
        defer { upstream.stop() }
        let gateway = try await GatewayProcess(
            yaml: GatewayFlow.yaml(redisURL: redis.url, redisExtra: tls, upstream: upstream), waitUntilListening: false
        )
        let status = try await gateway.process.waitForExit(timeout: .seconds(20))
        #expect(status == 1)
        let lines = gateway.log.split(whereSeparator: \.isNewline)
        let refusals = lines.filter { $0.contains("TLS refused") }
        #expect(refusals.count == 1, "\(gateway.log)")
        #expect(lines.count == 1, "one line, not a trace: \(gateway.log)")
        #expect(!LoopbackPort.isAccepting(gateway.port))
        print("redis TLS, \(`case`): exit \(status): \(refusals.first ?? "")")
    }
}
