#!/usr/bin/env bash
# Runs the gateway for development: installs what is missing, builds, starts a private Redis
# with persistence (data/redis), the echo upstream (127.0.0.1:9001) and the gateway with
# config/gateway.dev.yaml. Ctrl-C stops the gateway and the echo upstream; Redis keeps running
# (scripts/dev-redis.sh stop ends it).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
echo "building (the first build takes several minutes)..."
swift build --product PartnerGateway 2>&1 | grep -E "error|warning: unre|Compiling|Build" | tail -3
swift build --product echo-upstream 2>&1 | tail -1
swift build --product gatewayctl 2>&1 | tail -1
bin="$(swift build --show-bin-path)"

# Development secrets, generated once and kept out of git (data/ is ignored).
mkdir -p data
if [ ! -f data/dev-secrets.env ]; then
  umask 077
  {
    echo "export GATEWAY_JWT_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
    echo "export GATEWAY_PHONE_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
    echo "export GATEWAY_ADMIN_TOKEN=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')"
  } > data/dev-secrets.env
fi
# Secrets added after a machine's file was made are appended once.
if ! grep -q GATEWAY_PHONE_KEY data/dev-secrets.env; then
  echo "export GATEWAY_PHONE_KEY=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >> data/dev-secrets.env
fi
# shellcheck disable=SC1091
source data/dev-secrets.env

scripts/dev-redis.sh start

"$bin/echo-upstream" --port 9001 >data/echo-upstream.log 2>&1 &
echo_pid=$!
trap 'kill $echo_pid 2>/dev/null || true' EXIT

cat <<INFO

  gateway (public)   http://127.0.0.1:8080   try: curl localhost:8080/healthz
  gateway (admin)    http://127.0.0.1:9090   token: GATEWAY_ADMIN_TOKEN in data/dev-secrets.env
  echo upstream      http://127.0.0.1:9001   routed as /user (bearer) and /echo (open)
  redis              127.0.0.1:6390          AOF in data/redis
  gatewayctl         $bin/gatewayctl        (source data/dev-secrets.env first)

INFO
# gateway_build_info{commit} and --version name the commit that was built.
GATEWAY_BUILD_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown) \
  "$bin/PartnerGateway" --config config/gateway.dev.yaml
