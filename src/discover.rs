//! Finding the files to analyse: walks the given paths with the `ignore` crate, so
//! `.gitignore`, `.ignore` and hidden-file rules apply as in ripgrep, and keeps `.rs`,
//! `.java`, `.kt` and `.kts` files.

use std::path::{Path, PathBuf};

use crate::finding::FileError;
use crate::model::Language;

/// One file to analyse.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Candidate {
    /// The path as displayed: relative when the user gave a relative path, without a
    /// leading `./`.
    pub display: String,
    pub path: PathBuf,
    pub language: Language,
}

/// A path the user named does not exist (a tool error, exit code 2).
#[derive(Debug)]
pub struct MissingPath(pub PathBuf);

/// A relative path that goes up (`../../crates/pay/src/lib.rs`, from `cargo idemlint` in a
/// member, which walks the workspace root), as the shortest path from the current
/// directory to the same place (`src/lib.rs` in `crates/pay`): a file is shown alike
/// however the walk reached it. `None` for paths that do not start with `..`.
pub fn relative_to_cwd(p: &Path) -> Option<PathBuf> {
    use std::path::Component;
    if !matches!(p.components().next(), Some(Component::ParentDir)) {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    Some(relative_from(
        &crate::fsio::lexical_normal(&cwd.join(p)),
        &cwd,
    ))
}

/// The relative path from directory `base` to `target` (both absolute, normalised): `..`
/// for every component of `base` below their common ancestor, then the rest of `target`.
pub fn relative_from(target: &Path, base: &Path) -> PathBuf {
    let t: Vec<_> = target.components().collect();
    let b: Vec<_> = base.components().collect();
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out: PathBuf =
        std::iter::repeat_n(std::path::Component::ParentDir, b.len() - common).collect();
    out.extend(&t[common..]);
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// How a path is shown: `.` components dropped (`.//a/./b.kt` → `a/b.kt`), control
/// characters escaped so a file name cannot forge report lines, and (on Unix, where a
/// backslash is an ordinary file-name byte) `\\` doubled and bytes that are not UTF-8
/// written `\\xNN`. The escaping is injective: two different paths never display alike,
/// so a file cannot hide behind another's name. The display is only for output; files are
/// read and written through [`Candidate::path`].
pub fn display_of(p: &Path) -> String {
    let cleaned: PathBuf = match relative_to_cwd(p) {
        Some(r) => r,
        None => p
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect(),
    };
    if cleaned.as_os_str().is_empty() {
        return ".".to_string();
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let mut out = String::new();
        for chunk in cleaned.as_os_str().as_bytes().utf8_chunks() {
            // Escaping goes character by character, so a piece at a time is the same.
            for (i, piece) in chunk.valid().split('\\').enumerate() {
                if i > 0 {
                    out.push_str("\\\\");
                }
                out.push_str(&crate::text::escape_controls(piece));
            }
            for b in chunk.invalid() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
        out
    }
    #[cfg(not(unix))]
    {
        crate::text::escape_controls(&cleaned.to_string_lossy())
    }
}

/// Ignore files read per directory of a walk.
const IGNORE_FILES: &[&str] = &[".ignore", ".gitignore"];

/// `.gitignore` and `.ignore` rules for one walk, loaded per directory on first use: the
/// walk root and its ancestors up to the enclosing git repository's root, and every
/// directory below. Only regular files of at most [`crate::fsio::MAX_IGNORE_BYTES`] are
/// read; any other (a symbolic link, FIFO, device, an oversized file) is not read and is
/// reported in `errors`. In each directory `.ignore` wins over `.gitignore`, and deeper
/// directories win over shallower ones, as with ripgrep.
#[derive(Clone)]
struct IgnoreRules {
    /// The root as given, and canonical.
    root: PathBuf,
    canonical: PathBuf,
    /// Ancestors of the root whose ignore files apply (outermost first).
    parents: Vec<PathBuf>,
    /// Each directory's matchers, shared (a `Gitignore` holds compiled globs: cloning them
    /// per walk entry cost more than the walk).
    cache: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<PathBuf, Matchers>>>,
    /// Per directory relative to the root, the matchers that apply to its entries,
    /// innermost directory first: found once per directory rather than per entry.
    chains: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<PathBuf, Chain>>>,
    errors: std::sync::Arc<std::sync::Mutex<Vec<FileError>>>,
}

type Matchers = std::sync::Arc<Vec<ignore::gitignore::Gitignore>>;

/// The non-empty [`Matchers`] of a directory and of each directory above it whose rules
/// apply, innermost first.
type Chain = std::sync::Arc<Vec<Matchers>>;

impl IgnoreRules {
    fn new(root: &Path) -> IgnoreRules {
        let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let mut parents: Vec<PathBuf> = Vec::new();
        if !canonical.join(".git").exists() {
            for up in canonical.ancestors().skip(1) {
                parents.push(up.to_path_buf());
                if up.join(".git").exists() {
                    break;
                }
            }
            if !parents.last().is_some_and(|p| p.join(".git").exists()) {
                parents.clear();
            }
        }
        parents.reverse();
        IgnoreRules {
            root: root.to_path_buf(),
            canonical,
            parents,
            cache: Default::default(),
            chains: Default::default(),
            errors: Default::default(),
        }
    }

    /// The matchers of directory `dir` (canonical), `.ignore` first. Read without the
    /// cache's lock held (directories are read in parallel); the first copy stored wins,
    /// and only its problems are reported.
    fn matchers(&self, dir: &Path) -> Matchers {
        if let Some(m) = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(dir)
        {
            return m.clone();
        }
        let mut out = Vec::new();
        let mut problems = Vec::new();
        for name in IGNORE_FILES {
            let file = dir.join(name);
            if std::fs::symlink_metadata(&file).is_err() {
                continue;
            }
            match crate::fsio::read_regular(&file, crate::fsio::MAX_IGNORE_BYTES, false) {
                Ok(bytes) => {
                    let text = String::from_utf8_lossy(&bytes);
                    let mut b = ignore::gitignore::GitignoreBuilder::new(dir);
                    for line in text.lines() {
                        // A bad pattern is skipped, as git does.
                        let _ = b.add_line(Some(file.clone()), line);
                    }
                    if let Ok(g) = b.build() {
                        out.push(g);
                    }
                }
                Err(e) => {
                    let shown = self
                        .root
                        .join(dir.strip_prefix(&self.canonical).unwrap_or(dir));
                    problems.push(FileError {
                        path: display_of(&shown.join(name)),
                        line: None,
                        column: None,
                        message: format!("ignore file not read: {e}; its rules do not apply"),
                    });
                }
            }
        }
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = cache.get(dir) {
            return m.clone();
        }
        let out = std::sync::Arc::new(out);
        cache.insert(dir.to_path_buf(), out.clone());
        drop(cache);
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(problems);
        out
    }

    /// Whether the walk entry `e` is ignored.
    fn ignored(&self, e: &ignore::DirEntry) -> bool {
        let rel = e.path().strip_prefix(&self.root).unwrap_or(e.path());
        let abs = self.canonical.join(rel);
        let is_dir = e.file_type().is_some_and(|t| t.is_dir());
        for matchers in self.chain(rel.parent()).iter() {
            for m in matchers.iter() {
                match m.matched(&abs, is_dir) {
                    ignore::Match::Ignore(_) => return true,
                    ignore::Match::Whitelist(_) => return false,
                    ignore::Match::None => {}
                }
            }
        }
        false
    }

    /// The [`Chain`] of the directory `parent` (relative to the root; `None` or empty for
    /// the root itself): the root's ancestors up to the repository's root, the root, and
    /// each directory down to `parent`, innermost first. Built from the chain of the
    /// directory above (cached), so a directory costs one lookup of its own matchers.
    fn chain(&self, parent: Option<&Path>) -> Chain {
        let key = parent.unwrap_or(Path::new(""));
        if let Some(c) = self
            .chains
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
        {
            return c.clone();
        }
        let (dir, above): (PathBuf, Vec<Matchers>) = if key.as_os_str().is_empty() {
            let above = self
                .parents
                .iter()
                .rev()
                .map(|d| self.matchers(d))
                .filter(|m| !m.is_empty())
                .collect();
            (self.canonical.clone(), above)
        } else {
            let above = self.chain(key.parent());
            (self.canonical.join(key), above.to_vec())
        };
        let own = self.matchers(&dir);
        let mut chain = Vec::with_capacity(above.len() + 1);
        if !own.is_empty() {
            chain.push(own);
        }
        chain.extend(above);
        let chain: Chain = std::sync::Arc::new(chain);
        self.chains
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_path_buf(), chain.clone());
        chain
    }

    fn take_errors(&self) -> Vec<FileError> {
        std::mem::take(&mut *self.errors.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Walks `paths`. Files named explicitly are kept whatever their extension says as long as
/// it is a supported one; an unsupported explicit file is reported in `errors`. Walk
/// problems (permission denied, symlink loops, paths vanishing) are reported in `errors`
/// and the walk goes on. The result is sorted by display path and deduplicated.
pub fn discover(paths: &[PathBuf]) -> Result<(Vec<Candidate>, Vec<FileError>), MissingPath> {
    discover_with(paths, 0)
}

/// [`discover`] with `threads` walker threads (0: the `ignore` crate's default, one per
/// core).
pub fn discover_with(
    paths: &[PathBuf],
    threads: usize,
) -> Result<(Vec<Candidate>, Vec<FileError>), MissingPath> {
    discover_counting(paths, threads, true).map(|(f, e, _, _)| (f, e))
}

/// What the walk left out by the ignore rules: source files (`.rs`, `.java`, `.kt`,
/// `.kts`) and directories (not walked, so their files are not counted), `.git` aside.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ignored {
    pub files: usize,
    pub dirs: usize,
    /// The first few directories left out, by display path in sorted order (at most
    /// [`IGNORED_DIRS_NAMED`]), so a summary can name them.
    pub dirs_named: Vec<String>,
}

/// How many left-out directories [`Ignored::dirs_named`] keeps.
pub const IGNORED_DIRS_NAMED: usize = 3;

/// The entry names configuration discovery looks up in each directory
/// ([`crate::config::Resolver`]): the configuration files, a Cargo manifest and a
/// repository's `.git`. [`Listing`] records which of them a listed directory holds.
pub const LISTED_NAMES: [&str; 4] = ["idemlint.toml", ".idemlint.toml", "Cargo.toml", ".git"];

/// What the walks saw of the directories they listed: absolute paths of directories
/// whose every entry a walk read, each with a bit per [`LISTED_NAMES`] entry it holds
/// (compared ASCII case-insensitively, so a case-insensitive file system loses nothing).
/// Configuration discovery looks a name up only where a directory may hold it
/// ([`Listing::may_hold`]) instead of asking the file system once per name and
/// directory. Empty when a walk met an error (a directory it could not read completely).
#[derive(Debug, Default)]
pub struct Listing {
    dirs: foldhash::HashMap<PathBuf, u8>,
}

impl Listing {
    /// Whether the directory `dir` (absolute, as [`crate::config::absolute_path`] gives
    /// it) may have an entry `name`: `false` only when a walk listed `dir` and saw no such
    /// entry, for a name of [`LISTED_NAMES`].
    pub fn may_hold(&self, dir: &Path, name: &str) -> bool {
        let Some(bit) = listed_bit(std::ffi::OsStr::new(name)) else {
            return true;
        };
        self.dirs.get(dir).is_none_or(|mask| mask & bit != 0)
    }

    /// Whether a walk listed the directory `dir` (absolute): it entered it, so `dir` is a
    /// directory and no symbolic link (the walks follow none).
    pub fn is_listed(&self, dir: &Path) -> bool {
        self.dirs.contains_key(dir)
    }
}

/// The bit of `name` among [`LISTED_NAMES`] (ASCII case-insensitively), if it is one.
fn listed_bit(name: &std::ffi::OsStr) -> Option<u8> {
    let name = name.as_encoded_bytes();
    LISTED_NAMES
        .iter()
        .position(|n| n.as_bytes().eq_ignore_ascii_case(name))
        .map(|i| 1 << i)
}

/// Why an entry of the walk with a source file's name (`.rs`, `.java`, `.kt`, `.kts`)
/// that is not a regular file is not analysed, or `None` when nothing is lost: a symbolic
/// link to a regular source file inside the walked tree, which the walk meets under its
/// real name. A link elsewhere (a committed `Billing.kt -> ../gen/billing.txt` is compiled
/// by kotlinc but was skipped without a word), a FIFO, socket or device named like a
/// source file, and a directory named like one are all reported, so `--strict` fails.
fn unwalked_source(path: &Path, canonical_root: Option<&Path>) -> Option<&'static str> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let ft = meta.file_type();
    if ft.is_dir() {
        return None;
    }
    if !ft.is_symlink() {
        return Some("not a regular file (a FIFO, socket or device); not read");
    }
    let target = std::fs::canonicalize(path).ok();
    let inside = match (&target, canonical_root) {
        (Some(t), Some(r)) => t.starts_with(r),
        _ => false,
    };
    let walked = inside
        && target.as_deref().is_some_and(|t| {
            Language::from_path(t).is_some() && std::fs::metadata(t).is_ok_and(|m| m.is_file())
        });
    if walked {
        return None;
    }
    Some(
        "a symbolic link to a file outside the checked tree or not named like a source file; not followed, so what it points to is not checked (check the target itself)",
    )
}

/// What a symbolic link named as a path (`idemlint check -- Link.kt`, `--only`,
/// `--files-from`) is reported as: such a link is not followed, as the walk follows none,
/// so a committed `Evil.kt -> ../outside/Victim.kt` cannot make idemlint read a file
/// outside the tree. Nothing is lost, and nothing is said, when the run checks the target
/// anyway: a link to a file that is also a candidate (named itself, or found by the walk of
/// another path), or to a directory inside a walked directory; as the walk meets a link to
/// a source file of its tree under the file's own name. Every other named link is an
/// error, so `--strict` fails as it does for the walk's links.
fn unfollowed_links(
    paths: &[PathBuf],
    files: &[Candidate],
    links: Vec<(PathBuf, PathBuf, bool)>,
) -> Vec<FileError> {
    let checked: std::collections::HashSet<PathBuf> = files
        .iter()
        .filter_map(|c| std::fs::canonicalize(&c.path).ok())
        .collect();
    let walked: Vec<PathBuf> = paths
        .iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    links
        .into_iter()
        .filter(|(_, target, is_dir)| {
            !(checked.contains(target) || *is_dir && walked.iter().any(|w| target.starts_with(w)))
        })
        .map(|(link, _, is_dir)| FileError {
            path: display_of(&link),
            line: None,
            column: None,
            message: if is_dir {
                "a symbolic link to a directory, named as a path; not followed (symbolic links never are), so the files under it are not checked (name the directory itself)"
            } else {
                "a symbolic link, named as a path; not followed (symbolic links never are), so what it points to is not checked (name the target itself)"
            }
            .into(),
        })
        .collect()
}

/// How many directory entries [`may_hold_source`] reads at most.
const SOURCE_LOOKUP_ENTRIES: usize = 2_000;

/// Whether the left-out directory `dir` may hold a source file: one is found in it, at any
/// depth, within the first [`SOURCE_LOOKUP_ENTRIES`] entries read (breadth first, symbolic
/// links not followed), or the bound is reached first (a large `target/` or `build/`), or
/// a directory cannot be read. `false` only when the whole tree was read and holds none.
fn may_hold_source(dir: &Path) -> bool {
    let mut queue = std::collections::VecDeque::from([dir.to_path_buf()]);
    let mut read = 0usize;
    while let Some(d) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            return true;
        };
        for e in entries {
            read += 1;
            if read > SOURCE_LOOKUP_ENTRIES {
                return true;
            }
            let Ok(e) = e else { return true };
            let Ok(t) = e.file_type() else { return true };
            if t.is_dir() {
                queue.push_back(e.path());
            } else if t.is_file() && Language::from_path(&e.path()).is_some() {
                return true;
            }
        }
    }
    false
}

/// [`discover_with`], honouring `.gitignore` / `.ignore` and hidden files and directories
/// only when `honour_ignores` (`--no-ignore` turns it off), and counting what they left
/// out. Files named on the command line are always checked, unless they are symbolic
/// links, which are not followed ([`unfollowed_links`]).
pub fn discover_counting(
    paths: &[PathBuf],
    threads: usize,
    honour_ignores: bool,
) -> Result<(Vec<Candidate>, Vec<FileError>, Ignored, Listing), MissingPath> {
    let listing = std::sync::Arc::new(std::sync::Mutex::new(Listing::default()));
    // A walk that could not read everything leaves no listing: its directories' entries
    // are then looked up one by one.
    let listing_complete = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let ignored_files = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let ignored_dirs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // Every left-out directory's display path (they are not walked, so few): the first
    // ones in sorted order are named.
    let dir_names = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let mut files = Vec::new();
    let mut errors = Vec::new();
    // Named paths that are symbolic links: (as named, resolved target, to a directory).
    let mut named_links: Vec<(PathBuf, PathBuf, bool)> = Vec::new();
    for root in paths {
        let meta = match std::fs::metadata(root) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A dangling symlink is "not found" too; say what it is.
                if std::fs::symlink_metadata(root).is_ok() {
                    errors.push(FileError {
                        path: display_of(root),
                        line: None,
                        column: None,
                        message: "a symbolic link whose target does not exist; skipped".into(),
                    });
                    continue;
                }
                return Err(MissingPath(root.clone()));
            }
            Err(e) => {
                // Permission denied, a symlink loop, a name too long: reported, not fatal.
                errors.push(FileError {
                    path: display_of(root),
                    line: None,
                    column: None,
                    message: format!("could not read: {e}"),
                });
                continue;
            }
        };
        if !meta.is_file() && !meta.is_dir() {
            errors.push(FileError {
                path: display_of(root),
                line: None,
                column: None,
                message: "not a regular file or directory (a FIFO, socket or device); skipped"
                    .into(),
            });
            continue;
        }
        // A named symbolic link is not followed, as the walk follows none: what it points
        // to is checked only when the run reaches it anyway (decided below, once every
        // path is walked).
        if std::fs::symlink_metadata(root).is_ok_and(|m| m.file_type().is_symlink()) {
            match std::fs::canonicalize(root) {
                Ok(target) => named_links.push((root.clone(), target, meta.is_dir())),
                Err(e) => errors.push(FileError {
                    path: display_of(root),
                    line: None,
                    column: None,
                    message: format!("could not read: {e}"),
                }),
            }
            continue;
        }
        if meta.is_file() {
            match Language::from_path(root) {
                Some(language) => files.push(Candidate {
                    display: display_of(root),
                    path: root.clone(),
                    language,
                }),
                None => errors.push(FileError {
                    path: display_of(root),
                    line: None,
                    column: None,
                    message: "not a Rust, Java or Kotlin file (.rs, .java, .kt, .kts); skipped"
                        .into(),
                }),
            }
            continue;
        }
        // Directories are read in parallel; the result is sorted below, so it does not
        // depend on the order.
        let found = std::sync::Mutex::new((Vec::new(), Vec::new()));
        let canonical_root = std::fs::canonicalize(root).ok();
        if canonical_root.is_none() {
            listing_complete.store(false, std::sync::atomic::Ordering::Relaxed);
        }
        let rules = IgnoreRules::new(root);
        let filter_rules = rules.clone();
        // The walk follows no links, so a directory it enters is the root's canonical
        // path joined with the path below the root.
        let listed_dir = {
            let (canonical, root) = (canonical_root.clone(), root.clone());
            move |p: &Path| -> Option<PathBuf> {
                Some(canonical.as_ref()?.join(p.strip_prefix(&root).ok()?))
            }
        };
        ignore::WalkBuilder::new(root)
            .require_git(false)
            .follow_links(false)
            // `.gitignore` / `.ignore` files are read by [`IgnoreRules`] (regular files of
            // bounded size only), not by the `ignore` crate, which follows links and reads
            // FIFOs and devices without bound.
            .git_ignore(false)
            .ignore(false)
            // Nor `.git/info/exclude` or the user's global git excludes: what is checked
            // depends on the tree and the command line only (not on the machine's git
            // configuration), what the walk leaves out is counted and `--no-ignore` walks
            // it, and every directory's entries reach `filter_entry` (the [`Listing`]).
            .git_exclude(false)
            .git_global(false)
            .parents(false)
            // Hidden entries are filtered here, not by the crate, so they are counted.
            .hidden(false)
            .filter_entry({
                let (files, dirs) = (ignored_files.clone(), ignored_dirs.clone());
                let names = dir_names.clone();
                let (listing, listing_complete) = (listing.clone(), listing_complete.clone());
                move |e| {
                    let is_dir = e.file_type().is_some_and(|t| t.is_dir());
                    let note = |p: &Path, bit: u8| match listed_dir(p) {
                        Some(d) => {
                            *listing
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .dirs
                                .entry(d)
                                .or_default() |= bit;
                        }
                        None => listing_complete.store(false, std::sync::atomic::Ordering::Relaxed),
                    };
                    if e.depth() == 0 {
                        note(e.path(), 0);
                        return true;
                    }
                    let name = e.file_name();
                    if let Some(bit) = listed_bit(name)
                        && let Some(parent) = e.path().parent()
                    {
                        note(parent, bit);
                    }
                    if name == ".git" {
                        return false;
                    }
                    if !honour_ignores {
                        if is_dir {
                            note(e.path(), 0);
                        }
                        return true;
                    }
                    let hidden = name.as_encoded_bytes().first() == Some(&b'.');
                    if !hidden && !filter_rules.ignored(e) {
                        if is_dir {
                            note(e.path(), 0);
                        }
                        return true;
                    }
                    let relaxed = std::sync::atomic::Ordering::Relaxed;
                    if e.file_type().is_some_and(|t| t.is_dir()) {
                        // A hidden or ignored directory with no source file in it (`.github`,
                        // `.idea`) loses nothing: not worth a line.
                        if !may_hold_source(e.path()) {
                            return false;
                        }
                        dirs.fetch_add(1, relaxed);
                        names
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(display_of(e.path()));
                    } else if Language::from_path(e.path()).is_some() {
                        files.fetch_add(1, relaxed);
                    }
                    false
                }
            })
            .threads(threads)
            .build_parallel()
            .run(|| {
                let found = &found;
                let canonical_root = canonical_root.as_deref();
                let listing_complete = &listing_complete;
                Box::new(move |entry| {
                    // Most entries are not source files: looked at before the lock.
                    if let Ok(e) = &entry
                        && Language::from_path(e.path()).is_none()
                    {
                        return ignore::WalkState::Continue;
                    }
                    let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
                    match entry {
                        Ok(e) => {
                            let Some(language) = Language::from_path(e.path()) else {
                                return ignore::WalkState::Continue;
                            };
                            if e.file_type().is_some_and(|t| t.is_file()) {
                                found.0.push(Candidate {
                                    display: display_of(e.path()),
                                    path: e.path().to_path_buf(),
                                    language,
                                });
                            } else if let Some(why) = unwalked_source(e.path(), canonical_root) {
                                found.1.push(FileError {
                                    path: display_of(e.path()),
                                    line: None,
                                    column: None,
                                    message: why.into(),
                                });
                            }
                        }
                        Err(err) => {
                            listing_complete.store(false, std::sync::atomic::Ordering::Relaxed);
                            let path = match &err {
                                ignore::Error::WithPath { path, .. } => display_of(path),
                                _ => display_of(root),
                            };
                            found.1.push(FileError {
                                path,
                                line: None,
                                column: None,
                                message: format!("could not walk: {err}"),
                            });
                        }
                    }
                    ignore::WalkState::Continue
                })
            });
        let (f, e) = found.into_inner().unwrap_or_else(|p| p.into_inner());
        files.extend(f);
        errors.extend(e);
        errors.extend(rules.take_errors());
    }
    if !named_links.is_empty() {
        errors.extend(unfollowed_links(paths, &files, named_links));
    }
    errors.sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    // The same file named twice (`. /abs/same/dir`, a symlinked directory) is analysed
    // once, under the first name it was found by.
    // Walks that do not follow links yield every file once per root: only roots that
    // overlap (one inside another, or the same one twice) can name a file twice, and only
    // then are 10,000s of paths resolved.
    // Sorted component-wise, the paths under a root follow it directly, so one root
    // inside another (or twice) shows in an adjacent pair: O(n log n) for n roots.
    let mut roots: Vec<PathBuf> = paths
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    roots.sort();
    let overlap = roots.windows(2).any(|w| w[1].starts_with(&w[0]));
    if overlap {
        let mut seen = std::collections::HashSet::new();
        files.retain(|c| {
            seen.insert(std::fs::canonicalize(&c.path).unwrap_or_else(|_| c.path.clone()))
        });
    }
    files.sort();
    let relaxed = std::sync::atomic::Ordering::Relaxed;
    let mut dirs_named = std::mem::take(&mut *dir_names.lock().unwrap_or_else(|p| p.into_inner()));
    dirs_named.sort();
    dirs_named.truncate(IGNORED_DIRS_NAMED);
    let ignored = Ignored {
        files: ignored_files.load(relaxed),
        dirs: ignored_dirs.load(relaxed),
        dirs_named,
    };
    let mut listing = std::mem::take(&mut *listing.lock().unwrap_or_else(|p| p.into_inner()));
    if !listing_complete.load(std::sync::atomic::Ordering::Relaxed) {
        listing = Listing::default();
    }
    Ok((files, errors, ignored, listing))
}
