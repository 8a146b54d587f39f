# Shared helpers for the benchmark scripts (sourced, not run).

# shellcheck source=scripts/release-build-flags.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/release-build-flags.sh"

# A free TCP port on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# The median of the numbers given as arguments.
median() {
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ratio A B: A / B with two decimals.
ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "n/a"; else printf "%.2f", a / b }'
}

# Installs what is missing, builds redis-bench in release mode and sets REDIS_BENCH to it.
build_redis_bench() {
  scripts/install-deps.sh
  echo "building redis-bench (release)..."
  swift_release --product redis-bench >/dev/null 2>&1 || swift_release --product redis-bench
  REDIS_BENCH="$(swift_release --show-bin-path)/redis-bench"
}

# Starts a throwaway redis-server on a free port (no persistence); sets REDIS_PORT and
# REDIS_DIR and stops it on exit.
start_bench_redis() {
  REDIS_PORT=$(free_port)
  REDIS_DIR=$(mktemp -d)
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$REDIS_DIR" \
    --daemonize yes --pidfile "$REDIS_DIR/redis.pid" --logfile "$REDIS_DIR/redis.log"
  for _ in $(seq 1 500); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && return 0; sleep 0.01; done
  echo "redis-server did not start" >&2; return 1
}

stop_bench_redis() {
  [ -n "${REDIS_PORT:-}" ] && redis-cli -p "$REDIS_PORT" shutdown nosave >/dev/null 2>&1 || true
  [ -n "${REDIS_DIR:-}" ] && rm -rf "$REDIS_DIR"
}

# The requests per second redis-benchmark printed in --csv mode (the last line's 2nd field).
benchmark_rps() {
  tail -n 1 | awk -F'","' '{ gsub(/"/, "", $2); printf "%d\n", $2 }'
}

# Requests per second from wrk's output (stdin).
wrk_rps() {
  awk '/^Requests\/sec:/ { printf "%d\n", $2 }'
}

# The 99th percentile latency in milliseconds from wrk --latency output (stdin).
wrk_p99_ms() {
  awk '$1 == "99%" { v = $2; if (v ~ /us$/) { sub(/us$/, "", v); v = v / 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /s$/) { sub(/s$/, "", v); v = v * 1000 } printf "%.2f\n", v }'
}

# CPU time (user + system) a process has used so far, in microseconds; of several processes
# together when given as a comma-separated list (an edge and the gateway it asks).
cpu_us() {
  local ticks=0 pid
  for pid in ${1//,/ }; do
    ticks=$(( ticks + $(awk '{ print $14 + $15 }' "/proc/$pid/stat") ))
  done
  echo $(( ticks * 1000000 / $(getconf CLK_TCK) ))
}

# per_request_us CPU-BEFORE CPU-AFTER REQUESTS-A-SECOND SECONDS: CPU microseconds per request
# over a run of SECONDS (the CPU figures from cpu_us).
per_request_us() {
  awk -v a="$2" -v b="$1" -v r="$3" -v s="$4" 'BEGIN { printf "%.1f", (a - b) / (r * s) }'
}

# The machine's CPU time so far, all cores, in clock ticks: "busy idle" (idle includes I/O wait).
machine_ticks() {
  awk '/^cpu / { idle = $5 + $6; total = 0; for (i = 2; i <= NF; i++) total += $i; print total - idle, idle }' /proc/stat
}

# measure_targets ROUNDS TARGET...: ROUNDS alternating rounds over the targets, each
# "name|pids whose CPU is counted (comma-separated)|run_wrk arguments..." ('|'-separated), run through the
# caller's run_wrk; appends each round's requests a second, p99 (when run_wrk passes
# --latency) and CPU microseconds per request to the caller's associative arrays rps_of,
# p99_of and cpu_of, under the target's name, and, when the caller declared idle_of, the
# share of the machine's CPU left idle during the run (a run whose processes wait for each
# other instead of working leaves it idle: RESULTS, "What the slow mode looks like from the
# machine"). Needs $seconds, the length of one run.
measure_targets() {
  local rounds=$1 round target fields name pid args before out rps ticks_before ticks_after; shift
  for round in $(seq 1 "$rounds"); do
    echo "round $round/$rounds"
    while IFS= read -r target; do
      IFS='|' read -r -a fields <<<"$target"
      name=${fields[0]}; pid=${fields[1]}; args=("${fields[@]:2}")
      before=$(cpu_us "$pid"); ticks_before=$(machine_ticks)
      out=$(run_wrk "${args[@]}")
      rps=$(wrk_rps <<<"$out"); ticks_after=$(machine_ticks)
      rps_of[$name]+="$rps "; p99_of[$name]+="$(wrk_p99_ms <<<"$out") "
      cpu_of[$name]+="$(per_request_us "$before" "$(cpu_us "$pid")" "$rps" "$seconds") "
      if declare -p idle_of >/dev/null 2>&1; then
        idle_of[$name]+="$(awk -v b="$ticks_before" -v a="$ticks_after" 'BEGIN {
          split(b, x, " "); split(a, y, " "); busy = y[1] - x[1]; idle = y[2] - x[2]
          printf "%.0f", (busy + idle > 0) ? 100 * idle / (busy + idle) : 0 }') "
      fi
    done < <(round_order "$round" "$@")
  done
}

