import Crypto
import Foundation
import GatewayConfiguration
import GatewayPrimitives

/// The `X-Gateway-Signature` of a delivery webhook call, as Stripe signs its webhooks:
/// `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` under `otp.sms_webhook_secret_env`.
/// The time inside the signed text lets a receiver refuse a replay after its window
/// (docs/operations.md, "The SMS webhook", has the receiver's check).
struct WebhookSignature {
    let secret: Secret

    func header(for body: Data, at time: Date = Date()) -> String {
        let timestamp = String(Int64(time.timeIntervalSince1970.rounded(.down)))
        var signed = Data(timestamp.utf8)
        signed.append(UInt8(ascii: "."))
        signed.append(body)
        let code = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: secret.bytes))
        return "t=\(timestamp),v1=\(Hex.encode(code))"
    }
}
