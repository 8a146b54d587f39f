#!/usr/bin/env bash
# The reference web app (examples/web) in a real browser: starts a fresh stack with
# scripts/run.sh (free loopback ports, a temporary data directory), drives Debian's headless
# Chromium through it with Selenium (api-tests/browser/web_app_test.py) and stops everything
# it started. scripts/test.sh runs it; scripts/install-deps.sh installs Chromium, chromedriver
# and Selenium.
set -euo pipefail
cd "$(dirname "$0")/.."

work="$(mktemp -d "${TMPDIR:-/tmp}/pg-browser.XXXXXX")"
# Six ports the kernel hands out together, so no two are the same.
read -r PG_PORT PG_ADMIN_PORT PG_ECHO_PORT DEV_REDIS_PORT PG_WEB_PORT OTHER_PORT < <(python3 -c '
import socket
sockets = [socket.socket() for _ in range(6)]
for s in sockets: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in sockets])')
export PG_PORT PG_ADMIN_PORT PG_ECHO_PORT DEV_REDIS_PORT PG_WEB_PORT OTHER_PORT
export PG_DATA_DIR="$work/data"

# Its own process group, so one signal stops run.sh, the gateway, the echo upstream and the
# web app's server together.
set -m
scripts/run.sh </dev/null >"$work/run.log" 2>&1 &
run_pid=$!
set +m

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

echo "starting the stack (scripts/run.sh; gateway on localhost:$PG_PORT, web app on localhost:$PG_WEB_PORT)..."
until curl -sf "localhost:$PG_PORT/readyz" >/dev/null && curl -sf "localhost:$PG_WEB_PORT/" >/dev/null; do
  if ! kill -0 "$run_pid" 2>/dev/null; then
    echo "scripts/run.sh ended before the gateway was ready" >&2
    exit 1
  fi
  sleep 0.2
done

GATEWAY_URL="http://localhost:$PG_PORT" WEB_URL="http://localhost:$PG_WEB_PORT" \
  python3 api-tests/browser/web_app_test.py
