//! Read-only questions to git, for `check --changed-since REV` (which files changed since a
//! commit) and `--new-since REV` (which lines).
//!
//! Only plumbing commands are run (`rev-parse`, `diff-index`, `ls-files`), with standard
//! input closed, and so that nothing of the checked tree can make git run a program:
//!
//! - `-c core.fsmonitor=false` (a configured file-system monitor is a program git starts),
//!   `--no-ext-diff` and `--no-textconv` (external diff drivers and text conversions are
//!   programs), `GIT_EXTERNAL_DIFF` and `GIT_PAGER` removed, `--no-pager`;
//! - `GIT_ATTR_SOURCE` set to the empty tree, so the tree's `.gitattributes` files are not
//!   read: no `filter=` (clean filters are programs), `diff=` or `eol` attribute of the
//!   checked tree applies (git versions with `--attr-source`, from mid-2023; older
//!   versions ignore the variable, and the file list, `diff-index --name-only`, never
//!   reads file contents, so runs no filter);
//! - `GIT_CONFIG_NOSYSTEM=1` (no system-wide configuration), `GIT_OPTIONAL_LOCKS=0` (no
//!   index refresh is written), `GIT_TERMINAL_PROMPT=0`; no hook is run by these commands.
//!
//! The repository's own `.git/config` and `.git/info/attributes` are the user's (a checkout
//! never contains them) and still apply, as they do to every git command.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Why git could not answer: git is missing, the directory is not in a repository, the
/// revision is unknown. The message says which, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitError(pub String);

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&crate::text::escape_controls_multiline(&self.0))
    }
}

impl std::error::Error for GitError {}

/// The empty tree of SHA-1 and SHA-256 repositories (`GIT_ATTR_SOURCE`: no attributes).
const EMPTY_TREE_SHA1: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const EMPTY_TREE_SHA256: &str = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321";

/// A git work tree: its top-level directory and object format.
#[derive(Debug, Clone)]
pub struct Repo {
    /// Absolute (as git prints it).
    pub toplevel: PathBuf,
    empty_tree: &'static str,
}

/// Changed lines per file (absolute, canonical paths), from [`Repo::changed_lines`].
#[derive(Debug, Clone, Default)]
pub struct ChangedLines {
    files: HashMap<PathBuf, Lines>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Lines {
    /// A new file (untracked, or not in `REV`): every line.
    All,
    /// 1-based inclusive line ranges of the current text, sorted.
    Ranges(Vec<(usize, usize)>),
}

impl ChangedLines {
    /// Whether 1-based `line` of the file at `path` (absolute, canonical) was added or
    /// changed.
    pub fn contains(&self, path: &Path, line: usize) -> bool {
        match self.files.get(path) {
            Some(Lines::All) => true,
            Some(Lines::Ranges(r)) => {
                let i = r.partition_point(|(_, end)| *end < line);
                r.get(i).is_some_and(|(start, _)| *start <= line)
            }
            None => false,
        }
    }

    /// The files with changed lines (absolute, canonical), sorted.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self.files.keys().cloned().collect();
        v.sort();
        v
    }
}

fn base_command(dir: &Path, empty_tree: Option<&str>) -> Command {
    let mut c = Command::new("git");
    c.arg("-C")
        .arg(dir)
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.quotePath=false",
            "--no-pager",
        ])
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env_remove("GIT_EXTERNAL_DIFF")
        .env_remove("GIT_PAGER")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(t) = empty_tree {
        c.env("GIT_ATTR_SOURCE", t);
    }
    c
}

/// Runs `cmd`; its standard output on success, else git's first error line.
fn output(mut cmd: Command, what: &str) -> Result<Vec<u8>, GitError> {
    let out = cmd
        .output()
        .map_err(|e| GitError(format!("could not run git ({e}); {what} needs git on PATH")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("no message")
            .trim();
        return Err(GitError(format!("{what}: git failed: {line}")));
    }
    Ok(out.stdout)
}

fn nul_separated(bytes: &[u8]) -> Vec<PathBuf> {
    bytes
        .split(|b| *b == 0)
        .filter(|s| !s.is_empty())
        .map(path_of_bytes)
        .collect()
}

/// A path from the bytes git prints with `-z` (raw on Unix, lossy UTF-8 elsewhere).
#[cfg(unix)]
pub(crate) fn path_of_bytes(b: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(b))
}

#[cfg(not(unix))]
pub(crate) fn path_of_bytes(b: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(b).into_owned())
}

