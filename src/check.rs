//! The one pipeline both the CLI and (later) the LSP server call:
//! discover → read and prefilter every file ([`crate::prefilter`]) → lower, classify and
//! summarise the files that can matter (pass 1, parallel, in rounds while pass 1 finds
//! names that make more files matter) → project index → read, lower and check again the
//! files that can have a finding (pass 2, parallel) → configuration and suppressions
//! ([`crate::suppress::apply`]) → one finding per bug ([`crate::report::merge`]) →
//! sorted findings. Each file is analysed under its own configuration
//! ([`crate::config::Resolver`]): its catalogue, rule levels, include/exclude globs.
//!
//! Memory does not grow with the files that cannot matter: pass 1 keeps a small summary
//! per parsed file and nothing of the others; no text or model is kept between the
//! passes, except the text of files with findings (for rendering snippets and fixes).
//!
//! Every file is analysed on its own inside `catch_unwind`, on worker threads with a large
//! stack (deeply nested code recurses in the parsers), so one bad file is reported in
//! `errors` and never stops the run.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use crate::catalogue::Catalogue;
use crate::classify::{FileFacts, classify};
use crate::config::{Config, ConfigError, Resolver, RuleSelection};
use crate::discover::{Candidate, MissingPath};
use crate::finding::{FileError, Finding};
use crate::index::{FileSummary, ProjectIndex, caller_kind, summarize};
use crate::model::{FileModel, Language};
use crate::prefilter::{
    FileDemand, FileWords, FreshScope, NameScan, Prefilter, ScanScratch, TokenSig, demanded_names,
    needs_check,
};
use crate::rules::{Ctx, check_file};
use crate::text::LineIndex;

/// Stack size of analysis threads, bytes (reserved, not committed, until used). syn and
/// the tree walkers recurse per nesting level; the walkers stop at 1,000 levels and Rust
/// files nested deeper than `lang::rust::PARSE_DEPTH_LIMIT` are not given to syn.
pub const STACK_SIZE: usize = 1 << 30;

/// Most worker threads `--jobs` starts, whatever it asks for.
pub const MAX_JOBS: usize = 256;

/// What to run.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub paths: Vec<PathBuf>,
    /// Worker threads; `None` = one per core.
    pub jobs: Option<usize>,
    /// Only read and parse (the floor the analysis is measured against).
    pub parse_only: bool,
    /// `--config FILE`: this configuration for every file instead of discovery.
    pub config_file: Option<PathBuf>,
    /// `--select` / `--ignore`, applied on top of every configuration.
    pub selection: RuleSelection,
    /// Files under these directories are skipped, unless they are also under a deeper
    /// directory of `paths` (`cargo idemlint --workspace --exclude PKG`: an excluded
    /// member's directory, while a member nested inside it is still checked).
    pub skip_dirs: Vec<PathBuf>,
    /// Problems found before the walk, reported in `errors` with the files that could not
    /// be analysed (`--workspace`: a member outside the workspace root, not checked).
    pub path_problems: Vec<FileError>,
    /// Parse every file instead of only those the prefilter selects ([`crate::prefilter`]).
    pub no_prefilter: bool,
    /// Analyse every parsed file in pass 2, not only those [`crate::prefilter::needs_check`]
    /// selects: slower, with the same findings. The reference that tests hold the
    /// selection to (`--check-every-file`, a hidden flag).
    pub check_every_file: bool,
    /// Report only this part of the files (the project index still covers all of them).
    pub shard: Option<Shard>,
    /// Counters the CLI's progress bar reads (`None`: no progress is kept).
    pub progress: Option<Arc<Progress>>,
    /// `--max-file-size`: largest source file analysed, bytes, for every file (overrides
    /// `max-file-size` of the configurations; `None`: theirs, by default
    /// [`crate::fsio::DEFAULT_MAX_FILE_BYTES`]).
    pub max_file_size: Option<u64>,
    /// `--no-ignore`: walk directories without `.gitignore` / `.ignore` and hidden-name
    /// rules (`.git` is still not walked).
    pub no_ignore: bool,
    /// `--only` / `--files-from` / `--changed-since`: report findings and file errors
    /// only for these files (see [`Only`]); the project index still covers every file
    /// under `paths`. `None`: every file.
    pub only: Option<Only>,
    /// `--new-since`: report only findings whose line was added or changed (see
    /// [`crate::git::ChangedLines`]); findings of files without changed lines are dropped.
    pub changed_lines: Option<Arc<crate::git::ChangedLines>>,
    /// Texts to analyse instead of the files' contents on disk (the language server's
    /// unsaved documents), by absolute canonical path ([`crate::config::absolute_path`]).
    /// Only files the walk finds are affected; limits apply as to files read from disk.
    pub overlays: Option<Arc<std::collections::HashMap<PathBuf, Arc<str>>>>,
    /// Asked between the phases and before each file of pass 2: when it answers `true`
    /// the run stops early and its report has `cancelled` set (the language server's
    /// superseded analyses).
    pub cancel: Option<Cancel>,
    /// Pass-1 results kept between runs of one process (the language server), so a run
    /// parses only the files whose text or configuration changed since the last.
    pub pass1_cache: Option<Pass1Cache>,
}

/// Pass-1 results (summary, demand, parse errors) of files by display path, each valid
/// for one text (hash and length) under one configuration (the hash of its file and of
/// the files it extends). One entry per file: a new text replaces the old entry, so the
/// memory holds at most one summary per file of the project.
///
/// [`Pass1Cache::on_disk`] adds a directory the user named (`check --cache-dir DIR`):
/// entries are also read from and written to it, keyed by the SHA-256 of idemlint's
/// analysis (a hash of its sources, [`ANALYSIS_HASH`]), the file's display path, its
/// configuration and its text, so a second run parses only what changed. Nothing is
/// written anywhere else, and nothing is read from the checked tree unless the directory
/// is inside it (see `docs/security.md`).
#[derive(Clone, Default)]
pub struct Pass1Cache {
    mem: Arc<std::sync::Mutex<Pass1Entries>>,
    /// The directory layer; with it, entries are kept in memory only for the run's
    /// lookups of the same text (counts), not as copies of every summary.
    disk: Option<Arc<DiskCache>>,
}

#[derive(Default)]
struct Pass1Entries {
    files: std::collections::HashMap<String, ((u64, usize, u64), CachedParse)>,
    hits: usize,
    misses: usize,
}

#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct CachedParse {
    summary: FileSummary,
    demand: FileDemand,
    suppressions: bool,
    errors: Vec<FileError>,
}

/// A hash of the sources idemlint's analysis is built from (`build.rs`): a cache entry
/// written by another build is never read.
pub const ANALYSIS_HASH: &str = env!("IDEMLINT_ANALYSIS_HASH");

/// Largest cache entry read back (bytes); a larger one is a miss.
const CACHE_ENTRY_LIMIT: u64 = 64 << 20;

/// The on-disk layer of a [`Pass1Cache`]: `DIR/v1-<analysis hash>/<2 hex>/<64 hex>.json`.
struct DiskCache {
    /// `DIR/v1-<analysis hash>`.
    root: PathBuf,
    hits: std::sync::atomic::AtomicUsize,
    writes: std::sync::atomic::AtomicUsize,
    /// Entries that could not be written (the run goes on without them).
    write_errors: std::sync::atomic::AtomicUsize,
}

impl DiskCache {
    fn entry(&self, key: &str) -> PathBuf {
        self.root.join(&key[..2]).join(format!("{key}.json"))
    }

    fn read(&self, key: &str) -> Option<CachedParse> {
        let bytes = crate::fsio::read_regular(&self.entry(key), CACHE_ENTRY_LIMIT, false).ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Writes an entry through a new temporary file (never following a link planted at
    /// its name) renamed into place; the subdirectory must be a real directory.
    fn write(&self, key: &str, entry: &CachedParse) -> std::io::Result<()> {
        use std::io::Write;
        let sub = self.root.join(&key[..2]);
        match std::fs::symlink_metadata(&sub) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(std::io::Error::other(format!(
                    "{} is not a directory",
                    sub.display()
                )));
            }
            Err(_) => match std::fs::create_dir(&sub) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            },
        }
        let bytes = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
        static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let tmp = sub.join(format!(
            ".{key}.{}.{}.tmp",
            std::process::id(),
            SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        let done = f
            .write_all(&bytes)
            .and_then(|()| std::fs::rename(&tmp, self.entry(key)));
        if done.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        done
    }
}

impl std::fmt::Debug for Pass1Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (n, hits, misses) = self.counts();
        write!(f, "Pass1Cache({n} files, {hits} hits, {misses} misses)")
    }
}

impl Pass1Cache {
    /// A cache that also keeps its entries in `dir` (created when missing, with a
    /// `CACHEDIR.TAG` so backup tools skip it), for later runs and other processes.
    ///
    /// # Errors
    /// When `dir` or its versioned subdirectory cannot be created, or is not a directory
    /// (a symbolic link is refused).
    pub fn on_disk(dir: &Path) -> std::io::Result<Pass1Cache> {
        std::fs::create_dir_all(dir)?;
        let tag = dir.join("CACHEDIR.TAG");
        if std::fs::symlink_metadata(&tag).is_err() {
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tag)
                .and_then(|mut f| {
                    use std::io::Write;
                    f.write_all(
                        b"Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by idemlint.\n",
                    )
                });
        }
        let root = dir.join(format!("v1-{ANALYSIS_HASH}"));
        match std::fs::create_dir(&root) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        if !std::fs::symlink_metadata(&root)?.is_dir() {
            return Err(std::io::Error::other(format!(
                "{} is not a directory",
                root.display()
            )));
        }
        Ok(Pass1Cache {
            mem: Arc::default(),
            disk: Some(Arc::new(DiskCache {
                root,
                hits: Default::default(),
                writes: Default::default(),
                write_errors: Default::default(),
            })),
        })
    }

    /// Files cached, and the lookups that found (hits) or did not find (misses) an entry
    /// for the current text, since the cache was made.
    pub fn counts(&self) -> (usize, usize, usize) {
        self.mem
            .lock()
            .map(|e| (e.files.len(), e.hits, e.misses))
            .unwrap_or((0, 0, 0))
    }

    /// For a cache with a directory: entries found there, entries written, and entries
    /// that could not be written, since the cache was made.
    pub fn disk_counts(&self) -> Option<(usize, usize, usize)> {
        use std::sync::atomic::Ordering::Relaxed;
        self.disk.as_ref().map(|d| {
            (
                d.hits.load(Relaxed),
                d.writes.load(Relaxed),
                d.write_errors.load(Relaxed),
            )
        })
    }

    /// The disk key of a text: hex SHA-256 of the analysis, display path, configuration
    /// key and text.
    fn disk_key(display: &str, config: u64, text: &str) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for part in [ANALYSIS_HASH.as_bytes(), display.as_bytes()] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part);
        }
        h.update(config.to_le_bytes());
        h.update(text.as_bytes());
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }

    fn get(&self, display: &str, id: (u64, usize, u64), text: &str) -> Option<Parsed> {
        let hash = id.0;
        let found = {
            let e = self.mem.lock().ok()?;
            match e.files.get(display) {
                Some((k, p)) if *k == id => Some(p.clone()),
                _ => None,
            }
        };
        let found = found.or_else(|| {
            let d = self.disk.as_ref()?;
            let p = d.read(&Self::disk_key(display, id.2, text))?;
            d.hits.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Some(p)
        });
        if let Ok(mut e) = self.mem.lock() {
            if found.is_some() {
                e.hits += 1;
            } else {
                e.misses += 1;
            }
        }
        found.map(|p| Parsed {
            summary: Some(Box::new(p.summary)),
            demand: p.demand,
            suppressions: p.suppressions,
            hash,
            errors: p.errors,
        })
    }

    fn put(&self, display: &str, id: (u64, usize, u64), text: &str, p: &Parsed) {
        let Some(summary) = &p.summary else { return };
        let entry = CachedParse {
            summary: (**summary).clone(),
            demand: p.demand.clone(),
            suppressions: p.suppressions,
            errors: p.errors.clone(),
        };
        if let Some(d) = &self.disk {
            use std::sync::atomic::Ordering::Relaxed;
            match d.write(&Self::disk_key(display, id.2, text), &entry) {
                Ok(()) => d.writes.fetch_add(1, Relaxed),
                Err(_) => d.write_errors.fetch_add(1, Relaxed),
            };
            return;
        }
        if let Ok(mut e) = self.mem.lock() {
            e.files.insert(display.to_string(), (id, entry));
        }
    }
}

