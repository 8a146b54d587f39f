import NIOSSL

extension GatewayConfig {
    /// A listener's TLS: `tls` for the public listener, `admin.tls` for the admin one. Absent,
    /// the listener speaks plain HTTP (development, or behind a load balancer that terminates
    /// TLS itself).
    struct ListenerTLS: Sendable, Decodable {
        enum MinimumVersion: String, Sendable, ConfigEnum {
            case tls12 = "1.2"
            case tls13 = "1.3"

            var nioVersion: TLSVersion { self == .tls12 ? .tlsv12 : .tlsv13 }
        }

        /// PEM, the server's certificate first and then its intermediates (the full chain).
        var certFile: String
        /// PEM private key of the first certificate in `certFile`.
        var keyFile: String
        var minVersion = MinimumVersion.tls12

        enum CodingKeys: String, CodingKey, CaseIterable {
            case certFile = "cert_file"
            case keyFile = "key_file"
            case minVersion = "min_version"
        }
        init(from decoder: any Decoder) throws {
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
    struct UpstreamTLS: Sendable, Hashable, Decodable {
        /// PEM certificates trusted for this upstream instead of the system's trust store.
        var caFile: String?
        /// PEM client certificate (and chain) for mutual TLS, with `keyFile`.
        var certFile: String?
        var keyFile: String?

        init() {}
        enum CodingKeys: String, CodingKey, CaseIterable {
            case caFile = "ca_file"
            case certFile = "cert_file"
            case keyFile = "key_file"
        }
        init(from decoder: any Decoder) throws {
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            caFile = try keys.decodeIfPresent(String.self, forKey: .caFile)
            certFile = try keys.decodeIfPresent(String.self, forKey: .certFile)
            keyFile = try keys.decodeIfPresent(String.self, forKey: .keyFile)
        }
    }
}
