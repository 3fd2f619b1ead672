#!/usr/bin/env python3
"""Generates crates/bigq-emulator/src/rest/fields.rs: the JSON field names and value kinds of
the REST request bodies BigQuery v2 takes (QueryRequest, Job, Table, Dataset, Routine and the messages
they reach), read from the prost code gcloud-sdk generates from googleapis' v2 protos.

    python3 scripts/gen_rest_fields.py > crates/bigq-emulator/src/rest/fields.rs
"""
import glob, os, re, sys

ROOTS = ["QueryRequest", "Job", "Table", "Dataset", "Routine"]

# Fields the REST resources have and the protos do not (deprecated REST-only fields).
EXTRAS = {"QueryRequest": [("preserveNulls", "preserve_nulls", "Bool", False)]}

src_path = sorted(glob.glob(os.path.expanduser(
    "~/.cargo/registry/src/*/gcloud-sdk-*/genproto/google.cloud.bigquery.v2.rs")))[-1]
src = open(src_path).read()

# Walk the file keeping the module path; collect `pub struct X { ... }` bodies.
structs = {}   # full path (mod::Name) -> body
enums = set()
lines = src.split("\n")
depth = 0
mods = []  # (name, depth at open)
buf = None
for line in lines:
    s = line.strip()
    m = re.match(r"pub mod (\w+) \{$", s)
    if m:
        mods.append((m.group(1), depth))
        depth += 1
        continue
    if buf is not None:
        if s == "}" and line.startswith(" " * cur_indent + "}"):
            structs["::".join([x for x, _ in mods] + [cur_name])] = "\n".join(buf) + "\n"
            buf = None
            depth -= 1
            continue
        buf.append(line)
        continue
    m = re.match(r"pub struct (\w+) \{$", s)
    if m:
        cur_name = m.group(1)
        cur_indent = len(line) - len(line.lstrip())
        buf = []
        depth += 1
        continue
    m = re.match(r"pub enum (\w+) \{$", s)
    if m:
        enums.add("::".join([x for x, _ in mods] + [m.group(1)]))
    opens = s.count("{") - s.count("}")
    if s == "}" and mods and depth - 1 == mods[-1][1]:
        mods.pop()
        depth -= 1
        continue
    depth += opens

def camel(n):
    n = n[2:] if n.startswith("r#") else n
    p = n.split("_")
    return p[0] + "".join(x[:1].upper() + x[1:] for x in p[1:])

def resolve(ty, scope):
    """The struct a type path names, looked up from module `scope` outwards."""
    ty = ty.replace("super::", "")
    parts = scope.split("::") if scope else []
    while True:
        cand = "::".join(parts + [ty]) if parts else ty
        if cand in structs:
            return cand
        if not parts:
            return None
        parts.pop()

def fields(path):
    body = structs[path]
    scope = "::".join(path.split("::")[:-1])
    out = []
    for m in re.finditer(r"#\[prost\((.*?)\)\]\s*pub (?:r#)?(\w+): (.*?),\n", body, re.S):
        attr, name, ty = m.group(1), m.group(2), m.group(3).strip()
        oneof = attr.startswith("oneof")
        if oneof:
            # a oneof: its variants are fields of their own, in the enum named by the type
            continue
        repeated = "repeated" in attr
        kind = None
        if attr.startswith("map"):
            kind = "Map"
        elif attr.startswith("message"):
            inner = re.sub(r"^(::core::option::Option|::prost::alloc::vec::Vec)<(.*)>$", r"\2", ty)
            inner = inner.replace("::prost::alloc::boxed::Box<", "").rstrip(">") if "Box<" in inner else inner
            if inner in ("i64", "u64", "i32", "u32"):
                kind = "Int"
            elif inner in ("bool",):
                kind = "Bool"
            elif inner in ("f64", "f32"):
                kind = "Double"
            elif inner.endswith("String"):
                kind = "Str"
            elif inner.startswith("::prost_types::") or inner.startswith("super::super::super::protobuf") or "prost_types" in inner:
                kind = "Any"
            else:
                r = resolve(inner, scope)
                kind = ("Msg", r) if r else "Any"
        elif attr.startswith("enumeration"):
            kind = "Enum"
        elif attr.startswith("string"):
            kind = "Str"
        elif attr.startswith("bool"):
            kind = "Bool"
        elif attr.startswith(("int64", "uint64", "int32", "uint32", "sint", "fixed", "sfixed")):
            kind = "Int"
        elif attr.startswith(("double", "float")):
            kind = "Double"
        elif attr.startswith("bytes"):
            kind = "Str"
        else:
            kind = "Any"
        out.append((camel(name), name.replace("r#", ""), kind, repeated))
    return out

# Oneofs are rare in the REST bodies (QueryRequest's results format options); their enum
# variants are read from the enum bodies.
def oneof_fields(path):
    body = structs[path]
    scope = "::".join(path.split("::")[:-1])
    out = []
    for m in re.finditer(r'#\[prost\(oneof = "([\w:]+)"', body):
        ename = m.group(1).split("::")[-1]
        mod = "::".join(m.group(1).split("::")[:-1])
        full = "::".join([p for p in [scope, mod] if p])
        em = re.search(r"pub enum %s \{(.*?)\n\s*\}" % ename, src[src.find("pub mod " + mod.split("::")[-1] + " {"):], re.S) if mod else None
        if not em:
            continue
        for v in re.finditer(r"#\[prost\((\w+)[^\]]*\)\]\s*(\w+)\(([^)]*)\)", em.group(1)):
            vname = re.sub(r"(?<!^)([A-Z])", r"_\1", v.group(2)).lower()
            ty = v.group(3).strip()
            if v.group(1) == "message":
                r = resolve(ty, full)
                kind = ("Msg", r) if r else "Any"
            else:
                kind = {"string": "Str", "bool": "Bool"}.get(v.group(1), "Any")
            out.append((camel(vname), vname, kind, False))
    return out

seen, order = set(), []
def visit(path):
    if path in seen:
        return
    seen.add(path)
    order.append(path)
    for f in fields(path) + oneof_fields(path):
        if isinstance(f[2], tuple):
            visit(f[2][1])

for r in ROOTS:
    visit(r)

def const(path):
    return re.sub(r"(?<!^)(?<!_)([A-Z])", r"_\1", path.replace("::", "__")).upper()

print("//! The JSON fields of BigQuery v2's REST request bodies, generated by")
print("//! `scripts/gen_rest_fields.py` from the prost code gcloud-sdk builds from googleapis'")
print("//! `google/cloud/bigquery/v2` protos (the REST resources are those messages' JSON")
print("//! mapping). Do not edit by hand: run the script again when gcloud-sdk moves.")
print()
print("use super::check::{Field, Kind::*, Message};")
print()
for p in order:
    fs = fields(p) + oneof_fields(p) + EXTRAS.get(p, [])
    print("pub(super) static %s: Message = Message {" % const(p))
    print('    name: "%s",' % p.split("::")[-1])
    print("    fields: &[")
    for json, proto, kind, rep in fs:
        k = "Msg(&%s)" % const(kind[1]) if isinstance(kind, tuple) else kind
        print('        Field::new("%s", "%s", %s, %s),' % (json, proto, k, "true" if rep else "false"))
    print("    ],")
    print("};")
    print()
