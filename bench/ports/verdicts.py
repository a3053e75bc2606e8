#!/usr/bin/env python3
"""Summarise human verdicts on the ported-side samples: false-alarm rate
overall, by severity and by code.  Usage: verdicts.py verdicts-*.tsv
(joins with results/sample-<set>.tsv for the severity). A file named
verdicts-<set>-alarms.tsv judges the sample of the set's alarms (findings that
are not advisory) and is weighted by their codes. A trailing number marks a
later reading of the same sample (verdicts-classic-alarms2.tsv reads
sample-classic-alarms.tsv); --results DIR names the directory that holds the
sample and summary.json (default: results/ next to the verdict file)."""
import collections
import json
import os
import re
import sys

args = sys.argv[1:]
results = None
if args[:1] == ["--results"]:
    results, args = args[1], args[2:]

for path in args:
    rows = [l.rstrip("\n").split("\t") for l in open(path)][1:]
    sset = re.sub(r"\d+$", "", os.path.basename(path).split("-", 1)[1].rsplit(".", 1)[0])
    rdir = results or os.path.join(os.path.dirname(path), "results")
    sample = os.path.join(rdir, f"sample-{sset}.tsv")
    sev = {r.split("\t")[0]: r.split("\t")[4] for r in open(sample).read().splitlines()[1:]}
    n = len(rows)
    false = [r for r in rows if r[4] == "false"]
    print(f"{sset}: {len(false)}/{n} false = {len(false) / n:.1%}")
    by_sev = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        by_sev[sev[r[0]]][r[4] == "false"] += 1
    for s in ("error", "warning", "info"):
        t, f = by_sev[s]
        if t + f:
            print(f"  {s:8} {f}/{t + f} false = {f / (t + f):.1%}")
    nw = [r for r in rows if sev[r[0]] != "info"]
    fw = [r for r in nw if r[4] == "false"]
    print(f"  warning+error: {len(fw)}/{len(nw)} false = {len(fw) / max(1, len(nw)):.1%}")
    by_code = collections.defaultdict(lambda: [0, 0])
    for r in rows:
        by_code[r[2]][r[4] == "false"] += 1
    # The sample is stratified (round-robin over pairs and codes), so its raw
    # rate over-weights rare codes; weight each code's sampled rate by how
    # many findings of that code the set has (summary.json).
    summ = os.path.join(rdir, "summary.json")
    base, _, alarms = sset.partition("-")
    pop = json.load(open(summ))["sets"][base]["port_alarm_codes" if alarms else "port_codes"]
    covered = {c: n for c, n in pop.items() if c in by_code}
    est = sum(n * by_code[c][1] / sum(by_code[c]) for c, n in covered.items())
    tot = sum(covered.values())
    print(f"  weighted by code frequency: {est / tot:.1%} of {tot} findings "
          f"({sum(pop.values()) - tot} findings of unsampled codes left out)")
    print("  false by code: " + ", ".join(f"{c} {f}/{t + f}" for c, (t, f) in
                                          sorted(by_code.items(), key=lambda kv: (-kv[1][1], kv[0])) if f))
