#!/usr/bin/env python3
"""Fails when the top-level folders include each other in a cycle.

Each folder's sources (and its public headers under include/tunefarm/<folder>/)
are read for `#include "tunefarm/<x>/..."`; <x> is the folder the header
belongs to (the generated `tunefarm/v1/` headers are rpc's). An edge A -> B
means a file of A includes a header of B. The check prints every edge with
one file that makes it, and exits 1 naming each cycle it finds.

Usage: scripts/check_folder_cycles.py [SOURCE_DIR]
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"tunefarm/([A-Za-z0-9_]+)/')
# Folders whose code is built into libraries; tests, benchmarks, examples and
# the CLI sit above every one of them.
OWNER_OF_PREFIX = {"v1": "rpc"}


def folder_edges(root):
    folders = sorted(d for d in os.listdir(os.path.join(root, "include", "tunefarm"))
                     if os.path.isdir(os.path.join(root, "include", "tunefarm", d)))
    edges = {}
    for folder in folders + ["cli"]:
        places = [os.path.join(root, folder), os.path.join(root, "include", "tunefarm", folder)]
        for place in places:
            if not os.path.isdir(place):
                continue
            for dirpath, _, files in os.walk(place):
                for name in files:
                    if not name.endswith((".h", ".cpp", ".cc")):
                        continue
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8", errors="replace") as f:
                        for line in f:
                            m = INCLUDE.match(line)
                            if not m:
                                continue
                            target = OWNER_OF_PREFIX.get(m.group(1), m.group(1))
                            if target != folder:
                                edges.setdefault((folder, target), os.path.relpath(path, root))
    return edges


def cycles(edges):
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    found, state, stack = [], {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    edges = folder_edges(root)
    for (a, b), where in sorted(edges.items()):
        print(f"{a} -> {b}   ({where})")
    loops = cycles(edges)
    for loop in loops:
        steps = " -> ".join(loop)
        why = "; ".join(edges[(loop[i], loop[i + 1])] for i in range(len(loop) - 1))
        print(f"error: the folders include each other in a cycle: {steps} ({why})", file=sys.stderr)
    return 1 if loops else 0


if __name__ == "__main__":
    sys.exit(main())
