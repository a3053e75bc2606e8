#!/usr/bin/env python3
"""Re-checks the read sample of port findings against another npu-mem build.

    python3 bench/ports/recheck.py BIN [--mirrors DIR]

The verdicts in bench/ports/verdicts-*.tsv were read on the ported side with
the build that bench/RESULTS.md names. This scans each ported tree again with
BIN and says, for every read finding, whether BIN still reports it (same code,
file and line): false alarms that went away, and true findings that were lost.
It also says which of those still reported are advice (info, "handled by
transfer_to_npu at run time" or in code no launch script runs) and lists the read false alarms still reported
as alarms, the work list for precision. It does not read new findings; a fresh
sample needs bench/ports.sh and reading.
Standard library only; uses the mirrors bench/ports.sh uses.
"""
import argparse
import collections
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import measure  # noqa: E402  (the same materialise/scan as the benchmark)

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary")
    ap.add_argument("--mirrors", default=os.environ.get("PORTS_MIRRORS", "/work/.mirror"))
    args = ap.parse_args()
    binary = os.path.abspath(args.binary)
    pairs = {p["model"]: p for p in measure.read_tsv(os.path.join(HERE, "pairs.tsv"))}
    # Every read finding once: a finding judged in more than one sample keeps
    # the later reading (the alarm samples were read after the first ones).
    read, samples = {}, collections.defaultdict(list)
    for name in ("verdicts-classic.tsv", "verdicts-modern.tsv",
                 "verdicts-classic-alarms.tsv", "verdicts-modern-alarms.tsv",
                 "verdicts-classic-alarms2.tsv", "verdicts-modern-alarms2.tsv",
                 "verdicts-classic-alarms3.tsv", "verdicts-modern-alarms3.tsv"):
        path = os.path.join(HERE, name)
        for v in measure.read_tsv(path) if os.path.exists(path) else []:
            read[(v["model"], v["code"], v["location"])] = v
            samples[name].append(v)
    verdicts = list(read.values())
    now = {}  # (model, code, location) -> "gone", "advisory" or "alarm"
    loud_now = set()  # the keys still reported as warning or error alarms (what the gate counts)
    by_model = collections.defaultdict(list)
    for v in verdicts:
        by_model[v["model"]].append(v)

    outcome = collections.Counter()
    state = collections.Counter()
    changed = []
    alarms = []
    advised_true = []
    with tempfile.TemporaryDirectory() as tmp:
        for model, rows in sorted(by_model.items()):
            p = pairs[model]
            root = os.path.join(tmp, model.replace("/", "_"))
            gd = measure.mirror_git_dir(args.mirrors, p["port_repo"])
            measure.materialise(gd, p["port_commit"], p["port_dir"], root)
            scanned = measure.scan(binary, root, measure.port_entries(root))
            # Advice: handled by transfer_to_npu, or in code no launch script runs.
            found = {(f["code"], f["path"], f["line"]): bool(f["advisory"] or f.get("unlaunched")) for f in scanned}
            severity = {(f["code"], f["path"], f["line"]): f["severity"] for f in scanned}
            prefix = p["port_dir"].rstrip("/") + "/"
            for v in rows:
                path, line = v["location"].rsplit(":", 1)
                rel = path[len(prefix):] if path.startswith(prefix) else path
                still = (v["code"], rel, int(line)) in found
                outcome[(v["verdict"], still)] += 1
                key = (v["model"], v["code"], v["location"])
                now[key] = "gone" if not still else ("advisory" if found[(v["code"], rel, int(line))] else "alarm")
                if not still:
                    changed.append(f"{v['id']}\t{v['code']}\t{v['verdict']}\tgone\t{v['reason']}")
                    continue
                advisory = found[(v["code"], rel, int(line))]
                state[(v["verdict"], "advisory" if advisory else "alarm")] += 1
                if advisory and v["verdict"] == "true":
                    advised_true.append(f"{v['id']}\t{v['code']}\t{v['location']}\t{v['reason']}")
                if not advisory and severity[(v["code"], rel, int(line))] != "info":
                    state[(v["verdict"], "warning or error")] += 1
                    loud_now.add(key)
                if v["verdict"] == "false" and not advisory:
                    level = severity[(v["code"], rel, int(line))]
                    alarms.append(f"{v['id']}\t{v['code']}\t{level}\t{v['location']}\t{v['reason']}")
    total = sum(outcome.values())
    false_still = outcome[("false", True)]
    still = outcome[("false", True)] + outcome[("true", True)]
    print(f"read findings: {total}")
    print(f"  false alarms still reported: {false_still}, gone: {outcome[('false', False)]}")
    print(f"  true findings still reported: {outcome[('true', True)]}, gone: {outcome[('true', False)]}")
    if still:
        print(f"  false share among the read findings still reported: {false_still}/{still} = {false_still / still:.1%}")
    for verdict in ("false", "true"):
        print(f"  {verdict} findings still reported as advisory: {state[(verdict, 'advisory')]}, "
              f"as alarms: {state[(verdict, 'alarm')]}")
    false_alarms, alarmed = state[("false", "alarm")], state[("false", "alarm")] + state[("true", "alarm")]
    if alarmed:
        print(f"  false share among the read findings still reported as alarms: "
              f"{false_alarms}/{alarmed} = {false_alarms / alarmed:.1%}")
    false_loud, loud = state[("false", "warning or error")], state[("false", "warning or error")] + state[("true", "warning or error")]
    if loud:
        print(f"  ... of them warning or error (what the default gate counts; info left out): "
              f"{false_loud}/{loud} = {false_loud / loud:.1%}")
    print("\neach sample as read, and its false share among the findings still reported as alarms:")
    for name, rows in samples.items():
        state = collections.Counter((v["verdict"], now[(v["model"], v["code"], v["location"])]) for v in rows)
        false, alarmed = state[("false", "alarm")], state[("false", "alarm")] + state[("true", "alarm")]
        read_false = sum(1 for v in rows if v["verdict"] == "false")
        print(f"  {name}: read {read_false}/{len(rows)} false; still alarms {alarmed}, of them false "
              f"{false}/{alarmed} = {false / max(1, alarmed):.1%}; gone {state[('false', 'gone')] + state[('true', 'gone')]}, "
              f"advisory {state[('false', 'advisory')] + state[('true', 'advisory')]}")
        loud = [v for v in rows if (v["model"], v["code"], v["location"]) in loud_now]
        loud_false = sum(1 for v in loud if v["verdict"] == "false")
        print(f"    of them warning or error (the gate): {loud_false}/{len(loud)} false = {loud_false / max(1, len(loud)):.1%}")
    print("\nfindings no longer reported:")
    print("\n".join(changed))
    print("\ntrue findings reported as advice (advisory or in code no launch script runs):")
    print("\n".join(advised_true))
    print("\nfalse alarms still reported as alarms (not advisory), with their severity:")
    print("\n".join(alarms))


if __name__ == "__main__":
    main()