/// What a configuration's catalogue is made of, for [`Pass1Cache`] keys: a hash of its
/// file's path and text and of the files it extends (`0` for the built-in defaults).
/// `None` when one cannot be read (then nothing is cached for its files).
fn config_key(config: &Config) -> Option<u64> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for f in config.origin.iter().chain(&config.extends) {
        let path = f.to_string_lossy();
        h.update((path.len() as u64).to_le_bytes());
        h.update(path.as_bytes());
        let text = crate::fsio::read_regular(f, 8 << 20, false).ok()?;
        h.update((text.len() as u64).to_le_bytes());
        h.update(&text);
    }
    let d = h.finalize();
    Some(u64::from_le_bytes(d[..8].try_into().ok()?))
}

/// Pass 1 for candidate `c` through `cache`, when there is one and `key` (its
/// configuration's [`config_key`]) is known.
fn parse_cached(
    c: &Candidate,
    text: &str,
    cat: &Catalogue,
    cache: Option<&Pass1Cache>,
    key: Option<u64>,
) -> Result<Parsed, FileError> {
    let p = match (cache, key) {
        (Some(cache), Some(key)) => {
            let hash = text_hash(text);
            let id = (hash, text.len(), key);
            match cache.get(&c.display, id, text) {
                Some(p) => p,
                None => {
                    let p = parse_one(c, text, cat)?;
                    cache.put(&c.display, id, text, &p);
                    p
                }
            }
        }
        _ => parse_one(c, text, cat)?,
    };
    if text.len() >= RELEASE_AFTER_BYTES {
        release_free_memory();
    }
    Ok(p)
}

/// A question "is this run superseded?" ([`Options::cancel`]).
#[derive(Clone)]
pub struct Cancel(pub Arc<dyn Fn() -> bool + Send + Sync>);

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Cancel(..)")
    }
}

impl Cancel {
    fn asked(c: &Option<Cancel>) -> bool {
        c.as_ref().is_some_and(|c| (c.0)())
    }
}

/// Per candidate, the overlay text that replaces its file ([`Options::overlays`]).
type Overlays = Vec<Option<Arc<str>>>;

fn overlays_of(candidates: &[Configured], opts: &Options) -> Overlays {
    match &opts.overlays {
        Some(map) if !map.is_empty() => candidates
            .iter()
            .map(|(c, _)| map.get(&crate::config::absolute_path(&c.path)).cloned())
            .collect(),
        _ => vec![None; candidates.len()],
    }
}

/// The text of candidate `c`: its overlay (checked against the size limits as a file
/// would be), else the file read from disk.
fn read_candidate(
    c: &Candidate,
    config: &Config,
    overlay: Option<&Arc<str>>,
) -> Result<String, SourceError> {
    let Some(text) = overlay else {
        return read_source(&c.path, config.max_file_size);
    };
    let limit = config.max_file_size;
    let err = |message| SourceError {
        message,
        position: None,
    };
    if text.len() as u64 > limit {
        return Err(err(too_large_message(Some(text.len() as u64), limit)));
    }
    check_density(text, limit).map_err(err)?;
    Ok(text.to_string())
}

/// The files a run reports on, out of the project it indexes (`--only`).
#[derive(Clone, Debug, Default)]
pub struct Only {
    /// Files, or directories (every file under one), as given (relative to the current
    /// directory) or absolute.
    pub paths: Vec<PathBuf>,
    /// The paths were named by the user (`--only`, `--files-from`): each must exist
    /// ([`ToolError::MissingPath`] otherwise), and a named source file that the walk of
    /// [`Options::paths`] does not reach (outside them, or left out by ignore rules) is
    /// added to the project, as a path named on the command line would be. When `false`
    /// (a list from git), paths that do not exist or that the walk does not reach are
    /// left out.
    pub named: bool,
}

/// [`Only`] resolved to absolute, canonical paths.
struct OnlySet {
    files: std::collections::HashSet<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl OnlySet {
    fn new(only: &Only) -> Result<OnlySet, ToolError> {
        let mut files = std::collections::HashSet::new();
        let mut dirs = Vec::new();
        for p in &only.paths {
            match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => dirs.push(crate::config::absolute_path(p)),
                Ok(_) => {
                    files.insert(crate::config::absolute_path(p));
                }
                Err(_) if only.named && std::fs::symlink_metadata(p).is_err() => {
                    return Err(ToolError::MissingPath(p.clone()));
                }
                // A dangling link named by the user is reported by the walk; from git, a
                // file deleted since is simply not reported.
                Err(_) => {
                    files.insert(crate::config::absolute_path(p));
                }
            }
        }
        Ok(OnlySet { files, dirs })
    }

    /// `abs` is absolute and canonical.
    fn contains(&self, abs: &std::path::Path) -> bool {
        self.files.contains(abs) || self.dirs.iter().any(|d| abs.starts_with(d))
    }
}

/// The phase a run is in, for the progress bar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Reading and prefiltering every file.
    Reading,
    /// Parsing the files the prefilter selected and building the project index.
    Indexing,
    /// Checking the files that can have a finding.
    Checking,
}

/// Progress of a run: the phase, and files done of the phase's total. Updated by the
/// workers with relaxed atomics; read by a progress bar on another thread.
#[derive(Debug, Default)]
pub struct Progress {
    phase: std::sync::atomic::AtomicU8,
    done: std::sync::atomic::AtomicUsize,
    total: std::sync::atomic::AtomicUsize,
}

impl Progress {
    fn start(&self, phase: Phase, total: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        self.done.store(0, Relaxed);
        self.total.store(total, Relaxed);
        self.phase.store(phase as u8, Relaxed);
    }

    fn step(&self) {
        self.done.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// The phase, files done and the phase's total.
    pub fn get(&self) -> (Phase, usize, usize) {
        use std::sync::atomic::Ordering::Relaxed;
        let phase = match self.phase.load(Relaxed) {
            0 => Phase::Reading,
            1 => Phase::Indexing,
            _ => Phase::Checking,
        };
        (phase, self.done.load(Relaxed), self.total.load(Relaxed))
    }
}

/// `--shard I/N`: the files whose path hash is `I-1` modulo `N`. The hash is FNV-1a (64
/// bit) of the displayed path with `\\` replaced by `/`, so the split is the same on every
/// machine and run for the same command line. Every shard still reads every file and
/// builds the whole project index (facts cross files); it parses, checks and reports only
/// its own files, so the shards' outputs together are the unsharded output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// 0-based.
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// True when the file displayed as `path` belongs to this shard.
    pub fn contains(&self, path: &str) -> bool {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in path.bytes() {
            let b = if b == b'\\' { b'/' } else { b };
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h % self.count == self.index
    }
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// Parses `I/N` with `1 <= I <= N` (1-based, as CI matrices count).
    fn from_str(s: &str) -> Result<Shard, String> {
        let err = || format!("expected I/N with 1 <= I <= N (e.g. 2/4), got `{s}`");
        let (i, n) = s.split_once('/').ok_or_else(err)?;
        let i: u64 = i.trim().parse().map_err(|_| err())?;
        let n: u64 = n.trim().parse().map_err(|_| err())?;
        if n == 0 || i == 0 || i > n {
            return Err(err());
        }
        Ok(Shard {
            index: i - 1,
            count: n,
        })
    }
}

/// The outcome of a run.
#[derive(Debug, Default)]
pub struct Report {
    /// Sorted by path, line, column, rule.
    pub findings: Vec<Finding>,
    /// Sorted by path, line.
    pub errors: Vec<FileError>,
    /// Files checked (of this shard), and their size in bytes.
    pub files: usize,
    pub bytes: u64,
    /// Files parsed in pass 1 (for the project index) and checked in pass 2 (all shards).
    pub parsed: usize,
    pub checked: usize,
    /// Text of every file that has a finding, by display path (for rendering snippets).
    pub texts: std::collections::HashMap<String, Arc<str>>,
    /// The real path of every file in `texts`, by display path. Display paths are only
    /// for output (escaped, so not a path on disk); reads and `--fix` writes use these.
    pub paths: std::collections::HashMap<String, PathBuf>,
    /// Set when a baseline was applied (`--baseline`, `--write-baseline`).
    pub baseline: Option<crate::baseline::Outcome>,
    /// Where the run spent its time and how many files each step touched (`--timings`).
    pub stats: Stats,
    /// What the walk left out by `.gitignore` / `.ignore` and hidden-name rules.
    pub ignored: crate::discover::Ignored,
    /// The run was stopped by [`Options::cancel`]: findings and errors are incomplete.
    pub cancelled: bool,
    /// When the run reports on part of its files (`--only`, `--files-from`,
    /// `--changed-since`, `--shard`): the display paths of those files. `None`: every
    /// file. A baseline's entries of other files are left alone
    /// ([`crate::baseline::Scope`]).
    pub scope: Option<std::collections::HashSet<String>>,
}

/// Counters and phase times of one run, for `idemlint check --timings`.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Files the walk found (after configuration include/exclude).
    pub discovered: usize,
    /// Files read and scanned by the prefilter (every readable file).
    pub read: usize,
    /// Files parsed in pass 1, per round: stage 0 (sink words; those of at least
    /// [`BIG_FILE_BYTES`] right after it), the rest of round 0 (lock words), each name
    /// round, the retry-evidence chunks.
    pub parsed_per_round: Vec<usize>,
    /// The prefilter chose the files to parse (not `--no-prefilter` or `--parse-only`).
    pub prefilter: bool,
    /// Files read again after stage 0 to scan for demanded names (and then parse the
    /// files that hold one) or to sample declarations, summed over the rounds.
    pub reread: usize,
    /// Files a round did not read again because their token signature cannot hold a
    /// demanded name ([`crate::prefilter::NameScan::may_match`]), summed over the rounds.
    pub ruled_out: usize,
    /// Times the project index was built or extended.
    pub index_builds: usize,
    /// Function declarations in the final index.
    pub index_functions: usize,
    /// Distinct function names in the final index.
    pub index_names: usize,
    /// Files checked in pass 2.
    pub checked: usize,
    /// Wall time per phase, in order, with the process's peak resident set size at the
    /// phase's end in KiB (the highest `VmHWM` of `/proc/self/status` read so far, so it
    /// never falls; `None` where the system has no such file).
    pub phases: Vec<(&'static str, std::time::Duration, Option<u64>)>,
    /// With a cache directory ([`Pass1Cache::on_disk`]): pass-1 results found there,
    /// written there, and not written (an I/O error; the run goes on).
    pub cache: Option<(usize, usize, usize)>,
    /// The files pass 1 took longest to parse and summarise (at most [`SLOWEST_FILES`]),
    /// longest first: wall time, size in bytes, display path.
    pub slowest: Vec<(std::time::Duration, u64, String)>,
}

/// How many files `--timings` names as the slowest to parse ([`Stats::slowest`]).
pub const SLOWEST_FILES: usize = 5;

impl Report {
    /// How many distinct paths [`Report::errors`] names: the files (or named paths) with a
    /// problem, however many problems each has.
    pub fn files_with_problems(&self) -> usize {
        self.errors
            .iter()
            .map(|e| e.path.as_str())
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    }
}

impl Stats {
    fn phase(&mut self, name: &'static str, since: &mut std::time::Instant) {
        let now = std::time::Instant::now();
        // proc(5): the kernel counts RSS per thread and sums lazily, so `VmHWM` read at
        // two moments can fall by a few hundred KiB. The peak so far is the highest
        // reading so far.
        let before = self.phases.iter().filter_map(|(_, _, k)| *k).max();
        let peak = match (peak_rss_kib(), before) {
            (Some(k), b) => Some(k.max(b.unwrap_or(0))),
            (None, b) => b,
        };
        self.phases.push((name, now - *since, peak));
        trace_heap(&format!("heap after {name}"));
        *since = now;
    }

    /// Counts the parse of one file in [`Self::slowest`].
    fn parse_took(&mut self, took: std::time::Duration, bytes: u64, path: &str) {
        if self.slowest.len() == SLOWEST_FILES
            && self.slowest.last().is_some_and(|(t, _, _)| *t >= took)
        {
            return;
        }
        let at = self.slowest.partition_point(|(t, _, _)| *t >= took);
        self.slowest.insert(at, (took, bytes, path.to_string()));
        self.slowest.truncate(SLOWEST_FILES);
    }

    /// What [`Self::parsed_per_round`] counts, in words: with the prefilter, the files
    /// with a key word (parsed as they were read, or right after stage 0 for those of at
    /// least [`BIG_FILE_BYTES`]), then those with a ShedLock word, then
    /// each name round (files declaring or calling functions the parsed files need, and
    /// the files with a source word when the fresh closure runs); without it, every file
    /// at once.
    fn rounds_text(&self) -> String {
        let r = &self.parsed_per_round;
        let total: usize = r.iter().sum();
        match r.as_slice() {
            [] => "none".to_string(),
            _ if !self.prefilter => format!("{total} (every file, no prefilter)"),
            [first] => format!("{first} with a key word"),
            [first, second] => format!("{first} with a key word, {second} with a lock word"),
            [first, second, rest @ ..] => format!(
                "{first} with a key word, {second} with a lock word, then {} in {} of files \
                 that declare or call functions the files parsed before lead to",
                rest.iter()
                    .map(usize::to_string)
                    .collect::<Vec<_>>()
                    .join(" + "),
                plural(rest.len(), "round", "rounds"),
            ),
        }
    }

