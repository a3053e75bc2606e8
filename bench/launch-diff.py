#!/usr/bin/env python3
"""Compares two JSON scan reports of one tree, field by field, for what the
launch analysis decides: each finding's code, path, line, column, severity
and its unlaunched/advisory/blocker flags, and per project the launched and
unlaunched entry scripts, untaken branches and CUDA-only tests.

Usage: bench/launch-diff.py BEFORE.json AFTER.json
Prints the counts, then every difference, one line each.
"""
import json
import sys
from collections import Counter


def load(path):
    with open(path) as f:
        return json.load(f)


def findings(report):
    out = {}
    for f in report["findings"]:
        key = (f["path"], f["line"], f["column"], f["code"])
        out.setdefault(key, []).append(
            (f["severity"], f["unlaunched"], f["advisory"], f["blocker"])
        )
    return out


def projects(report):
    return {p["path"]: p for p in report["projects"]}


def main():
    before, after = load(sys.argv[1]), load(sys.argv[2])
    fa, fb = findings(before), findings(after)
    print(f"findings: {sum(map(len, fa.values()))} before, {sum(map(len, fb.values()))} after")
    changes = Counter()
    for key in sorted(set(fa) | set(fb)):
        a, b = fa.get(key, []), fb.get(key, [])
        if a != b:
            changes[(tuple(a), tuple(b))] += 1
            print("finding", *key, a, "->", b)
    for (a, b), n in changes.most_common():
        print(f"  {n} x {list(a)} -> {list(b)}")
    pa, pb = projects(before), projects(after)
    for path in sorted(set(pa) | set(pb)):
        a, b = pa.get(path, {}), pb.get(path, {})
        for field in ["launched_entries", "unlaunched_entries", "untaken_branches", "cuda_only_tests", "verdict"]:
            x, y = a.get(field), b.get(field)
            if x == y:
                continue
            if isinstance(x, list) and isinstance(y, list) and all(isinstance(e, str) for e in x + y):
                gone = sorted(set(x) - set(y))
                new = sorted(set(y) - set(x))
                print("project", path, field, "-", gone, "+", new)
            else:
                print("project", path, field, json.dumps(x)[:300], "->", json.dumps(y)[:300])
    for field in ["files_scanned", "errors", "suppressed"]:
        if before.get(field) != after.get(field):
            x, y = before.get(field), after.get(field)
            print(field, json.dumps(x)[:300] if not isinstance(x, int) else x, "->",
                  json.dumps(y)[:300] if not isinstance(y, int) else y)


if __name__ == "__main__":
    main()
