#!/usr/bin/env bash
# Real ports benchmark (issue 13 / 16): npu-mem against Huawei ModelZoo ports
# and the upstream GPU commits they name.  Not part of cargo test or CI.
#
#   bash bench/ports.sh [PAIRS] [BIN] [OUTDIR]
#     PAIRS  default bench/ports/pairs.tsv
#     BIN    default target/release/npu-mem
#     OUTDIR default bench/ports/results
#   PORTS_MIRRORS=/work/.mirror   where the bare mirrors live (<owner>+<name>/repo)
#   PORTS_KEEP=DIR                keep the materialised trees (orig/port/fixed) in DIR
#   PORTS_ONLY=ModelA,ModelB      run only these pairs
#
# Needs git and python3 (standard library only); no network.  A missing mirror
# or commit is reported with the command that gets it.
set -euo pipefail
cd "$(dirname "$0")/.."
PAIRS=${1:-bench/ports/pairs.tsv}
BIN=${2:-target/release/npu-mem}
OUT=${3:-bench/ports/results}
command -v python3 >/dev/null || { echo "ports: python3 is needed" >&2; exit 2; }
[ -x "$BIN" ] || { echo "ports: no npu-mem binary at $BIN (cargo build --release)" >&2; exit 2; }
echo "ports: npu-mem $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%FT%TZ)" >&2
exec python3 bench/ports/measure.py "$PAIRS" "$BIN" --out "$OUT" \
  --mirrors "${PORTS_MIRRORS:-/work/.mirror}" ${PORTS_KEEP:+--keep "$PORTS_KEEP"} ${PORTS_ONLY:+--only "$PORTS_ONLY"}