    /// The statistics as lines of text (for standard error).
    pub fn render(&self) -> String {
        let parsed: usize = self.parsed_per_round.iter().sum();
        let mut out = format!(
            "idemlint stats: {} found, {} read, {} parsed{}, {} analysed for findings (pass 2)\n\
             idemlint stats: parsed: {}\n\
             idemlint stats: project index: {} under {}, built from {}\n",
            plural(self.discovered, "file", "files"),
            self.read,
            parsed,
            if self.cache.is_some() {
                " or read from the cache"
            } else {
                ""
            },
            self.checked,
            self.rounds_text(),
            plural(
                self.index_functions,
                "function declaration",
                "function declarations"
            ),
            plural(self.index_names, "name", "names"),
            plural(self.index_builds, "batch of files", "batches of files"),
        );
        if self.reread + self.ruled_out > 0 {
            out.push_str(&format!(
                "idemlint stats: those rounds read files again {} to look for the functions' \
                 names, and skipped {} (the file's word list, a Bloom filter kept from the \
                 first read, cannot hold the names)\n",
                plural(self.reread, "time", "times"),
                plural(self.ruled_out, "read", "reads"),
            ));
        }
        if let Some((hits, writes, errors)) = self.cache {
            out.push_str(&format!(
                "idemlint stats: cache: {hits} file(s) from the cache directory, {writes} written, {errors} not written\n"
            ));
        }
        for (took, bytes, path) in &self.slowest {
            out.push_str(&format!(
                "idemlint stats: slow to parse: {:.3} s, {:.1} MB, {path}\n",
                took.as_secs_f64(),
                *bytes as f64 / 1e6,
            ));
        }
        let total: std::time::Duration = self.phases.iter().map(|(_, d, _)| *d).sum();
        for (name, d, peak) in &self.phases {
            out.push_str(&format!(
                "idemlint stats: {name:<10} {:>8.3} s {:>5.1} %{}\n",
                d.as_secs_f64(),
                100.0 * d.as_secs_f64() / total.as_secs_f64().max(1e-9),
                peak.map_or(String::new(), |k| format!(
                    "   peak RSS {:.0} MiB",
                    k as f64 / 1024.0
                ))
            ));
        }
        let peak = self.phases.iter().filter_map(|(_, _, k)| *k).max();
        out.push_str(&format!(
            "idemlint stats: {:<10} {:>8.3} s{}\n",
            "total",
            total.as_secs_f64(),
            peak.map_or(String::new(), |k| format!(
                "           peak RSS {:.0} MiB",
                k as f64 / 1024.0
            ))
        ));
        out
    }
}

/// `n` and the noun for it (`one` or `many`).
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The process's peak resident set size so far, in KiB: `VmHWM` of `/proc/self/status`
/// (Linux, proc(5)); `None` elsewhere or when it cannot be read.
/// With `IDEMLINT_TRACE_HEAP` set (Linux with glibc only), prints to standard error the
/// heap the allocator holds, after `what`: in use, free in its arenas and mapped on its
/// own (`mallinfo2`), in MiB, and the peak RSS so far.
pub(crate) fn trace_heap(what: &str) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("IDEMLINT_TRACE_HEAP").is_some() {
        // SAFETY: mallinfo2 only reads the allocator's counters.
        let m = unsafe { libc::mallinfo2() };
        eprintln!(
            "{what}: in use {} MiB, free in arenas {} MiB, mmapped {} MiB, peak RSS {} MiB",
            m.uordblks >> 20,
            m.fordblks >> 20,
            m.hblkhd >> 20,
            peak_rss_kib().unwrap_or(0) >> 10
        );
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = what;
}

fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()
}

/// A tool error: the run could not happen (exit code 2).
#[derive(Debug)]
pub enum ToolError {
    MissingPath(PathBuf),
    ThreadPool(String),
    /// A configuration file is unreadable or invalid (render it with miette).
    Config(Box<ConfigError>),
    /// `--stdin-filename` names a file whose language is unknown.
    StdinName(String),
    /// Arguments that do not fit together; the message says why.
    Usage(String),
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ToolError::MissingPath(p) => write!(
                f,
                "path not found: {}",
                crate::text::escape_controls(&p.display().to_string())
            ),
            ToolError::ThreadPool(e) => write!(f, "could not start worker threads: {e}"),
            ToolError::Config(e) => write!(f, "{e}"),
            ToolError::StdinName(n) => write!(
                f,
                "cannot tell the language of `{}`: --stdin-filename needs a name ending in .rs, .java, .kt or .kts",
                crate::text::escape_controls(n)
            ),
            ToolError::Usage(m) => f.write_str(&crate::text::escape_controls_multiline(m)),
        }
    }
}

impl std::error::Error for ToolError {}

/// Reads a file as UTF-8 source, when it is a regular file of at most `limit` bytes.
/// Errors name the problem in words a user can act on.
pub fn read_source(path: &std::path::Path, limit: u64) -> Result<String, SourceError> {
    use crate::fsio::ReadError;
    let bytes = crate::fsio::read_regular(path, limit, true).map_err(|e| SourceError {
        message: match e {
            ReadError::TooLarge(_) => {
                too_large_message(std::fs::metadata(path).map(|m| m.len()).ok(), limit)
            }
            ReadError::Io(e) => format!("could not read: {e}"),
            e => format!("could not read: {e}; skipped"),
        },
        position: None,
    })?;
    let text = decode_source(bytes)?;
    check_density(&text, limit).map_err(|message| SourceError {
        message,
        position: None,
    })?;
    Ok(text)
}

/// Bytes a token counts for against the size limit: the parsers' memory grows with
/// tokens (about 350 bytes each for tree-sitter Kotlin, model included), so a file of
/// one-character tokens (`listOf(1,1,1,…)`) costs several times a typical file of the
/// same size (4.5 to 6 bytes per token, comments aside, so typical files are limited by
/// their size alone).
pub const BYTES_PER_TOKEN: u64 = 4;

/// Tokens in `text`, roughly: identifier and number runs, and each other non-space
/// character, outside `//` and `/* */` comments. Linear, one pass over the bytes.
pub fn estimate_tokens(text: &str) -> u64 {
    let b = text.as_bytes();
    let mut n = 0u64;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            i = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = b[i + 2..]
                .windows(2)
                .position(|w| w == b"*/")
                .map_or(b.len(), |p| i + 2 + p + 2);
            continue;
        }
        if c.is_ascii_alphanumeric() || c == b'_' || c >= 0x80 {
            n += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            continue;
        }
        if !c.is_ascii_whitespace() {
            n += 1;
        }
        i += 1;
    }
    n
}

/// A text within `limit` bytes can still be refused when it is dense: it counts as
/// `max(bytes, tokens × BYTES_PER_TOKEN)`.
pub fn check_density(text: &str, limit: u64) -> Result<(), String> {
    // Only texts that could be over the limit are counted.
    if (text.len() as u64).saturating_mul(BYTES_PER_TOKEN) <= limit {
        return Ok(());
    }
    let tokens = estimate_tokens(text);
    let weight = tokens.saturating_mul(BYTES_PER_TOKEN);
    if weight <= limit {
        return Ok(());
    }
    Err(format!(
        "file too dense: about {tokens} tokens in {}, which counts as {} ({BYTES_PER_TOKEN} bytes \
         per token: the parser's memory grows with tokens), over the limit of {}; not analysed \
         (raise it with `--max-file-size` or `max-file-size` in idemlint.toml)",
        crate::fsio::human_size(text.len() as u64),
        crate::fsio::human_size(weight),
        crate::fsio::human_size(limit)
    ))
}

/// The error for a source file (or buffer) of `size` bytes over the `limit` (bytes).
/// Sizes are shown for people, with the exact byte count after them only when the
/// rounded form is not already it (`1.5 MiB (1572864 bytes)`, but `987 bytes`).
pub fn too_large_message(size: Option<u64>, limit: u64) -> String {
    let exact = |n: u64| {
        let h = crate::fsio::human_size(n);
        if h == format!("{n} bytes") {
            h
        } else {
            format!("{h} ({n} bytes)")
        }
    };
    let size = size
        .filter(|s| *s > limit)
        .map(exact)
        .unwrap_or_else(|| "more".into());
    format!(
        "file too large: {size}, over the limit of {}; not analysed \
         (raise it with `--max-file-size` or `max-file-size` in idemlint.toml)",
        exact(limit)
    )
}

/// After pass 1 or pass 2 of a file at least this large (bytes), the heap's free pages
/// are given back to the operating system ([`release_free_memory`]). Such a file's parse tree and
/// model (tens of bytes per source byte) are freed between the summaries that outlive
/// them, and glibc keeps those pages resident otherwise: on openai-java this lowered the
/// peak RSS from 116 to 102 MiB at no measurable cost in time (BENCHMARKS.md, eighteenth
/// session).
pub const RELEASE_AFTER_BYTES: usize = 64 << 10;

/// Returns the heap's free pages to the operating system (`malloc_trim(0)`, which also
/// releases whole free pages inside glibc's arenas, not only the top of the heap). Does
/// nothing with other allocators or systems.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes the allocator's own locks and frees nothing still in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Files at least this large (bytes) are parsed and analysed one at a time, whatever
/// `--jobs` says: the parsers take about 100 bytes of memory per source byte, so two
/// 10 MiB files at once would double the peak. Smaller files run in parallel as usual.
pub const BIG_FILE_BYTES: usize = 1 << 20;

static BIG_FILE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `f` (the parse and analysis of a text of `len` bytes), holding the big-file lock
/// when `len >= BIG_FILE_BYTES`.
pub fn one_big_file_at_a_time<R>(len: usize, f: impl FnOnce() -> R) -> R {
    if len < BIG_FILE_BYTES {
        return f();
    }
    // A panic while holding the lock poisons it; the lock guards nothing but memory.
    let _guard = BIG_FILE.lock().unwrap_or_else(|e| e.into_inner());
    f()
}

/// Source bytes as text. Valid UTF-8 is analysed whatever it contains (a NUL byte in a
/// comment or string is accepted by rustc, javac and kotlinc, so it must not turn a file
/// into "binary" and skip it); anything else is reported: as binary when it has a NUL
/// byte in its first 8 KiB, otherwise as not UTF-8 with the position of the first bad byte.
pub fn decode_source(bytes: Vec<u8>) -> Result<String, SourceError> {
    String::from_utf8(bytes).map_err(|e| {
        if e.as_bytes()[..e.as_bytes().len().min(8192)].contains(&0) {
            return SourceError {
                message: "binary file (contains NUL bytes and is not UTF-8); skipped".into(),
                position: None,
            };
        }
        let at = e.utf8_error().valid_up_to();
        let valid = &e.as_bytes()[..at];
        // The valid prefix is UTF-8, so its lines and characters can be counted.
        let prefix = std::str::from_utf8(valid).unwrap_or("");
        let p = LineIndex::new(prefix).position(prefix, at);
        SourceError {
            message: format!("not valid UTF-8 (first invalid byte at byte offset {at}); skipped"),
            position: Some((p.line, p.column)),
        }
    })
}

/// Why a file could not be read as source, with the 1-based line and column of the
/// problem when there is one (the first invalid UTF-8 byte).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    pub message: String,
    pub position: Option<(usize, usize)>,
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

/// Lowers and classifies one text. Used by the pipeline and by tests.
pub fn analyse_text(language: Language, text: &str, cat: &Catalogue) -> (FileModel, FileFacts) {
    one_big_file_at_a_time(text.len(), || analyse_text_now(language, text, cat))
}

fn analyse_text_now(language: Language, text: &str, cat: &Catalogue) -> (FileModel, FileFacts) {
    let mut model = crate::lang::lower(language, text);
    let facts = classify(&mut model, text, cat);
    (model, facts)
}

/// [`analyse_text`] for pass 2, where the project index is known: a call of a function
/// another file declares is the project's own code, not a `by_name` source
/// ([`crate::classify::classify_in_project`], [`ProjectIndex::declared_for`]). `path` is
/// the file's display path, as the index knows it.
pub fn analyse_text_in_project(
    language: Language,
    text: &str,
    cat: &Catalogue,
    index: &ProjectIndex,
    path: &str,
) -> (FileModel, FileFacts) {
    one_big_file_at_a_time(text.len(), || {
        let mut model = crate::lang::lower(language, text);
        let facts = crate::classify::classify_in_project(&mut model, text, cat, &|call| {
            index.declared_for(call, path)
        });
        (model, facts)
    })
}

/// Most parse problems reported per file; the rest are summarised in one more error.
pub const MAX_PARSE_ERRORS: usize = 5;

