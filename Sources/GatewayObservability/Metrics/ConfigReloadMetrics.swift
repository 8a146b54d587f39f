import Metrics

/// `gateway_config_reloads_total{result}`: `applied` or `invalid` (the file was refused and
/// the running configuration kept).
package enum ConfigReloadMetrics {
    package static let applied = Counter(label: "gateway_config_reloads_total", dimensions: [("result", "applied")])
    package static let invalid = Counter(label: "gateway_config_reloads_total", dimensions: [("result", "invalid")])
}
