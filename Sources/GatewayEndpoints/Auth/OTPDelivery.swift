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

/// Chooses each OTP and gets it to the driver (`otp.mode`, docs/public-api.md).
///
/// - `uat`: the code is always `otp.uat_code` and nothing is sent (testing environments).
/// - `sms`: a fresh CSPRNG code is `POST`ed to `otp.sms_webhook_url` as
///   `{"phone": "+91XXXXXXXXXX", "message": "..."}`, signed (``WebhookSignature``). No
///   answer within `otp.sms_timeout`, a refused connection or a non-2xx status is `503
///   SERVICE_UNAVAILABLE`: the driver cannot get the code, so the trigger must not claim it
///   was sent.
///
/// The code and the full phone number appear only in the webhook's body, never in a log; the
/// webhook URL is not logged either (it often carries the provider's credentials).
package struct OTPDelivery: Sendable {
    package enum Mode: Sendable {
        case uat(code: String)
        case sms(webhook: String, secret: Secret, timeout: Duration)
    }

    let mode: Mode
    let lifetime: Duration
    let httpClient: HTTPClient
    let logger: Logger

    package init(mode: Mode, lifetime: Duration, httpClient: HTTPClient, logger: Logger) {
        self.mode = mode
        self.lifetime = lifetime
        self.httpClient = httpClient
        self.logger = logger
    }

    var modeName: String {
        switch mode {
        case .uat: "uat"
        case .sms: "sms"
        }
    }

    func newCode() -> String {
        switch mode {
        case .uat(let code): code
        case .sms: OTPStore.generateCode()
        }
    }

    /// `requestLogger`: the request's logger, so failures are logged with its request id.
    func deliver(_ code: String, to phone: PhoneNumber, requestLogger: Logger? = nil) async throws {
        guard case .sms(let webhook, let secret, let timeout) = mode else { return }
        let logger = requestLogger ?? self.logger
        let minutes = max(1, Int(lifetime.components.seconds / 60))
        let message = SMSMessage(
            phone: phone.international,
            message: "\(code) is your verification code. It expires in \(minutes) minutes. Never share it with anyone."
        )
        var request = HTTPClientRequest(url: webhook)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        let body = try JSONEncoder().encode(message)
        request.headers.add(name: HeaderName.gatewaySignature.name, value: WebhookSignature(secret: secret).header(for: body))
        request.body = .bytes(ByteBuffer(data: body))
        do {
            let response = try await httpClient.execute(request, timeout: TimeAmount(timeout), logger: logger)
            // Drain (a little of) the body so the connection can go back to the pool.
            _ = try? await response.body.collect(upTo: 64 * 1024)
            guard (200..<300).contains(response.status.code) else {
                logger.warning("sms webhook refused the message", metadata: ["phone": .string(phone.masked), "status": .stringConvertible(response.status.code)])
                AuthMetrics.otpDeliveryFailed()
                throw GatewayError.serviceUnavailable
            }
        } catch let error as GatewayError {
            throw error
        } catch {
            logger.warning("sms webhook unreachable", metadata: ["phone": .string(phone.masked), "error.type": .string(String(describing: type(of: error)))])
            AuthMetrics.otpDeliveryFailed()
            throw GatewayError.serviceUnavailable
        }
    }

    private struct SMSMessage: Encodable {
        let phone: String
        let message: String
    }
}
