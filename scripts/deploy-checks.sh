#!/usr/bin/env bash
# Checks what ships, against real processes on loopback (docs/deploy.md):
#   1. the release archive (scripts/release.sh): its SHA256SUMS verifies, its programs run in
#      an empty environment (no Swift toolchain on PATH or LD_LIBRARY_PATH) and name the
#      version and commit, its configurations pass --check-config;
#   2. the systemd unit: systemd-analyze verify passes, systemd-analyze security scores it;
#   3. the Kubernetes manifests: kubernetes-validate (the schemas it ships, offline);
#   4. the container image (scripts/image.sh, built offline): run by podman read-only as a
#      non-root user against a Redis on loopback, it turns ready, serves an OTP login, a
#      bearer route and the partner portal's pages, logs JSON, and exits 0 on SIGTERM within
#      server.drain_timeout;
#   5. upgrades that drop nothing (scripts/upgrade-check.sh) with the archive's programs.
#   scripts/deploy-checks.sh [--without-upgrades]
# scripts/test.sh runs it beside the Swift tests without 5, which it runs last, alone. The
# release build has its own folder (.build-release), so it never waits for the lock `swift
# test` holds. Its `nice -n 19` holds for SwiftPM itself, not for the compiler processes it
# starts (they run at the default priority): the build competes with the tests for the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
upgrades=true
[ "${1:-}" = "--without-upgrades" ] && upgrades=false
work="$(mktemp -d "${TMPDIR:-/tmp}/pg-deploy-checks.XXXXXX")"
container=""
cleanup() {
  local status=$?
  [ -n "$container" ] && "${podman[@]}" rm -f "$container" >/dev/null 2>&1
  [ -n "${redis_pid:-}" ] && kill "$redis_pid" 2>/dev/null
  [ -n "${upstream_pid:-}" ] && kill "$upstream_pid" 2>/dev/null
  if [ "$status" -eq 0 ]; then rm -rf "$work"; else echo "deploy checks failed; files kept in $work" >&2; fi
}
trap cleanup EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

version=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/GatewayContract/Release.swift)
name="partner-gateway-$version-linux-$(uname -m)"
commit=$(git rev-parse --short=12 HEAD)

echo "=== 1. release archive"
nice -n 19 scripts/release.sh
(cd dist && sha256sum -c SHA256SUMS) || fail "dist/SHA256SUMS does not verify"
tar -xzf "dist/$name.tar.gz" -C "$work"
release="$work/$name"
for file in bin/PartnerGateway bin/gatewayctl config/gateway.production.yaml deploy/systemd/partner-gateway@.service \
  deploy/kubernetes/deployment.yaml deploy/container/Containerfile ops/grafana-dashboard.json ops/prometheus-alerts.yaml \
  docs/deploy.md README.md CHANGELOG.md LICENSE THIRD-PARTY-NOTICES; do
  [ -e "$release/$file" ] || fail "the archive has no $file"
done
for program in PartnerGateway gatewayctl; do
  # No PATH, no LD_LIBRARY_PATH, no HOME: nothing of the toolchain can be found.
  out=$(env -i "$release/bin/$program" --version 2>&1) || fail "$program --version in an empty environment: $out"
  echo "env -i bin/$program --version: $out"
  [[ $out == *"$version"* && $out == *"commit $commit"* ]] || fail "$program --version does not name $version and commit $commit"
done
echo "shared libraries the gateway loads (lib/ is the archive's):"
ldd "$release/bin/PartnerGateway" | sed 's/ (0x[0-9a-f]*)//; s/^/  /'
if ldd "$release/bin/PartnerGateway" "$release/bin/gatewayctl" | grep -E "not found|libswift|libFoundation|/opt/swift|\.build"; then
  fail "the programs need a library of the toolchain or one that is missing"
