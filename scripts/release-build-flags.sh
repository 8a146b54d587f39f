# shellcheck shell=bash
# The flags of every release build (the benchmarks, the release archive), sourced by each so
# they share one build: a release build with other flags builds everything again.
#
# -enforce-exclusivity=unchecked: no run-time exclusivity checks in release builds, in the
# gateway and its dependencies alike (docs/DECISIONS.md, "Exclusivity checked in tests, not
# in release builds"). Debug builds, which every test and fuzzer runs, keep them.
release_build_flags=(-Xswiftc -enforce-exclusivity=unchecked)