impl Repo {
    /// The work tree containing `dir` (a directory, or a file whose directory is used).
    /// `what` names the flag for messages (`--changed-since`).
    pub fn open(dir: &Path, what: &str) -> Result<Repo, GitError> {
        let dir = if dir.is_file() {
            dir.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
        } else {
            dir
        };
        let mut cmd = base_command(dir, None);
        cmd.args(["rev-parse", "--show-object-format", "--show-toplevel"]);
        let out = output(cmd, what)?;
        let text = String::from_utf8_lossy(&out);
        let mut lines = text.lines();
        let format = lines.next().unwrap_or("sha1").trim();
        let top = lines.next().map(str::trim).unwrap_or("");
        if top.is_empty() {
            return Err(GitError(format!(
                "{what}: `{}` is not inside a git work tree",
                dir.display()
            )));
        }
        Ok(Repo {
            toplevel: PathBuf::from(top),
            empty_tree: if format == "sha256" {
                EMPTY_TREE_SHA256
            } else {
                EMPTY_TREE_SHA1
            },
        })
    }

    fn command(&self) -> Command {
        base_command(&self.toplevel, Some(self.empty_tree))
    }

    /// Checks that `rev` names a commit; returns its full object id.
    pub fn verify_commit(&self, rev: &str, what: &str) -> Result<String, GitError> {
        if rev.is_empty() || rev.starts_with('-') {
            return Err(GitError(format!(
                "{what}: `{rev}` is not a revision (it must not be empty or start with `-`)"
            )));
        }
        let mut cmd = self.command();
        cmd.args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{rev}^{{commit}}"));
        match output(cmd, what) {
            Ok(out) => Ok(String::from_utf8_lossy(&out).trim().to_string()),
            Err(_) => Err(GitError(format!(
                "{what}: unknown revision `{rev}` (no such commit in {})",
                self.toplevel.display()
            ))),
        }
    }

    /// Files of the work tree that differ from commit `rev` (added, copied, modified,
    /// renamed, type-changed; not deleted), and untracked files that are not ignored:
    /// absolute paths, sorted. A file whose timestamps changed but whose content did not
    /// may be listed (the index is not refreshed: no file content is read).
    pub fn changed_files(&self, rev: &str, what: &str) -> Result<Vec<PathBuf>, GitError> {
        let commit = self.verify_commit(rev, what)?;
        let mut cmd = self.command();
        cmd.args([
            "diff-index",
            "--name-only",
            "-z",
            "--no-renames",
            "--diff-filter=d",
            "--no-ext-diff",
            "--no-textconv",
            "--end-of-options",
            &commit,
            "--",
        ]);
        let mut files = nul_separated(&output(cmd, what)?);
        files.extend(self.untracked(what)?);
        let mut files: Vec<PathBuf> = files.into_iter().map(|f| self.toplevel.join(f)).collect();
        files.sort();
        files.dedup();
        Ok(files)
    }

    fn untracked(&self, what: &str) -> Result<Vec<PathBuf>, GitError> {
        let mut cmd = self.command();
        cmd.args([
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
            "--full-name",
        ]);
        Ok(nul_separated(&output(cmd, what)?))
    }

    /// The lines added or changed since commit `rev`, per file of the work tree (from the
    /// hunks of `git diff-index -p -U0 REV`; untracked files count whole). Deleted lines
    /// leave nothing to report.
    pub fn changed_lines(&self, rev: &str, what: &str) -> Result<ChangedLines, GitError> {
        let commit = self.verify_commit(rev, what)?;
        let mut cmd = self.command();
        cmd.args([
            "diff-index",
            "-p",
            "-U0",
            "--no-color",
            "--no-renames",
            "--diff-filter=d",
            "--no-ext-diff",
            "--no-textconv",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            "--end-of-options",
            &commit,
            "--",
        ]);
        let patch = output(cmd, what)?;
        let mut lines = ChangedLines::default();
        for (path, ranges) in parse_patch(&patch) {
            let abs = crate::config::absolute_path(&self.toplevel.join(path));
            lines.files.insert(abs, Lines::Ranges(ranges));
        }
        for f in self.untracked(what)? {
            let abs = crate::config::absolute_path(&self.toplevel.join(f));
            lines.files.insert(abs, Lines::All);
        }
        Ok(lines)
    }
}

