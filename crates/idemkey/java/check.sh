#!/usr/bin/env bash
# Compiles java/IdemKey.java into a temporary directory and checks it against vectors.json.
# Usage: java/check.sh [path/to/vectors.json]
# Exits 0 when every vector matches, or when no JDK is installed (it then says it skipped).
set -euo pipefail

script="${BASH_SOURCE[0]}"
case "$script" in
    */*) here="$(cd "${script%/*}" && pwd)" ;;
    *) here="$(pwd)" ;;
esac
vectors="${1:-$here/../vectors.json}"

if ! command -v javac >/dev/null 2>&1; then
    echo "skipped: no JDK (javac not found)"
    exit 0
fi
if ! command -v java >/dev/null 2>&1; then
    echo "error: javac found but java is not on PATH" >&2
    exit 1
fi

out="$(mktemp -d "${TMPDIR:-/tmp}/idemkey-java.XXXXXX")"
trap 'rm -rf "$out"' EXIT

javac --release 17 -Xlint:all -Werror -d "$out" "$here/IdemKey.java"
java -cp "$out" IdemKey "$vectors"
