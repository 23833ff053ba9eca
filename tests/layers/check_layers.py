#!/usr/bin/env python3
"""The layers of kprop's sources, checked from their #include lines (docs/design.md §1).

Each folder below may include itself and the folders before it, never one after it; and no
two files include each other, directly or around a circle (a file and its header count as
one: a.cpp's includes are a.h's). A line of the output names each include that runs back
up and each circle; exit 1 when there is one, 0 when there is none.

    tests/layers/check_layers.py [ROOT]      (default: this repository)
"""
import os
import re
import sys

# Bottom to top. The kernels are plug-ins of the harness: they may use all of it, and
# nothing of the harness names one.
LAYERS = [
    "core",                    # errors, random numbers, the registry: what every layer uses
    "generators",              # cases, schemas, choices, shrinking
    "harness/model",           # what a kernel, a case, a tolerance and a verdict are
    "harness/storage",         # their files: case files, fingerprints, verdict JSON
    "harness/execution",       # calling an implementation: dispatch, devices, isolation
    "harness/spec",            # a kernel declared as data
    "harness/engine",          # properties, the search, shrinking, triage, the corpus run
    "harness/presentation",    # reports and tables
    "harness/fuzz",            # libFuzzer targets
    "harness/nightly",         # the nightly run
    "harness/api",             # the engine's facade: entries, run options and sessions
    "harness/cli",             # the command line
    "kernels",
    "python",
]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    """The index of the deepest layer folder holding `path`, or None."""
    best = None
    for i, folder in enumerate(LAYERS):
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(LAYERS[best]):
                best = i
    return best


def sources(root):
    for folder in LAYERS:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if name.endswith((".h", ".cpp")):
                    path = os.path.relpath(os.path.join(dirpath, name), root)
                    yield path.replace(os.sep, "/")


def unit(path):
    return path.rsplit(".", 1)[0]


def circles(edges):
    """Every strongly connected set of more than one unit (Tarjan), sorted."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def check(root):
    problems, edges, files = [], {}, 0
    for path in sources(root):
        files += 1
        here = layer_of(path)
        with open(os.path.join(root, path), encoding="utf-8") as f:
            text = f.read()
        for lineno, target in ((text.count("\n", 0, m.start()) + 1, m.group(1))
                               for m in INCLUDE.finditer(text)):
            there = layer_of(target)
            if there is None:
                continue  # a third-party header, or a test's
            if there > here:
                problems.append(f"{path}:{lineno}: includes {target}: {LAYERS[there]} lies "
                                f"above {LAYERS[here]}")
            if unit(target) != unit(path):
                edges.setdefault(unit(path), set()).add(unit(target))
    for group in circles(edges):
        problems.append(f"circle of {len(group)} files that include each other, in a ring: " +
                        ", ".join(group))
    return problems, files


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    problems, files = check(root)
    for p in problems:
        print(p)
    print(f"layers: {files} files, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
