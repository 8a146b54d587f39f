#!/usr/bin/env bash
# What minting drivers' tokens costs: SDK token mints per second
# (POST /partner/v1/sdk-token) and OTP verifies per second (POST /auth/otp/verify, each on a
# freshly triggered OTP), under wrk at 32 connections, each next to redis-benchmark running
# the very Redis commands that request sends (captured with MONITOR) at 32 clients, in the
# same run, alternating; medians and ratios. Also prints the Redis round trips and commands
# of one mint, one verify and one refresh. Targets: mint and verify >= 0.7 of
# redis-benchmark, in <= 3 round trips each; refresh 1.
#   ROUNDS=3 DURATION=10s [GATEWAY_BIN=dir] benchmarks/driver-tokens.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh

rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
seconds=${duration%s}
connections=32

scripts/install-deps.sh bench
# GATEWAY_BIN: a folder holding an already built PartnerGateway; by default this tree is built.
if [ -n "${GATEWAY_BIN:-}" ]; then BIN=$GATEWAY_BIN; else build_release --product PartnerGateway; fi

trap 'stop_bench_gateway; stop_bench_redis' EXIT
start_bench_redis
start_bench_gateway "rate_limits:
  otp_trigger_per_phone: {capacity: 10, refill_per_second: 1}
  otp_trigger_per_ip: {capacity: 100000000, refill_per_second: 1000000}
  otp_verify_failures_per_ip: {capacity: 100000000, refill_per_second: 1000000}"
port=$PORT; key=$KEY; workdir=$WORKDIR
base="http://127.0.0.1:$port"
post() { curl -sf -X POST -H 'Content-Type: application/json' "$@"; }

# One request of each kind under MONITOR: its round trips, and the commands to replay.
post -H "X-API-Key: $key" -d '{"phone": "9000000001", "driver_id": "warm"}' "$base/partner/v1/sdk-token" >/dev/null
mint_cmds=$(benchmarks/capture_redis_commands.py "$REDIS_PORT" \
  "curl -sf -X POST -H 'X-API-Key: $key' -d '{\"phone\": \"9000000002\", \"driver_id\": \"d2\"}' $base/partner/v1/sdk-token")
# Warm-ups first, so no capture includes the one-time EVAL of a script Redis has not seen.
for phone in 9000000004 9000000003; do post -d "{\"phone\": \"$phone\"}" "$base/auth/otp/trigger" >/dev/null; done
post -d '{"phone": "9000000004", "otp": "123456"}' "$base/auth/otp/verify" -o "$workdir/warm.json"
post -d "{\"refresh_token\": \"$(json_field refresh_token <"$workdir/warm.json")\"}" "$base/auth/token/refresh" >/dev/null
verify_cmds=$(benchmarks/capture_redis_commands.py "$REDIS_PORT" \
  "curl -sf -X POST -d '{\"phone\": \"9000000003\", \"otp\": \"123456\"}' $base/auth/otp/verify -o $workdir/pair.json")
refresh=$(json_field refresh_token <"$workdir/pair.json")
refresh_cmds=$(benchmarks/capture_redis_commands.py "$REDIS_PORT" \
  "curl -sf -X POST -d '{\"refresh_token\": \"$refresh\"}' $base/auth/token/refresh")
# The same phones again: a returning driver's mint and verify (the captures above were first
# logins, which also create the user).
mint_again_cmds=$(benchmarks/capture_redis_commands.py "$REDIS_PORT" \
  "curl -sf -X POST -H 'X-API-Key: $key' -d '{\"phone\": \"9000000002\", \"driver_id\": \"d2\"}' $base/partner/v1/sdk-token")
post -d '{"phone": "9000000003"}' "$base/auth/otp/trigger" >/dev/null
verify_again_cmds=$(benchmarks/capture_redis_commands.py "$REDIS_PORT" \
  "curl -sf -X POST -d '{\"phone\": \"9000000003\", \"otp\": \"123456\"}' $base/auth/otp/verify")
trips() { python3 -c 'import json,sys; print(json.load(sys.stdin)["round_trips"])' <<<"$1"; }
count() { python3 -c 'import json,sys; print(len(json.load(sys.stdin)["commands"]))' <<<"$1"; }
names() { python3 -c 'import json,sys; print(" ".join(c[0].upper() for c in json.load(sys.stdin)["commands"]))' <<<"$1"; }

