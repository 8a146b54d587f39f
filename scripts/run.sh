#!/usr/bin/env bash
# Runs the gateway for development: installs what is missing, builds, starts a private Redis
# with persistence (data/redis), the echo upstream (127.0.0.1:9001) and the gateway with
# config/gateway.dev.yaml, and serves the reference web app (examples/web) from its own origin,
# http://localhost:5173. Ctrl-C, or SIGINT or SIGTERM to this script, or `scripts/run.sh stop`
# from another terminal, stops the gateway (it drains first), the echo upstream and the web
# app; Redis keeps running (scripts/dev-redis.sh stop ends it).
#   scripts/run.sh [stop]
#
# A second stack beside it (scripts/readme-walkthrough.sh runs one for the tests) takes other
# ports and another data directory from PG_PORT, PG_ADMIN_PORT, PG_ECHO_PORT, DEV_REDIS_PORT,
# PG_WEB_PORT and PG_DATA_DIR (an absolute path); PG_BIN_PATH names a build's folder to run
# instead of building; PG_PORTAL_CODE_WEBHOOK sends portal sign-in codes to a webhook;
# PG_REDIS_TIMEOUT sets redis.timeout.
set -euo pipefail
# Started in the background by a script, a shell ignores SIGINT and cannot trap it: start
# again with SIGINT restored, so that it reaches the trap below (once: PG_RUN_SIGINT).
if [ -z "${PG_RUN_SIGINT:-}" ] && [ -n "$(trap -p INT)" ]; then
  export PG_RUN_SIGINT=1
  exec python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' "$0" "$@"
fi
cd "$(dirname "$0")/.."
port="${PG_PORT:-8080}"
admin_port="${PG_ADMIN_PORT:-9090}"
echo_port="${PG_ECHO_PORT:-9001}"
web_port="${PG_WEB_PORT:-5173}"
export DEV_REDIS_PORT="${DEV_REDIS_PORT:-6390}"
export PG_DATA_DIR="${PG_DATA_DIR:-$PWD/data}"
data="$PG_DATA_DIR"

if [ "${1:-}" = "stop" ]; then
  # The running scripts/run.sh of this data directory: told as Ctrl-C tells it.
  pid=$(cat "$data/run.pid" 2>/dev/null || true)
  if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
    echo "scripts/run.sh is not running (no process in $data/run.pid)"
    exit 0
  fi
  kill -TERM "$pid"
  for _ in $(seq 1 600); do
    kill -0 "$pid" 2>/dev/null || { echo "stopped the gateway, the echo upstream and the web app (Redis keeps running: scripts/dev-redis.sh stop)"; exit 0; }
    sleep 0.1
  done
  echo "scripts/run.sh (pid $pid) still runs after 60 s" >&2
  exit 1
