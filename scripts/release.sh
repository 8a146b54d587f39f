#!/usr/bin/env bash
# Builds a release: PartnerGateway and gatewayctl optimised, with the Swift runtime (and
# Foundation) linked statically, in a versioned archive beside its checksum:
#   dist/partner-gateway-<version>-linux-<arch>.tar.gz, dist/SHA256SUMS
# The archive holds bin/ (both programs), lib/ (the shared libraries that are not glibc's:
# libhiredis, libstdc++, libz), an example production configuration, the systemd unit, the Kubernetes
# manifests, the Grafana dashboard and alert rules, and the docs (docs/deploy.md says what
# runs it). The version is Release.version (Sources/GatewayContract/Release.swift), which
# CHANGELOG.md must describe; `--version` names it and the commit built (`-dirty` when the
# tree had uncommitted changes).
#   scripts/release.sh
# The build has a folder of its own (.build-release), so it can run while `swift test` holds
# .build; a first build takes 10 to 20 minutes on two cores, later ones rebuild what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

version=$(sed -n 's/.*static let version = "\(.*\)".*/\1/p' Sources/GatewayContract/Release.swift)
[ -n "$version" ] || { echo "no version in Sources/GatewayContract/Release.swift" >&2; exit 1; }
grep -q "^## $version\b" CHANGELOG.md || { echo "CHANGELOG.md has no entry for $version: describe the release first" >&2; exit 1; }
arch=$(uname -m)
name="partner-gateway-$version-linux-$arch"

# The flags of every release build (scripts/release-build-flags.sh); --static-swift-stdlib:
# the Swift runtime, Foundation and its ICU data inside the programs. The rpath finds
# lib/libhiredis next to bin/ wherever the archive is unpacked.
source scripts/release-build-flags.sh
build=(swift build -c release "${release_build_flags[@]}" --static-swift-stdlib --scratch-path .build-release
  -Xlinker -rpath -Xlinker '$ORIGIN/../lib')
echo "building $name (release; the first build takes 10 to 20 minutes, progress below)..."
started=$SECONDS
for product in PartnerGateway gatewayctl; do
  # One line per module compiled and per link, so a long build shows it is moving.
  "${build[@]}" --product "$product" 2>&1 | tee .build-release.log \
    | grep --line-buffered -E "error:|Compiling [A-Za-z_]+ |Linking|Build of product" || true
  if ! grep -q "Build of product '$product' complete" .build-release.log; then
    grep -E "error:" -A3 .build-release.log | head -40 >&2
    echo "release build of $product failed; full log in .build-release.log" >&2
    exit 1
  fi
done
rm -f .build-release.log
bin=$("${build[@]}" --show-bin-path)
echo "built in $((SECONDS - started)) s"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/$name"
mkdir -p "$root/bin" "$root/lib" "$root/config" "$root/deploy" "$root/ops" "$root/docs"
for program in PartnerGateway gatewayctl; do
  # Debug information out (it is most of the size); symbols stay, so backtraces name functions.
  objcopy --strip-debug "$bin/$program" "$root/bin/$program"
done
# Every shared library the programs need that is not glibc's, or the dynamic loader, goes in lib/.
ldd "$root/bin/PartnerGateway" "$root/bin/gatewayctl" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u | while read -r library; do
  case "$(basename "$library")" in
    libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*|libgcc_s.so.*|libutil.so.*) ;;
    *) cp -L "$library" "$root/lib/" ;;
  esac
done
# The partner portal's pages, as the resource bundle the gateway looks for beside its binary,
# with Debian's Chart.js inside it (the portal serves nothing from outside the gateway).
cp -R "$bin/partner-gateway_GatewayEndpoints.resources" "$root/bin/"
cp /usr/share/javascript/chart.js/chart.min.js "$root/bin/partner-gateway_GatewayEndpoints.resources/Portal/"
cp config/gateway.production.yaml config/redis.conf "$root/config/"
cp -R deploy/systemd deploy/kubernetes deploy/container "$root/deploy/"
cp ops/grafana-dashboard.json ops/prometheus-alerts.yaml "$root/ops/"
cp docs/*.md docs/openapi.yaml "$root/docs/"
cp README.md CHANGELOG.md LICENSE "$root/"
# What the programs contain of others' work, with each licence: the Swift runtime and
# Foundation, every package the build checked out, and the libraries in lib/.
{
  echo "Third-party software in PartnerGateway and gatewayctl (linked in) and lib/, with its licence texts."
  printf '\n===== Swift runtime and Foundation (%s)\n\n' "$(swift --version 2>/dev/null | head -1)"
  cat "$(dirname "$(readlink -f "$(command -v swift)")")/../share/swift/LICENSE.txt"
  for checkout in .build-release/checkouts/*/; do
    for file in LICENSE LICENSE.txt LICENSE.md NOTICE NOTICE.txt NOTICES.txt; do
      [ -f "$checkout$file" ] && printf '\n===== %s (%s)\n\n' "$(basename "$checkout")" "$file" && cat "$checkout$file"
    done
  done
  printf '\n===== bin/partner-gateway_GatewayEndpoints.resources/Portal/chart.min.js (Debian package libjs-chart.js)\n\n'
  cat /usr/share/doc/libjs-chart.js/copyright
  for library in "$root/lib/"*; do
    package=$(dpkg -S "*/$(basename "$library")" 2>/dev/null | head -1 | cut -d: -f1)
    printf '\n===== lib/%s (Debian package %s)\n\n' "$(basename "$library")" "$package"
    cat "/usr/share/doc/$package/copyright"
  done
} > "$root/THIRD-PARTY-NOTICES"
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
printf 'version %s\ncommit %s\nbuilt %s\n%s\n' "$version" "$commit" "$(date -u +%FT%TZ)" "$(swift --version 2>/dev/null | head -1)" > "$root/BUILD"

mkdir -p dist
rm -f "dist/$name.tar.gz"
# Stable order and owners, so the same tree gives the same file list.
tar --sort=name --owner=0 --group=0 --numeric-owner -C "$stage" -czf "dist/$name.tar.gz" "$name"
(cd dist && sha256sum "$name.tar.gz" > SHA256SUMS)
echo "dist/$name.tar.gz ($(du -h "dist/$name.tar.gz" | cut -f1)), dist/SHA256SUMS"
"$root/bin/PartnerGateway" --version
