#!/usr/bin/env bash
# The pass-1 cache directory (issue 15): for each input, a run without the cache, a cold
# run with an empty `--cache-dir` (it writes every entry), and warm runs with the filled
# one. Prints a Markdown table of median wall seconds and peak RSS (MiB), the entries
# read back (from `--timings`), the cache's size on disk, and checks that the three kinds
# of run report the same findings.
#
# usage: bench/cache.sh [RUNS] [DIR...]    (default 3 warm runs; inputs default to five
#        keyed repositories under $EVAL)
# env:   IDEMLINT  the binary (default: target/release/idemlint, built here)
#        EVAL      where the keyed repositories are exported (default /work/main/eval/work)
# Speed is measured, never asserted; the machine is shared.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-3}
shift || true
EVAL=${EVAL:-/work/main/eval/work}
[ -x /usr/bin/time ] || { echo "need GNU time at /usr/bin/time" >&2; exit 2; }
if [ -z "${IDEMLINT:-}" ]; then
  cargo build --release --quiet --manifest-path "$REPO/Cargo.toml" --bin idemlint
  IDEMLINT=${CARGO_TARGET_DIR:-$REPO/target}/release/idemlint
fi
if [ $# -gt 0 ]; then
  inputs=("$@")
else
  inputs=()
  for r in openai+openai-java apache+fineract arlyon+async-stripe square+square-java-sdk anietieakpan+waqitiapp; do
    [ -d "$EVAL/$r" ] && inputs+=("$EVAL/$r")
  done
fi
[ ${#inputs[@]} -gt 0 ] || { echo "no input: export the keyed repositories first (eval/materialize.py)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run LABEL DIR [ARGS...]: one timed run; appends "seconds MiB" to $tmp/LABEL.times.
run() {
  local label=$1 dir=$2
  shift 2
  /usr/bin/time -f '%e %M' -o "$tmp/time" "$IDEMLINT" check "$dir" --format json --exit-zero \
    --progress never --timings "$@" >"$tmp/$label.json" 2>"$tmp/$label.err"
  awk '{printf "%s %.0f\n", $1, $2/1024}' "$tmp/time" >>"$tmp/$label.times"
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
same() { python3 - "$1" "$2" <<'PY'
import json, sys
a, b = (sorted((f["path"], f["line"], f["rule"], f["message"]) for f in json.load(open(p))["findings"]) for p in sys.argv[1:])
sys.exit(0 if a == b else 1)
PY
}

printf '| input | files | no cache s / MiB | cold (writes) s / MiB | warm s / MiB | warm ÷ no cache | read from cache | cache on disk | same findings |\n'
printf '|---|---|---|---|---|---|---|---|---|\n'
for dir in "${inputs[@]}"; do
  name=$(basename "$dir")
  cache="$tmp/cache-$name"
  rm -f "$tmp"/*.times
  run none "$dir"
  run cold "$dir" --cache-dir "$cache"
  for _ in $(seq "$RUNS"); do
    run none "$dir"
    run warm "$dir" --cache-dir "$cache"
  done
  files=$(sed -n 's/.*stats: \([0-9]*\) files* found.*/\1/p' "$tmp/none.err")
  hits=$(sed -n 's/.*cache: \([0-9]*\) file(s) from the cache directory.*/\1/p' "$tmp/warm.err")
  disk=$(du -sh "$cache" | cut -f1)
  ns=$(cut -d' ' -f1 "$tmp/none.times" | median); nm=$(cut -d' ' -f2 "$tmp/none.times" | median)
  cs=$(cut -d' ' -f1 "$tmp/cold.times"); cm=$(cut -d' ' -f2 "$tmp/cold.times")
  ws=$(cut -d' ' -f1 "$tmp/warm.times" | median); wm=$(cut -d' ' -f2 "$tmp/warm.times" | median)
  ratio=$(awk -v w="$ws" -v n="$ns" 'BEGIN {printf "%.2f", w / n}')
  ok=yes
  same "$tmp/none.json" "$tmp/cold.json" && same "$tmp/none.json" "$tmp/warm.json" || ok=NO
  printf '| %s | %s | %s / %s | %s / %s | %s / %s | %s | %s | %s | %s |\n' \
    "$name" "$files" "$ns" "$nm" "$cs" "$cm" "$ws" "$wm" "$ratio" "$hits" "$disk" "$ok"
done
