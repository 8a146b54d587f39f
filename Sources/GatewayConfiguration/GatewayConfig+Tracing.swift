import Foundation

extension GatewayConfig {
    /// `tracing`: OpenTelemetry spans exported over OTLP/HTTP (docs/operations.md, "Tracing").
    /// Off unless `otlp_endpoint` is set; then every request's trace is continued or started,
    /// and kept at `sampling_ratio` when it is a new one.
    package struct Tracing: Sendable, ConfigSection {
        /// The collector's OTLP/HTTP base URL (`http://127.0.0.1:4318`); spans are posted to
        /// its `/v1/traces`. Empty: tracing is off and costs nothing per request.
        @Key("otlp_endpoint") package var otlpEndpoint = ""
        /// The share of new traces (requests without a sampled `traceparent`) that are
        /// recorded and exported. A caller's sampled flag is always honoured.
        @Key("sampling_ratio") package var samplingRatio = 1.0
        /// `service.name` of every span.
        @Key("service_name") package var serviceName = "partner-gateway"

        package init() {}

        package var isEnabled: Bool { !otlpEndpoint.isEmpty }

        /// Where spans are posted: the endpoint's `/v1/traces`, as the OpenTelemetry SDKs do
        /// with `OTEL_EXPORTER_OTLP_ENDPOINT`.
        package var tracesURL: String {
            (otlpEndpoint.hasSuffix("/") ? String(otlpEndpoint.dropLast()) : otlpEndpoint) + "/v1/traces"
        }

        /// Every value the types alone cannot check, each naming its key.
        package func problems() -> [ConfigError] {
            var problems: [ConfigError] = []
            if isEnabled {
                let url = URL(string: otlpEndpoint)
                if !["http", "https"].contains(url?.scheme ?? "") || url?.host == nil || url?.query != nil {
                    problems.append(ConfigError(
                        key: "tracing.otlp_endpoint", "must be an http:// or https:// URL (the collector's OTLP/HTTP address, e.g. http://127.0.0.1:4318) or empty"
                    ))
                }
            }
            if !(0...1).contains(samplingRatio) {
                problems.append(ConfigError(key: "tracing.sampling_ratio", "must be between 0.0 and 1.0"))
            }
            if serviceName.isEmpty {
                problems.append(ConfigError(key: "tracing.service_name", "must not be empty"))
            }
            return problems
        }
    }
}
