#!/usr/bin/env bash
# The floor under issue 15's speed target: tree-sitter's parse of the corpus
# against the same parse followed by one bare cursor walk over every node
# (bench/walk_floor.rs), on one thread, alternated in every round. Any
# analysis that looks at the whole tree costs at least the walk.
#
#   bash bench/floor.sh [ROUNDS]     (default 5; CORPUS_DIR as for bench/run.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${1:-5}"
CORPUS_DIR="${CORPUS_DIR:-/tmp/corpus}"
cargo build --release --quiet --example walk_floor
TARGET="${CARGO_TARGET_DIR:-target}"
LIST="$(mktemp)"
trap 'rm -f "$LIST"' EXIT
find "$CORPUS_DIR/src" -name '*.py' | sort >"$LIST"
"$TARGET/release/examples/walk_floor" "$LIST" "$ROUNDS" | python3 -c '
import statistics, sys
rows = [l.split() for l in sys.stdin if l.startswith("parse")]
parse = [float(r[1]) for r in rows]; walk = [float(r[3]) for r in rows]
ratios = [w / p for p, w in zip(parse, walk)]
print(f"rounds {len(rows)}, nodes per walk {rows[0][5]}")
print(f"parse median {statistics.median(parse):.3f} s, parse+walk median {statistics.median(walk):.3f} s")
print(f"(parse + walk) / parse: median {statistics.median(ratios):.3f}x (min {min(ratios):.3f}, max {max(ratios):.3f})")
'
