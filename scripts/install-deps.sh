#!/usr/bin/env bash
# Installs the Debian packages the project needs, only those missing. Idempotent.
#   scripts/install-deps.sh          what the gateway and its tests need
#   scripts/install-deps.sh bench    also wrk, h2load and the peers, for benchmarks/
set -euo pipefail

# prometheus: its promtool checks ops/prometheus-alerts.yaml (the gateway itself never runs it).
# openssl: the TLS tests make their certificates with its command line.
packages=(libhiredis-dev pkg-config redis-server redis-tools prometheus openssl)
# chromium, chromium-driver: scripts/browser-test.sh runs the reference web app in a real browser
# (scripts/portal-browser-test.sh the partner portal).
packages+=(chromium chromium-driver)
# libjs-chart.js: the partner portal's usage chart, which the gateway serves from
# /usr/share/javascript/chart.js/ (docs/portal.md).
packages+=(libjs-chart.js)
# nginx: the edge tests run docs/edges.md's auth_request configuration (Debian's nginx has
# ngx_http_auth_request_module) in front of the gateway's authorization listener; lua-json:
# the json module of the HAProxy auth-request script's HTTP client (scripts/lib/haproxy), for
# its configuration there (HAProxy is installed below).
packages+=(nginx lua-json)
# scripts/release.sh strips debug information (binutils); scripts/image.sh builds the image with
# podman (runc to run it; uidmap, slirp4netns and fuse-overlayfs for rootless podman) and
# copies Debian's CA certificates into it. scripts/deploy-checks.sh runs systemd-analyze
# (systemd) on the unit and scripts/upgrade-check.py puts HAProxy in front of two gateways.
packages+=(binutils ca-certificates podman runc uidmap slirp4netns fuse-overlayfs systemd haproxy)
# scripts/api-checks.sh makes a virtualenv for schemathesis; Debian's python3 needs this for it.
python3 -c 'import venv, ensurepip' 2>/dev/null || packages+=(python3-venv)
if [ "${1:-}" = "bench" ]; then
  packages+=(nginx-light wrk nghttp2-client)
  # benchmarks/peers.sh: the JWT-checking peers, HAProxy (`jwt_verify`, installed above) and nginx with njs.
  packages+=(libnginx-mod-http-js)
fi

# PyJWT: the tests check the gateway's tokens with a JWT library other than the server's, and
# the README's upstream checks an ES256 assertion with it (cryptography).
python3 -c 'import jwt, cryptography' 2>/dev/null || python3 -m pip install --quiet 'pyjwt[crypto]>=2.6'
# prometheus_client: the metrics test parses /metrics with Prometheus's own text parser.
python3 -c 'import prometheus_client' 2>/dev/null || python3 -m pip install --quiet 'prometheus_client>=0.20'
# opentelemetry-proto: the tracing tests' OTLP receiver decodes the spans the gateway exports.
python3 -c 'import opentelemetry.proto' 2>/dev/null || python3 -m pip install --quiet 'opentelemetry-proto>=1.20'
# sslyze: the TLS tests scan the gateway's listener for old protocols and weak ciphers.
command -v sslyze >/dev/null || python3 -m pip install --quiet 'sslyze>=6'
# h2: the HTTP/2 tests send frames curl will not (malformed heads, a reset mid-body).
python3 -c 'import h2' 2>/dev/null || python3 -m pip install --quiet 'h2>=4'
# selenium: drives Debian's Chromium through its chromedriver (scripts/browser-test.sh).
python3 -c 'import selenium' 2>/dev/null || python3 -m pip install --quiet 'selenium>=4.15'
# kubernetes-validate: checks deploy/kubernetes against the Kubernetes schemas it ships
# (offline); PyYAML reads the manifests (scripts/deploy-checks.sh).
command -v kubernetes-validate >/dev/null || python3 -m pip install --quiet 'kubernetes-validate>=1.30'
python3 -c 'import yaml' 2>/dev/null || python3 -m pip install --quiet 'PyYAML>=6'

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# Debian starts a system redis-server and nginx on install; the project never uses them
# (it runs private instances on other ports), so keep them from starting.
printf '#!/bin/sh\nexit 101\n' | $sudo tee /usr/sbin/policy-rc.d >/dev/null
$sudo chmod +x /usr/sbin/policy-rc.d
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
$sudo rm -f /usr/sbin/policy-rc.d