/// The new-side path of a `+++ ` line: `b/PATH`, or a C-quoted `"b/PATH"`; `None` for
/// `/dev/null`.
fn new_path(rest: &[u8]) -> Option<Vec<u8>> {
    let raw = if rest.first() == Some(&b'"') {
        unquote(rest)?
    } else {
        // An unquoted name runs to the end of the line (no trailing tab: git adds one only
        // to names with spaces in some versions, so it is stripped).
        let mut r = rest.to_vec();
        while r.last() == Some(&b'\t') {
            r.pop();
        }
        r
    };
    raw.strip_prefix(b"b/").map(<[u8]>::to_vec)
}

/// Undoes git's C-style quoting of a path (`"a\tb\303\251"`).
fn unquote(s: &[u8]) -> Option<Vec<u8>> {
    let inner = s.strip_prefix(b"\"")?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < inner.len() {
        match inner[i] {
            b'"' => return Some(out),
            b'\\' => {
                let c = *inner.get(i + 1)?;
                i += 2;
                match c {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'v' => out.push(11),
                    b'0'..=b'7' => {
                        let digits = inner.get(i - 1..i + 2)?;
                        let mut v: u32 = 0;
                        for d in digits {
                            if !(b'0'..=b'7').contains(d) {
                                return None;
                            }
                            v = v * 8 + u32::from(d - b'0');
                        }
                        out.push(u8::try_from(v).ok()?);
                        i += 2;
                    }
                    other => out.push(other),
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    None
}

/// `+c[,d]` of a hunk header `@@ -a[,b] +c[,d] @@`: the new side's first line and count.
fn hunk_new_side(line: &[u8]) -> Option<(usize, usize)> {
    let text = std::str::from_utf8(line).ok()?;
    let rest = text.strip_prefix("@@ ")?;
    let plus = rest.split(' ').find(|w| w.starts_with('+'))?;
    let plus = &plus[1..];
    let (start, count) = match plus.split_once(',') {
        Some((s, c)) => (s.parse().ok()?, c.parse().ok()?),
        None => (plus.parse().ok()?, 1),
    };
    Some((start, count))
}

/// Files and their added/changed line ranges (1-based, inclusive, sorted) in a `-U0`
/// patch. Files whose hunks only delete lines are listed with no range.
pub fn parse_patch(patch: &[u8]) -> Vec<(PathBuf, Vec<(usize, usize)>)> {
    let mut out: Vec<(PathBuf, Vec<(usize, usize)>)> = Vec::new();
    let mut current: Option<usize> = None;
    for line in patch.split(|b| *b == b'\n') {
        if line.starts_with(b"diff --git ") {
            current = None;
        } else if let Some(rest) = line.strip_prefix(b"+++ ") {
            current = new_path(rest).map(|p| {
                out.push((path_of_bytes(&p), Vec::new()));
                out.len() - 1
            });
        } else if line.starts_with(b"@@ ")
            && let (Some(i), Some((start, count))) = (current, hunk_new_side(line))
            && count > 0
        {
            out[i].1.push((start, start + count - 1));
        }
    }
    for (_, r) in &mut out {
        r.sort_unstable();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_give_the_new_sides_lines() {
        let patch = b"diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -3 +3 @@ fn x() {\n-a\n+b\n@@ -10,0 +11,2 @@\n+c\n+d\n@@ -20,2 +21,0 @@\n-e\n-f\ndiff --git \"a/we\\tird\" \"b/we\\tird\"\n--- \"a/we\\tird\"\n+++ \"b/we\\tird\"\n@@ -0,0 +1 @@\n+x\n";
        let got = parse_patch(patch);
        assert_eq!(
            got,
            vec![
                (PathBuf::from("src/a.rs"), vec![(3, 3), (11, 12)]),
                (PathBuf::from("we\tird"), vec![(1, 1)]),
            ]
        );
        let mut c = ChangedLines::default();
        c.files
            .insert(PathBuf::from("/r/a.rs"), Lines::Ranges(got[0].1.clone()));
        let a = Path::new("/r/a.rs");
        assert!(c.contains(a, 3));
        assert!(!c.contains(a, 4));
        assert!(!c.contains(a, 10));
        assert!(c.contains(a, 11) && c.contains(a, 12));
        assert!(!c.contains(a, 13));
        assert!(!c.contains(Path::new("/r/b.rs"), 1));
    }

    #[test]
    fn quoted_names_are_unquoted() {
        assert_eq!(
            unquote(b"\"b/caf\\303\\251 \\\"x\\\"\""),
            Some("b/café \"x\"".as_bytes().to_vec())
        );
        assert_eq!(unquote(b"\"unterminated"), None);
        assert_eq!(new_path(b"/dev/null"), None);
    }
}
