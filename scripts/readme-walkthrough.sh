#!/usr/bin/env bash
# Runs the README's walk-through as a newcomer would, so it cannot go stale: starts a fresh
# stack with scripts/run.sh (free loopback ports, a temporary data directory: nothing shared
# with a running development stack or with other tests), runs the README's marked blocks in
# order (scripts/readme-walkthrough.py) and fails at the first command that fails or prints
# other than what the README shows. scripts/test.sh runs it.
#   scripts/readme-walkthrough.sh [README]
set -euo pipefail
cd "$(dirname "$0")/.."
readme="${1:-README.md}"

work="$(mktemp -d "${TMPDIR:-/tmp}/pg-walkthrough.XXXXXX")"
# Five ports the kernel hands out together, so no two are the same.
read -r PG_PORT PG_ADMIN_PORT PG_ECHO_PORT DEV_REDIS_PORT PG_WEB_PORT < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(5)]
for s in sockets: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in sockets])')
export PG_PORT PG_ADMIN_PORT PG_ECHO_PORT DEV_REDIS_PORT PG_WEB_PORT
export PG_DATA_DIR="$work/data" WALKTHROUGH_DIR="$work"
unset GATEWAY_ADMIN_TOKEN GATEWAY_ADMIN_TOKEN_FILE

python3 scripts/readme-walkthrough.py "$readme" > "$work/walkthrough.sh"

# Its own process group, as a terminal's foreground job is, so the walk-through's Ctrl-C
# (SIGINT to the group) reaches run.sh and the gateway as a keyboard's would.
set -m
scripts/run.sh </dev/null >"$work/run.log" 2>&1 &
run_pid=$!
set +m
export WALKTHROUGH_RUN_PID="$run_pid"

finish() {
  local status=$?
  kill -INT -- "-$run_pid" 2>/dev/null && wait "$run_pid" 2>/dev/null
  scripts/dev-redis.sh stop >/dev/null 2>&1 || true
  if [ "$status" -ne 0 ]; then
    echo "--- scripts/run.sh output (the gateway's log), last 40 lines:" >&2
    tail -n 40 "$work/run.log" >&2
  fi
  rm -rf "$work"
  exit "$status"
}
trap finish EXIT

# The stack is up when scripts/run.sh is, as a newcomer sees it: the build may take minutes.
echo "starting the stack (scripts/run.sh; gateway on 127.0.0.1:$PG_PORT)..."
until curl -sf "localhost:$PG_PORT/readyz" >/dev/null && curl -s "localhost:$PG_ECHO_PORT/" >/dev/null; do
  if ! kill -0 "$run_pid" 2>/dev/null; then
    echo "scripts/run.sh ended before the gateway was ready" >&2
    exit 1
  fi
  sleep 0.2
done

# gatewayctl reaches this stack's admin listener and reads no profile of the machine's user.
GATEWAY_ADMIN_URL="http://127.0.0.1:$PG_ADMIN_PORT" XDG_CONFIG_HOME="$work/config" \
  bash -euo pipefail "$work/walkthrough.sh" </dev/null

# After the walk-through's Ctrl-C and Redis stop, nothing of the stack answers.
for port in "$PG_PORT" "$PG_ADMIN_PORT" "$PG_ECHO_PORT" "$DEV_REDIS_PORT" "$PG_WEB_PORT"; do
  if curl -s -o /dev/null "localhost:$port/" 2>/dev/null || redis-cli -p "$port" ping >/dev/null 2>&1; then
    echo "after the walk-through stopped everything, 127.0.0.1:$port still answers" >&2
    exit 1
  fi
done
echo "walk-through: the stack is stopped"
