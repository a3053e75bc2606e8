# The set-up shared by the bench scripts that measure one npu-mem build.
# Sourced (`. "$(dirname "$0")/lib.sh"`), it sets HERE (the repository),
# TARGET (cargo's build directory: $CARGO_TARGET_DIR, relative to HERE, or
# HERE/target), BIN (the build to measure: $BIN if given, else the release
# build, built now), made absolute because scans may run in another
# directory, and WORK (a temporary directory, removed on exit).
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${CARGO_TARGET_DIR:-target}"
case "$TARGET" in /*) ;; *) TARGET="$HERE/$TARGET" ;; esac
if [ -z "${BIN:-}" ]; then
    BIN="$TARGET/release/npu-mem"
    (cd "$HERE" && cargo build --release --quiet)
fi
BIN="$(realpath "$BIN")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
