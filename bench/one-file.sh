#!/usr/bin/env bash
# The cost of one small scan, as a pre-commit hook or an editor pays it on
# every run: `npu-mem scan one_file.py`, against `npu-mem --version` (process
# start alone), measured side by side, alternating, after a warm-up.
#
#   bash bench/one-file.sh [RUNS]                 (default 41 runs per variant)
#   BIN=path/to/npu-mem bash bench/one-file.sh    (another build, e.g. to compare)
#   OTHER=path/to/npu-mem bash bench/one-file.sh  (adds that build's scan of a changed file;
#                                                  without the cache, which is keyed by build)
#
# The file is a two-line script with one finding. `scan one_file.py` runs with
# the default cache, which the warm-up fills: an unchanged file. A hook or an
# editor mostly scans files that just changed, which the cache has not seen:
# `--no-cache` measures that case.
# Prints the median and the spread in milliseconds (wall clock) for each.
# Goal (issue 14): a median of at most 15 ms for the scan.
set -euo pipefail

RUNS="${1:-41}"
. "$(dirname "$0")/lib.sh"
# The scans run in a temporary directory: the other build's path must be absolute too.
[ -z "${OTHER:-}" ] || OTHER="$(realpath "$OTHER")"
printf 'import torch\nmodel = torch.nn.Linear(2, 2).cuda()\n' >"$WORK/one_file.py"

python3 - "$RUNS" "$WORK" "$BIN" "${OTHER:-}" <<'PY'
import os, statistics, subprocess, sys, time

runs, work, binary, other = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
variants = {
    "scan one_file.py": [binary, "scan", "one_file.py"],
    "scan one_file.py --no-cache (a changed file)": [binary, "scan", "one_file.py", "--no-cache"],
    "--version (process start)": [binary, "--version"],
}
if other:
    variants["OTHER: scan one_file.py --no-cache"] = [other, "scan", "one_file.py", "--no-cache"]

def once(argv):
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = (time.perf_counter() - started) * 1000
    # A scan with a finding exits 1; anything else means the run is not what we measure.
    if done.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv)} exited with {done.returncode}")
    return elapsed

for argv in variants.values():  # warm-up: page cache, and the cache directory
    for _ in range(3):
        once(argv)
times = {name: [] for name in variants}
for _ in range(runs):
    for name, argv in variants.items():
        times[name].append(once(argv))

print(f"| variant | median ms | min ms | max ms | runs |")
print(f"|---|---|---|---|---|")
for name, ts in times.items():
    print(f"| {name} | {statistics.median(ts):.1f} | {min(ts):.1f} | {max(ts):.1f} | {len(ts)} |")
PY
