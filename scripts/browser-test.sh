#!/usr/bin/env bash
# The reference web app (examples/web) in a real browser: starts a fresh stack with
# scripts/run.sh (free loopback ports, a temporary data directory), drives Debian's headless
# Chromium through it with Selenium (api-tests/browser/web_app_test.py), then stops it with
# SIGINT to scripts/run.sh alone, which must stop everything it started. scripts/test.sh runs
# it; scripts/install-deps.sh installs Chromium, chromedriver and Selenium.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib/fresh-stack.sh
fresh_stack_ports browser OTHER_PORT
start_fresh_stack

GATEWAY_URL="http://localhost:$PG_PORT" WEB_URL="http://localhost:$PG_WEB_PORT" \
  python3 api-tests/browser/web_app_test.py

# SIGINT to scripts/run.sh's process alone, not its group: it passes the signal on, so the
# gateway (after its drain), the echo upstream and the web app stop with it.
kill -INT "$run_pid"
wait "$run_pid" || true
for port in "$PG_PORT" "$PG_ECHO_PORT" "$PG_WEB_PORT"; do
  for _ in $(seq 1 100); do
    curl -s -o /dev/null "localhost:$port/" || continue 2
    sleep 0.1
  done
  echo "SIGINT to scripts/run.sh alone left 127.0.0.1:$port answering" >&2
  exit 1
done
echo "SIGINT to scripts/run.sh stopped the gateway, the echo upstream and the web app"
