# shellcheck shell=bash
# The flags of every debug build the scripts make (scripts/test.sh, scripts/run.sh,
# scripts/api-checks.sh), sourced by each so that each reuses the others' build: a build with
# other flags (a bare `swift build`) builds everything again, in the same folder.
#
# Whole-module compilation and line tables only: a clean build needs less CPU
# than SwiftPM's defaults (batch mode, full debug info), backtraces keep their file and line,
# and a changed file rebuilds its whole module (docs/DECISIONS.md, "Debug builds compile whole
# modules with line tables only").
# -num-threads: one object per file, as the build's plan expects (without it -wmo writes one
# object the plan does not know).
debug_build_flags=(-Xswiftc -wmo -Xswiftc -num-threads -Xswiftc "$(nproc)" -Xswiftc -gline-tables-only)
