#!/usr/bin/env python3
"""Runs idemlint over each materialised repository (whole, so cross-file facts count) and
scores it against the labels.

- Labelled files (corpus/*.toml): a finding matches an expected defect when the rule is the
  same and the line is within +-2; recall = expected defects matched / expected defects,
  precision = findings in labelled files that match / findings in labelled files.
- Every other finding is looked up in unlabelled.toml (same repo, path and rule, line
  within +-2) and counted as tp, fp or unclassified; unlabelled precision = tp / (tp + fp).

Prints the table (per language and per kind), every miss, every false positive and every
unclassified finding. `--json FILE` also writes the raw numbers.
"""
import argparse
import collections
import json
import re
import pathlib
import subprocess
import sys
import time
import tomllib

HERE = pathlib.Path(__file__).resolve().parent
KINDS = [
    "key-in-interceptor",
    "key-in-retry-scope",
    "key-in-callback-retry",
    "unlocked-scheduled-job",
    "time-in-key",
    "interceptor-mints-key",
]
LANG = {".rs": "rust", ".java": "java", ".kt": "kotlin", ".kts": "kotlin"}


def load_corpus():
    files = []
    for f in sorted((HERE / "corpus").glob("*.toml")):
        for e in tomllib.load(open(f, "rb")).get("file", []):
            e["_manifest"] = f.name
            files.append(e)
    return files


def load_unlabelled():
    p = HERE / "unlabelled.toml"
    return tomllib.load(open(p, "rb")).get("finding", []) if p.exists() else []


def run(idemlint, tree):
    t0 = time.monotonic()
    proc = subprocess.run(
        [idemlint, "check", ".", "--format", "json", "--exit-zero", "--quiet"],
        cwd=tree,
        capture_output=True,
    )
    dt = time.monotonic() - t0
    if proc.returncode != 0:
        sys.exit(f"idemlint failed on {tree}: exit {proc.returncode}\n{proc.stderr.decode()[-2000:]}")
    return json.loads(proc.stdout), dt


def near(a, b):
    return abs(a - b) <= 2


HELPER_AT = re.compile(r"(?:from|at) ([^\s`()]+):(\d+)[);]")


def norm(p):
    return p.replace("\\", "/").removeprefix("./")


def places_of(g):
    """Where a finding says the per-attempt value is evaluated: its own (path, line), plus
    each project helper's source the message names ("`newKey()` (which returns
    `UUID.randomUUID()` from PATH:LINE)", "mints ... (`UUID.randomUUID()` at PATH:LINE;
    at PATH2:LINE2)"), in any file: labels may name either (eval/README.md)."""
    out = [(norm(g["path"]), g["line"])]
    for path, line in HELPER_AT.findall(g["message"]):
        out.append((norm(path), int(line)))
    return out


def rules_of(g):
    """The finding's rule and the rules merged into it (`also`, one finding per bug)."""
    return [g["rule"]] + [a["rule"] for a in g.get("also") or []]


