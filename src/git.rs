//! Read-only questions to git, for `check --changed-since REV` (which files changed since a
//! commit) and `--new-since REV` (which lines).
//!
//! Only plumbing commands are run (`rev-parse`, `diff-index`, `ls-files`), with standard
//! input closed, and so that nothing of the checked tree can make git run a program:
//!
//! - the repository is the checkout's: idemlint finds the nearest directory with a `.git`
//!   (which no commit can contain) at or above the checked path itself, lets git discover
//!   only there (`GIT_CEILING_DIRECTORIES` is its parent, `safe.bareRepository=explicit`,
//!   `GIT_DIR` / `GIT_WORK_TREE` / `GIT_COMMON_DIR` removed), checks that git's git
//!   directory is that `.git` (or the one a `.git` file names), and then names it to git
//!   explicitly. Git's own discovery from the checked path would take a directory of the
//!   tree that looks like a git directory (`HEAD`, `objects/`, `refs/` committed as plain
//!   files) for a bare repository, with its `config` (filters, `core.worktree`) and
//!   `info/attributes`;
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
//!
//! The patch of `--new-since` is read as a state machine ([`parse_patch`]): file headers
//! only between a `diff --git` line and its first hunk, hunk bodies by their line counts,
//! so an added line `++ b/x` (printed `+++ b/x`) is content, not a header; anything
//! unexpected is an error rather than a guess. `--text` diffs every file as text, so a NUL
//! byte does not turn a source file into a binary one without lines.

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
    /// The git directory, absolute (as git prints it), given to git as `GIT_DIR`.
    git_dir: PathBuf,
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

/// Where git finds the repository: discovery in one directory, or named explicitly.
enum Location<'a> {
    /// `-C dir`, discovering only `dir/.git`: `GIT_CEILING_DIRECTORIES` is `dir`'s parent.
    Discover(&'a Path),
    /// `-C toplevel`, `GIT_DIR` and `GIT_WORK_TREE`.
    Explicit {
        git_dir: &'a Path,
        toplevel: &'a Path,
    },
}

fn base_command(at: Location<'_>, empty_tree: Option<&str>) -> Command {
    let mut c = Command::new("git");
    // Repository locations from the environment are replaced by the checkout's.
    for v in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_COMMON_DIR",
        "GIT_CEILING_DIRECTORIES",
    ] {
        c.env_remove(v);
    }
    match at {
        Location::Discover(dir) => {
            c.arg("-C").arg(dir);
            if let Some(parent) = dir.parent() {
                c.env("GIT_CEILING_DIRECTORIES", parent);
            }
        }
        Location::Explicit { git_dir, toplevel } => {
            c.arg("-C")
                .arg(toplevel)
                .env("GIT_DIR", git_dir)
                .env("GIT_WORK_TREE", toplevel);
        }
    }
    c.args([
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.quotePath=false",
        "-c",
        "safe.bareRepository=explicit",
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

/// The nearest directory at or above `start` (absolute) with a `.git` entry (a directory,
/// or a `.git` file of a linked work tree or submodule), not going up into a directory of
/// `GIT_CEILING_DIRECTORIES`. A commit cannot contain a `.git`, so the tree being checked
/// cannot plant one; a directory of it that merely looks like a git directory is passed.
fn checkout_root(start: &Path) -> Option<PathBuf> {
    let ceilings: Vec<PathBuf> = std::env::var_os("GIT_CEILING_DIRECTORIES")
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| p.is_absolute())
                .map(|p| crate::config::absolute_path(&p))
                .collect()
        })
        .unwrap_or_default();
    let mut dir = start;
    loop {
        if std::fs::metadata(dir.join(".git")).is_ok_and(|m| m.is_dir() || m.is_file()) {
            return Some(dir.to_path_buf());
        }
        let parent = dir.parent()?;
        if ceilings.iter().any(|c| c == parent) {
            return None;
        }
        dir = parent;
    }
}

