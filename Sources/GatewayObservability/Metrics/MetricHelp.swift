/// The `# HELP` text of every metric family the gateway exports, in one place: the
/// exporter (``DescribedMetricsFactory``) reads it, and docs/operations.md's metrics table follows it.
///
/// A new family needs a line here; the metrics test fails for any family exported without one.
package enum MetricHelp {
    package static func text(for family: String) -> String {
        texts[family] ?? ""
    }

    package static let texts: [String: String] = [
        // Requests
        "gateway_http_requests_total": "Requests answered, by listener, route, method and status.",
        "gateway_http_request_duration_seconds": "Time from a request's head to the end of its response, by listener, route, method and status.",
        "gateway_http_requests_in_flight": "Requests received and not answered yet, by listener.",
        "gateway_access_log_dropped_total": "Access lines dropped because the log output could not keep up.",
        // Upstreams
        "gateway_upstream_duration_seconds": "Time from sending a request upstream to the upstream's response head, by route.",
        "gateway_upstream_responses_total": "Upstream responses, by route and status.",
        "gateway_upstream_errors_total": "Upstream exchanges that failed, by route and kind (refused, reset, timeout, malformed, closed, no_target, body_too_large, broken_request_body).",
        "gateway_upstream_target_requests_total": "Tries sent to each target of a route with several, retries included, by route and target.",
        "gateway_upstream_retries_total": "Requests tried again on an upstream, by route and result (tried; over_budget: the route's retry budget was spent).",
        "gateway_idempotency_requests_total": "Requests with an Idempotency-Key, by route and result (stored, replayed, conflict, mismatch).",
        "gateway_upstream_ejections_total": "Upstream targets taken out by outlier ejection (consecutive failures), by route and target.",
        "gateway_upstream_health_check_failures_total": "Active health checks that failed, by route, target and kind (refused, timeout, status).",
        "gateway_upstream_target_healthy": "Whether an upstream target takes requests (1) or is out, failing its health checks or ejected (0), by route and target.",
        // WebSockets
        "gateway_websocket_connections": "Upgraded (WebSocket) connections open now, by route.",
        "gateway_websocket_upgrades_refused_total": "WebSocket handshakes answered without upgrading, by route and status.",
        "gateway_websocket_closes_total": "Upgraded connections closed, by route and reason (client, upstream, revoked, expired, idle, shutdown).",
        // Authentication and caches
        "gateway_api_key_verifications_total": "API-key checks, by result (valid, invalid, forbidden, missing, rate_limited).",
        "gateway_access_token_refusals_total": "Access tokens refused, by reason.",
        "gateway_cache_lookups_total": "In-process cache lookups, by cache (key, token, assertion) and result (hit, miss).",
        "gateway_rate_limit_decisions_total": "Rate-limit decisions, by policy and outcome.",
        "gateway_rate_limit_store_errors_total": "Rate-limit checks that could not reach Redis, by policy.",
        "gateway_authorization_decisions_total": "Answers of the authorization listener to edges (kind forward) and services (kind verify), by route, decision (allowed, refused) and reason (ok, none, or the refusal's code).",
        // Drivers' logins
        "gateway_otp_sent_total": "OTPs sent, by mode (sms, uat).",
        "gateway_otp_delivery_failures_total": "OTPs the SMS webhook did not accept.",
        "gateway_otp_verifications_total": "OTP verifications, by result.",
        "gateway_token_refreshes_total": "Refresh-token exchanges, by result (rotated; retried: a spent token presented again within tokens.refresh_reuse_interval and answered with the current one; reused: detected reuse, the session revoked; refused).",
        "gateway_refresh_token_reuse_total": "Refresh tokens presented a second time outside the retry window (the session is revoked).",
        "gateway_session_revocations_total": "Login sessions revoked, by kind (logout, reuse, admin).",
        "gateway_sdk_tokens_minted_total": "Token pairs minted by partners, by partner_id.",
        "gateway_admin_actions_total": "Admin API changes, by action.",
        // Redis
        "gateway_redis_command_duration_seconds": "Redis round trips from the call to the reply, by command (the first command of a pipeline).",
        "gateway_redis_script_duration_seconds": "Redis Lua script runs from the call to the reply, by script.",
        "gateway_redis_errors_total": "Redis calls that failed, by kind (connection, timeout, server, pool_closed).",
        "gateway_redis_calls_in_flight": "Redis calls waiting for their reply: how much of the connection pool is in use.",
        "gateway_redis_pool_size": "Connections in the Redis pool (redis.pool_size).",
        "gateway_redis_connects_total": "Redis connection attempts, by result (ok, failed): beyond the pool size, each one is a reconnect.",
        // Redis topology
        "gateway_redis_primary": "The Redis primaries the gateway writes to (1) and earlier ones (0), by address and topology (standalone, sentinel, cluster).",
        "gateway_redis_redirections_total": "Redis Cluster redirections followed, by kind (moved: the slot map was out of date; ask: a slot in migration).",
        "gateway_redis_failovers_total": "Moves to a new Redis primary (Sentinel failovers followed, cluster replicas seen promoted).",
        // Cache invalidation
        "gateway_invalidation_messages_total": "Invalidation messages received on pg:invalidate (key changes, revocations).",
        "gateway_invalidation_resets_total": "Times the invalidation subscription was (re)established; each one drops the key cache and re-reads revocations, and until it happens changes from other instances are not seen.",
        // The process
        "gateway_build_info": "Always 1; the labels say which build runs (version, commit).",
        "gateway_config_reloads_total": "Configuration reloads on SIGHUP, by result (applied, invalid).",
        "process_cpu_seconds_total": "User and system CPU time spent, in seconds.",
        "process_resident_memory_bytes": "Resident memory size, in bytes.",
        "process_virtual_memory_bytes": "Virtual memory size, in bytes.",
        "process_open_fds": "Open file descriptors.",
        "process_max_fds": "The limit on open file descriptors.",
        "process_start_time_seconds": "When the process started, in seconds since the Unix epoch.",
    ]
}
