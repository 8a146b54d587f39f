#!/usr/bin/env bash
# Builds and runs the libFuzzer targets (swiftc -sanitize=fuzzer) against the debug build:
#   Fuzz/build.sh [SECONDS_PER_TARGET]     default 30; 0 only builds
#
# Each target's module (KeyRegistry, DriverTokens, GatewayConfiguration, GatewayPrimitives, GatewayEdge for each HTTP/1 parser) is recompiled with coverage
# instrumentation together with its harness; every dependency is linked from the objects of
# the existing `swift build` (not instrumented), through a thin archive. Needs `swift build`
# first. Binaries, corpora and crash files go to .build-fuzz/ (ignored by git).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
debug="${PG_BIN_PATH:-$(swift build --show-bin-path)}"  # PG_BIN_PATH: scripts/test.sh's build
out="$PWD/.build-fuzz"
mkdir -p "$out"

# Dependencies: every library object of the debug build except the executables and the tests
# (the recompiled module's own objects are never pulled: the instrumented ones define every
# symbol first). `ar q` (not `r`): many objects share a file name.
rm -f "$out/libdeps.a"
find "$debug" -maxdepth 1 -name '*.build' \
  | grep -vE '/(PartnerGateway|EchoUpstream|RedisBench|gatewayctl|TestSupport|partner_gateway[A-Za-z]*|[A-Za-z]*Tests|[A-Za-z-]*-tool|generate_[a-z_]*|PerformanceTest|HummingbirdTesting|NIOTestUtils|MetricsTestKit|ServiceLifecycleTestKit|ConfigurationTesting[A-Za-z]*|InMemory[A-Za-z]*)\.build$' \
  | while read -r dir; do
      # A Swift module's objects are those its output-file-map names: a folder built before a
      # source file was removed still holds that file's object, whose symbols moved elsewhere.
      if [ -f "$dir/output-file-map.json" ]; then
        python3 -c 'import json, os, sys
for entry in json.load(open(sys.argv[1])).values():
    if entry.get("object") and os.path.exists(entry["object"]): print(entry["object"], end="\0")' "$dir/output-file-map.json"
      else
        find "$dir" -name '*.o' -print0
      fi
    done \
  | xargs -0 ar qcT "$out/libdeps.a"
ranlib "$out/libdeps.a"

# Clang module maps of the C targets (checkouts and the ones SwiftPM generated).
maps=()
while read -r map; do maps+=(-Xcc "-fmodule-map-file=$map"); done < <(
  find .build/checkouts -name module.modulemap -path '*/Sources/*' -not -path '*/Tests/*'
  find "$debug" -mindepth 2 -maxdepth 2 -name module.modulemap
)

# SwiftPM names the root package after its folder: `package` declarations of the modules linked
# in are visible only to a module compiled under the same name.
package_name=$(basename "$PWD" | tr 'A-Z' 'a-z' | sed 's/[^a-z0-9_]/_/g')

build() {  # name module sources...
  local name=$1 module=$2; shift 2
  echo "fuzz: building $name"
  rm -f "$out/$name"
  swiftc -sanitize=fuzzer -parse-as-library -package-name "$package_name" -module-name "$module" -I "$debug/Modules" -I Sources/CHiredis -I Sources/CMalloc "${maps[@]}" \
    "$@" -L "$out" -ldeps -lhiredis -lstdc++ -o "$out/$name" 2>&1 | grep -vE "warning:|^ld.gold|^\s*$" || true
  [ -x "$out/$name" ] || { echo "fuzz: $name did not build" >&2; exit 1; }
}
build apikey-fuzz KeyRegistry Sources/KeyRegistry/*.swift Fuzz/APIKeyFuzz.swift
build accesstoken-fuzz DriverTokens Sources/DriverTokens/*.swift Fuzz/AccessTokenFuzz.swift
build config-fuzz GatewayConfiguration Sources/GatewayConfiguration/*.swift Fuzz/ConfigFuzz.swift
build requestpath-fuzz GatewayPrimitives Sources/GatewayPrimitives/*.swift Fuzz/RequestPathFuzz.swift
mapfile -t edge_sources < <(find Sources/GatewayEdge -name '*.swift' | sort)
build http1request-fuzz GatewayEdge "${edge_sources[@]}" Fuzz/LLHTTPRun.swift Fuzz/HTTP1RequestFuzz.swift
build http1response-fuzz GatewayEdge "${edge_sources[@]}" Fuzz/LLHTTPRun.swift Fuzz/HTTP1ResponseFuzz.swift

[ "$seconds" -gt 0 ] || exit 0
status=0
for target in apikey-fuzz accesstoken-fuzz config-fuzz requestpath-fuzz http1request-fuzz http1response-fuzz; do
  corpus="$out/corpus-$target"
  mkdir -p "$corpus"
  [ "$target" = config-fuzz ] && cp config/*.yaml "$corpus/"
  # Seeds, and inputs that once failed: "?" and a combining mark read as one Character.
  [ "$target" = requestpath-fuzz ] && printf '/user/x/../%%61dmin//list?q=/../' >"$corpus/seed-dots" && printf 'http://h/a/%%2e%%2E/b' >"$corpus/seed-absolute" \
    && printf '/?\xdb\x9a\x00' >"$corpus/seed-combining-mark"
  # A first byte (how the rest arrives), then requests of each framing, one after another.
  [ "$target" = http1request-fuzz ] && printf '\x05GET /a?b HTTP/1.1\r\nHost: h\r\nX-A:  b \r\n\r\nPOST /p HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc' >"$corpus/seed-length" \
    && printf '\x02PUT /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: t\r\n\r\nGET / HTTP/1.0\r\n\r\n' >"$corpus/seed-chunked" \
    && printf '\x00GET /ws HTTP/1.1\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\nGET / HTTP/1.1\r\n\r\n' >"$corpus/seed-upgrade"
  # A first byte (how the rest arrives), a second (which responses answer a HEAD), then
  # responses of each framing, interim ones, a switch, a body until the close.
  [ "$target" = http1response-fuzz ] && printf '\x05\x02HTTP/1.1 200 OK\r\nX-A:  b \r\nContent-Length: 3\r\n\r\nabcHTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n' >"$corpus/seed-length" \
    && printf '\x02\x00HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: t\r\n\r\nHTTP/1.0 200 OK\r\n\r\nuntil the close' >"$corpus/seed-chunked" \
    && printf '\x00\x00HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x00' >"$corpus/seed-switch"
  echo "fuzz: running $target for ${seconds}s (seed 1)"
  # Swift's own backtracer off: libFuzzer then catches the trap and writes the input out.
  (cd "$out" && SWIFT_BACKTRACE=enable=no "./$target" -seed=1 -max_total_time="$seconds" -max_len=4096 -timeout=30 -report_slow_units=60 \
      -artifact_prefix="$out/crash-$target-" "$corpus" 2>&1 | grep -E "DONE|Done [0-9]+ runs|ERROR|SUMMARY|crash|Test unit written|Fatal error|failed:" ) || status=1
done
# Crashes, leaks and timeouts fail; "slow units" are only reported (this machine is shared
# and busy, so a unit can be slow for reasons of its own).
ls "$out"/crash-* 2>/dev/null | grep -v -- '-slow-unit-' && status=1
exit $status
