import Foundation
import Testing
import TestSupport

/// `https://` upstreams: verification on, SNI and host checked, mutual TLS, pooled
/// connections; a certificate the gateway cannot trust is `502` and one log line saying why.
@Suite("TLS: https upstreams", .serialized, .realProcesses)
struct UpstreamTLSTests {
    @Test func verifiedUpstreamsResponseAndUntrustedOnesAre502WithALogLine() async throws {
        let certificates = try await TestCertificates()
        let good = try await EchoUpstreamProcess(tls: try await certificates.issue("upstream"))
        let expired = try await EchoUpstreamProcess(tls: try await certificates.issue("expired", expired: true))
        let wrongHost = try await EchoUpstreamProcess(tls: try await certificates.issue("wrong-host", names: ["wrong.example"]))
        let client = try await certificates.issue("gateway-client")
        let mutual = try await EchoUpstreamProcess(tls: try await certificates.issue("mutual"), clientCAFile: certificates.caFile)
        defer { [good, expired, wrongHost, mutual].forEach { $0.stop() } }
        let redis = try await RedisServer()
        let trust = "tls: {ca_file: \(certificates.caFile)}"
        let yaml = DriverYAML.make(redis: redis, extra: """
            server: {event_loops: 1}
            routes:
              - {name: good, path_prefix: /good, upstream: \(good.url)/base, auth: none, \(trust)}
              - {name: system-trust, path_prefix: /system, upstream: \(good.url), auth: none}
              - {name: expired, path_prefix: /expired, upstream: \(expired.url), auth: none, \(trust)}
              - {name: wrong-host, path_prefix: /wrong, upstream: \(wrongHost.url), auth: none, \(trust)}
              - {name: mutual, path_prefix: /mutual, upstream: \(mutual.url), auth: none, tls: {ca_file: \(certificates.caFile), cert_file: \(client.certFile), key_file: \(client.keyFile)}}
              - {name: mutual-no-cert, path_prefix: /no-cert, upstream: \(mutual.url), auth: none, \(trust)}
            """)
        let gateway = try await GatewayProcess(yaml: yaml)
        let curl = Curl(caFile: nil)

        for attempt in 1...5 {
            let answer = try await curl.call(.http1, "GET", gateway.baseURL + "/good/x?n=\(attempt)")
            #expect(answer.status == 200, "\(answer)")
            #expect(answer.json["path"] as? String == "/base/good/x", "\(answer)")
        }
        // One event loop, sequential requests: one pooled TLS connection served all five.
        let connections = try await ShortCommand.run("/usr/bin/ss", ["-Htn", "state", "established", "( dport = :\(good.port) )"])
        #expect(connections.stdout.split(separator: "\n").count == 1, "\(connections.stdout)")

        #expect(try await curl.call(.http1, "GET", gateway.baseURL + "/mutual/x").status == 200)

        // Without a client certificate a TLS 1.3 client completes its handshake before the
        // upstream refuses it: 502 all the same, logged as the upstream closing.
        let noCertificate = try await curl.call(.http1, "GET", gateway.baseURL + "/no-cert/x")
        #expect(noCertificate.status == 502, "\(noCertificate)")

        for (path, upstream) in [("/expired/x", expired), ("/wrong/x", wrongHost), ("/system/x", good)] {
            let answer = try await curl.call(.http1, "GET", gateway.baseURL + path)
            #expect(answer.status == 502, "\(path): \(answer)")
            #expect((answer.json["error"] as? [String: Any])?["code"] as? String == "UPSTREAM_UNAVAILABLE", "\(path): \(answer)")
            let line = gateway.log.split(separator: "\n").first {
                $0.contains("upstream tls handshake failed") && $0.contains("127.0.0.1:\(upstream.port)")
            }
            #expect(line != nil, "\(path): no log line in \(gateway.log.suffix(2000))")
        }
        let lines = gateway.log.split(separator: "\n")
        #expect(lines.contains { $0.contains("127.0.0.1:\(expired.port)") && $0.contains("certificate has expired") }, "\(gateway.log.suffix(2000))")
        #expect(lines.contains { $0.contains("127.0.0.1:\(wrongHost.port)") && $0.contains("does not match the host") }, "\(gateway.log.suffix(2000))")
    }
}
