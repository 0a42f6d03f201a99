#!/usr/bin/env bash
# Peak memory per MB of input, per language: generates one source file of each size in
# $SIZES (MB, default "1 4 8") for Kotlin, Java and Rust (generated here, never
# committed), runs `idemlint check --no-prefilter` on it (so it is parsed, lowered and
# checked), and prints a Markdown table: language, MB, wall seconds, peak RSS (MiB) and
# peak RSS per MB of input. The last rows check that a file over the size limit (and a
# dense one under it) are refused in `errors` quickly and cheaply.
#
# usage: bench/memory.sh           env: IDEMLINT (binary; default: build release),
#                                       SIZES ("1 4 8"), WORK (scratch folder)
# Needs python3 and GNU time at /usr/bin/time. Measured, never asserted.
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
SIZES=${SIZES:-1 4 8}
WORK=${WORK:-$(mktemp -d /tmp/idemlint-mem.XXXXXX)}
mkdir -p "$WORK"
[ -x /usr/bin/time ] || { echo "need GNU time at /usr/bin/time (Debian package \`time\`)" >&2; exit 2; }
if [ -z "${IDEMLINT:-}" ]; then
  (cd "$REPO" && cargo build --release --quiet)
  IDEMLINT=$REPO/target/release/idemlint
fi

gen() { # lang MB -> path
  python3 - "$1" "$2" "$WORK" <<'PY'
import sys
lang, mb, work = sys.argv[1], float(sys.argv[2]), sys.argv[3]
target = int(mb * (1 << 20))
if lang == "kt":
    head = "import java.util.UUID\n"
    unit = lambda i: (f"fun helper{i}(a: Int, b: String): String {{\n"
                      f"    val idempotencyKey = \"order-$a-$b-{i}\"\n"
                      f"    return listOf(a, b).joinToString(\",\") + idempotencyKey\n}}\n")
    tail = ""
elif lang == "java":
    head = "import java.util.UUID;\nclass Big {\n"
    unit = lambda i: (f"  String helper{i}(int a, String b) {{\n"
                      f"    String idempotencyKey = \"order-\" + a + \"-\" + b + \"-{i}\";\n"
                      f"    return java.util.List.of(a, b).toString() + idempotencyKey;\n  }}\n")
    tail = "}\n"
else:
    head = "use uuid::Uuid;\n"
    unit = lambda i: (f"fn helper{i}(a: u32, b: &str) -> String {{\n"
                      f"    let idempotency_key = format!(\"order-{{}}-{{}}-{i}\", a, b);\n"
                      f"    vec![a.to_string(), b.to_string()].join(\",\") + &idempotency_key\n}}\n")
    tail = ""
parts, n, i = [head], len(head), 0
while n < target:
    s = unit(i); parts.append(s); n += len(s); i += 1
parts.append(tail)
path = f"{work}/Big{mb:g}.{lang}"
open(path, "w").write("".join(parts))
print(path)
PY
}

measure() { # path [args...] -> "seconds peak_kib"
  local f=$1; shift
  /usr/bin/time -f "%e %M" -o "$WORK/time" "$IDEMLINT" check "$f" --format short "$@" >/dev/null 2>&1 || true
  cat "$WORK/time" | tail -1
}

echo "| language | MB | wall s | peak MiB | peak MiB per MB |"
echo "|---|---:|---:|---:|---:|"
for lang in kt java rs; do
  for mb in $SIZES; do
    f=$(gen "$lang" "$mb")
    read -r secs kib < <(measure "$f" --no-prefilter --max-file-size 1GiB)
    python3 -c "import sys; s,k,mb=float(sys.argv[1]),int(sys.argv[2]),float(sys.argv[3]); print(f'| {sys.argv[4]} | {mb:g} | {s:.2f} | {k/1024:.0f} | {k/1024/mb:.0f} |')" "$secs" "$kib" "$mb" "$lang"
    rm -f "$f"
  done
done

# Refusals: a 20 MB file over the default 10 MiB limit, and a 9.5 MB file of one-character
# tokens (which counts as 4 bytes per token).
python3 - "$WORK" <<'PY'
import sys
w = sys.argv[1]
open(f"{w}/Over.kt", "w").write("val x = 1\n" * (2 << 20))
open(f"{w}/Dense.kt", "w").write("val idempotencyKey = listOf(" + "1," * 5000000 + "1)\n")
PY
for f in Over.kt Dense.kt; do
  read -r secs kib < <(measure "$WORK/$f")
  echo "| refused: $f (default limit) | $(( $(stat -c %s "$WORK/$f") >> 20 )) | $secs | $(( kib / 1024 )) | - |"
done
rm -rf "$WORK"
