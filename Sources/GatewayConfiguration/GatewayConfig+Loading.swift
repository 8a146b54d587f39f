import Foundation
import GatewayPrimitives
import JWTKit
import RedisClient
import Yams

extension GatewayConfig {
    /// The minimum length of an HS256 secret (at least 32 bytes, docs/configuration.md).
    package static let minimumSigningSecretBytes = 32
    /// The minimum length of the admin token; shorter ones are guessable.
    package static let minimumAdminTokenLength = 16

    /// Reads the YAML file at `path` (or starts from the defaults), applies the environment's
    /// overrides and secrets, and checks every value. The first problem is thrown; see
    /// ``check(path:environment:)`` for all of them.
    package static func load(path: String?, environment: [String: String]) throws(ConfigError) -> GatewayConfig {
        let result = check(path: path, environment: environment)
        if let first = result.errors.first ?? result.missingSecrets.first { throw first }
        return result.config
    }

    /// Everything wrong with a configuration, found in one pass: what `PartnerGateway` prints
    /// before refusing to start, and what `--check-config` reports.
    package struct CheckResult {
        package var config: GatewayConfig
        /// Problems in the file, the environment's overrides and the secrets that are set.
        package var errors: [ConfigError]
        /// Secrets that are not set: a failure to start, but not to lint (`--check-config`
        /// without `--strict`).
        package var missingSecrets: [ConfigError]
    }

