# The set-up shared by the bench scripts that measure one npu-mem build.
# Sourced (`. "$(dirname "$0")/lib.sh"`), it sets HERE (the repository), BIN
# (the build to measure: $BIN if given, else the release build, built now),
# made absolute because scans may run in another directory, and WORK (a
# temporary directory, removed on exit).
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -z "${BIN:-}" ]; then
    BIN="$HERE/target/release/npu-mem"
    (cd "$HERE" && cargo build --release --quiet)
fi
BIN="$(realpath "$BIN")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
