#!/usr/bin/env bash
# The test command: starts the servers the integration tests need on loopback, runs every
# test of the workspace, and stops the servers.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

# The network test bed of the fault suite (bigq's faults:: tests on shaped links) needs
# iproute2's `ip` and `tc`; as root without them, install them (those tests skip, saying
# why, where they cannot run).
if [[ $(id -u) -eq 0 ]] && ! { command -v ip && command -v tc; } >/dev/null 2>&1 \
  && command -v apt-get >/dev/null 2>&1; then
  apt-get install -y -qq iproute2 >/dev/null || echo "note: iproute2 could not be installed"
fi

bash scripts/bqemulator.sh start
trap 'bash scripts/bqemulator.sh stop' EXIT
# shellcheck disable=SC1091
source target/bqemulator/env
export BQEMU_REST_ENDPOINT BQEMU_GRPC_ENDPOINT BQEMU_PROJECT
# The official Python client, for the emulator's differential tests.
export BIGQ_PYTHON="${BIGQ_PYTHON:-${BIGQ_VENV:-$repo/.venv}/bin/python}"

if [[ ! -d "$repo/../shared/bigquery-recordings" && -z "${BIGQ_RECORDINGS:-}" ]]; then
  echo "note: ../shared/bigquery-recordings is absent: the recording tests will report that they skipped"
fi

cargo test --workspace --all-targets --all-features "$@"
cargo test --workspace --doc --all-features

# The main job of the README runs against bigq-emulator and must print its rows. `cargo test`
# builds examples without copying them to target/debug/examples, so build the quickstart, the
# emulator and the harness with its contenders (same features, so the test build's
# dependencies are reused).
cargo build --workspace --all-features --example quickstart --bin bigq-emulator \
  --bin bench-compare --bin contender-bigq --bin contender-bigquery-rs --bin contender-gcbq \
  --bin write-verify
target_dir="${CARGO_TARGET_DIR:-$repo/target}"
out="$(BIGQ_EMULATOR_BIN="$target_dir/debug/bigq-emulator" BIGQ_QUICKSTART_BIN="$target_dir/debug/examples/quickstart" \
  bash scripts/quickstart.sh)"
echo "$out"
grep -q "^3 rows;" <<<"$out" || { echo "quickstart did not print its 3 rows" >&2; exit 1; }

# bench-compare is not a test (timings here are noise), but one scenario runs once with one
# run per client (bigq, bigq-grpc, bigq-job, Python, the bigquery crate, google-cloud-bigquery)
# so the harness cannot rot. A run a contender reports as unsupported does not fail it; a
# failed run does.
"$target_dir/debug/bench-compare" --smoke --only query_const --python "$BIGQ_PYTHON" \
  --label ci-smoke --out "$target_dir/bench-smoke" >/dev/null
echo "bench-compare smoke run: ok"

# Storage Write at scale: 1M rows of the scan table through every stream type, protobuf and
# Arrow, with the connection cut mid-way where the stream has offsets; every table checked by
# query against figures computed from the rows sent. Exits non-zero if any row is missing or
# doubled (about a minute in a debug build).
"$target_dir/debug/write-verify" --rows 1000000
