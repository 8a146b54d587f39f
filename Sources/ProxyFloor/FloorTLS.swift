import GatewayEdge
import NIOCore
import NIOSSL
import NIOTLS

/// TLS as the gateway serves it (TLS 1.2 and 1.3, ECDHE with AES-GCM or ChaCha20, ALPN h2
/// then http/1.1), with nothing of the gateway's own on top but how its output is written:
/// what one loop pass writes goes out as one TLS write (`TLSWriteBatcher`), as the gateway's
/// does, so the floor never seals a record per frame or per head where the gateway seals one
/// per pass.
enum FloorTLS {
    static func context(certificate: String, key: String) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
        )
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuites = "ECDHE+AESGCM:ECDHE+CHACHA20"
        configuration.applicationProtocols = ["h2", "http/1.1"]
        return try NIOSSLContext(configuration: configuration)
    }

    static func configure(_ channel: any Channel, context: NIOSSLContext, http1: HTTP1Setup, http2: HTTP2Setup) -> EventLoopFuture<Void> {
        do {
            try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
            try channel.pipeline.syncOperations.addHandler(TLSWriteBatcher())
            try channel.pipeline.syncOperations.addHandler(ApplicationProtocolNegotiationHandler { result, channel in
                channel.eventLoop.makeCompletedFuture {
                    if case .negotiated("h2") = result { try http2.configure(channel) } else { try http1.configure(channel) }
                }
            })
            return channel.eventLoop.makeSucceededVoidFuture()
        } catch {
            return channel.eventLoop.makeFailedFuture(error)
        }
    }
}
