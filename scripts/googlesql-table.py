#!/usr/bin/env python3
"""Writes the GoogleSQL function table of crates/bigq-emulator/README.md from a run of the
GoogleSQL cases.

    BIGQ_GOOGLESQL_REPORT=$PWD/target/googlesql.json \\
        cargo test -p bigq-emulator --test integration googlesql
    scripts/googlesql-table.py target/googlesql.json

Each case names its source in the function reference (`string_functions: CONCAT`). Each
function of the reference (tests/googlesql/reference.txt) is *supported* when all its cases
pass, *partial* when some do, *failing* when none does, *refused* when the emulator refuses it
by name (src/sql/functions/unsupported.rs) and has no case, or has *no cases*. The table
replaces what stands between the README's two markers.
"""
import collections
import json
import os
import re
import sys

BEGIN = "<!-- googlesql-functions: begin -->"
END = "<!-- googlesql-functions: end -->"
FUNCTION = re.compile(r"^[A-Z][A-Z0-9_.]*$")


def reference(root):
    """The reference's functions (tests/googlesql/reference.txt): name -> page, in order."""
    ref = collections.OrderedDict()
    for line in open(os.path.join(root, "crates/bigq-emulator/tests/googlesql/reference.txt"), encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        page, _, names = line.partition(": ")
        for name in names.split():
            ref.setdefault(name, page.strip())
    return ref


def refused(root):
    """The functions bigq-emulator refuses by name (src/sql/functions/unsupported.rs)."""
    text = open(os.path.join(root, "crates/bigq-emulator/src/sql/functions/unsupported.rs"), encoding="utf-8").read()
    body = text[text.index("const UNSUPPORTED"):text.index("const UNSUPPORTED_PREFIXES")]
    return set(re.findall(r'"([A-Z][A-Z0-9_.]*)"', body))


def main():
    report = json.load(open(sys.argv[1]))
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    readme = os.path.join(root, "crates/bigq-emulator/README.md")
    ref = reference(root)
    no = refused(root)
    # function -> [page, cases, passes]; every function of the reference, then any other
    # function the cases name.
    functions = collections.OrderedDict((name, [page, 0, 0]) for name, page in ref.items())
    totals = collections.Counter()
    for row in report:
        totals["cases"] += row["cases"]
        totals["pass"] += row["pass"]
        page, _, topic = row["source"].partition(": ")
        page = page.replace("-", "_")
        names = [n.strip() for n in topic.split(",")]
        if not page.endswith(("_functions", "_expressions")) or not all(FUNCTION.match(n) for n in names):
            continue
        for name in names:
            entry = functions.setdefault(name, [page, 0, 0])
            entry[1] += row["cases"]
            entry[2] += row["pass"]
    by_family = collections.OrderedDict()
    for name, (page, n, k) in sorted(functions.items(), key=lambda x: (x[1][0], x[0])):
        family = page.replace("_functions", "").replace("_expressions", "").replace("_", " ")
        by_family.setdefault(family, []).append((name, n, k))
    everything = [f for fns in by_family.values() for f in fns]
    count = lambda pred: sum(1 for f in everything if pred(f))
    lines = [BEGIN, "",
             f"{totals['pass']} of {totals['cases']} GoogleSQL cases pass "
             f"({100 * totals['pass'] / max(totals['cases'], 1):.1f}%). Of the reference's "
             f"{len(ref)} functions, {count(lambda f: f[1] and f[2] == f[1])} pass all their cases, "
             f"{count(lambda f: 0 < f[2] < f[1])} some, {count(lambda f: f[0] in no)} are refused "
             f"by name (`Unsupported by bigq-emulator: ...`), and "
             f"{count(lambda f: not f[1] and f[0] not in no)} have no case here (the geography "
             "functions among them are checked against the shared recordings instead).", "",
             "| family | functions | supported | partial | failing | refused | no cases | cases passing |",
             "|---|---|---|---|---|---|---|---|"]
    detail = []
    for family, fns in by_family.items():
        sup = [f for f, n, k in fns if n and k == n]
        part = [f for f, n, k in fns if 0 < k < n]
        failing = [f for f, n, k in fns if n and k == 0 and f not in no]
        refuse = [f for f, n, k in fns if k == 0 and f in no]
        untested = [f for f, n, k in fns if not n and f not in no]
        n_all = sum(n for _, n, _ in fns)
        k_all = sum(k for _, _, k in fns)
        lines.append(f"| {family} | {len(fns)} | {len(sup)} | {len(part)} | {len(failing)} | "
                     f"{len(refuse)} | {len(untested)} | {k_all}/{n_all} |")
        detail.append(f"- **{family}**: " + ", ".join(
            f"{f} ({'yes' if n and k == n else f'{k}/{n}' if k else 'refused' if f in no else 'no' if n else 'no cases'})"
            for f, n, k in fns))
    lines += ["", "Per function (cases passing; `yes`: all, `no`: none; `refused`: an error that names it):",
              ""] + detail + ["", END]
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
