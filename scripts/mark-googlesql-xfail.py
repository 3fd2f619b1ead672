#!/usr/bin/env python3
"""Marks the GoogleSQL cases that fail as `xfail`, and unmarks those that pass, from the
googlesql test's output.

    cargo test -p bigq-emulator --test integration googlesql 2>&1 | scripts/mark-googlesql-xfail.py

Reads the test's failure lines (`family/name: why`) on stdin: a failing case gets
`"xfail": why`; a case the test reports as passing while marked gets its mark removed.
Cases not mentioned are left as they are.
"""
import json
import os
import re
import sys

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates/bigq-emulator/tests/googlesql")
fails, fixed = {}, set()
for line in sys.stdin:
    m = re.match(r"^([a-z_0-9]+)/([A-Za-z0-9_]+): (.*)$", line.rstrip("\n"))
    if not m:
        continue
    family, name, why = m.groups()
    if why.startswith("passes now, but is marked xfail"):
        fixed.add((family, name))
    else:
        fails[(family, name)] = re.sub(r"\s+", " ", why)[:120]
changed = 0
for file in sorted(os.listdir(root)):
    if not file.endswith(".jsonl"):
        continue
    family = file[:-6]
    path = os.path.join(root, file)
    out = []
    for line in open(path, encoding="utf-8"):
        if line.strip().startswith("{"):
            case = json.loads(line)
            key = (family, case["name"])
            if key in fails:
                case["xfail"] = fails[key]
                changed += 1
            elif key in fixed:
                case.pop("xfail", None)
                changed += 1
            line = json.dumps(case, ensure_ascii=False) + "\n"
        out.append(line)
    open(path, "w", encoding="utf-8").write("".join(out))
print(f"{len(fails)} failing, {len(fixed)} fixed, {changed} cases changed")