/// What a syntax error means for the analysis, appended to its message (not with
/// `--parse-only`, which analyses nothing).
const RUST_SYNTAX_TAIL: &str = "; the file was skipped (the Rust parser stops at the first error)";
const RECOVERED_SYNTAX_TAIL: &str =
    "; the rest of the file was analysed where the parser recovered";

fn parse_errors(c: &Candidate, text: &str, lines: &LineIndex, model: &FileModel) -> Vec<FileError> {
    let tail = match c.language {
        Language::Rust => RUST_SYNTAX_TAIL,
        _ => RECOVERED_SYNTAX_TAIL,
    };
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<FileError> = Vec::new();
    let mut more = 0;
    for e in &model.errors {
        let p = lines.position(text, e.span.start);
        if !seen.insert((p.line, p.column)) {
            continue;
        }
        if out.len() == MAX_PARSE_ERRORS {
            more += 1;
            continue;
        }
        // Limits say themselves what is and is not analysed; only syntax errors get the
        // parser's consequence.
        let says_consequence =
            e.message.contains("not analysed") || e.message.contains("not parsed");
        out.push(FileError {
            path: c.display.clone(),
            line: Some(p.line),
            column: Some(p.column),
            message: if says_consequence {
                e.message.clone()
            } else {
                format!("{}{tail}", e.message)
            },
        });
    }
    // The syntax errors the frontend did not keep ([`crate::lang::MAX_ERRORS`]) count too.
    more += model
        .damage
        .map_or(0, |(n, _)| n.saturating_sub(crate::lang::MAX_ERRORS));
    // The errors past the limit are counted on the last one shown, not listed as an
    // entry of their own (which sorted first, without a line, and counted as a problem).
    if more > 0
        && let Some(last) = out.last_mut()
    {
        last.message.push_str(&format!(
            "; {more} more syntax error(s) in this file not shown"
        ));
    }
    out
}

/// Analyses one in-memory text as if it were the only file of the project (the LSP
/// server's unsaved buffers, `--stdin-filename`). `display_path` is used in findings and
/// errors; the language is chosen from its extension (`None` when unsupported).
/// Parse errors come back as [`FileError`]s; a panic inside the analysis becomes one too.
/// Uses the default configuration over `cat` (suppressions still apply); callers that
/// honour configuration files use [`check_text_with`].
pub fn check_text(
    display_path: &str,
    text: &str,
    cat: &Catalogue,
) -> Option<(Vec<Finding>, Vec<FileError>)> {
    check_text_with(display_path, text, &Config::builtin(cat.clone()))
}

/// [`check_text`] under `config` (from [`Resolver::for_path`] of `display_path`): its
/// catalogue, rule levels and suppression settings, exactly as [`run`] applies them.
/// Include/exclude globs are the caller's business ([`Config::includes`]).
pub fn check_text_with(
    display_path: &str,
    text: &str,
    config: &Config,
) -> Option<(Vec<Finding>, Vec<FileError>)> {
    let cat: &Catalogue = &config.catalogue;
    let language = Language::from_path(std::path::Path::new(display_path))?;
    let c = Candidate {
        display: display_path.to_string(),
        path: PathBuf::from(display_path),
        language,
    };
    let too_big = if text.len() as u64 > config.max_file_size {
        Err(too_large_message(
            Some(text.len() as u64),
            config.max_file_size,
        ))
    } else {
        check_density(text, config.max_file_size)
    };
    if let Err(message) = too_big {
        return Some((
            Vec::new(),
            vec![FileError {
                path: c.display.clone(),
                line: None,
                column: None,
                message,
            }],
        ));
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let lines = LineIndex::new(text);
        let (model, mut facts) = analyse_text(language, text, cat);
        let errors = parse_errors(&c, text, &lines, &model);
        let summary = summarize(&c.display, text, &lines, &model, &facts, cat);
        let index = ProjectIndex::build(vec![summary]);
        crate::index::apply_inferred_boundaries(&model, &mut facts, &index, &c.display, cat);
        let ctx = Ctx {
            path: &c.display,
            text,
            lines: &lines,
            model: &model,
            facts: &facts,
            index: &index,
            catalogue: cat,
            scopes: Default::default(),
        };
        let mut findings = file_findings(&ctx, config);
        let fix_ctx = crate::fix::FixCtx {
            text,
            lines: &lines,
            model: &model,
            facts: &facts,
            path: &c.path,
            java_version: config.java_version,
        };
        crate::fix::attach(&fix_ctx, &mut findings);
        verify_fixes(&c, text, config, &index, &model, &facts, &mut findings);
        crate::fix::align_help(&fix_ctx, &mut findings);
        (findings, errors)
    }));
    Some(result.unwrap_or_else(|p| {
        (
            Vec::new(),
            vec![FileError {
                path: c.display.clone(),
                line: None,
                column: None,
                message: format!(
                    "internal error while analysing this file (please report it): {}",
                    panic_message(p)
                ),
            }],
        )
    }))
}

/// Checks one in-memory file (`idemlint check --stdin-filename NAME -`) as [`run`] would
/// check it on disk at `display_path`: under the configuration found for that path (or
/// `opts.config_file`), with `opts.selection`; a file the configuration excludes gives an
/// empty report. `display_path` need not exist.
pub fn run_text(
    display_path: &str,
    text: &str,
    opts: &Options,
    cat: &Catalogue,
) -> Result<Report, ToolError> {
    let config_error = |e| ToolError::Config(Box::new(e));
    let mut resolver = Resolver::new(cat, opts.config_file.as_deref(), opts.selection.clone())
        .map_err(config_error)?;
    let display = display_path.strip_prefix("./").unwrap_or(display_path);
    let path = std::path::Path::new(display);
    let mut config = resolver.for_path(path).map_err(config_error)?;
    if !config.includes(path) {
        return Ok(Report::default());
    }
    if let Some(limit) = opts.max_file_size {
        let mut c = (*config).clone();
        c.max_file_size = limit;
        config = Arc::new(c);
    }
    let (findings, errors) = check_text_with(display, text, &config)
        .ok_or_else(|| ToolError::StdinName(display.to_string()))?;
    let mut texts = std::collections::HashMap::new();
    if !findings.is_empty() {
        texts.insert(display.to_string(), Arc::from(text));
    }
    Ok(Report {
        findings,
        errors,
        files: 1,
        bytes: text.len() as u64,
        parsed: 1,
        checked: 1,
        texts,
        paths: Default::default(),
        baseline: None,
        stats: Stats::default(),
        ignored: Default::default(),
        cancelled: false,
        // Standard input is one file of the project.
        scope: Some(std::iter::once(display.to_string()).collect()),
    })
}

/// Runs the whole pipeline.
pub fn run(opts: &Options, cat: &Catalogue) -> Result<Report, ToolError> {
    let paths = if opts.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        opts.paths.clone()
    };
    let mut since = std::time::Instant::now();
    let mut stats = Stats::default();
    let (candidates, mut errors, ignored, listing) = crate::discover::discover_counting(
        &paths,
        opts.jobs.unwrap_or(0).min(MAX_JOBS),
        !opts.no_ignore,
    )
    .map_err(|MissingPath(p)| ToolError::MissingPath(p))?;
    errors.extend(opts.path_problems.iter().cloned());
    if let Some(shard) = opts.shard {
        errors.retain(|e| shard.contains(&e.path));
    }
    let only = opts.only.as_ref().map(OnlySet::new).transpose()?;
    let (candidates, paths) = match (&only, &opts.only) {
        (Some(set), Some(o)) => {
            let (c, p, mut e) = add_named(candidates, paths, o, opts)?;
            errors.retain(|e| set.contains(&crate::config::absolute_path(Path::new(&e.path))));
            e.retain(|e| opts.shard.is_none_or(|s| s.contains(&e.path)));
            // A named link or FIFO that the walk of PATH met is reported once, by the walk.
            let walked: std::collections::HashSet<&str> =
                errors.iter().map(|e| e.path.as_str()).collect();
            e.retain(|e| !walked.contains(e.path.as_str()));
            errors.append(&mut e);
            (c, p)
        }
        _ => (candidates, paths),
    };
    let mut resolver = Resolver::new(cat, opts.config_file.as_deref(), opts.selection.clone())
        .map_err(|e| ToolError::Config(Box::new(e)))?;
    resolver.set_roots(&paths);
    resolver.set_listing(listing);
    let candidates = configure(candidates, &paths, opts, &mut resolver)?;
    let selected = selection(&candidates, opts, only.as_ref());
    stats.discovered = candidates.len();
    stats.phase("discover", &mut since);
    let mut builder = rayon::ThreadPoolBuilder::new().stack_size(STACK_SIZE);
    if let Some(j) = opts.jobs {
        builder = builder.num_threads(j.clamp(1, MAX_JOBS));
    }
    let pool = builder
        .build()
        .map_err(|e| ToolError::ThreadPool(e.to_string()))?;
    let overlays = overlays_of(&candidates, opts);
    let mut r = pool.install(|| run_in_pool(&candidates, &selected, &overlays, opts, stats, since));
    r.ignored = ignored;
    if opts.shard.is_some() || only.is_some() {
        r.scope = Some(
            candidates
                .iter()
                .zip(&selected)
                .filter(|(_, s)| **s)
                .map(|((c, _), _)| c.display.clone())
                .collect(),
        );
    }
    r.errors.extend(errors);
    r.errors.sort_by(|a, b| {
        (&a.path, a.line, a.column, &a.message).cmp(&(&b.path, b.line, b.column, &b.message))
    });
    Ok(r)
}

/// Candidates (sorted by display path), the paths walked, and walk errors.
type Walked = (Vec<Candidate>, Vec<PathBuf>, Vec<FileError>);

/// Adds to the walk's `candidates` the source files of a named `only` list that the walk
/// did not reach (as paths named on the command line), and returns the candidates (sorted
/// by display path), the paths walked, and the walk errors of the added files.
fn add_named(
    candidates: Vec<Candidate>,
    mut paths: Vec<PathBuf>,
    only: &Only,
    opts: &Options,
) -> Result<Walked, ToolError> {
    if !only.named {
        return Ok((candidates, paths, Vec::new()));
    }
    let reached: std::collections::HashSet<PathBuf> = candidates
        .iter()
        .map(|c| crate::config::absolute_path(&c.path))
        .collect();
    let extra: Vec<PathBuf> = only
        .paths
        .iter()
        .filter(|p| !std::fs::metadata(p).is_ok_and(|m| m.is_dir()))
        .filter(|p| Language::from_path(p).is_some())
        .filter(|p| !reached.contains(&crate::config::absolute_path(p)))
        .cloned()
        .collect();
    if extra.is_empty() {
        return Ok((candidates, paths, Vec::new()));
    }
    let (more, errors, _, _) = crate::discover::discover_counting(
        &extra,
        opts.jobs.unwrap_or(0).min(MAX_JOBS),
        !opts.no_ignore,
    )
    .map_err(|MissingPath(p)| ToolError::MissingPath(p))?;
    let mut all = candidates;
    all.extend(more);
    all.sort();
    all.dedup_by(|a, b| a.display == b.display);
    paths.extend(extra);
    Ok((all, paths, errors))
}

/// Which candidates are reported on: those of the shard and of `--only`.
fn selection(candidates: &[Configured], opts: &Options, only: Option<&OnlySet>) -> Vec<bool> {
    candidates
        .iter()
        .map(|(c, _)| {
            opts.shard.is_none_or(|s| s.contains(&c.display))
                && only.is_none_or(|o| o.contains(&crate::config::absolute_path(&c.path)))
        })
        .collect()
}

/// The files `run` would check (after the walk, include/exclude, `skip_dirs`, the shard
/// and `--only`), each with the configuration that governs it: `--show-files`.
pub fn list_files(
    opts: &Options,
    cat: &Catalogue,
) -> Result<Vec<(String, Arc<Config>)>, ToolError> {
    let paths = if opts.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        opts.paths.clone()
    };
    let (candidates, _, _, _) = crate::discover::discover_counting(
        &paths,
        opts.jobs.unwrap_or(0).min(MAX_JOBS),
        !opts.no_ignore,
    )
    .map_err(|MissingPath(p)| ToolError::MissingPath(p))?;
    let only = opts.only.as_ref().map(OnlySet::new).transpose()?;
    let (candidates, paths) = match &opts.only {
        Some(o) => {
            let (c, p, _) = add_named(candidates, paths, o, opts)?;
            (c, p)
        }
        None => (candidates, paths),
    };
    let mut resolver = Resolver::new(cat, opts.config_file.as_deref(), opts.selection.clone())
        .map_err(|e| ToolError::Config(Box::new(e)))?;
    resolver.set_roots(&paths);
    let configured = configure(candidates, &paths, opts, &mut resolver)?;
    let selected = selection(&configured, opts, only.as_ref());
    Ok(configured
        .into_iter()
        .zip(selected)
        .filter(|(_, s)| *s)
        .map(|((c, config), _)| (c.display, config))
        .collect())
}

