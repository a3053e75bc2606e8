#!/usr/bin/env python3
"""Reads npu-mem on upstream pull requests that add NPU support (issue 46 item 5).

    python3 bench/multibackend/readings.py BIN [--mirrors DIR] [--work DIR]

For each pull request of prs.tsv, the tree after it (its commit) and before it
(the first parent) are materialised from local git mirrors (`fetch` them
first) and scanned whole, without entries. Then:

- after: every finding on the files the pull request changed, with the
  verdict read in verdicts.tsv (true / false, and why). A finding is on the
  NPU side when an NPU run of the changed code meets it; the figure is the
  share of false ones, among all findings and among the gate's (warning and
  error). Findings without a verdict are listed for reading.
- before: every dispatch arm the pull request added (arms.tsv, one row per
  chain or group it extended, read from the diff) and whether the scan of
  the code before reports it there with one of the row's codes (TX027 for a
  dispatch that names other accelerators; the device, backend and API rules
  for code written for CUDA alone); and how many of the Python lines the
  pull request replaced or deleted (blank, comment and import lines aside)
  carry a finding of any code.

Standard library only; reuses bench/ports/measure.py's materialise and scan.
"""
import argparse
import collections
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "ports"))
import measure  # noqa: E402


def changed_files(gd, commit):
    """Python and shell files the commit changed, as they are after it."""
    out = measure.git(gd, "diff", "--name-only", "--diff-filter=AM", commit + "^", commit)
    return {p for p in out.splitlines() if p.endswith((".py", ".sh"))}


def replaced_lines(gd, commit):
    """(path, line) of the code before the commit that it replaced or deleted:
    Python lines, not blank, comments or imports."""
    out = measure.git(gd, "diff", "-U0", "--diff-filter=M", commit + "^", commit, "--", "*.py")
    lines, path, old = set(), None, 0
    for text in out.splitlines():
        if text.startswith("--- "):
            path = text[6:] if text.startswith("--- a/") else None
        elif text.startswith("@@"):
            old = int(re.match(r"@@ -(\d+)", text).group(1))
        elif text.startswith("-") and path:
            body = text[1:].strip()
            if body and not body.startswith("#") and not measure.IMPORT_RE.match(body):
                lines.add((path, old))
            old += 1
    return lines


def scan_tree(binary, gd, commit, dest):
    if not os.path.isdir(dest):
        measure.materialise(gd, commit, ".", dest)
    return measure.scan(binary, dest)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("--mirrors", default=os.environ.get("PORTS_MIRRORS", "/work/.mirror"))
    ap.add_argument("--work", default="/tmp/multibackend")
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    verdicts = {(v["name"], v["code"], v["path:line"]): v
                for v in measure.read_tsv(os.path.join(HERE, "verdicts.tsv"))}
    arms = collections.defaultdict(list)
    for a in measure.read_tsv(os.path.join(HERE, "arms.tsv")):
        arms[a["name"]].append(a)

    totals = collections.Counter()
    for pr in measure.read_tsv(os.path.join(HERE, "prs.tsv")):
        gd = measure.mirror_git_dir(args.mirrors, pr["repo"])
        if gd is None:
            measure.die(f"no mirror of {pr['repo']} under {args.mirrors}: fetch github:{pr['repo']}")
        name, commit = pr["name"], pr["commit"]
        files = changed_files(gd, commit)
        after = scan_tree(binary, gd, commit, os.path.join(args.work, name, "after"))
        before = scan_tree(binary, gd, commit + "^", os.path.join(args.work, name, "before"))

        print(f"== {name} ({pr['repo']}#{pr['pr']}): {len(files)} changed code files")
        counts = collections.Counter()
        for f in sorted(after, key=lambda f: (f["path"], f["line"], f["code"])):
            if f["path"] not in files:
                continue
            where = f"{f['path']}:{f['line']}"
            v = verdicts.get((name, f["code"], where))
            gate = f["severity"] in ("warning", "error")
            verdict = v["verdict"] if v else "unread"
            counts[(verdict, gate)] += 1
            if verdict != "true":
                print(f"  after {f['severity']:7} {f['code']} {where} [{verdict}]"
                      + (f" {v['reason']}" if v else f" {f['message'][:140]}"))
        for gate in (False, True):
            label = "gate" if gate else "advice"
            t, fa, u = (counts[("true", gate)], counts[("false", gate)], counts[("unread", gate)])
            totals[(label, "true")] += t
            totals[(label, "false")] += fa
            totals[(label, "unread")] += u
            print(f"  after, {label}: {t + fa + u} findings, {fa} false, {u} unread")

        for a in arms[name]:
            codes = a["codes"].split(",")
            found = [f["code"] for f in before if f["path"] == a["path"] and f["code"] in codes
                     and f["line"] <= int(a["line"]) <= f["end_line"]]
            totals[("arms", bool(found))] += 1
            print(f"  before {a['path']}:{a['line']} {'found by ' + found[0] if found else 'MISSED'}: {a['arm']}")
        listed = {(a["path"], int(a["line"])) for a in arms[name]}
        for f in before:
            if f["code"] == "TX027" and f["path"] in files and (f["path"], f["line"]) not in listed:
                print(f"  before TX027 {f['path']}:{f['line']} reported where the pull request added no arm")
        replaced = replaced_lines(gd, commit)
        hit = {(p, n) for (p, n) in replaced
               if any(f["path"] == p and f["line"] <= n <= f["end_line"] for f in before)}
        totals["replaced"] += len(replaced)
        totals["replaced_hit"] += len(hit)
        print(f"  before: {len(hit)} of {len(replaced)} replaced lines carry a finding")

    for label in ("gate", "advice"):
        n = sum(totals[(label, k)] for k in ("true", "false", "unread"))
        fa = totals[(label, "false")]
        share = f"{100 * fa / n:.1f}%" if n else "-"
        print(f"after, {label}: {n} findings, {fa} false ({share}), {totals[(label, 'unread')]} unread")
    print(f"before: {totals[('arms', True)]} of {totals[('arms', True)] + totals[('arms', False)]}"
          " added arms reported at their dispatch")
    print(f"before: {totals['replaced_hit']} of {totals['replaced']} replaced lines carry a finding")


if __name__ == "__main__":
    main()
