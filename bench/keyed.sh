#!/usr/bin/env bash
# Projects that use idempotency keys (issue 13): idemlint default, --no-prefilter and
# --parse-only beside ast-grep, on real keyed repositories and on the bench corpus with and
# without one keyed Kotlin file (bench/keyed/Keyed.kt). Prints a Markdown table: median
# wall seconds, median peak RSS, files parsed (from `--timings`), and the ratios of default
# to ast-grep and to --parse-only, measured in one sitting with the tools alternating run
# by run. Then checks that default and --no-prefilter report the same findings on every
# input, and (with OLD=binary) that the findings equal the old binary's.
#
# usage: bench/keyed.sh [RUNS]     (default 3 timed runs per cell after one warm-up)
# env:   IDEMLINT  the binary to time (default: target/release/idemlint, built here)
#        OLD       an older binary: also timed (column "old default"), findings compared
#        EVAL      where the keyed repositories are exported (default /work/main/eval/work)
#        CORPUS    the bench corpus of bench/run.sh (e.g. $WORK/corpus); skipped if unset
#        ASTGREP   ast-grep binary (default: $VENV/bin/ast-grep, VENV as in bench/run.sh)
#        PEERS     the shared baseline's peer rules (default ../shared/bench/peers)
#        INPUTS    a subset of the input names below
# Speed is measured, never asserted; the machine is shared: compare ratios of one sitting.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-3}
EVAL=${EVAL:-/work/main/eval/work}
PEERS="${PEERS:-$REPO/../shared/bench/peers}"
ASTGREP=${ASTGREP:-${VENV:-/tmp/speedbench/venv}/bin/ast-grep}
[ -x /usr/bin/time ] || { echo "need GNU time at /usr/bin/time" >&2; exit 2; }
if [ -z "${IDEMLINT:-}" ]; then
  cargo build --release --quiet --manifest-path "$REPO/Cargo.toml" --bin idemlint
  IDEMLINT=${CARGO_TARGET_DIR:-$REPO/target}/release/idemlint
fi

declare -A IN
ORDER=()
add() { IN[$1]="$2"; ORDER+=("$1"); }
add openai-java "$EVAL/openai+openai-java"
add fineract "$EVAL/apache+fineract"
add async-stripe "$EVAL/arlyon+async-stripe"
add square-java-sdk "$EVAL/square+square-java-sdk"
add connector-service "$EVAL/juspay+connector-service"
add waqitiapp "$EVAL/anietieakpan+waqitiapp"
add google-cloud-rust "$EVAL/googleapis+google-cloud-rust"
if [ -n "${CORPUS:-}" ]; then
  add corpus "$CORPUS"
  add corpus+keyed "$CORPUS $REPO/bench/keyed"
fi
[ -n "${INPUTS:-}" ] && read -r -a ORDER <<<"$INPUTS"

TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
median() { sort -n | awk '{a[NR]=$1} END{if(NR==0){print "NA"} else if(NR%2){print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }
srcfind() { find "$@" -type f \( -name '*.java' -o -name '*.kt' -o -name '*.kts' -o -name '*.rs' \) -print0; }

tools=(default no-prefilter parse-only ast-grep)
[ -n "${OLD:-}" ] && tools+=(old)
cmd_of() { # $1 tool, rest: paths -> CMD
  local t=$1; shift
  case $t in
    default) CMD=("$IDEMLINT" check --format json "$@") ;;
    no-prefilter) CMD=("$IDEMLINT" check --format json --no-prefilter "$@") ;;
    parse-only) CMD=("$IDEMLINT" check --format json --parse-only "$@") ;;
    old) CMD=("$OLD" check --format json "$@") ;;
    ast-grep) CMD=("$ASTGREP" scan --rule "$PEERS/astgrep-rules.yml" --json=stream "$@") ;;
  esac
}

