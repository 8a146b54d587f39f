#!/usr/bin/env bash
# The gateway's Redis client against redis-benchmark, on one Redis, at the same concurrency.
#
# Alternates rounds (redis-benchmark, then ours, for PING and for the limiter's token-bucket
# script by EVALSHA) and prints the medians and the ratio ours / redis-benchmark. Also
# measures the blocking-hiredis-on-a-thread-pool design the client did not adopt.
#   benchmarks/redis-client.sh            ROUNDS=3 REQUESTS=200000 CALLERS=50 by default
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh

rounds=${ROUNDS:-3}
requests=${REQUESTS:-200000}
callers=${CALLERS:-50}

build_redis_bench
bench="$REDIS_BENCH"

trap stop_bench_redis EXIT
start_bench_redis
url="redis://127.0.0.1:$REDIS_PORT/0"
sha=$(redis-cli -p "$REDIS_PORT" SCRIPT LOAD "$("$bench" --print-script)")
[ "$sha" = "$("$bench" --print-script-sha)" ] || { echo "script SHA mismatch" >&2; exit 1; }

ours() { "$bench" --url "$url" --callers "$callers" --requests "$requests" "$@" | sed -E 's/.*ops_per_sec=([0-9]+).*/\1/'; }

rb_ping=(); our_ping=(); blk_ping=(); rb_bucket=(); our_bucket=(); blk_bucket=()
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds"
  rb_ping+=("$(redis-benchmark -p "$REDIS_PORT" -c "$callers" -n "$requests" --csv -t ping_mbulk | benchmark_rps)")
  our_ping+=("$(ours --workload ping --client pool)")
  blk_ping+=("$(ours --workload ping --client blocking)")
  rb_bucket+=("$(redis-benchmark -p "$REDIS_PORT" -c "$callers" -n "$requests" -r 10000 --csv \
    EVALSHA "$sha" 1 'pg:rl:{bench:__rand_int__}' 1000000 1000000.0 | benchmark_rps)")
  our_bucket+=("$(ours --workload bucket --client pool)")
  blk_bucket+=("$(ours --workload bucket --client blocking)")
done

m_rb_ping=$(median "${rb_ping[@]}"); m_our_ping=$(median "${our_ping[@]}"); m_blk_ping=$(median "${blk_ping[@]}")
m_rb_bucket=$(median "${rb_bucket[@]}"); m_our_bucket=$(median "${our_bucket[@]}"); m_blk_bucket=$(median "${blk_bucket[@]}")

echo
echo "Redis round trips per second, $callers concurrent callers, median of $rounds rounds"
printf '%-34s %14s %14s %8s\n' "workload" "redis-benchmark" "gateway client" "ratio"
printf '%-34s %14s %14s %8s\n' "PING" "$m_rb_ping" "$m_our_ping" "$(ratio "$m_our_ping" "$m_rb_ping")"
printf '%-34s %14s %14s %8s\n' "token bucket (EVALSHA)" "$m_rb_bucket" "$m_our_bucket" "$(ratio "$m_our_bucket" "$m_rb_bucket")"
echo
echo "Not adopted: blocking hiredis, one connection per caller, on a thread pool"
printf '%-34s %14s %14s %8s\n' "PING (blocking)" "$m_rb_ping" "$m_blk_ping" "$(ratio "$m_blk_ping" "$m_rb_ping")"
printf '%-34s %14s %14s %8s\n' "token bucket (blocking)" "$m_rb_bucket" "$m_blk_bucket" "$(ratio "$m_blk_bucket" "$m_rb_bucket")"
echo "target: gateway client / redis-benchmark >= 0.5 for both, >= 0.6 for the bucket"
