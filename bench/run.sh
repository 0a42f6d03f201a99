#!/usr/bin/env bash
# One command for the side-by-side benchmark of BENCHMARKS.md:
#   1. builds the corpus: six public repositories at fixed commits, extracted as plain
#      trees into $WORK/corpus (from git directories under $MIRRORS, as the session's
#      `fetch` tool leaves them: $MIRRORS/<owner>+<name>/repo; a bare `<name>.git` or a
#      clone `<name>/.git` works too). A commit missing from a snapshot is replaced by the
#      snapshot's HEAD, and $WORK/corpus/COMMITS records what was used;
#   2. installs the peers from PyPI into a throw-away virtualenv ($WORK/venv): semgrep and
#      ast-grep-cli (versions pinned below, as in the shared baseline);
#   3. builds idemlint (release) and times idemlint (default and --no-prefilter), Semgrep
#      (-j 1, its fastest setting on 2 cores) and ast-grep (default threads) on the same
#      files, at three corpus sizes, alternating the tools run by run;
#   4. prints a Markdown table: files, MB, median wall seconds, median peak RSS (MiB),
#      MB/s, and each tool's time as a multiple of idemlint's.
#
# usage: bench/run.sh [RUNS]            (RUNS timed runs per cell after one warm-up; default 5)
# env:   MIRRORS  where the git directories are (default /work/.mirror)
#        WORK     scratch folder (default: a new /tmp/idemlint-bench.*; reused when given)
#        IDEMLINT an idemlint binary to use instead of building one
#        SIZES    "S M L" (default) or a subset
# Needs git, python3 (venv), GNU time at /usr/bin/time, cargo. Speed is measured, never
# asserted; the machine is shared, so compare ratios measured in one sitting.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${1:-5}
MIRRORS=${MIRRORS:-/work/.mirror}
WORK=${WORK:-$(mktemp -d /tmp/idemlint-bench.XXXXXX)}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
CORPUS=$WORK/corpus
VENV=${VENV:-$WORK/venv}
SEMGREP_VERSION=1.185.0
ASTGREP_VERSION=0.51.1
[ -x /usr/bin/time ] || { echo "need GNU time at /usr/bin/time (Debian package \`time\`)" >&2; exit 2; }

REPOS=(
  "retrofit square/retrofit 0b118105fe8436791436b8bc9c95b9aa2cfd3bdd"
  "okhttp square/okhttp 1682d9bac8c03dffde2969b0b74d47649d0dbb52"
  "coroutines Kotlin/kotlinx.coroutines 792ac67bdcd5592e5764753e623a9e8c6e4bcb29"
  "spring spring-projects/spring-framework 91eb42645e26a7ef9382b4a655bcefe5c8682fee"
  "tokio tokio-rs/tokio ea91b33ca57ff0581b38e735cc108f831bccbdaa"
  "cargo rust-lang/cargo af373f761aa4e42b093c2e453078fd73c8ce54dd"
)

