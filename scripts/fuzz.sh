#!/usr/bin/env bash
# Runs every fuzz target for a bounded time: `scripts/fuzz.sh [seconds per target]`
# (default 60). Needs the nightly toolchain and cargo-fuzz (installed if missing). The REST
# decoder's corpus is seeded with the response bodies recorded from BigQuery in
# ../shared/bigquery-recordings (read from there, never copied into the repository); a
# crash leaves its input in fuzz/artifacts/<target>/ and fails the run.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
seconds="${1:-60}"
recordings="${BIGQ_RECORDINGS:-$repo/../shared/bigquery-recordings}"

if ! command -v cargo-fuzz >/dev/null; then
  cargo install cargo-fuzz --locked
fi

corpus="$repo/fuzz/corpus"
mkdir -p "$corpus/rest_rows" "$corpus/ipc_read" "$corpus/arrow_serde" "$corpus/proto_rows" "$corpus/struct_rows"
if [[ -d "$recordings" ]]; then
  # Each recorded JSON response is a seed, named by its content's hash.
  while IFS= read -r -d '' f; do
    cp "$f" "$corpus/rest_rows/$(sha1sum "$f" | cut -c1-16)"
  done < <(find "$recordings/http" "$recordings/sql" -name '*.json' -print0)
else
  echo "note: $recordings is absent: the REST decoder starts from an empty corpus"
fi

for target in rest_rows ipc_read arrow_serde proto_rows struct_rows; do
  echo "fuzzing $target for ${seconds}s"
  cargo +nightly fuzz run --fuzz-dir fuzz "$target" "$corpus/$target" -- \
    -max_total_time="$seconds" -rss_limit_mb=4096 -print_final_stats=1 2>&1 |
    grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==|SUMMARY|thread .* panicked)' || true
  # cargo fuzz exits non-zero on a crash; the pipe above hides it, so check the artifacts.
  for kind in crash leak oom timeout; do
    if compgen -G "fuzz/artifacts/$target/$kind-*" >/dev/null; then
      echo "fuzz target $target found a $kind: see fuzz/artifacts/$target/" >&2
      exit 1
    fi
  done
done
