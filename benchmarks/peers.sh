#!/usr/bin/env bash
# The bearer route beside peers doing the same job, one worker or thread each: HAProxy with
# `jwt_verify` and nginx with njs (`crypto.createHmac`). Each checks the HS256 token the way
# the gateway does (alg, kid, signature, iss, exp/iat/nbf with 5 s of leeway), drops the
# client's `X-Gateway-*` fields, sets the identity fields (`X-Gateway-User-Id`,
# `X-Gateway-Auth-Channel`) and a request id, keeps a buffered access log, and proxies to the
# same upstream (nginx `return 200`, one worker) over kept-alive connections. The gateway runs
# as shipped (access log on) with one event loop. Over HTTP/1.1 (wrk) and over HTTP/2 with
# TLS (h2load; the same ECDSA P-256 certificate, ALPN h2), alternating rounds, medians,
# CPU microseconds per request of each process.
# Targets (same run): gateway / the faster peer over HTTP/1.1 >= 1.0; over HTTP/2 with TLS,
# gateway / HAProxy >= 0.9.
#   ROUNDS=3 DURATION=10s CONNECTIONS=64 H2_CONNECTIONS=16 H2_STREAMS=16 [GATEWAY_BIN=dir] benchmarks/peers.sh
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
if [ -n "${GATEWAY_BIN:-}" ]; then BIN=$GATEWAY_BIN; else build_release --product PartnerGateway; fi

NGINX_DIR=$(mktemp -d); work=$NGINX_DIR
upstream_port=$(free_port)
njs_port=$(free_port); njs_tls_port=$(free_port)
haproxy_port=$(free_port); haproxy_tls_port=$(free_port)
haproxy_pid=""
trap '[ -z "$haproxy_pid" ] || kill "$haproxy_pid" 2>/dev/null; stop_bench_gateway; stop_bench_redis; stop_nginx' EXIT

make_bench_certificates "$work"
cat "$work/server.pem" "$work/server.key" > "$work/server-and-key.pem"

nginx_conf upstream "server { listen 127.0.0.1:$upstream_port; default_type application/json;
    location / { return 200 '{\"ok\":true}'; } }"
wait_for_port "$upstream_port"

