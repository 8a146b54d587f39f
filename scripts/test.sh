#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, and runs all test targets and the checks
# beside them (among them a release build, its container image and upgrades under load). The
# tests start their own redis-server, gateways and upstreams on free loopback ports and stop them.
set -uo pipefail
cd "$(dirname "$0")/.."

started_all=$SECONDS
scripts/install-deps.sh || exit 1
echo "install-deps: $((SECONDS - started_all)) s"

source scripts/debug-build-flags.sh
echo "building tests (a clean build takes about 6 minutes)..."
started=$SECONDS
if ! swift build "${debug_build_flags[@]}" --build-tests >.build-test.log 2>&1; then
  grep -E "error:" -A3 .build-test.log | head -80
  echo "build failed; full log in .build-test.log" >&2
  exit 1
fi
rm -f .build-test.log
echo "build: $((SECONDS - started)) s"

failed=()
logs="$(mktemp -d /tmp/pg-test-logs.XXXXXX)"
# Everything below runs the binaries just built. `swift test` holds SwiftPM's lock on .build
# while it runs, so the checks beside it must not call SwiftPM.
export PG_BIN_PATH="$(swift build "${debug_build_flags[@]}" --show-bin-path 2>/dev/null)"

# The checks besides the Swift tests each start their own stack on free loopback ports and
# share nothing, so they run side by side, and beside the Swift tests, at a lower CPU
# priority (nice 10): a Swift test's processes take the CPU whenever they need it, so its
# wall-clock bounds hold, and the checks use what the tests leave idle (most of it: the
# tests that must run alone mostly wait on Redis failovers and timeouts).
# Each keeps its output in a log; its result is printed after the Swift tests, and a failure
# is named again with the end of its log (CI shows the end of the output).
pids=(); names=()
start_step() {  # name command...
  local name=$1; shift
  local log="$logs/${name// /-}.log"
  (
    started=$SECONDS
    # The step's CPU beside its wall-clock time: what it takes of the two cores the steps share
    # (of the processes it waits for: a server it stops without waiting is not counted).
    TIMEFORMAT="%0U s user, %0S s system"
    if { time nice -n 10 "$@" >"$log" 2>&1; } 2>"$log.cpu"; then result="passed in"; else result="FAILED after"; fi
    echo "$result $((SECONDS - started)) s ($(cat "$log.cpu"))" >"$log.result"
  ) &
  pids+=($!); names+=("$name")
}
started=$SECONDS

# What ships (docs/deploy.md): a release build in a folder of its own (.build-release, so it
# never waits for the lock `swift test` holds), its archive and checksums, the systemd unit,
# the Kubernetes manifests, the container image run read-only as non-root. The upgrades under
# load come last (below). Started beside the debug build instead, it gained nothing: that
# build keeps both cores busy, and SwiftPM's compiler processes run at the default priority
# whatever `swift build`'s own, so the two builds only shared the cores.
start_step "release and deploy checks" scripts/deploy-checks.sh --without-upgrades

# The API against its OpenAPI document (a conformance test and schemathesis), the seeded
# bad-input generator and a Redis outage, against real processes (docs/ARCHITECTURE.md, "Tests").
start_step "api checks" env API_CHECKS_SKIP_BUILD=1 scripts/api-checks.sh

# The README's walk-through, run as written against a fresh stack that scripts/run.sh starts
# on free ports: a README edit that breaks a step fails here.
start_step "README walk-through" scripts/readme-walkthrough.sh

# The reference web app in headless Chromium against a fresh stack: login, reload through the
# refresh cookie, a bearer call, logout, and an origin not allowed refused (CORS, CSRF).
start_step "browser test" scripts/browser-test.sh

# The partner portal in headless Chromium against a fresh stack: an invited member signs in with
# the webhook's code, makes, uses, charts, rotates, narrows and revokes a key; each page's
# screenshot goes into .build/portal-screenshots/.
start_step "portal browser test" scripts/portal-browser-test.sh

