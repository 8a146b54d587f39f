#!/usr/bin/env bash
# The development Redis: private (port 6390, never the system's 6379), persistent (AOF in
# data/redis), configured by config/redis.conf. DEV_REDIS_PORT and PG_DATA_DIR (absolute)
# move it for a second stack (scripts/run.sh).
#   scripts/dev-redis.sh start | stop | status
set -euo pipefail
cd "$(dirname "$0")/.."
port="${DEV_REDIS_PORT:-6390}"
dir="${PG_DATA_DIR:-$PWD/data}/redis"

case "${1:-status}" in
  start)
    if redis-cli -p "$port" ping >/dev/null 2>&1; then echo "redis already up on 127.0.0.1:$port"; exit 0; fi
    mkdir -p "$dir"
    redis-server "$PWD/config/redis.conf" --port "$port" --dir "$dir" \
      --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
    for _ in $(seq 1 500); do
      redis-cli -p "$port" ping >/dev/null 2>&1 && { echo "redis up on 127.0.0.1:$port (AOF in $dir)"; exit 0; }
      sleep 0.01
    done
    # The log goes with a test's temporary data directory: its last lines go with the error.
    echo "redis did not start on 127.0.0.1:$port; the end of $dir/redis.log:" >&2
    tail -n 5 "$dir/redis.log" >&2 2>/dev/null || true
    exit 1 ;;
  stop)
    redis-cli -p "$port" shutdown >/dev/null 2>&1 || true
    echo "redis on 127.0.0.1:$port stopped" ;;
  status)
    redis-cli -p "$port" ping ;;
  *)
    echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
