#!/usr/bin/env bash
# Runs the README's first command as a newcomer would (`npm start` on this checkout, in the background, on free
# ports) and checks the first run works: liveness, a virtual key made with the master key from .env
# (POST /key/generate), /v1/models with that key, a restart that keeps the key (the embedded database's data
# survives), and the console's health and master-key sign-in. Stops everything it started (its process group).
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scripts/first-run-check.sh [--help]

Checks the newcomer's first run on this checkout (.ci/run runs it on its clean clone):
  1. takes the README's first command (the "$ npm ci && npm start" line) and runs its npm start part in the
     background on free ports (PORT, CONSOLE_PORT), with no DATABASE_URL: the embedded database
  2. waits for the gateway's /health/liveliness, reads GATEWAY_MASTER_KEY from .env (the first run makes it)
  3. makes a virtual key (POST /key/generate), calls GET /v1/models with it
  4. stops it, starts it again (npm start --ignore-scripts: no second build), checks the key still works
  5. checks the console: GET /_health, then POST /api/admin/login with the master key
  6. stops everything it started

Environment: CHECK_TIMEOUT_S (default 600) bounds each wait for the gateway to come up.
USAGE
}

for arg in "$@"; do
  case "$arg" in
    -h | --help) usage; exit 0 ;;
    *) echo "first-run-check: unknown argument $arg (see --help)" >&2; exit 2 ;;
  esac
done

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
timeout_s="${CHECK_TIMEOUT_S:-600}"
log_dir="$(mktemp -d)"
pgid=""

say() { printf 'first run: %s\n' "$*"; }
fail() {
  printf 'first run: FAILED: %s\n' "$*" >&2
  [[ -f "$log_dir/run.log" ]] && { echo "--- last lines of npm start:" >&2; tail -n 40 "$log_dir/run.log" >&2; }
  exit 1
}

start_cmd=$(sed -n 's/^ *\$ *npm ci && \(npm start\)\( .*\)\{0,1\}$/\1/p' README.md | head -1)
[[ -n "$start_cmd" ]] || fail "README.md gives no '\$ npm ci && npm start' line"

free_port() {
  node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
gateway_port=$(free_port)
console_port=$(free_port)
while [[ "$console_port" == "$gateway_port" ]]; do console_port=$(free_port); done
gateway="http://127.0.0.1:$gateway_port"
console="http://localhost:$console_port"

stop_all() {
  [[ -n "$pgid" ]] || return 0
  if kill -0 -- "-$pgid" 2>/dev/null; then
    kill -TERM -- "-$pgid" 2>/dev/null || true
    for _ in $(seq 1 150); do
      kill -0 -- "-$pgid" 2>/dev/null || break
      sleep 0.2
    done
  fi
  pgid=""
}

# Anything still listening on our ports after a stop is a leftover process.
assert_stopped() {
  local port
  for port in "$gateway_port" "$console_port"; do
    if curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$port/"; then
      fail "something still listens on :$port after the stop (a leftover process)"
    fi
  done
}

cleanup() {
  local pids
  if [[ -n "$pgid" ]]; then
    pids=$(pgrep -g "$pgid" || true)
    stop_all
    # The launcher's children run in process groups of their own: the stop above reaches them through it;
    # a child that outlived it would be a bug, and gets a SIGKILL here.
    for pid in $pids; do kill -KILL "$pid" 2>/dev/null || true; done
  fi
  rm -rf "$log_dir"
}
trap cleanup EXIT

launch() {
  local cmd="$1"
  say "starting: $cmd (gateway :$gateway_port, console :$console_port)"
  # setsid: the run gets a process group of its own, stopped as a whole.
  PORT="$gateway_port" CONSOLE_PORT="$console_port" DATABASE_URL="" setsid bash -c "$cmd" \
    >"$log_dir/run.log" 2>&1 </dev/null &
  pgid=$!
  local waited=0
  until curl -sf -o /dev/null --max-time 2 "$gateway/health/liveliness"; do
    kill -0 "$pgid" 2>/dev/null || fail "npm start exited before the gateway was live"
    ((waited < timeout_s)) || fail "the gateway was not live after ${timeout_s} s"
    sleep 1
    waited=$((waited + 1))
    if ((waited % 30 == 0)); then say "waiting for the gateway (${waited} s)"; fi
  done
  say "gateway live after ${waited} s"
}

# The value of "field" in a JSON body on stdin.
json_field() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s)[process.argv[1]];if(v===undefined)process.exit(1);console.log(v)})' "$1"; }

models_status() {
  curl -s -o /dev/null -w '%{http_code}' "$gateway/v1/models" -H "Authorization: Bearer $1"
}

launch "$start_cmd"
grep -q '"database: embedded PostgreSQL (PGlite), data in' "$log_dir/run.log" \
  || fail "the start-up lines do not name the embedded database"
master_key=$(sed -n 's/^GATEWAY_MASTER_KEY=//p' .env | tail -1)
[[ "$master_key" == sk-* ]] || fail ".env has no generated GATEWAY_MASTER_KEY"
say "master key read from .env"

reply=$(curl -s "$gateway/key/generate" -H "Authorization: Bearer $master_key" \
  -H 'Content-Type: application/json' -d '{"key_alias":"first-run-check"}')
key=$(json_field key <<<"$reply") || fail "POST /key/generate gave no key: $reply"
say "virtual key made (POST /key/generate)"
status=$(models_status "$key")
[[ "$status" == 200 ]] || fail "GET /v1/models with the virtual key answered $status"
say "GET /v1/models with the virtual key: 200"

say "stopping"
stop_all
assert_stopped
# Built and .env made already: the restart skips npm's prestart (it would only build the same again).
launch "$start_cmd --ignore-scripts"
status=$(models_status "$key")
[[ "$status" == 200 ]] || fail "after the restart, GET /v1/models with the key answered $status"
say "after the restart the key still works"

waited=0
until curl -sf -o /dev/null --max-time 2 "$console/_health"; do
  ((waited < 60)) || fail "the console's /_health did not answer 200 within 60 s"
  sleep 1
  waited=$((waited + 1))
done
say "console healthy (GET /_health)"
# The key goes on stdin, not on curl's command line (where ps would show it).
status=$(curl -s -o /dev/null -w '%{http_code}' "$console/api/admin/login" -H "Origin: $console" \
  -H 'Content-Type: application/json' --data-binary @- <<<"{\"master_key\":\"$master_key\"}")
[[ "$status" == 200 ]] || fail "the console's master-key sign-in answered $status"
say "console sign-in with the master key: 200"

stop_all
assert_stopped
say "stopped; all checks passed"
