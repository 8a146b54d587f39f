import NIOSSL

extension GatewayConfig {
    /// A listener's TLS: `tls` for the public listener, `admin.tls` for the admin one. Absent,
    /// the listener speaks plain HTTP (development, or behind a load balancer that terminates
    /// TLS itself).
    package struct ListenerTLS: Sendable, Decodable {
        package enum MinimumVersion: String, Sendable, ConfigEnum {
            case tls12 = "1.2"
            case tls13 = "1.3"

            package var nioVersion: TLSVersion { self == .tls12 ? .tlsv12 : .tlsv13 }
        }

        /// PEM, the server's certificate first and then its intermediates (the full chain).
        package var certFile: String
        /// PEM private key of the first certificate in `certFile`.
        package var keyFile: String
        package var minVersion = MinimumVersion.tls12

        package enum CodingKeys: String, CodingKey, CaseIterable {
            case certFile = "cert_file"
            case keyFile = "key_file"
            case minVersion = "min_version"
        }
        package init(from decoder: any Decoder) throws {
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            certFile = try keys.decode(String.self, forKey: .certFile)
            keyFile = try keys.decode(String.self, forKey: .keyFile)
            // YAML reads an unquoted 1.2 as a number; operators should not have to quote it.
            if let number = try? keys.decodeIfPresent(Double.self, forKey: .minVersion) {
                guard let version = MinimumVersion(rawValue: String(number)) else {
                    throw ConfigError(path: decoder.codingPath + [CodingKeys.minVersion], "\"\(number)\" is not one of: 1.2, 1.3")
                }
                minVersion = version
            } else {
                minVersion = try keys.value(.minVersion, or: minVersion)
            }
        }
    }

    /// A route's `tls`, for an `https://` upstream: whom to trust and, for mutual TLS, which
    /// certificate the gateway shows. Verification is always on.
    package struct UpstreamTLS: Sendable, Hashable, Decodable {
        /// PEM certificates trusted for this upstream instead of the system's trust store.
        package var caFile: String?
        /// PEM client certificate (and chain) for mutual TLS, with `keyFile`.
        package var certFile: String?
        package var keyFile: String?

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case caFile = "ca_file"
            case certFile = "cert_file"
            case keyFile = "key_file"
        }
        package init(from decoder: any Decoder) throws {
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            caFile = try keys.decodeIfPresent(String.self, forKey: .caFile)
            certFile = try keys.decodeIfPresent(String.self, forKey: .certFile)
            keyFile = try keys.decodeIfPresent(String.self, forKey: .keyFile)
        }
    }
}

/// The settings as NIOSSL contexts: made here, next to the settings, so that start-up's check
/// and the listener or upstream that serves them build the very same context.
extension GatewayConfig.ListenerTLS {
    /// Forward-secret AEAD suites only (TLS 1.2; TLS 1.3's suites are all of that kind).
    package static let cipherSuites = "ECDHE+AESGCM:ECDHE+CHACHA20"
    /// What ALPN offers, preferred first: HTTP/2, then HTTP/1.1.
    package static let applicationProtocols = ["h2", "http/1.1"]

    package func makeServerContext() throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(certFile)
        guard !chain.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
        let key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        configuration.minimumTLSVersion = minVersion.nioVersion
        configuration.cipherSuites = Self.cipherSuites
        configuration.applicationProtocols = Self.applicationProtocols
        configuration.renegotiationSupport = .none
        return try NIOSSLContext(configuration: configuration)
    }

    /// Start-up's check: the files load and the key matches, else one configuration error.
    package func check(key: String) throws(ConfigError) {
        do {
            _ = try makeServerContext()
        } catch {
            throw ConfigError(key: key, "cannot use \(certFile) with \(keyFile): \(error)")
        }
    }
}

extension GatewayConfig.UpstreamTLS {
    package func clientConfiguration() throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.certificateVerification = .fullVerification
        configuration.cipherSuites = GatewayConfig.ListenerTLS.cipherSuites
        configuration.applicationProtocols = ["http/1.1"]
        if let caFile {
            configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
        }
        if let certFile, let keyFile {
            configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certFile).map { .certificate($0) }
            configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem))
        }
        return configuration
    }

    /// Start-up's check of a route's `tls`: the files load, a client certificate has its key.
    package func check(key: String) throws(ConfigError) {
        guard (certFile == nil) == (keyFile == nil) else {
            throw ConfigError(key: key, "cert_file and key_file go together (the client certificate for mutual TLS)")
        }
        do {
            _ = try NIOSSLContext(configuration: clientConfiguration())
        } catch {
            throw ConfigError(key: key, "cannot load its certificate files: \(error)")
        }
    }
}
