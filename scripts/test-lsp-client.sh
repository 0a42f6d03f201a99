#!/usr/bin/env bash
# Runs tests/lsp_client (pytest + pytest-lsp, a pygls client) against `idemlint lsp`, and
# test_report_formats.py there (the JUnit, Checkstyle and GitLab reports read back by
# junitparser, an XML parser and as JSON).
#
# Creates a throw-away virtualenv under the cargo target directory, installs the pinned
# packages of tests/lsp_client/requirements.txt from PyPI, builds the debug binary and runs
# pytest. Skips (exit 0, with a message) only when no Python 3 is installed.
#
#   scripts/test-lsp-client.sh [PYTEST-ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

python=${PYTHON:-python3}
if ! command -v "$python" >/dev/null 2>&1; then
  echo "SKIPPED: LSP client tests (pytest-lsp): no Python 3 ('$python') on PATH"
  exit 0
fi

target=${CARGO_TARGET_DIR:-$repo/target}
venv=$target/lsp-client-venv
rm -rf "$venv"
if ! "$python" -m venv "$venv"; then
  echo "error: '$python -m venv' failed; install the venv module (Debian: python3-venv)" >&2
  exit 1
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  -r tests/lsp_client/requirements.txt

# The server under test: IDEMLINT_BIN when set (.ci/run: its release build), else a
# debug build.
if [ -z "${IDEMLINT_BIN:-}" ]; then
  cargo build --quiet --bin idemlint
  export IDEMLINT_BIN=$target/debug/idemlint
fi

# Each reply is awaited with a 30 s timeout inside the tests; this bounds the whole run.
timeout 600 "$venv/bin/python" -m pytest tests/lsp_client -p no:cacheprovider "$@"
