#!/usr/bin/env python3
"""Checks the form of bigq-emulator's GoogleSQL case files (crates/bigq-emulator/tests/googlesql/*.jsonl).

Each non-empty line that does not start with `//` is one JSON case (see
crates/bigq-emulator/tests/integration/googlesql.rs for what each key means). This only checks
the form (keys, types, unique names); the test runs the cases.

    scripts/check-googlesql-cases.py [FILE ...]
"""
import glob
import json
import os
import sys

KEYS = {"name", "sql", "setup", "params", "schema", "rows", "ordered", "error", "xfail", "source"}
TYPES = {"INT64", "INTEGER", "FLOAT64", "FLOAT", "NUMERIC", "BIGNUMERIC", "DECIMAL", "BIGDECIMAL",
         "BOOL", "BOOLEAN", "STRING", "BYTES", "DATE", "DATETIME", "TIME", "TIMESTAMP", "INTERVAL",
         "JSON", "GEOGRAPHY", "RANGE", "RECORD", "STRUCT"}


def check_field(f, where):
    assert isinstance(f, dict) and set(f) <= {"name", "type", "mode", "fields"}, f"{where}: bad field {f}"
    assert f.get("type", "").upper() in TYPES, f"{where}: unknown type {f.get('type')}"
    assert f.get("mode", "NULLABLE").upper() in {"NULLABLE", "REQUIRED", "REPEATED"}, where
    for sub in f.get("fields", []):
        check_field(sub, where)


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(root, "crates/bigq-emulator/tests/googlesql/*.jsonl")))
    total = bad = 0
    for path in files:
        names = set()
        for i, line in enumerate(open(path, encoding="utf-8"), 1):
            if not line.strip() or line.lstrip().startswith("//"):
                continue
            where = f"{path}:{i}"
            try:
                c = json.loads(line)
                assert isinstance(c, dict), "not an object"
                assert set(c) <= KEYS, f"unknown keys {set(c) - KEYS}"
                assert isinstance(c.get("name"), str) and c["name"], "no name"
                assert c["name"] not in names, f"duplicate name {c['name']}"
                names.add(c["name"])
                assert isinstance(c.get("sql"), str) and c["sql"].strip(), "no sql"
                assert ("rows" in c) != ("error" in c), "exactly one of rows and error"
                if "rows" in c:
                    assert isinstance(c["rows"], list) and all(isinstance(r, list) for r in c["rows"]), "rows must be a list of lists"
                    if "schema" in c:
                        assert all(len(r) == len(c["schema"]) for r in c["rows"]), "a row's length differs from the schema's"
                if "schema" in c:
                    for f in c["schema"]:
                        check_field(f, where)
                if "error" in c:
                    assert isinstance(c["error"], dict) and set(c["error"]) <= {"reason", "message"}, "error: {reason, message}"
                for k in ("setup",):
                    assert isinstance(c.get(k, []), list), f"{k} must be a list"
                total += 1
            except (AssertionError, json.JSONDecodeError) as e:
                print(f"{where}: {e}")
                bad += 1
    print(f"{total} cases, {bad} malformed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
