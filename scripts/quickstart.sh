#!/usr/bin/env bash
# The main job (crates/bigq/examples/quickstart.rs): against real BigQuery when
# GOOGLE_CLOUD_PROJECT is set (with Application Default Credentials), otherwise against a
# local emulator on loopback that this script starts and stops.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
if [[ -n "${GOOGLE_CLOUD_PROJECT:-}" && -z "${BIGQUERY_EMULATOR_HOST:-}" ]]; then
  exec cargo run -q -p bigq --example quickstart
fi
started=0
if ! bash scripts/bqemulator.sh env >/dev/null 2>&1; then
  bash scripts/bqemulator.sh start
  started=1
fi
# shellcheck disable=SC1091
source target/bqemulator/env
cleanup() { if [[ $started == 1 ]]; then bash scripts/bqemulator.sh stop; fi; }
trap cleanup EXIT
BIGQUERY_EMULATOR_HOST="$BQEMU_REST_ENDPOINT" GOOGLE_CLOUD_PROJECT="$BQEMU_PROJECT" \
  cargo run -q -p bigq --example quickstart
