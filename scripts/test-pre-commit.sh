#!/usr/bin/env bash
# Tests .pre-commit-hooks.yaml with the real pre-commit (PyPI, pinned in
# tests/pre_commit/requirements.txt): in a throw-away git repository with one bad and one
# good Kotlin file, `pre-commit try-repo <this repository> idemlint --files …` must fail
# on the bad file (printing the finding) and pass on the good one.
#
# How it works:
# - try-repo clones HEAD of the repository it is given, so the working tree (tracked and
#   untracked, not ignored files) is copied into a scratch git repository and committed
#   there; try-repo is pointed at that copy.
# - `language: rust` makes pre-commit run `cargo install --bins --root <env> --path .` in
#   its clone, with CARGO_HOME set to that environment, so cargo's usual download cache is
#   not used. To work offline, the locked dependencies are vendored from the local cache
#   (`cargo vendor --offline`; online from crates.io only when the cache lacks some), and
#   a `.cargo/config.toml` above pre-commit's temporary store replaces crates.io with that
#   directory (`cargo install --path` reads configuration from the package directory
#   upwards). TMPDIR points pre-commit's store below that file.
# - CARGO_TARGET_DIR (passed through by pre-commit) is a directory kept between runs, so
#   only the first run compiles the dependencies in release mode. The release binary the
#   installs leave there (`target/pre-commit-build/release/idemlint`) is the one release
#   build `.ci/run` makes; its later steps run that binary.
# - Then the README's own `.pre-commit-config.yaml` snippet, as written except for the
#   repository URL (pointed at the snapshot, whose branch is `main`), must run the hook
#   with `pre-commit run` (pass on the good file, with only the Kotlin file passed to the
#   hook; fail on the bad one); with it, a staged file whose retry helper lives in a
#   committed, unchanged file must fail the hook (the whole repository is indexed, only the
#   staged file reported; no new build), and `pre-commit autoupdate` must pin its
#   `rev: main` to the snapshot's commit SHA, as the README says.
# Skips (exit 0, with a message) only when no Python 3 is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
  echo "SKIPPED: pre-commit hook test: no Python 3 ('$python') on PATH"
  exit 0
fi

target=${CARGO_TARGET_DIR:-$repo/target}
work=$target/pre-commit-test
build=$target/pre-commit-build
rm -rf "$work"
mkdir -p "$work/tmp/.cargo" "$work/hook-repo" "$work/project" "$build"

echo "== pre-commit: virtualenv"
if ! "$python" -m venv "$work/venv"; then
  echo "error: '$python -m venv' failed; install the venv module (Debian: python3-venv)" >&2
  exit 1
fi
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  -r tests/pre_commit/requirements.txt
pre_commit=$work/venv/bin/pre-commit
"$pre_commit" --version

git_commit() {
  git -c user.name=idemlint-test -c user.email=idemlint-test@example.invalid \
    -c commit.gpgsign=false commit --quiet --no-verify "$@"
}

echo "== pre-commit: snapshot of the working tree as a git repository"
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf - | tar -xf - -C "$work/hook-repo"
(
  cd "$work/hook-repo"
  # The branch the README's snippet names (`rev: main`).
  git init --quiet --initial-branch=main
  git add -A
  git_commit -m "snapshot for the pre-commit hook test"
)

echo "== pre-commit: vendoring the locked dependencies for an offline cargo install"
if ! (cd "$work/hook-repo" && cargo vendor --quiet --locked --offline "$work/vendor" >/dev/null); then
  echo "   the local cargo cache lacks some crates; vendoring from crates.io instead"
  (cd "$work/hook-repo" && cargo vendor --quiet --locked "$work/vendor" >/dev/null)
fi
cat >"$work/tmp/.cargo/config.toml" <<EOF
[source.crates-io]
replace-with = "idemlint-test-vendored"

[source.idemlint-test-vendored]
directory = "$work/vendor"

[net]
offline = true
EOF

echo "== pre-commit: a throw-away project"
cd "$work/project"
git init --quiet
cat >Billing.kt <<'EOF'
import java.util.UUID

suspend fun charge(api: Api): Charge =
    retryOnTransient { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }
EOF
cat >BillingFixed.kt <<'EOF'
import java.util.UUID

suspend fun charge(api: Api): Charge {
    val idempotencyKey = UUID.randomUUID().toString()
    return retryOnTransient { api.createCharge(idempotencyKey = idempotencyKey) }
}
EOF
printf '# notes\n' >README.md
git add -A
git_commit -m "project"

# CARGO_NET_OFFLINE makes the install fail rather than download, should the vendored
# sources not be picked up.
try_repo() {
  TMPDIR=$work/tmp CARGO_TARGET_DIR=$build CARGO_NET_OFFLINE=true \
    "$pre_commit" try-repo "$work/hook-repo" idemlint --color=never "$@"
}

fail() {
  echo "FAILED: $*" >&2
  exit 1
}

