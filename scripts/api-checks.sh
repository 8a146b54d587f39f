#!/usr/bin/env bash
# API checks against real processes: the OpenAPI conformance test, schemathesis and the
# seeded bad-input generator, run against a debug-built gateway, a private redis-server and
# the echo upstream, all on free loopback ports and stopped on exit.
#
#   scripts/api-checks.sh            build if needed, then run all three
#   API_CHECKS_SKIP_BUILD=1 ...      use the binaries already in .build/debug
#
# Python packages (schemathesis, jsonschema, ...) go into a virtualenv in .build-py/ (ignored
# by git), installed once from api-tests/api-requirements.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
started=$(date +%s)

venv="$root/.build-py/venv"
requirements="$root/api-tests/api-requirements.txt"
if [ ! -x "$venv/bin/python" ] || ! cmp -s "$requirements" "$venv/.requirements"; then
  echo "api-checks: installing Python packages into .build-py/venv"
  python3 -m venv "$venv" || { echo "api-checks: cannot create a virtualenv (apt-get install python3-venv)" >&2; exit 1; }
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$requirements" || exit 1
  cp "$requirements" "$venv/.requirements"
fi
py="$venv/bin/python"

if [ "${API_CHECKS_SKIP_BUILD:-0}" != 1 ]; then
  echo "api-checks: building PartnerGateway and echo-upstream"
  source scripts/debug-build-flags.sh
  if ! swift build "${debug_build_flags[@]}" --product PartnerGateway >"$root/.build-api-checks.log" 2>&1 \
     || ! swift build "${debug_build_flags[@]}" --product echo-upstream >>"$root/.build-api-checks.log" 2>&1; then
    grep -E "error:" -A3 "$root/.build-api-checks.log" | head -40
    echo "api-checks: build failed (.build-api-checks.log)" >&2
    exit 1
  fi
  rm -f "$root/.build-api-checks.log"
fi
bin="$root/.build/debug"
for product in PartnerGateway echo-upstream; do
  [ -x "$bin/$product" ] || { echo "api-checks: $bin/$product is missing" >&2; exit 1; }
done
command -v redis-server >/dev/null || { echo "api-checks: redis-server is missing (scripts/install-deps.sh)" >&2; exit 1; }

work="$(mktemp -d /tmp/pg-api-checks.XXXXXX)"
pids=()
cleanup() {
  local status=$?
  for pid in "${pids[@]}"; do
    kill -CONT "$pid" 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  if [ "$status" -ne 0 ] || [ "${API_CHECKS_KEEP:-0}" = 1 ]; then
    echo "api-checks: logs kept in $work (gateway.log, redis.log, echo.log)" >&2
  else
    rm -rf "$work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_port() {  # port pid name
  for _ in $(seq 300); do
    if ! kill -0 "$2" 2>/dev/null; then echo "api-checks: $3 exited during start-up" >&2; return 1; fi
    if "$py" -c "import socket,sys; socket.create_connection(('127.0.0.1', $1), 0.2).close()" 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "api-checks: $3 did not listen on $1 within 30 s" >&2
  return 1
}

read -r redis_port echo_port public_port admin_port authz_port < <("$py" scripts/lib/free_ports.py 5)

# Redis: private, no persistence, in the temp dir.
redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --dir "$work" \
  --daemonize no --logfile "$work/redis.log" &
redis_pid=$!; pids+=("$redis_pid")
wait_port "$redis_port" "$redis_pid" redis-server || exit 1

"$bin/echo-upstream" --host 127.0.0.1 --port "$echo_port" >"$work/echo.log" 2>&1 &
echo_pid=$!; pids+=("$echo_pid")
wait_port "$echo_port" "$echo_pid" echo-upstream || exit 1

# The portal's origin as its pages would send it; the checks send it themselves.
export API_PORTAL_ORIGIN="https://partners.api-checks.example"
portal_origin=$API_PORTAL_ORIGIN

# The gateway's Redis deadline is 1 s, not the shipped 250 ms: scripts/test.sh runs these
# checks at nice 10 beside the Swift tests, where a reply a starved gateway reads late was a
# 503 that schemathesis counts as a server error (the outage step waits that long per call).
# The gateway: uat OTPs (code 123456) with a short ttl so OTP_EXPIRED can be seen; it
# trusts X-Forwarded-For from loopback, so the tests can give each scenario its own client
# IP (rate-limit buckets) by sending one.
cat >"$work/gateway.yaml" <<YAML
listen: 127.0.0.1:$public_port
max_body_bytes: 1048576
admin:
  listen: 127.0.0.1:$admin_port
authz:
  listen: 127.0.0.1:$authz_port
redis:
  url: redis://127.0.0.1:$redis_port/0
  pool_size: 4
  # Far above Redis's real latency: a machine busy with other builds can stall this debug
  # gateway for most of a second, and a 503 from that is no finding about the API.
  timeout: 2s
tokens:
  issuer: partner-gateway-api-checks
  access_ttl: 1h
  refresh_ttl: 1d
  signing_keys:
    - kid: t1
      secret_env: GATEWAY_JWT_SECRET
