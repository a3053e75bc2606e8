#!/usr/bin/env bash
# Project analysis must not grow quadratically with the functions that hold
# findings (issue 47, item 14: with one launch script, 40k such functions
# took 133 s when the search for callers was quadratic).
#
#   bash bench/project-scale.sh [FUNCTIONS...]     (default 10000 20000 40000)
#   BIN=path/to/npu-mem bash bench/project-scale.sh   (another build)
#
# For each size: a project of modules with 100 functions each, every one
# holding a `.cuda()` finding and called by nothing, scanned once without and
# once with a launch script that starts one module (the launch makes the
# project's run analysis look for callers). Prints wall seconds and peak RSS
# of a JSON scan of each, and their ratio (the issue's bound is 2x).
set -euo pipefail

. "$(dirname "$0")/lib.sh"
[ $# -gt 0 ] || set -- 10000 20000 40000

scan() { # DIR -> "wall_s rss_mib"
    /usr/bin/time -f "%e %M" "$BIN" scan "$1" --no-cache --format json >/dev/null 2>"$WORK/time" || true
    tail -1 "$WORK/time" | awk '{printf "%s %.0f", $1, $2 / 1024}'
}

echo "| functions | no launch script: s, MiB | with one: s, MiB | ratio |"
echo "|---|---|---|---|"
for n in "$@"; do
    dir="$WORK/p$n"
    python3 - "$dir" "$n" <<'PY'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
os.makedirs(os.path.join(root, "pkg"), exist_ok=True)
open(os.path.join(root, "pyproject.toml"), "w").write("[project]\nname = 'scale'\n")
open(os.path.join(root, "pkg", "__init__.py"), "w").write("")
per = 100
for m in range((n + per - 1) // per):
    body = ["import torch", ""]
    for f in range(min(per, n - m * per)):
        body += [f"def f{m}_{f}(x):", "    return x.cuda()", ""]
    open(os.path.join(root, "pkg", f"m{m}.py"), "w").write("\n".join(body))
open(os.path.join(root, "train.py"), "w").write(
    "import torch\nfrom pkg import m0\n\nif __name__ == '__main__':\n    print(m0.f0_0(torch.ones(1)))\n")
PY
    without=$(scan "$dir")
    printf '#!/bin/bash\npython train.py\n' > "$dir/run.sh"
    with=$(scan "$dir")
    ratio=$(awk -v a="${without%% *}" -v b="${with%% *}" 'BEGIN { printf "%.2f", (a > 0 ? b / a : 0) }')
    echo "| $n | ${without/ /, } | ${with/ /, } | ${ratio}x |"
    rm -rf "$dir"
done
