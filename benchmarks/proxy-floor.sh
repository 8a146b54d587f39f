#!/usr/bin/env bash
# What the stack costs before the gateway adds anything, and the gateway's binding targets
# against it. `proxy-floor` is a bare SwiftNIO reverse proxy (one upstream connection per
# client connection, writes flushed at the end of the loop's pass as the gateway's are; no
# routes, authentication, header rules, metrics or log) in two modes: `codec`, NIO's HTTP/1
# codec on both sides, and `bytes`, no codec, each head found in the read buffer by offsets
# and passed on as a slice of it (the stack's ceiling on this machine). Beside them nginx as a
# plain reverse proxy (one worker, keepalive 1024, `access_log ... buffer=64k flush=1s`) and
# the gateway's bearer route with its shipped defaults (access log on), all in front of the
# same upstream (nginx `return 200`, one worker), under wrk, alternating rounds, medians and
# same-run ratios; CPU microseconds per request of each proxy's process and the share of the
# machine's CPU left idle during the row's runs. Rows: GET with one
# event loop per core and with one (nginx: its one worker), a 1 KiB JSON POST, and GET at
# 1,000 connections.
# Binding targets (same run): bearer >= 0.95 of the codec floor and >= 0.8 of the byte floor;
# one loop >= 0.9 of the one-loop codec floor; POST >= 0.95 of the codec floor's POST; at
# 1,000 connections >= 0.9 of the codec floor and p99 <= 1.5x nginx's; CPU per request
# <= 1.1x the codec floor's. nginx is the anchor column (goal: bearer >= 0.75 of it).
#   ROUNDS=3 DURATION=10s CONNECTIONS=64 [GATEWAY_BIN=dir] [EARLIER_BIN=dir] benchmarks/proxy-floor.sh
# EARLIER_BIN: an earlier build's folder whose gateway serves the bearer route beside this
# build's in the same rounds (this build / the earlier is printed).
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh

rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
seconds=${duration%s}
connections=${CONNECTIONS:-64}

scripts/install-deps.sh bench
if [ -n "${GATEWAY_BIN:-}" ]; then BIN=$GATEWAY_BIN; else build_release --product PartnerGateway; fi
find_proxy_floor

NGINX_DIR=$(mktemp -d); nginx_dir=$NGINX_DIR
upstream_port=$(free_port); nginx_port=$(free_port)
floor_pids=()
trap 'kill "${floor_pids[@]}" 2>/dev/null || true; stop_bench_gateway; stop_bench_redis; stop_nginx' EXIT

nginx_conf upstream "server { listen 127.0.0.1:$upstream_port;
    default_type application/json;
    location / { return 200 '{\"ok\":true}'; } }"
nginx_reverse_proxy proxy "$nginx_port" "$upstream_port"
wait_for_port "$upstream_port"; wait_for_port "$nginx_port"
nginx_worker=$(pgrep -P "$(cat "$nginx_dir/proxy.pid")" | head -1)

# start_floor HEADS LOOPS: a proxy-floor; sets FLOOR_PORT and FLOOR_PID.
start_floor() {
  FLOOR_PORT=$(free_port)
  "$FLOOR_BIN" --port "$FLOOR_PORT" --upstream-port "$upstream_port" --heads "$1" --loops "$2" >/dev/null &
  FLOOR_PID=$!; floor_pids+=("$FLOOR_PID")
  wait_for_port "$FLOOR_PORT"
  curl -sf "http://127.0.0.1:$FLOOR_PORT/x" >/dev/null
}
cores=$(nproc)
start_floor codec "$cores"; codec="$FLOOR_PID|http://127.0.0.1:$FLOOR_PORT/x"
start_floor bytes "$cores"; bytes="$FLOOR_PID|http://127.0.0.1:$FLOOR_PORT/x"
start_floor codec 1; codec1="$FLOOR_PID|http://127.0.0.1:$FLOOR_PORT/x"
start_floor bytes 1; bytes1="$FLOOR_PID|http://127.0.0.1:$FLOOR_PORT/x"