echo "== pre-commit: the bad file fails the hook (first run builds idemlint)"
start=$(date +%s)
set +e
try_repo --files Billing.kt >"$work/bad.log" 2>&1
code=$?
set -e
echo "   try-repo with cargo install took $(($(date +%s) - start)) s"
cat "$work/bad.log"
[ "$code" -eq 1 ] || fail "expected pre-commit to exit 1 on Billing.kt, got $code"
grep -q 'idemlint.*Failed' "$work/bad.log" || fail "the hook was not reported as Failed"
grep -q 'key-in-retry-scope' "$work/bad.log" || fail "the finding was not printed"
grep -q 'Billing.kt:4' "$work/bad.log" || fail "the finding does not point at Billing.kt line 4"

echo "== pre-commit: the README's snippet as written (rev: main)"
"$python" - "$repo/README.md" "$work/hook-repo" >.pre-commit-config.yaml <<'PY'
import sys
text = open(sys.argv[1]).read()
block = [b for b in text.split("```yaml\n")[1:] if "pre-commit-config" in b][0].split("```")[0]
print(block.replace("https://github.com/idemlint/idemlint", sys.argv[2]), end="")
PY
cat .pre-commit-config.yaml
grep -q '^    rev: main ' .pre-commit-config.yaml || fail "the README's snippet does not say rev: main"
git add .pre-commit-config.yaml
git_commit -m "the README's pre-commit configuration"
# One store for the runs below: the hook is installed (built) once for both.
hooks() {
  PRE_COMMIT_HOME=$work/tmp/store TMPDIR=$work/tmp CARGO_TARGET_DIR=$build CARGO_NET_OFFLINE=true \
    "$pre_commit" "$@"
}

echo "== pre-commit: the good file passes; other file types are not passed to the hook"
start=$(date +%s)
set +e
hooks run --color=never --verbose --files BillingFixed.kt README.md >"$work/good.log" 2>&1
code=$?
set -e
echo "   pre-commit run with cargo install took $(($(date +%s) - start)) s"
cat "$work/good.log"
[ "$code" -eq 0 ] || fail "expected pre-commit to exit 0 on BillingFixed.kt, got $code"
grep -q 'idemlint.*Passed' "$work/good.log" || fail "the hook was not reported as Passed"
# --verbose shows idemlint's summary: only the Kotlin file reached it (types_or).
grep -q 'in 1 file checked' "$work/good.log" ||
  fail "idemlint did not check exactly the one Kotlin file"
if grep -q 'README.md' "$work/good.log"; then fail "README.md was passed to idemlint"; fi

echo "== pre-commit: the README's configuration fails on the bad file"
set +e
hooks run --color=never --files Billing.kt >"$work/readme.log" 2>&1
code=$?
set -e
cat "$work/readme.log"
[ "$code" -eq 1 ] || fail "expected the README's configuration to fail on Billing.kt, got $code"
grep -q 'key-in-retry-scope' "$work/readme.log" || fail "the README's configuration did not run the hook"

echo "== pre-commit: a staged file whose retry helper is in an unchanged, committed file"
# keepTrying is no catalogue name: only its body, in Retry.kt, says that it retries.
cat >Retry.kt <<'EOF'
fun <T> keepTrying(times: Int, block: () -> T): T {
    var last: Exception? = null
    repeat(times) {
        try {
            return block()
        } catch (e: Exception) {
            last = e
        }
    }
    throw last!!
}
EOF
git add Retry.kt
git_commit -m "retry helper"
cat >Charge.kt <<'EOF'
import java.util.UUID

fun charge(api: Api) =
    keepTrying(3) { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }
EOF
git add Charge.kt
# `pre-commit run` without --files: the staged files, here Charge.kt only.
set +e
hooks run --color=never --verbose >"$work/helper.log" 2>&1
code=$?
set -e
cat "$work/helper.log"
[ "$code" -eq 1 ] || fail "expected the staged Charge.kt to fail the hook (helper in Retry.kt), got $code"
grep -q 'Charge.kt:4' "$work/helper.log" || fail "the finding in Charge.kt (line 4) was not reported"
grep -q 'in 1 file checked' "$work/helper.log" || fail "idemlint did not report exactly the one staged file"
# Retry.kt is named in the message (the helper's line), never as a finding's location.
if grep -q '\[Retry.kt:' "$work/helper.log"; then fail "the unchanged Retry.kt was reported on"; fi
git reset --quiet -- Charge.kt
rm Charge.kt

echo "== pre-commit autoupdate"
hooks autoupdate --color=never >"$work/autoupdate.log" 2>&1 || { cat "$work/autoupdate.log"; fail "pre-commit autoupdate failed"; }
cat "$work/autoupdate.log"
head=$(git -C "$work/hook-repo" rev-parse HEAD)
grep -q "^    rev: $head" .pre-commit-config.yaml ||
  fail "pre-commit autoupdate did not pin rev to the commit of main ($head): $(grep rev: .pre-commit-config.yaml)"

echo "pre-commit: 5 passed, 0 failed (release binary: $build/release/idemlint)"
