#!/usr/bin/env bash
# The gateway as the authorizer of an edge it does not replace (docs/edges.md): nginx with
# `auth_request` to the gateway's authorization listener, configured as docs/edges.md says
# (scripts/lib/edge-config.py; its upstream keepalive raised to the direct proxy's 1024), on the
# bearer route, beside nginx proxying directly with no authorization, and the gateway proxying
# the same route itself. All three in front of the same upstream (nginx `return 200`, one
# worker); every nginx has one worker; the gateway runs as shipped (access log on). wrk, medians
# of alternating rounds, CPU microseconds per request of the processes that serve each path
# (the edge's nginx and the gateway together for auth_request).
# Target (same run): nginx with auth_request / nginx proxying directly >= 0.5; the ratio to the
# gateway proxying itself is printed.
#   ROUNDS=3 DURATION=10s CONNECTIONS=64 [GATEWAY_BIN=dir] benchmarks/forward-auth.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh

rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
seconds=${duration%s}
connections=${CONNECTIONS:-64}

scripts/install-deps.sh bench
if [ -n "${GATEWAY_BIN:-}" ]; then BIN=$GATEWAY_BIN; else build_release --product PartnerGateway; fi

NGINX_DIR=$(mktemp -d)
upstream_port=$(free_port); direct_port=$(free_port); edge_port=$(free_port); authz_port=$(free_port)
trap 'stop_bench_gateway; stop_bench_redis; stop_nginx' EXIT

nginx_conf upstream "server { listen 127.0.0.1:$upstream_port; default_type application/json;
    location / { return 200 '{\"ok\":true}'; } }"
nginx_reverse_proxy direct "$direct_port" "$upstream_port"
wait_for_port "$upstream_port"; wait_for_port "$direct_port"

start_bench_redis
start_bench_gateway "authz:
  listen: 127.0.0.1:$authz_port
trusted_proxies: [127.0.0.1/32]
routes:
  - {name: bench-bearer, path_prefix: /bearer, upstream: \"http://127.0.0.1:$upstream_port\", auth: bearer, timeout: 5s}"
gateway="http://127.0.0.1:$PORT"; gateway_pid=$GATEWAY_PID
wait_for_port "$authz_port"
curl -sf -X POST -d '{"phone": "9000000001"}' "$gateway/auth/otp/trigger" >/dev/null
token=$(curl -sf -X POST -d '{"phone": "9000000001", "otp": "123456"}' "$gateway/auth/otp/verify" | json_field access_token)

# The documented configuration, as the edge tests run it.
edge_config=$(python3 scripts/lib/edge-config.py nginx --listen "127.0.0.1:$edge_port" --authz "127.0.0.1:$authz_port" \
  --app "127.0.0.1:$upstream_port" --keepalive 1024)
nginx_conf edge "$edge_config"
wait_for_port "$edge_port"

# Each path lets the token through, and the edge refuses a forged one with the gateway's answer.
for url in "http://127.0.0.1:$edge_port/bearer/x" "$gateway/bearer/x"; do
  curl -sf -H "Authorization: Bearer $token" "$url" >/dev/null || { echo "$url refused the token" >&2; exit 1; }
done
status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${token%.*}.AAAA" "http://127.0.0.1:$edge_port/bearer/x")
[ "$status" = 401 ] || { echo "the edge let a forged token through: $status" >&2; exit 1; }

run_wrk() { wrk -t2 -c"$connections" -d"$duration" --latency "$@"; }
direct_worker=$(pgrep -P "$(cat "$NGINX_DIR/direct.pid")" | head -1)
edge_worker=$(pgrep -P "$(cat "$NGINX_DIR/edge.pid")" | head -1)
bearer_header="Authorization: Bearer $token"
declare -A rps_of p99_of cpu_of
measure_targets "$rounds" \
  "direct|$direct_worker|http://127.0.0.1:$direct_port/bearer/x" \
  "edge|$edge_worker,$gateway_pid|-H|$bearer_header|http://127.0.0.1:$edge_port/bearer/x" \
  "gateway|$gateway_pid|-H|$bearer_header|$gateway/bearer/x"

# shellcheck disable=SC2086 # the lists are space-separated numbers
m() { median ${1}; }
row() { printf '%-62s %10s %10s %12s\n' "$1" "$(m "${rps_of[$2]}")" "$(m "${p99_of[$2]}")" "$(m "${cpu_of[$2]}")"; }
echo
echo "The bearer route in front of nginx return 200, wrk -t2 -c$connections -d$duration, median of $rounds alternating rounds"
printf '%-62s %10s %10s %12s\n' "path" "req/s" "p99 ms" "CPU us/req"
row "nginx proxying directly (no authorization)" direct
row "nginx with auth_request to the gateway (docs/edges.md)" edge
row "the gateway proxying the route itself" gateway
edge_direct=$(ratio "$(m "${rps_of[edge]}")" "$(m "${rps_of[direct]}")")
printf '%-62s %10s   target >= 0.5: %s\n' "auth_request / nginx directly" "$edge_direct" \
  "$(awk -v v="$edge_direct" 'BEGIN { print (v >= 0.5) ? "met" : "NOT met" }')"
printf '%-62s %10s\n' "auth_request / the gateway proxying itself" "$(ratio "$(m "${rps_of[edge]}")" "$(m "${rps_of[gateway]}")")"
echo "nginx's refusals logged (none expected): $(grep -c 'auth request unexpected status' "$NGINX_DIR/edge.error.log" || true)"
