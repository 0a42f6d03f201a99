#!/usr/bin/env bash
# Runs the editor snippets of docs/integrations.md in real editors, headless, against
# `idemlint lsp`, and checks that each starts the server and shows its diagnostics for
# examples/kotlin/ChargeRetry.kt (key-in-retry-scope at 12:23):
# - Neovim: the plugin-free snippet ("Without nvim-lspconfig"), in the Debian
#   package's Neovim (0.7.2 on Debian 12);
# - Emacs: the eglot snippet, in Debian's emacs-nox with elpa-eglot (Emacs 28), on a Java
#   file (Emacs 28 has no Kotlin mode).
# The snippets are read from docs/integrations.md, so what is tested is what the page shows.
# Fails (exit 1) when an editor is missing: .ci/run installs them (apt-get).
# IDEMLINT_BIN: the binary to put on PATH as `idemlint` (default target/release/idemlint).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
bin=${IDEMLINT_BIN:-$repo/target/release/idemlint}
[ -x "$bin" ] || { echo "no idemlint binary at $bin (cargo build --release)" >&2; exit 1; }
work=${CARGO_TARGET_DIR:-$repo/target}/editor-test
rm -rf "$work"
mkdir -p "$work/bin" "$work/project"
ln -s "$bin" "$work/bin/idemlint"
export PATH="$work/bin:$PATH"
cp examples/kotlin/ChargeRetry.kt examples/java/RefundClient.java "$work/project/"

# The fenced block that follows the line containing $1 in docs/integrations.md.
snippet() {
  python3 - "$1" <<'PY'
import sys
text = open("docs/integrations.md").read()
after = text.split(sys.argv[1], 1)[1]
print(after.split("```", 2)[1].split("\n", 1)[1], end="")
PY
}

fail() { echo "FAILED: $*" >&2; exit 1; }
passed=0

echo "== Neovim: $(nvim --version 2>/dev/null | head -1 || echo missing)"
command -v nvim >/dev/null || fail "nvim is not installed (Debian: apt-get install neovim)"
snippet 'runs in Neovim 0.7.2):' >"$work/nvim-snippet.lua"
(
  cd "$work/project"
  IDEMLINT_EDITOR_OUT=$work/nvim.out timeout 90 nvim --headless --clean \
    --cmd "luafile $work/nvim-snippet.lua" \
    -c "luafile $repo/tests/editors/nvim_driver.lua" ChargeRetry.kt
) || fail "Neovim got no diagnostics"
cat "$work/nvim.out"
grep -q '^12:23 key-in-retry-scope ERROR ' "$work/nvim.out" || fail "Neovim: no key-in-retry-scope at 12:23"
grep -q '^client idemlint$' "$work/nvim.out" || fail "Neovim: the idemlint client is not attached"
passed=$((passed + 1))

echo "== Emacs eglot: $(emacs --version 2>/dev/null | head -1 || echo missing)"
command -v emacs >/dev/null || fail "emacs is not installed (Debian: apt-get install emacs-nox elpa-eglot)"
snippet '### Emacs with eglot' >"$work/eglot-snippet.el"
(
  cd "$work/project"
  IDEMLINT_SNIPPET=$work/eglot-snippet.el IDEMLINT_FILE=$work/project/RefundClient.java \
    IDEMLINT_EDITOR_OUT=$work/eglot.out timeout 120 emacs --batch -Q \
    -l "$repo/tests/editors/eglot_driver.el"
) || fail "Emacs eglot got no diagnostics"
cat "$work/eglot.out"
grep -q '^34:38 eglot-error idemlint \[key-in-callback-retry\]' "$work/eglot.out" ||
  fail "eglot: no key-in-callback-retry diagnostic at 34:38"
grep -q '^server idemlint lsp$' "$work/eglot.out" || fail "eglot did not start \`idemlint lsp\`"
passed=$((passed + 1))

echo "editors: $passed passed, 0 failed"
