import Foundation
import JWTKit
import RedisClient
import Yams

extension GatewayConfig {
    /// The minimum length of an HS256 secret (SPEC §5: at least 32 bytes).
    static let minimumSigningSecretBytes = 32
    /// The minimum length of the admin token; shorter ones are guessable.
    static let minimumAdminTokenLength = 16

    /// Reads the YAML file at `path` (or starts from the defaults), applies the environment's
    /// overrides and secrets, and checks every value. Any problem is one `ConfigError` naming
    /// the key, which `PartnerGateway` prints as a single line before exiting non-zero.
    static func load(path: String?, environment: [String: String]) throws(ConfigError) -> GatewayConfig {
        var config = GatewayConfig()
        if let path {
            let text: String
            do {
                text = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ConfigError(key: "", "cannot read \(path)")
            }
            config = try parse(yaml: text)
        }
        try config.applyOverrides(from: environment)
        try config.validate()
        return config
    }

    static func parse(yaml text: String) throws(ConfigError) -> GatewayConfig {
        let isEmpty = text.split(separator: "\n").allSatisfy {
            let line = $0.trimmingCharacters(in: .whitespaces)
            return line.isEmpty || line.hasPrefix("#") || line == "---"
        }
        if isEmpty { return GatewayConfig() }
        do {
            return try YAMLDecoder().decode(GatewayConfig.self, from: text)
        } catch {
            throw ConfigError.from(error)
        }
    }

    /// The environment variables of SPEC §5. Each one, when set, wins over the file.
    mutating func applyOverrides(from environment: [String: String]) throws(ConfigError) {
        if let value = environment["GATEWAY_LISTEN"] {
            guard let parsed = ListenAddress(value) else { throw ConfigError(key: "GATEWAY_LISTEN", "\"\(value)\" is not host:port") }
            listen = parsed
        }
        if let value = environment["GATEWAY_ADMIN_LISTEN"] {
            guard let parsed = ListenAddress(value) else { throw ConfigError(key: "GATEWAY_ADMIN_LISTEN", "\"\(value)\" is not host:port") }
            admin.listen = parsed
        }
        if let value = environment["GATEWAY_REDIS_URL"] {
            redis.url = value
        }
        if let value = environment["GATEWAY_OTP_MODE"] {
            guard let mode = OTP.Mode(rawValue: value) else { throw ConfigError(key: "GATEWAY_OTP_MODE", "\"\(value)\" is not one of: sms, uat") }
            otp.mode = mode
        }
        guard let adminToken = environment["GATEWAY_ADMIN_TOKEN"], !adminToken.isEmpty else {
            throw ConfigError(key: "GATEWAY_ADMIN_TOKEN", "is not set (the admin API's bearer token)")
        }
        guard adminToken.count >= Self.minimumAdminTokenLength else {
            throw ConfigError(key: "GATEWAY_ADMIN_TOKEN", "must be at least \(Self.minimumAdminTokenLength) characters")
        }
        secrets.adminToken = Secret(adminToken)
        secrets.signingKeys = []
        for key in tokens.signingKeys {
            guard let secret = environment[key.secretEnv], !secret.isEmpty else {
                throw ConfigError(key: key.secretEnv, "is not set (HS256 secret of signing key \"\(key.kid)\")")
            }
            guard secret.utf8.count >= Self.minimumSigningSecretBytes else {
                throw ConfigError(key: key.secretEnv, "must be at least \(Self.minimumSigningSecretBytes) bytes")
            }
            secrets.signingKeys.append((key.kid, Secret(secret)))
        }
        guard let phoneKey = environment[users.phoneKeyEnv], !phoneKey.isEmpty else {
            throw ConfigError(key: users.phoneKeyEnv, "is not set (the key phone numbers are hashed with; generate it once and never change it)")
        }
        guard phoneKey.utf8.count >= Self.minimumSigningSecretBytes else {
            throw ConfigError(key: users.phoneKeyEnv, "must be at least \(Self.minimumSigningSecretBytes) bytes")
        }
        secrets.phoneKey = Secret(phoneKey)
        try readAssertionKeys()
    }

    /// Reads each assertion key's PEM file and checks it is a P-256 private key, so a bad key
    /// stops start-up with one line instead of failing the first proxied request.
    mutating func readAssertionKeys() throws(ConfigError) {
        secrets.assertionKeys = []
        for (index, key) in assertion.signingKeys.enumerated() {
            let name = "assertion.signing_keys[\(index)].private_key_file"
            guard let pem = try? String(contentsOfFile: key.privateKeyFile, encoding: .utf8) else {
                throw ConfigError(key: name, "cannot read \(key.privateKeyFile) (key \"\(key.kid)\")")
            }
            guard (try? ES256PrivateKey(pem: pem)) != nil else {
                throw ConfigError(key: name, "\(key.privateKeyFile) is not a PEM P-256 private key, PKCS#8 or SEC1 (key \"\(key.kid)\")")
            }
            secrets.assertionKeys.append((key.kid, Secret(pem)))
        }
    }