# The gateway: one event loop, plain and with TLS (HTTP/1.1 and HTTP/2 by ALPN).
start_bench_redis
routes="server: {event_loops: 1}
routes:
  - {name: bench-bearer, path_prefix: /bearer, upstream: \"http://127.0.0.1:$upstream_port\", auth: bearer, timeout: 5s}"
start_bench_gateway "$routes"
gateway="http://127.0.0.1:$PORT"; gateway_pid=$GATEWAY_PID
curl -sf -X POST -d '{"phone": "9000000001"}' "$gateway/auth/otp/trigger" >/dev/null
token=$(curl -sf -X POST -d '{"phone": "9000000001", "otp": "123456"}' "$gateway/auth/otp/verify" | json_field access_token)
start_bench_gateway "$routes
tls: {cert_file: $work/server.pem, key_file: $work/server.key}"
gateway_tls="https://127.0.0.1:$PORT"; gateway_tls_pid=$GATEWAY_PID
secret=$GATEWAY_JWT_SECRET
kid=k1
issuer=partner-gateway

# nginx with njs: the token checked in JavaScript, once per request (js_set is evaluated once).
cat > "$work/jwt.js" <<JS
const crypto = require('crypto');
const SECRET = '$secret', KID = '$kid', ISSUER = '$issuer', LEEWAY = 5;
function decode(part) { return JSON.parse(Buffer.from(part, 'base64url').toString()); }
function check(r) {
  const auth = r.headersIn.Authorization || '';
  if (!auth.startsWith('Bearer ')) return '';
  const parts = auth.slice(7).split('.');
  if (parts.length !== 3) return '';
  let header, claims;
  try { header = decode(parts[0]); claims = decode(parts[1]); } catch (e) { return ''; }
  if (header.alg !== 'HS256' || header.kid !== KID) return '';
  const signature = crypto.createHmac('sha256', SECRET).update(parts[0] + '.' + parts[1]).digest('base64url');
  if (signature !== parts[2]) return '';
  const now = Math.floor(Date.now() / 1000);
  if (claims.iss !== ISSUER || typeof claims.exp !== 'number' || claims.exp + LEEWAY < now) return '';
  if ((claims.iat || 0) > now + LEEWAY || (claims.nbf || 0) > now + LEEWAY) return '';
  if (typeof claims.user_id !== 'string') return '';
  r.variables.jwt_user = claims.user_id;
  r.variables.jwt_channel = claims.channel || '';
  return '1';
}
export default { check };
JS
NGINX_MAIN="load_module /usr/lib/nginx/modules/ngx_http_js_module.so;" nginx_conf njs "
  js_import jwt from $work/jwt.js;
  js_var \$jwt_user; js_var \$jwt_channel;
  js_set \$jwt_ok jwt.check;
  upstream up { server 127.0.0.1:$upstream_port; keepalive 1024; }
  server { listen 127.0.0.1:$njs_port; listen 127.0.0.1:$njs_tls_port ssl http2;
    ssl_certificate $work/server.pem; ssl_certificate_key $work/server.key;
    ssl_protocols TLSv1.2 TLSv1.3; ssl_session_cache shared:tls:10m;
    access_log $work/njs.access.log combined buffer=64k flush=1s;
    location / {
      if (\$jwt_ok != 1) { return 401 '{\"error\":{\"code\":\"INVALID_TOKEN\"}}'; }
      proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection \"\";
      # An empty value drops the client's field of that name.
      proxy_set_header X-Gateway-User-Id \$jwt_user; proxy_set_header X-Gateway-Auth-Channel \$jwt_channel;
      proxy_set_header X-Gateway-Partner-Id \"\"; proxy_set_header X-Gateway-Key-Id \"\";
      proxy_set_header X-Gateway-Assertion \"\"; proxy_set_header X-Request-Id \$request_id;
    } }"
wait_for_port "$njs_port" || { cat "$work/njs.error.log" >&2; exit 1; }
njs_pid=$(pgrep -P "$(cat "$work/njs.pid")" | head -1)

# HAProxy with jwt_verify: one thread, the access log into an in-memory ring.
cat > "$work/haproxy.cfg" <<CFG
global
  nbthread 1
  maxconn 8000
  ssl-default-bind-options ssl-min-ver TLSv1.2
ring accesslog
  format rfc5424
  size 1048576
defaults
  mode http
  log ring@accesslog local0
  option httplog
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  timeout http-keep-alive 30s
frontend bearer
  bind 127.0.0.1:$haproxy_port
  bind 127.0.0.1:$haproxy_tls_port ssl crt $work/server-and-key.pem alpn h2,http/1.1
  unique-id-format %{+X}o%ci%cp%fi%fp%Ts%rt%pid
  http-request del-header x-gateway- -m beg
  http-request set-var(txn.bearer) http_auth_bearer
  http-request set-var(txn.alg) var(txn.bearer),jwt_header_query('\$.alg')
  http-request set-var(txn.now) date()
  http-request set-var(txn.exp) var(txn.bearer),jwt_payload_query('\$.exp','int')
  http-request deny deny_status 401 content-type application/json string '{"error":{"code":"INVALID_TOKEN"}}' unless { var(txn.alg) -m str HS256 } { var(txn.bearer),jwt_header_query('\$.kid') -m str $kid } { var(txn.bearer),jwt_verify(txn.alg,"$secret") -m int 1 } { var(txn.bearer),jwt_payload_query('\$.iss') -m str $issuer } { var(txn.exp) -m found }
  http-request deny deny_status 401 content-type application/json string '{"error":{"code":"INVALID_TOKEN"}}' if { var(txn.exp),sub(txn.now) -m int lt -5 } || { var(txn.bearer),jwt_payload_query('\$.iat','int'),sub(txn.now) -m int gt 5 } || { var(txn.bearer),jwt_payload_query('\$.nbf','int'),sub(txn.now) -m int gt 5 }
  http-request set-header X-Gateway-User-Id %[var(txn.bearer),jwt_payload_query('\$.user_id')]
  http-request set-header X-Gateway-Auth-Channel %[var(txn.bearer),jwt_payload_query('\$.channel')]
  http-request set-header X-Request-Id %[unique-id]
  default_backend up
backend up
  http-reuse always
  server up 127.0.0.1:$upstream_port
CFG
haproxy -f "$work/haproxy.cfg" >"$work/haproxy.log" 2>&1 &
haproxy_pid=$!
wait_for_port "$haproxy_port" || { cat "$work/haproxy.log" >&2; exit 1; }

# Every proxy lets the token through and refuses a forged one.
forged="${token%.*}.AAAA"
for base in "$gateway/bearer" "http://127.0.0.1:$njs_port" "http://127.0.0.1:$haproxy_port" \
            "$gateway_tls/bearer" "https://127.0.0.1:$njs_tls_port" "https://127.0.0.1:$haproxy_tls_port"; do
  code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/ca.pem" -H "Authorization: Bearer $token" "$base/x")
  [ "$code" = 200 ] || { echo "$base: a good token got $code" >&2; exit 1; }
  code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$work/ca.pem" -H "Authorization: Bearer $forged" "$base/x")
  [ "$code" = 401 ] || { echo "$base: a forged token got $code" >&2; exit 1; }
done

bearer="Authorization: Bearer $token"
run_wrk() { wrk -t2 -c"$connections" -d"$duration" --latency "$@"; }
run_h2load() {
  h2load -t2 -c"$h2_connections" -m"$h2_streams" -D"$seconds" -H "$bearer" "$1" 2>/dev/null \
    | awk '/^finished in/ { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^req\/s/) { printf "%d\n", $i; exit } }'
}
# name | tool | process whose CPU is counted | url
targets=(
  "gateway|run_wrk|$gateway_pid|$gateway/bearer/x"
  "haproxy|run_wrk|$haproxy_pid|http://127.0.0.1:$haproxy_port/x"
  "njs|run_wrk|$njs_pid|http://127.0.0.1:$njs_port/x"
  "gateway_h2|run_h2load|$gateway_tls_pid|$gateway_tls/bearer/x"
  "haproxy_h2|run_h2load|$haproxy_pid|https://127.0.0.1:$haproxy_tls_port/x"
  "njs_h2|run_h2load|$njs_pid|https://127.0.0.1:$njs_tls_port/x"
)
declare -A rps_of cpu_of
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds"
  for target in "${targets[@]}"; do
    IFS='|' read -r name tool pid url <<<"$target"
    before=$(cpu_us "$pid")
    if [ "$tool" = run_wrk ]; then rps=$(run_wrk -H "$bearer" "$url" | wrk_rps); else rps=$(run_h2load "$url"); fi
    rps_of[$name]+="$rps "
    cpu_of[$name]+="$(per_request_us "$before" "$(cpu_us "$pid")" "$rps" "$seconds") "
  done
done

# shellcheck disable=SC2086 # the lists are space-separated numbers
m() { median ${rps_of[$1]}; }
# shellcheck disable=SC2086
cpu() { median ${cpu_of[$1]}; }
row() { printf '%-58s %10s %12s\n' "$1" "$(m "$2")" "$(cpu "$2")"; }
faster() { awk -v a="$(m "$1")" -v b="$(m "$2")" 'BEGIN { print (a >= b) ? a : b }'; }
check() { awk -v v="$1" -v t="$2" 'BEGIN { printf "%s", (v >= t) ? "met" : "NOT met" }'; }
echo
echo "The bearer route and JWT-checking peers, one worker or thread each, in front of nginx return 200;"
echo "median of $rounds alternating rounds (wrk -t2 -c$connections -d$duration; h2load -t2 -c$h2_connections -m$h2_streams -D$seconds)"
printf '%-58s %10s %12s\n' "proxy" "req/s" "CPU us/req"
row "gateway, bearer route, one event loop, HTTP/1.1" gateway
row "HAProxy 2.6 jwt_verify, one thread, HTTP/1.1" haproxy
row "nginx + njs HMAC, one worker, HTTP/1.1" njs
row "gateway, bearer route, one event loop, HTTP/2 over TLS" gateway_h2
row "HAProxy 2.6 jwt_verify, one thread, HTTP/2 over TLS" haproxy_h2
row "nginx + njs HMAC, one worker, HTTP/2 over TLS" njs_h2
echo
h1=$(ratio "$(m gateway)" "$(faster haproxy njs)")
h2=$(ratio "$(m gateway_h2)" "$(m haproxy_h2)")
printf '%-58s %10s   target >= 1.0: %s\n' "HTTP/1.1: gateway / the faster peer" "$h1" "$(check "$h1" 1.0)"
printf '%-58s %10s\n' "HTTP/1.1: gateway / HAProxy" "$(ratio "$(m gateway)" "$(m haproxy)")"
printf '%-58s %10s\n' "HTTP/1.1: gateway / nginx + njs" "$(ratio "$(m gateway)" "$(m njs)")"
printf '%-58s %10s   target >= 0.9: %s\n' "HTTP/2 over TLS: gateway / HAProxy" "$h2" "$(check "$h2" 0.9)"
printf '%-58s %10s\n' "HTTP/2 over TLS: gateway / nginx + njs" "$(ratio "$(m gateway_h2)" "$(m njs_h2)")"
