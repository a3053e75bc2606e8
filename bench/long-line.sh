#!/usr/bin/env bash
# Many findings on one line must cost the same per finding as on many lines
# (issue 12: a fix's line start searched back through the line, and columns
# on a non-ASCII line counted from the line start, for every finding on it).
#
#   bash bench/long-line.sh [SIZES_MB...]     (default 1 2 4 10)
#   BIN=path/to/npu-mem bash bench/long-line.sh   (another build, e.g. to compare)
#
# For each size: a file whose second line is `x = [torch.zeros(1).cuda(), ...]`
# of that many MB, once pure ASCII and once with an `é` at the start of the
# line, and one whose second line is a single chain `x = y.cuda().cuda()...`
# of that many MB (one call nested in the next: walking up from its inner
# calls, or reading their receivers' text, was quadratic); prints wall and CPU seconds of a JSON scan (release build) and the CPU
# seconds per MB. Linear means the last column stays flat as the size grows.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
[ $# -gt 0 ] || set -- 1 2 4 10

echo "| line | MB | wall s | CPU s | CPU s per MB | peak RSS MiB |"
echo "|---|---|---|---|---|---|"
for mb in "$@"; do
    for variant in ascii non-ascii chain; do
        python3 - "$WORK/line.py" "$mb" "$variant" <<'PY'
import sys
path, mb, variant = sys.argv[1], int(sys.argv[2]), sys.argv[3]
item = "torch.zeros(1).cuda(), "
first = "'é', " if variant == "non-ascii" else ""
with open(path, "w", encoding="utf-8") as f:
    if variant == "chain":
        f.write("import torch\nx = y" + ".cuda()" * (mb * 1024 * 1024 // 7) + "\n")
    else:
        f.write("import torch\nx = [" + first + item * (mb * 1024 * 1024 // len(item)) + "]\n")
PY
        /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$BIN" scan "$WORK/line.py" --no-cache --format json \
            -o "$WORK/report.json" 2>/dev/null || [ $? -eq 1 ]
        # The last line: time(1) writes a note first when the exit code is not 0.
        read -r wall user sys kb < <(tail -n 1 "$WORK/time")
        python3 -c "print(f'| $variant | $mb | $wall | {$user + $sys:.2f} | {($user + $sys) / $mb:.2f} | {$kb / 1024:.0f} |')"
    done
done