otp:
  mode: uat
  uat_code: "123456"
  ttl: 3s
  max_attempts: 5
  max_failures_per_day: 20
trusted_proxies: [127.0.0.1/32]
rate_limits:
  otp_trigger_per_phone: {capacity: 3, refill_per_second: 0.005}
  otp_trigger_per_ip:    {capacity: 100000, refill_per_second: 1000}
  otp_verify_failures_per_ip: {capacity: 100000, refill_per_second: 1000}
  api_key_failures_per_ip: {capacity: 20, refill_per_second: 0.1}
  on_store_error: deny
routes:
  - name: user-profile
    path_prefix: /user
    upstream: http://127.0.0.1:$echo_port
    auth: bearer
    timeout: 5s
    rate_limit: {per: user, capacity: 1000, refill_per_second: 500}
  - name: echo
    path_prefix: /echo
    upstream: http://127.0.0.1:$echo_port
    auth: none
    timeout: 5s
  - name: partner-api
    path_prefix: /papi
    upstream: http://127.0.0.1:$echo_port
    auth: api_key
    scope: sdk_tokens:mint
    timeout: 5s
  - name: edge-orders
    path_prefix: /edge-orders
    upstream: none
    auth: api_key
    scope: sdk_tokens:mint
    rate_limit: {per: partner, capacity: 1000, refill_per_second: 500}
server:
  header_read_timeout: 5s
  max_header_bytes: 16384
log:
  level: warning
  access_log: false
web:
  allowed_origins: ["http://localhost:5173"]
portal:
  enabled: true
  origin: "$portal_origin"
  delivery: uat
  uat_code: "123456"
YAML

jwt_secret="api-checks-jwt-secret-$(od -An -tx1 -N16 /dev/urandom | tr -d " \n")"
export API_ADMIN_TOKEN="api-checks-admin-token-$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')"
env -u GATEWAY_REDIS_URL -u GATEWAY_OTP_MODE \
  GATEWAY_LISTEN="127.0.0.1:$public_port" GATEWAY_ADMIN_LISTEN="127.0.0.1:$admin_port" \
  GATEWAY_ADMIN_TOKEN="$API_ADMIN_TOKEN" \
  GATEWAY_JWT_SECRET="$jwt_secret" \
  GATEWAY_PHONE_KEY="api-checks-phone-key-0123456789abcdef0123456789" \
  "$bin/PartnerGateway" --config "$work/gateway.yaml" >"$work/gateway.log" 2>&1 &
gateway_pid=$!; pids+=("$gateway_pid")
wait_port "$public_port" "$gateway_pid" PartnerGateway || { tail -5 "$work/gateway.log" >&2; exit 1; }
wait_port "$admin_port" "$gateway_pid" PartnerGateway || exit 1
wait_port "$authz_port" "$gateway_pid" PartnerGateway || exit 1

export API_PUBLIC_URL="http://127.0.0.1:$public_port" API_ADMIN_URL="http://127.0.0.1:$admin_port"
export API_AUTHZ_URL="http://127.0.0.1:$authz_port"
export API_GATEWAY_PID="$gateway_pid" API_REDIS_PID="$redis_pid" API_JWT_SECRET="$jwt_secret"
export API_OPENAPI="$root/docs/openapi.yaml"

# API_CHECKS_STEPS picks steps (default all): conformance schemathesis fuzz outage
steps=" ${API_CHECKS_STEPS:-conformance schemathesis fuzz outage} "
failed=()
run_step() {  # name command...
  local name=$1; shift
  case "$steps" in *" $1 "*) ;; *) return 0 ;; esac
  shift
  local step_start=$(date +%s)
  echo
  echo "=== api-checks: $name"
  if "$@"; then
    echo "=== api-checks: $name passed ($(( $(date +%s) - step_start )) s)"
  else
    echo "=== api-checks: $name FAILED ($(( $(date +%s) - step_start )) s)"
    failed+=("$name")
  fi
}

# 1. The document against real responses, scenario by scenario (also writes the
#    credentials schemathesis uses).
run_step "openapi conformance" conformance "$py" api-tests/openapi/conformance.py --credentials "$work/credentials.env"

# 2. schemathesis, every listener, bounded and seeded.
if [[ "$steps" == *" schemathesis "* ]]; then
  if [ -f "$work/credentials.env" ]; then
    # shellcheck disable=SC1091
    set -a; source "$work/credentials.env"; set +a
    run_step "schemathesis" schemathesis api-tests/openapi/schemathesis.sh "$venv/bin/schemathesis" "$work"
  else
    failed+=("schemathesis (no credentials: run it with the conformance step)")
  fi
fi

# 3. Thousands of malformed requests.
run_step "bad-input generator" fuzz "$py" api-tests/fuzz/bad_input.py

# 4. Last: readiness and fail-closed answers while Redis is frozen, and recovery.
run_step "redis outage" outage "$py" api-tests/openapi/conformance.py --redis-outage

echo
echo "api-checks: $(( $(date +%s) - started )) s in all"
if [ ${#failed[@]} -ne 0 ]; then
  echo "api-checks: FAILED: ${failed[*]}"
  exit 1
fi
echo "api-checks: all passed"
