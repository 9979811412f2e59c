#!/usr/bin/env python3
"""layers.py: the checks that keep the architecture true (docs/architecture.md).

  layers.py graph SOURCE_DIR OBJECT_LIST   the runtime's file graph has no cycle
  layers.py cli SOURCE_DIR                 cli/ includes no runtime-internal header
  layers.py exports LIBKERN_SO KERN_H      libkern.so exports kern.h's functions, nothing else

graph: the nodes are the files under runtime/; an edge is an #include of
another of them, or a call (any symbol reference) from one .c file into
another, read from the objects' symbol tables (OBJECT_LIST names one object
per line; `nm -P`). A cycle of more than one file fails, except the pairs in
ALLOWED_PAIRS, each explained in runtime/core.h. It also fails when a
backend (runtime/cpu/, runtime/cuda/) includes core.h or a core file other
than init.c includes a backend's header: the core reaches the backends only
through their ops tables.

exports: every name libkern.so exports starts with kern_, and every function
kern.h declares is marked KERN_API and exported.

Exit status 0 when the check holds, 1 with one line per finding otherwise.
"""
import os
import re
import subprocess
import sys

# The two pairs of files that call each other (runtime/core.h says why):
# a free during a capture waits in the recorder, which finishes it later;
# the CUDA backend and its stream capture share a device's context and streams.
ALLOWED_PAIRS = {
    frozenset({"runtime/storage.c", "runtime/capture.c"}),
    frozenset({"runtime/cuda/cuda_backend.c", "runtime/cuda/cuda_capture.c"}),
}
INCLUDE_DIRS = ["runtime", "support", "frontend", "codegen", "stdlib", "include"]
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def runtime_files(src):
    out = []
    for root, _, files in os.walk(os.path.join(src, "runtime")):
        for f in files:
            if f.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(root, f), src))
    return sorted(out)


def resolve_include(src, frm, name):
    for d in [os.path.dirname(frm)] + INCLUDE_DIRS:
        cand = os.path.normpath(os.path.join(d, name))
        if os.path.isfile(os.path.join(src, cand)):
            return cand
    return None


def include_edges(src, files):
    edges = {f: set() for f in files}
    for f in files:
        with open(os.path.join(src, f), encoding="utf-8") as fh:
            for name in INCLUDE_RE.findall(fh.read()):
                target = resolve_include(src, f, name)
                if target in edges and target != f:
                    edges[f].add(target)
    return edges


def symbols(obj):
    """(defined, undefined) global symbols of an object file."""
    out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            undefined.add(name)
        elif kind.isupper():
            defined.add(name)
    return defined, undefined


def source_of(obj, src):
    """runtime/x.c for .../kern_obj.dir/runtime/x.c.o, else None."""
    m = re.search(r"kern_obj\.dir/(.+)\.o$", obj.replace(os.sep, "/"))
    if not m:
        return None
    rel = m.group(1)
    return rel if rel.startswith("runtime/") and os.path.isfile(os.path.join(src, rel)) else None


def call_edges(src, objects):
    owner, needs = {}, {}
    for obj in objects:
        f = source_of(obj, src)
        if not f:
            continue
        defined, undefined = symbols(obj)
        for s in defined:
            owner[s] = f
        needs[f] = undefined
    edges = {}
    for f, undefined in needs.items():
        edges[f] = {owner[s] for s in undefined if s in owner and owner[s] != f}
    return edges


def strongly_connected(nodes, edges):
    """Tarjan's algorithm, iterative; returns the components."""
    index, low, on, stack, comps, counter = {}, {}, set(), [], [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def is_backend(f):
    return f.startswith(("runtime/cpu/", "runtime/cuda/"))


def check_graph(src, object_list):
    with open(object_list, encoding="utf-8") as fh:
        objects = [line.strip() for line in fh if line.strip()]
    files = runtime_files(src)
    edges = include_edges(src, files)
    calls = call_edges(src, objects)
    if not calls:
        return ["no runtime objects found in %s" % object_list]
    for f, targets in calls.items():
        edges.setdefault(f, set()).update(targets)
    bad = []
    for comp in strongly_connected(files, edges):
        if len(comp) > 2 or (len(comp) == 2 and frozenset(comp) not in ALLOWED_PAIRS):
            bad.append("cycle between %s" % ", ".join(comp))
    for f in files:
        for t in sorted(edges.get(f, ())):
            if is_backend(f) and t == "runtime/core.h":
                bad.append("%s includes core.h: a backend sees only backend.h" % f)
            if not is_backend(f) and is_backend(t) and f not in ("runtime/init.c",):
                bad.append("%s reaches %s: the core reaches backends through their ops" % (f, t))
    return bad


def check_cli(src):
    internal = {os.path.basename(f) for f in runtime_files(src) if f.endswith(".h")}
    bad = []
    cli = os.path.join(src, "cli")
    for name in sorted(os.listdir(cli)):
        if not name.endswith((".c", ".h")):
            continue
        with open(os.path.join(cli, name), encoding="utf-8") as fh:
            for inc in INCLUDE_RE.findall(fh.read()):
                if os.path.basename(inc) in internal:
                    bad.append("cli/%s includes the runtime's %s" % (name, inc))
    return bad


# A function declaration of kern.h: a line that starts with its type.
DECL_RE = re.compile(r"^(KERN_API\s+)?(?!static|typedef|enum|extern|#)[a-z_][\w \*]*?\b(kern_\w+)\(")


def check_exports(lib, header):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    names = {line.split()[-1] for line in out.splitlines() if len(line.split()) >= 3}
    so = os.path.basename(lib)
    bad = ["%s exports %s" % (so, n) for n in sorted(names) if not n.startswith("kern_")]
    with open(header, encoding="utf-8") as fh:
        for line in fh:
            m = DECL_RE.match(line)
            if not m:
                continue
            if not m.group(1):
                bad.append("kern.h declares %s without KERN_API" % m.group(2))
            elif m.group(2) not in names:
                bad.append("%s does not export %s, which kern.h declares" % (so, m.group(2)))
    return bad


def main(argv):
    if len(argv) == 4 and argv[1] == "graph":
        bad = check_graph(argv[2], argv[3])
    elif len(argv) == 3 and argv[1] == "cli":
        bad = check_cli(argv[2])
    elif len(argv) == 4 and argv[1] == "exports":
        bad = check_exports(argv[2], argv[3])
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    for line in bad:
        print("layers.py: " + line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
