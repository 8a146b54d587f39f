import Foundation

extension GatewayConfig.Route {
    /// One instance behind a route: in the file a URL alone (`- http://10.0.0.1:9001`) or
    /// `{url: ..., weight: 2}`.
    package struct UpstreamTarget: Sendable, Hashable, ConfigSection {
        @Key("url", .required) package var url = ""
        /// Its share of the route's requests relative to the other targets', 1...100.
        @Key("weight") package var weight = 1

        package init() {}
        package init(url: String, weight: Int = 1) {
            self.url = url
            self.weight = weight
        }

        package init(from decoder: any Decoder) throws {
            if let url = try? decoder.singleValueContainer().decode(String.self) {
                self.init(url: url)
                return
            }
            try self.init(keysFrom: decoder)
        }
    }

    /// How a route spreads its requests over its healthy targets.
    package enum Balance: String, Sendable, ConfigEnum {
        /// Smooth weighted round robin (nginx's), kept per event loop.
        case roundRobin = "round_robin"
        /// The fewer requests in flight of two targets drawn at random (Envoy's power of two choices).
        case leastRequest = "least_request"
        /// A consistent hash of the caller's user or partner id: one caller stays on one target.
        case hashUser = "hash_user"
    }

    /// What `upstream: none` says: the route is authorized for edges (docs/edges.md) and never
    /// proxied by the gateway.
    package static let noUpstream = "none"

    /// Whether the gateway proxies the route's requests (false: `upstream: none`).
    package var hasUpstream: Bool { !targets.isEmpty }

    /// `upstream` as written: one URL, a list of targets, or `none` (no target).
    static func readTargets(_ keys: KeyedDecodingContainer<AnyConfigKey>, _ key: AnyConfigKey) throws -> [UpstreamTarget] {
        if let url = try? keys.decode(String.self, forKey: key) {
            return url == noUpstream ? [] : [UpstreamTarget(url: url)]
        }
        do {
            let targets = try keys.decode([UpstreamTarget].self, forKey: key)
            // Only `none` says a route has no upstream; an empty list is a list left unfilled.
            guard !targets.isEmpty else {
                throw ConfigError(path: keys.codingPath + [key], "needs at least one target (upstream: none for a route only edges ask about)")
            }
            return targets
        } catch DecodingError.typeMismatch(_, let context) where context.codingPath.count <= keys.codingPath.count + 1 {
            throw ConfigError(path: keys.codingPath + [key], "expected a URL or a list of targets")
        }
    }

    /// The fleet's problems: every target an http(s) URL without credentials or a query, all of one
    /// scheme and base path (a request must mean the same thing on each), weights 1...100, and
    /// the balancing, check, ejection and retry settings in range.
    package func fleetProblems(key: String) -> [ConfigError] {
        var problems: [ConfigError] = []
        func require(_ condition: Bool, _ key: String, _ problem: String) {
            if !condition { problems.append(ConfigError(key: key, problem)) }
        }
        guard hasUpstream else { return authorizationOnlyProblems(key: key) }
        require(targets.count <= 64, "\(key).upstream", "at most 64 targets")
        var seen = Set<String>()
        for (index, target) in targets.enumerated() {
            let targetKey = targets.count == 1 ? "\(key).upstream" : "\(key).upstream[\(index)]"
            let url = URL(string: target.url)
            guard ["http", "https"].contains(url?.scheme ?? ""), url?.host != nil else {
                problems.append(ConfigError(key: targetKey, "must be an http:// or https:// URL"))
                continue
            }
            // Credentials in the URL would sit in the file, in logs and in every error naming it.
            require(
                url?.user == nil && url?.password == nil && !Self.authority(of: target.url).contains("@"),
                targetKey, "must not hold credentials (user:password@); use forward_authorization or the gateway's assertion"
            )
            // A query or fragment would be dropped from every request, yet shown in each access line.
            require(
                url?.query == nil && url?.fragment == nil && !target.url.contains("?") && !target.url.contains("#"),
                targetKey, "must not hold a query or fragment (?, #): the upstream is sent the client's"
            )
            require((1...100).contains(target.weight), "\(targetKey).weight", "must be between 1 and 100")
            require(seen.insert(Self.authority(of: target.url).lowercased()).inserted, targetKey, "names the same host:port as another target")
            if index > 0, let first = URL(string: targets[0].url) {
                require(url?.scheme == first.scheme, targetKey, "must have the scheme of the first target (\(first.scheme ?? ""))")
                require(Self.basePath(url!) == Self.basePath(first), targetKey, "must have the path of the first target (\"\(first.path)\")")
            }
        }
        if balance == .hashUser {
            require(auth != .none, "\(key).balance", "hash_user needs auth: bearer or api_key (a caller to hash)")
        }
        if let check = healthCheck {
            require(check.path.hasPrefix("/") && !check.path.contains(" "), "\(key).health_check.path", "must start with / and hold no space")
            require(check.interval.duration >= .milliseconds(100), "\(key).health_check.interval", "must be at least 100ms")
            require(
                check.timeout.duration > .zero && check.timeout <= check.interval, "\(key).health_check.timeout",
                "must be greater than 0 and at most the interval"
            )
            require((1...10).contains(check.healthy), "\(key).health_check.healthy", "must be between 1 and 10")
            require((1...10).contains(check.unhealthy), "\(key).health_check.unhealthy", "must be between 1 and 10")
        }
        require((1...1000).contains(outlier.consecutiveFailures), "\(key).outlier.consecutive_failures", "must be between 1 and 1000")
        require(outlier.ejectionTime.duration > .zero, "\(key).outlier.ejection_time", "must be greater than 0")
        require((0...100).contains(outlier.maxEjectedPercent), "\(key).outlier.max_ejected_percent", "must be between 0 and 100")
        require((0...5).contains(retries.attempts), "\(key).retries.attempts", "must be between 0 and 5")
        return problems
    }

    /// The keys of a route with `upstream: none` that are set but could only change how the
    /// gateway proxies, which it never does for that route: refused, not ignored.
    private func authorizationOnlyProblems(key: String) -> [ConfigError] {
        let defaults = Self()
        let proxyingKeys: [(String, Bool)] = [
            ("balance", balance != defaults.balance), ("health_check", healthCheck != nil), ("outlier", outlier != defaults.outlier),
            ("retries", retries != defaults.retries), ("strip_prefix", stripPrefix), ("timeout", timeout != defaults.timeout),
            ("websocket", websocket), ("stream_idle_timeout", streamIdleTimeout != defaults.streamIdleTimeout),
            ("forward_authorization", forwardAuthorization), ("forward_api_key", forwardAPIKey),
            ("forward_headers", !forwardHeaders.isEmpty), ("request_headers", requestHeaders != defaults.requestHeaders),
            ("idempotency", idempotency != nil), ("tls", tls != nil), ("cors", cors != defaults.cors),
        ]
        return proxyingKeys.filter(\.1).map { name, _ in
            ConfigError(key: "\(key).\(name)", "means nothing with upstream: none (the gateway never proxies the route; an edge does)")
        }
    }

    /// What stands between `scheme://` and the path of `url` (all of it when there is no `://`).
    package static func authority(of url: String) -> Substring {
        let rest = url.range(of: "://").map { url[$0.upperBound...] } ?? Substring(url)
        return rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    }

    /// The URL's path without trailing slashes: what every forwarded path is put under.
    package static func basePath(_ url: URL) -> String {
        var base = url.path
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }
}
