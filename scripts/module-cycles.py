#!/usr/bin/env python3
"""Lists pairs of modules that import each other, in the library crates' non-test code.

A module is a file (`a/b.rs` or `a/b/mod.rs` is `a::b`). A module imports another when its
code names a path into it (`use crate::a::b::X`, `super::b::f()`, `self::c::T`, a child's
name). Test modules (`#[cfg(test)] mod ..` and files under `tests/`) are left out.

    scripts/module-cycles.py            # prints the pairs, exits 1 if any is not allowed
    scripts/module-cycles.py --graph    # prints every edge too

The allowed pairs are the recursive serde visitors of bigq-codec's decoder, where a cell's
deserializer hands nested values to the node that reads them and back.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CRATES = ["bigq-codec", "bigq", "bigq-emulator", "bigq-cli"]
ALLOWED = {
    ("bigq-codec", frozenset({"de::access", "de::cell"})),
    ("bigq-codec", frozenset({"de::column", "de::node"})),
}


def modules(src):
    """Maps module path -> file, for every .rs file under src."""
    mods = {}
    for dirpath, _dirs, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)
            parts = rel[:-3].split(os.sep)
            if parts[-1] == "mod":
                parts = parts[:-1]
            if parts in (["lib"], ["main"]):
                parts = []
            mods["::".join(parts)] = os.path.join(dirpath, f)
    return mods


def strip_tests(text):
    """Drops `#[cfg(test)]` items (a `mod` with its braces, or a `mod x;` line) and comments."""
    text = re.sub(r"//[^\n]*", "", text)
    out = []
    i = 0
    pat = re.compile(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*([;{])")
    while True:
        m = pat.search(text, i)
        if not m:
            out.append(text[i:])
            break
        out.append(text[i : m.start()])
        if m.group(3) == ";":
            i = m.end()
            continue
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    return "".join(out)


def inline_modules_as_self(text):
    """In an inline `mod x { .. }`, `super::` is the file's module: written `self::` here."""
    out, i = [], 0
    pat = re.compile(r"\bmod\s+\w+\s*\{")
    while True:
        m = pat.search(text, i)
        if not m:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i : m.end()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        out.append(re.sub(r"\bsuper::", "self::", text[m.end() : j]))
        i = j


def expand_use(tree):
    """Expands `a::{b, c::{d, e}}` into paths."""
    tree = tree.strip()
    m = re.match(r"^(.*?)\{(.*)\}$", tree, re.S)
    if not m:
        return [tree.split(" as ")[0].strip()]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        if p.strip():
            for e in expand_use(p):
                out.append(prefix + e if e != "self" else prefix.rstrip(":"))
    return out


def resolve(mod, path, mods, children):
    """The module a path from `mod` lands in (the longest module prefix), or None."""
    segs = [s for s in path.split("::") if s]
    if not segs:
        return None
    cur = mod.split("::") if mod else []
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    elif segs[0] == "super":
        base = cur[:]
        while segs and segs[0] == "super":
            base = base[:-1]
            segs = segs[1:]
    elif segs[0] == "self":
        base, segs = cur[:], segs[1:]
    elif segs[0] in children.get(mod, ()):
        base = cur[:]
    else:
        return None
    best = "::".join(base) if "::".join(base) in mods else None
    for k in range(1, len(segs) + 1):
        cand = "::".join(base + segs[:k])
        if cand in mods:
            best = cand
        else:
            break
    return best


def edges(src):
    mods = modules(src)
    children = {}
    for m in mods:
        if m:
            parent = "::".join(m.split("::")[:-1])
            children.setdefault(parent, set()).add(m.split("::")[-1])
    out = set()
    for mod, path in mods.items():
        text = inline_modules_as_self(strip_tests(open(path, encoding="utf-8").read()))
        paths = []
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            paths += expand_use(m.group(1))
        paths += re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", text)
        # A child module named by itself (`persist::Store`).
        for child in children.get(mod, ()):
            paths += re.findall(rf"(?<![\w:])({child}(?:::\w+)+)", text)
        for p in paths:
            target = resolve(mod, p, mods, children)
            if target is not None and target != mod:
                out.add((mod, target))
    return out


def main():
    graph = "--graph" in sys.argv
    bad = 0
    for crate in CRATES:
        src = os.path.join(ROOT, "crates", crate, "src")
        es = edges(src)
        if graph:
            for a, b in sorted(es):
                print(f"{crate}: {a or '(root)'} -> {b or '(root)'}")
        seen = set()
        for a, b in sorted(es):
            if (b, a) in es and frozenset({a, b}) not in seen:
                seen.add(frozenset({a, b}))
                ok = (crate, frozenset({a, b})) in ALLOWED
                print(f"{crate}: {a or '(root)'} <-> {b or '(root)'}{' (allowed)' if ok else ''}")
                bad += 0 if ok else 1
    if bad:
        print(f"{bad} pair(s) of modules import each other", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
