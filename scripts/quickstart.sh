#!/usr/bin/env bash
# The main job (crates/bigq/examples/quickstart.rs): against real BigQuery when
# GOOGLE_CLOUD_PROJECT is set (with Application Default Credentials), otherwise against
# bigq-emulator, which this script starts on a free loopback port and stops afterwards.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
if [[ -n "${GOOGLE_CLOUD_PROJECT:-}" && -z "${BIGQUERY_EMULATOR_HOST:-}" ]]; then
  exec cargo run -q -p bigq --example quickstart
fi
# scripts/test.sh passes the binaries its test build made, so nothing is built twice.
emulator_bin="${BIGQ_EMULATOR_BIN:-}"
if [[ -z "${BIGQUERY_EMULATOR_HOST:-}" ]]; then
  if [[ -z "$emulator_bin" ]]; then
    cargo build -q -p bigq-emulator
    emulator_bin="${CARGO_TARGET_DIR:-$repo/target}/debug/bigq-emulator"
  fi
  log="$(mktemp)"
  "$emulator_bin" --host 127.0.0.1 --port 0 --grpc-port 0 --project quickstart-project >"$log" 2>&1 &
  pid=$!
  trap 'kill "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
  for _ in $(seq 200); do
    grep -q "listening on" "$log" && break
    kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.05
  done
  endpoint="$(grep -o 'http://[0-9.:]*' "$log" | head -1)"
  [[ -n "$endpoint" ]] || { echo "bigq-emulator did not start" >&2; cat "$log" >&2; exit 1; }
  export BIGQUERY_EMULATOR_HOST="$endpoint" GOOGLE_CLOUD_PROJECT=quickstart-project
fi
if [[ -n "${BIGQ_QUICKSTART_BIN:-}" ]]; then
  "$BIGQ_QUICKSTART_BIN"
else
  cargo run -q -p bigq --example quickstart
fi
