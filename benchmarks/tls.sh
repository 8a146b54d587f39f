#!/usr/bin/env bash
# What terminating TLS costs: the gateway with `tls` against nginx terminating TLS in front of
# the same upstream (nginx `return 200`, one worker), in one run, alternating, medians:
#   - HTTP/1.1 keep-alive under wrk;
#   - HTTP/2 under h2load (Debian's nghttp2-client), several streams per connection;
#   - an `https://` upstream's cost beside a plain one, both through the gateway's TLS listener.
# Like with like: the same certificate (ECDSA P-256), ciphers and ALPN offered by both (the
# handshake each negotiates is printed); the gateway runs as shipped (access log on) with one
# event loop, thread for thread with nginx's single worker, and nginx logs every request too
# (`access_log ... buffer=64k flush=1s`, as in benchmarks/proxy.sh); each keeps up to 512
# idle upstream connections (the gateway's pool size per loop; with nginx's usual `keepalive
# 64`, 16 HTTP/2 clients of 16 streams made nginx open a new upstream connection for one
# request in three); both sides get the same wrk and h2load runs, alternating.
# The gateway's CPU microseconds per request (user + system over the runs' requests) are
# printed too: with one event loop it is CPU-bound, so they steer better than req/s on a
# machine shared with other work.
# Floors in the same run: `proxy-floor` (benchmarks/proxy-floor.sh) with the same certificate,
# ciphers and ALPN, one event loop: HTTP/1.1 through NIO's codec, HTTP/2 with one frame
# handler after `NIOHTTP2Handler` (no child channels) and, for the idiomatic cost, with NIO's
# multiplexer. A floor does strictly less than the gateway: HEADERS become HTTP/1.1 head bytes
# on a per-loop pool of keep-alive upstream connections, each response head is read by offsets
# straight into its HPACK block, answered HEADERS + DATA, and what a loop pass writes leaves as
# one flush and one TLS write (the gateway's `PassFlushes` and `TLSWriteBatcher`).
# Targets (same run): gateway / floor >= 0.88 for HTTP/1.1 and >= 0.85 for HTTP/2 (frame
# floor); nginx is the anchor (goals 0.8 and 0.7).
#   ROUNDS=3 DURATION=10s CONNECTIONS=64 H2_CONNECTIONS=16 H2_STREAMS=16 PROFILE=1 [GATEWAY_BIN=dir] [EARLIER_BIN=dir] benchmarks/tls.sh
# EARLIER_BIN: an earlier build's folder whose gateway, configured the same, takes each of the
# gateway's rows (HTTP/1.1, HTTP/2, the https:// upstream) beside this build's in the same rounds.
# PROFILE=1 adds a perf profile of the HTTP/2 row, grouped as in benchmarks/proxy.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
source benchmarks/lib.sh

rounds=${ROUNDS:-3}
duration=${DURATION:-10s}
seconds=${duration%s}
connections=${CONNECTIONS:-64}
h2_connections=${H2_CONNECTIONS:-16}
h2_streams=${H2_STREAMS:-16}

scripts/install-deps.sh bench
# GATEWAY_BIN: a folder holding an already built PartnerGateway (an earlier commit's
# release build, to compare two builds on one machine); by default this tree is built.
if [ -n "${GATEWAY_BIN:-}" ]; then BIN=$GATEWAY_BIN; else build_release --product PartnerGateway; fi
find_proxy_floor

NGINX_DIR=$(mktemp -d); work=$NGINX_DIR
upstream_port=$(free_port); upstream_tls_port=$(free_port); nginx_port=$(free_port)
floor_port=$(free_port); floor_mux_port=$(free_port); floor_pids=()
trap 'kill "${floor_pids[@]}" 2>/dev/null || true; stop_bench_gateway; stop_bench_redis; stop_nginx' EXIT

# A CA and a certificate for 127.0.0.1, used by every TLS server here.
make_bench_certificates "$work"
ciphers="ECDHE+AESGCM:ECDHE+CHACHA20"
tls="ssl_certificate $work/server.pem; ssl_certificate_key $work/server.key;
    ssl_protocols TLSv1.2 TLSv1.3; ssl_ciphers $ciphers; ssl_session_cache shared:tls:10m;"

# The upstream, plain and over TLS.
nginx_conf upstream "server { listen 127.0.0.1:$upstream_port; default_type application/json;
    location / { return 200 '{\"ok\":true}'; } }
  server { listen 127.0.0.1:$upstream_tls_port ssl; $tls default_type application/json;
    location / { return 200 '{\"ok\":true}'; } }"
