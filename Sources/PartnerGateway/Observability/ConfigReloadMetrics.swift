import Metrics

/// `gateway_config_reloads_total{result}`: `applied` or `invalid` (the file was refused and
/// the running configuration kept).
enum ConfigReloadMetrics {
    static let applied = Counter(label: "gateway_config_reloads_total", dimensions: [("result", "applied")])
    static let invalid = Counter(label: "gateway_config_reloads_total", dimensions: [("result", "invalid")])
}
