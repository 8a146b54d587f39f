#!/usr/bin/env bash
# WebSocket message round trips per second through the gateway (a bearer route with
# `websocket: true`) next to nginx proxying the same upstream (one worker, `Upgrade` and
# `Connection` passed on), alternating rounds, medians and the same-run ratio. The upstream and
# the client are asyncio processes of benchmarks/websocket_roundtrips.py (one 64-byte message
# per socket in flight); both sides of the ratio share their cost. Target: gateway / nginx >= 0.7.
#   ROUNDS=3 DURATION=10 CONNECTIONS=32 [GATEWAY_BIN=dir] benchmarks/websocket.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh

rounds=${ROUNDS:-3}
seconds=${DURATION:-10}
connections=${CONNECTIONS:-32}

scripts/install-deps.sh bench
if [ -n "${GATEWAY_BIN:-}" ]; then BIN=$GATEWAY_BIN; else build_release --product PartnerGateway; fi

upstream_port=$(free_port); nginx_port=$(free_port)
python3 benchmarks/websocket_roundtrips.py upstream "$upstream_port" &
upstream_pid=$!
trap 'kill $upstream_pid 2>/dev/null || true; stop_bench_gateway; stop_bench_redis; stop_nginx' EXIT
nginx_conf proxy "server { listen 127.0.0.1:$nginx_port;
    location / { proxy_pass http://127.0.0.1:$upstream_port; proxy_http_version 1.1;
      proxy_set_header Upgrade \$http_upgrade; proxy_set_header Connection upgrade; proxy_read_timeout 1h; } }"
wait_for_port "$upstream_port"; wait_for_port "$nginx_port"

start_bench_redis
start_bench_gateway "server: {max_websockets_per_user: 100000}
routes:
  - {name: bench-ws, path_prefix: /ws, upstream: \"http://127.0.0.1:$upstream_port\", auth: bearer, websocket: true}"
base="http://127.0.0.1:$PORT"
curl -sf -X POST -d '{"phone": "9000000001"}' "$base/auth/otp/trigger" >/dev/null
token=$(curl -sf -X POST -d '{"phone": "9000000001", "otp": "123456"}' "$base/auth/otp/verify" | json_field access_token)

gateway=(); nginx=()
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds"
  nginx+=("$(python3 benchmarks/websocket_roundtrips.py client "$nginx_port" /ws/x "$seconds" "$connections")")
  gateway+=("$(python3 benchmarks/websocket_roundtrips.py client "$PORT" /ws/x "$seconds" "$connections" "Authorization: Bearer $token")")
done
# shellcheck disable=SC2086 # space-separated numbers
g=$(median ${gateway[*]}); n=$(median ${nginx[*]})
echo
echo "WebSocket round trips per second, $connections sockets, ${seconds}s per run, median of $rounds alternating rounds"
printf '%-40s %10s\n' "nginx proxy" "$n" "gateway, bearer route" "$g"
r=$(ratio "$g" "$n")
printf '%-40s %10s   target >= 0.7: %s\n' "gateway / nginx" "$r" "$(awk -v r="$r" 'BEGIN { print (r >= 0.7) ? "met" : "NOT met" }')"
