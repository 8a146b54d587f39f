#!/usr/bin/env bash
# What proxying costs: requests per second, p99 and CPU microseconds per request through the
# gateway, run with its shipped defaults (access log on), next to nginx as a plain reverse
# proxy (one worker, keepalive 1024 to the upstream, `access_log ... buffer=64k flush=1s`) in
# front of the same upstream (nginx `return 200`, one worker), under wrk, alternating rounds,
# medians and same-run ratios. Rows: a bearer route, an API-key route, an `auth: none` route,
# a bearer route with a per-user rate limit, the bearer route over three targets (three ports
# of the same upstream server, round robin), and a POST with a 1 KiB JSON body on the bearer
# route (against the same POST through nginx) and with a new `Idempotency-Key` per request
# (against the same POST without one), and the bearer route on gateways of their own: with
# tracing on at `sampling_ratio: 0.01` (an nginx collector discards the spans), with the access
# log off, and with the defaults (their baseline). With PROFILE=1, a perf profile of the
# bearer route grouped into kernel, NIO, HTTP/1 codec, auth, forwarding, metrics, framework.
# Two more rows: the bearer route on a gateway with `server.event_loops: 1` against nginx's
# one worker (thread for thread), and the bearer route and nginx at 1,000 connections.
# Targets: bearer / nginx >= 0.75; one event loop / nginx >= 0.65; API key / none >= 0.95;
# limited / unlimited >= 0.9; POST / nginx POST >= 0.7; keyed POST / unkeyed >= 0.7; at
# 1,000 connections bearer / nginx >= 0.95 and p99 <= nginx's; CPU per request <= 2.5x nginx's; p99 <= 2x;
# tracing at 1% / off >= 0.9 (CPU per request <= 1.15x); access log on / off >= 0.95 (both
# against the baseline); API-key route with usage counting and an allowlisted
# key / the same route with `usage.enabled: false` and a plain key >= 0.95 (two more gateways).
# With EARLIER_BIN=dir, the bearer route on an earlier build's gateway beside the baseline:
# this build / the earlier >= 1.
#   ROUNDS=3 DURATION=10s CONNECTIONS=64 PROFILE=1 [GATEWAY_BIN=dir] [EARLIER_BIN=dir] benchmarks/proxy.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh

rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
seconds=${duration%s}
connections=${CONNECTIONS:-64}

scripts/install-deps.sh bench
# GATEWAY_BIN: a folder holding an already built PartnerGateway (an earlier commit's
# release build, to compare two builds on one machine); by default this tree is built.
if [ -n "${GATEWAY_BIN:-}" ]; then BIN=$GATEWAY_BIN; else build_release --product PartnerGateway; fi

NGINX_DIR=$(mktemp -d); nginx_dir=$NGINX_DIR
upstream_port=$(free_port); nginx_port=$(free_port)
# Two more ports of the same upstream server: the bearer route over three targets.
fleet_ports=("$upstream_port" "$(free_port)" "$(free_port)")
trap 'stop_bench_gateway; stop_bench_redis; stop_nginx' EXIT

nginx_conf upstream "server { listen 127.0.0.1:$upstream_port; listen 127.0.0.1:${fleet_ports[1]}; listen 127.0.0.1:${fleet_ports[2]};
    default_type application/json;
    location / { return 200 '{\"ok\":true}'; } }"
nginx_reverse_proxy proxy "$nginx_port" "$upstream_port"
wait_for_port "$upstream_port"; wait_for_port "$nginx_port"

start_bench_redis
route() { # name prefix auth [extra YAML]
  printf '  - {name: %s, path_prefix: %s, upstream: "http://127.0.0.1:%s", auth: %s, timeout: 5s%s}\n' "$1" "$2" "$upstream_port" "$3" "${4:-}"
}
routes="routes:
$(route bench-bearer /bearer bearer)
$(route bench-key /key api_key)
$(route bench-open /open none)
$(route bench-limited /limited bearer ', rate_limit: {per: user, capacity: 100000000, refill_per_second: 100000000}')
  - {name: bench-fleet, path_prefix: /fleet, auth: bearer, timeout: 5s, upstream: [$(printf '"http://127.0.0.1:%s", ' "${fleet_ports[@]}" | sed 's/, $//')]}
