import AsyncHTTPClient
import DriverSessions
import Foundation
import GatewayConfiguration
import GatewayEdge
import GatewayObservability
import GatewayPrimitives
import Logging
import NIOCore
import NIOFoundationCompat
import NIOHTTP1

/// Chooses each one-time code and gets it to its person: drivers' OTPs by SMS (`otp.mode`,
/// docs/public-api.md), portal members' sign-in codes by email (`portal.delivery`, docs/portal.md).
///
/// - `uat`: the code is always the configured one and nothing is sent (testing environments).
/// - `webhook`: a fresh CSPRNG code is `POST`ed to the webhook as `{"phone": "+91XXXXXXXXXX",
///   "message": "..."}` (SMS) or `{"email": "...", "message": "..."}` (email), signed
///   (``WebhookSignature``). No answer within the timeout, a refused connection or a non-2xx
///   status is `503 SERVICE_UNAVAILABLE`: the code did not go out, so no caller may claim it did.
///
/// The code and the full phone number or address appear only in the webhook's body, never in a
/// log; the webhook URL is not logged either (it often carries the provider's credentials).
package struct OTPDelivery: Sendable {
    package enum Mode: Sendable {
        case uat(code: String)
        case webhook(url: String, secret: Secret, timeout: Duration)
    }

    /// Where the codes go: the metric label of a sent code, and the webhook's body.
    package enum Channel: String, Sendable {
        case sms
        case email
    }

    let mode: Mode
    let channel: Channel
    let lifetime: Duration
    let httpClient: HTTPClient
    let logger: Logger

    package init(mode: Mode, channel: Channel = .sms, lifetime: Duration, httpClient: HTTPClient, logger: Logger) {
        self.mode = mode
        self.channel = channel
        self.lifetime = lifetime
        self.httpClient = httpClient
        self.logger = logger
    }

    /// `uat`, or the channel the codes go out on (`sms`, `email`).
    var modeName: String {
        switch mode {
        case .uat: "uat"
        case .webhook: channel.rawValue
        }
    }

    func newCode() -> String {
        switch mode {
        case .uat(let code): code
        case .webhook: OTPStore.generateCode()
        }
    }

    /// `requestLogger`: the request's logger, so failures are logged with its request id.
    func deliver(_ code: String, to phone: PhoneNumber, requestLogger: Logger? = nil) async throws {
        let message = "\(code) is your verification code. It expires in \(minutes) minutes. Never share it with anyone."
        try await post(try JSONEncoder().encode(SMSMessage(phone: phone.international, message: message)), recipient: phone.masked, requestLogger)
    }

    /// A portal member's sign-in code, to their (lowercase) email; `masked` names them in logs.
    func deliver(_ code: String, toEmail email: String, masked: String, requestLogger: Logger? = nil) async throws {
        let message = "\(code) is your sign-in code for the partner portal. It expires in \(minutes) minutes. Never share it with anyone."
        try await post(try JSONEncoder().encode(EmailMessage(email: email, message: message)), recipient: masked, requestLogger)
    }

    private var minutes: Int { max(1, Int(lifetime.components.seconds / 60)) }

    /// The log field naming the (masked) recipient.
    private var recipientField: String { channel == .sms ? "phone" : "email" }

    private func post(_ body: Data, recipient: String, _ requestLogger: Logger?) async throws {
        guard case .webhook(let url, let secret, let timeout) = mode else { return }
        let logger = requestLogger ?? self.logger
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: HeaderName.gatewaySignature.name, value: WebhookSignature(secret: secret).header(for: body))
        request.body = .bytes(ByteBuffer(data: body))
        do {
            let response = try await httpClient.execute(request, timeout: TimeAmount(timeout), logger: logger)
            // Drain (a little of) the body so the connection can go back to the pool.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            guard (200..<300).contains(response.status.code) else {
                logger.warning("\(channel.rawValue) webhook refused the message", metadata: [recipientField: .string(recipient), "status": .stringConvertible(response.status.code)])
                AuthMetrics.otpDeliveryFailed()
                throw GatewayError.serviceUnavailable
            }
        } catch let error as GatewayError {
            throw error
        } catch {
            logger.warning("\(channel.rawValue) webhook unreachable", metadata: [recipientField: .string(recipient), "error.type": .string(String(describing: type(of: error)))])
            AuthMetrics.otpDeliveryFailed()
            throw GatewayError.serviceUnavailable
        }
    }

    private struct SMSMessage: Encodable {
        let phone: String
        let message: String
    }

    private struct EmailMessage: Encodable {
        let email: String
        let message: String
    }
}
