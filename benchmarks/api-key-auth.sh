#!/usr/bin/env bash
# What API-key authentication costs: requests per second of GET /partner/v1/whoami (a
# partner key checked, nothing else done) next to GET /healthz (no authentication, nothing
# else done) on the same gateway, alternating under wrk, medians and the ratio.
# Target (issue 3): ratio >= 0.9, because verified keys are served from the in-process cache.
#   ROUNDS=3 DURATION=10s CONNECTIONS=64 benchmarks/api-key-auth.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh

rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
connections=${CONNECTIONS:-64}

scripts/install-deps.sh bench
build_release --product PartnerGateway

trap 'kill $gateway_pid 2>/dev/null || true; stop_bench_redis' EXIT
start_bench_redis
port=$(free_port); admin_port=$(free_port)
workdir=$(mktemp -d)
cat > "$workdir/gateway.yaml" <<YAML
listen: 127.0.0.1:$port
admin:
  listen: 127.0.0.1:$admin_port
redis:
  url: redis://127.0.0.1:$REDIS_PORT/0
otp:
  mode: uat
log:
  level: warning
  access_log: false
YAML
export GATEWAY_ADMIN_TOKEN=bench-admin-token-0123456789
export GATEWAY_JWT_SECRET=bench-jwt-secret-0123456789abcdef0123456789
"$BIN/PartnerGateway" --config "$workdir/gateway.yaml" >"$workdir/gateway.log" 2>&1 &
gateway_pid=$!
wait_for_port "$port"

admin() { curl -sf -X "$1" -H "Authorization: Bearer $GATEWAY_ADMIN_TOKEN" "http://127.0.0.1:$admin_port$2" ${3:+-d "$3"}; }
partner=$(admin POST /v1/partners '{"name": "bench", "rate": 1000000, "burst": 1000000}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["partner_id"])')
key=$(admin POST "/v1/partners/$partner/keys" | python3 -c 'import json,sys; print(json.load(sys.stdin)["key"])')
curl -sf -H "X-API-Key: $key" "http://127.0.0.1:$port/partner/v1/whoami" >/dev/null

run_wrk() { wrk -t2 -c"$connections" -d"$duration" --latency "$@"; }
open_rps=(); open_p99=(); key_rps=(); key_p99=(); key_cpu=()
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds"
  out=$(run_wrk "http://127.0.0.1:$port/healthz")
  open_rps+=("$(wrk_rps <<<"$out")"); open_p99+=("$(wrk_p99_ms <<<"$out")")
  before=$(cpu_us "$gateway_pid")
  out=$(run_wrk -H "X-API-Key: $key" "http://127.0.0.1:$port/partner/v1/whoami")
  after=$(cpu_us "$gateway_pid")
  rps=$(wrk_rps <<<"$out")
  key_rps+=("$rps"); key_p99+=("$(wrk_p99_ms <<<"$out")")
  seconds=$(awk -v d="$duration" 'BEGIN { sub(/s$/, "", d); print d }')
  key_cpu+=("$(awk -v a="$after" -v b="$before" -v r="$rps" -v s="$seconds" 'BEGIN { printf "%.1f", (a - b) / (r * s) }')")
done

m_open=$(median "${open_rps[@]}"); m_key=$(median "${key_rps[@]}")
echo
echo "API-key authentication, wrk -t2 -c$connections -d$duration, median of $rounds alternating rounds"
printf '%-44s %10s %10s %14s\n' "endpoint" "req/s" "p99 ms" "CPU us/req"
printf '%-44s %10s %10s %14s\n' "GET /healthz (no authentication)" "$m_open" "$(median "${open_p99[@]}")" "-"
printf '%-44s %10s %10s %14s\n' "GET /partner/v1/whoami (X-API-Key, cached)" "$m_key" "$(median "${key_p99[@]}")" "$(median "${key_cpu[@]}")"
echo "ratio (key / none): $(ratio "$m_key" "$m_open")   target >= 0.9"
redis_calls=$(redis-cli -p "$REDIS_PORT" INFO commandstats | grep -E 'cmdstat_(hgetall|get):' || true)
echo "redis lookups for the key during the whole run: ${redis_calls:-none}"