$(route bench-idem /idem bearer ', idempotency: {ttl: 5s}')"
# The shipped defaults: access log on, one event loop per core.
start_bench_gateway "$routes"
port=$PORT; gateway_pid=$GATEWAY_PID; gateway_log=$WORKDIR/gateway.log
loops=$(ls /proc/$gateway_pid/task | while read -r t; do cat "/proc/$gateway_pid/task/$t/comm"; done | grep -c '^NIO-SGLTN-' || true)
base="http://127.0.0.1:$port"
curl -sf -X POST -d '{"phone": "9000000001"}' "$base/auth/otp/trigger" >/dev/null
token=$(curl -sf -X POST -d '{"phone": "9000000001", "otp": "123456"}' "$base/auth/otp/verify" | json_field access_token)
for path in bearer/x limited/x fleet/x idem/x; do curl -sf -H "Authorization: Bearer $token" "$base/$path" >/dev/null; done
curl -sf -H "X-API-Key: $KEY" "$base/key/x" >/dev/null
curl -sf "$base/open/x" >/dev/null
curl -sf "http://127.0.0.1:$nginx_port/x" >/dev/null

# A POST with a 1 KiB JSON body, for wrk.
post_script=$nginx_dir/post.lua
write_post_script "$post_script"
# The same POST with a new Idempotency-Key per request (start time, thread, counter): every one
# takes the lock, is forwarded and stored.
keyed_script=$nginx_dir/keyed-post.lua
{ cat "$post_script"; cat <<'LUA'
thread_id, run_id, sent, threads = 0, 0, 0, 0
function setup(thread) threads = threads + 1; thread:set("thread_id", threads); thread:set("run_id", os.time()) end
function request()
  sent = sent + 1
  wrk.headers["Idempotency-Key"] = string.format("bench-%d-%d-%d-%d", run_id, thread_id, sent, math.random(1e9))
  return wrk.format()
end
LUA
} >"$keyed_script"
# The same POST made the same way (a fresh header value per request, so wrk's per-request Lua
# costs both rows alike) but without a key: the denominator of the keyed row.
nonce_script=$nginx_dir/nonce-post.lua
sed 's/wrk.headers\["Idempotency-Key"\]/wrk.headers["X-Nonce"]/' "$keyed_script" >"$nonce_script"

run_wrk() { wrk -t2 -c"$connections" -d"$duration" --latency "$@"; }
nginx_pid=$(cat "$nginx_dir/proxy.pid"); nginx_worker=$(pgrep -P "$nginx_pid" | head -1)

# name | process whose CPU is counted | wrk arguments
bearer_header="Authorization: Bearer $token"
targets=(
  "nginx|$nginx_worker|http://127.0.0.1:$nginx_port/x"
  "bearer|$gateway_pid|-H|$bearer_header|$base/bearer/x"
  "key|$gateway_pid|-H|X-API-Key: $KEY|$base/key/x"
  "open|$gateway_pid|$base/open/x"
  "limited|$gateway_pid|-H|$bearer_header|$base/limited/x"
  "fleet|$gateway_pid|-H|$bearer_header|$base/fleet/x"
  "nginx_post|$nginx_worker|-s|$post_script|http://127.0.0.1:$nginx_port/x"
  "post|$gateway_pid|-s|$post_script|-H|$bearer_header|$base/bearer/x"
  "nonce_post|$gateway_pid|-s|$nonce_script|-H|$bearer_header|$base/idem/x"
  "keyed_post|$gateway_pid|-s|$keyed_script|-H|$bearer_header|$base/idem/x"
)

# Tracing and the access log are each measured against a baseline: the bearer route on a
# gateway of its own with the shipped defaults, which serves only that row, as those gateways
# do (the first gateway serves every other row as well), measured between them in each round.
# Tracing: the bearer route on a gateway with tracing on, keeping 1% of new traces and
# exporting them to a collector that accepts and discards (nginx).
collector_port=$(free_port)
nginx_conf collector "server { listen 127.0.0.1:$collector_port;
    location /v1/traces { default_type application/x-protobuf; return 200 ''; } }"
