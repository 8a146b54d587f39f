import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOSSL

/// A listener's server certificate as a ready `NIOSSLContext`, replaceable while the listener
/// runs.
///
/// Each new connection takes ``current`` once, during its set-up; a connection already open
/// keeps the context it started with, so replacing the certificate drops nothing. A
/// replacement that cannot be loaded (unreadable, not PEM, key not matching) leaves the
/// previous certificate in service, with one log line saying why.
final class CertificateStore: Sendable {
    /// Forward-secret AEAD suites only (TLS 1.2; TLS 1.3's suites are all of that kind).
    static let cipherSuites = "ECDHE+AESGCM:ECDHE+CHACHA20"
    /// What ALPN offers, preferred first: HTTP/2, then HTTP/1.1.
    static let applicationProtocols = ["h2", "http/1.1"]

    private let settings: GatewayConfig.ListenerTLS
    private let logger: Logger
    private let state: NIOLockedValueBox<(context: NIOSSLContext, files: CertificateFileStamp)>

    init(_ settings: GatewayConfig.ListenerTLS, logger: Logger) throws {
        self.settings = settings
        self.logger = logger
        let files = CertificateFileStamp(settings)
        state = NIOLockedValueBox((try Self.makeContext(settings), files))
    }

    /// The context new connections are set up with.
    var current: NIOSSLContext {
        state.withLockedValue { $0.context }
    }

    /// Loads the certificate and key files again and serves them to new connections. Returns
    /// whether they were taken; if not, the old ones stay and the reason is logged.
    @discardableResult
    func reload() -> Bool {
        let files = CertificateFileStamp(settings)
        do {
            let context = try Self.makeContext(settings)
            state.withLockedValue { $0 = (context, files) }
            logger.notice("tls certificate reloaded", metadata: ["cert_file": .string(settings.certFile)])
            return true
        } catch {
            // Remember these files anyway: the watcher must not retry (and log) every tick
            // until they change again.
            state.withLockedValue { $0.files = files }
            logger.error("tls certificate not reloaded; keeping the previous one", metadata: [
                "cert_file": .string(settings.certFile), "reason": .string("\(error)"),
            ])
            return false
        }
    }

    /// ``reload()`` when the certificate or key file changed on disk since last loaded.
    func reloadIfChanged() {
        let changed = state.withLockedValue { $0.files != CertificateFileStamp(settings) }
        if changed { reload() }
    }

    static func makeContext(_ settings: GatewayConfig.ListenerTLS) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(settings.certFile)
        guard !chain.isEmpty else { throw NIOSSLError.failedToLoadCertificate }
        let key = try NIOSSLPrivateKey(file: settings.keyFile, format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) },
            privateKey: .privateKey(key)
        )
        configuration.minimumTLSVersion = settings.minVersion.nioVersion
        configuration.cipherSuites = cipherSuites
        configuration.applicationProtocols = applicationProtocols
        configuration.renegotiationSupport = .none
        return try NIOSSLContext(configuration: configuration)
    }

    /// Start-up's check: the files load and the key matches, else one configuration error.
    static func check(_ settings: GatewayConfig.ListenerTLS, key: String) throws(ConfigError) {
        do {
            _ = try makeContext(settings)
        } catch {
            throw ConfigError(key: key, "cannot use \(settings.certFile) with \(settings.keyFile): \(error)")
        }
    }
}

/// What the files looked like when last loaded: a change of either means a new certificate.
struct CertificateFileStamp: Equatable, Sendable {
    /// Modification time, size and inode of one file: a file replaced by a rename changes its
    /// inode even when time and size happen to match.
    struct File: Equatable, Sendable {
        var modified: Date?
        var size: UInt64?
        var inode: UInt64?

        init(_ path: String) {
            let attributes = (try? FileManager.default.attributesOfItem(atPath: path)) ?? [:]
            modified = attributes[.modificationDate] as? Date
            size = (attributes[.size] as? NSNumber)?.uint64Value
            inode = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value
        }
    }

    let certificate: File
    let key: File

    init(_ settings: GatewayConfig.ListenerTLS) {
        certificate = File(settings.certFile)
        key = File(settings.keyFile)
    }
}
