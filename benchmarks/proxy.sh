#!/usr/bin/env bash
# What proxying costs (issue 6): proxied requests per second and p99 through the gateway on a
# bearer route and on an `auth: none` route, next to nginx as a plain reverse proxy (one
# worker, keepalive to the upstream) in front of the same upstream (nginx `return 200`, one
# worker), under wrk, alternating, medians and ratios. The gateway runs twice: with its
# default of one event loop per core, and with one event loop, thread for thread with
# nginx's single worker (on this 2-core machine the spare core otherwise competes with wrk).
# Also the CPU microseconds per request of each and, with PROFILE=1, a perf profile of the
# bearer route grouped into kernel, NIO, HTTP/1 codec, auth, forwarding, metrics, framework.
# Targets: gateway bearer / nginx >= 0.5 (not done below 0.35); bearer within 10% of none.
# One more gateway runs the bearer route with the access log on (the shipped default; the
# others have it off), so its cost shows: target <= 5% of throughput.
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
routes="routes:
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
# The default: one event loop per core. And one like nginx's single worker, so the two
# proxies are also compared thread for thread.
start_bench_gateway "$routes"
port=$PORT; gateway_pid=$GATEWAY_PID; gateway_log=$WORKDIR/gateway.log
start_bench_gateway "$routes
server:
  event_loops: 1"
port1=$PORT; gateway1_pid=$GATEWAY_PID
BENCH_ACCESS_LOG=true start_bench_gateway "$routes"
port_logged=$PORT; logged_pid=$GATEWAY_PID
loops=$(ls /proc/$gateway_pid/task | while read -r t; do cat "/proc/$gateway_pid/task/$t/comm"; done | grep -c '^NIO-SGLTN-' || true)
base="http://127.0.0.1:$port"
curl -sf -X POST -d '{"phone": "9000000001"}' "$base/auth/otp/trigger" >/dev/null
token=$(curl -sf -X POST -d '{"phone": "9000000001", "otp": "123456"}' "$base/auth/otp/verify" | json_field access_token)
for p in "$port" "$port1" "$port_logged"; do
  curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$p/bearer/x" >/dev/null
  curl -sf "http://127.0.0.1:$p/open/x" >/dev/null
done
curl -sf "http://127.0.0.1:$nginx_port/x" >/dev/null

run_wrk() { wrk -t2 -c"$connections" -d"$duration" --latency "$@"; }
per_request_us() { awk -v a="$2" -v b="$1" -v r="$3" -v s="$seconds" 'BEGIN { printf "%.1f", (a - b) / (r * s) }'; }
nginx_pid=$(cat "$nginx_dir/proxy.pid"); nginx_worker=$(pgrep -P "$nginx_pid" | head -1)

# name | process whose CPU is counted | wrk arguments
targets=(
  "nginx|$nginx_worker|http://127.0.0.1:$nginx_port/x"
  "bearer|$gateway_pid|-H|Authorization: Bearer $token|$base/bearer/x"
  "open|$gateway_pid|$base/open/x"
  "bearer1|$gateway1_pid|-H|Authorization: Bearer $token|http://127.0.0.1:$port1/bearer/x"
  "logged|$logged_pid|-H|Authorization: Bearer $token|http://127.0.0.1:$port_logged/bearer/x"
)
declare -A rps_of p99_of cpu_of
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds"
  for target in "${targets[@]}"; do
    IFS='|' read -r -a fields <<<"$target"
    name=${fields[0]}; pid=${fields[1]}; args=("${fields[@]:2}")
    before=$(cpu_us "$pid")
    out=$(run_wrk "${args[@]}")
    rps=$(wrk_rps <<<"$out")
    rps_of[$name]+="$rps "; p99_of[$name]+="$(wrk_p99_ms <<<"$out") "
    cpu_of[$name]+="$(per_request_us "$before" "$(cpu_us "$pid")" "$rps") "
  done
done
errors=$(cat "$gateway_log" "$WORKDIR/gateway.log" | grep -c "upstream unavailable" || true)

# shellcheck disable=SC2086 # the lists are space-separated numbers
m() { median ${1}; }
row() { printf '%-58s %10s %10s %12s\n' "$1" "$(m "${rps_of[$2]}")" "$(m "${p99_of[$2]}")" "$(m "${cpu_of[$2]}")"; }
echo
echo "Proxying to nginx return 200, wrk -t2 -c$connections -d$duration, median of $rounds alternating rounds"
printf '%-58s %10s %10s %12s\n' "path" "req/s" "p99 ms" "CPU us/req"
row "nginx reverse proxy (1 worker, keepalive 64)" nginx
row "gateway, bearer route ($loops event loops: one per core)" bearer
row "gateway, auth: none route ($loops event loops)" open
row "gateway, bearer route (1 event loop, like nginx's worker)" bearer1
row "gateway, bearer route, access log on (the shipped default)" logged
echo "ratio (gateway bearer / nginx):                    $(ratio "$(m "${rps_of[bearer]}")" "$(m "${rps_of[nginx]}")")   target >= 0.5, not done below 0.35"
echo "ratio (gateway bearer / nginx), 1 loop vs 1 worker: $(ratio "$(m "${rps_of[bearer1]}")" "$(m "${rps_of[nginx]}")")"
echo "ratio (bearer / none):                              $(ratio "$(m "${rps_of[bearer]}")" "$(m "${rps_of[open]}")")   target >= 0.9"
echo "access log cost (1 - logged / bearer):             $(awk -v a="$(m "${rps_of[logged]}")" -v b="$(m "${rps_of[bearer]}")" 'BEGIN { printf "%.1f%%", (1 - a / b) * 100 }')   target <= 5%"
echo "upstream errors logged by the gateways: $errors"

if [ "${PROFILE:-0}" = 1 ]; then
  echo
  echo "Profile of the bearer route, 1 event loop (perf, 999 Hz, 8 s under wrk), share of the gateway's samples:"
  perf record -F 999 -g -p "$gateway1_pid" -o "$WORKDIR/perf.data" -- sleep 8 >/dev/null 2>&1 &
  perf_pid=$!
  run_wrk -d9s -H "Authorization: Bearer $token" "http://127.0.0.1:$port1/bearer/x" >/dev/null
  wait "$perf_pid" || true
  perf script -i "$WORKDIR/perf.data" 2>/dev/null \
    | benchmarks/profile_breakdown.py
fi
