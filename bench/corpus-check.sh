#!/usr/bin/env bash
# The real corpus as a test bed: scan every file and fail on a panic, on a
# file reported unreadable or unparsable that CPython reads and parses, or on
# finding counts per rule that differ from bench/corpus-summary.json (the
# reviewed record; refresh it with --update after reviewing a rule change).
#
#   bash bench/corpus-check.sh [--update]
#
#   CORPUS_DIR, MAKE_CORPUS as for bench/run.sh
#   NPU_MEM      the binary to check (default: target/release/npu-mem, built first)
set -euo pipefail

HERE="$(cd "$(dirname "$0")/.." && pwd)"
CORPUS_DIR="${CORPUS_DIR:-/tmp/corpus}"
MAKE_CORPUS="${MAKE_CORPUS:-$HERE/../shared/bench/make-corpus.sh}"
SUMMARY="$HERE/bench/corpus-summary.json"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

if [ -n "${NPU_MEM:-}" ]; then
    BIN="$(realpath "$NPU_MEM")"
else
    (cd "$HERE" && cargo build --release --quiet)
    BIN="$HERE/target/release/npu-mem"
fi
if [ ! -d "$CORPUS_DIR/src" ]; then
    CORPUS_DIR="$CORPUS_DIR" bash "$MAKE_CORPUS"
fi

# Paths are shown relative to the corpus, so the summary does not depend on where it lives.
code=0
(cd "$CORPUS_DIR/src" && "$BIN" scan . --no-cache --format json \
    -o "$WORK/report.json" 2>"$WORK/stderr") || code=$?
if [ "$code" -ne 0 ] && [ "$code" -ne 1 ]; then
    echo "corpus-check: npu-mem exited with $code" >&2
    cat "$WORK/stderr" >&2
    exit 1
fi
if grep -q "panicked" "$WORK/stderr"; then
    echo "corpus-check: npu-mem panicked:" >&2
    cat "$WORK/stderr" >&2
    exit 1
fi

python3 - "$WORK/report.json" "$CORPUS_DIR/src" "$SUMMARY" "${1:-}" <<'PY'
import ast, collections, json, os, sys, warnings
report_path, src, summary_path, mode = sys.argv[1:5]
report = json.load(open(report_path))
failures = []
# Every file npu-mem could not read or parse must really be unreadable or invalid.
for e in report["errors"]:
    path = os.path.join(src, e["path"])
    if not path.endswith(".py"):
        continue
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(open(path, encoding="utf-8").read())
        ok = True
    except Exception:
        ok = False
    if ok:
        failures.append(f"{e['path']}: reported {e['kind']} ({e['message']}) but CPython reads and parses it")
counts = collections.Counter(f["code"] for f in report["findings"])
current = {
    "files_scanned": report["files_scanned"],
    "findings": len(report["findings"]),
    "errors": len(report["errors"]),
    "by_rule": dict(sorted(counts.items())),
}
if mode == "--update":
    json.dump(current, open(summary_path, "w"), indent=2)
    open(summary_path, "a").write("\n")
    print(f"corpus-check: wrote {summary_path}")
else:
    recorded = json.load(open(summary_path))
    for key in ["files_scanned", "findings", "errors"]:
        if recorded[key] != current[key]:
            failures.append(f"{key}: recorded {recorded[key]}, now {current[key]}")
    for code in sorted(set(recorded["by_rule"]) | set(current["by_rule"])):
        a, b = recorded["by_rule"].get(code, 0), current["by_rule"].get(code, 0)
        if a != b:
            failures.append(f"{code}: recorded {a} findings, now {b}")
print(f"corpus-check: {current['files_scanned']} files, {current['findings']} findings, {current['errors']} errors")
if failures:
    print("corpus-check: FAILED", *failures, sep="\n  ", file=sys.stderr)
    sys.exit(1)
PY