fi
grep -qE "mode: uat|123456|dev-secrets" "$release/config/gateway.production.yaml" && fail "the production configuration holds a development setting"
env -i "$release/bin/PartnerGateway" --config "$release/config/gateway.production.yaml" --check-config >/dev/null \
  || fail "config/gateway.production.yaml fails --check-config"
python3 -c 'import sys, yaml; print(yaml.safe_load(open(sys.argv[1]))["data"]["gateway.yaml"])' deploy/kubernetes/configmap.yaml > "$work/k8s-gateway.yaml"
env -i "$release/bin/PartnerGateway" --config "$work/k8s-gateway.yaml" --check-config >/dev/null \
  || fail "the Kubernetes ConfigMap's gateway.yaml fails --check-config"
echo "configurations: config/gateway.production.yaml and the ConfigMap's pass --check-config"

echo "=== 2. systemd unit"
# The unit as installed: its ExecStart names this archive's program.
mkdir -p "$work/systemd/$version"
ln -s "$release/bin" "$work/systemd/$version/bin"
sed "s#/opt/partner-gateway/%i/#$work/systemd/%i/#" deploy/systemd/partner-gateway@.service > "$work/systemd/partner-gateway@$version.service"
systemd-analyze verify --man=no "$work/systemd/partner-gateway@$version.service" || fail "systemd-analyze verify"
score=$(systemd-analyze security --offline=yes "$work/systemd/partner-gateway@$version.service" 2>&1 | grep "Overall exposure level")
echo "systemd-analyze verify: passed; security: ${score#→ }"

echo "=== 3. Kubernetes manifests"
manifests=()
for file in deploy/kubernetes/*.yaml; do
  [ "$(basename "$file")" = kustomization.yaml ] || manifests+=("$file")
done
kubernetes-validate --strict --quiet "${manifests[@]}" || fail "kubernetes-validate"
python3 - "${manifests[@]}" <<'PY' || fail "deploy/kubernetes/kustomization.yaml does not list every manifest"
import os, sys, yaml
listed = set(yaml.safe_load(open("deploy/kubernetes/kustomization.yaml"))["resources"])
files = {os.path.basename(path) for path in sys.argv[1:]}
sys.exit(0 if listed == files else print("listed:", sorted(listed), "files:", sorted(files)) or 1)
PY
echo "kubernetes-validate --strict: ${#manifests[@]} manifests passed (Kubernetes $(kubernetes-validate --help | sed -n 's/.*Defaults to \([0-9.]*\).*/\1/p'))"

echo "=== 4. container image"
# A store of its own, so nothing is shared with the machine's images; runc, cgroupfs and no
# ulimits, which a sandbox without systemd or raised limits needs (the user's command is plain podman).
printf '[containers]\ndefault_ulimits = []\n' > "$work/containers.conf"
export CONTAINERS_CONF="$work/containers.conf"
podman=(podman --root "$work/containers/storage" --runroot "$work/containers/run" --storage-driver vfs
  --runtime runc --cgroup-manager cgroupfs)
PG_PODMAN="${podman[*]}" scripts/image.sh --save
(cd dist && sha256sum -c SHA256SUMS >/dev/null) || fail "dist/SHA256SUMS does not verify with the image"
read -r port admin_port redis_port upstream_port < <(python3 scripts/lib/free_ports.py 4)
redis-server --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
redis_pid=$!
python3 scripts/upgrade-check.py upstream "$upstream_port" >"$work/upstream.log" 2>&1 &
upstream_pid=$!
cat > "$work/gateway.yaml" <<YAML
listen: 127.0.0.1:$port
admin:
  listen: 127.0.0.1:$admin_port
redis:
  url: redis://127.0.0.1:$redis_port/0
  timeout: 5s
otp:
  mode: uat
usage:
  time_zone: Asia/Kolkata
server:
  drain_timeout: 10s
routes:
  - {name: profile, path_prefix: /user, upstream: "http://127.0.0.1:$upstream_port", auth: bearer}