/// Pairs each candidate with its configuration and drops the files that configuration
/// excludes, and the files under [`Options::skip_dirs`].
fn configure(
    candidates: Vec<Candidate>,
    roots: &[PathBuf],
    opts: &Options,
    resolver: &mut Resolver,
) -> Result<Vec<(Candidate, Arc<Config>)>, ToolError> {
    let abs = crate::config::absolute_path;
    let skip: Vec<PathBuf> = opts.skip_dirs.iter().map(|d| abs(d)).collect();
    let roots: Vec<PathBuf> = if skip.is_empty() {
        Vec::new()
    } else {
        roots.iter().map(|r| abs(r)).collect()
    };
    let mut out: Vec<(Candidate, Arc<Config>)> = Vec::with_capacity(candidates.len());
    let mut overridden: Vec<(*const Config, Arc<Config>)> = Vec::new();
    for c in candidates {
        // The same file reached from two roots (`.` and `crates/a`): `./x` and `x` display
        // alike, and candidates come sorted by display path.
        if out
            .last()
            .is_some_and(|(prev, _)| prev.display == c.display)
        {
            continue;
        }
        if !skip.is_empty() {
            let p = abs(&c.path);
            let deepest_skip = skip
                .iter()
                .filter(|s| p.starts_with(s))
                .map(|s| s.components().count())
                .max();
            let deepest_root = roots
                .iter()
                .filter(|r| p.starts_with(r))
                .map(|r| r.components().count())
                .max();
            if deepest_skip.is_some() && deepest_skip >= deepest_root {
                continue;
            }
        }
        let mut config = resolver
            .for_file(&c.path)
            .map_err(|e| ToolError::Config(Box::new(e)))?;
        if let Some(limit) = opts.max_file_size
            && config.max_file_size != limit
        {
            // One overridden copy per configuration, so files keep sharing it.
            let ptr = Arc::as_ptr(&config);
            config = match overridden.iter().find(|(p, _)| *p == ptr) {
                Some((_, c)) => c.clone(),
                None => {
                    let mut c = (*config).clone();
                    c.max_file_size = limit;
                    let c = Arc::new(c);
                    overridden.push((ptr, c.clone()));
                    c
                }
            };
        }
        if config.includes(&c.path) {
            out.push((c, config));
        }
    }
    Ok(out)
}

/// A file parsed in pass 1: what the rest of the run keeps of it (boxed in the per-file
/// slots: most slots of a prefiltered run stay empty, and an empty one is then 8 bytes).
struct Parsed {
    /// Taken (moved into the project index) when the index is next brought up to date.
    summary: Option<Box<FileSummary>>,
    demand: FileDemand,
    /// The file may hold suppressions: pass 2 checks it whatever else it has.
    suppressions: bool,
    /// Hash of the text, to notice a file that changes before pass 2 reads it again.
    hash: u64,
    errors: Vec<FileError>,
}

/// Stage 0 result for one file, held for every file until stage 0 ends (the parse, when
/// there is one, is boxed: it moves into the parsed set as it is).
enum Read {
    Failed(FileError),
    /// Read and scanned; parsed already when its words said so.
    Ok {
        bytes: u64,
        words: FileWords,
        parsed: Option<Result<Box<Parsed>, FileError>>,
        /// How long the parse took (zero when there was none).
        took: std::time::Duration,
        /// The file's tokens, when the prefilter scanned it and it is not parsed yet.
        sig: Option<TokenSig>,
    },
}

fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

fn internal_error(c: &Candidate, what: &str, p: Box<dyn std::any::Any + Send>) -> FileError {
    FileError {
        path: c.display.clone(),
        line: None,
        column: None,
        message: format!(
            "internal error while {what} this file (please report it): {}",
            panic_message(p)
        ),
    }
}

fn read_error(c: &Candidate, e: SourceError) -> FileError {
    FileError {
        path: c.display.clone(),
        line: e.position.map(|p| p.0),
        column: e.position.map(|p| p.1),
        message: e.message,
    }
}

/// Pass 1 for one file: lower, classify, summarise.
fn parse_one(c: &Candidate, text: &str, cat: &Catalogue) -> Result<Parsed, FileError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let lines = LineIndex::new(text);
        let (model, facts) = analyse_text(c.language, text, cat);
        let errors = parse_errors(c, text, &lines, &model);
        let summary = summarize(&c.display, text, &lines, &model, &facts, cat);
        let demand = FileDemand::of(&c.display, &model, &facts, &summary, cat);
        Parsed {
            summary: Some(Box::new(summary)),
            demand,
            suppressions: crate::prefilter::mentions_idemlint(text),
            hash: text_hash(text),
            errors,
        }
    }))
    .map_err(|p| internal_error(c, "analysing", p))
}

/// Moves the summaries of files parsed since the last call into `index` and resolves it
/// again (the result does not depend on the order files were added in). Returns whether
/// anything was added.
fn update_index(index: &mut ProjectIndex, parsed: &mut [Option<Box<Parsed>>]) -> bool {
    let mut new: Vec<FileSummary> = Vec::new();
    for p in parsed.iter_mut().flatten() {
        if let Some(s) = p.summary.take() {
            new.push(*s);
        }
    }
    if new.is_empty() {
        return false;
    }
    index.extend_deferred(new);
    true
}

type Configured = (Candidate, Arc<Config>);

/// A file's pass-1 result and how long its parse took.
type TimedParse = (Result<Parsed, FileError>, std::time::Duration);

/// Runs `work` on every file of `files` (candidate indices), each with a per-thread state
/// made by `init`, and returns the results by index, in increasing order. The files of
/// at least [`BIG_FILE_BYTES`] by `size` (bytes) run one after another on one thread,
/// largest first, while the other threads take the rest.
///
/// Why: a file's parse tree and model take tens of bytes per source byte while it is
/// analysed, on top of the summaries held by then. Large files in a row on one thread
/// never wait on each other for [`one_big_file_at_a_time`]'s lock, and the largest come
/// while the fewest summaries are held (google-cloud-rust's 2.6 MB generated files:
/// BENCHMARKS.md, thirty-second session).
fn big_apart<T: Send, S>(
    files: Vec<usize>,
    size: impl Fn(usize) -> u64 + Sync,
    init: impl Fn() -> S + Sync + Send,
    work: impl Fn(&mut S, usize) -> T + Sync + Send,
) -> Vec<(usize, T)> {
    let (mut big, small): (Vec<usize>, Vec<usize>) = files
        .iter()
        .partition(|&&i| size(i) >= BIG_FILE_BYTES as u64);
    big.sort_by_key(|&i| std::cmp::Reverse(size(i)));
    let (big, small) = rayon::join(
        || {
            let mut state = init();
            big.iter()
                .map(|&i| (i, work(&mut state, i)))
                .collect::<Vec<_>>()
        },
        || {
            small
                .par_iter()
                .map_init(&init, |state, &i| (i, work(state, i)))
                .collect::<Vec<_>>()
        },
    );
    let mut out = small;
    out.extend(big);
    out.sort_unstable_by_key(|(i, _)| *i);
    out
}

fn run_in_pool(
    candidates: &[Configured],
    selected: &[bool],
    overlays: &Overlays,
    opts: &Options,
    stats: Stats,
    mut since: std::time::Instant,
) -> Report {
    let in_shard: Vec<bool> = selected.to_vec();
    let mut report = Report {
        files: in_shard.iter().filter(|x| **x).count(),
        stats,
        ..Report::default()
    };
    if opts.parse_only {
        let mut r = parse_only(candidates, &in_shard, report);
        r.stats.read = candidates.len();
        r.stats.parsed_per_round.push(r.parsed);
        r.stats.phase("parse", &mut since);
        return r;
    }
    report.stats.prefilter = !opts.no_prefilter;
    // One prefilter per distinct catalogue (configurations differing only in rule levels,
    // such as `[[overrides]]`, share theirs).
    let mut prefilters: Vec<Prefilter> = Vec::new();
    let mut prefilter_of: Vec<Option<usize>> = vec![None; candidates.len()];
    if !opts.no_prefilter {
        let mut seen: Vec<*const Catalogue> = Vec::new();
        for (i, (_, config)) in candidates.iter().enumerate() {
            let ptr = Arc::as_ptr(&config.catalogue);
            let k = match seen.iter().position(|p| *p == ptr) {
                Some(k) => k,
                None => {
                    seen.push(ptr);
                    prefilters.push(Prefilter::new(&config.catalogue));
                    prefilters.len() - 1
                }
            };
            prefilter_of[i] = Some(k);
        }
    }

    // With a pass-1 cache: each configuration's key, computed once per configuration.
    let config_keys: Vec<Option<u64>> = if opts.pass1_cache.is_some() {
        let mut seen: Vec<(*const Config, Option<u64>)> = Vec::new();
        candidates
            .iter()
            .map(|(_, config)| {
                let ptr = Arc::as_ptr(config);
                match seen.iter().find(|(p, _)| *p == ptr) {
                    Some((_, k)) => *k,
                    None => {
                        let k = config_key(config);
                        seen.push((ptr, k));
                        k
                    }
                }
            })
            .collect()
    } else {
        vec![None; candidates.len()]
    };
    // Stage 0: read and scan every file; parse those with a sink word at once (they are
    // needed whenever anything is), or every file without the prefilter.
    let progress = opts.progress.as_deref();
    if let Some(p) = progress {
        p.start(Phase::Reading, candidates.len());
    }
    // Stage 0 parses every file without the prefilter, and with it the files with a sink
    // word (or a suppression) smaller than [`BIG_FILE_BYTES`]; larger ones are parsed
    // right after it ([`Rounds::parse_more`]). Either way the large files are parsed one
    // after another, largest first, beside the rest ([`big_apart`]).
    let on_disk: Vec<u64> = if opts.no_prefilter {
        candidates
            .par_iter()
            .map(|(c, _)| std::fs::symlink_metadata(&c.path).map_or(0, |m| m.len()))
            .collect()
    } else {
        Vec::new()
    };
    let read_one = |scratch: &mut ScanScratch, i: usize| -> Read {
        let (c, config) = &candidates[i];
        if let Some(p) = progress {
            p.step();
        }
        let text = match read_candidate(c, config, overlays[i].as_ref()) {
            Ok(t) => t,
            Err(e) => return Read::Failed(read_error(c, e)),
        };
        let words = match prefilter_of[i] {
            Some(k) => prefilters[k].scan(c.language, &text, scratch),
            None => FileWords {
                source: true,
                sink: true,
                shedlock: true,
                suppression: true,
            },
        };
        let parse_now = prefilter_of[i].is_none()
            || ((words.sink || words.suppression) && text.len() < BIG_FILE_BYTES);
        let start = std::time::Instant::now();
        let parsed = parse_now.then(|| {
            parse_cached(
                c,
                &text,
                &config.catalogue,
                opts.pass1_cache.as_ref(),
                config_keys[i],
            )
            .map(Box::new)
        });
        let took = start.elapsed();
        let sig = (!parse_now && !words.sink && !words.suppression).then(|| scratch.signature());
        Read::Ok {
            bytes: text.len() as u64,
            words,
            parsed,
            took,
            sig,
        }
    };
    let stage0 = big_apart(
        (0..candidates.len()).collect(),
        |i| on_disk.get(i).copied().unwrap_or(0),
        ScanScratch::default,
        read_one,
    );

    let mut parsed: Vec<Option<Box<Parsed>>> = Vec::with_capacity(candidates.len());
    let mut sigs: Vec<Option<TokenSig>> = Vec::with_capacity(candidates.len());
    let mut readable = vec![false; candidates.len()];
    let mut sizes = vec![0u64; candidates.len()];
    let mut deferred = Vec::new();
    // Files with a source word that stage 0 did not parse: where the fresh closure starts.
    let mut sources = Vec::new();
    let mut any_sink = false;
    // Files with a sink word (or a suppression): parsed as soon as stage 0 is done.
    let mut now = Vec::new();
    for (i, r) in stage0 {
        let mut slot = None;
        let mut file_sig = None;
        match r {
            Read::Failed(e) => {
                if in_shard[i] {
                    report.errors.push(e);
                }
            }
            Read::Ok {
                bytes,
                words,
                parsed: p,
                took,
                sig,
            } => {
                if let Some(Ok(_)) = &p {
                    report
                        .stats
                        .parse_took(took, bytes, &candidates[i].0.display);
                }
                readable[i] = true;
                sizes[i] = bytes;
                file_sig = sig;
                if in_shard[i] {
                    report.bytes += bytes;
                }
                any_sink |= words.sink;
                match p {
                    Some(Ok(p)) => slot = Some(p),
                    Some(Err(e)) => {
                        readable[i] = false;
                        if in_shard[i] {
                            report.errors.push(e);
                        }
                    }
                    None if words.sink || words.suppression => now.push(i),
                    None if words.is_seed() => deferred.push(i),
                    None if words.source => sources.push(i),
                    None => {}
                }
            }
        }
        parsed.push(slot);
        sigs.push(file_sig);
    }
    if Cancel::asked(&opts.cancel) {
        report.cancelled = true;
        return report;
    }
    report.stats.read = readable.iter().filter(|r| **r).count();
    let mut state = Rounds {
        candidates,
        overlays,
        cache: opts.pass1_cache.as_ref(),
        config_keys: &config_keys,
        parsed,
        sigs,
        readable,
        sizes,
        sources,
        in_shard: &in_shard,
        errors: &mut report.errors,
        stats: &mut report.stats,
        index: ProjectIndex::default(),
    };
    state.parse_more(&now, None);
    let n0 = state.parsed.iter().flatten().count();
    state.stats.parsed_per_round.push(n0);
    state.stats.phase("read+scan", &mut since);
    if let Some(p) = progress {
        p.start(Phase::Indexing, 0);
    }
    // Round 0 continued: with a sink word somewhere, every ShedLock file too.
    if any_sink {
        let n = state.parse_more(&deferred, None);
        state.stats.parsed_per_round.push(n);
    }
    // Later rounds: files that mention a name pass 1 found.
    if !opts.no_prefilter && any_sink {
        state.name_rounds();
    }
    state.stats.phase("pass 1", &mut since);
    if Cancel::asked(&opts.cancel) {
        report.cancelled = true;
        return report;
    }
    // Pass 1's parse trees and models are gone; what glibc kept of them would otherwise
    // stay resident under the index's build (waqitiapp: 19 MiB).
    release_free_memory();
    state.update_index();
    state.index.finish();
    let Rounds {
        mut parsed, index, ..
    } = state;

    for (i, p) in parsed.iter_mut().enumerate() {
        if let Some(p) = p
            && in_shard[i]
        {
            report.errors.append(&mut p.errors);
        }
    }
    report.parsed = parsed.iter().flatten().count();
    report.stats.index_functions = index.functions.values().map(Vec::len).sum();
    report.stats.index_names = index.functions.len();
    report.stats.phase("index", &mut since);

    // Pass 2: the files that can have a finding, read and analysed again.
    let todo: Vec<(usize, u64)> = parsed
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let p = p.as_ref()?;
            (in_shard[i]
                && (opts.check_every_file || p.suppressions || needs_check(&p.demand, &index)))
            .then_some((i, p.hash))
        })
        .collect();
    drop(parsed);
    // Pass 1's per-file demands are gone: their pages go back before pass 2 analyses again.
    release_free_memory();
    report.checked = todo.len();
    if let Some(p) = progress {
        p.start(Phase::Checking, todo.len());
    }
    let per_file: Vec<Pass2> = todo
        .par_iter()
        .map(|&(i, hash)| {
            if let Some(p) = progress {
                p.step();
            }
            if Cancel::asked(&opts.cancel) {
                return (Vec::new(), None, None);
            }
            check_one(&candidates[i], overlays[i].as_ref(), hash, &index)
        })
        .collect();
    if Cancel::asked(&opts.cancel) {
        report.cancelled = true;
    }
    for (&(i, _), (mut f, e, mut t)) in todo.iter().zip(per_file) {
        if let Some(lines) = &opts.changed_lines {
            let abs = crate::config::absolute_path(&candidates[i].0.path);
            f.retain(|f| lines.contains(&abs, f.line));
            if f.is_empty() {
                t = None;
            }
        }
        report.findings.extend(f);
        report.errors.extend(e);
        if let Some((k, path, v)) = t {
            report.paths.insert(k.clone(), path);
            report.texts.insert(k, v);
        }
    }
    report
        .findings
        .sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    report.stats.checked = report.checked;
    report.stats.cache = opts.pass1_cache.as_ref().and_then(Pass1Cache::disk_counts);
    report.stats.phase("pass 2", &mut since);
    report
}

