#!/usr/bin/env bash
# What the stack costs before the gateway adds anything: `proxy-floor`, a bare SwiftNIO reverse
# proxy (NIO's HTTP/1 codec on both sides, one upstream connection per client connection,
# writes flushed at the end of the loop's pass as the gateway's are; no routes,
# authentication, header rules, metrics or log), beside nginx as a plain reverse proxy
# (one worker, keepalive 64, `access_log ... buffer=64k flush=1s`) and the gateway with its
# shipped defaults (access log on), all in front of the same upstream (nginx `return 200`, one
# worker), under wrk, alternating rounds, medians and same-run ratios; CPU microseconds per
# request of each proxy's process. Each runs with one event loop per core and with one (nginx:
# its one worker). No target: the rows tell how much of the gap to nginx is SwiftNIO's own
# and how much the gateway's work on top of it.
#   ROUNDS=3 DURATION=10s CONNECTIONS=64 [GATEWAY_BIN=dir] benchmarks/proxy-floor.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh

rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
seconds=${duration%s}
connections=${CONNECTIONS:-64}

scripts/install-deps.sh bench
if [ -n "${GATEWAY_BIN:-}" ]; then BIN=$GATEWAY_BIN; else build_release --product PartnerGateway; fi
swift build -c release --product proxy-floor >>/tmp/pg-bench-build.log 2>&1 || { tail -30 /tmp/pg-bench-build.log; exit 1; }
FLOOR_BIN="$(swift build -c release --show-bin-path)/proxy-floor"

NGINX_DIR=$(mktemp -d); nginx_dir=$NGINX_DIR
upstream_port=$(free_port); nginx_port=$(free_port); floor_port=$(free_port); floor1_port=$(free_port)
floor_pids=()
trap 'kill "${floor_pids[@]}" 2>/dev/null || true; stop_bench_gateway; stop_bench_redis; stop_nginx' EXIT

nginx_conf upstream "server { listen 127.0.0.1:$upstream_port;
    default_type application/json;
    location / { return 200 '{\"ok\":true}'; } }"
nginx_reverse_proxy proxy "$nginx_port" "$upstream_port"
wait_for_port "$upstream_port"; wait_for_port "$nginx_port"
nginx_worker=$(pgrep -P "$(cat "$nginx_dir/proxy.pid")" | head -1)

"$FLOOR_BIN" --port "$floor_port" --upstream-port "$upstream_port" >/dev/null &
floor_pid=$!; floor_pids+=("$floor_pid")
"$FLOOR_BIN" --port "$floor1_port" --upstream-port "$upstream_port" --loops 1 >/dev/null &
floor1_pid=$!; floor_pids+=("$floor1_pid")
wait_for_port "$floor_port"; wait_for_port "$floor1_port"

start_bench_redis
routes="routes:
  - {name: bench-bearer, path_prefix: /bearer, upstream: \"http://127.0.0.1:$upstream_port\", auth: bearer, timeout: 5s}
  - {name: bench-open, path_prefix: /open, upstream: \"http://127.0.0.1:$upstream_port\", auth: none, timeout: 5s}"
start_bench_gateway "$routes"
base="http://127.0.0.1:$PORT"; gateway_pid=$GATEWAY_PID
curl -sf -X POST -d '{"phone": "9000000001"}' "$base/auth/otp/trigger" >/dev/null
token=$(curl -sf -X POST -d '{"phone": "9000000001", "otp": "123456"}' "$base/auth/otp/verify" | json_field access_token)
start_bench_gateway "$routes
server: {event_loops: 1}"
base1="http://127.0.0.1:$PORT"; gateway1_pid=$GATEWAY_PID
bearer="Authorization: Bearer $token"
for url in "http://127.0.0.1:$nginx_port/x" "http://127.0.0.1:$floor_port/x" "http://127.0.0.1:$floor1_port/x" "$base/open/x" "$base1/open/x"; do
  curl -sf "$url" >/dev/null
done
curl -sf -H "$bearer" "$base/bearer/x" >/dev/null; curl -sf -H "$bearer" "$base1/bearer/x" >/dev/null

run_wrk() { wrk -t2 -c"$connections" -d"$duration" "$@"; }
# name | process whose CPU is counted | wrk arguments
targets=(
  "nginx|$nginx_worker|http://127.0.0.1:$nginx_port/x"
  "floor|$floor_pid|http://127.0.0.1:$floor_port/x"
  "open|$gateway_pid|$base/open/x"
  "bearer|$gateway_pid|-H|$bearer|$base/bearer/x"
  "floor1|$floor1_pid|http://127.0.0.1:$floor1_port/x"
  "open1|$gateway1_pid|$base1/open/x"
  "bearer1|$gateway1_pid|-H|$bearer|$base1/bearer/x"
)
declare -A rps_of p99_of cpu_of
measure_targets "$rounds" "${targets[@]}"

# shellcheck disable=SC2086 # the lists are space-separated numbers
m() { median ${1}; }
row() { printf '%-50s %10s %12s\n' "$1" "$(m "${rps_of[$2]}")" "$(m "${cpu_of[$2]}")"; }
ratio_row() { printf '%-50s %10s %12s\n' "$1" "$(ratio "$(m "${rps_of[$2]}")" "$(m "${rps_of[$3]}")")" "$(ratio "$(m "${cpu_of[$2]}")" "$(m "${cpu_of[$3]}")")"; }
echo
echo "Proxying to nginx return 200, wrk -t2 -c$connections -d$duration, median of $rounds alternating rounds"
printf '%-50s %10s %12s\n' "path" "req/s" "CPU us/req"
row "nginx reverse proxy (1 worker)" nginx
row "proxy-floor, bare SwiftNIO (loop per core)" floor
row "gateway, auth: none route (loop per core)" open
row "gateway, bearer route (loop per core)" bearer
row "proxy-floor, one event loop" floor1
row "gateway, auth: none route, one event loop" open1
row "gateway, bearer route, one event loop" bearer1
echo
printf '%-50s %10s %12s\n' "ratio" "req/s" "CPU/req"
ratio_row "proxy-floor / nginx" floor nginx
ratio_row "proxy-floor one loop / nginx" floor1 nginx
ratio_row "gateway bearer / proxy-floor" bearer floor
ratio_row "gateway auth: none / proxy-floor" open floor
ratio_row "gateway bearer one loop / proxy-floor one loop" bearer1 floor1
ratio_row "gateway bearer / nginx" bearer nginx
