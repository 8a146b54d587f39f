import Foundation

extension GatewayConfig {
    /// `portal`: the partner portal, where partners' own people manage their keys and read
    /// their usage in a browser (docs/portal.md). Off by default; read at start.
    package struct Portal: Sendable, ConfigSection {
        package enum Delivery: String, Sendable, ConfigEnum {
            /// Sign-in codes are posted to `code_webhook_url`, signed.
            case webhook
            /// Testing environments: the code is always `uat_code` and nothing is sent.
            case uat
        }

        @Key("enabled") package var enabled = false
        /// The origin the portal is served from, as partners' browsers see the gateway
        /// (`https://partners.example.com`): every portal API call must carry it as `Origin`.
        @Key("origin") package var origin = ""
        @Key("delivery") package var delivery = Delivery.webhook
        /// Receives `POST {"email", "message"}` with each sign-in code.
        @Key("code_webhook_url") package var codeWebhookURL = ""
        /// The environment variable holding the key each code webhook call is signed with
        /// (`X-Gateway-Signature`, as the SMS webhook's): its own, so neither receiver can
        /// forge calls to the other (an extension).
        @Key("code_webhook_secret_env") package var codeWebhookSecretEnv = "GATEWAY_PORTAL_WEBHOOK_SECRET"
        @Key("uat_code") package var uatCode = "123456"
        /// A session unused this long ends.
        @Key("session_idle") package var sessionIdle = ConfigDuration("30m")!
        /// A session ends this long after sign-in, used or not.
        @Key("session_max") package var sessionMax = ConfigDuration("12h")!

        package init() {}

        /// Whether codes go out through the webhook (and so need its URL and key).
        package var sendsCodes: Bool { enabled && delivery == .webhook }

        /// Every value the types alone cannot check, each naming its key. A disabled portal
        /// is still checked, so turning it on never reveals an old mistake.
        package func problems() -> [ConfigError] {
            var problems: [ConfigError] = []
            if enabled && origin.isEmpty {
                problems.append(ConfigError(key: "portal.origin", "is required when portal.enabled is true: the origin partners' browsers load the portal from, e.g. https://partners.example.com"))
            } else if !origin.isEmpty && !Web.isOrigin(origin) {
                problems.append(ConfigError(
                    key: "portal.origin",
                    "\"\(origin)\" is not an origin: write scheme://host[:port] (http or https, lowercase, no path, no wildcard), e.g. https://partners.example.com"
                ))
            }
            if sendsCodes {
                let url = URL(string: codeWebhookURL)
                if !["http", "https"].contains(url?.scheme ?? "") || url?.host == nil {
                    problems.append(ConfigError(key: "portal.code_webhook_url", "must be an http(s) URL when portal.delivery is webhook"))
                }
            }
            if !(uatCode.count == 6 && uatCode.allSatisfy(\.isASCIIDigit)) {
                problems.append(ConfigError(key: "portal.uat_code", "must be 6 digits"))
            }
            if sessionIdle.duration <= .zero {
                problems.append(ConfigError(key: "portal.session_idle", "must be greater than 0"))
            }
            if sessionMax.duration <= .zero {
                problems.append(ConfigError(key: "portal.session_max", "must be greater than 0"))
            } else if sessionIdle.duration > sessionMax.duration {
                problems.append(ConfigError(key: "portal.session_idle", "must be at most portal.session_max (\(sessionMax))"))
            }
            return problems
        }
    }
}