elif [ $# -gt 0 ]; then
  echo "usage: $0 [stop]" >&2
  exit 2
fi

scripts/install-deps.sh
if [ -n "${PG_BIN_PATH:-}" ]; then
  # Built already (scripts/test.sh builds once, then runs its checks beside `swift test`,
  # which holds SwiftPM's lock on .build).
  bin="$PG_BIN_PATH"
else
  source scripts/debug-build-flags.sh
  echo "building (the first build takes about six minutes; a line per module compiled)..."
  for product in PartnerGateway echo-upstream gatewayctl; do
    swift build "${debug_build_flags[@]}" --product "$product" 2>&1 \
      | grep --line-buffered -E "error|warning: unre|Compiling|Build of product" || true
  done
  bin="$(swift build "${debug_build_flags[@]}" --show-bin-path)"
  [ -x "$bin/PartnerGateway" ] && [ -x "$bin/gatewayctl" ] || { echo "the build failed (above)" >&2; exit 1; }
fi

# Development secrets, generated once and kept out of git (data/ is ignored).
mkdir -p "$data"
if [ ! -f "$data/dev-secrets.env" ]; then
  umask 077
  {
    echo "export GATEWAY_JWT_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
    echo "export GATEWAY_PHONE_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
    echo "export GATEWAY_ADMIN_TOKEN=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')"
  } > "$data/dev-secrets.env"
fi
# Secrets added after a machine's file was made are appended once.
if ! grep -q GATEWAY_PHONE_KEY "$data/dev-secrets.env"; then
  echo "export GATEWAY_PHONE_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >> "$data/dev-secrets.env"
fi
# The SMS webhook's signing key: unused with the development config's `otp.mode: uat`, there
# for a local webhook tried with GATEWAY_OTP_MODE=sms (which refuses to start without it).
if ! grep -q GATEWAY_SMS_WEBHOOK_SECRET "$data/dev-secrets.env"; then
  echo "export GATEWAY_SMS_WEBHOOK_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >> "$data/dev-secrets.env"
fi
# The portal's code webhook key: unused with the development config's `portal.delivery: uat`,
# there for PG_PORTAL_CODE_WEBHOOK (below).
if ! grep -q GATEWAY_PORTAL_WEBHOOK_SECRET "$data/dev-secrets.env"; then
  echo "export GATEWAY_PORTAL_WEBHOOK_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >> "$data/dev-secrets.env"
fi
# shellcheck disable=SC1091
source "$data/dev-secrets.env"

scripts/dev-redis.sh start

"$bin/echo-upstream" --port "$echo_port" >"$data/echo-upstream.log" 2>&1 &
echo_pid=$!
# The reference web app: static files on an origin of their own, as a real deployment has.
python3 -m http.server "$web_port" --bind 127.0.0.1 --directory examples/web >"$data/web-app.log" 2>&1 &
web_pid=$!
gateway_pid=""
echo $$ > "$data/run.pid"
# On the way out the children are waited for, not only signalled: `scripts/run.sh stop` returns
# when this script has gone, and says the echo upstream and the web app have stopped.
stop_children() {
  local children=($echo_pid $web_pid $gateway_pid)
  kill "${children[@]}" 2>/dev/null || true
  local pid
  for pid in "${children[@]}"; do
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  wait "${children[@]}" 2>/dev/null || true
  rm -f "$data/gateway.pid" "$data/run.pid"
}
trap stop_children EXIT

# The listeners and Redis follow the environment; the routes name the echo upstream's port,
# web.allowed_origins the web app's, portal.origin the gateway's.
# PG_PORTAL_CODE_WEBHOOK (a URL): portal sign-in codes go there, signed, instead of being
# always uat_code (scripts/portal-browser-test.sh receives them itself). PG_REDIS_TIMEOUT (a
# duration): redis.timeout instead of 250ms (scripts/lib/fresh-stack.sh says why).
config=config/gateway.dev.yaml
if [ "$echo_port" != 9001 ] || [ "$web_port" != 5173 ] || [ "$port" != 8080 ] || [ -n "${PG_PORTAL_CODE_WEBHOOK:-}" ] \
  || [ -n "${PG_REDIS_TIMEOUT:-}" ]; then
  sed -e "s#http://127.0.0.1:9001#http://127.0.0.1:$echo_port#" -e "s#http://localhost:5173#http://localhost:$web_port#" \
    -e "s#http://localhost:8080#http://localhost:$port#" \
    ${PG_PORTAL_CODE_WEBHOOK:+-e "s#^  delivery: uat#  delivery: webhook\n  code_webhook_url: $PG_PORTAL_CODE_WEBHOOK#"} \
    ${PG_REDIS_TIMEOUT:+-e "s#^  timeout: 250ms#  timeout: $PG_REDIS_TIMEOUT#"} \
    config/gateway.dev.yaml > "$data/gateway.dev.yaml"
  config="$data/gateway.dev.yaml"
fi
export GATEWAY_LISTEN="127.0.0.1:$port" GATEWAY_ADMIN_LISTEN="127.0.0.1:$admin_port"
export GATEWAY_REDIS_URL="redis://127.0.0.1:$DEV_REDIS_PORT/0"

# gatewayctl's folder as the README names it when this is the default build.
ctl_dir="$bin"
[ "$(readlink -f "$bin")" = "$(readlink -f .build/debug 2>/dev/null)" ] && ctl_dir='$PWD/.build/debug'
cat <<INFO

  gateway (public)   http://127.0.0.1:$port   try: curl localhost:$port/healthz
  gateway (admin)    http://127.0.0.1:$admin_port   token: GATEWAY_ADMIN_TOKEN in $data/dev-secrets.env
  echo upstream      http://127.0.0.1:$echo_port   routed as /user (bearer), /rides (api_key) and /echo (open); log in $data/echo-upstream.log
  web app            http://localhost:$web_port/?gateway=http://localhost:$port   examples/web, an allowed origin (web.allowed_origins)
  partner portal     http://localhost:$port/portal/   members from 'gatewayctl members create'; the code is 123456
  redis              127.0.0.1:$DEV_REDIS_PORT          AOF and log in $data/redis
  gatewayctl         export PATH="$ctl_dir:\$PATH"; source $data/dev-secrets.env
  gateway log        here, as text lines; kill -HUP \$(cat $data/gateway.pid) reloads the configuration
  stop               Ctrl-C here, or scripts/run.sh stop

INFO
# The gateway, its pid written first for kill -HUP. A signal to this script (Ctrl-C, SIGTERM,
# scripts/run.sh stop, the terminal closing) is passed on as SIGTERM: the gateway drains and
# exits, then the exit trap stops the echo upstream and the web app.
sh -c 'echo $$ > "$1"; shift; exec "$@"' sh "$data/gateway.pid" "$bin/PartnerGateway" --config "$config" &
gateway_pid=$!
trap 'kill -TERM $gateway_pid 2>/dev/null || true' INT TERM HUP
status=0
while kill -0 "$gateway_pid" 2>/dev/null; do
  # `wait` returns early when a trapped signal arrives: wait again until the gateway is gone.
  status=0
  wait "$gateway_pid" || status=$?
done
exit "$status"