    package static func check(path: String?, environment: [String: String]) -> CheckResult {
        var config = GatewayConfig()
        var decodeProblems: [ConfigError] = []
        if let path {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                return CheckResult(config: config, errors: [ConfigError(key: "", "cannot read \(path)")], missingSecrets: [])
            }
            (config, decodeProblems) = decode(yaml: text)
        }
        var errors = decodeProblems + config.applyEnvironment(environment)
        let secretProblems = config.resolveSecrets(from: environment)
        errors += secretProblems.filter { !$0.missing }.map(\.error)
        // A value that failed to decode falls back to its default, which can look wrong to
        // the checks below (otp.mode → sms wants a webhook): only sections that decoded are
        // checked, so every line printed is a real problem.
        // A file that is not YAML at all (a problem without a key) has nothing to check.
        let failedSections = Set(decodeProblems.map(\.section))
        if !failedSections.contains("") {
            errors += config.validationProblems().filter { !failedSections.contains($0.section) }
        }
        return CheckResult(config: config, errors: errors, missingSecrets: secretProblems.filter(\.missing).map(\.error))
    }

    /// The configuration in `text`; the first problem is thrown.
    package static func parse(yaml text: String) throws(ConfigError) -> GatewayConfig {
        let (config, problems) = decode(yaml: text)
        if let first = problems.first { throw first }
        return config
    }

    /// The configuration in `text` and every problem decoding found: a key or value that
    /// fails is reported and keeps its default, so the rest of the file is still read.
    package static func decode(yaml text: String) -> (GatewayConfig, [ConfigError]) {
        let isEmpty = text.split(separator: "\n").allSatisfy {
            let line = $0.trimmingCharacters(in: .whitespaces)
            return line.isEmpty || line.hasPrefix("#") || line == "---"
        }
        if isEmpty { return (GatewayConfig(), []) }
        let problems = ConfigProblems()
        do {
            let config = try ConfigProblems.$current.withValue(problems) {
                try YAMLDecoder().decode(GatewayConfig.self, from: text)
            }
            return (config, problems.all)
        } catch {
            return (GatewayConfig(), problems.all + [ConfigError.from(error)])
        }
    }

    /// The environment's overrides of the file (docs/configuration.md), then the secrets; the
    /// first problem of either.
    package mutating func applyOverrides(from environment: [String: String]) throws(ConfigError) {
        if let first = applyEnvironment(environment).first { throw first }
        if let first = resolveSecrets(from: environment).first?.error { throw first }
    }

    /// The environment variables that override the file (each one, when set, wins); every
    /// problem with them.
    package mutating func applyEnvironment(_ environment: [String: String]) -> [ConfigError] {
        var problems: [ConfigError] = []
        if let value = environment["GATEWAY_LISTEN"] {
            if let parsed = ListenAddress(value) { listen = parsed } else {
                problems.append(ConfigError(key: "GATEWAY_LISTEN", "\"\(value)\" is not host:port"))
            }
        }
        if let value = environment["GATEWAY_ADMIN_LISTEN"] {
            if let parsed = ListenAddress(value) { admin.listen = parsed } else {
                problems.append(ConfigError(key: "GATEWAY_ADMIN_LISTEN", "\"\(value)\" is not host:port"))
            }
        }
        if let value = environment["GATEWAY_AUTHZ_LISTEN"] {
            if let parsed = ListenAddress(value) { authz.listen = parsed } else {
                problems.append(ConfigError(key: "GATEWAY_AUTHZ_LISTEN", "\"\(value)\" is not host:port"))
            }
        }
        if let value = environment["GATEWAY_REDIS_URL"] {
            redis.url = value
        }
        if let value = environment["GATEWAY_OTP_MODE"] {
            if let mode = OTP.Mode(rawValue: value) { otp.mode = mode } else {
                problems.append(ConfigError(key: "GATEWAY_OTP_MODE", "\"\(value)\" is not one of: sms, uat"))
            }
        }
        return problems
    }

    /// A secret the configuration needs that is absent (`missing`: a lint without the
    /// production secrets tells these apart) or unusable.
    package struct SecretProblem {
        package let error: ConfigError
        package let missing: Bool
    }

    /// Reads every secret the configuration names into `secrets`; the problems in the order
    /// the secrets are named.
    package mutating func resolveSecrets(from environment: [String: String]) -> [SecretProblem] {
        var problems: [SecretProblem] = []
        func missing(_ key: String, _ problem: String) { problems.append(SecretProblem(error: ConfigError(key: key, problem), missing: true)) }
        func invalid(_ key: String, _ problem: String) { problems.append(SecretProblem(error: ConfigError(key: key, problem), missing: false)) }
        let named = [
            ("users.phone_key_env", users.phoneKeyEnv), ("otp.sms_webhook_secret_env", otp.smsWebhookSecretEnv),
            ("portal.code_webhook_secret_env", portal.codeWebhookSecretEnv), ("redis.password_env", redis.passwordEnv),
            ("redis.sentinel.password_env", redis.sentinel?.passwordEnv ?? ""),
        ] + tokens.signingKeys.enumerated().map { ("tokens.signing_keys[\($0.offset)].secret_env", $0.element.secretEnv) }
        let misnamed = named.filter { !$0.1.isEmpty && !EnvironmentVariableName.isValid($0.1) }
        guard misnamed.isEmpty else {
            return misnamed.map { SecretProblem(error: EnvironmentVariableName.problem(key: $0.0), missing: false) }
        }
        // Each secret variable may name a file instead (`GATEWAY_JWT_SECRET_FILE`).
        let secretVariables = ["GATEWAY_ADMIN_TOKEN"] + named.map(\.1)
        let (environment, fileProblems) = SecretFiles.expand(environment, names: secretVariables)
        problems += fileProblems.map { SecretProblem(error: $0, missing: false) }

        secrets.adminToken = nil
        if let adminToken = environment["GATEWAY_ADMIN_TOKEN"], !adminToken.isEmpty {
            if !admin.breakGlass {
                invalid("GATEWAY_ADMIN_TOKEN", "is set but admin.break_glass is false: unset it, or set admin.break_glass to true")
            } else if adminToken.count >= Self.minimumAdminTokenLength {
                secrets.adminToken = Secret(adminToken)
            } else {
                invalid("GATEWAY_ADMIN_TOKEN", "must be at least \(Self.minimumAdminTokenLength) characters")
            }
        } else if admin.breakGlass {
            missing("GATEWAY_ADMIN_TOKEN", "is not set (the admin API's break-glass owner token; with personal credentials only, set admin.break_glass: false)")
        }
        /// The key in `variable`, at least ``minimumSigningSecretBytes`` long; nil, with the
        /// problem noted, otherwise. `purpose` says what it is when it is missing.
        func key(_ variable: String, purpose: String) -> Secret? {
            guard let secret = environment[variable], !secret.isEmpty else {
                missing(variable, "is not set (\(purpose))")
                return nil
            }
            guard secret.utf8.count >= Self.minimumSigningSecretBytes else {
                invalid(variable, "must be at least \(Self.minimumSigningSecretBytes) bytes")
                return nil
            }
            return Secret(secret)
        }
        secrets.signingKeys = tokens.signingKeys.compactMap { signing in
            key(signing.secretEnv, purpose: "HS256 secret of signing key \"\(signing.kid)\"").map { (signing.kid, $0) }
        }
        if let phoneKey = key(users.phoneKeyEnv, purpose: "the key phone numbers are hashed with; generate it once and never change it") {
            secrets.phoneKey = phoneKey
        }
        // Fail closed: a receiver cannot tell an unsigned call from a forged one. (Without a
        // webhook, `sms` mode is refused by validation, naming the URL.)
        secrets.smsWebhookSecret = otp.mode == .sms && !otp.smsWebhookURL.isEmpty
            ? key(otp.smsWebhookSecretEnv, purpose: "the key SMS webhook calls are signed with, shared with the receiver; otp.mode is sms")
            : nil
        // The portal's code webhook has a key of its own (the same rule as the SMS webhook's).
        secrets.portalWebhookSecret = portal.sendsCodes && !portal.codeWebhookURL.isEmpty
            ? key(portal.codeWebhookSecretEnv, purpose: "the key portal code webhook calls are signed with, shared with the receiver; portal.delivery is webhook")
            : nil
        problems += readAssertionKeys()
        do {
            secrets.redis = try redis.clientConfiguration(environment: environment)
        } catch {
            // Only the password's variable is a secret a lint may lack; the rest (the URL,
            // TLS files) is a problem wherever the file is checked.
            problems.append(SecretProblem(error: error, missing: error.key == redis.passwordEnv && error.problem.hasPrefix("is not set")))
        }
        return problems
    }

    /// Reads each assertion key's PEM file and checks it is a P-256 private key, so a bad key
    /// stops start-up with one line instead of failing the first proxied request. A file that
    /// cannot be read counts as a missing secret (a lint may run where the keys are not).
    package mutating func readAssertionKeys() -> [SecretProblem] {
        var problems: [SecretProblem] = []
        secrets.assertionKeys = []
        for (index, key) in assertion.signingKeys.enumerated() {
            let name = "assertion.signing_keys[\(index)].private_key_file"
            guard let pem = try? String(contentsOfFile: key.privateKeyFile, encoding: .utf8) else {
                problems.append(SecretProblem(error: ConfigError(key: name, "cannot read \(key.privateKeyFile) (key \"\(key.kid)\")"), missing: true))
                continue
            }
            guard (try? ES256PrivateKey(pem: pem)) != nil else {
                problems.append(SecretProblem(
                    error: ConfigError(key: name, "\(key.privateKeyFile) is not a PEM P-256 private key, PKCS#8 or SEC1 (key \"\(key.kid)\")"),
                    missing: false
                ))
                continue
            }
            secrets.assertionKeys.append((key.kid, Secret(pem)))
        }
        return problems
    }

    /// Checks what the types alone cannot; the first problem of ``validationProblems()``.
    package func validate() throws(ConfigError) {
        if let first = validationProblems().first { throw first }
    }

    /// Every value the types alone cannot check, each problem naming its key.
    package func validationProblems() -> [ConfigError] {
        var problems: [ConfigError] = []
        func require(_ condition: Bool, _ key: String, _ problem: String) {
            if !condition { problems.append(ConfigError(key: key, problem)) }
        }
        require(maxBodyBytes > 0, "max_body_bytes", "must be greater than 0")
        for (key, tls) in [("tls", tls), ("admin.tls", admin.tls)] {
            guard let tls else { continue }
            do {
                try tls.check(key: key)
            } catch {
                problems.append(error)
            }
        }
        problems += authz.problems(publicListen: listen, adminListen: admin.listen)
        // The `redis` section is checked as it is turned into the client's settings
        // (``Redis/clientConfiguration(environment:)``, with the secrets).

        require(!tokens.issuer.isEmpty, "tokens.issuer", "must not be empty")
        require(tokens.accessTTL.duration > .zero, "tokens.access_ttl", "must be greater than 0")
        require(tokens.refreshTTL.duration > .zero, "tokens.refresh_ttl", "must be greater than 0")
        require(tokens.refreshReuseInterval.duration <= .seconds(60), "tokens.refresh_reuse_interval", "must be at most 60s (0 turns it off)")
        require(!tokens.signingKeys.isEmpty, "tokens.signing_keys", "needs at least one key")
        var kids = Set<String>()
        for (index, key) in tokens.signingKeys.enumerated() {
            require(!key.kid.isEmpty && kids.insert(key.kid).inserted, "tokens.signing_keys[\(index)].kid", "must be unique and not empty")
        }

        require(otp.uatCode.count == 6 && otp.uatCode.allSatisfy(\.isASCIIDigit), "otp.uat_code", "must be 6 digits")
        require(otp.ttl.duration > .zero, "otp.ttl", "must be greater than 0")
        require(otp.maxAttempts >= 1, "otp.max_attempts", "must be at least 1")
        require(otp.maxFailuresPerDay >= 1, "otp.max_failures_per_day", "must be at least 1")
        require(otp.smsTimeout.duration > .zero, "otp.sms_timeout", "must be greater than 0")
        if otp.mode == .sms {
            let url = URL(string: otp.smsWebhookURL)
            require(
                ["http", "https"].contains(url?.scheme ?? "") && url?.host != nil, "otp.sms_webhook_url", "must be an http(s) URL when otp.mode is sms"
            )
        }

        problems += Self.problems(of: rateLimits.otpTriggerPerPhone, key: "rate_limits.otp_trigger_per_phone")
        problems += Self.problems(of: rateLimits.otpTriggerPerIP, key: "rate_limits.otp_trigger_per_ip")
        problems += Self.problems(of: rateLimits.apiKeyFailuresPerIP, key: "rate_limits.api_key_failures_per_ip")
        problems += Self.problems(of: rateLimits.otpVerifyFailuresPerIP, key: "rate_limits.otp_verify_failures_per_ip")
        require((1...128).contains(rateLimits.ipv6PrefixLength), "rate_limits.ipv6_prefix_length", "must be between 1 and 128")

        var names = Set<String>()
        // Canonical prefix to the first route that has it: two routes on one prefix would
        // leave the file's order to decide which serves it (and which auth applies).
        var prefixes: [String: (index: Int, name: String)] = [:]
        for (index, route) in routes.enumerated() {
            let key = "routes[\(index)]"
            require(!route.name.isEmpty && names.insert(route.name).inserted, "\(key).name", "must be unique and not empty")
            if let first = prefixes[RequestPath.canonicalPrefix(route.pathPrefix)] {
                problems.append(ConfigError(
                    key: "\(key).path_prefix",
                    "\"\(route.pathPrefix)\" is the same prefix as routes[\(first.index)] (\"\(first.name)\"); a trailing slash makes no other prefix, so which route serves it would be ambiguous"
                ))
            } else {
                prefixes[RequestPath.canonicalPrefix(route.pathPrefix)] = (index, route.name)
            }
            require(route.pathPrefix.hasPrefix("/") && !route.pathPrefix.contains("?"), "\(key).path_prefix", "must start with / and hold no query")
            // Requests are routed on their canonical path (RequestPath): any other prefix
            // could never match.
            require(
                RequestPath.isCanonical(Substring(route.pathPrefix).utf8), "\(key).path_prefix",
                "must be a canonical path: no //, . or .. segment, %-escape or backslash"
            )
            problems += route.fleetProblems(key: key)
            if route.hasUpstream, let tls = route.tls {
                require(URL(string: route.upstream)?.scheme == "https", "\(key).tls", "needs an https:// upstream")
                do {
                    try tls.check(key: "\(key).tls")
                } catch {
                    problems.append(error)
                }
            }
            for (position, name) in route.forwardHeaders.enumerated() where HeaderName.routingOrIdentityField(name) == nil {
                problems.append(ConfigError(
                    key: "\(key).forward_headers[\(position)]",
                    "\"\(name)\" is not one of: \(HeaderName.routingAndIdentityFields.joined(separator: ", ")) (every other field is forwarded or set by the gateway's own rules)"
                ))
            }
            problems += route.requestHeaders.problems(key: "\(key).request_headers")
            require(route.timeout.duration > .zero, "\(key).timeout", "must be greater than 0")
            problems += route.idempotency?.problems(key: "\(key).idempotency") ?? []
            require(route.streamIdleTimeout.duration > .zero, "\(key).stream_idle_timeout", "must be greater than 0")
            if let limit = route.rateLimit {
                problems += Self.problems(of: limit.bucket, key: "\(key).rate_limit")
                switch (limit.per, route.auth) {
                case (.user, .none), (.user, .apiKey):
                    problems.append(ConfigError(key: "\(key).rate_limit.per", "\"user\" needs auth: bearer"))
                case (.partner, .none):
                    problems.append(ConfigError(key: "\(key).rate_limit.per", "\"partner\" needs auth: api_key or bearer"))
                default:
                    break
                }
            }
        }
        require((Duration.seconds(1)...Duration.seconds(300)).contains(assertion.ttl.duration), "assertion.ttl", "must be between 1s and 5m")
        var assertionKids = Set<String>()
        for (index, key) in assertion.signingKeys.enumerated() {
            require(!key.kid.isEmpty && assertionKids.insert(key.kid).inserted, "assertion.signing_keys[\(index)].kid", "must be unique and not empty")
        }
        require(server.drainTimeout.duration >= .zero, "server.drain_timeout", "must not be negative")
        require(server.upstreamDNSRefresh.duration >= .seconds(1), "server.upstream_dns_refresh", "must be at least 1s")
        require(server.maxWebSocketsPerUser >= 1, "server.max_websockets_per_user", "must be at least 1")
        require(server.idleTimeout.duration > .zero, "server.idle_timeout", "must be greater than 0")
        require(server.headerReadTimeout.duration > .zero, "server.header_read_timeout", "must be greater than 0")
        require(server.bodyReadTimeout.duration > .zero, "server.body_read_timeout", "must be greater than 0")
        require(server.maxHeaderBytes >= 1024, "server.max_header_bytes", "must be at least 1024")
        if let loops = server.eventLoops {
            require((1...256).contains(loops), "server.event_loops", "must be between 1 and 256")
        }
        problems += tracing.problems()
        problems += web.problems()
        problems += usage.problems()
        problems += portal.problems()
        return problems
    }

    private static func problems(of bucket: Bucket, key: String) -> [ConfigError] {
        var problems: [ConfigError] = []
        if bucket.capacity < 1 { problems.append(ConfigError(key: "\(key).capacity", "must be at least 1")) }
        if !(bucket.refillPerSecond >= 0 && bucket.refillPerSecond.isFinite) {
            problems.append(ConfigError(key: "\(key).refill_per_second", "must be 0 or more"))
        }
        return problems
    }
}

extension Character {
    package var isASCIIDigit: Bool { isASCII && isNumber }
}
