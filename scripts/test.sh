#!/usr/bin/env bash
# The test command (README.md "Install and run"): installs what the tests compile fixed
# files with, then runs the whole test suite.
#
# tests/fix_compile.rs (the fix compile gate) compiles every fixed fixture with rustc,
# javac and kotlinc; it fails, never skips, without them. When javac or kotlinc is
# missing they are installed from Debian's packages (openjdk-17-jdk-headless, kotlin) if
# this runs as root with apt-get; otherwise this stops before the tests and names what to
# install. Exit status: cargo test's, or 1 when a prerequisite cannot be installed.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { # command, Debian package
  command -v "$1" >/dev/null 2>&1 && return 0
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "== installing $2 (provides $1, which the fix compile gate runs)"
    (apt-get update -qq && apt-get install -y -qq "$2" >/dev/null) ||
      { echo "could not install $2 (for $1)" >&2; exit 1; }
  else
    echo "the tests need $1 (Debian package $2; any JDK 17+ / Kotlin compiler on PATH will do)," >&2
    echo "and this is not root with apt-get to install it" >&2
    exit 1
  fi
}
need javac openjdk-17-jdk-headless
need kotlinc kotlin

cargo test --workspace --all-features