portal: {enabled: true, origin: "http://localhost:$port", delivery: uat, uat_code: "123456"}
YAML
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' > "$work/phone-key"
chmod 644 "$work/gateway.yaml" "$work/phone-key"
# Secrets both ways: variables, and a file its _FILE variable names.
container=$("${podman[@]}" run -d --network host --read-only --user 65532:65532 --cap-drop ALL \
  --security-opt no-new-privileges --stop-timeout 30 \
  -v "$work/gateway.yaml:/etc/partner-gateway/gateway.yaml:ro" -v "$work/phone-key:/run/secrets/phone-key:ro" \
  -e "GATEWAY_JWT_SECRET=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" -e GATEWAY_PHONE_KEY_FILE=/run/secrets/phone-key \
  -e "GATEWAY_ADMIN_TOKEN=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')" "partner-gateway:$version")
for _ in $(seq 1 300); do
  curl -sf "localhost:$port/readyz" >/dev/null && break
  [ "$("${podman[@]}" inspect --format '{{.State.Running}}' "$container")" = true ] || { "${podman[@]}" logs "$container" | tail -20; fail "the container exited"; }
  sleep 0.1
done
curl -sf "localhost:$port/readyz" >/dev/null || fail "the container's gateway is not ready"
pid=$("${podman[@]}" inspect --format '{{.State.Pid}}' "$container")
uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
readonly_root=$("${podman[@]}" inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$container")
[ "$uid" = 65532 ] && [ "$readonly_root" = true ] || fail "the gateway runs as uid $uid, read-only root: $readonly_root"
curl -sf "localhost:$port/auth/otp/trigger" -H 'Content-Type: application/json' -d '{"phone": "9876543210"}' >/dev/null || fail "OTP trigger"
access=$(curl -sf "localhost:$port/auth/otp/verify" -H 'Content-Type: application/json' -d '{"phone": "9876543210", "otp": "123456"}' \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])') || fail "OTP verify"
status=$(curl -s -o /dev/null -w '%{http_code}' "localhost:$port/user/profile" -H "Authorization: Bearer $access")
[ "$status" = 200 ] || fail "the bearer route answered $status"
# The portal's pages and chart come from the image, not from a Debian package on a host.
for page in /portal/ /portal/chart.min.js; do
  status=$(curl -s -o /dev/null -w '%{http_code}' "localhost:$port$page")
  [ "$status" = 200 ] || fail "the portal's $page answered $status"
done
started=$(date +%s.%N)
"${podman[@]}" kill --signal TERM "$container" >/dev/null
exit_code=$("${podman[@]}" wait "$container")
stopped=$(python3 -c "import sys; print('%.2f' % ($(date +%s.%N) - $started))")
"${podman[@]}" logs "$container" > "$work/container.log" 2>&1
python3 - "$work/container.log" <<'PY' || fail "the container's log is not JSON lines"
import json, sys
lines = [line for line in open(sys.argv[1]) if line.strip()]
for line in lines:
    json.loads(line)
assert any(json.loads(line).get("msg") == "ready" for line in lines), "no ready line"
PY
[ "$exit_code" = 0 ] || fail "the container exited $exit_code on SIGTERM"
python3 -c "import sys; sys.exit(0 if $stopped < 10 else 1)" || fail "SIGTERM took ${stopped} s, more than drain_timeout (10s)"
size=$("${podman[@]}" image inspect --format '{{.Size}}' "partner-gateway:$version")
echo "image partner-gateway:$version, $((size / 1024 / 1024)) MiB, built offline; run read-only as uid $uid: ready, OTP login, bearer route 200, portal pages 200, JSON logs; SIGTERM: exit $exit_code after $stopped s (drain_timeout 10s)"
"${podman[@]}" rm -f "$container" >/dev/null
container=""
kill "$redis_pid" "$upstream_pid" 2>/dev/null || true
redis_pid=""; upstream_pid=""
rm -rf "$work/containers"

if $upgrades; then
  echo "=== 5. upgrades"
  scripts/upgrade-check.sh
fi
echo "deploy checks passed"
