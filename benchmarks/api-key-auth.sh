#!/usr/bin/env bash
# What API-key authentication costs: requests per second of GET /partner/v1/whoami (a
# partner key checked, nothing else done) next to GET /healthz (no authentication, nothing
# else done) on the same gateway, alternating under wrk, medians and the ratio.
# Target: ratio >= 0.9, because verified keys are served from the in-process cache.
#   ROUNDS=3 DURATION=10s CONNECTIONS=64 [GATEWAY_BIN=dir] benchmarks/api-key-auth.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh

rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
connections=${CONNECTIONS:-64}

scripts/install-deps.sh bench
if [ -n "${GATEWAY_BIN:-}" ]; then BIN=$GATEWAY_BIN; else build_release --product PartnerGateway; fi

trap 'stop_bench_gateway; stop_bench_redis' EXIT
start_bench_redis
start_bench_gateway
port=$PORT; key=$KEY; gateway_pid=$GATEWAY_PID
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
  key_cpu+=("$(per_request_us "$before" "$after" "$rps" "${duration%s}")")
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
