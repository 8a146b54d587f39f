extension GatewayConfig {
    /// `authz`: the authorization listener, where edges (nginx, Envoy, Traefik) ask whether a
    /// request may pass (`/forward`) and services check a credential (`POST /v1/verify`)
    /// (docs/edges.md). Off unless `listen` is set; it belongs on the private network the edges
    /// live on, like the admin listener.
    package struct Authz: Sendable, ConfigSection {
        /// Where the listener listens; nil: there is none.
        @Key("listen") package var listen: ListenAddress? = nil
        /// HTTPS on the listener (the keys of `admin.tls`); nil: plain HTTP.
        @Key("tls") package var tls: ListenerTLS? = nil

        package init() {}

        /// `tls` without `listen` would be a setting that does nothing; one address for two
        /// listeners could never bind.
        package func problems(publicListen: ListenAddress, adminListen: ListenAddress) -> [ConfigError] {
            guard let listen else {
                return tls == nil ? [] : [ConfigError(key: "authz.tls", "needs authz.listen (there is no authorization listener without it)")]
            }
            var problems: [ConfigError] = []
            for (key, other) in [("listen", publicListen), ("admin.listen", adminListen)] where other.port == listen.port && other.port != 0 {
                if other.host == listen.host || ["0.0.0.0", "::"].contains(other.host) || ["0.0.0.0", "::"].contains(listen.host) {
                    problems.append(ConfigError(key: "authz.listen", "\(listen) is the address of \(key)"))
                }
            }
            if let tls {
                do {
                    try tls.check(key: "authz.tls")
                } catch {
                    problems.append(error)
                }
            }
            return problems
        }
    }
}
