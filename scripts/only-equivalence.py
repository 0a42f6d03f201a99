#!/usr/bin/env python3
"""`check ROOT --only FILE` against the whole run on a real repository (issue 15).

Runs idemlint once over ROOT, then with `--only FILE` for every file that has a finding
and for up to N other source files (a deterministic sample), and checks that each `--only`
run reports exactly the whole run's findings of FILE (path, line, column, rule, severity,
message). Prints one line per mismatch and a summary; exits 1 on any mismatch.

usage: scripts/only-equivalence.py IDEMLINT ROOT [N]   (N default 20)
"""
import json
import os
import subprocess
import sys


def findings(binary, root, extra):
    out = subprocess.run(
        [binary, "check", ".", "--format", "json", "--exit-zero", "--progress", "never", *extra],
        cwd=root, capture_output=True, check=False,
    )
    if out.returncode != 0:
        sys.exit(f"idemlint failed ({out.returncode}): {out.stderr.decode()[:500]}")
    return [
        (f["path"], f["line"], f["column"], f["rule"], f["severity"], f["message"])
        for f in json.loads(out.stdout)["findings"]
    ]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, root = os.path.abspath(sys.argv[1]), sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    whole = findings(binary, root, [])
    with_findings = sorted({f[0] for f in whole})
    sources = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        for f in sorted(files):
            if f.endswith((".java", ".kt", ".rs")):
                sources.append(os.path.relpath(os.path.join(d, f), root))
    others = [s for s in sources if s not in with_findings]
    step = max(1, len(others) // n) if others else 1
    sample = with_findings + others[::step][:n]
    bad = 0
    for path in sample:
        got = sorted(findings(binary, root, ["--only", path]))
        want = sorted(f for f in whole if f[0] == path)
        if got != want:
            bad += 1
            print(f"MISMATCH {path}: --only {len(got)} finding(s), whole run {len(want)}")
    print(
        f"{root}: {len(whole)} finding(s) in {len(with_findings)} file(s); "
        f"{len(sample)} files checked with --only; {bad} mismatch(es)"
    )
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
