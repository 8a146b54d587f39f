import Foundation
import GatewayConfiguration
import Logging
import NIOCore
import NIOSSL
import NIOTLS

/// TLS to one `https://` upstream: the certificate is always verified (against the system's
/// trust store, or the route's `tls.ca_file` instead), the host name is sent as SNI and
/// checked against the certificate (an IP address upstream against its IP SANs), and a client
/// certificate is shown when the route has one (mutual TLS).
///
/// A connection counts as made only once its handshake completed, so a pooled connection is
/// always a verified one and reuses the session like any plain keep-alive connection. A failed
/// handshake is one warning line naming the upstream and the reason (expired, unknown issuer,
/// wrong host) and the request's response is `502`, as for a refused connection.
package struct UpstreamTLSContext: Sendable {
    package let context: NIOSSLContext
    /// SNI: the upstream's host name; nil for an IP address, which SNI cannot carry.
    package let serverName: String?
    package let logger: Logger

    package init(_ settings: GatewayConfig.UpstreamTLS?, host: String, logger: Logger) throws {
        context = try NIOSSLContext(configuration: (settings ?? .init()).clientConfiguration())
        serverName = Self.isIPAddress(host) ? nil : host
        self.logger = logger
    }

    /// Whether a URL's host is an IP address literal (`127.0.0.1`, `[::1]`).
    private static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: 0)) != nil
    }

    /// Puts TLS first in a new connection's pipeline; the returned future completes once the
    /// handshake has (or fails with its error, logged).
    package func addHandlers(to channel: any Channel, timeout: TimeAmount) throws -> EventLoopFuture<Void> {
        let handshake = UpstreamTLSHandshake(promise: channel.eventLoop.makePromise(), timeout: timeout)
        // BoringSSL's own verdict stands; this only remembers why a certificate failed, for
        // the log (BoringSSL's error says no more than CERTIFICATE_VERIFY_FAILED).
        let observer = NIOLoopBound(handshake, eventLoop: channel.eventLoop)
        let tls = try NIOSSLClientHandler.observingVerdicts(context: context, serverHostname: serverName) { verdict, certificate in
            if verdict == .failed, observer.value.rejection == nil {
                observer.value.rejection = Self.rejection(of: certificate)
            }
            return verdict
        }
        try channel.pipeline.syncOperations.addHandler(tls)
        try channel.pipeline.syncOperations.addHandler(handshake)
        return handshake.promise.futureResult.flatMapErrorThrowing { error in
            throw UpstreamTLSFailure(underlying: error, rejection: observer.value.rejection, serverName: serverName)
        }
    }

    /// Why BoringSSL refused `certificate`, in words: its dates, else its issuer.
    private static func rejection(of certificate: NIOSSLCertificate) -> String {
        let now = time(nil)
        if certificate.notValidAfter < now { return "the certificate has expired" }
        if certificate.notValidBefore > now { return "the certificate is not yet valid" }
        return "the certificate is not issued by a trusted CA (tls.ca_file, else the system trust store)"
    }

    /// Logs why the handshake with `upstream` failed, in one line.
    package func logFailure(_ error: any Error, upstream: String) {
        logger.warning("upstream tls handshake failed", metadata: ["upstream": .string(upstream), "reason": .string("\(error)")])
    }
}

/// Waits for the TLS handshake of a new upstream connection. The connection reads only on
/// demand (`autoRead` off, for back-pressure), so this asks for the first read that lets the
/// handshake proceed; it leaves the pipeline once the handshake is done.
package final class UpstreamTLSHandshake: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer

    package let promise: EventLoopPromise<Void>
    /// Why the peer's certificate was refused, set during the handshake.
    package var rejection: String?
    private let timeout: TimeAmount
    private var timer: Scheduled<Void>?

    package init(promise: EventLoopPromise<Void>, timeout: TimeAmount) {
        self.promise = promise
        self.timeout = timeout
    }

    package func channelActive(context: ChannelHandlerContext) {
        let promise = self.promise
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [channel = context.channel] in
            promise.fail(UpstreamTLSHandshakeTimeout())
            channel.close(promise: nil)
        }
        context.fireChannelActive()
        context.read()
    }

    package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case TLSUserEvent.handshakeCompleted = event {
            timer?.cancel()
            promise.succeed()
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        timer?.cancel()
        promise.fail(error)
        context.fireErrorCaught(error)
    }

    package func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        promise.fail(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }
}

/// NIOSSL's client handler with a per-certificate verdict observer. That initialiser is marked
/// deprecated in favour of callbacks that replace BoringSSL's verification, which is not
/// wanted here; reaching it through this requirement keeps the build free of warnings.
private protocol VerdictObservingHandler: ChannelHandler {
    init(context: NIOSSLContext, serverHostname: String?, verificationCallback: NIOSSLVerificationCallback?) throws
}

extension NIOSSLClientHandler: VerdictObservingHandler {}

extension VerdictObservingHandler {
    package static func observingVerdicts(context: NIOSSLContext, serverHostname: String?, _ observe: @escaping NIOSSLVerificationCallback) throws -> Self {
        try Self(context: context, serverHostname: serverHostname, verificationCallback: observe)
    }
}

/// A failed upstream handshake, described for the log line.
package struct UpstreamTLSFailure: Error, CustomStringConvertible {
    package let underlying: any Error
    /// Why the certificate was refused, when it was.
    package let rejection: String?
    package let serverName: String?

    package var description: String {
        if let rejection { return "\(rejection) (\(underlying))" }
        if let extra = underlying as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return "the certificate does not match the host \(serverName ?? "(its IP address)") (\(underlying))"
        }
        return "\(underlying)"
    }
}

package struct UpstreamTLSHandshakeTimeout: Error, CustomStringConvertible {
    package var description: String { "no TLS handshake within the connect timeout" }
}
