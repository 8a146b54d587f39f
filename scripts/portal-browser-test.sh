#!/usr/bin/env bash
# The partner portal in a real browser: starts a fresh stack with scripts/run.sh (free loopback
# ports, a temporary data directory) whose portal sends its sign-in codes to a webhook the test
# receives, drives Debian's headless Chromium through the portal with Selenium
# (api-tests/browser/portal_test.py), saves a screenshot of each page and stops everything it
# started. scripts/test.sh runs it; scripts/install-deps.sh installs Chromium, chromedriver,
# Selenium and Chart.js. The screenshots go into .build/portal-screenshots/, so a test run leaves
# the tree as it found it; PORTAL_SCREENSHOTS=docs/portal refreshes the pictures of docs/portal.md.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib/fresh-stack.sh
fresh_stack_ports portal WEBHOOK_PORT
export PG_PORTAL_CODE_WEBHOOK="http://127.0.0.1:$WEBHOOK_PORT/codes"
start_fresh_stack

bin="${PG_BIN_PATH:-$PWD/.build/debug}"
# shellcheck disable=SC1091
source "$PG_DATA_DIR/dev-secrets.env"
GATEWAY_URL="http://localhost:$PG_PORT" GATEWAY_ADMIN_URL="http://127.0.0.1:$PG_ADMIN_PORT" GATECTL="$bin/gatewayctl" \
  SCREENSHOTS="${PORTAL_SCREENSHOTS:-$PWD/.build/portal-screenshots}" python3 api-tests/browser/portal_test.py
