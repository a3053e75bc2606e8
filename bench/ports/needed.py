#!/usr/bin/env python3
"""Recall (a) on the migration lines a reading judged necessary.

    python3 bench/ports/needed.py [RESULTS_DIR] [VERDICTS]

RESULTS_DIR (default bench/ports/results) holds migration-lines.tsv, which
bench/ports.sh writes: every migration line of the development set with the
codes that hit it. VERDICTS (default bench/ports/verdicts-migration-lines.tsv)
classes each line, read by hand with both sides of the diff at hand:
  needed     unchanged, the original fails or silently misbehaves on an
             Ascend host under a hand migration (no transfer_to_npu);
  perf       works unchanged; a performance or memory change of a kind
             Huawei documents (Ascend apex amp, fused optimizers, NPU fused
             ops and formats, the analysis tool's loader and copy advice);
  optional   works unchanged, and not a documented performance change
             (device plumbing, launch restructuring, refactoring, logging);
  follow-on  changed only to agree with another changed line's choice
             (PPO keeps tensors on the host because it builds one
             distribution there); counted with that line, not on its own;
  unrelated  not about migration (the diff aligned an unrelated change);
  unclear    the reader could not tell.
The column under_t2n says, for a needed line of a port that imports
transfer_to_npu, whether the original breaks even under it ("breaks") or
transfer_to_npu would have handled it ("handled"); "-" elsewhere.

Prints, per set, how many lines of each class a finding hits, and recall on
the needed lines in two settings: a hand migration (every needed line), and
the port's real setting (without the lines transfer_to_npu handles, in the
ports that import it). Lines are
matched on (set, model, original location); a line the verdicts do not
class is counted as unread. Standard library only.
"""
import collections
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
results = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results")
verdicts = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "verdicts-migration-lines.tsv")


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


read = {(r["set"], r["model"], r["orig_location"]): r for r in rows(verdicts)}
tally = collections.defaultdict(lambda: collections.Counter())
for r in rows(os.path.join(results, "migration-lines.tsv")):
    v = read.get((r["set"], r["model"], r["orig_location"]))
    c = v["class"] if v else "unread"
    hit = r["codes"] != "-"
    tally[r["set"]][(c, "all")] += 1
    tally[r["set"]][(c, "hit")] += hit
    if c == "needed" and v["under_t2n"] != "handled":
        tally[r["set"]][("real setting", "all")] += 1
        tally[r["set"]][("real setting", "hit")] += hit

for sname in sorted(tally):
    t = tally[sname]
    classes = sorted({c for c, _ in t} - {"real setting"})
    print(f"{sname}: " + ", ".join(f"{c} {t[(c, 'hit')]}/{t[(c, 'all')]}" for c in classes))
    for label, wanted in (
        ("needed lines", ["needed"]),
        ("needed lines, in the port's real setting", ["real setting"]),
        ("needed + perf lines", ["needed", "perf"]),
    ):
        hit = sum(t[(c, "hit")] for c in wanted)
        total = sum(t[(c, "all")] for c in wanted)
        if total:
            print(f"  recall on {label}: {hit}/{total} = {hit / total:.3f}")
