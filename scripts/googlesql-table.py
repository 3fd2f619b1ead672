#!/usr/bin/env python3
"""Writes the GoogleSQL function table of crates/bigq-emulator/README.md from a run of the
GoogleSQL cases.

    BIGQ_GOOGLESQL_REPORT=target/googlesql.json \\
        cargo test -p bigq-emulator --test integration googlesql
    scripts/googlesql-table.py target/googlesql.json

Each case names its source in the function reference (`string_functions: CONCAT`). A
function is *supported* when all its cases pass, *partial* when some do, *not supported*
when none does. The table replaces what stands between the README's two markers.
"""
import collections
import json
import os
import re
import sys

BEGIN = "<!-- googlesql-functions: begin -->"
END = "<!-- googlesql-functions: end -->"
FUNCTION = re.compile(r"^[A-Z][A-Z0-9_.]*$")


def main():
    report = json.load(open(sys.argv[1]))
    readme = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates/bigq-emulator/README.md")
    # function -> (page, cases, passes)
    functions = collections.OrderedDict()
    totals = collections.Counter()
    for row in report:
        totals["cases"] += row["cases"]
        totals["pass"] += row["pass"]
        page, _, topic = row["source"].partition(": ")
        names = [n.strip() for n in topic.split(",")]
        if not page.endswith(("_functions", "_expressions")) or not all(FUNCTION.match(n) for n in names):
            continue
        for name in names:
            p, n, k = functions.get(name, (page, 0, 0))
            functions[name] = (p, n + row["cases"], k + row["pass"])
    by_family = collections.OrderedDict()
    for name, (page, n, k) in sorted(functions.items(), key=lambda x: (x[1][0], x[0])):
        family = page.replace("_functions", "").replace("_expressions", "").replace("_", " ")
        by_family.setdefault(family, []).append((name, n, k))
    lines = [BEGIN, "",
             f"{totals['pass']} of {totals['cases']} GoogleSQL cases pass "
             f"({100 * totals['pass'] / max(totals['cases'], 1):.1f}%).", "",
             "| family | supported | partial | not supported | cases passing |", "|---|---|---|---|---|"]
    detail = []
    for family, fns in by_family.items():
        sup = [f for f, n, k in fns if k == n]
        part = [f for f, n, k in fns if 0 < k < n]
        none = [f for f, n, k in fns if k == 0]
        n_all = sum(n for _, n, _ in fns)
        k_all = sum(k for _, _, k in fns)
        lines.append(f"| {family} | {len(sup)} | {len(part)} | {len(none)} | {k_all}/{n_all} |")
        detail.append(f"- **{family}**: " + ", ".join(
            f"{f} ({'yes' if k == n else f'{k}/{n}' if k else 'no'})" for f, n, k in fns))
    lines += ["", "Per function (cases passing; `yes`: all, `no`: none):", ""] + detail + ["", END]
    text = open(readme, encoding="utf-8").read()
    block = "\n".join(lines)
    if BEGIN in text:
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n## GoogleSQL functions\n\n" + block + "\n"
    open(readme, "w", encoding="utf-8").write(text)
    print(f"{len(functions)} functions in {len(by_family)} families")


if __name__ == "__main__":
    main()
