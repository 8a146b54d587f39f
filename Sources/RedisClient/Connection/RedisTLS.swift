import NIOCore
import NIOSSL

/// How every connection to Redis is encrypted when the URL is `rediss://` (`redis.tls`).
///
/// swift-nio-ssl does the TLS in the channel pipeline, in front of ``RedisChannelHandler``,
/// so hiredis keeps parsing and formatting plain RESP and never sees a socket. The
/// `NIOSSLContext` (certificates parsed, trust store loaded) is built once here and shared by
/// every connection: building one per connection would cost a disk read and a parse each time.
///
/// The server's certificate is always verified, host name included: against `serverName` when
/// set, else the URL's host (by SNI for a name, by the certificate's IP entries for an
/// address). There is deliberately no switch to turn verification off.
public struct RedisTLS: Sendable {
    /// What `redis.tls` says; every field is optional.
    public struct Settings: Sendable, Hashable {
        /// PEM file of the CAs to trust instead of the system's trust store.
        public var caFile: String?
        /// PEM client certificate (chain) and its private key, for Redis's `tls-auth-clients`.
        public var certificateFile: String?
        public var privateKeyFile: String?
        /// The name the certificate must carry, when it is not the URL's host (connecting by
        /// IP address, or through a tunnel).
        public var serverName: String?

        public init(caFile: String? = nil, certificateFile: String? = nil, privateKeyFile: String? = nil, serverName: String? = nil) {
            self.caFile = caFile
            self.certificateFile = certificateFile
            self.privateKeyFile = privateKeyFile
            self.serverName = serverName
        }
    }

    private let context: NIOSSLContext
    private let serverName: String?

    /// Loads the files now, so a missing or malformed one stops start-up instead of failing
    /// every connection later.
    public init(_ settings: Settings = Settings()) throws(RedisError) {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .fullVerification
        tls.minimumTLSVersion = .tlsv12
        if let caFile = settings.caFile {
            do {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
            } catch {
                throw .tls("ca_file \(caFile) is not a readable PEM certificate file")
            }
        }
        switch (settings.certificateFile, settings.privateKeyFile) {
        case (nil, nil):
            break
        case (let certificateFile?, let privateKeyFile?):
            do {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) }
            } catch {
                throw .tls("cert_file \(certificateFile) is not a readable PEM certificate file")
            }
            do {
                tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: privateKeyFile, format: .pem))
            } catch {
                throw .tls("key_file \(privateKeyFile) is not a readable PEM private key")
            }
        default:
            throw .tls("cert_file and key_file go together")
        }
        do {
            context = try NIOSSLContext(configuration: tls)
        } catch {
            throw .tls("cannot set up TLS: \(error)")
        }
        if let serverName = settings.serverName, Self.isIPAddress(serverName) {
            throw .tls("server_name must be a DNS name, not an IP address")
        }
        serverName = settings.serverName
    }

    /// The handler that encrypts one connection to `host`.
    func makeHandler(host: String) throws -> NIOSSLClientHandler {
        // An IP address cannot be sent as SNI; with none, NIOSSL checks the certificate
        // against the address the socket is connected to.
        let name = serverName ?? (Self.isIPAddress(host) ? nil : host)
        return try NIOSSLClientHandler(context: context, serverHostname: name)
    }

    private static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }

    /// What went wrong in words an operator can act on. For an untrusted certificate the words
    /// replace TLS's own error, which names BoringSSL's source files and error numbers and
    /// would read like a crash in the one line start-up stops with.
    static func describe(_ error: any Error) -> String {
        let text = "\(error)"
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the server's certificate is not trusted (not signed by a CA in redis.tls.ca_file or the system trust store, or expired)"
        }
        if let error = error as? NIOSSLExtraError, error == .failedToValidateHostname {
            // NIOSSL says which name it looked for ("Couldn't find NAME in certificate from
            // peer"), or "<none>" when it checked the IP address connected to instead.
            let detail = text.split(separator: ":", maxSplits: 1).last.map { String($0.drop { $0 == " " }) } ?? text
            if detail.contains("<none>") {
                return "the server's certificate does not list the IP address connected to (set redis.tls.server_name to a name it carries)"
            }
            return "the server's certificate is not for this host (\(detail))"
        }
        return text
    }

    /// Whether a channel error came from TLS (a certificate that is not trusted or not for
    /// this host, a failed handshake), which a retry cannot fix.
    static func isTLSError(_ error: any Error) -> Bool {
        error is NIOSSLError || error is NIOSSLExtraError || error is BoringSSLError
    }
}
