#!/usr/bin/env bash
# The benchmark: npu-mem on the pinned corpus against tree-sitter's own parse
# time, measured side by side so machine drift hits every variant alike.
#
#   bash bench/run.sh [RUNS]        (default 5 runs per variant, after a warm-up)
#
#   BIN           the build to measure (default: the release build, built now)
#   CORPUS_DIR    where the corpus is or is built (default /tmp/corpus)
#   MAKE_CORPUS   the corpus script (default ../shared/bench/make-corpus.sh)
#   MODELZOO_DIR  optional: a large tree (ModelZoo-PyTorch's PyTorch/) measured
#                 too, floor against cold JSON, MODELZOO_RUNS rounds (default 3)
#
# Variants, alternated in every round:
#   floor   tree-sitter alone (bench/walk_floor.rs --parse): read and parse every
#           .py file on as many threads as the scan uses, drop the tree (the
#           baseline every ratio is against)
#   parse   `scan --parse-only`: the scan's walk, read and parse, matching nothing
#   json    full scan, every rule, JSON report to a file, no cache
#   text    full scan, text report to a file, no cache
#   warm    full scan, JSON to a file, with a cache filled by the warm-up
# Then: --threads 1 vs --threads 2 (JSON), determinism of the JSON across
# thread counts, and peak memory on the corpus copied 4 and 8 times over.
# Prints a Markdown summary for bench/RESULTS.md.
set -euo pipefail

RUNS="${1:-5}"
. "$(dirname "$0")/lib.sh"
CORPUS_DIR="${CORPUS_DIR:-/tmp/corpus}"
MAKE_CORPUS="${MAKE_CORPUS:-$HERE/../shared/bench/make-corpus.sh}"
FLOOR="$TARGET/release/examples/walk_floor"
THREADS="$(nproc)"

(cd "$HERE" && cargo build --release --quiet --example walk_floor)
if [ ! -d "$CORPUS_DIR/src" ]; then
    CORPUS_DIR="$CORPUS_DIR" bash "$MAKE_CORPUS"
fi
SRC="$CORPUS_DIR/src"

find "$SRC" -name '*.py' | sort >"$WORK/corpus.list"

# timed NAME COMMAND...: appends "NAME seconds peak_kb" to $WORK/times.
timed() {
    local name="$1"
    shift
    /usr/bin/time -f "%e %M" -o "$WORK/one" "$@" >/dev/null 2>"$WORK/stderr" || {
        local code=$?
        # Exit 1 only means findings; anything else is a failure of the benchmark.
        [ "$code" -eq 1 ] || { cat "$WORK/stderr" >&2; exit "$code"; }
    }
    echo "$name $(tail -n 1 "$WORK/one")" >>"$WORK/times"
}

# run NAME SCAN_ARGS...: a timed scan.
run() {
    local name="$1"
    shift
    timed "$name" "$BIN" scan "$@"
}

variants() {
    timed floor "$FLOOR" --parse "$WORK/corpus.list" "$THREADS"
    run parse "$SRC" --parse-only
    run json "$SRC" --no-cache --format json -o "$WORK/report.json"
    run text "$SRC" --no-cache --format text -o "$WORK/report.txt"
    run warm "$SRC" --cache-dir "$WORK/cache" --format json -o "$WORK/warm.json"
}

variants                       # warm-up: page cache, and the cache for `warm`
: >"$WORK/times"
for _ in $(seq "$RUNS"); do variants; done
for _ in $(seq 3); do
    run threads1 "$SRC" --no-cache --threads 1 --format json -o "$WORK/t1.json"
    run threads2 "$SRC" --no-cache --threads 2 --format json -o "$WORK/t2.json"
done
deterministic=no
if cmp -s "$WORK/t1.json" "$WORK/t2.json" && cmp -s "$WORK/t1.json" "$WORK/report.json" \
    && cmp -s "$WORK/report.json" "$WORK/warm.json"; then
    deterministic=yes
fi

# Memory must not grow with the repository: the corpus 4 and 8 times (hard links).
for n in 4 8; do
    mkdir -p "$WORK/x$n"
    for i in $(seq "$n"); do cp -al "$SRC" "$WORK/x$n/copy$i"; done
    run "x$n" "$WORK/x$n" --no-cache --format json -o "$WORK/x$n.json"
done

# The large tree, when given: paired rounds of the floor and the cold scan.
if [ -n "${MODELZOO_DIR:-}" ]; then
    find "$MODELZOO_DIR" -name '*.py' | sort >"$WORK/modelzoo.list"
    for _ in $(seq "${MODELZOO_RUNS:-3}"); do
        timed mz_floor "$FLOOR" --parse "$WORK/modelzoo.list" "$THREADS"
        run mz_json "$MODELZOO_DIR" --no-cache --format json -o "$WORK/mz.json"
    done
fi

# One small file, as a pre-commit hook or an editor scans it.
BIN="$BIN" bash "$HERE/bench/one-file.sh" 21 >"$WORK/one-file.md"

python3 - "$WORK" "$SRC" "$RUNS" "$deterministic" <<'EOF'
import json, os, statistics, sys
work, src, runs, deterministic = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
times = {}
for line in open(os.path.join(work, "times")):
    name, secs, kb = line.split()
    times.setdefault(name, []).append((float(secs), int(kb)))
med = {k: statistics.median(s for s, _ in v) for k, v in times.items()}
peak = {k: max(kb for _, kb in v) / 1024 for k, v in times.items()}
size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(src) for f in fs if f.endswith(".py"))
files = sum(1 for d, _, fs in os.walk(src) for f in fs if f.endswith(".py"))
report = json.load(open(os.path.join(work, "report.json")))
print(f"Corpus: {files} .py files, {size / 1e6:.1f} MB; {runs} rounds after a warm-up; medians.")
print("x floor: the median over rounds of each variant's time over that round's floor.\n")
print("| variant | median s | x floor (paired) | x parse-only | MB/s | files/s | peak RSS MiB |")
print("|---|---|---|---|---|---|---|")
def paired(name, floor):
    return statistics.median(s / f for (s, _), (f, _) in zip(times[name], times[floor]))
for name in ["floor", "parse", "json", "text", "warm"]:
    m = med[name]
    print(f"| {name} | {m:.2f} | {paired(name, 'floor'):.2f} | {m / med['parse']:.2f} | {size / 1e6 / m:.1f} | {files / m:.0f} | {peak[name]:.0f} |")
print()
if "mz_json" in times:
    print(f"- large tree, {len(times['mz_json'])} paired rounds: floor {med['mz_floor']:.2f} s, cold JSON {med['mz_json']:.2f} s,"
          f" {paired('mz_json', 'mz_floor'):.2f}x; peak RSS {peak['mz_json']:.0f} MiB")
print(f"- text report over JSON: {100 * (med['text'] / med['json'] - 1):+.1f}%")
print(f"- --threads 1 / --threads 2 (JSON, 3 runs each): {med['threads1']:.2f} s / {med['threads2']:.2f} s = {med['threads1'] / med['threads2']:.2f}x")
for n in (4, 8):
    print(f"- corpus x{n} ({n * files} files): {med[f'x{n}']:.2f} s, peak RSS {peak[f'x{n}']:.0f} MiB (x1: {peak['json']:.0f} MiB)")
print(f"- findings: {len(report['findings'])}; files with errors: {len(report['errors'])}")
print(f"- JSON byte-identical across --threads 1, --threads 2, default and warm cache: {deterministic}")
print("\nOne small file (bench/one-file.sh 21):\n")
print(open(os.path.join(work, "one-file.md")).read(), end="")
EOF