    /// Checks what the types alone cannot.
    func validate() throws(ConfigError) {
        if let tls { try CertificateStore.check(tls, key: "tls") }
        if let tls = admin.tls { try CertificateStore.check(tls, key: "admin.tls") }
        guard maxBodyBytes > 0 else { throw ConfigError(key: "max_body_bytes", "must be greater than 0") }
        do {
            _ = try RedisURL(redis.url)
        } catch {
            throw ConfigError(key: "redis.url", "\(error.detail)")
        }
        guard (1...1024).contains(redis.poolSize) else { throw ConfigError(key: "redis.pool_size", "must be between 1 and 1024") }
        guard redis.timeout.duration > .zero else { throw ConfigError(key: "redis.timeout", "must be greater than 0") }

        guard !tokens.issuer.isEmpty else { throw ConfigError(key: "tokens.issuer", "must not be empty") }
        guard tokens.accessTTL.duration > .zero else { throw ConfigError(key: "tokens.access_ttl", "must be greater than 0") }
        guard tokens.refreshTTL.duration > .zero else { throw ConfigError(key: "tokens.refresh_ttl", "must be greater than 0") }
        guard tokens.refreshReuseInterval.duration <= .seconds(60) else {
            throw ConfigError(key: "tokens.refresh_reuse_interval", "must be at most 60s (0 turns it off)")
        }
        guard !tokens.signingKeys.isEmpty else { throw ConfigError(key: "tokens.signing_keys", "needs at least one key") }
        var kids = Set<String>()
        for (index, key) in tokens.signingKeys.enumerated() {
            guard !key.kid.isEmpty, kids.insert(key.kid).inserted else {
                throw ConfigError(key: "tokens.signing_keys[\(index)].kid", "must be unique and not empty")
            }
        }

        guard otp.uatCode.count == 6, otp.uatCode.allSatisfy(\.isASCIIDigit) else {
            throw ConfigError(key: "otp.uat_code", "must be 6 digits")
        }
        guard otp.ttl.duration > .zero else { throw ConfigError(key: "otp.ttl", "must be greater than 0") }
        guard otp.maxAttempts >= 1 else { throw ConfigError(key: "otp.max_attempts", "must be at least 1") }
        guard otp.maxFailuresPerDay >= 1 else { throw ConfigError(key: "otp.max_failures_per_day", "must be at least 1") }
        guard otp.smsTimeout.duration > .zero else { throw ConfigError(key: "otp.sms_timeout", "must be greater than 0") }
        if otp.mode == .sms {
            guard let url = URL(string: otp.smsWebhookURL), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw ConfigError(key: "otp.sms_webhook_url", "must be an http(s) URL when otp.mode is sms")
            }
        }

        try Self.validate(rateLimits.otpTriggerPerPhone, key: "rate_limits.otp_trigger_per_phone")
        try Self.validate(rateLimits.otpTriggerPerIP, key: "rate_limits.otp_trigger_per_ip")
        try Self.validate(rateLimits.apiKeyFailuresPerIP, key: "rate_limits.api_key_failures_per_ip")

        var names = Set<String>()
        for (index, route) in routes.enumerated() {
            let key = "routes[\(index)]"
            guard !route.name.isEmpty, names.insert(route.name).inserted else {
                throw ConfigError(key: "\(key).name", "must be unique and not empty")
            }
            guard route.pathPrefix.hasPrefix("/"), !route.pathPrefix.contains("?") else {
                throw ConfigError(key: "\(key).path_prefix", "must start with / and hold no query")
            }
            guard let upstream = URL(string: route.upstream), ["http", "https"].contains(upstream.scheme ?? ""), upstream.host != nil else {
                throw ConfigError(key: "\(key).upstream", "must be an http:// or https:// URL")
            }
            if let tls = route.tls {
                guard upstream.scheme == "https" else { throw ConfigError(key: "\(key).tls", "needs an https:// upstream") }
                try UpstreamTLSContext.check(tls, key: "\(key).tls")
            }
            guard route.timeout.duration > .zero else { throw ConfigError(key: "\(key).timeout", "must be greater than 0") }
            if let limit = route.rateLimit {
                try Self.validate(limit.bucket, key: "\(key).rate_limit")
                switch (limit.per, route.auth) {
                case (.user, .none), (.user, .apiKey):
                    throw ConfigError(key: "\(key).rate_limit.per", "\"user\" needs auth: bearer")
                case (.partner, .none):
                    throw ConfigError(key: "\(key).rate_limit.per", "\"partner\" needs auth: api_key or bearer")
                default:
                    break
                }
            }
        }
        guard (Duration.seconds(1)...Duration.seconds(300)).contains(assertion.ttl.duration) else {
            throw ConfigError(key: "assertion.ttl", "must be between 1s and 5m")
        }
        var assertionKids = Set<String>()
        for (index, key) in assertion.signingKeys.enumerated() {
            guard !key.kid.isEmpty, assertionKids.insert(key.kid).inserted else {
                throw ConfigError(key: "assertion.signing_keys[\(index)].kid", "must be unique and not empty")
            }
        }
        guard server.drainTimeout.duration >= .zero else { throw ConfigError(key: "server.drain_timeout", "must not be negative") }
        guard server.idleTimeout.duration > .zero else { throw ConfigError(key: "server.idle_timeout", "must be greater than 0") }
        guard server.headerReadTimeout.duration > .zero else { throw ConfigError(key: "server.header_read_timeout", "must be greater than 0") }
        guard server.maxHeaderBytes >= 1024 else { throw ConfigError(key: "server.max_header_bytes", "must be at least 1024") }
        if let loops = server.eventLoops, !(1...256).contains(loops) {
            throw ConfigError(key: "server.event_loops", "must be between 1 and 256")
        }
    }

    private static func validate(_ bucket: Bucket, key: String) throws(ConfigError) {
        guard bucket.capacity >= 1 else { throw ConfigError(key: "\(key).capacity", "must be at least 1") }
        guard bucket.refillPerSecond >= 0, bucket.refillPerSecond.isFinite else {
            throw ConfigError(key: "\(key).refill_per_second", "must be 0 or more")
        }
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
