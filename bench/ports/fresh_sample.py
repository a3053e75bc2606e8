#!/usr/bin/env python3
"""Draws the alarm sample of ports outside the development set.

    python3 bench/ports/fresh_sample.py SCANS_DIR [PER_PORT] [--unlaunched] > sample.tsv

SCANS_DIR holds one `npu-mem scan PORT --format json` report per port, named
`<port>.json`. The alarms are the findings of severity warning or error that
are not advisory. A port with more than PER_PORT (default 25) is sampled to
PER_PORT: round-robin over
its codes (most frequent first), then evenly spaced picks within each code, so
the sample is deterministic. Prints port, code, severity, path:line, message.
With --unlaunched it draws, the same way, from the findings made advice
because no launch script runs their code (`"unlaunched": true`), to read
whether that was right.
Standard library only.
"""
import collections
import glob
import json
import os
import sys

def alarms(report, unlaunched=False):
    if unlaunched:
        found = [f for f in report["findings"] if f.get("unlaunched")]
    else:
        found = [f for f in report["findings"]
                 if f["severity"] in ("warning", "error") and not f["advisory"] and not f.get("unlaunched")]
    return sorted(found, key=lambda f: (f["code"], f["path"], f["line"], f["column"]))


def sample(found, per_port):
    if len(found) <= per_port:
        return found
    by_code = collections.defaultdict(list)
    for f in found:
        by_code[f["code"]].append(f)
    order = sorted(by_code, key=lambda c: (-len(by_code[c]), c))
    quota, taken, round_ = collections.Counter(), 0, 0
    while taken < per_port:
        round_ += 1
        for code in order:
            if taken < per_port and len(by_code[code]) >= round_:
                quota[code] += 1
                taken += 1
    picked = []
    for code in order:
        group, k = by_code[code], quota[code]
        picked += [group[int((i + 0.5) * len(group) / k)] for i in range(k)]
    return picked


def main():
    args = [a for a in sys.argv[1:] if a != "--unlaunched"]
    unlaunched = len(args) < len(sys.argv) - 1
    per_port = int(args[1]) if len(args) > 1 else 25
    for path in sorted(glob.glob(os.path.join(args[0], "*.json"))):
        port = os.path.basename(path)[: -len(".json")]
        for f in sample(alarms(json.load(open(path)), unlaunched), per_port):
            where = f["path"].split(port + "/", 1)[-1].lstrip("./")
            print("\t".join([port, f["code"], f["severity"], f"{where}:{f['line']}", f["message"]]))


if __name__ == "__main__":
    main()
