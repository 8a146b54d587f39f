#!/usr/bin/env bash
# What proxying costs (issue 6): proxied requests per second and p99 through the gateway on a
# bearer route and on an `auth: none` route, next to nginx as a plain reverse proxy (one
# worker, keepalive to the upstream) in front of the same upstream (nginx `return 200`, one
# worker), under wrk, alternating, medians and ratios. Also the gateway's CPU microseconds
# per request and, with PROFILE=1, a perf profile of the bearer route grouped into framework,
# auth, forwarding, runtime and kernel.
# Targets: gateway bearer / nginx >= 0.5 (not done below 0.35); bearer within 10% of none.
#   ROUNDS=3 DURATION=10s CONNECTIONS=64 PROFILE=1 benchmarks/proxy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh

rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
seconds=${duration%s}
connections=${CONNECTIONS:-64}

scripts/install-deps.sh bench
build_release --product PartnerGateway

nginx_dir=$(mktemp -d)
upstream_port=$(free_port); nginx_port=$(free_port)
stop_nginx() {
  for conf in upstream proxy; do
    [ -f "$nginx_dir/$conf.pid" ] && kill "$(cat "$nginx_dir/$conf.pid")" 2>/dev/null || true
  done
  rm -rf "$nginx_dir"
}
trap 'stop_bench_gateway; stop_bench_redis; stop_nginx' EXIT

# Each nginx as its own single-worker instance, so their CPU can be told apart.
nginx_conf() { # name server-block
  cat > "$nginx_dir/$1.conf" <<CONF
worker_processes 1;
daemon on;
pid $nginx_dir/$1.pid;
error_log $nginx_dir/$1.error.log warn;
events { worker_connections 4096; }
http {
  access_log off; keepalive_requests 1000000;
  client_body_temp_path $nginx_dir/$1-body; proxy_temp_path $nginx_dir/$1-proxy;
  fastcgi_temp_path $nginx_dir/$1-fcgi; uwsgi_temp_path $nginx_dir/$1-uwsgi; scgi_temp_path $nginx_dir/$1-scgi;
  $2
}
CONF
  nginx -c "$nginx_dir/$1.conf" -e "$nginx_dir/$1.error.log"
}
nginx_conf upstream "server { listen 127.0.0.1:$upstream_port; default_type application/json;
    location / { return 200 '{\"ok\":true}'; } }"
nginx_conf proxy "upstream up { server 127.0.0.1:$upstream_port; keepalive 64; }
  server { listen 127.0.0.1:$nginx_port; location / { proxy_pass http://up;
    proxy_http_version 1.1; proxy_set_header Connection \"\"; } }"
wait_for_port "$upstream_port"; wait_for_port "$nginx_port"

start_bench_redis
start_bench_gateway "routes:
  - name: bench-bearer
    path_prefix: /bearer
    upstream: http://127.0.0.1:$upstream_port
    auth: bearer
    timeout: 5s
  - name: bench-open
    path_prefix: /open
    upstream: http://127.0.0.1:$upstream_port
    auth: none
    timeout: 5s"
port=$PORT; gateway_pid=$GATEWAY_PID
base="http://127.0.0.1:$port"
curl -sf -X POST -d '{"phone": "9000000001"}' "$base/auth/otp/trigger" >/dev/null
token=$(curl -sf -X POST -d '{"phone": "9000000001", "otp": "123456"}' "$base/auth/otp/verify" | json_field access_token)
curl -sf -H "Authorization: Bearer $token" "$base/bearer/x" >/dev/null
curl -sf "$base/open/x" >/dev/null
curl -sf "http://127.0.0.1:$nginx_port/x" >/dev/null

run_wrk() { wrk -t2 -c"$connections" -d"$duration" --latency "$@"; }
per_request_us() { awk -v a="$2" -v b="$1" -v r="$3" -v s="$seconds" 'BEGIN { printf "%.1f", (a - b) / (r * s) }'; }
nginx_rps=(); nginx_p99=(); nginx_cpu=(); bearer_rps=(); bearer_p99=(); bearer_cpu=(); open_rps=(); open_p99=(); open_cpu=()
nginx_pid=$(cat "$nginx_dir/proxy.pid"); nginx_worker=$(pgrep -P "$nginx_pid" | head -1)
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds"
  before=$(cpu_us "$nginx_worker")
  out=$(run_wrk "http://127.0.0.1:$nginx_port/x")
  rps=$(wrk_rps <<<"$out"); nginx_rps+=("$rps"); nginx_p99+=("$(wrk_p99_ms <<<"$out")")
  nginx_cpu+=("$(per_request_us "$before" "$(cpu_us "$nginx_worker")" "$rps")")

  before=$(cpu_us "$gateway_pid")
  out=$(run_wrk -H "Authorization: Bearer $token" "$base/bearer/x")
  rps=$(wrk_rps <<<"$out"); bearer_rps+=("$rps"); bearer_p99+=("$(wrk_p99_ms <<<"$out")")
  bearer_cpu+=("$(per_request_us "$before" "$(cpu_us "$gateway_pid")" "$rps")")

  before=$(cpu_us "$gateway_pid")
  out=$(run_wrk "$base/open/x")
  rps=$(wrk_rps <<<"$out"); open_rps+=("$rps"); open_p99+=("$(wrk_p99_ms <<<"$out")")
  open_cpu+=("$(per_request_us "$before" "$(cpu_us "$gateway_pid")" "$rps")")
done
errors=$(grep -c "upstream unavailable" "$WORKDIR/gateway.log" || true)

m_nginx=$(median "${nginx_rps[@]}"); m_bearer=$(median "${bearer_rps[@]}"); m_open=$(median "${open_rps[@]}")
echo
echo "Proxying to nginx return 200, wrk -t2 -c$connections -d$duration, median of $rounds alternating rounds"
printf '%-46s %10s %10s %14s\n' "path" "req/s" "p99 ms" "CPU us/req"
printf '%-46s %10s %10s %14s\n' "nginx reverse proxy (1 worker, keepalive 64)" "$m_nginx" "$(median "${nginx_p99[@]}")" "$(median "${nginx_cpu[@]}")"
printf '%-46s %10s %10s %14s\n' "gateway, bearer route" "$m_bearer" "$(median "${bearer_p99[@]}")" "$(median "${bearer_cpu[@]}")"
printf '%-46s %10s %10s %14s\n' "gateway, auth: none route" "$m_open" "$(median "${open_p99[@]}")" "$(median "${open_cpu[@]}")"
echo "ratio (gateway bearer / nginx): $(ratio "$m_bearer" "$m_nginx")   target >= 0.5, not done below 0.35"
echo "ratio (bearer / none):          $(ratio "$m_bearer" "$m_open")   target >= 0.9"
echo "upstream errors logged by the gateway: $errors"

if [ "${PROFILE:-0}" = 1 ]; then
  echo
  echo "Profile of the bearer route (perf, 999 Hz, 8 s under wrk), share of the gateway's samples:"
  perf record -F 999 -g -p "$gateway_pid" -o "$WORKDIR/perf.data" -- sleep 8 >/dev/null 2>&1 &
  perf_pid=$!
  run_wrk -d9s -H "Authorization: Bearer $token" "$base/bearer/x" >/dev/null
  wait "$perf_pid" || true
  perf script -i "$WORKDIR/perf.data" 2>/dev/null \
    | benchmarks/profile_breakdown.py
fi
