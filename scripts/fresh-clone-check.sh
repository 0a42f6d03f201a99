#!/usr/bin/env bash
# The README's two commands on a fresh clone, exactly as the README writes them:
#
#   1. the install-and-run command (`cargo install --locked --path . && idemlint check examples/`),
#   2. the test command (`bash scripts/test.sh`: javac/kotlinc when missing, then
#      `cargo test --workspace --all-features`).
#
# The repository is cloned (`git clone` of this checkout's committed HEAD) into a new
# temporary directory: no sibling `../shared`, an empty CARGO_TARGET_DIR, and
# CARGO_INSTALL_ROOT in the same temporary directory so `cargo install` does not touch
# ~/.cargo/bin. Both commands are read from README.md, so the check follows the README.
#
#   scripts/fresh-clone-check.sh            # both commands (a cold release and a cold test build)
#   scripts/fresh-clone-check.sh --run-only # only the install-and-run command
#
# Exits non-zero when a command fails or the run does not report the four example
# findings the README promises. Not part of .ci/run (two cold builds exceed its time
# budget); run it before a release and after changing README.md, examples/ or the build.
set -euo pipefail

run_only=false
[ "${1:-}" = "--run-only" ] && run_only=true

src=$(cd "$(dirname "$0")/.." && pwd)
readme="$src/README.md"

# The install-and-run command: the README's indented code line that installs from `.`.
run_cmd=$(grep -E '^    cargo install --locked --path \. ' "$readme" | head -n1 | sed 's/^    //')
# The test command: the README's `bash scripts/test.sh` in backticks.
test_cmd=$(grep -oE '`bash scripts/test\.sh[^`]*`' "$readme" | head -n1 | tr -d '`')
[ -n "$run_cmd" ] || { echo "fresh-clone-check: no install-and-run command in README.md" >&2; exit 1; }
[ -n "$test_cmd" ] || { echo "fresh-clone-check: no test command in README.md" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/idemlint-fresh.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
git clone --quiet --no-hardlinks "$src" "$tmp/idemlint"
cd "$tmp/idemlint"
[ ! -e ../shared ] || { echo "fresh-clone-check: ../shared exists beside the clone" >&2; exit 1; }

export CARGO_TARGET_DIR="$tmp/target"
export CARGO_INSTALL_ROOT="$tmp/root"
export PATH="$CARGO_INSTALL_ROOT/bin:$PATH"
unset RUSTFLAGS CARGO_BUILD_TARGET_DIR
mkdir -p "$CARGO_TARGET_DIR"

echo "== fresh clone at $(git rev-parse --short HEAD) in $tmp/idemlint"
echo "== \$ $run_cmd"
set +e
bash -c "$run_cmd" >"$tmp/run.out" 2>"$tmp/run.err"
code=$?
set -e
cat "$tmp/run.out"
tail -n 3 "$tmp/run.err"
# The README: "expect four findings and exit code 1".
[ "$code" = 1 ] || { echo "fresh-clone-check: exit code $code, the README says 1" >&2; tail -n 40 "$tmp/run.err" >&2; exit 1; }
grep -q '^idemlint: 4 findings' "$tmp/run.out" \
  || { echo "fresh-clone-check: the run did not report four findings" >&2; exit 1; }
[ "$(command -v idemlint)" = "$CARGO_INSTALL_ROOT/bin/idemlint" ] \
  || { echo "fresh-clone-check: idemlint was not installed into $CARGO_INSTALL_ROOT" >&2; exit 1; }

if ! $run_only; then
  echo "== \$ $test_cmd"
  bash -c "$test_cmd" >"$tmp/test.log" 2>&1 || { tail -n 60 "$tmp/test.log" >&2; echo "fresh-clone-check: the test command failed" >&2; exit 1; }
  grep -E '^test result:' "$tmp/test.log" | awk '{p+=$4; f+=$6} END {print "tests: " p " passed, " f " failed"}'
fi
echo "fresh-clone-check: ok"
