#!/usr/bin/env bash
# The work of action.yml (a composite GitHub Action), run with the environment GitHub
# sets: GITHUB_ACTION_PATH (this repository at the pinned revision), GITHUB_WORKSPACE
# (the checked-out project), RUNNER_TEMP, GITHUB_OUTPUT, and the action's inputs as
# INPUT_PATHS, INPUT_FAIL_ON, INPUT_NEW_SINCE, INPUT_ANNOTATE; IDEMLINT_INSTALL_ROOT is
# where the binary is installed (and cached).
#
# 1. idemlint: taken from IDEMLINT_INSTALL_ROOT/bin when the cache restored it, else
#    `cargo install --locked --path "$GITHUB_ACTION_PATH"` there (the revision the
#    workflow pinned, with this repository's Cargo.lock).
# 2. `idemlint check PATHS --strict --format sarif` into RUNNER_TEMP/idemlint.sarif
#    (with --new-since when given); its exit code is the step's.
# 3. With INPUT_ANNOTATE=true, the same check with `--format github --exit-zero`: the
#    findings as annotations on the run and the pull request's diff.
# Outputs (GITHUB_OUTPUT): `sarif` (the log's path) and `findings` (their number).
# Exit code: idemlint's (0 clean, 1 findings at or above INPUT_FAIL_ON, 2 tool error).
set -euo pipefail

: "${GITHUB_ACTION_PATH:?set by GitHub: the action's directory}"
: "${RUNNER_TEMP:?set by GitHub: a temporary directory}"
: "${GITHUB_OUTPUT:?set by GitHub: the step's output file}"
workspace=${GITHUB_WORKSPACE:-$PWD}
root=${IDEMLINT_INSTALL_ROOT:-$RUNNER_TEMP/idemlint-bin}
fail_on=${INPUT_FAIL_ON:-warning}
case "$fail_on" in
  error | warning | note) ;;
  *)
    echo "::error title=idemlint::fail-on must be error, warning or note, not '$fail_on'"
    exit 2
    ;;
esac

bin=$root/bin/idemlint
if [ ! -x "$bin" ]; then
  echo "::group::Installing idemlint from $GITHUB_ACTION_PATH"
  cargo install --locked --quiet --path "$GITHUB_ACTION_PATH" --root "$root" --bin idemlint
  echo "::endgroup::"
fi
"$bin" --version

read -r -a paths <<<"${INPUT_PATHS:-.}"
args=(check "${paths[@]}" --strict --fail-on "$fail_on")
if [ -n "${INPUT_NEW_SINCE:-}" ]; then
  args+=(--new-since "$INPUT_NEW_SINCE")
fi

sarif=$RUNNER_TEMP/idemlint.sarif
cd "$workspace"
set +e
"$bin" "${args[@]}" --format sarif --output "$sarif"
code=$?
set -e
echo "sarif=$sarif" >>"$GITHUB_OUTPUT"
if [ -f "$sarif" ]; then
  findings=$(grep -c '"ruleId"' "$sarif" || true)
else
  findings=0
fi
echo "findings=$findings" >>"$GITHUB_OUTPUT"

if [ "${INPUT_ANNOTATE:-true}" = "true" ] && [ "$code" -ne 2 ]; then
  "$bin" "${args[@]}" --format github --exit-zero --quiet || true
fi
exit "$code"
