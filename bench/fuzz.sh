#!/usr/bin/env bash
# Fuzzes `npu-mem scan` for a given time with mutated Python files, shell
# scripts, notebooks and rule packs (see bench/fuzz.rs).
#
#   bash bench/fuzz.sh [SECONDS] [fuzz options...]
#
# e.g. `bash bench/fuzz.sh 1800 --seeds /tmp/corpus/src` for half an hour with
# the benchmark corpus as extra seeds. Crashing inputs are saved under
# target/fuzz/crashes/; the exit status is 1 when there were any.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_TO_RUN="${1:-60}"
shift || true
cargo build --release --quiet --bin npu-mem --example fuzz
# Where cargo put them: CARGO_TARGET_DIR when set (a separate build directory).
TARGET="${CARGO_TARGET_DIR:-target}"
exec "$TARGET/release/examples/fuzz" --seconds "$SECONDS_TO_RUN" --bin "$TARGET/release/npu-mem" "$@"
