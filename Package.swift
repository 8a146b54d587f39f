// swift-tools-version:6.1
import PackageDescription

/// Settings every target shares: Swift 6 language mode (strict concurrency) plus the
/// upcoming features that keep imports honest.
let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    // The request path crosses the gateway's libraries (edge, proxy, observability) many
    // times per request: release builds let the optimiser inline and specialise across them,
    // as it did when they were one module (docs/DECISIONS.md, "The gateway as libraries").
    .unsafeFlags(["-cross-module-optimization"], .when(configuration: .release)),
]

/// Tests import what they use without the import-visibility checks the products follow.
let testSwiftSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "partner-gateway",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "PartnerGateway", targets: ["PartnerGateway"]),
        .executable(name: "gatewayctl", targets: ["gatewayctl"]),
        .executable(name: "echo-upstream", targets: ["EchoUpstream"]),
        .executable(name: "redis-bench", targets: ["RedisBench"]),
        .executable(name: "proxy-floor", targets: ["ProxyFloor"]),
        .library(name: "RedisClient", targets: ["RedisClient"]),
        .library(name: "KeyRegistry", targets: ["KeyRegistry"]),
        .library(name: "RateLimit", targets: ["RateLimit"]),
        .library(name: "DriverSessions", targets: ["DriverSessions"]),
        .library(name: "GatewayContract", targets: ["GatewayContract"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/swift-extras/swift-extras-base64.git", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // OTLP/HTTP only: the gRPC exporter's trait would build grpc-swift and its HTTP/2 stack.
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        // The small helpers every module shares: lowercase hex, random hex ids, `Duration` in
        // seconds, milliseconds and microseconds. Standard library only.
        .target(
            name: "GatewayPrimitives",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "GatewayPrimitivesTests",
            dependencies: ["GatewayPrimitives"],
            swiftSettings: testSwiftSettings
        ),
        // hiredis 0.14.1 from Debian's libhiredis-dev: the only C in the project.
        .systemLibrary(
            name: "CHiredis",
            pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        // glibc's malloc_trim: memory a burst of closed connections freed goes back to the system.
        .systemLibrary(name: "CMalloc"),
        // The Redis client: the only Swift code that sees a C pointer.
        .target(
            name: "RedisClient",
            dependencies: [
                "CHiredis",
                "GatewayPrimitives",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "RateLimit",
            dependencies: [
                "RedisClient",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KeyRegistry",
            dependencies: [
                "GatewayContract",
                "GatewayPrimitives",
                "RedisClient",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // Drivers' access tokens (JWT HS256) and refresh tokens: formats, signing, verification.
        .target(
            name: "DriverTokens",
            dependencies: [
                "GatewayPrimitives",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Drivers' users, OTPs and login sessions in Redis; revocations cached in process.
        .target(
            name: "DriverSessions",
            dependencies: [
                "GatewayPrimitives",
                "RedisClient",
                "DriverTokens",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // What the admin API's server and gatewayctl share: wire types, the error body, the
        // duration grammar, the page shape, the audit trail's hash chain. No HTTP framework.
        .target(
            name: "GatewayContract",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // Partners as code: the state file's model, read with Yams and checked with the admin
        // API's rules (each problem at its file and line), export, the plan that makes the
        // gateway match the files and its application through the admin API. No HTTP: the
        // calls are gatewayctl's.
        .target(
            name: "GatewayState",
            dependencies: [
                "GatewayContract",
                "GatewayPrimitives",
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        // The configuration file's model: decoding, defaults, validation, secrets. No runtime.
        .target(
            name: "GatewayConfiguration",
            dependencies: [
                "GatewayPrimitives",
                "GatewayContract",
                "RedisClient",
                .product(name: "Yams", package: "Yams"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // Logs, metrics, traces and the access log: what every layer reports through.
        .target(
            name: "GatewayObservability",
            dependencies: [
                "GatewayPrimitives",
                "GatewayConfiguration",
                "RedisClient",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The client edge: HTTP/1 and HTTP/2 connection rules, request-head rules, timers, TLS
        // certificates, the error shape. Knows nothing of routes or upstreams.
        .target(
            name: "GatewayEdge",
            dependencies: [
                "GatewayPrimitives",
                "GatewayConfiguration",
                "GatewayObservability",
                "CMalloc",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // Admission of a proxied request: the authenticators (bearer token, API key), rate
        // limits and quotas, the caller's identity and its signed assertion, CORS and the
        // refresh cookie, and the pipeline that runs them. No routes, no upstreams, no HTTP framework.
        .target(
            name: "GatewayAdmission",
            dependencies: [
                "GatewayPrimitives",
                "GatewayConfiguration",
                "GatewayObservability",
                "GatewayEdge",
                "RedisClient",
                "RateLimit",
                "KeyRegistry",
                "DriverTokens",
                "DriverSessions",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The proxy engine: routes, the exchange and its HTTP/1 and HTTP/2 front ends, the
        // upstream client; admission asked of GatewayAdmission.
        .target(
            name: "GatewayProxy",
            dependencies: [
                "GatewayPrimitives",
                "GatewayConfiguration",
                "GatewayObservability",
                "GatewayEdge",
                "GatewayAdmission",
                "KeyRegistry",
                "DriverTokens",
                "DriverSessions",
                "RedisClient",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ExtrasBase64", package: "swift-extras-base64"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: swiftSettings
        ),
        // The gateway's own endpoints on Hummingbird: the controllers (`/auth/*`, the partner
        // API, health, JWKS, the admin API), their middleware, token issuing and OTP delivery,
        // and the routers built from them.
        .target(
            name: "GatewayEndpoints",
            dependencies: [
                "GatewayPrimitives",
                "GatewayContract",
                "GatewayConfiguration",
                "GatewayObservability",
                "GatewayEdge",
                "GatewayAdmission",
                "GatewayProxy",
                "RedisClient",
                "RateLimit",
                "KeyRegistry",
                "DriverTokens",
                "DriverSessions",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            // The partner portal's pages (docs/portal.md): plain files, served from memory.
            resources: [.copy("Portal")],
            swiftSettings: swiftSettings
        ),
        // The listeners: the HTTP/1.1 and TLS (HTTP/2) pipelines, the endpoints' responder and
        // its state machine, the connections' drain at shutdown.
        .target(
            name: "GatewayServer",
            dependencies: [
                "GatewayConfiguration",
                "GatewayEdge",
                "GatewayEndpoints",
                "GatewayProxy",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Composition only: what both listeners share, built once, the services and their
        // start-up, reload and shutdown.
        .executableTarget(
            name: "PartnerGateway",
            dependencies: [
                "GatewayPrimitives",
                "GatewayContract",
                "GatewayConfiguration",
                "GatewayObservability",
                "GatewayEdge",
                "GatewayAdmission",
                "GatewayProxy",
                "GatewayEndpoints",
                "GatewayServer",
                "RedisClient",
                "RateLimit",
                "KeyRegistry",
                "DriverTokens",
                "DriverSessions",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["BuildInfoPlugin"]
        ),
        .executableTarget(
            name: "gatewayctl",
            dependencies: [
                "GatewayContract",
                "GatewayPrimitives",
                "GatewayState",
                .product(name: "Yams", package: "Yams"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings,
            plugins: ["BuildInfoPlugin"]
        ),
        // Records the git commit for `PartnerGateway --version` and `gatewayctl version`.
        .plugin(name: "BuildInfoPlugin", capability: .buildTool()),
        .executableTarget(
            name: "EchoUpstream",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // A bare SwiftNIO reverse proxy: what the stack alone costs, for benchmarks/proxy-floor.sh.
        .executableTarget(
            name: "ProxyFloor",
            dependencies: [
                "GatewayEdge",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "RedisBench",
            dependencies: [
                "GatewayPrimitives",
                "RedisClient",
                "RateLimit",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Starts and stops real processes (redis-server, the gateway, scripted upstreams) for the
        // test targets, and talks to the gateway over HTTP as its clients do.
        .target(
            name: "TestSupport",
            dependencies: [
                "GatewayConfiguration",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/TestSupport",
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "RedisClientTests",
            dependencies: ["RedisClient", "TestSupport"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "RateLimitTests",
            dependencies: ["RateLimit", "TestSupport"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "DriverTokensTests",
            dependencies: ["DriverTokens", "TestSupport", .product(name: "JWTKit", package: "jwt-kit")],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "KeyRegistryTests",
            dependencies: ["KeyRegistry", "TestSupport"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "DriverSessionsTests",
            dependencies: ["DriverSessions", "DriverTokens", "TestSupport"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "GatewayContractTests",
            dependencies: ["GatewayContract"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "GatewayStateTests",
            dependencies: ["GatewayState", "GatewayContract", "TestSupport", .product(name: "Yams", package: "Yams")],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "GatewayctlTests",
            dependencies: [
                "gatewayctl",
                "GatewayContract",
                "KeyRegistry",
                "TestSupport",
                .product(name: "Yams", package: "Yams"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: testSwiftSettings
        ),
        // The libraries' in-memory tests: each builds its library, not the executable.
        .testTarget(
            name: "GatewayConfigurationTests",
            dependencies: ["GatewayConfiguration", "GatewayPrimitives", "TestSupport"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "GatewayObservabilityTests",
            dependencies: [
                "GatewayObservability",
                "TestSupport",
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "GatewayEdgeTests",
            dependencies: [
                "GatewayEdge",
                "TestSupport",
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "GatewayAdmissionTests",
            dependencies: ["GatewayAdmission", "TestSupport"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "GatewayProxyTests",
            dependencies: [
                "GatewayConfiguration",
                "GatewayEdge",
                "GatewayAdmission",
                "GatewayProxy",
                "TestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "GatewayEndpointsTests",
            dependencies: [
                "GatewayConfiguration",
                "GatewayEdge",
                "GatewayAdmission",
                "GatewayEndpoints",
                "DriverSessions",
                "KeyRegistry",
                "RedisClient",
                "TestSupport",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "GatewayServerTests",
            dependencies: [
                "GatewayEdge",
                "GatewayServer",
                "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "PartnerGatewayTests",
            dependencies: [
                "PartnerGateway",
                "GatewayObservability",
                "GatewayEndpoints",
                "TestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: testSwiftSettings
        ),
        // The gateway on production Redis set-ups (TLS, ACL users), against real processes.
        .testTarget(
            name: "RedisTopologyTests",
            dependencies: [
                "TestSupport",
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: testSwiftSettings
        ),
        // Whole-gateway faults, abuse and data survival, against real processes only.
        .testTarget(
            name: "HardeningTests",
            dependencies: [
                "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ],
            swiftSettings: testSwiftSettings
        ),
    ]
)
