#!/usr/bin/env bash
# Rate-limiter decisions per second (the token-bucket EVALSHA, on many distinct users so the
# buckets spread over every slot) against a Redis Cluster of 3 primaries (and 3 replicas,
# `redis-cli --cluster create`) beside the same client on one Redis, all on this machine.
#
# Alternates rounds (one Redis, then the cluster) and prints the medians and the ratio
# cluster / one Redis. On one machine the cluster's primaries share its cores with the client,
# so the ratio says what routing costs, not what three machines would add.
#   benchmarks/redis-cluster.sh        ROUNDS=3 REQUESTS=200000 CALLERS=50 KEYSPACE=100000
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh

rounds=${ROUNDS:-3}
requests=${REQUESTS:-200000}
callers=${CALLERS:-50}
keyspace=${KEYSPACE:-100000}

build_redis_bench
bench="$REDIS_BENCH"

work=$(mktemp -d)
single=$(free_port)
nodes=()
for _ in 1 2 3 4 5 6; do nodes+=("$(free_port)"); done
cleanup() {
  for port in "$single" "${nodes[@]}"; do redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT

start() { # port, extra arguments...
  local port=$1; shift
  mkdir -p "$work/$port"
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work/$port" \
    --maxmemory-policy noeviction --daemonize yes --logfile "$work/$port/redis.log" "$@"
  for _ in $(seq 1 500); do redis-cli -p "$port" ping >/dev/null 2>&1 && return; sleep 0.01; done
  echo "redis-server on $port did not start" >&2; exit 1
}
start "$single"
for port in "${nodes[@]}"; do
  start "$port" --cluster-enabled yes --cluster-port "$(free_port)" --cluster-config-file "$work/$port/nodes.conf"
done
redis-cli --cluster create $(printf '127.0.0.1:%s ' "${nodes[@]}") --cluster-replicas 1 --cluster-yes >"$work/create.log"
for _ in $(seq 1 500); do
  redis-cli -p "${nodes[0]}" cluster info | grep -q cluster_state:ok && break; sleep 0.02
done

run() { "$bench" --callers "$callers" --requests "$requests" --workload bucket --keyspace "$keyspace" "$@" | sed -E 's/.*ops_per_sec=([0-9]+).*/\1/'; }
one() { run --url "redis://127.0.0.1:$single/0"; }
cluster() { run --url "redis://127.0.0.1:1/0" --cluster-nodes "127.0.0.1:${nodes[0]}"; }

one_redis=(); on_cluster=()
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds"
  one_redis+=("$(one)")
  on_cluster+=("$(cluster)")
done

m_one=$(median "${one_redis[@]}"); m_cluster=$(median "${on_cluster[@]}")
echo
echo "Rate-limiter decisions per second (token-bucket EVALSHA, $keyspace users), $callers concurrent callers, median of $rounds rounds"
printf '%-34s %12s\n' "one Redis" "$m_one"
printf '%-34s %12s\n' "Redis Cluster, 3 primaries" "$m_cluster"
printf '%-34s %12s\n' "ratio cluster / one Redis" "$(ratio "$m_cluster" "$m_one")"
