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

. scripts/lib/fresh-stack.sh
fresh_stack_ports walkthrough
export WALKTHROUGH_DIR="$work"
unset GATEWAY_ADMIN_TOKEN GATEWAY_ADMIN_TOKEN_FILE

python3 scripts/readme-walkthrough.py "$readme" > "$work/walkthrough.sh"

start_fresh_stack
export WALKTHROUGH_RUN_PID="$run_pid"

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