# nginx terminating TLS (HTTP/1.1 and HTTP/2) in front of the plain upstream.
nginx_conf proxy "upstream up { server 127.0.0.1:$upstream_port; keepalive 512; }
  server { listen 127.0.0.1:$nginx_port ssl http2; $tls
    access_log $work/proxy.access.log combined buffer=64k flush=1s;
    location / { proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection \"\"; } }"
wait_for_port "$upstream_port"; wait_for_port "$upstream_tls_port"; wait_for_port "$nginx_port"
nginx_worker=$(pgrep -P "$(cat "$work/proxy.pid")" | head -1)
# The floors: HTTP/2 as frames and through the multiplexer; HTTP/1.1 through NIO's codec.
"$FLOOR_BIN" --port "$floor_port" --upstream-port "$upstream_port" --loops 1 --heads codec \
  --tls-cert "$work/server.pem" --tls-key "$work/server.key" --http2 frames >/dev/null &
floor_pid=$!; floor_pids+=("$floor_pid")
"$FLOOR_BIN" --port "$floor_mux_port" --upstream-port "$upstream_port" --loops 1 --heads codec \
  --tls-cert "$work/server.pem" --tls-key "$work/server.key" --http2 multiplexer >/dev/null &
floor_mux_pid=$!; floor_pids+=("$floor_mux_pid")
wait_for_port "$floor_port"; wait_for_port "$floor_mux_port"
floor="https://127.0.0.1:$floor_port"; floor_mux="https://127.0.0.1:$floor_mux_port"

start_bench_redis
start_bench_gateway "tls: {cert_file: $work/server.pem, key_file: $work/server.key}
server:
  event_loops: 1
routes:
  - {name: plain-upstream, path_prefix: /open, upstream: http://127.0.0.1:$upstream_port, auth: none}
  - {name: tls-upstream, path_prefix: /tls, upstream: https://127.0.0.1:$upstream_tls_port, auth: none, tls: {ca_file: $work/ca.pem}}"
gateway="https://127.0.0.1:$PORT"
gateway_pid=$GATEWAY_PID; gateway_dir=$WORKDIR
if [ -n "${EARLIER_BIN:-}" ]; then
  # The same configuration and the same rows, the https:// upstream's included: a gateway that
  # also holds a pool of TLS upstream connections is not compared with one that holds none.
  BIN=$EARLIER_BIN start_bench_gateway "tls: {cert_file: $work/server.pem, key_file: $work/server.key}
server:
  event_loops: 1
routes:
  - {name: plain-upstream, path_prefix: /open, upstream: http://127.0.0.1:$upstream_port, auth: none}
  - {name: tls-upstream, path_prefix: /tls, upstream: https://127.0.0.1:$upstream_tls_port, auth: none, tls: {ca_file: $work/ca.pem}}"
  earlier="https://127.0.0.1:$PORT"; earlier_pid=$GATEWAY_PID
  curl -sf --http2 --cacert "$work/ca.pem" "$earlier/open/x" >/dev/null || { echo "no answer from the earlier build" >&2; exit 1; }
fi
nginx="https://127.0.0.1:$nginx_port"
for url in "$gateway/open/x" "$gateway/tls/x" "$nginx/x" "$floor/x" "$floor_mux/x"; do
  curl -sf --http2 --cacert "$work/ca.pem" "$url" >/dev/null || { echo "no answer from $url" >&2; exit 1; }
done

# What each side negotiates with h2load: protocol, cipher, ALPN.
for url in "$nginx/x" "$gateway/open/x"; do
  echo "$url: $(h2load -n1 -c1 "$url" 2>/dev/null | awk '/^TLS Protocol|^Cipher|^Application protocol/ { printf "%s ", $0 }')"
done

run_wrk() { wrk -t2 -c"$connections" -d"$duration" "$1" | wrk_rps; }
run_h2load() {
  h2load -t2 -c"$h2_connections" -m"$h2_streams" -D"$seconds" "$1" 2>/dev/null \
    | awk '/^finished in/ { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^req\/s/) { printf "%d\n", $i; exit } }'
}

# name | tool | process whose CPU is counted | url
targets=(
  "nginx-h1|run_wrk|$nginx_worker|$nginx/x"
  "floor-h1|run_wrk|$floor_pid|$floor/x"
  "gateway-h1|run_wrk|$gateway_pid|$gateway/open/x"
  ${EARLIER_BIN:+"earlier-h1|run_wrk|$earlier_pid|$earlier/open/x"}
  "nginx-h2|run_h2load|$nginx_worker|$nginx/x"
  "floor-h2|run_h2load|$floor_pid|$floor/x"
  "floor-h2-mux|run_h2load|$floor_mux_pid|$floor_mux/x"
  "gateway-h2|run_h2load|$gateway_pid|$gateway/open/x"
  ${EARLIER_BIN:+"earlier-h2|run_h2load|$earlier_pid|$earlier/open/x"}
  "gateway-h1-tls-upstream|run_wrk|$gateway_pid|$gateway/tls/x"
  ${EARLIER_BIN:+"earlier-h1-tls-upstream|run_wrk|$earlier_pid|$earlier/tls/x"}
)
declare -A rps_of cpu_of
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds"
  while IFS= read -r target; do
    IFS='|' read -r name tool pid url <<<"$target"
    cpu_before=$(cpu_us "$pid")
    rps=$($tool "$url")
    rps_of[$name]+="$rps "
    cpu_of[$name]+="$(awk -v c=$(( $(cpu_us "$pid") - cpu_before )) -v r="$rps" -v s="$seconds" \
      'BEGIN { if (r > 0) printf "%.1f", c / (r * s); else print 0 }') "
  done < <(round_order "$round" "${targets[@]}")
done
# Warnings only: the access log's lines go to the same output.
errors=$(grep '"level":"warning"' "$gateway_dir/gateway.log" | grep -c "upstream" || true)

# shellcheck disable=SC2086 # the lists are space-separated numbers
m() { median ${rps_of[$1]}; }
# shellcheck disable=SC2086
cpu() { median ${cpu_of[$1]}; }
echo
echo "TLS termination in front of nginx return 200, median of $rounds alternating rounds"
echo "(wrk -t2 -c$connections -d$duration; h2load -t2 -c$h2_connections -m$h2_streams -D$seconds)"
echo "(the gateway with its shipped defaults, access log on; nginx with access_log buffer=64k flush=1s)"
printf '%-62s %10s %12s\n' "path" "req/s" "CPU us/req"
row() { printf '%-62s %10s %12s\n' "$1" "$(m "$2")" "$(cpu "$2")"; }
row "nginx, TLS, HTTP/1.1 keep-alive (1 worker)" nginx-h1
row "proxy-floor, TLS, HTTP/1.1 keep-alive (1 event loop)" floor-h1
row "gateway, TLS, HTTP/1.1 keep-alive (1 event loop)" gateway-h1
row "nginx, TLS, HTTP/2" nginx-h2
row "proxy-floor, TLS, HTTP/2, frames (no child channels)" floor-h2
row "proxy-floor, TLS, HTTP/2, NIO's multiplexer" floor-h2-mux
row "gateway, TLS, HTTP/2" gateway-h2
row "gateway, TLS, HTTP/1.1, https:// upstream" gateway-h1-tls-upstream
[ -z "${EARLIER_BIN:-}" ] || row "gateway, TLS, HTTP/1.1, the earlier build" earlier-h1
[ -z "${EARLIER_BIN:-}" ] || row "gateway, TLS, HTTP/2, the earlier build" earlier-h2
[ -z "${EARLIER_BIN:-}" ] || row "gateway, TLS, HTTP/1.1, https:// upstream, the earlier build" earlier-h1-tls-upstream
check() { awk -v v="$1" -v t="$2" 'BEGIN { printf "%s", (v >= t) ? "met" : "NOT met" }'; }
h1=$(ratio "$(m gateway-h1)" "$(m floor-h1)"); h2=$(ratio "$(m gateway-h2)" "$(m floor-h2)")
echo "HTTP/1.1 gateway / floor:                     $h1   target >= 0.88: $(check "$h1" 0.88)"
echo "HTTP/2   gateway / frame floor:               $h2   target >= 0.85: $(check "$h2" 0.85)"
echo "HTTP/2   multiplexer floor / frame floor:     $(ratio "$(m floor-h2-mux)" "$(m floor-h2)")"
if [ -n "${EARLIER_BIN:-}" ]; then
  echo "HTTP/1.1 this build / the earlier build:      $(ratio "$(m gateway-h1)" "$(m earlier-h1)")"
  echo "HTTP/2   this build / the earlier build:      $(ratio "$(m gateway-h2)" "$(m earlier-h2)")"
  echo "https upstream this build / the earlier:     $(ratio "$(m gateway-h1-tls-upstream)" "$(m earlier-h1-tls-upstream)")"
fi
echo "ratio HTTP/1.1 (gateway / nginx):             $(ratio "$(m gateway-h1)" "$(m nginx-h1)")   goal >= 0.8"
echo "ratio HTTP/2   (gateway / nginx):             $(ratio "$(m gateway-h2)" "$(m nginx-h2)")   goal >= 0.7"
echo "https upstream / plain upstream (gateway):    $(ratio "$(m gateway-h1-tls-upstream)" "$(m gateway-h1)")"
echo "upstream warnings logged by the gateway: $errors"

if [ "${PROFILE:-0}" = 1 ]; then
  echo
  echo "Profile of the HTTP/2 row (perf, 999 Hz, 8 s under h2load), share of the gateway's samples:"
  perf record -F 999 -g -p "$gateway_pid" -o "$gateway_dir/perf.data" -- sleep 8 >/dev/null 2>&1 &
  perf_pid=$!
  h2load -t2 -c"$h2_connections" -m"$h2_streams" -D9 "$gateway/open/x" >/dev/null 2>&1
  wait "$perf_pid" || true
  perf script -i "$gateway_dir/perf.data" 2>/dev/null | benchmarks/profile_breakdown.py
fi