# libFuzzer on the API-key, access-token, configuration and request-path parsers and the
# HTTP/1.1 request and response parsers (against llhttp), 15 s each (seed 1).
start_step "fuzzers" Fuzz/build.sh "${FUZZ_SECONDS:-15}"

# The Prometheus alert rules shipped in ops/ (docs/operations.md, "Alert rules").
start_step "alert rules" promtool check rules ops/prometheus-alerts.yaml


# In parallel, Swift Testing's default. The tests that start processes share a budget of a
# few at a time, and those asserting wall-clock bounds (a 503 within 350 ms, a revocation
# everywhere within a second) run alone among them (Tests/TestSupport/ProcessBudget.swift):
# all of them at once (hundreds of redis-server, gateway and upstream processes on two cores)
# starved those bounds into random failures. Progress lines ("... started.") are dropped;
# results and failures stay. SWIFTNIO_STRICT turns NIO's misuse warnings (an
# `EmbeddedEventLoop` used from another thread, a task on a closed loop) into failures.
SWIFTNIO_STRICT=1 swift test --skip-build 2>&1 | grep --line-buffered -vE "started\.$"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed+=("swift tests")
echo "swift tests: $((SECONDS - started)) s"

for i in "${!pids[@]}"; do
  wait "${pids[$i]}"
  name=${names[$i]}; log="$logs/${name// /-}.log"
  result=$(cat "$log.result" 2>/dev/null || echo "FAILED (no result)")
  echo "$name: $result"
  [[ $result == passed* ]] || failed+=("$name")
  grep -E "^=== |passed|FAILED|failed|error" "$log" | tail -n 20
done

# The partners-as-code tests once more with the release build's gateway and gatewayctl:
# optimised builds once miscompiled gatewayctl's parallel apply, which then reported
# "Applied 0 changes." while the debug build the other tests run was right
# (docs/DECISIONS.md, "Partners as code: tested with the release build too").
if [[ " ${failed[*]} " != *" release and deploy checks "* ]]; then
  started=$SECONDS
  products="$logs/release-products"
  mkdir -p "$products"
  cp .build-release/release/PartnerGateway .build-release/release/gatewayctl "$PG_BIN_PATH/echo-upstream" "$products/"
  if PG_BUILT_PRODUCTS="$products" SWIFTNIO_STRICT=1 swift test --skip-build --filter PartnersAsCode >"$logs/release-programs.log" 2>&1; then
    echo "partners as code with the release build: passed in $((SECONDS - started)) s"
  else
    echo "partners as code with the release build: FAILED after $((SECONDS - started)) s"
    failed+=("release programs")
  fi
  grep -E "^✘|Test run with" "$logs/release-programs.log" | tail -n 20
fi

# Five rolling upgrades under load and a kill -9 behind HAProxy, against the release's
# programs (scripts/upgrade-check.py): last and alone, since they load the machine on purpose,
# which would starve the timing bounds of the checks above.
if [[ " ${failed[*]} " != *" release and deploy checks "* ]]; then
  started=$SECONDS
  if scripts/upgrade-check.sh >"$logs/upgrades.log" 2>&1; then
    echo "upgrades: passed in $((SECONDS - started)) s"
  else
    echo "upgrades: FAILED after $((SECONDS - started)) s"
    failed+=("upgrades")
  fi
  grep -E "^  upgrade [0-9]|^rolling upgrade, |^SIGKILL|FAILED" "$logs/upgrades.log" | tail -n 20
fi
echo "total: $((SECONDS - started_all)) s"

if [ ${#failed[@]} -eq 0 ]; then
  rm -rf "$logs"
  echo "every step passed"
  exit 0
fi
for name in "${failed[@]}"; do
  log="$logs/${name// /-}.log"
  [ -f "$log" ] || continue
  echo
  echo "=== the end of the failed step's log: $name ($log)"
  tail -n 80 "$log"
done
echo
echo "FAILED: ${failed[*]}" >&2
exit 1
