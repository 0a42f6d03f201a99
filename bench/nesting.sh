#!/usr/bin/env bash
# Inputs that were super-linear (issue 12 leftovers): a Kotlin class with N functions
# annotated `@Suppress("idemlint:key-in-retry-scope")` (each an unused suppression), and
# Rust macros nested D levels deep in three shapes (`vec![..]`, `format!("{}", ..)`,
# `m! { fn a() { .. } }`). Generated here, never committed; checked with --no-prefilter;
# prints a Markdown table of wall seconds and peak RSS. Measured, never asserted.
#
# usage: bench/nesting.sh     env: IDEMLINT (binary; default: build release), WORK,
#                                  COUNTS ("10000 20000 40000 80000"), DEPTHS ("400 1600 4800")
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
COUNTS=${COUNTS:-10000 20000 40000 80000}
DEPTHS=${DEPTHS:-400 1600 4800}
WORK=${WORK:-$(mktemp -d /tmp/idemlint-nesting.XXXXXX)}
mkdir -p "$WORK"
[ -x /usr/bin/time ] || { echo "need GNU time at /usr/bin/time" >&2; exit 2; }
if [ -z "${IDEMLINT:-}" ]; then
  (cd "$REPO" && cargo build --release --quiet)
  IDEMLINT=$REPO/target/release/idemlint
fi
python3 - "$WORK" "$COUNTS" "$DEPTHS" <<'PY'
import sys
work, counts, depths = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
for n in map(int, counts):
    body = "".join(f'    @Suppress("idemlint:key-in-retry-scope")\n    fun f{i}(a: Int): Int = a + {i}\n' for i in range(n))
    open(f"{work}/Supp{n}.kt", "w").write(f"class Big {{\n{body}}}\n")
for d in map(int, depths):
    shapes = {"vec": ("uuid::Uuid::new_v4()", "vec![{}]"),
              "format": ("x", 'format!("{{}}", {})'),
              "items": ("x", "m! {{ fn a() {{ {} }} }}")}
    for name, (inner, wrap) in shapes.items():
        for _ in range(d):
            inner = wrap.format(inner)
        text = f"fn f() {{ let idempotency_key = {inner}; }}\n" if name != "items" else inner + "\n"
        open(f"{work}/{name}{d}.rs", "w").write(text)
PY
measure() {
  /usr/bin/time -f "%e %M" -o "$WORK/time" "$IDEMLINT" check "$1" --no-prefilter --format short >/dev/null 2>&1 || true
  read -r s kib < <(tail -1 "$WORK/time")
  echo "$s $((kib / 1024))"
}
echo "| input | size | wall s | peak MiB |"
echo "|---|---:|---:|---:|"
for n in $COUNTS; do
  read -r s m < <(measure "$WORK/Supp$n.kt")
  echo "| Kotlin class, @Suppress(\"idemlint:…\") functions | $n | $s | $m |"
done
for shape in vec format items; do
  for d in $DEPTHS; do
    read -r s m < <(measure "$WORK/$shape$d.rs")
    echo "| Rust nested macros: $shape | $d levels | $s | $m |"
  done
done
