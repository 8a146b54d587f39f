import Foundation

/// A throw-away certificate authority and the certificates a Redis TLS test needs, made with the
/// `openssl` command line in a fresh temporary folder (P-256 keys, valid for two days).
///
/// - `caFile`: the CA that signed the server and client certificates;
/// - `serverCertificate` / `serverKey`: for the name `localhost` only (no IP address entry, so
///   a client connecting to 127.0.0.1 must be told the name);
/// - `clientCertificate` / `clientKey`: for Redis's `tls-auth-clients`;
/// - `otherCAFile`: a CA that signed nothing here, to be refused with.
public struct RedisTestCertificates: Sendable {
    public var directory: URL { folder.url }
    private let folder: TemporaryFolder

    public var caFile: String { path("ca.crt") }
    public var otherCAFile: String { path("other-ca.crt") }
    public var serverCertificate: String { path("server.crt") }
    public var serverKey: String { path("server.key") }
    public var clientCertificate: String { path("client.crt") }
    public var clientKey: String { path("client.key") }

    public init() async throws {
        folder = try TemporaryFolder("pg-certs")
        try "subjectAltName=DNS:localhost\n".write(toFile: path("server.ext"), atomically: true, encoding: .utf8)
        try "extendedKeyUsage=clientAuth\n".write(toFile: path("client.ext"), atomically: true, encoding: .utf8)
        try await authority("ca")
        try await authority("other-ca")
        try await signed("server", commonName: "localhost")
        try await signed("client", commonName: "partner-gateway")
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private static let newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

    private func authority(_ name: String) async throws {
        try await openssl(["req", "-x509"] + Self.newKey + ["-keyout", path("\(name).key"), "-out", path("\(name).crt"), "-days", "2", "-subj", "/CN=pg-test-\(name)"])
    }

    private func signed(_ name: String, commonName: String) async throws {
        try await openssl(["req"] + Self.newKey + ["-keyout", path("\(name).key"), "-out", path("\(name).csr"), "-subj", "/CN=\(commonName)"])
        try await openssl([
            "x509", "-req", "-in", path("\(name).csr"), "-CA", caFile, "-CAkey", path("ca.key"), "-CAcreateserial",
            "-out", path("\(name).crt"), "-days", "2", "-extfile", path("\(name).ext"),
        ])
    }

    private func openssl(_ arguments: [String]) async throws {
        let result = try await ShortCommand.run("/usr/bin/openssl", arguments)
        guard result.status == 0 else { throw OpenSSLFailed(arguments: arguments, stderr: result.stderr) }
    }
}
