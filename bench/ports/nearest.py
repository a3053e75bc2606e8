#!/usr/bin/env python3
"""Check the upstream commit a port names: is another commit nearer?

For each pair of pairs.tsv, the commit the port names (named_commit) and every upstream commit that touches the compared
files (up to --window commits either side of the named one, in history order)
is diffed against the port, file by file (files present on both sides, same
relative paths).  The distance is the number of changed lines, both sides,
after the same whitespace normalisation as measure.py.  A named commit that is
much farther than the nearest one means the port was made from another
version, and the pair's diff mixes migration with upstream drift.

  python3 bench/ports/nearest.py bench/ports/pairs.tsv [--only A,B] [--mirrors DIR]
Output (TSV on stdout): set, model, named commit, its distance, nearest
commit, its date, its distance, commits tried.
"""
import argparse
import difflib
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from measure import mirror_git_dir, read_tsv  # noqa: E402


def batch_read(gd, specs):
    proc = subprocess.run(["git", "--git-dir=" + gd, "cat-file", "--batch"],
                          input="".join(s + "\n" for s in specs).encode(), capture_output=True, check=True)
    data, pos, out = proc.stdout, 0, []
    for _ in specs:
        nl = data.index(b"\n", pos)
        header = data[pos:nl].decode().split()
        pos = nl + 1
        if len(header) < 3 or header[1] == "missing":
            out.append(None)
            continue
        size = int(header[2])
        out.append(data[pos:pos + size].decode("utf-8", "replace"))
        pos += size + 1
    return out


def norm(text):
    return [l.rstrip() for l in text.splitlines()]


def distance(a, b):
    sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return sum((i2 - i1) + (j2 - j1) for t, i1, i2, j1, j2 in sm.get_opcodes() if t != "equal")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("pairs")
    ap.add_argument("--mirrors", default=os.environ.get("PORTS_MIRRORS", "/work/.mirror"))
    ap.add_argument("--only", default="")
    ap.add_argument("--window", type=int, default=60)
    args = ap.parse_args()
    pairs = read_tsv(args.pairs)
    if args.only:
        pairs = [p for p in pairs if p["model"] in set(args.only.split(","))]
    print("set\tmodel\tnamed\tnamed_distance\tnearest\tnearest_date\tnearest_distance\tcommits_tried")
    for p in pairs:
        p["upstream_commit"] = p.get("named_commit") or p["upstream_commit"]
        ugd = mirror_git_dir(args.mirrors, p["upstream_repo"])
        pgd = mirror_git_dir(args.mirrors, p["port_repo"])
        ud = "" if p["upstream_dir"] in (".", "") else p["upstream_dir"].rstrip("/") + "/"
        pd = p["port_dir"].rstrip("/") + "/"
        port_files = [n[len(pd):] for n in subprocess.run(
            ["git", "--git-dir=" + pgd, "ls-tree", "-r", "--name-only", p["port_commit"], "--", pd],
            capture_output=True, text=True, check=True).stdout.splitlines() if n.endswith(".py")]
        up_files = {n[len(ud):] for n in subprocess.run(
            ["git", "--git-dir=" + ugd, "ls-tree", "-r", "--name-only", p["upstream_commit"], "--", ud or "."],
            capture_output=True, text=True, check=True).stdout.splitlines()}
        common = sorted(f for f in port_files if f in up_files)
        if not common:
            continue
        port_text = dict(zip(common, batch_read(pgd, [f"{p['port_commit']}:{pd}{f}" for f in common])))
        history = subprocess.run(["git", "--git-dir=" + ugd, "log", "--all", "--format=%H %cs", "--",
                                  *[ud + f for f in common]], capture_output=True, text=True).stdout.split("\n")
        history = [h.split() for h in history if h]
        # the named commit may not touch the files: its state is that of the last
        # commit before it that does
        eff = subprocess.run(["git", "--git-dir=" + ugd, "rev-list", "-1", p["upstream_commit"], "--",
                              *[ud + f for f in common]], capture_output=True, text=True).stdout.strip()
        idx = next((i for i, (h, _) in enumerate(history) if h == eff), 0)
        cand = history[max(0, idx - args.window): idx + args.window + 1]
        if p["upstream_commit"] not in {h for h, _ in cand}:
            cand.append([p["upstream_commit"], "named"])
        results = []
        for h, date in cand:
            texts = batch_read(ugd, [f"{h}:{ud}{f}" for f in common])
            dist = 0
            for f, t in zip(common, texts):
                b = norm(port_text[f] or "")
                dist += distance(norm(t), b) if t is not None else len(b)
            results.append((dist, h, date))
        named = next(d for d, h, _ in results if h == p["upstream_commit"])
        best = min(results)
        print(f"{p['set']}\t{p['model']}\t{p['upstream_commit'][:10]}\t{named}\t{best[1][:10]}\t{best[2]}\t{best[0]}\t{len(results)}",
              flush=True)


if __name__ == "__main__":
    main()
