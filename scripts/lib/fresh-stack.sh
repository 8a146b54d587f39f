# Sourced by the scripts that test against a fresh development stack (scripts/run.sh on free
# loopback ports with a temporary data directory: nothing shared with a running development
# stack or with other tests): scripts/readme-walkthrough.sh and scripts/browser-test.sh.

# fresh_stack_ports NAME [VAR...]: a work directory in $work, and free ports for the stack
# (PG_PORT, PG_ADMIN_PORT, PG_ECHO_PORT, DEV_REDIS_PORT, PG_WEB_PORT) and for each VAR,
# exported (scripts/lib/free_ports.py says where they come from). The gateway's Redis
# deadline is 2 s, not the development configuration's 250 ms: scripts/test.sh runs these
# stacks at nice 10 beside the Swift tests, where a reply the starved gateway read late was a
# 503 in the middle of the walk-through. The work directory (and so Redis' AOF, still
# appendfsync always) is in /dev/shm where there is one: beside a release build's writes, one
# fsync on the shared disk took over a second, and every write waits for it.
fresh_stack_ports() {
  local name=$1; shift
  local parent="${TMPDIR:-/tmp}"
  [ -d /dev/shm ] && [ -w /dev/shm ] && parent=/dev/shm
  work="$(mktemp -d "$parent/pg-$name.XXXXXX")"
  local vars=(PG_PORT PG_ADMIN_PORT PG_ECHO_PORT DEV_REDIS_PORT PG_WEB_PORT "$@") ports index
  read -r -a ports < <(python3 scripts/lib/free_ports.py "${#vars[@]}")
  for index in "${!vars[@]}"; do export "${vars[$index]}=${ports[$index]}"; done
  export PG_DATA_DIR="$work/data" PG_REDIS_TIMEOUT=2s
}

# start_fresh_stack: scripts/run.sh in the background as a script starts it (SIGINT ignored,
# which run.sh undoes), in a process group of its own (so a Ctrl-C to the group reaches
# run.sh, the gateway, the echo upstream and the web app together, as a terminal's foreground
# job), its pid in $run_pid; everything is stopped and $work removed at exit (with run.sh's
# output on a failure). Returns once the gateway is ready and the echo upstream and the web
# app answer: the build may take minutes, as a newcomer sees it.
start_fresh_stack() {
  # setsid runs run.sh in place (same pid): a background job is never a group leader.
  setsid scripts/run.sh </dev/null >"$work/run.log" 2>&1 &
  run_pid=$!
  trap stop_fresh_stack EXIT
  echo "starting the stack (scripts/run.sh; gateway on localhost:$PG_PORT, web app on localhost:$PG_WEB_PORT)..."
  until curl -sf "localhost:$PG_PORT/readyz" >/dev/null && curl -s "localhost:$PG_ECHO_PORT/" >/dev/null \
    && curl -sf "localhost:$PG_WEB_PORT/" >/dev/null; do
    if ! kill -0 "$run_pid" 2>/dev/null; then
      echo "scripts/run.sh ended before the gateway was ready" >&2
      exit 1
    fi
    sleep 0.2
  done
}

stop_fresh_stack() {
  local status=$?
  kill -INT -- "-$run_pid" 2>/dev/null && wait "$run_pid" 2>/dev/null
  scripts/dev-redis.sh stop >/dev/null 2>&1 || true
  if [ "$status" -ne 0 ]; then
    echo "--- scripts/run.sh output (the gateway's log), last 40 lines:" >&2
    tail -n 40 "$work/run.log" >&2
  fi
  rm -rf "$work"
  exit "$status"
}