git_dir_of() { # owner/name -> a git directory, or nothing
  local full=$1 name=${1#*/}
  for d in "$MIRRORS/${full/\//+}/repo" "$MIRRORS/${full/\//+}" "$MIRRORS/$name.git" "$MIRRORS/$name/.git" "$MIRRORS/$name"; do
    if git --git-dir="$d" rev-parse --git-dir >/dev/null 2>&1; then echo "$d"; return; fi
  done
}

echo "== corpus in $CORPUS"
if [ ! -f "$CORPUS/COMMITS" ]; then
  rm -rf "$CORPUS"; mkdir -p "$CORPUS"
  for entry in "${REPOS[@]}"; do
    read -r folder full commit <<<"$entry"
    gd=$(git_dir_of "$full")
    [ -n "$gd" ] || { echo "no git directory for $full under $MIRRORS (fetch it first)" >&2; exit 2; }
    used=$commit
    if ! git --git-dir="$gd" cat-file -e "$commit^{commit}" 2>/dev/null; then
      used=$(git --git-dir="$gd" rev-parse HEAD)
      echo "   $full: $commit is not in the snapshot; using HEAD $used" >&2
    fi
    mkdir -p "$CORPUS/$folder"
    git --git-dir="$gd" archive "$used" | tar -x -C "$CORPUS/$folder"
    echo "$folder $full $used" >> "$CORPUS/COMMITS.part"
  done
  # Semgrep skips test/ folders unless the project root has its own ignore file.
  : > "$CORPUS/.semgrepignore"
  mv "$CORPUS/COMMITS.part" "$CORPUS/COMMITS"
fi
cat "$CORPUS/COMMITS"

# The peer rules are the shared baseline's (../shared/bench/peers), read in place.
PEERS="${PEERS:-$REPO/../shared/bench/peers}"
[ -f "$PEERS/semgrep-rules.yaml" ] || { echo "peer rules not found in $PEERS (set PEERS=...)" >&2; exit 2; }
echo "== peers in $VENV"
if [ ! -x "$VENV/bin/semgrep" ] || [ ! -x "$VENV/bin/ast-grep" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "semgrep==$SEMGREP_VERSION" "ast-grep-cli==$ASTGREP_VERSION" \
    || "$VENV/bin/pip" install -q semgrep ast-grep-cli
fi
SG_VERSION=$("$VENV/bin/semgrep" --version 2>/dev/null | tail -n 1)
AG_VERSION=$("$VENV/bin/ast-grep" --version | awk '{print $2}')

echo "== idemlint"
if [ -z "${IDEMLINT:-}" ]; then
  cargo build --release --quiet --manifest-path "$REPO/Cargo.toml" --bin idemlint
  IDEMLINT=${CARGO_TARGET_DIR:-$REPO/target}/release/idemlint
fi
"$IDEMLINT" --version

SG=("$VENV/bin/semgrep" scan --config "$PEERS/semgrep-rules.yaml" --metrics=off
    --disable-version-check --max-target-bytes=0 --project-root "$CORPUS" -q --json -j 1)
AG=("$VENV/bin/ast-grep" scan --rule "$PEERS/astgrep-rules.yml" --json=stream)
IL=("$IDEMLINT" check --format json)
ILN=("$IDEMLINT" check --format json --no-prefilter)

declare -A SIZE_DIRS=(
  [S]="retrofit okhttp"
  [M]="retrofit okhttp coroutines tokio cargo"
  [L]="retrofit okhttp coroutines spring tokio cargo"
)
TMP=$(mktemp -d); trap 'rm -rf "$TMP"' EXIT
median() { sort -n | awk '{a[NR]=$1} END{if(NR==0){print "NA"} else if(NR%2){print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }
srcfind() { find "$@" -type f \( -name '*.java' -o -name '*.kt' -o -name '*.kts' -o -name '*.rs' \) -print0; }

printf '\n| size | repositories | files | MB | tool | wall s (median) | peak MiB | MB/s | × idemlint |\n'
printf '|---|---|---:|---:|---|---:|---:|---:|---:|\n'
for size in ${SIZES:-S M L}; do
  dirs=(); for d in ${SIZE_DIRS[$size]}; do dirs+=("$CORPUS/$d"); done
  files=$(srcfind "${dirs[@]}" | tr -cd '\0' | wc -c)
  bytes=$(srcfind "${dirs[@]}" | xargs -0 cat | wc -c)
  mb=$(awk -v b="$bytes" 'BEGIN{printf "%.1f", b/1e6}')
  tools=(idemlint no-prefilter semgrep ast-grep)
  for t in "${tools[@]}"; do : > "$TMP/$t"; done
  cmd_of() { # sets CMD to tool $1's command line
    case $1 in
      idemlint) CMD=("${IL[@]}" "${dirs[@]}") ;;
      no-prefilter) CMD=("${ILN[@]}" "${dirs[@]}") ;;
      semgrep) CMD=("${SG[@]}" "${dirs[@]}") ;;
      ast-grep) CMD=("${AG[@]}" "${dirs[@]}") ;;
    esac
  }
  # Warm-up (also checks that every tool runs), then alternating timed runs.
  for t in "${tools[@]}"; do cmd_of "$t"; "${CMD[@]}" > "$TMP/out-$t" 2>>"$TMP/err" || true; done
  for _ in $(seq "$RUNS"); do
    for t in "${tools[@]}"; do
      cmd_of "$t"
      /usr/bin/time -f '%e %M' -o "$TMP/one" "${CMD[@]}" > /dev/null 2>>"$TMP/err" || true
      tail -n 1 "$TMP/one" >> "$TMP/$t"
    done
  done
  base=$(cut -d' ' -f1 "$TMP/idemlint" | median)
  for t in "${tools[@]}"; do
    w=$(cut -d' ' -f1 "$TMP/$t" | median)
    m=$(cut -d' ' -f2 "$TMP/$t" | median | awk '{printf "%.0f", $1/1024}')
    rate=$(awk -v mb="$mb" -v w="$w" 'BEGIN{ if (w > 0) printf "%.0f", mb/w; else print "-" }')
    ratio=$(awk -v w="$w" -v b="$base" 'BEGIN{ if (b > 0) printf "%.1f", w/b; else print "-" }')
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$size" "${SIZE_DIRS[$size]// /, }" "$files" "$mb" "$t" "$w" "$m" "$rate" "$ratio"
  done
done
echo
echo "tools: $("$IDEMLINT" --version), semgrep $SG_VERSION, ast-grep $AG_VERSION; $(nproc) cores; median of $RUNS runs after a warm-up; $(date -u '+%Y-%m-%d %H:%M UTC')"
if [ -s "$TMP/err" ]; then echo; echo "stderr of the tools (first lines):"; head -n 5 "$TMP/err"; fi
