#!/usr/bin/env bash
# Run the bqemulator BigQuery emulator (REST + Storage gRPC) on loopback.
#
#   scripts/bqemulator.sh start   # start in background (no-op if already up)
#   scripts/bqemulator.sh stop    # stop it (no-op if not running)
#   scripts/bqemulator.sh env     # print target/bqemulator/env
#
# `start` ensures the venv (scripts/python-env.sh), picks two free 127.0.0.1
# ports, launches
#   bqemulator start --rest-host 127.0.0.1 --rest-port R --grpc-host 127.0.0.1
#                    --grpc-port G --project test-project --ephemeral
# with BQEMU_WRITE_API_MAX_REQUEST_BYTES raised (the gRPC message-size cap is
# derived from it), logs to target/bqemulator/log.txt, and writes
# target/bqemulator/env (sourceable KEY=VALUE lines):
#   BQEMU_REST_ENDPOINT=http://127.0.0.1:R
#   BQEMU_GRPC_ENDPOINT=http://127.0.0.1:G
#   BQEMU_PROJECT=test-project
#   BQEMU_PID=<pid>
# It then waits (BQEMU_START_TIMEOUT, default 60 s) until REST answers and
# the gRPC port accepts connections; on failure it prints the log tail.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${BIGQ_VENV:-$repo/.venv}"
state="$repo/target/bqemulator"
log="$state/log.txt"
envfile="$state/env"
pidfile="$state/pid"
project="test-project"
host="127.0.0.1" # loopback only, never anything else
timeout="${BQEMU_START_TIMEOUT:-60}"
max_request_bytes="${BQEMU_WRITE_API_MAX_REQUEST_BYTES:-134217728}"

die() { echo "bqemulator.sh: $*" >&2; exit 1; }

# pid of our running emulator, or empty
running_pid() {
  local pid
  [[ -f "$pidfile" ]] || return 0
  pid="$(cat "$pidfile" 2>/dev/null || true)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 0
  kill -0 "$pid" 2>/dev/null || return 0
  # guard against pid reuse: must be a bqemulator process
  grep -qa bqemulator "/proc/$pid/cmdline" 2>/dev/null || return 0
  echo "$pid"
}

rest_ready() { # $1 = REST base URL
  curl --noproxy '*' -fsS -o /dev/null --max-time 2 \
    "$1/bigquery/v2/projects/$project/datasets" 2>/dev/null
}

grpc_ready() { # $1 = port
  (exec 3<>"/dev/tcp/$host/$1") 2>/dev/null
}

fail_start() {
  local pid="${1:-}"
  if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile" "$envfile"
  echo "bqemulator.sh: $2; last lines of $log:" >&2
  tail -n 40 "$log" >&2 2>/dev/null || true
  exit 1
}

cmd_start() {
  local pid
  pid="$(running_pid)"
  if [[ -n "$pid" ]]; then
    # shellcheck disable=SC1090
    if [[ -f "$envfile" ]] && rest_ready "$(. "$envfile"; echo "$BQEMU_REST_ENDPOINT")"; then
      return 0 # already up
    fi
    cmd_stop # half-started or wedged: replace it
  fi

  "$repo/scripts/python-env.sh"
  [[ -x "$venv/bin/bqemulator" ]] || die "$venv/bin/bqemulator missing after python-env.sh"

  mkdir -p "$state"
  rm -f "$envfile" "$pidfile"

  local ports rest_port grpc_port
  ports="$("$venv/bin/python" -c '
import socket
a, b = socket.socket(), socket.socket()
a.bind(("127.0.0.1", 0)); b.bind(("127.0.0.1", 0))
print(a.getsockname()[1], b.getsockname()[1])')"
  read -r rest_port grpc_port <<<"$ports"

  local -a cmd=(
    "$venv/bin/bqemulator" start
    --rest-host "$host" --rest-port "$rest_port"
    --grpc-host "$host" --grpc-port "$grpc_port"
    --project "$project" --ephemeral
  )
  {
    echo "# $(date -u +%FT%TZ) BQEMU_WRITE_API_MAX_REQUEST_BYTES=$max_request_bytes ${cmd[*]}"
  } >"$log"
  # cwd = state dir so no stray .bqemu.toml is picked up.
  (
    cd "$state"
    export BQEMU_WRITE_API_MAX_REQUEST_BYTES="$max_request_bytes"
    exec nohup "${cmd[@]}" >>"$log" 2>&1 </dev/null
  ) &
  pid=$!
  echo "$pid" >"$pidfile"

  local rest="http://$host:$rest_port" deadline=$((SECONDS + timeout))
  until rest_ready "$rest" && grpc_ready "$grpc_port"; do
    kill -0 "$pid" 2>/dev/null || fail_start "" "bqemulator exited during startup"
    ((SECONDS < deadline)) || fail_start "$pid" "bqemulator not ready after ${timeout}s"
    sleep 0.3
  done

  cat >"$envfile.tmp" <<EOF
BQEMU_REST_ENDPOINT=$rest
BQEMU_GRPC_ENDPOINT=http://$host:$grpc_port
BQEMU_PROJECT=$project
BQEMU_PID=$pid
EOF
  mv "$envfile.tmp" "$envfile"
}

cmd_stop() {
  local pid i
  pid="$(running_pid)"
  if [[ -n "$pid" ]]; then
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -f "$pidfile" "$envfile"
}

cmd_env() {
  [[ -f "$envfile" && -n "$(running_pid)" ]] || die "not running (use: $0 start)"
  cat "$envfile"
}

case "${1:-}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  env) cmd_env ;;
  *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
