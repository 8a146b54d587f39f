#!/usr/bin/env bash
# What an idle keep-alive connection costs: COUNT (default 10,000) connections to the gateway
# as shipped (default configuration, access log on), one request each, then held idle; the
# gateway's resident memory per connection, beside nginx (one worker, a plain reverse proxy)
# holding the same; then every connection sends a second request and must get its 200.
# Alternating rounds on fresh processes, medians. Target: the gateway at most 4 KiB per idle connection.
set -euo pipefail
cd "$(dirname "$0")/.."
. benchmarks/lib.sh

rounds=${ROUNDS:-3}
count=${COUNT:-10000}
# Each process holds about COUNT sockets: as many descriptors as allowed.
ulimit -n "$(ulimit -Hn)"
export NGINX_WORKER_CONNECTIONS=$((count + 1024))

scripts/install-deps.sh bench
if [ -n "${GATEWAY_BIN:-}" ]; then BIN=$GATEWAY_BIN; else build_release --product PartnerGateway; fi

NGINX_DIR=$(mktemp -d); nginx_dir=$NGINX_DIR
upstream_port=$(free_port); nginx_port=$(free_port)
trap 'stop_bench_gateway; stop_bench_redis; stop_nginx' EXIT
nginx_conf upstream "server { listen 127.0.0.1:$upstream_port; default_type application/json;
    location / { return 200 '{\"ok\":true}'; } }"
wait_for_port "$upstream_port"
start_bench_redis

# Each round measures fresh processes: memory freed by a round's closed connections would be
# reused by the next, and its connections would look free.
declare -A per_of ok_of
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds"
  nginx_reverse_proxy "proxy$round" "$nginx_port" "$upstream_port"
  wait_for_port "$nginx_port"
  nginx_worker=$(pgrep -P "$(cat "$nginx_dir/proxy$round.pid")" | head -1)
  start_bench_gateway "routes:
  - {name: idle, path_prefix: /idle, upstream: \"http://127.0.0.1:$upstream_port\", auth: none}"
  curl -sf "http://127.0.0.1:$PORT/idle/x" >/dev/null
  for side in gateway nginx; do
    if [ "$side" = gateway ]; then args=("$PORT" /idle/x "$count" "$GATEWAY_PID"); else args=("$nginx_port" /x "$count" "$nginx_worker"); fi
    out=$(python3 benchmarks/idle_connections.py 127.0.0.1 "${args[@]}")
    echo "  $side: $out"
    per_of[$side]+="$(python3 -c 'import json,sys; print(json.load(sys.stdin)["kib_per_connection"])' <<<"$out") "
    ok_of[$side]+="$(python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["first_ok"] + d["second_ok"])' <<<"$out") "
  done
  kill "$GATEWAY_PID"; kill "$(cat "$nginx_dir/proxy$round.pid")"
  while kill -0 "$GATEWAY_PID" 2>/dev/null; do sleep 0.1; done
  sleep 0.5
done

# shellcheck disable=SC2086 # space-separated numbers
echo "Idle keep-alive connections: $count held, median of $rounds alternating rounds"
printf '%-44s %14s %22s\n' "server" "KiB/connection" "requests answered 200"
printf '%-44s %14s %22s\n' "gateway (defaults, access log on)" "$(median ${per_of[gateway]})" "$(median ${ok_of[gateway]}) of $((2 * count))"
printf '%-44s %14s %22s\n' "nginx (1 worker, reverse proxy)" "$(median ${per_of[nginx]})" "$(median ${ok_of[nginx]}) of $((2 * count))"
printf 'target: gateway <= 4 KiB per idle connection: %s\n' "$(awk -v v="$(median ${per_of[gateway]})" 'BEGIN { print (v <= 4 ? "met" : "not met") }')"