/// Where the fresh closure of pass 1's name rounds stands ([`FreshScope`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Closure {
    /// Not run yet: it would cost more than it spares.
    Off,
    /// Running (or complete).
    On,
    /// Stopped for good: it grew to cost more than it spares.
    Dropped,
}

/// How many files pass 1 must have parsed before it parses every file left once they hold
/// at most half as many bytes ([`Rounds::name_rounds`]).
const PARSE_THE_REST_FROM: usize = 500;

/// Pass 1 beyond stage 0: the parsed files so far and how to parse more.
struct Rounds<'a> {
    candidates: &'a [Configured],
    overlays: &'a Overlays,
    cache: Option<&'a Pass1Cache>,
    /// Per candidate, its configuration's [`config_key`] (with a cache only).
    config_keys: &'a [Option<u64>],
    parsed: Vec<Option<Box<Parsed>>>,
    /// Per candidate, the tokens of a file stage 0 scanned and did not parse: a round
    /// reads again only the files whose tokens may hold what it scans for.
    sigs: Vec<Option<TokenSig>>,
    /// Read successfully in stage 0 and not failed since.
    readable: Vec<bool>,
    /// Per candidate, its size in bytes as stage 0 read it (0 when it could not).
    sizes: Vec<u64>,
    /// The candidates with a catalogue source word ([`FileWords::source`]) that stage 0
    /// did not parse, in discovery order.
    sources: Vec<usize>,
    in_shard: &'a [bool],
    errors: &'a mut Vec<FileError>,
    stats: &'a mut Stats,
    /// The project index over the files parsed so far (brought up to date by
    /// [`Rounds::update_index`]).
    index: ProjectIndex,
}

