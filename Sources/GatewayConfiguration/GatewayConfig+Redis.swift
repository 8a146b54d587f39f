import RedisClient

extension GatewayConfig {
    /// `redis`: where the store is, who the gateway logs in as, and how the link is secured.
    /// docs/redis.md is the reference for each key and topology.
    package struct Redis: Sendable, Decodable {
        package var url = "redis://127.0.0.1:6379/0"
        /// The environment variable holding the password of the URL's user (or of the default
        /// user when the URL names none). Empty: no `AUTH` unless the URL carries a password.
        package var passwordEnv = ""
        /// Only for `rediss://` URLs; without it TLS uses the system's trust store.
        package var tls: TLS?
        /// Set to find the primary through Redis Sentinel instead of the URL's host and port.
        package var sentinel: Sentinel?
        /// Set to run on Redis Cluster: the slot map comes from these nodes.
        package var cluster: Cluster?
        package var poolSize = 16
        package var timeout = ConfigDuration("250ms")!
        /// Replicas that must confirm a revocation, logout or refresh rotation (`WAIT`) before
        /// it is answered; 0 does not wait.
        package var waitReplicas = 0
        /// The least time between two writes of a pool connection's commands, in microseconds
        /// (``RedisConfiguration/flushInterval``); 0 writes at the end of every loop tick.
        package var flushIntervalUS = 0

        package init() {}
        package enum CodingKeys: String, CodingKey, CaseIterable {
            case url, timeout, tls, sentinel, cluster
            case passwordEnv = "password_env"
            case poolSize = "pool_size"
            case waitReplicas = "wait_replicas"
            case flushIntervalUS = "flush_interval_us"
        }
        package init(from decoder: any Decoder) throws {
            self.init()
            let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
            url = try keys.value(.url, or: url)
            passwordEnv = try keys.value(.passwordEnv, or: passwordEnv)
            tls = try keys.value(.tls, or: tls)
            sentinel = try keys.value(.sentinel, or: sentinel)
            cluster = try keys.value(.cluster, or: cluster)
            poolSize = try keys.value(.poolSize, or: poolSize)
            timeout = try keys.value(.timeout, or: timeout)
            waitReplicas = try keys.value(.waitReplicas, or: waitReplicas)
            flushIntervalUS = try keys.value(.flushIntervalUS, or: flushIntervalUS)
        }

        /// `redis.tls`: every field optional.
        package struct TLS: Sendable, Decodable {
            package var caFile: String?
            package var certFile: String?
            package var keyFile: String?
            package var serverName: String?

            package init() {}
            package enum CodingKeys: String, CodingKey, CaseIterable {
                case caFile = "ca_file"
                case certFile = "cert_file"
                case keyFile = "key_file"
                case serverName = "server_name"
            }
            package init(from decoder: any Decoder) throws {
                self.init()
                let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
                caFile = try keys.value(.caFile, or: caFile)
                certFile = try keys.value(.certFile, or: certFile)
                keyFile = try keys.value(.keyFile, or: keyFile)
                serverName = try keys.value(.serverName, or: serverName)
            }
        }

        /// `redis.sentinel`: which primary to follow and where the sentinels are.
        package struct Sentinel: Sendable, Decodable {
            package var masterName = ""
            package var nodes: [String] = []
            package var passwordEnv = ""

            package init() {}
            package enum CodingKeys: String, CodingKey, CaseIterable {
                case nodes
                case masterName = "master_name"
                case passwordEnv = "password_env"
            }
            package init(from decoder: any Decoder) throws {
                self.init()
                let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
                masterName = try keys.value(.masterName, or: masterName)
                nodes = try keys.value(.nodes, or: nodes)
                passwordEnv = try keys.value(.passwordEnv, or: passwordEnv)
            }

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
        package struct Cluster: Sendable, Decodable {
            package var nodes: [String] = []

            package init() {}
            package enum CodingKeys: String, CodingKey, CaseIterable {
                case nodes
            }
            package init(from decoder: any Decoder) throws {
                self.init()
                let keys = try decoder.strictContainer(keyedBy: CodingKeys.self)
                nodes = try keys.value(.nodes, or: nodes)
            }

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