start_bench_redis
routes="routes:
  - {name: bench-bearer, path_prefix: /bearer, upstream: \"http://127.0.0.1:$upstream_port\", auth: bearer, timeout: 5s}"
start_bench_gateway "$routes"
base="http://127.0.0.1:$PORT"; gateway_pid=$GATEWAY_PID
curl -sf -X POST -d '{"phone": "9000000001"}' "$base/auth/otp/trigger" >/dev/null
token=$(curl -sf -X POST -d '{"phone": "9000000001", "otp": "123456"}' "$base/auth/otp/verify" | json_field access_token)
bearer="Authorization: Bearer $token"
curl -sf -H "$bearer" "$base/bearer/x" >/dev/null
# The 1,000-connection row on a gateway of its own: the upstream connections it keeps after
# that row would weigh on the rows measured after it.
start_bench_gateway "$routes"
base_1000="http://127.0.0.1:$PORT"; gateway_1000_pid=$GATEWAY_PID
curl -sf -H "$bearer" "$base_1000/bearer/x" >/dev/null
start_bench_gateway "$routes
server: {event_loops: 1}"
base1="http://127.0.0.1:$PORT"; gateway1_pid=$GATEWAY_PID
curl -sf -H "$bearer" "$base1/bearer/x" >/dev/null
curl -sf "http://127.0.0.1:$nginx_port/x" >/dev/null

# EARLIER_BIN: an earlier build's gateway, configured the same, measured right after this
# build's bearer row.
if [ -n "${EARLIER_BIN:-}" ]; then
  BIN=$EARLIER_BIN start_bench_gateway "$routes"
  earlier_base="http://127.0.0.1:$PORT"; earlier_pid=$GATEWAY_PID
  curl -sf -H "$bearer" "$earlier_base/bearer/x" >/dev/null
fi

# A POST with a 1 KiB JSON body, for wrk.
post_script=$nginx_dir/post.lua
write_post_script "$post_script"

run_wrk() { wrk -t2 -c"$connections" -d"$duration" --latency "$@"; }
# name | process whose CPU is counted | wrk arguments (wrk takes the last -c)
targets=(
  "nginx|$nginx_worker|http://127.0.0.1:$nginx_port/x"
  "codec|$codec"
  "bytes|$bytes"
  "bearer|$gateway_pid|-H|$bearer|$base/bearer/x"
  ${earlier_base:+"earlier|$earlier_pid|-H|$bearer|$earlier_base/bearer/x"}
  "codec1|$codec1"
  "bytes1|$bytes1"
  "bearer1|$gateway1_pid|-H|$bearer|$base1/bearer/x"
  "nginx_post|$nginx_worker|-s|$post_script|http://127.0.0.1:$nginx_port/x"
  "codec_post|${codec%%|*}|-s|$post_script|${codec#*|}"
  "bytes_post|${bytes%%|*}|-s|$post_script|${bytes#*|}"
  "bearer_post|$gateway_pid|-s|$post_script|-H|$bearer|$base/bearer/x"
  "nginx_1000|$nginx_worker|-c1000|http://127.0.0.1:$nginx_port/x"
  "codec_1000|${codec%%|*}|-c1000|${codec#*|}"
  "bytes_1000|${bytes%%|*}|-c1000|${bytes#*|}"
  "bearer_1000|$gateway_1000_pid|-c1000|-H|$bearer|$base_1000/bearer/x"
)
declare -A rps_of p99_of cpu_of idle_of
measure_targets "$rounds" "${targets[@]}"

# shellcheck disable=SC2086 # the lists are space-separated numbers
m() { median ${1}; }
row() { printf '%-50s %10s %8s %12s %8s\n' "$1" "$(m "${rps_of[$2]}")" "$(m "${p99_of[$2]}")" "$(m "${cpu_of[$2]}")" "$(m "${idle_of[$2]}")"; }
check() { awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN { ok = (op == ">=") ? v >= t : v <= t; printf "%s", ok ? "met" : "NOT met" }'; }
# target_row LABEL VALUE [OPERATOR TARGET]
target_row() {
  if [ $# -gt 2 ]; then
    printf '%-50s %10s   target %s %s: %s\n' "$1" "$2" "$3" "$4" "$(check "$2" "$3" "$4")"
  else
    printf '%-50s %10s\n' "$1" "$2"
  fi
}
rps_ratio() { ratio "$(m "${rps_of[$1]}")" "$(m "${rps_of[$2]}")"; }
echo
echo "Proxying to nginx return 200, wrk -t2 -c$connections -d$duration, median of $rounds alternating rounds"
printf '%-50s %10s %8s %12s %8s\n' "path" "req/s" "p99 ms" "CPU us/req" "idle %"
row "nginx reverse proxy (1 worker)" nginx
row "proxy-floor, codec (loop per core)" codec
row "proxy-floor, bytes (loop per core)" bytes
row "gateway, bearer route (loop per core)" bearer
row "proxy-floor, codec, one event loop" codec1
row "proxy-floor, bytes, one event loop" bytes1
row "gateway, bearer route, one event loop" bearer1
row "nginx, POST 1 KiB JSON" nginx_post
row "proxy-floor, codec, POST 1 KiB JSON" codec_post
row "proxy-floor, bytes, POST 1 KiB JSON" bytes_post
row "gateway, bearer route, POST 1 KiB JSON" bearer_post
row "nginx, 1,000 connections" nginx_1000
row "proxy-floor, codec, 1,000 connections" codec_1000
row "proxy-floor, bytes, 1,000 connections" bytes_1000
row "gateway, bearer route, 1,000 connections" bearer_1000
[ -z "${EARLIER_BIN:-}" ] || row "gateway, bearer route, the earlier build" earlier
echo
target_row "byte floor / codec floor (loop per core)" "$(rps_ratio bytes codec)" ">=" 1.15
target_row "byte floor / codec floor (one loop)" "$(rps_ratio bytes1 codec1)"
target_row "codec floor / nginx" "$(rps_ratio codec nginx)"
target_row "byte floor / nginx" "$(rps_ratio bytes nginx)"
target_row "bearer / codec floor" "$(rps_ratio bearer codec)" ">=" 0.95
target_row "bearer / byte floor" "$(rps_ratio bearer bytes)" ">=" 0.8
target_row "bearer one loop / codec floor one loop" "$(rps_ratio bearer1 codec1)" ">=" 0.9
target_row "bearer one loop / byte floor one loop" "$(rps_ratio bearer1 bytes1)"
target_row "bearer POST / codec floor POST" "$(rps_ratio bearer_post codec_post)" ">=" 0.95
target_row "bearer / codec floor at 1,000 connections" "$(rps_ratio bearer_1000 codec_1000)" ">=" 0.9
target_row "p99 at 1,000 connections, bearer / nginx" "$(ratio "$(m "${p99_of[bearer_1000]}")" "$(m "${p99_of[nginx_1000]}")")" "<=" 1.5
target_row "CPU per request, bearer / codec floor" "$(ratio "$(m "${cpu_of[bearer]}")" "$(m "${cpu_of[codec]}")")" "<=" 1.1
echo "nginx, the anchor (goals, not binding):"
target_row "bearer / nginx" "$(rps_ratio bearer nginx)" ">=" 0.75
target_row "bearer one loop / nginx" "$(rps_ratio bearer1 nginx)" ">=" 0.65
target_row "bearer POST / nginx POST" "$(rps_ratio bearer_post nginx_post)" ">=" 0.8
target_row "bearer / nginx at 1,000 connections" "$(rps_ratio bearer_1000 nginx_1000)" ">=" 0.9
target_row "CPU per request, bearer / nginx" "$(ratio "$(m "${cpu_of[bearer]}")" "$(m "${cpu_of[nginx]}")")" "<=" 2
[ -z "${EARLIER_BIN:-}" ] || target_row "bearer, this build / the earlier build" "$(rps_ratio bearer earlier)" ">=" 1