# redis-benchmark replays a request's commands with random hash tags (new phones, sessions
# and buckets each time); the reference rate is one such sequence per "request".
replay_rps() { # JSON list of commands -> requests/s if Redis did nothing but these
  local total_us=0
  while IFS= read -r cmd; do
    local -a args
    eval "args=($cmd)"
    local rps
    rps=$(redis-benchmark -p "$REDIS_PORT" -c "$connections" -n 100000 -r 100000000 --csv "${args[@]}" 2>/dev/null | benchmark_rps)
    total_us=$(awk -v t="$total_us" -v r="$rps" 'BEGIN { printf "%.3f", t + 1000000 / r }')
  done < <(python3 -c '
import json, re, shlex, sys
for cmd in json.load(sys.stdin)["commands"]:
    cmd = [re.sub(r"\{[^}]*\}", "{__rand_int__}", a) for a in cmd]
    print(" ".join(shlex.quote(a) for a in cmd))' <<<"$1")
  awk -v t="$total_us" 'BEGIN { printf "%d\n", 1000000 / t }'
}

cat > "$workdir/mint.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  local phone = string.format("9%09d", math.random(0, 99999))
  return wrk.format(nil, nil, nil, '{"phone":"' .. phone .. '","driver_id":"NY-' .. phone .. '"}')
end
LUA
# Each thread walks its own phone numbers (round, thread, counter), so the verify phase finds,
# in order, the OTPs the trigger phase stored. The trigger phase runs twice as long, so there
# is an OTP for every verify; done() prints how many answers were 200.
cat > "$workdir/otp.lua" <<'LUA'
local threads = {}
function setup(thread) thread:set("id", #threads); table.insert(threads, thread) end
ok = 0   -- global, so done() can read it from each thread
local counter, round, path, extra = 0, 0, "", ""
function init(args) round = tonumber(args[1]); path = args[2]; extra = args[3] or "" end
function request()
  counter = counter + 1
  local phone = string.format("6%d%d%07d", round, id, counter)
  return wrk.format("POST", path, {["Content-Type"] = "application/json"}, '{"phone":"' .. phone .. '"' .. extra .. '}')
end
function response(status) if status == 200 then ok = ok + 1 end end
function done()
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("ok") end
  io.write(string.format("ok %d\n", total))
end
LUA

non_2xx() { awk '/Non-2xx/ { n = $5 } END { print n + 0 }'; }
run_wrk() { wrk -t2 -c"$connections" --latency "$@"; }
mint_rps=(); mint_ref=(); verify_rps=(); verify_ref=(); non2xx=0
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds"
  out=$(run_wrk -d"$duration" -s "$workdir/mint.lua" -H "X-API-Key: $key" "$base/partner/v1/sdk-token")
  mint_rps+=("$(wrk_rps <<<"$out")"); non2xx=$((non2xx + $(non_2xx <<<"$out")))
  mint_ref+=("$(replay_rps "$mint_cmds")")
  run_wrk -d"$((seconds * 2))s" -s "$workdir/otp.lua" "$base/auth/otp/trigger" -- "$round" /auth/otp/trigger >/dev/null
  out=$(run_wrk -d"$duration" -s "$workdir/otp.lua" "$base/auth/otp/verify" -- "$round" /auth/otp/verify ',"otp":"123456"')
  verify_rps+=("$(awk -v s="$seconds" '$1 == "ok" { printf "%d\n", $2 / s }' <<<"$out")")
  non2xx=$((non2xx + $(non_2xx <<<"$out")))
  verify_ref+=("$(replay_rps "$verify_cmds")")
done

m_mint=$(median "${mint_rps[@]}"); m_mint_ref=$(median "${mint_ref[@]}")
m_verify=$(median "${verify_rps[@]}"); m_verify_ref=$(median "${verify_ref[@]}")
echo
echo "Driver tokens, wrk -t2 -c$connections, median of $rounds alternating rounds (reference: redis-benchmark -c$connections replaying the same commands)"
printf '%-34s %10s %16s %8s %12s  %s\n' "request" "req/s" "redis-only req/s" "ratio" "round trips" "redis commands (first login)"
printf '%-34s %10s %16s %8s %12s  %s (%s)\n' "POST /partner/v1/sdk-token" "$m_mint" "$m_mint_ref" "$(ratio "$m_mint" "$m_mint_ref")" "$(trips "$mint_cmds") / $(trips "$mint_again_cmds")" "$(count "$mint_cmds")" "$(names "$mint_cmds")"
printf '%-34s %10s %16s %8s %12s  %s (%s)\n' "POST /auth/otp/verify" "$m_verify" "$m_verify_ref" "$(ratio "$m_verify" "$m_verify_ref")" "$(trips "$verify_cmds") / $(trips "$verify_again_cmds")" "$(count "$verify_cmds")" "$(names "$verify_cmds")"
printf '%-34s %10s %16s %8s %12s  %s (%s)\n' "POST /auth/token/refresh" "-" "-" "-" "$(trips "$refresh_cmds")" "$(count "$refresh_cmds")" "$(names "$refresh_cmds")"
echo "round trips: a first login / a returning driver's; non-2xx answers during the runs: $non2xx"
# Which they were, from the gateway's access log (the OTP triggers' are left out).
python3 -c '
import collections, json, sys
seen = collections.Counter()
for line in open(sys.argv[1], errors="replace"):
    if not line.startswith("{"): continue
    entry = json.loads(line)
    if entry.get("level") in ("error", "critical"):
        seen[("error line", entry.get("msg"))] += 1
    elif entry.get("logger") == "access" and entry.get("status", 200) >= 300 and entry.get("route") != "/auth/otp/trigger":
        seen[(entry.get("route"), entry["status"])] += 1
for (what, detail), n in sorted(seen.items(), key=str): print(f"  {n} x {what}: {detail}")' "$workdir/gateway.log"
echo "targets: sdk-token and verify >= 0.7 of redis-only, in <= 3 round trips each; refresh 1"
