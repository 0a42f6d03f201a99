#!/usr/bin/env python3
"""Exports every repository the corpus names, at the labelled commit, from fetched git
directories: `MIRROR/owner+name/repo` (bare) -> `OUT/owner+name/` (a plain tree).

Nothing is downloaded: a repository missing from MIRROR is reported and skipped, and the
exit code is 1 when any was missing. Re-running reuses a tree whose `.idemlint-eval-commit`
marker names the same commit.
"""
import argparse
import pathlib
import shutil
import subprocess
import sys
import tomllib

HERE = pathlib.Path(__file__).resolve().parent


def wanted():
    """{(repo, commit)} from corpus/*.toml and repos.toml."""
    pairs = set()
    for f in sorted((HERE / "corpus").glob("*.toml")):
        for e in tomllib.load(open(f, "rb")).get("file", []):
            pairs.add((e["repo"], e["commit"]))
    extra = HERE / "repos.toml"
    if extra.exists():
        for e in tomllib.load(open(extra, "rb")).get("repo", []):
            pairs.add((e["repo"], e["commit"]))
    return sorted(pairs)


KEEP_SUFFIXES = (".rs", ".java", ".kt", ".kts")
KEEP_NAMES = {"Cargo.toml", "idemlint.toml", ".idemlint.toml", ".gitignore", ".ignore"}


def export(git_dir, commit, dest):
    """Writes the source files idemlint reads (and the files that steer its walk) of
    `commit` under `dest`. Snapshots can lack large blobs; those are skipped (they are
    never source files idemlint keeps)."""
    ls = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", "--full-tree", commit],
        capture_output=True,
    )
    if ls.returncode != 0:
        raise RuntimeError(f"git ls-tree {commit} failed: {ls.stderr.decode().strip()}")
    entries = []
    for rec in ls.stdout.split(b"\0"):
        if not rec:
            continue
        meta, path = rec.split(b"\t", 1)
        mode, kind, oid = meta.split()
        name = path.rsplit(b"/", 1)[-1].decode("utf-8", "replace")
        if kind != b"blob" or mode == b"120000":
            continue
        if name.endswith(KEEP_SUFFIXES) or name in KEEP_NAMES:
            entries.append((oid, path))
    cat = subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    written = 0
    for oid, path in entries:
        cat.stdin.write(oid + b"\n")
        cat.stdin.flush()
        header = cat.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            continue
        body = cat.stdout.read(int(header[2]))
        cat.stdout.read(1)
        target = dest / path.decode("utf-8", "surrogateescape")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)
        written += 1
    cat.stdin.close()
    cat.wait()
    return written


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default="/work/.mirror")
    ap.add_argument("--out", default=str(HERE / "work"))
    args = ap.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    missing = 0
    by_repo = {}
    for repo, commit in wanted():
        by_repo.setdefault(repo, set()).add(commit)
    for repo, commits in sorted(by_repo.items()):
        if len(commits) > 1:
            print(f"{repo}: labelled at {len(commits)} commits; use one", file=sys.stderr)
            missing += 1
            continue
        commit = next(iter(commits))
        git_dir = pathlib.Path(args.mirror) / repo.replace("/", "+") / "repo"
        if (git_dir / ".git").is_dir():
            git_dir = git_dir / ".git"  # a fetch with a work tree
        dest = out / repo.replace("/", "+")
        marker = dest / ".idemlint-eval-commit"
        if marker.exists() and marker.read_text().strip() == commit:
            continue
        if not git_dir.exists():
            print(f"{repo}: not fetched ({git_dir} missing)", file=sys.stderr)
            missing += 1
            continue
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        try:
            n = export(git_dir, commit, dest)
        except RuntimeError as e:
            print(f"{repo}: {e}", file=sys.stderr)
            missing += 1
            continue
        marker.write_text(commit + "\n")
        print(f"{repo} @ {commit[:12]}: {n} files -> {dest}")
    sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()