# round_order ROUND ITEM...: the items one per line, in their order in odd rounds and in reverse
# in even ones. Of two servers measured one after the other, the second read up to 8% faster
# on these machines whichever it was, so no server keeps the same place in every round.
round_order() {
  local round=$1; shift
  if (( round % 2 )); then printf '%s\n' "$@"; else printf '%s\n' "$@" | tac; fi
}

# Waits until something accepts connections on 127.0.0.1:$1 (up to 30 s).
wait_for_port() {
  for _ in $(seq 1 3000); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.01
  done
  echo "nothing listens on port $1" >&2; return 1
}

# Builds the release binaries the benchmarks run; sets BIN.
build_release() {
  echo "building release binaries (a clean release build takes about 8 minutes)..."
  swift_release "$@" >/tmp/pg-bench-build.log 2>&1 || { tail -30 /tmp/pg-bench-build.log; exit 1; }
  BIN="$(swift_release --show-bin-path)"
}

# swift_release ARGS...: `swift build -c release` with the release flags every release build
# shares (scripts/release-build-flags.sh).
swift_release() {
  swift build -c release "${release_build_flags[@]}" "$@"
}

# Sets FLOOR_BIN to proxy-floor: the one beside $GATEWAY_BIN's gateway, or this tree's release build.
find_proxy_floor() {
  if [ -x "${GATEWAY_BIN:-}/proxy-floor" ]; then
    FLOOR_BIN=$GATEWAY_BIN/proxy-floor
  else
    swift_release --product proxy-floor >>/tmp/pg-bench-build.log 2>&1 || { tail -30 /tmp/pg-bench-build.log; exit 1; }
    FLOOR_BIN="$(swift_release --show-bin-path)/proxy-floor"
  fi
}

# make_bench_certificates DIR: a CA (DIR/ca.pem) and an ECDSA P-256 certificate for 127.0.0.1
# (DIR/server.pem, DIR/server.key), shared by every TLS server of a benchmark.
make_bench_certificates() {
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj "/CN=bench CA" \
    -keyout "$1/ca.key" -out "$1/ca.pem" 2>/dev/null
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=127.0.0.1" \
    -keyout "$1/server.key" -out "$1/server.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1\n' > "$1/server.ext"
  openssl x509 -req -in "$1/server.csr" -CA "$1/ca.pem" -CAkey "$1/ca.key" -CAcreateserial -days 2 \
    -extfile "$1/server.ext" -out "$1/server.pem" 2>/dev/null
}

# write_post_script FILE: a wrk script sending a POST with a 1 KiB JSON body.
write_post_script() {
  python3 - "$1" <<'LUA'
import json, sys
body = json.dumps({"pad": "x" * (1024 - len(json.dumps({"pad": ""})))})
assert len(body) == 1024
open(sys.argv[1], "w").write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = \'%s\'\n' % body)
LUA
}

