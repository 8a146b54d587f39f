import Foundation

extension GatewayConfig {
    /// `web`: browser apps on their own origins (docs/configuration.md, "web"). Empty
    /// `allowed_origins`: no CORS and no refresh cookie.
    package struct Web: Sendable, ConfigSection {
        /// Exact origins (`scheme://host[:port]`) whose pages may call the gateway with
        /// credentials; compared byte for byte with the `Origin` a browser sends.
        @Key("allowed_origins") package var allowedOrigins: [String] = []

        package init() {}

        /// Every origin that is not what a browser would send as `Origin`: a wildcard or a
        /// path would silently never match (or match too much), so both are refused.
        package func problems() -> [ConfigError] {
            allowedOrigins.enumerated().compactMap { index, origin in
                Self.isOrigin(origin) ? nil : ConfigError(
                    key: "web.allowed_origins[\(index)]",
                    "\"\(origin)\" is not an origin: write scheme://host[:port] (http or https, lowercase, no path, no wildcard), e.g. https://app.example.com"
                )
            }
        }

        /// `http(s)://host[:port]` exactly as a browser serialises it: lowercase, no default
        /// port, nothing after the authority.
        static func isOrigin(_ text: String) -> Bool {
            guard text == text.lowercased(), !text.contains("*"),
                let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme),
                let host = url.host, !host.isEmpty, url.user == nil, url.password == nil,
                url.path.isEmpty, url.query == nil, url.fragment == nil
            else { return false }
            if let port = url.port {
                guard (1...65535).contains(port), port != (scheme == "https" ? 443 : 80) else { return false }
            }
            var rebuilt = "\(scheme)://\(host)"
            if let port = url.port { rebuilt += ":\(port)" }
            return rebuilt == text || "\(scheme)://[\(host)]" + (url.port.map { ":\($0)" } ?? "") == text
        }
    }
}