wait_for_port "$collector_port"
start_bench_gateway "$routes
tracing: {otlp_endpoint: \"http://127.0.0.1:$collector_port\", sampling_ratio: 0.01}"
traced_base="http://127.0.0.1:$PORT"
curl -sf -H "$bearer_header" "$traced_base/bearer/x" >/dev/null
targets+=("traced|$GATEWAY_PID|-H|$bearer_header|$traced_base/bearer/x")
start_bench_gateway "$routes"
baseline_base="http://127.0.0.1:$PORT"
curl -sf -H "$bearer_header" "$baseline_base/bearer/x" >/dev/null
targets+=("baseline|$GATEWAY_PID|-H|$bearer_header|$baseline_base/bearer/x")
# EARLIER_BIN: an earlier build's folder. Its gateway, with the same defaults, serves the bearer
# route on its own, measured in the same rounds as the baseline: what a change did to the
# request path, on one machine in one run.
if [ -n "${EARLIER_BIN:-}" ]; then
  BIN=$EARLIER_BIN start_bench_gateway "$routes"
  earlier_base="http://127.0.0.1:$PORT"
  curl -sf -H "$bearer_header" "$earlier_base/bearer/x" >/dev/null
  targets+=("earlier|$GATEWAY_PID|-H|$bearer_header|$earlier_base/bearer/x")
fi
# The access log: the bearer route on a gateway with `log.access_log: false`.
BENCH_LOG_YAML="log: {access_log: false}" start_bench_gateway "$routes"
unlogged_base="http://127.0.0.1:$PORT"
curl -sf -H "$bearer_header" "$unlogged_base/bearer/x" >/dev/null
targets+=("unlogged|$GATEWAY_PID|-H|$bearer_header|$unlogged_base/bearer/x")
# Partner controls: the API-key route with usage counted (the default) and a key holding an
# allowlist, on a fifth gateway, against the same route on a sixth with `usage.enabled: false`
# and a key without one.
start_bench_gateway "$routes"
controlled_base="http://127.0.0.1:$PORT"; controlled_pid=$GATEWAY_PID; controlled_key=$KEY
key_id=$(bench_admin POST /v1/keys/find "{\"key\": \"$KEY\"}" | json_field key_id)
bench_admin PATCH "/v1/keys/$key_id" '{"allowed_cidrs": ["127.0.0.1/32", "::1/128"]}' >/dev/null
curl -sf -H "X-API-Key: $controlled_key" "$controlled_base/key/x" >/dev/null
BENCH_LOG_YAML="usage: {enabled: false}" start_bench_gateway "$routes"
uncontrolled_base="http://127.0.0.1:$PORT"
curl -sf -H "X-API-Key: $KEY" "$uncontrolled_base/key/x" >/dev/null
targets+=("controlled|$controlled_pid|-H|X-API-Key: $controlled_key|$controlled_base/key/x"
  "uncontrolled|$GATEWAY_PID|-H|X-API-Key: $KEY|$uncontrolled_base/key/x")
# One event loop, thread for thread with nginx's single worker, on a seventh gateway.
start_bench_gateway "$routes
server: {event_loops: 1}"
one_loop_base="http://127.0.0.1:$PORT"
curl -sf -H "$bearer_header" "$one_loop_base/bearer/x" >/dev/null
targets+=("one_loop|$GATEWAY_PID|-H|$bearer_header|$one_loop_base/bearer/x")
# Many connections: 1,000 at once on the bearer route and on nginx (wrk takes the last -c).
targets+=("nginx_1000|$nginx_worker|-c1000|http://127.0.0.1:$nginx_port/x"
  "bearer_1000|$gateway_pid|-c1000|-H|$bearer_header|$base/bearer/x")
declare -A rps_of p99_of cpu_of
measure_targets "$rounds" "${targets[@]}"
errors=$(grep -c "upstream unavailable" "$gateway_log" || true)

# shellcheck disable=SC2086 # the lists are space-separated numbers
m() { median ${1}; }
row() { printf '%-52s %10s %10s %12s\n' "$1" "$(m "${rps_of[$2]}")" "$(m "${p99_of[$2]}")" "$(m "${cpu_of[$2]}")"; }
# check NAME VALUE TARGET-OPERATOR TARGET
check() { awk -v v="$2" -v t="$4" -v op="$3" 'BEGIN { ok = (op == ">=") ? v >= t : v <= t; printf "%s", ok ? "met" : "NOT met" }'; }
ratio_row() { # label value operator target
  printf '%-52s %10s   target %s %s: %s\n' "$1" "$2" "$3" "$4" "$(check "$1" "$2" "$3" "$4")"
}
echo
echo "Proxying to nginx return 200, wrk -t2 -c$connections -d$duration, median of $rounds alternating rounds;"
echo "the gateway with its shipped defaults ($loops event loops, access log on), nginx with access_log buffer=64k"
printf '%-52s %10s %10s %12s\n' "path" "req/s" "p99 ms" "CPU us/req"
row "nginx reverse proxy, GET" nginx
row "gateway, bearer route" bearer
row "gateway, API-key route" key
row "gateway, auth: none route" open
row "gateway, bearer route with a per-user rate limit" limited
row "gateway, bearer route over three targets" fleet
row "nginx reverse proxy, POST 1 KiB JSON" nginx_post
row "gateway, POST 1 KiB JSON on the bearer route" post
row "gateway, the same POST with a new X-Nonce instead (no key)" nonce_post
row "gateway, the same POST with a new Idempotency-Key" keyed_post
echo
ratio_row "bearer / nginx" "$(ratio "$(m "${rps_of[bearer]}")" "$(m "${rps_of[nginx]}")")" ">=" 0.75
ratio_row "API-key route / auth: none" "$(ratio "$(m "${rps_of[key]}")" "$(m "${rps_of[open]}")")" ">=" 0.95
ratio_row "per-user-limited / same route without" "$(ratio "$(m "${rps_of[limited]}")" "$(m "${rps_of[bearer]}")")" ">=" 0.9
ratio_row "bearer over three targets / over one" "$(ratio "$(m "${rps_of[fleet]}")" "$(m "${rps_of[bearer]}")")" ">=" 0.95
ratio_row "POST 1 KiB bearer / nginx POST" "$(ratio "$(m "${rps_of[post]}")" "$(m "${rps_of[nginx_post]}")")" ">=" 0.7
ratio_row "keyed POST / same POST without key" "$(ratio "$(m "${rps_of[keyed_post]}")" "$(m "${rps_of[nonce_post]}")")" ">=" 0.7
ratio_row "CPU us per request, bearer / nginx" "$(ratio "$(m "${cpu_of[bearer]}")" "$(m "${cpu_of[nginx]}")")" "<=" 2.5
ratio_row "p99, bearer / nginx" "$(ratio "$(m "${p99_of[bearer]}")" "$(m "${p99_of[nginx]}")")" "<=" 2
echo "upstream errors logged by the gateway: $errors"

# One event loop and 1,000 connections (see above).
echo
row "gateway, bearer route, server.event_loops: 1" one_loop
ratio_row "one event loop / nginx (one worker)" "$(ratio "$(m "${rps_of[one_loop]}")" "$(m "${rps_of[nginx]}")")" ">=" 0.65
row "nginx reverse proxy, GET, 1,000 connections" nginx_1000
row "gateway, bearer route, 1,000 connections" bearer_1000
ratio_row "bearer / nginx at 1,000 connections" "$(ratio "$(m "${rps_of[bearer_1000]}")" "$(m "${rps_of[nginx_1000]}")")" ">=" 0.95
ratio_row "p99 at 1,000 connections, bearer / nginx" "$(ratio "$(m "${p99_of[bearer_1000]}")" "$(m "${p99_of[nginx_1000]}")")" "<=" 1

# Tracing and the access log against their baseline (see above).
row "gateway, bearer route, baseline (a gateway of its own)" baseline
row "gateway, bearer route, tracing on (sampling_ratio 0.01)" traced
ratio_row "bearer, tracing 1% / tracing off" "$(ratio "$(m "${rps_of[traced]}")" "$(m "${rps_of[baseline]}")")" ">=" 0.9
ratio_row "CPU us per request, tracing 1% / tracing off" "$(ratio "$(m "${cpu_of[traced]}")" "$(m "${cpu_of[baseline]}")")" "<=" 1.15
if [ -n "${EARLIER_BIN:-}" ]; then
  row "gateway, bearer route, the earlier build (EARLIER_BIN)" earlier
  ratio_row "bearer, this build / the earlier build" "$(ratio "$(m "${rps_of[baseline]}")" "$(m "${rps_of[earlier]}")")" ">=" 1
fi
row "gateway, bearer route, access log off" unlogged
ratio_row "bearer, access log on / off" "$(ratio "$(m "${rps_of[baseline]}")" "$(m "${rps_of[unlogged]}")")" ">=" 0.95

# Partner controls (see above): usage counting and an allowlist on the API-key route.
echo
row "gateway, API-key route, usage counted, key with an allowlist" controlled
row "gateway, API-key route, usage off, key without an allowlist" uncontrolled
ratio_row "API-key route with usage and an allowlist / without" "$(ratio "$(m "${rps_of[controlled]}")" "$(m "${rps_of[uncontrolled]}")")" ">=" 0.95

if [ "${PROFILE:-0}" = 1 ]; then
  echo
  echo "Profile of the bearer route (perf, 999 Hz, 8 s under wrk), share of the gateway's samples:"
  perf record -F 999 -g -p "$gateway_pid" -o "$WORKDIR/perf.data" -- sleep 8 >/dev/null 2>&1 &
  perf_pid=$!
  run_wrk -d9s -H "$bearer_header" "$base/bearer/x" >/dev/null
  wait "$perf_pid" || true
  perf script -i "$WORKDIR/perf.data" 2>/dev/null \
    | benchmarks/profile_breakdown.py
fi