def matches(g, path, x):
    return x["kind"] in rules_of(g) and any(p == path and near(l, x["line"]) for p, l in places_of(g))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--idemlint", default="target/release/idemlint")
    ap.add_argument("--work", default=str(HERE / "work"))
    ap.add_argument("--json")
    ap.add_argument("--repo", action="append", help="score only these repositories")
    args = ap.parse_args()
    idemlint = str(pathlib.Path(args.idemlint).resolve())
    corpus = load_corpus()
    unl = load_unlabelled()
    repos = sorted({e["repo"] for e in corpus})
    extra = HERE / "repos.toml"
    if extra.exists():
        repos = sorted(set(repos) | {r["repo"] for r in tomllib.load(open(extra, "rb")).get("repo", [])})
    if args.repo:
        repos = [r for r in repos if r in args.repo]

    exp_total = collections.Counter()  # (lang, kind) -> expected
    exp_hit = collections.Counter()
    fnd_total = collections.Counter()  # lang -> findings in labelled files
    fnd_ok = collections.Counter()
    misses, fps, unclassified, u_false, u_true = [], [], [], [], []
    u_tp = u_fp = 0
    u_by_rule = collections.Counter()
    seconds = {}
    errors = 0
    for repo in repos:
        tree = pathlib.Path(args.work) / repo.replace("/", "+")
        if not tree.exists():
            print(f"warning: {repo} not materialised; run eval/materialize.py", file=sys.stderr)
            continue
        report, seconds[repo] = run(idemlint, tree)
        errors += len(report.get("errors", []))
        by_path = collections.defaultdict(list)
        for f in report["findings"]:
            by_path[f["path"].replace("\\", "/")].append(f)
        labelled = {e["path"]: e for e in corpus if e["repo"] == repo}
        every = [g for gs in by_path.values() for g in gs]
        # A finding in another file whose message names a labelled line as the source it
        # reaches (a helper's mint) is scored with that labelled file.
        elsewhere = collections.defaultdict(list)
        for g in every:
            if g["path"].replace("\\", "/") in labelled:
                continue
            for p in {p for p, _ in places_of(g)}:
                if p in labelled and any(matches(g, p, x) for x in labelled[p].get("expected", [])):
                    elsewhere[p].append(g)
        placed = {id(g) for gs in elsewhere.values() for g in gs}
        for path, e in labelled.items():
            lang = e["lang"]
            got = by_path.get(path, []) + elsewhere.get(path, [])
            for x in e.get("expected", []):
                exp_total[(lang, x["kind"])] += 1
                if any(matches(g, path, x) for g in got):
                    exp_hit[(lang, x["kind"])] += 1
                else:
                    misses.append(f"{repo} {path}:{x['line']} {x['kind']}")
            for g in got:
                fnd_total[lang] += 1
                if any(matches(g, path, x) for x in e.get("expected", [])):
                    fnd_ok[lang] += 1
                else:
                    fps.append(f"{repo} {path}:{g['line']} {g['rule']}: {g['message'][:160]}")
        for path, got in sorted(by_path.items()):
            if path in labelled:
                continue
            for g in got:
                if id(g) in placed:
                    continue
                v = next(
                    (
                        u
                        for u in unl
                        if u["repo"] == repo and u["path"] == path and u["rule"] == g["rule"] and near(u["line"], g["line"])
                    ),
                    None,
                )
                u_by_rule[g["rule"]] += 1
                if v is None:
                    unclassified.append(f"{repo} {path}:{g['line']} {g['rule']}: {g['message'][:200]}")
                elif v["verdict"] == "tp":
                    u_tp += 1
                    u_true.append(f"{repo} {path}:{g['line']} {g['rule']}")
                else:
                    u_fp += 1
                    u_false.append(f"{repo} {path}:{g['line']} {g['rule']}: {v.get('reason', '')[:120]}")

    def ratio(a, b):
        return f"{a / b:.2f}" if b else "n/a"

    langs = sorted({e["lang"] for e in corpus})
    print(f"corpus: {len(corpus)} labelled files from {len({e['repo'] for e in corpus})} repositories; "
          f"{len(repos)} repositories run whole; {errors} file errors")
    print()
    print("| language | expected | found | recall | findings in labelled files | correct | precision |")
    print("|---|---|---|---|---|---|---|")
    for lang in langs + ["all"]:
        et = sum(v for (l, _), v in exp_total.items() if lang in (l, "all"))
        eh = sum(v for (l, _), v in exp_hit.items() if lang in (l, "all"))
        ft = sum(v for l, v in fnd_total.items() if lang in (l, "all"))
        fo = sum(v for l, v in fnd_ok.items() if lang in (l, "all"))
        print(f"| {lang} | {et} | {eh} | {ratio(eh, et)} | {ft} | {fo} | {ratio(fo, ft)} |")
    print()
    print("| kind | expected | found | recall |")
    print("|---|---|---|---|")
    for k in KINDS:
        et = sum(v for (_, kk), v in exp_total.items() if kk == k)
        eh = sum(v for (_, kk), v in exp_hit.items() if kk == k)
        if et:
            print(f"| {k} | {et} | {eh} | {ratio(eh, et)} |")
    print()
    print(f"unlabelled findings (whole repositories): {sum(u_by_rule.values())}: "
          f"{u_tp} true, {u_fp} false, {len(unclassified)} unclassified; precision {ratio(u_tp, u_tp + u_fp)}")
    for title, items in (
        ("misses", misses),
        ("false positives in labelled files", fps),
        ("false positives outside labelled files (unlabelled.toml)", u_false),
        ("unclassified", unclassified),
    ):
        if items:
            print(f"\n{title}:")
            for i in items:
                print("  " + i)
    print("\nseconds per repository: " + ", ".join(f"{r} {s:.1f}" for r, s in seconds.items()))
    if args.json:
        json.dump(
            {
                "expected": sum(exp_total.values()),
                "found": sum(exp_hit.values()),
                "findings_labelled": sum(fnd_total.values()),
                "correct": sum(fnd_ok.values()),
                "unlabelled_tp": u_tp,
                "unlabelled_true_positives": u_true,
                "unlabelled_fp": u_fp,
                "unclassified": len(unclassified),
                "unclassified_findings": unclassified,
                "unlabelled_false_positives": u_false,
                "misses": misses,
                "false_positives": fps,
            },
            open(args.json, "w"),
            indent=1,
        )


if __name__ == "__main__":
    main()