impl Rounds<'_> {
    /// Reads and parses `which` (only those matching `scan`, when given); returns how many
    /// were parsed. Files that cannot be read any more (they vanished since stage 0) or
    /// whose analysis panicked are reported (when in the shard) and marked unreadable.
    fn parse_more(&mut self, which: &[usize], scan: Option<&NameScan>) -> usize {
        let candidates = self.candidates;
        let overlays = self.overlays;
        let cache = self.cache;
        let config_keys = self.config_keys;
        let trace = std::env::var_os("IDEMLINT_TRACE_DEMAND").is_some();
        let sigs = &self.sigs;
        let ruled_out = std::sync::atomic::AtomicUsize::new(0);
        let sizes = &self.sizes;
        let results: Vec<(usize, TimedParse)> = big_apart(
            which.to_vec(),
            |i| sizes[i],
            || (),
            |_, i| {
                let (c, config) = &candidates[i];
                if let (Some(s), Some(sig)) = (scan, &sigs[i])
                    && !s.may_match(c.language, sig)
                {
                    ruled_out.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return None;
                }
                let text = match read_candidate(c, config, overlays[i].as_ref()) {
                    Ok(t) => t,
                    Err(e) => return Some((Err(read_error(c, e)), std::time::Duration::ZERO)),
                };
                if let Some(s) = scan {
                    if trace {
                        let w = s.matching(c.language, caller_kind(&c.display), &text)?;
                        eprintln!("demand: parse {} for {w}", c.display);
                    } else if !s.matches(c.language, caller_kind(&c.display), &text) {
                        return None;
                    }
                }
                let start = std::time::Instant::now();
                let parsed = parse_cached(c, &text, &config.catalogue, cache, config_keys[i]);
                Some((parsed, start.elapsed()))
            },
        )
        .into_iter()
        .filter_map(|(i, r)| Some((i, r?)))
        .collect();
        let ruled_out = ruled_out.into_inner();
        self.stats.ruled_out += ruled_out;
        if scan.is_some() {
            self.stats.reread += which.len() - ruled_out;
        }
        let mut n = 0;
        for (i, (p, took)) in results {
            match p {
                Ok(p) => {
                    self.stats
                        .parse_took(took, self.sizes[i], &candidates[i].0.display);
                    self.parsed[i] = Some(Box::new(p));
                    // A parsed file is never scanned again (4.7 MB of signatures on
                    // waqitiapp, whose rounds end up parsing every file).
                    self.sigs[i] = None;
                    n += 1;
                }
                Err(e) => {
                    self.readable[i] = false;
                    self.sigs[i] = None;
                    if self.in_shard[i] {
                        self.errors.push(e);
                    }
                }
            }
        }
        n
    }

    /// Picks the files to parse for [`crate::prefilter::Demand::sampled`]: for each name,
    /// the first `sample_size[name]` unparsed files (8 at first, doubling each time the
    /// name is sampled again) that may declare it. A name whose every such file is
    /// picked is complete: it joins `asked_decls`.
    fn sample(
        &mut self,
        sampled: &std::collections::BTreeSet<String>,
        sample_size: &mut std::collections::BTreeMap<String, usize>,
        asked_decls: &mut std::collections::BTreeSet<String>,
        trace: bool,
    ) -> Vec<usize> {
        let words: Vec<&String> = sampled.iter().collect();
        let scan = NameScan::of(&Default::default(), sampled, &Default::default());
        let candidates = self.candidates;
        let overlays = self.overlays;
        let sigs = &self.sigs;
        let unparsed = self.unparsed();
        let ruled_out = std::sync::atomic::AtomicUsize::new(0);
        let mut hits: Vec<(usize, Vec<usize>)> = unparsed
            .par_iter()
            .filter_map(|&i| {
                let (c, config) = &candidates[i];
                if let Some(sig) = &sigs[i]
                    && !scan.may_match(c.language, sig)
                {
                    ruled_out.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return None;
                }
                let text = read_candidate(c, config, overlays[i].as_ref()).ok()?;
                let w = scan.all_matching(c.language, caller_kind(&c.display), &text);
                (!w.is_empty()).then_some((i, w))
            })
            .collect();
        let ruled_out = ruled_out.into_inner();
        self.stats.ruled_out += ruled_out;
        self.stats.reread += unparsed.len() - ruled_out;
        hits.sort_by_key(|(i, _)| *i);
        let mut picked = Vec::new();
        for (k, name) in words.iter().enumerate() {
            let size = sample_size.entry((*name).clone()).or_insert(4);
            *size *= 2;
            let files: Vec<usize> = hits
                .iter()
                .filter(|(_, w)| w.contains(&k))
                .map(|(i, _)| *i)
                .collect();
            if files.len() <= *size {
                asked_decls.insert((*name).clone());
            }
            if trace {
                eprintln!(
                    "demand: sample {name}: {} of {} files",
                    files.len().min(*size),
                    files.len()
                );
            }
            picked.extend(files.into_iter().take(*size));
        }
        picked.sort_unstable();
        picked.dedup();
        picked
    }

    /// Brings the index up to date with the files parsed so far.
    fn update_index(&mut self) {
        if update_index(&mut self.index, &mut self.parsed) {
            self.stats.index_builds += 1;
        }
    }

    fn unparsed(&self) -> Vec<usize> {
        (0..self.candidates.len())
            .filter(|i| self.readable[*i] && self.parsed[*i].is_none())
            .collect()
    }

    /// Scans the files not parsed yet for the names the parsed ones demand, until nothing
    /// new is parsed; then, when an interceptor's case depends on whether the project
    /// retries calls anywhere and no parsed file says so, parses the rest in chunks until
    /// one does (see [`crate::prefilter::needs_retry_evidence`]).
    fn name_rounds(&mut self) {
        use std::collections::BTreeSet;
        let mut asked: BTreeSet<String> = Default::default();
        // Names scanned for in some kinds of code only ([`Demand::reach`]), and which.
        let mut asked_reach: std::collections::BTreeMap<String, u8> = Default::default();
        let mut asked_decls: BTreeSet<String> = Default::default();
        let mut asked_pairs: BTreeSet<(String, String)> = Default::default();
        let mut asked_named_for: BTreeSet<(String, String)> = Default::default();
        // How many declarations of a sampled name the next sample parses.
        let mut sample_size: std::collections::BTreeMap<String, usize> = Default::default();
        let trace = std::env::var_os("IDEMLINT_TRACE_DEMAND").is_some();
        // Files the last round parsed (none before the first round).
        let mut last_round = 0;
        // Whether the fresh closure runs ([`FreshScope`]).
        let mut closure = Closure::Off;
        loop {
            // Little left of a large project after a round that parsed files (so another
            // round follows): parsing the rest costs less than the rounds of index and
            // demand that would pick among it (a round resolves the index and the demand
            // over everything parsed, at about a third of a parse per byte). Bytes, not
            // files, measure both: many small files parsed are no reason to parse a few
            // large ones. With every file parsed, pass 1 is `--no-prefilter`'s, so the
            // findings are the same by construction. In a small project a round costs
            // milliseconds.
            let rest = self.unparsed();
            if rest.is_empty() {
                break;
            }
            let parsed = self.parsed.iter().flatten().count();
            let bytes = |which: &mut dyn Iterator<Item = usize>| -> u64 {
                which.map(|i| self.sizes[i]).sum()
            };
            let parsed_bytes =
                bytes(&mut (0..self.parsed.len()).filter(|i| self.parsed[*i].is_some()));
            let rest_bytes = bytes(&mut rest.iter().copied());
            if last_round > 0 && parsed >= PARSE_THE_REST_FROM && rest_bytes * 2 <= parsed_bytes {
                if trace {
                    eprintln!("demand: round: parsing the {} files left", rest.len());
                }
                let n = self.parse_more(&rest, None);
                self.stats.parsed_per_round.push(n);
                break;
            }
            let sources_left: Vec<usize> = self
                .sources
                .iter()
                .copied()
                .filter(|i| self.readable[*i] && self.parsed[*i].is_none())
                .collect();
            let sources_bytes: u64 = sources_left.iter().map(|i| self.sizes[*i]).sum();
            let t0 = std::time::Instant::now();
            self.update_index();
            let t1 = std::time::Instant::now();
            // A name scanned for in full has every declaration parsed.
            let complete = |n: &str| asked.contains(n) || asked_decls.contains(n);
            // A declaration wanted with a type named for a receiver was scanned for.
            let named_for_done = |c: &str, n: &str| {
                complete(c) || asked_named_for.contains(&(c.to_string(), n.to_string()))
            };
            // Scanned for in every file: every mention is parsed.
            let mentioned = |n: &str| asked.contains(n);
            let scope = FreshScope {
                sources_parsed: sources_left.is_empty(),
                mentioned: &mentioned,
            };
            let demand_of = |with_closure: bool| {
                demanded_names(
                    &self.index,
                    self.parsed.iter().flatten().map(|p| &p.demand),
                    &complete,
                    &named_for_done,
                    with_closure.then_some(&scope),
                )
            };
            // What a demand's names may select of the files left, in bytes (by the files'
            // token signatures: an over-estimate of what the scan parses).
            let selected_by = |d: &crate::prefilter::Demand| -> u64 {
                let wanted: BTreeSet<String> = d
                    .names
                    .iter()
                    .chain(&d.decls)
                    .chain(&d.sampled)
                    .filter(|n| !asked.contains(*n) && !asked_decls.contains(*n))
                    .cloned()
                    .collect();
                if wanted.is_empty() {
                    return 0;
                }
                let scan = NameScan::of(&wanted, &Default::default(), &Default::default());
                rest.iter()
                    .filter(|i| {
                        self.sigs[**i]
                            .as_ref()
                            .is_none_or(|sig| scan.may_match(self.candidates[**i].0.language, sig))
                    })
                    .map(|i| self.sizes[*i])
                    .sum()
            };
            // The fresh closure runs while it costs less than the demand without it: the
            // files with a source word and those mentioning its names, against the
            // declarations of the names it may show can never be fresh (a generated
            // `as_str` in 550 files). Where source words are everywhere (a clock read in
            // most business code), or its names grow to the project's common ones, it
            // does not run, or stops for good; either way the demand is sound.
            let demand = match closure {
                Closure::Dropped => demand_of(false),
                Closure::Off | Closure::On => {
                    let mut with = (closure == Closure::On).then(|| demand_of(true));
                    if let Some(w) = with.take_if(|w| w.closure_complete) {
                        w
                    } else {
                        let normal = demand_of(false);
                        let cost_normal = selected_by(&normal);
                        // Not started while the files with a source word alone cost as much.
                        if closure == Closure::Off && sources_bytes < cost_normal {
                            with = Some(demand_of(true));
                        }
                        let cost_with = with
                            .as_ref()
                            .map(|w| selected_by(w) + if w.sources { sources_bytes } else { 0 });
                        if trace {
                            eprintln!(
                                "demand: fresh closure ({closure:?}): {} files with a source word left ({sources_bytes} bytes); the names may select {cost_with:?} bytes with it, {cost_normal} without, of {rest_bytes} left",
                                sources_left.len()
                            );
                        }
                        match with {
                            Some(w) if cost_with.is_some_and(|c| c < cost_normal) => {
                                closure = Closure::On;
                                w
                            }
                            _ => {
                                if closure == Closure::On {
                                    closure = Closure::Dropped;
                                }
                                normal
                            }
                        }
                    }
                }
            };
            let deferred = demand.deferred;
            let want_sources = demand.sources;
            // A name in reach of some kinds of code is scanned for again only when it
            // reaches a kind it was not scanned for in.
            let reach = demand.reach;
            let new_reach = |n: &String| match reach.get(n) {
                Some(r) => asked_reach.get(n).is_none_or(|a| r & !a != 0),
                None => true,
            };
            if trace {
                eprintln!(
                    "demand: round: index {:.3} s, demand {:.3} s",
                    (t1 - t0).as_secs_f64(),
                    t1.elapsed().as_secs_f64()
                );
            }
            let names: BTreeSet<String> = demand
                .names
                .into_iter()
                .filter(|n| !asked.contains(n) && new_reach(n))
                .collect();
            // A declaration is among the mentions of its name.
            let decls: BTreeSet<String> = demand
                .decls
                .into_iter()
                .filter(|n| !asked.contains(n) && !asked_decls.contains(n) && !names.contains(n))
                .collect();
            // A name wanted alone (in full) this round or before covers its pairs, its
            // declarations with a type named for a receiver, and its samples.
            let in_full = |n: &String| {
                [&asked, &asked_decls, &names, &decls]
                    .iter()
                    .any(|s| s.contains(n))
            };
            let pairs: BTreeSet<(String, String)> = demand
                .typed
                .into_iter()
                .filter(|p| !asked_pairs.contains(p) && !in_full(&p.0))
                .collect();
            let named_for: BTreeSet<(String, String)> = demand
                .named_for
                .into_iter()
                .filter(|p| !asked_named_for.contains(p) && !in_full(&p.0))
                .collect();
            let sampled: BTreeSet<String> =
                demand.sampled.into_iter().filter(|n| !in_full(n)).collect();
            if names.is_empty()
                && decls.is_empty()
                && pairs.is_empty()
                && named_for.is_empty()
                && sampled.is_empty()
                && !want_sources
            {
                break;
            }
            if trace {
                eprintln!(
                    "demand: names {names:?}\n  reach {reach:?}\n  decls {decls:?}\n  pairs {pairs:?}\n  named for {named_for:?}"
                );
            }
            let scan = NameScan::of(&names, &decls, &pairs)
                .with_reach(&reach)
                .with_named_for(&named_for);
            // A name scanned for in reach of some kinds of code has every declaration
            // parsed: it is complete, yet scanned for again if it reaches further.
            for n in names {
                match reach.get(&n) {
                    Some(r) => {
                        *asked_reach.entry(n.clone()).or_default() |= r;
                        asked_decls.insert(n);
                    }
                    None => {
                        asked.insert(n);
                    }
                }
            }
            asked_decls.extend(decls);
            asked_pairs.extend(pairs);
            asked_named_for.extend(named_for);
            let rest = self.unparsed();
            if rest.is_empty() || (scan.is_empty() && sampled.is_empty() && !want_sources) {
                break;
            }
            let t2 = std::time::Instant::now();
            let mut n = if scan.is_empty() {
                0
            } else {
                self.parse_more(&rest, Some(&scan))
            };
            if !sampled.is_empty() {
                // The first declarations of each sampled name (in discovery order), as
                // many as its sample size; a name with no more than that is complete.
                let picked = self.sample(&sampled, &mut sample_size, &mut asked_decls, trace);
                let picked: Vec<usize> = picked
                    .into_iter()
                    .filter(|i| self.parsed[*i].is_none())
                    .collect();
                n += self.parse_more(&picked, None);
            }
            if want_sources {
                // Those the scan did not parse already.
                let left: Vec<usize> = sources_left
                    .iter()
                    .copied()
                    .filter(|i| self.parsed[*i].is_none())
                    .collect();
                let k = self.parse_more(&left, None);
                if trace {
                    eprintln!("demand: fresh closure: parsed {k} files with a source word");
                }
                n += k;
            }
            if trace {
                eprintln!(
                    "demand: round: scanned {} and parsed {n} in {:.3} s",
                    rest.len(),
                    t2.elapsed().as_secs_f64()
                );
            }
            self.stats.parsed_per_round.push(n);
            last_round = n;
            // A held-back name waits on this scan, whatever it parsed.
            if n == 0 && !deferred {
                break;
            }
        }
        self.update_index();
        self.index.resolve_sites();
        if crate::prefilter::needs_retry_evidence(
            &self.index,
            self.parsed.iter().flatten().map(|p| &p.demand),
        ) {
            let rest = self.unparsed();
            for chunk in rest.chunks(64) {
                let n = self.parse_more(chunk, None);
                self.stats.parsed_per_round.push(n);
                self.update_index();
                self.index.resolve_sites();
                if !crate::prefilter::needs_retry_evidence(
                    &self.index,
                    self.parsed.iter().flatten().map(|p| &p.demand),
                ) {
                    break;
                }
            }
        }
    }
}

/// Pass 2 output for one file: its findings, an error, and its text when it has findings
/// (for rendering and fixes).
type Pass2 = (
    Vec<Finding>,
    Option<FileError>,
    Option<(String, PathBuf, Arc<str>)>,
);

fn check_one(
    (c, config): &Configured,
    overlay: Option<&Arc<str>>,
    hash: u64,
    index: &ProjectIndex,
) -> Pass2 {
    let text = match read_candidate(c, config, overlay) {
        Ok(t) => t,
        Err(e) => return (Vec::new(), Some(read_error(c, e)), None),
    };
    if text_hash(&text) != hash {
        return (
            Vec::new(),
            Some(FileError {
                path: c.display.clone(),
                line: None,
                column: None,
                message: "the file changed while idemlint was running; skipped (run again)".into(),
            }),
            None,
        );
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        crate::flow::reset_budget();
        let lines = LineIndex::new(&text);
        let (model, mut facts) =
            analyse_text_in_project(c.language, &text, &config.catalogue, index, &c.display);
        crate::index::apply_inferred_boundaries(
            &model,
            &mut facts,
            index,
            &c.display,
            &config.catalogue,
        );
        let ctx = Ctx {
            path: &c.display,
            text: &text,
            lines: &lines,
            model: &model,
            facts: &facts,
            index,
            catalogue: &config.catalogue,
            scopes: Default::default(),
        };
        let mut findings = file_findings(&ctx, config);
        let fix_ctx = crate::fix::FixCtx {
            text: &text,
            lines: &lines,
            model: &model,
            facts: &facts,
            path: &c.path,
            java_version: config.java_version,
        };
        crate::fix::attach(&fix_ctx, &mut findings);
        let exhausted = crate::flow::budget_exhausted();
        verify_fixes(c, &text, config, index, &model, &facts, &mut findings);
        crate::fix::align_help(&fix_ctx, &mut findings);
        (findings, exhausted)
    }));
    if text.len() >= RELEASE_AFTER_BYTES {
        release_free_memory();
    }
    match r {
        Ok((f, exhausted)) => {
            let t = (!f.is_empty())
                .then(|| (c.display.clone(), c.path.clone(), Arc::from(text.as_str())));
            let e = exhausted.then(|| FileError {
                path: c.display.clone(),
                line: None,
                column: None,
                message: format!(
                    "the value-flow budget ({} steps per value) ran out in this file: findings \
                     that need a longer chain of assignments may be missing",
                    crate::flow::MAX_STEPS
                ),
            });
            (f, e, t)
        }
        Err(p) => (Vec::new(), Some(internal_error(c, "checking", p)), None),
    }
}

/// Runs the checks of `crate::fix::verify` on every fix of `findings` (each applied alone
/// to `text`): the fixed text parses; the finding is gone and no other finding appears or
/// goes; no name is used before its declaration; the key is evaluated inside as many loops
/// over items / per-item lambdas as before. A fix that fails one becomes `unsafe`, with the
/// reasons.
/// The findings of one file as reported: the rules' findings under the configuration and
/// the file's suppressions, then one per bug ([`crate::report::merge::one_per_bug`]).
fn file_findings(ctx: &Ctx, config: &Config) -> Vec<Finding> {
    crate::report::merge::one_per_bug(crate::suppress::apply(ctx, check_file(ctx), config))
}

/// Fixes verified per file (see `verify_fixes`); the rest are offered as unsafe.
pub const MAX_VERIFIED_FIXES: usize = 32;

