import NIOSSL

extension GatewayConfig {
    /// A listener's TLS: `tls` for the public listener, `admin.tls` for the admin one. Absent,
    /// the listener speaks plain HTTP (development, or behind a load balancer that terminates
    /// TLS itself).
    package struct ListenerTLS: Sendable, ConfigSection {
        package enum MinimumVersion: String, Sendable, ConfigEnum {
            case tls12 = "1.2"
            case tls13 = "1.3"

            package var nioVersion: TLSVersion { self == .tls12 ? .tlsv12 : .tlsv13 }
        }

        /// PEM, the server's certificate first and then its intermediates (the full chain).
        @Key("cert_file", .required) package var certFile = ""
        /// PEM private key of the first certificate in `certFile`.
        @Key("key_file", .required) package var keyFile = ""
        @Key("min_version", read: ListenerTLS.minimumVersion) package var minVersion = MinimumVersion.tls12

        package init() {}

        /// YAML reads an unquoted 1.2 as a number; operators should not have to quote it.
        private static func minimumVersion(_ keys: KeyedDecodingContainer<AnyConfigKey>, _ key: AnyConfigKey) throws -> MinimumVersion {
            guard let number = try? keys.decode(Double.self, forKey: key) else { return try keys.decode(MinimumVersion.self, forKey: key) }
            guard let version = MinimumVersion(rawValue: String(number)) else {
                throw ConfigError(path: keys.codingPath + [key], "\"\(number)\" is not one of: 1.2, 1.3")
            }
            return version
        }
    }

    /// A route's `tls`, for an `https://` upstream: whom to trust and, for mutual TLS, which
    /// certificate the gateway shows. Verification is always on.
    package struct UpstreamTLS: Sendable, Hashable, ConfigSection {
        /// PEM certificates trusted for this upstream instead of the system's trust store.
        @Key("ca_file") package var caFile: String? = nil
        /// PEM client certificate (and chain) for mutual TLS, with `keyFile`.
        @Key("cert_file") package var certFile: String? = nil
        @Key("key_file") package var keyFile: String? = nil

        package init() {}
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
