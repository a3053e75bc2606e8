#!/usr/bin/env python3
"""Re-checks the held-out readings (verdicts-heldout*.tsv) against a build.

    python3 bench/ports/heldout.py BIN MODELZOO_PYTORCH_DIR [--alarms]

The held-out ports are ModelZoo-PyTorch directories outside the development
set, read once each with the build bench/RESULTS.md names. MODELZOO_PYTORCH_DIR
is the mirror's `PyTorch/` tree written out (`git archive HEAD PyTorch`); each
port is found there by its directory name and scanned alone, as it was read.
Prints, per file of verdicts and in all, how many read findings are still
alarms (warning or error, not advice) and how many of those were read false;
with --alarms, also lists the read false alarms still reported, the work list.
Standard library only.
"""
import collections
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def read_verdicts():
    rows = []
    for path in sorted(glob.glob(os.path.join(HERE, "verdicts-heldout*.tsv"))):
        if "unlaunched" in path:
            continue  # a reading of advice, not of alarms
        with open(path) as f:
            head = f.readline().rstrip("\n").split("\t")
            for line in f:
                row = dict(zip(head, line.rstrip("\n").split("\t")))
                row["sample"] = os.path.basename(path)
                rows.append(row)
    return rows


def port_dirs(tree, names):
    found = {}
    for dirpath, dirnames, _ in os.walk(tree):
        for d in dirnames:
            if d in names and d not in found:
                found[d] = os.path.join(dirpath, d)
    return found


def alarms(binary, root):
    out = subprocess.run([binary, "scan", root, "--no-cache", "--format", "json", "--fail-on", "never"],
                         capture_output=True, text=True, check=True).stdout
    state = {}
    for f in json.loads(out)["findings"]:
        rel = os.path.relpath(f["path"], root)
        advice = f["advisory"] or f.get("unlaunched") or f["severity"] == "info"
        state[(f["code"], f"{rel}:{f['line']}")] = "advice" if advice else "alarm"
    return state


def main():
    args = [a for a in sys.argv[1:] if a != "--alarms"]
    binary, tree = os.path.abspath(args[0]), args[1]
    rows = read_verdicts()
    dirs = port_dirs(tree, {r["port"] for r in rows})
    missing = sorted({r["port"] for r in rows} - set(dirs))
    if missing:
        sys.exit(f"not found under {tree}: {', '.join(missing)}")
    scans = {port: alarms(binary, d) for port, d in sorted(dirs.items())}
    count = collections.Counter()
    work = []
    for r in rows:
        now = scans[r["port"]].get((r["code"], r["path:line"]), "gone")
        for key in (r["sample"], "all"):
            count[(key, r["verdict"], now)] += 1
        if now == "alarm" and r["verdict"] == "false":
            work.append(f"{r['port']}\t{r['code']}\t{r['path:line']}\t{r['reason'][:160]}")
    for key in sorted({k for k, _, _ in count}, key=lambda k: (k == "all", k)):
        read = sum(v for (k, _, _), v in count.items() if k == key)
        false_read = sum(v for (k, verdict, _), v in count.items() if k == key and verdict == "false")
        still_false, still_true = count[(key, "false", "alarm")], count[(key, "true", "alarm")]
        lost = count[(key, "true", "gone")] + count[(key, "true", "advice")]
        share = still_false / max(1, still_false + still_true)
        print(f"{key}: read {read} ({false_read} false); still alarms {still_false + still_true}, "
              f"false {still_false} = {share:.1%}; true no longer alarms: {lost}")
    if "--alarms" in sys.argv:
        print("\nread false, still alarms:")
        print("\n".join(work))


if __name__ == "__main__":
    main()
