/// The Prometheus type of every metric family the gateway exports, so `/metrics` can describe
/// a family before its first series exists: swift-prometheus only knows a family once a series
/// of it is made, and a labelled family has none until its first event.
///
/// Every family of ``MetricHelp`` needs a line here (the metrics test checks both tables
/// against docs/operations.md).
package enum MetricFamilyType: String, Sendable {
    case counter
    case gauge
    case histogram

    package static let families: [String: MetricFamilyType] = [
        "gateway_http_requests_total": .counter,
        "gateway_http_request_duration_seconds": .histogram,
        "gateway_http_requests_in_flight": .gauge,
        "gateway_access_log_dropped_total": .counter,
        "gateway_upstream_duration_seconds": .histogram,
        "gateway_upstream_responses_total": .counter,
        "gateway_upstream_errors_total": .counter,
        "gateway_upstream_target_requests_total": .counter,
        "gateway_upstream_retries_total": .counter,
        "gateway_idempotency_requests_total": .counter,
        "gateway_upstream_ejections_total": .counter,
        "gateway_upstream_health_check_failures_total": .counter,
        "gateway_upstream_target_healthy": .gauge,
        "gateway_websocket_connections": .gauge,
        "gateway_websocket_upgrades_refused_total": .counter,
        "gateway_websocket_closes_total": .counter,
        "gateway_api_key_verifications_total": .counter,
        "gateway_access_token_refusals_total": .counter,
        "gateway_cache_lookups_total": .counter,
        "gateway_rate_limit_decisions_total": .counter,
        "gateway_rate_limit_store_errors_total": .counter,
        "gateway_authorization_decisions_total": .counter,
        "gateway_otp_sent_total": .counter,
        "gateway_otp_delivery_failures_total": .counter,
        "gateway_otp_verifications_total": .counter,
        "gateway_token_refreshes_total": .counter,
        "gateway_refresh_token_reuse_total": .counter,
        "gateway_session_revocations_total": .counter,
        "gateway_sdk_tokens_minted_total": .counter,
        "gateway_admin_actions_total": .counter,
        "gateway_redis_command_duration_seconds": .histogram,
        "gateway_redis_script_duration_seconds": .histogram,
        "gateway_redis_errors_total": .counter,
        "gateway_redis_calls_in_flight": .gauge,
        "gateway_redis_pool_size": .gauge,
        "gateway_redis_connects_total": .counter,
        "gateway_redis_primary": .gauge,
        "gateway_redis_redirections_total": .counter,
        "gateway_redis_failovers_total": .counter,
        "gateway_invalidation_messages_total": .counter,
        "gateway_invalidation_resets_total": .counter,
        "gateway_build_info": .gauge,
        "gateway_config_reloads_total": .counter,
        "process_cpu_seconds_total": .counter,
        "process_resident_memory_bytes": .gauge,
        "process_virtual_memory_bytes": .gauge,
        "process_open_fds": .gauge,
        "process_max_fds": .gauge,
        "process_start_time_seconds": .gauge,
    ]

    /// `# HELP` and `# TYPE` lines for every family `exposition` does not describe yet (a
    /// family with no series): Prometheus accepts a family without samples, and dashboards
    /// and alert rules then see its name from start-up.
    package static func headersOfFamiliesMissing(from exposition: [UInt8]) -> [UInt8] {
        let described = describedFamilies(in: exposition)
        var headers: [UInt8] = []
        for (name, type) in families.sorted(by: { $0.key < $1.key }) where !described.contains(name) {
            headers.append(contentsOf: "# HELP \(name) ".utf8)
            // Escaped as the exposition format asks (backslash and line feed).
            for byte in MetricHelp.text(for: name).utf8 {
                switch byte {
                case UInt8(ascii: "\\"): headers.append(contentsOf: #"\\"#.utf8)
                case UInt8(ascii: "\n"): headers.append(contentsOf: #"\n"#.utf8)
                default: headers.append(byte)
                }
            }
            headers.append(contentsOf: "\n# TYPE \(name) \(type.rawValue)\n".utf8)
        }
        return headers
    }

    /// The names of the `# TYPE name type` lines of `exposition`.
    package static func describedFamilies(in exposition: [UInt8]) -> Set<String> {
        let prefix = Array("# TYPE ".utf8)
        var names = Set<String>()
        for line in exposition.split(separator: UInt8(ascii: "\n")) where line.starts(with: prefix) {
            let rest = line.dropFirst(prefix.count)
            let name = rest.prefix { $0 != UInt8(ascii: " ") }
            names.insert(String(decoding: name, as: UTF8.self))
        }
        return names
    }
}
