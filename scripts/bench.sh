#!/usr/bin/env bash
# Times idemlint on a directory: full analysis vs. the parse-only floor.
#
#   scripts/bench.sh DIR [RUNS] [JOBS]
#
# Prints files, MB, wall seconds (median of RUNS, default 5), MB/s and peak RSS for
#   - parse:    idemlint check --parse-only (read + parse + lower every file)
#   - analysis: idemlint check --no-prefilter (the whole pipeline on every file)
#   - prefilter: idemlint check (the default: only files that can matter are parsed)
# and the ratio analysis/parse. JOBS defaults to the number of cores.
# Builds the release binary first. Speed is reported, never asserted.
set -euo pipefail
dir="${1:?usage: scripts/bench.sh DIR [RUNS] [JOBS]}"
runs="${2:-5}"
jobs="${3:-$(nproc)}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" --bin idemlint
bin="$root/target/release/idemlint"

files=$(find "$dir" -type f \( -name '*.rs' -o -name '*.java' -o -name '*.kt' -o -name '*.kts' \) | wc -l)
bytes=$(find "$dir" -type f \( -name '*.rs' -o -name '*.java' -o -name '*.kt' -o -name '*.kts' \) -print0 | du -cb --files0-from=- | tail -1 | cut -f1)
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')

# One timed run: prints "seconds max_rss_kb" (python3 is used for portable timing + RSS).
time_one() {
  python3 -c 'import resource, subprocess, sys, time
t = time.perf_counter()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print("%.3f %d" % (time.perf_counter() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))' "$bin" "$@"
}

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

measure() {
  local label="$1"; shift
  local secs=() rss=0
  "$bin" "$@" >/dev/null 2>&1 || true # warm the page cache
  for _ in $(seq "$runs"); do
    read -r s m < <(time_one "$@")
    secs+=("$s")
    [ "$m" -gt "$rss" ] && rss="$m"
  done
  local med
  med=$(printf '%s\n' "${secs[@]}" | median)
  printf '%-9s %7s files %8s MB %8.2f s %8.1f MB/s %7.0f MB peak RSS\n' \
    "$label" "$files" "$mb" "$med" "$(awk -v m="$mb" -v s="$med" 'BEGIN { print (s > 0) ? m / s : 0 }')" \
    "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
  echo "$med"
}

echo "idemlint $("$bin" --version | cut -d' ' -f2) on $dir, jobs=$jobs, median of $runs runs"
parse_out=$(measure parse check --parse-only --jobs "$jobs" "$dir")
full_out=$(measure analysis check --format json --no-prefilter --jobs "$jobs" "$dir")
pre_out=$(measure prefilter check --format json --jobs "$jobs" "$dir")
echo "$parse_out" | head -1
echo "$full_out" | head -1
echo "$pre_out" | head -1
parse=$(echo "$parse_out" | tail -1)
full=$(echo "$full_out" | tail -1)
awk -v f="$full" -v p="$parse" 'BEGIN { printf "analysis of every file (--no-prefilter) / parse-only = %.2fx\n", (p > 0) ? f / p : 0 }'
