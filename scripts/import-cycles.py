#!/usr/bin/env python3
"""Measure the file-level import graph of one crate's `src` directory.

Usage: python3 scripts/import-cycles.py crates/rocklake-sql/src [--show N]

Read-only; standard library only; deterministic. It prints the number of .rs
files and of edges, the size of the largest strongly connected component
(SCC, i.e. an import cycle) and how many SCCs have more than one file, the
members of the N largest SCCs, and the SCCs of the same graph collapsed to
top-level modules (`bind/expr.rs` -> `bind`, `ident.rs` -> `ident`).

Files map to module paths by location: `lib.rs` is `crate`, `a/mod.rs` and
`a.rs` are `crate::a`, `a/b.rs` is `crate::a::b` (with either `a/mod.rs` or
a 2018-style `a.rs` beside the folder). `#[path]` attributes are not read.

Edges come from comment- and string-stripped source with `#[cfg(test)] mod
NAME { ... }` blocks removed: every `use` declaration (nested `{...}` groups,
`self`, globs and `as` renames included) and every inline path in code. A path
is resolved when it starts with `crate`/`$crate` (the crate root), `super`
(the parent of the file's module; for `a/mod.rs` that is the parent of
`crate::a`), `self` (the file's module), the name of a child module
(`use memory::X` in `exec/mod.rs`), or a name a `use` bound to a module
(`use crate::exec; exec::eval::f()`). Anything else (`std::`, `sqlparser::`,
other `rocklake_*` crates, local items) is ignored. A resolved path points at
the longest prefix that is a module file, so `crate::Foo` (an item or
re-export in lib.rs) points at lib.rs. An edge goes from the file to that
file; self-edges are dropped. SCCs use an iterative Tarjan's algorithm.
"""
import argparse
import os
import re
from collections import defaultdict

