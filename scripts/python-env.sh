#!/usr/bin/env bash
# Create/refresh the Python venv used by integration tests and CI.
#
#   scripts/python-env.sh            # idempotent; quiet on success
#
# - venv at $BIGQ_VENV (default: <repo>/.venv), built with $BIGQ_PYTHON
#   (default: python3.11, else python3; must be >= 3.11 for bqemulator).
# - installs scripts/requirements-test.txt (all versions pinned).
# - copies the DuckDB spatial/avro extensions shipped by the
#   duckdb-extension-* wheels into ~/.duckdb/extensions/<ver>/<platform>/,
#   because bqemulator runs `INSTALL spatial; INSTALL avro` at boot and this
#   machine cannot reach DuckDB's extension repository.
# - skips pip when $BIGQ_VENV/.bigq-requirements.sha256 matches the hash of
#   the requirements file.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
req="$repo/scripts/requirements-test.txt"
venv="${BIGQ_VENV:-$repo/.venv}"
stamp="$venv/.bigq-requirements.sha256"
py="$venv/bin/python"

die() { echo "python-env.sh: $*" >&2; exit 1; }

[[ -f "$req" ]] || die "missing $req"
want_hash="$(sha256sum "$req" | cut -d' ' -f1)"

# 1. venv
if [[ ! -x "$py" ]] || ! "$py" -c 'import sys' >/dev/null 2>&1; then
  base="${BIGQ_PYTHON:-}"
  if [[ -z "$base" ]]; then
    if command -v python3.11 >/dev/null 2>&1; then base=python3.11; else base=python3; fi
  fi
  command -v "$base" >/dev/null 2>&1 || die "no Python interpreter '$base' found"
  "$base" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || die "$base is older than 3.11 (bqemulator needs >= 3.11)"
  rm -rf "$venv"
  "$base" -m venv "$venv" || die "could not create venv at $venv"
  rm -f "$stamp"
fi

# 2. packages (skipped when the stamp matches the requirements hash)
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want_hash" ]]; then
  log="$(mktemp)"
  trap 'rm -f "$log"' EXIT
  if ! "$py" -m pip install --disable-pip-version-check --no-input -q -r "$req" >"$log" 2>&1; then
    cat "$log" >&2
    die "pip install -r $req failed"
  fi
  echo "$want_hash" >"$stamp"
fi

# 3. DuckDB extensions (cheap; always verified so a wiped $HOME is repaired)
"$py" - <<'PY' || die "could not install DuckDB extensions"
import filecmp, os, shutil, sys
import duckdb
import duckdb_extension_avro, duckdb_extension_spatial

ver = "v" + duckdb.__version__
plat = duckdb.sql("PRAGMA platform").fetchone()[0]
dest = os.path.join(os.path.expanduser("~"), ".duckdb", "extensions", ver, plat)
os.makedirs(dest, exist_ok=True)
for mod, name in ((duckdb_extension_spatial, "spatial"), (duckdb_extension_avro, "avro")):
    src = os.path.join(os.path.dirname(mod.__file__), "extensions", ver, f"{name}.duckdb_extension")
    if not os.path.isfile(src):
        sys.exit(f"{src} not found (duckdb {duckdb.__version__} vs {mod.__name__} mismatch?)")
    dst = os.path.join(dest, f"{name}.duckdb_extension")
    if not (os.path.isfile(dst) and filecmp.cmp(src, dst, shallow=False)):
        tmp = dst + ".tmp"
        shutil.copyfile(src, tmp)
        os.replace(tmp, dst)
PY
