/// A gateway on a TLS listener (HTTP/2 by ALPN) with one open route, `prefix`, to a
/// ``ScriptedUpstream`` running `script`: what the HTTP/2 proxying tests start.
public struct ScriptedTLSGateway: Sendable {
    public let certificates: TestCertificates
    public let redis: RedisServer
    public let upstream: ScriptedUpstream
    public let gateway: GatewayProcess

    /// `extra`: top-level YAML lines for the gateway's configuration, each ending in a newline.
    public init(serving script: String, prefix: String = "/open", extra: String = "") async throws {
        let certificates = try await TestCertificates()
        let server = try await certificates.issue("gateway")
        let redis = try await RedisServer()
        let upstream = try await ScriptedUpstream(serving: script)
        do {
            gateway = try await GatewayProcess(yaml: DriverYAML.make(redis: redis, extra: extra + """
                tls: {cert_file: \(server.certFile), key_file: \(server.keyFile)}
                routes:
                  - {name: \(prefix.dropFirst()), path_prefix: \(prefix), upstream: "\(upstream.url)", auth: none}
                """))
        } catch {
            upstream.stop()
            throw error
        }
        self.certificates = certificates
        self.redis = redis
        self.upstream = upstream
    }

    /// An HTTP/2 client of the gateway that trusts its certificate.
    public var probe: HTTP2Probe { HTTP2Probe(port: gateway.port, caFile: certificates.caFile) }
}
