#!/usr/bin/env bash
# The reference web app (examples/web) in a real browser: starts a fresh stack with
# scripts/run.sh (free loopback ports, a temporary data directory), drives Debian's headless
# Chromium through it with Selenium (api-tests/browser/web_app_test.py) and stops everything
# it started. scripts/test.sh runs it; scripts/install-deps.sh installs Chromium, chromedriver
# and Selenium.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib/fresh-stack.sh
fresh_stack_ports browser OTHER_PORT
start_fresh_stack

GATEWAY_URL="http://localhost:$PG_PORT" WEB_URL="http://localhost:$PG_WEB_PORT" \
  python3 api-tests/browser/web_app_test.py
