import Foundation
import GatewayConfiguration
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
package final class CertificateStore: Sendable {
    private let settings: GatewayConfig.ListenerTLS
    private let logger: Logger
    private let state: NIOLockedValueBox<(context: NIOSSLContext, files: CertificateFileStamp)>

    package init(_ settings: GatewayConfig.ListenerTLS, logger: Logger) throws {
        self.settings = settings
        self.logger = logger
        let files = CertificateFileStamp(settings)
        state = NIOLockedValueBox((try settings.makeServerContext(), files))
    }

    /// The context new connections are set up with.
    package var current: NIOSSLContext {
        state.withLockedValue { $0.context }
    }

    /// Loads the certificate and key files again and serves them to new connections. Returns
    /// whether they were taken; if not, the old ones stay and the reason is logged.
    @discardableResult
    package func reload() -> Bool {
        let files = CertificateFileStamp(settings)
        do {
            let context = try settings.makeServerContext()
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
    package func reloadIfChanged() {
        let changed = state.withLockedValue { $0.files != CertificateFileStamp(settings) }
        if changed { reload() }
    }
}

/// What the files looked like when last loaded: a change of either means a new certificate.
package struct CertificateFileStamp: Equatable, Sendable {
    /// Modification time, size and inode of the file a path leads to: a file replaced by a
    /// rename changes its inode even when time and size happen to match, and a symlink swap
    /// (Kubernetes' `..data`) changes the file behind links that themselves stay the same.
    package struct File: Equatable, Sendable {
        package var modified: Date?
        package var size: UInt64?
        package var inode: UInt64?

        package init(_ path: String) {
            // FileManager reads a symlink's own attributes; follow it to what TLS loads.
            let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            let attributes = (try? FileManager.default.attributesOfItem(atPath: target)) ?? [:]
            modified = attributes[.modificationDate] as? Date
            size = (attributes[.size] as? NSNumber)?.uint64Value
            inode = (attributes[.systemFileNumber] as? NSNumber)?.uint64Value
        }
    }

    package let certificate: File
    package let key: File

    package init(_ settings: GatewayConfig.ListenerTLS) {
        certificate = File(settings.certFile)
        key = File(settings.keyFile)
    }
}