# Starts the release gateway ($BIN) against the bench Redis with `otp.mode: uat`, the shipped
# log settings (info, access log on; or what $BENCH_LOG_YAML says instead) and any extra
# YAML given as $1; sets GATEWAY_PID, PORT, ADMIN_PORT, WORKDIR and the
# bench secrets, creates a partner without a practical rate limit and sets KEY to its key.
# May be called again for another instance (the variables then describe the newest).
start_bench_gateway() {
  PORT=$(free_port); ADMIN_PORT=$(free_port)
  WORKDIR=$(mktemp -d)
  cat > "$WORKDIR/gateway.yaml" <<YAML
listen: 127.0.0.1:$PORT
admin:
  listen: 127.0.0.1:$ADMIN_PORT
redis:
  url: redis://127.0.0.1:$REDIS_PORT/0
otp:
  mode: uat
${BENCH_LOG_YAML-}
${1:-}
YAML
  export GATEWAY_ADMIN_TOKEN=bench-admin-token-0123456789
  export GATEWAY_JWT_SECRET=bench-jwt-secret-0123456789abcdef0123456789
  export GATEWAY_PHONE_KEY=bench-phone-key-0123456789abcdef0123456789
  "$BIN/PartnerGateway" --config "$WORKDIR/gateway.yaml" >"$WORKDIR/gateway.log" 2>&1 &
  GATEWAY_PID=$!
  BENCH_GATEWAY_PIDS+=("$GATEWAY_PID")
  BENCH_GATEWAY_DIRS+=("$WORKDIR")
  wait_for_port "$PORT"
  local partner
  partner=$(bench_admin POST /v1/partners '{"name": "bench", "rate": 1000000, "burst": 1000000}' | json_field partner_id)
  KEY=$(bench_admin POST "/v1/partners/$partner/keys" | json_field key)
}

# Stops every gateway start_bench_gateway started and removes its folder (its log holds the
# access log of every benchmark request: gigabytes over a run).
stop_bench_gateway() {
  for pid in "${BENCH_GATEWAY_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for dir in "${BENCH_GATEWAY_DIRS[@]}"; do rm -rf "$dir"; done
}
BENCH_GATEWAY_PIDS=()
BENCH_GATEWAY_DIRS=()

# bench_admin METHOD PATH [BODY]: an admin API call to the bench gateway.
bench_admin() {
  curl -sf -X "$1" -H "Authorization: Bearer $GATEWAY_ADMIN_TOKEN" "http://127.0.0.1:$ADMIN_PORT$2" ${3:+-d "$3"}
}

# json_field NAME: the field NAME of the JSON object on stdin.
json_field() {
  python3 -c "import json,sys; print(json.load(sys.stdin)[\"$1\"])"
}

# Single-worker nginx instances for the benchmarks' references, each its own process so their
# CPU can be told apart. Files and pids live in NGINX_DIR (made by the first nginx_conf).
NGINX_DIR=""
# nginx_conf NAME HTTP-BLOCK-BODY: writes and starts the instance NAME ($NGINX_MAIN, if set,
# goes into the main context: a `load_module` line).
nginx_conf() {
  [ -n "$NGINX_DIR" ] || NGINX_DIR=$(mktemp -d)
  cat > "$NGINX_DIR/$1.conf" <<CONF
${NGINX_MAIN:-}
worker_processes 1;
daemon on;
pid $NGINX_DIR/$1.pid;
error_log $NGINX_DIR/$1.error.log warn;
events { worker_connections ${NGINX_WORKER_CONNECTIONS:-4096}; }
http {
  access_log off; keepalive_requests 1000000;
  client_body_temp_path $NGINX_DIR/$1-body; proxy_temp_path $NGINX_DIR/$1-proxy;
  fastcgi_temp_path $NGINX_DIR/$1-fcgi; uwsgi_temp_path $NGINX_DIR/$1-uwsgi; scgi_temp_path $NGINX_DIR/$1-scgi;
  $2
}
CONF
  nginx -c "$NGINX_DIR/$1.conf" -e "$NGINX_DIR/$1.error.log"
}

# nginx_reverse_proxy NAME PORT UPSTREAM-PORT: the reference reverse proxy, configured as
# production runs one: a buffered access log, and up to 1,024 idle upstream connections kept
# (`keepalive 1024`: with fewer than the clients it serves, nginx opens upstream connections
# under load, which at 1,000 connections more than doubles its cost per request).
nginx_reverse_proxy() {
  nginx_conf "$1" "upstream up { server 127.0.0.1:$3; keepalive 1024; }
  server { listen 127.0.0.1:$2;
    access_log $NGINX_DIR/$1.access.log combined buffer=64k flush=1s;
    location / { proxy_pass http://up;
    proxy_http_version 1.1; proxy_set_header Connection \"\"; } }"
}

# Stops every instance nginx_conf started and removes NGINX_DIR.
stop_nginx() {
  [ -n "$NGINX_DIR" ] || return 0
  for pidfile in "$NGINX_DIR"/*.pid; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
  rm -rf "$NGINX_DIR"
}