printf '| input | files | MB | parsed (default) | default s / MiB | --no-prefilter | --parse-only | ast-grep |%s default ÷ ast-grep | default ÷ parse-only | MiB per MB (default) |\n' "${OLD:+ old default |}"
printf '|---|---:|---:|---:|---:|---:|---:|---:|%s---:|---:|---:|\n' "${OLD:+---:|}"
status=0
for name in "${ORDER[@]}"; do
  read -r -a paths <<<"${IN[$name]}"
  files=$(srcfind "${paths[@]}" | tr -cd '\0' | wc -c)
  bytes=$(srcfind "${paths[@]}" | xargs -0 cat | wc -c)
  mb=$(awk -v b="$bytes" 'BEGIN{printf "%.1f", b/1e6}')
  for t in "${tools[@]}"; do : > "$TMP/$t"; cmd_of "$t" "${paths[@]}"; "${CMD[@]}" > "$TMP/out-$t" 2>/dev/null || true; done
  # (exit 1 means findings: not a failure here)
  parsed=$({ "$IDEMLINT" check --format json --timings "${paths[@]}" 2>&1 >/dev/null || true; } | sed -n 's/.* read, \([0-9]*\) parsed.*/\1/p')
  for _ in $(seq "$RUNS"); do
    for t in "${tools[@]}"; do
      cmd_of "$t" "${paths[@]}"
      /usr/bin/time -f '%e %M' -o "$TMP/one" "${CMD[@]}" > /dev/null 2>/dev/null || true
      tail -n 1 "$TMP/one" >> "$TMP/$t"
    done
  done
  declare -A W M
  for t in "${tools[@]}"; do
    W[$t]=$(cut -d' ' -f1 "$TMP/$t" | median)
    M[$t]=$(cut -d' ' -f2 "$TMP/$t" | median | awk '{printf "%.0f", $1/1024}')
  done
  cell() { printf '%s / %s' "${W[$1]}" "${M[$1]}"; }
  r_ag=$(awk -v a="${W[default]}" -v b="${W[ast-grep]}" 'BEGIN{printf "%.2f", a/b}')
  r_po=$(awk -v a="${W[default]}" -v b="${W[parse-only]}" 'BEGIN{printf "%.2f", a/b}')
  per=$(awk -v m="${M[default]}" -v mb="$mb" 'BEGIN{printf "%.1f", m/mb}')
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |%s %s | %s | %s |\n' "$name" "$files" "$mb" "$parsed" \
    "$(cell default)" "$(cell no-prefilter)" "$(cell parse-only)" "$(cell ast-grep)" \
    "${OLD:+ $(cell old) |}" "$r_ag" "$r_po" "$per"
  # Findings: default = --no-prefilter (and = the old binary's, when given).
  jq -c '.findings' "$TMP/out-default" > "$TMP/f-default" 2>/dev/null || cp "$TMP/out-default" "$TMP/f-default"
  jq -c '.findings' "$TMP/out-no-prefilter" > "$TMP/f-no-prefilter" 2>/dev/null || cp "$TMP/out-no-prefilter" "$TMP/f-no-prefilter"
  if ! cmp -s "$TMP/f-default" "$TMP/f-no-prefilter"; then
    echo "  $name: default and --no-prefilter findings DIFFER" >&2; status=1
  fi
  if [ -n "${OLD:-}" ]; then
    jq -c '.findings' "$TMP/out-old" > "$TMP/f-old" 2>/dev/null || cp "$TMP/out-old" "$TMP/f-old"
    if ! cmp -s "$TMP/f-default" "$TMP/f-old"; then
      echo "  $name: findings differ from the old binary's" >&2; status=1
    fi
  fi
  n=$(jq 'length' "$TMP/f-default" 2>/dev/null || echo "?")
  echo "  $name: $n findings (default = --no-prefilter${OLD:+ = old}: checked)" >&2
done
echo
echo "$("$IDEMLINT" --version), $("$ASTGREP" --version); $(nproc) cores; median of $RUNS runs after a warm-up; $(date -u '+%Y-%m-%d %H:%M UTC')"
exit $status
