import GatewayConfiguration

/// Configurations for in-process tests, built through the same loader the binary uses.
package enum TestConfig {
    package static let environment = [
        "GATEWAY_ADMIN_TOKEN": GatewayProcess.adminToken,
        "GATEWAY_JWT_SECRET": GatewayProcess.jwtSecret,
        "GATEWAY_PHONE_KEY": GatewayProcess.phoneKey,
    ]

    package static func load(_ yaml: String, environment: [String: String] = environment) throws -> GatewayConfig {
        var config = try GatewayConfig.parse(yaml: yaml)
        try config.applyOverrides(from: environment)
        try config.validate()
        return config
    }

    /// A minimal valid configuration against `redisURL`, with `extra` YAML appended.
    package static func yaml(redisURL: String, extra: String = "") -> String {
        """
        listen: 127.0.0.1:0
        admin:
          listen: 127.0.0.1:0
        redis:
          url: \(redisURL)
          timeout: \(GatewayProcess.redisTimeout)
        otp:
          mode: uat
        log:
          access_log: false
        \(extra)
        """
    }
}