fn verify_fixes(
    c: &Candidate,
    text: &str,
    config: &Config,
    index: &ProjectIndex,
    model: &FileModel,
    facts: &FileFacts,
    findings: &mut [Finding],
) {
    use crate::fix::apply::{Mode, apply};
    use crate::fix::verify::{item_scopes, used_before_declared};
    if findings.iter().all(|f| f.fix.is_none()) {
        return;
    }
    // A finding counts with the rules merged into it (`also`): hoisting a clock out of a
    // retry leaves its `time-in-key` finding, which is expected, not a change.
    let keys = |f: &Finding| {
        let src = f.source.split_whitespace().collect::<String>();
        std::iter::once(f.rule)
            .chain(f.also.iter().map(|a| a.rule))
            .map(move |r| (r, src.clone()))
            .collect::<Vec<_>>()
    };
    let key = |f: &Finding| (f.rule, f.source.split_whitespace().collect::<String>());
    let before: Vec<_> = findings.iter().flat_map(keys).collect();
    let before_unbound = used_before_declared(model);
    // Each check re-analyses the whole file, so the work per file is bounded: fixes past
    // the first MAX_VERIFIED_FIXES are not verified and are offered as unsafe.
    let mut verified = 0usize;
    #[allow(clippy::needless_range_loop)] // `findings[i]` is read and then replaced
    for i in 0..findings.len() {
        let Some(mut fix) = findings[i].fix.clone() else {
            continue;
        };
        verified += 1;
        if verified > MAX_VERIFIED_FIXES {
            fix.applicability = crate::finding::Applicability::Unsafe;
            fix.reason = Some(format!(
                "not checked: idemlint re-analyses the first {MAX_VERIFIED_FIXES} fixes of a \
                 file only; apply the checked ones and run again to check this one"
            ));
            findings[i].fix = Some(fix);
            continue;
        }
        let mut reasons: Vec<String> = Vec::new();
        let (new, applied) = apply(text, std::slice::from_ref(&findings[i]), Mode::All);
        if applied.is_empty() {
            reasons.push("its edits overlap, so they cannot be applied as they are".into());
        } else {
            let lines = LineIndex::new(&new);
            let (m2, mut facts2) =
                analyse_text_in_project(c.language, &new, &config.catalogue, index, &c.display);
            if model.parses_worse(&m2) {
                reasons.push("the file would no longer parse after the edit".into());
            } else {
                crate::index::apply_inferred_boundaries(
                    &m2,
                    &mut facts2,
                    index,
                    &c.display,
                    &config.catalogue,
                );
                let ctx = Ctx {
                    path: &c.display,
                    text: &new,
                    lines: &lines,
                    model: &m2,
                    facts: &facts2,
                    index,
                    catalogue: &config.catalogue,
                    scopes: Default::default(),
                };
                let mut after: Vec<_> = file_findings(&ctx, config).iter().flat_map(keys).collect();
                let this = key(&findings[i]);
                let mut expected = before.clone();
                if let Some(j) = expected.iter().position(|k| *k == this) {
                    expected.remove(j);
                }
                expected.sort();
                after.sort();
                let n = |v: &[(&str, String)]| v.iter().filter(|k| **k == this).count();
                if n(&after) > n(&expected) {
                    reasons.push(
                        "idemlint still finds the same defect after the edit, so it does not give the attempts one key"
                            .into(),
                    );
                } else if after != expected {
                    reasons.push(
                        "the edit changes what idemlint reports elsewhere in the file, so it changes more than this key"
                            .into(),
                    );
                }
                for name in used_before_declared(&m2) {
                    if !before_unbound.contains(&name) {
                        reasons.push(format!(
                            "after the edit `{name}` would be read before its declaration, which does not compile"
                        ));
                    }
                }
                if let Some(ins) = fix
                    .edits
                    .iter()
                    .filter(|e| e.start == e.end)
                    .min_by_key(|e| e.start)
                {
                    let p = ins.start + (ins.content.len() - ins.content.trim_start().len());
                    let was = item_scopes(model, facts, findings[i].span.start);
                    let now = item_scopes(&m2, &facts2, p + 1);
                    if now < was {
                        reasons.push(
                            "hoisting the key out of the loop (or lambda) over items would give every item the same key"
                                .into(),
                        );
                    } else if now > was {
                        reasons.push(
                            "the edit would move the key into a loop (or lambda) over items, so items that shared one key would each get a new one"
                                .into(),
                        );
                    }
                }
            }
        }
        if !reasons.is_empty() {
            fix.applicability = crate::finding::Applicability::Unsafe;
            let all: Vec<String> = fix.reason.take().into_iter().chain(reasons).collect();
            fix.reason = Some(all.join("; "));
            findings[i].fix = Some(fix);
        }
    }
}

/// `--parse-only`: read and parse every file of the shard, report parse errors.
fn parse_only(candidates: &[Configured], in_shard: &[bool], mut report: Report) -> Report {
    let results: Vec<(u64, Vec<FileError>)> = candidates
        .par_iter()
        .zip(in_shard.par_iter())
        .filter(|(_, s)| **s)
        .map(|((c, config), _)| {
            let text = match read_source(&c.path, config.max_file_size) {
                Ok(t) => t,
                Err(e) => return (0, vec![read_error(c, e)]),
            };
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let lines = LineIndex::new(&text);
                let model =
                    one_big_file_at_a_time(text.len(), || crate::lang::lower(c.language, &text));
                let mut errs = parse_errors(c, &text, &lines, &model);
                for e in &mut errs {
                    for tail in [RUST_SYNTAX_TAIL, RECOVERED_SYNTAX_TAIL] {
                        if let Some(m) = e.message.strip_suffix(tail) {
                            e.message = m.to_string();
                        }
                    }
                }
                errs
            }));
            match r {
                Ok(errs) => (text.len() as u64, errs),
                Err(p) => (text.len() as u64, vec![internal_error(c, "parsing", p)]),
            }
        })
        .collect();
    for (b, errs) in results {
        report.bytes += b;
        report.errors.extend(errs);
    }
    report.parsed = report.files;
    report
}

/// A file whose text fixes would change.
#[derive(Debug, Clone)]
pub struct FixedFile {
    pub display: String,
    pub path: PathBuf,
    pub old: String,
    pub new: String,
    /// Rules whose fixes were applied, in order.
    pub rules: Vec<&'static str>,
}

/// Computes the fixed text of every file with applicable fixes in `report`: applies
/// non-overlapping fixes, re-analyses the file alone, and repeats while new fixes apply
/// (at most 5 rounds). A round whose result parses with more errors than the original is
/// rolled back and reported in the returned errors (naming the rule and the file).
/// Nothing is written; see [`write_fixed`]. Each re-analysis uses the file's
/// configuration (`opts.config_file` or discovery, `opts.selection`), so suppressed
/// findings and rules that are off stay unfixed in every round. With
/// [`Options::changed_lines`] (`--new-since`), later rounds fix only findings whose
/// fingerprint `report` had.
pub fn compute_fixes(
    report: &Report,
    mode: crate::fix::apply::Mode,
    opts: &Options,
    cat: &Catalogue,
) -> (Vec<FixedFile>, Vec<FileError>) {
    let mut resolver = match Resolver::new(cat, opts.config_file.as_deref(), opts.selection.clone())
    {
        Ok(r) => r,
        Err(e) => {
            return (
                Vec::new(),
                vec![FileError {
                    path: e.file.clone(),
                    line: None,
                    column: None,
                    message: e.to_string(),
                }],
            );
        }
    };
    let mut by_file: std::collections::BTreeMap<&str, Vec<Finding>> = Default::default();
    for f in &report.findings {
        if f.fix.as_ref().is_some_and(|x| mode.allows(x.applicability)) {
            by_file.entry(&f.path).or_default().push(f.clone());
        }
    }
    let mut fixed = Vec::new();
    let mut errors = Vec::new();
    for (display, findings) in by_file {
        let Some(original) = report.texts.get(display).map(|t| t.to_string()) else {
            continue;
        };
        // Only files read from disk can be fixed, and only at their real path.
        let Some(real) = report.paths.get(display).cloned() else {
            continue;
        };
        let language = match Language::from_path(&real) {
            Some(l) => l,
            None => continue,
        };
        let base = crate::lang::lower(language, &original);
        let mut text = original.clone();
        let reported: std::collections::HashSet<String> =
            findings.iter().map(|f| f.fingerprint.clone()).collect();
        let mut findings = findings;
        let mut rules = Vec::new();
        for _round in 0..5 {
            let (new, applied) = crate::fix::apply::apply(&text, &findings, mode);
            if applied.is_empty() || new == text {
                break;
            }
            if base.parses_worse(&crate::lang::lower(language, &new)) {
                errors.push(FileError {
                    path: display.to_string(),
                    line: None,
                    column: None,
                    message: format!(
                        "the fix for {} would leave a syntax error in this file; it was not applied",
                        applied.join(", ")
                    ),
                });
                break;
            }
            rules.extend(applied);
            text = new;
            let config = match resolver.for_path(&real) {
                Ok(c) => c,
                Err(e) => {
                    errors.push(FileError {
                        path: display.to_string(),
                        line: None,
                        column: None,
                        message: e.to_string(),
                    });
                    break;
                }
            };
            findings = match check_text_with(display, &text, &config) {
                Some((f, _)) => f,
                None => break,
            };
            // `--new-since` and `--baseline`: later rounds fix only what was reported (a
            // finding keeps its fingerprint when lines move), not the file's other
            // findings (the baseline's, or those on unchanged lines).
            if opts.changed_lines.is_some() || report.baseline.is_some() {
                findings.retain(|f| reported.contains(&f.fingerprint));
            }
        }
        if text != original {
            fixed.push(FixedFile {
                display: display.to_string(),
                path: real,
                old: original,
                new: text,
                rules,
            });
        }
    }
    (fixed, errors)
}

/// Writes fixed files to disk, each through a temporary file renamed over it (permissions
/// kept; a file that is now a symbolic link, or changed since it was analysed, is left
/// alone). Every file is tried; returns the files that could not be written.
pub fn write_fixed(files: &[FixedFile]) -> Vec<FileError> {
    let mut failed = Vec::new();
    for f in files {
        if let Err(e) = crate::fsio::write_atomic(
            &f.path,
            f.new.as_bytes(),
            crate::fsio::WriteTarget::Existing,
            Some(f.old.as_bytes()),
        ) {
            failed.push(FileError {
                path: f.display.clone(),
                line: None,
                column: None,
                message: format!("could not write the fix: {e}"),
            });
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::{BIG_FILE_BYTES, Stats, big_apart};

    #[test]
    fn the_slowest_parses_are_kept_longest_first() {
        let mut stats = Stats::default();
        for (ms, path) in [
            (5, "a"),
            (9, "b"),
            (1, "c"),
            (7, "d"),
            (3, "e"),
            (8, "f"),
            (2, "g"),
        ] {
            stats.parse_took(std::time::Duration::from_millis(ms), ms, path);
        }
        let kept: Vec<&str> = stats.slowest.iter().map(|(_, _, p)| p.as_str()).collect();
        assert_eq!(kept, ["b", "f", "d", "a", "e"]);
        assert!(
            stats
                .render()
                .contains("slow to parse: 0.009 s, 0.0 MB, b\n")
        );
    }

    #[test]
    fn big_files_run_one_after_another_largest_first_and_results_come_by_index() {
        let big = BIG_FILE_BYTES as u64;
        // Sizes by index: three big files among small ones, in no particular order.
        let sizes = [10, big + 5, 3, big, 7, big * 3, 1, 2];
        let ran = std::sync::Mutex::new(Vec::new());
        let out = big_apart(
            vec![7, 0, 1, 2, 3, 4, 5, 6],
            |i| sizes[i],
            || (),
            |_, i| {
                ran.lock().unwrap().push(i);
                i * 10
            },
        );
        assert_eq!(
            out,
            (0..8).map(|i| (i, i * 10)).collect::<Vec<_>>(),
            "every file once, by index"
        );
        let ran = ran.into_inner().unwrap();
        let big_order: Vec<usize> = ran.iter().copied().filter(|&i| sizes[i] >= big).collect();
        assert_eq!(big_order, vec![5, 1, 3], "the big files, largest first");
        assert_eq!(ran.len(), 8);
    }

    #[test]
    fn parsed_rounds_are_told_by_what_they_parsed() {
        let text = |rounds: &[usize], prefilter: bool| {
            Stats {
                parsed_per_round: rounds.to_vec(),
                prefilter,
                ..Stats::default()
            }
            .rounds_text()
        };
        assert_eq!(
            text(&[19, 0, 724, 1079], true),
            "19 with a key word, 0 with a lock word, then 724 + 1079 in 2 rounds of files that \
             declare or call functions the files parsed before lead to"
        );
        assert_eq!(
            text(&[5, 0, 3], true),
            "5 with a key word, 0 with a lock word, then 3 in 1 round of files that declare or \
             call functions the files parsed before lead to"
        );
        assert_eq!(text(&[5, 0], true), "5 with a key word, 0 with a lock word");
        assert_eq!(text(&[1822, 0], false), "1822 (every file, no prefilter)");
        assert_eq!(text(&[], true), "none");
    }
}
