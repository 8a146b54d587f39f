#!/usr/bin/env bash
# Upgrades that drop nothing, with the release's programs (scripts/upgrade-check.py says what
# is checked): unpacks dist/partner-gateway-<version>-linux-<arch>.tar.gz (scripts/release.sh
# makes it) and runs the checks against its bin/. scripts/test.sh runs it last, once nothing
# else runs, since it loads the machine on purpose.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/GatewayContract/Release.swift)
name="partner-gateway-$version-linux-$(uname -m)"
[ -f "dist/$name.tar.gz" ] || { echo "no dist/$name.tar.gz: run scripts/release.sh first" >&2; exit 1; }
work="$(mktemp -d "${TMPDIR:-/tmp}/pg-upgrade.XXXXXX")"
trap 'rm -rf "$work"' EXIT
tar -xzf "dist/$name.tar.gz" -C "$work"
python3 scripts/upgrade-check.py "$work/$name/bin"