/// The git directory `root/.git` stands for: itself, or the directory a `.git` file names
/// (`gitdir: PATH`, relative to `root`); canonical.
fn expected_git_dir(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    if dot_git.is_dir() {
        return dot_git.canonicalize().ok();
    }
    let text = crate::fsio::read_regular_text(&dot_git, 64 * 1024, true).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    if target.is_empty() {
        return None;
    }
    root.join(target).canonicalize().ok()
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
    /// The work tree containing `dir` (a directory, or a file whose directory is used): the
    /// one whose `.git` is in the nearest directory with one at or above `dir` (see
    /// [`checkout_root`]). `what` names the flag for messages (`--changed-since`).
    pub fn open(dir: &Path, what: &str) -> Result<Repo, GitError> {
        let dir = if dir.is_file() {
            dir.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
        } else {
            dir
        };
        let shown = || dir.display().to_string();
        let root = checkout_root(&crate::config::absolute_path(dir)).ok_or_else(|| {
            GitError(format!(
                "{what}: not a git repository: no `.git` in `{}` or a directory above it",
                shown()
            ))
        })?;
        let mut cmd = base_command(Location::Discover(&root), None);
        cmd.args([
            "rev-parse",
            "--show-object-format",
            "--absolute-git-dir",
            "--show-toplevel",
        ]);
        let out = output(cmd, what)?;
        let mut lines = out.split(|b| *b == b'\n');
        let format = String::from_utf8_lossy(lines.next().unwrap_or(b"sha1")).into_owned();
        let git_dir = lines.next().map(path_of_bytes).unwrap_or_default();
        let top = lines.next().map(path_of_bytes).unwrap_or_default();
        if top.as_os_str().is_empty() || git_dir.as_os_str().is_empty() {
            return Err(GitError(format!(
                "{what}: `{}` is not inside a git work tree",
                shown()
            )));
        }
        // git used the checkout's `.git`, not a directory it found otherwise (a bare
        // repository at `root` itself, on a git without `safe.bareRepository`).
        let expected = expected_git_dir(&root);
        if expected.is_none() || git_dir.canonicalize().ok() != expected {
            return Err(GitError(format!(
                "{what}: refusing the git directory `{}`: it is not the `.git` of the checkout \
                 at `{}` (a directory of the checked tree that looks like a git repository is \
                 never used)",
                crate::config::display_path(&git_dir),
                crate::config::display_path(&root)
            )));
        }
        Ok(Repo {
            toplevel: top,
            git_dir,
            empty_tree: if format.trim() == "sha256" {
                EMPTY_TREE_SHA256
            } else {
                EMPTY_TREE_SHA1
            },
        })
    }

    fn command(&self) -> Command {
        base_command(
            Location::Explicit {
                git_dir: &self.git_dir,
                toplevel: &self.toplevel,
            },
            Some(self.empty_tree),
        )
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
            "--text",
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
        let files = parse_patch(&patch)
            .map_err(|e| GitError(format!("{what}: could not read git's patch: {e}")))?;
        for (path, ranges) in files {
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

/// `(old count, new first line, new count)` of a hunk header `@@ -a[,b] +c[,d] @@ ...`
/// (a missing count is 1).
fn hunk_header(line: &[u8]) -> Option<(usize, usize, usize)> {
    let rest = line.strip_prefix(b"@@ -")?;
    // The ranges have no `@`: the first ` @@` ends them (a function name may follow).
    let end = rest.windows(3).position(|w| w == b" @@")?;
    let ranges = std::str::from_utf8(&rest[..end]).ok()?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(usize, usize)> {
        // Digits only (`usize::from_str` would take a leading `+`).
        let digits = |d: &str| -> Option<usize> {
            if d.is_empty() || !d.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            d.parse().ok()
        };
        match r.split_once(',') {
            Some((s, c)) => Some((digits(s)?, digits(c)?)),
            None => Some((digits(r)?, 1)),
        }
    };
    let (_, old_count) = range(old)?;
    let (start, count) = range(new)?;
    Some((old_count, start, count))
}

/// A file of a patch (relative to the top level) and its new side's changed line ranges
/// (1-based, inclusive).
pub type FileLines = (PathBuf, Vec<(usize, usize)>);

/// Where [`parse_patch`] is in the patch.
#[derive(Clone, Copy)]
enum State {
    /// Before the first `diff --git` line.
    Start,
    /// After a `diff --git` line: its extended headers (`index`, modes), then `--- `.
    Extended,
    /// After the `--- ` line: `+++ ` must follow.
    Old,
    /// After the `+++ ` line: the first hunk must follow.
    New,
    /// Inside a hunk: the old and new lines still to come.
    Hunk { old: usize, new: usize },
    /// After a hunk: another hunk, the next file or the end.
    Between,
}

/// Files and their added/changed line ranges (1-based, inclusive, sorted) in a `-U0`
/// patch of `git diff-index -p` / `git diff -p`. Files whose hunks only delete lines are
/// listed with no range.
///
/// Read as a state machine: a file's name is taken only from the `+++ ` line that follows
/// the `--- ` line after its `diff --git` line, and a hunk's body is as many lines as its
/// header counts, so a content line (an added `++ b/x` prints as `+++ b/x`) is never a
/// header. A patch that does not have that shape is an error, not a guess.
pub fn parse_patch(patch: &[u8]) -> Result<Vec<FileLines>, String> {
    let mut out: Vec<FileLines> = Vec::new();
    // The file the hunks belong to (`None` for `+++ /dev/null`).
    let mut current: Option<usize> = None;
    let mut state = State::Start;
    let body = patch.strip_suffix(b"\n").unwrap_or(patch);
    if body.is_empty() {
        return Ok(out);
    }
    for (n, line) in body.split(|b| *b == b'\n').enumerate() {
        let bad = |why: &str| {
            let shown = String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
            Err(format!(
                "line {}: {why}: `{}`",
                n + 1,
                crate::text::escape_controls(&shown)
            ))
        };
        state = match state {
            State::Hunk { old, new } => {
                let (old, new) = match line.first() {
                    Some(b'-') if old > 0 => (old - 1, new),
                    Some(b'+') if new > 0 => (old, new - 1),
                    Some(b' ') | None if old > 0 && new > 0 => (old - 1, new - 1),
                    Some(b'\\') => (old, new),
                    _ => return bad("not a line of the hunk"),
                };
                if old == 0 && new == 0 {
                    State::Between
                } else {
                    State::Hunk { old, new }
                }
            }
            State::Start | State::Extended | State::Between if line.starts_with(b"diff --git ") => {
                current = None;
                State::Extended
            }
            // `\ No newline at end of file` after a hunk's last line.
            State::Between if line.first() == Some(&b'\\') => State::Between,
            State::Start => return bad("expected `diff --git`"),
            State::Extended if line.starts_with(b"--- ") => State::Old,
            State::Extended if line.starts_with(b"@@") || line.starts_with(b"+++ ") => {
                return bad("a hunk or `+++ ` line before the `--- ` line");
            }
            State::Extended => State::Extended,
            State::Old => match line.strip_prefix(b"+++ ") {
                Some(b"/dev/null") => State::New,
                Some(rest) => match new_path(rest) {
                    Some(p) => {
                        out.push((path_of_bytes(&p), Vec::new()));
                        current = Some(out.len() - 1);
                        State::New
                    }
                    None => return bad("a new file name that is not `b/...`"),
                },
                None => return bad("expected `+++ ` after `--- `"),
            },
            State::New | State::Between => match hunk_header(line) {
                Some((old, start, count)) => {
                    if let Some(i) = current
                        && count > 0
                    {
                        out[i].1.push((start, start.saturating_add(count - 1)));
                    }
                    if old == 0 && count == 0 {
                        State::Between
                    } else {
                        State::Hunk { old, new: count }
                    }
                }
                None => return bad("expected a hunk header"),
            },
        };
    }
    match state {
        State::Start | State::Extended | State::Between => {}
        State::Old | State::New | State::Hunk { .. } => {
            return Err("the patch ends inside a file's header or hunk".to_string());
        }
    }
    for (_, r) in &mut out {
        r.sort_unstable();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunks_give_the_new_sides_lines() {
        let patch = b"diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -3 +3 @@ fn x() {\n-a\n+b\n@@ -10,0 +11,2 @@\n+c\n+d\n@@ -20,2 +21,0 @@\n-e\n-f\ndiff --git \"a/we\\tird\" \"b/we\\tird\"\n--- \"a/we\\tird\"\n+++ \"b/we\\tird\"\n@@ -0,0 +1 @@\n+x\n";
        let got = parse_patch(patch).unwrap();
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

    /// Content lines that look like headers (an added `++ b/x` is printed `+++ b/x`, a
    /// deleted `-- a/x` is `--- a/x`, `diff --git` and `@@` after the sign) stay content:
    /// hunks are read by their counts.
    #[test]
    fn content_lines_are_never_headers() {
        let patch = b"diff --git a/Pay.kt b/Pay.kt\nindex 1..2 100644\n--- a/Pay.kt\n+++ b/Pay.kt\n@@ -1,2 +1,5 @@ class Pay\n--- a/Pay.kt\n-+++ b/Other.kt\n+x\n++++ b/Pay.kt\n+++ \"b/Other.kt\"\n+diff --git a/O b/O\n+@@ -1 +100,50 @@\n\\ No newline at end of file\n@@ -9,0 +12 @@\n++++ b/Else.kt\ndiff --git \"a/sp ace \\\"q\\\"\\nl\" \"b/sp ace \\\"q\\\"\\nl\"\nnew file mode 100644\n--- /dev/null\n+++ \"b/sp ace \\\"q\\\"\\nl\"\t\n@@ -0,0 +1 @@\n+y\ndiff --git a/sp ace.kt b/sp ace.kt\n--- a/sp ace.kt\t\n+++ b/sp ace.kt\t\n@@ -3 +2,0 @@\n-z\n";
        assert_eq!(
            parse_patch(patch).unwrap(),
            vec![
                (PathBuf::from("Pay.kt"), vec![(1, 5), (12, 12)]),
                (PathBuf::from("sp ace \"q\"\nl"), vec![(1, 1)]),
                (PathBuf::from("sp ace.kt"), vec![]),
            ]
        );
    }

    /// A patch whose shape is not git's is an error, never a partial answer.
    #[test]
    fn malformed_patches_are_errors() {
        for bad in [
            &b"+++ b/x\n@@ -0,0 +1 @@\n+a\n"[..],
            b"diff --git a/x b/x\n+++ b/x\n@@ -0,0 +1 @@\n+a\n",
            b"diff --git a/x b/x\n--- a/x\n@@ -1 +1 @@\n-a\n+b\n",
            b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-a\n+b\n",
            b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n+c\n",
            b"diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 ++1 @@\n-a\n+b\n",
            b"diff --git a/x b/x\n--- a/x\n+++ x\n@@ -1 +1 @@\n-a\n+b\n",
            b"diff --git a/x b/x\n--- a/x\n+++ b/x\n",
        ] {
            assert!(
                parse_patch(bad).is_err(),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(parse_patch(b"").unwrap(), vec![]);
        // A mode change alone has no hunk.
        assert_eq!(
            parse_patch(b"diff --git a/x b/x\nold mode 100644\nnew mode 100755\n").unwrap(),
            vec![]
        );
    }
}
