#!/usr/bin/env bash
# The gateway's Redis client over TLS against the same client in plain TCP, on one Redis that
# listens on both (a plain port and a --tls-port, certificates made here with openssl).
#
# Alternates rounds (plain, then TLS, for PING and for the limiter's token-bucket EVALSHA)
# and prints the medians and the ratio TLS / plain.
#   benchmarks/redis-tls.sh            ROUNDS=3 REQUESTS=200000 CALLERS=50 by default
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh

rounds=${ROUNDS:-3}
requests=${REQUESTS:-200000}
callers=${CALLERS:-50}

build_redis_bench
bench="$REDIS_BENCH"

certs=$(mktemp -d)
tls_port=$(free_port)
cleanup() {
  [ -n "${tls_port:-}" ] && redis-cli -p "$tls_port" --tls --cacert "$certs/ca.crt" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$certs"
}
trap cleanup EXIT
key=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
openssl req -x509 "${key[@]}" -keyout "$certs/ca.key" -out "$certs/ca.crt" -days 1 -subj /CN=bench-ca 2>/dev/null
openssl req "${key[@]}" -keyout "$certs/server.key" -out "$certs/server.csr" -subj /CN=localhost 2>/dev/null
echo "subjectAltName=DNS:localhost" > "$certs/ext"
openssl x509 -req -in "$certs/server.csr" -CA "$certs/ca.crt" -CAkey "$certs/ca.key" -CAcreateserial \
  -out "$certs/server.crt" -days 1 -extfile "$certs/ext" 2>/dev/null

plain_port=$(free_port)
redis-server --port "$plain_port" --tls-port "$tls_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$certs" \
  --tls-cert-file "$certs/server.crt" --tls-key-file "$certs/server.key" --tls-ca-cert-file "$certs/ca.crt" \
  --tls-auth-clients no --daemonize yes --logfile "$certs/redis.log"
for _ in $(seq 1 500); do redis-cli -p "$plain_port" ping >/dev/null 2>&1 && break; sleep 0.01; done

run() { "$bench" --callers "$callers" --requests "$requests" "$@" | sed -E 's/.*ops_per_sec=([0-9]+).*/\1/'; }
plain() { run --url "redis://127.0.0.1:$plain_port/0" "$@"; }
tls() { run --url "rediss://127.0.0.1:$tls_port/0" --tls-ca-file "$certs/ca.crt" --tls-server-name localhost "$@"; }

plain_ping=(); tls_ping=(); plain_bucket=(); tls_bucket=()
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds"
  plain_ping+=("$(plain --workload ping)")
  tls_ping+=("$(tls --workload ping)")
  plain_bucket+=("$(plain --workload bucket)")
  tls_bucket+=("$(tls --workload bucket)")
done

m_plain_ping=$(median "${plain_ping[@]}"); m_tls_ping=$(median "${tls_ping[@]}")
m_plain_bucket=$(median "${plain_bucket[@]}"); m_tls_bucket=$(median "${tls_bucket[@]}")
echo
echo "Gateway Redis client, round trips per second, $callers concurrent callers, median of $rounds rounds"
printf '%-28s %12s %12s %8s\n' "workload" "plain TCP" "TLS" "ratio"
printf '%-28s %12s %12s %8s\n' "PING" "$m_plain_ping" "$m_tls_ping" "$(ratio "$m_tls_ping" "$m_plain_ping")"
printf '%-28s %12s %12s %8s\n' "token bucket (EVALSHA)" "$m_plain_bucket" "$m_tls_bucket" "$(ratio "$m_tls_bucket" "$m_plain_bucket")"
echo "target: TLS / plain >= 0.7"
