import RedisClient

extension GatewayConfig {
    /// `redis`: where the store is, who the gateway logs in as, and how the link is secured.
    /// docs/redis.md is the reference for each key and topology.
    package struct Redis: Sendable, ConfigSection {
        @Key("url") package var url = "redis://127.0.0.1:6379/0"
        /// The environment variable holding the password of the URL's user (or of the default
        /// user when the URL names none). Empty: no `AUTH` unless the URL carries a password.
        @Key("password_env") package var passwordEnv = ""
        /// Only for `rediss://` URLs; without it TLS uses the system's trust store.
        @Key("tls") package var tls: TLS? = nil
        /// Set to find the primary through Redis Sentinel instead of the URL's host and port.
        @Key("sentinel") package var sentinel: Sentinel? = nil
        /// Set to run on Redis Cluster: the slot map comes from these nodes.
        @Key("cluster") package var cluster: Cluster? = nil
        @Key("pool_size") package var poolSize = 16
        @Key("timeout") package var timeout = ConfigDuration("250ms")!
        /// Replicas that must confirm a revocation, logout or refresh rotation (`WAIT`) before
        /// it is answered; 0 does not wait.
        @Key("wait_replicas") package var waitReplicas = 0
        /// The least time between two writes of a pool connection's commands, in microseconds
        /// (``RedisConfiguration/flushInterval``); 0 writes at the end of every loop tick.
        @Key("flush_interval_us") package var flushIntervalUS = 0

        package init() {}

        /// `redis.tls`: every field optional.
        package struct TLS: Sendable, ConfigSection {
            @Key("ca_file") package var caFile: String? = nil
            @Key("cert_file") package var certFile: String? = nil
            @Key("key_file") package var keyFile: String? = nil
            @Key("server_name") package var serverName: String? = nil

            package init() {}
        }

        /// `redis.sentinel`: which primary to follow and where the sentinels are.
        package struct Sentinel: Sendable, ConfigSection {
            @Key("master_name") package var masterName = ""
            @Key("nodes") package var nodes: [String] = []
            @Key("password_env") package var passwordEnv = ""

            package init() {}

            package func client(environment: [String: String]) throws(ConfigError) -> RedisSentinel {
                guard !masterName.isEmpty else { throw ConfigError(key: "redis.sentinel.master_name", "is required") }
                guard !nodes.isEmpty else { throw ConfigError(key: "redis.sentinel.nodes", "needs at least one host:port") }
                var parsed: [RedisSentinel.Node] = []
                for (index, node) in nodes.enumerated() {
                    guard let address = ListenAddress(node) else {
                        throw ConfigError(key: "redis.sentinel.nodes[\(index)]", "\"\(node)\" is not host:port")
                    }
                    parsed.append(.init(host: address.host, port: address.port))
                }
                var password: String?
                if !passwordEnv.isEmpty {
                    guard let value = environment[passwordEnv], !value.isEmpty else {
                        throw ConfigError(key: passwordEnv, "is not set (the sentinels' password named by redis.sentinel.password_env)")
                    }
                    password = value
                }
                return RedisSentinel(masterName: masterName, nodes: parsed, password: password)
            }
        }

        /// `redis.cluster`: where to ask for the slot map first; the URL's scheme, user and
        /// password (and TLS settings) apply to every node.
        package struct Cluster: Sendable, ConfigSection {
            @Key("nodes") package var nodes: [String] = []

            package init() {}

            package func client() throws(ConfigError) -> RedisCluster {
                guard !nodes.isEmpty else { throw ConfigError(key: "redis.cluster.nodes", "needs at least one host:port") }
                var parsed: [RedisNodeAddress] = []
                for (index, node) in nodes.enumerated() {
                    guard let address = ListenAddress(node) else {
                        throw ConfigError(key: "redis.cluster.nodes[\(index)]", "\"\(node)\" is not host:port")
                    }
                    parsed.append(.init(host: address.host, port: address.port))
                }
                return RedisCluster(seeds: parsed)
            }
        }

        /// The Redis client's settings, with the password from the environment: the one place
        /// the section becomes a `RedisConfiguration`, so the start-up check, the pools and the
        /// subscriber all connect the same way. Every problem is a `ConfigError` naming the key.
        package func clientConfiguration(environment: [String: String]) throws(ConfigError) -> RedisConfiguration {
            var parsed: RedisURL
            do {
                parsed = try RedisURL(url)
            } catch {
                throw ConfigError(key: "redis.url", error.detail)
            }
            if !passwordEnv.isEmpty {
                guard parsed.password == nil else {
                    throw ConfigError(key: "redis.url", "carries a password and redis.password_env is set: keep the password in the environment only")
                }
                guard let password = environment[passwordEnv], !password.isEmpty else {
                    throw ConfigError(key: passwordEnv, "is not set (the Redis password named by redis.password_env)")
                }
                parsed.password = password
            }
            var redisTLS: RedisTLS?
            if let tls {
                guard parsed.usesTLS else {
                    throw ConfigError(key: "redis.tls", "is set but redis.url is redis://; use rediss:// for TLS")
                }
                do {
                    redisTLS = try RedisTLS(.init(
                        caFile: tls.caFile, certificateFile: tls.certFile, privateKeyFile: tls.keyFile, serverName: tls.serverName
                    ))
                } catch {
                    throw ConfigError(key: "redis.tls", error.detail)
                }
            } else if parsed.usesTLS {
                do {
                    redisTLS = try RedisTLS()
                } catch {
                    throw ConfigError(key: "redis.url", error.detail)
                }
            }
            guard (1...1024).contains(poolSize) else { throw ConfigError(key: "redis.pool_size", "must be between 1 and 1024") }
            guard timeout.duration > .zero else { throw ConfigError(key: "redis.timeout", "must be greater than 0") }
            guard (0...16).contains(waitReplicas) else { throw ConfigError(key: "redis.wait_replicas", "must be between 0 and 16") }
            guard (0...10_000).contains(flushIntervalUS) else {
                throw ConfigError(key: "redis.flush_interval_us", "must be between 0 and 10000 (microseconds)")
            }
            if cluster != nil {
                guard sentinel == nil else {
                    throw ConfigError(key: "redis.cluster", "and redis.sentinel exclude each other: a cluster fails over by itself")
                }
                guard parsed.database == 0 else {
                    throw ConfigError(key: "redis.url", "names database \(parsed.database), but Redis Cluster has only database 0")
                }
            }
            return RedisConfiguration(
                url: parsed, tls: redisTLS, sentinel: try sentinel?.client(environment: environment), cluster: try cluster?.client(),
                poolSize: poolSize, timeout: timeout.duration, waitReplicas: waitReplicas, flushInterval: .microseconds(flushIntervalUS)
            )
        }
    }
}
