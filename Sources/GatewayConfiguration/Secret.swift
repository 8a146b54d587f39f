import RedisClient

/// A secret read from the environment. It prints as `<redacted>`, so no log line, error
/// message or debug dump of the configuration can show it.
package struct Secret: Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    package let bytes: [UInt8]

    package init(_ text: String) {
        self.bytes = Array(text.utf8)
    }

    package var description: String { "<redacted>" }
    package var debugDescription: String { "<redacted>" }
}

/// The secrets the configuration names, resolved from the environment at start-up.
package struct GatewaySecrets: Sendable {
    /// `GATEWAY_ADMIN_TOKEN`: the break-glass owner credential of the admin API; nil with
    /// `admin.break_glass: false`.
    package var adminToken: Secret?
    /// HS256 secrets by `kid`, in the order of `tokens.signing_keys` (the first signs).
    package var signingKeys: [(kid: String, secret: Secret)] = []
    /// `users.phone_key_env` (`GATEWAY_PHONE_KEY`): the HMAC key for phones and OTP codes.
    package var phoneKey = Secret("")
    /// `otp.sms_webhook_secret_env` (`GATEWAY_SMS_WEBHOOK_SECRET`): the key SMS webhook calls
    /// are signed with; nil unless `otp.mode` is `sms`.
    package var smsWebhookSecret: Secret?
    /// `portal.code_webhook_secret_env` (`GATEWAY_PORTAL_WEBHOOK_SECRET`): the key portal
    /// sign-in code webhook calls are signed with; nil unless the portal sends codes.
    package var portalWebhookSecret: Secret?
    /// The PEM text of each `assertion.signing_keys` entry by `kid`, in order (the first signs),
    /// each already checked to be a P-256 private key.
    package var assertionKeys: [(kid: String, pem: Secret)] = []
    /// The Redis client's settings with `redis.password_env` resolved and `redis.tls` loaded
    /// (its password never prints: `RedisURL` masks it).
    package var redis = RedisConfiguration()
}