IDENT = re.compile(r"[A-Za-z_]\w*")
RAW_STR = re.compile(r'b?r(#*)"')
CHAR_LIT = re.compile(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'")
CFG_TEST_MOD = re.compile(
    r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{")
USE_DECL = re.compile(r"(?<![\w$])use\s+([^;]*);")
# An inline path: a leading segment, then at least one `::ident`.
INLINE_PATH = re.compile(r"(?<![\w:.])(\$?[A-Za-z_]\w*)((?:\s*::\s*[A-Za-z_]\w*)+)")


def strip_source(text):
    """Blank out comments and string/char literal contents, keeping newlines."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        prev_ident = i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):  # block comments nest in Rust
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    out.append("\n" if text[i] == "\n" else "")
                    i += 1
        elif c in "br" and not prev_ident and RAW_STR.match(text, i):
            m = RAW_STR.match(text, i)
            end = text.find('"' + m.group(1), m.end())
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and CHAR_LIT.match(text, i):
            out.append("' '")
            i = CHAR_LIT.match(text, i).end()
        else:  # lifetimes ('a) fall through here as plain text
            out.append(c)
            i += 1
    return "".join(out)


def drop_test_modules(text):
    """Remove every `#[cfg(test)] mod NAME { ... }` block (brace-balanced)."""
    while True:
        m = CFG_TEST_MOD.search(text)
        if not m:
            return text
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        text = text[:m.start()] + "\n" * text.count("\n", m.start(), j) + text[j:]


def use_paths(tree):
    """Expand a use tree (`crate::{a::{b, c as d}, e::*}`) into
    (segments, alias) pairs; `self` in a group names the group's prefix."""
    tokens = ["{"] + re.findall(r"\$?[A-Za-z_]\w*|[{},*]", tree) + ["}"]
    pos = 0

    def parse(prefix):  # one tree under `prefix`; stops before `,` or `}`
        nonlocal pos
        path, alias = list(prefix), None
        while pos < len(tokens) and tokens[pos] not in (",", "}"):
            t = tokens[pos]
            pos += 1
            if t == "{":  # a group: parse each member under the path so far
                found = []
                while pos < len(tokens) and tokens[pos] != "}":
                    if tokens[pos] == ",":
                        pos += 1
                    else:
                        found += parse(path)
                pos += 1
                return found
            if t == "as":
                alias, pos = tokens[pos] if pos < len(tokens) else None, pos + 1
            elif t != "*" and not (t == "self" and path):
                path.append(t)
        return [(path, alias)]

    return parse([])


def module_of(rel):
    """`a/b.rs` -> ('a', 'b'); `a/mod.rs` and `a.rs` -> ('a',); `lib.rs` -> ()."""
    parts = rel[:-3].split("/")
    if parts[-1] == "mod" or (len(parts) == 1 and parts[0] == "lib"):
        parts = parts[:-1]
    return tuple(parts)


def build_graph(src):
    files = sorted(os.path.relpath(os.path.join(d, f), src).replace(os.sep, "/")
                   for d, _, fs in os.walk(src) for f in fs if f.endswith(".rs"))
    file_of = {module_of(f): f for f in files}
    children = defaultdict(set)
    for mod in file_of:
        if mod:
            children[mod[:-1]].add(mod[-1])
    edges = {f: set() for f in files}
    for f in files:
        me = module_of(f)
        with open(os.path.join(src, f), encoding="utf-8") as fh:
            text = drop_test_modules(strip_source(fh.read()))
        bound = {name: me + (name,) for name in children[me]}

        def resolve(segs):
            """Segments -> (module it names or points into, exact?) or None."""
            head, rest = segs[0], list(segs[1:])
            if head in ("crate", "$crate"):
                base = ()
            elif head in ("super", "self"):
                base = me[:-1] if head == "super" else me
                while rest and rest[0] == "super":
                    base, rest = base[:-1], rest[1:]
            elif head in bound:
                base = bound[head]
            else:
                return None  # another crate, or a local item
            full = base + tuple(rest)
            for k in range(len(full), -1, -1):  # longest existing prefix
                if full[:k] in file_of:
                    return full[:k], k == len(full)
            return None

        targets = []
        for m in USE_DECL.finditer(text):
            for segs, alias in use_paths(m.group(1)):
                hit = segs and resolve(segs)
                if hit:
                    targets.append(file_of[hit[0]])
                    if hit[1] and segs[-1] not in ("crate", "super", "self"):
                        bound[alias or segs[-1]] = hit[0]  # `use crate::exec;`
        code = USE_DECL.sub(lambda m: "\n" * m.group(0).count("\n"), text)
        for m in INLINE_PATH.finditer(code):
            hit = resolve([m.group(1)] + IDENT.findall(m.group(2)))
            if hit:
                targets.append(file_of[hit[0]])
        edges[f] = {t for t in targets if t != f}
    return files, edges


def tarjan(nodes, edges):
    """Iterative Tarjan: the SCCs of `edges` (a dict node -> set of nodes)."""
    index, low, on_stack, stack, sccs = {}, {}, set(), [], []

    def visit(v, work):  # number v and schedule its successors
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        work.append((v, iter(sorted(edges[v]))))

    for root in nodes:
        if root in index:
            continue
        work = []
        visit(root, work)
        while work:
            node, it = work[-1]
            for nxt in it:
                if nxt not in index:  # descend; resume `it` afterwards
                    visit(nxt, work)
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:  # successors done: pop, propagate low, maybe emit an SCC
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    scc = []
                    while not scc or scc[-1] != node:
                        scc.append(stack.pop())
                        on_stack.discard(scc[-1])
                    sccs.append(sorted(scc))
    return sorted(sccs, key=lambda s: (-len(s), s))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", help="a crate's src directory")
    ap.add_argument("--show", type=int, default=3, help="how many SCCs to list")
    args = ap.parse_args()
    files, edges = build_graph(args.src)
    sccs = tarjan(files, edges)
    cycles = [s for s in sccs if len(s) > 1]
    print(f"src: {args.src}")
    print(f".rs files: {len(files)}")
    print(f"edges: {sum(len(t) for t in edges.values())}")
    print(f"largest SCC: {len(sccs[0]) if sccs else 0} files")
    print(f"SCCs with more than one file: {len(cycles)}")
    for i, scc in enumerate(cycles[:args.show], 1):
        print(f"SCC #{i} ({len(scc)} files):")
        for f in scc:
            print(f"  {f}")
    # Collapse files to their top-level module and repeat.
    top = {f: f.split("/")[0].removesuffix(".rs") for f in files}
    mods = sorted(set(top.values()))
    medges = {m: set() for m in mods}
    for f, ts in edges.items():
        medges[top[f]].update(top[t] for t in ts if top[t] != top[f])
    mcycles = [s for s in tarjan(mods, medges) if len(s) > 1]
    print(f"top-level modules: {len(mods)}, "
          f"module edges: {sum(len(t) for t in medges.values())}")
    print(f"module-level SCCs with more than one module: {len(mcycles)}")
    for scc in mcycles:
        print(f"  ({len(scc)}) {', '.join(scc)}")


if __name__ == "__main__":
    main()
