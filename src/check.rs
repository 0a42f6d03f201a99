//! The one pipeline both the CLI and (later) the LSP server call:
//! discover → read → lower → classify → summarise (pass 1, parallel) → project index →
//! rules (pass 2, parallel) → configuration and suppressions ([`crate::suppress::apply`]) →
//! sorted findings. Each file is analysed under its own configuration
//! ([`crate::config::Resolver`]): its catalogue, rule levels, include/exclude globs.
//!
//! Every file is analysed on its own inside `catch_unwind`, on worker threads with a large
//! stack (deeply nested code recurses in the parsers), so one bad file is reported in
//! `errors` and never stops the run.

use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;

use crate::catalogue::Catalogue;
use crate::classify::{FileFacts, classify};
use crate::config::{Config, ConfigError, Resolver, RuleSelection};
use crate::discover::{Candidate, MissingPath, discover};
use crate::finding::{FileError, Finding};
use crate::index::{FileSummary, ProjectIndex, summarize};
use crate::model::{FileModel, Language};
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
}

/// The outcome of a run.
#[derive(Debug, Default)]
pub struct Report {
    /// Sorted by path, line, column, rule.
    pub findings: Vec<Finding>,
    /// Sorted by path, line.
    pub errors: Vec<FileError>,
    pub files: usize,
    pub bytes: u64,
    /// Text of every file that has a finding, by display path (for rendering snippets).
    pub texts: std::collections::HashMap<String, Arc<str>>,
    /// Set when a baseline was applied (`--baseline`, `--write-baseline`).
    pub baseline: Option<crate::baseline::Outcome>,
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
            ToolError::MissingPath(p) => write!(f, "path not found: {}", p.display()),
            ToolError::ThreadPool(e) => write!(f, "could not start worker threads: {e}"),
            ToolError::Config(e) => write!(f, "{e}"),
            ToolError::StdinName(n) => write!(
                f,
                "cannot tell the language of `{n}`: --stdin-filename needs a name ending in .rs, .java, .kt or .kts"
            ),
            ToolError::Usage(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ToolError {}

/// One file after pass 1.
struct Analysed {
    candidate: Candidate,
    text: Arc<str>,
    lines: LineIndex,
    model: FileModel,
    facts: FileFacts,
    config: Arc<Config>,
}

/// Reads a file as UTF-8 source. Errors name the problem in words a user can act on.
pub fn read_source(path: &std::path::Path) -> Result<String, SourceError> {
    let bytes = std::fs::read(path).map_err(|e| SourceError {
        message: format!("could not read: {e}"),
        position: None,
    })?;
    let probe = &bytes[..bytes.len().min(8192)];
    if probe.contains(&0) {
        return Err(SourceError {
            message: "binary file (contains NUL bytes); skipped".into(),
            position: None,
        });
    }
    String::from_utf8(bytes).map_err(|e| {
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
    let mut model = crate::lang::lower(language, text);
    let facts = classify(&mut model, cat);
    (model, facts)
}

/// Most parse problems reported per file; the rest are summarised in one more error.
pub const MAX_PARSE_ERRORS: usize = 5;

fn parse_errors(c: &Candidate, text: &str, lines: &LineIndex, model: &FileModel) -> Vec<FileError> {
    let tail = match c.language {
        Language::Rust => "; the file was skipped (the Rust parser stops at the first error)",
        _ => "; the rest of the file was analysed where the parser recovered",
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
        out.push(FileError {
            path: c.display.clone(),
            line: Some(p.line),
            column: Some(p.column),
            message: format!("{}{tail}", e.message),
        });
    }
    if more > 0 {
        out.push(FileError {
            path: c.display.clone(),
            line: None,
            column: None,
            message: format!("{more} more syntax error(s) not shown"),
        });
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
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let lines = LineIndex::new(text);
        let (model, facts) = analyse_text(language, text, cat);
        let errors = parse_errors(&c, text, &lines, &model);
        let summary = summarize(&c.display, text, &lines, &model, &facts, cat);
        let index = ProjectIndex::build(vec![summary]);
        let ctx = Ctx {
            path: &c.display,
            text,
            lines: &lines,
            model: &model,
            facts: &facts,
            index: &index,
            catalogue: cat,
        };
        let mut findings = crate::suppress::apply(&ctx, check_file(&ctx), config);
        crate::fix::attach(
            &crate::fix::FixCtx {
                text,
                lines: &lines,
                model: &model,
                facts: &facts,
            },
            &mut findings,
        );
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
    let config = resolver.for_path(path).map_err(config_error)?;
    if !config.includes(path) {
        return Ok(Report::default());
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
        texts,
        baseline: None,
    })
}

/// Runs the whole pipeline.
pub fn run(opts: &Options, cat: &Catalogue) -> Result<Report, ToolError> {
    let paths = if opts.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        opts.paths.clone()
    };
    let (candidates, mut errors) =
        discover(&paths).map_err(|MissingPath(p)| ToolError::MissingPath(p))?;
    let mut resolver = Resolver::new(cat, opts.config_file.as_deref(), opts.selection.clone())
        .map_err(|e| ToolError::Config(Box::new(e)))?;
    let candidates = configure(candidates, &paths, opts, &mut resolver)?;
    let mut builder = rayon::ThreadPoolBuilder::new().stack_size(STACK_SIZE);
    if let Some(j) = opts.jobs {
        builder = builder.num_threads(j.clamp(1, MAX_JOBS));
    }
    let pool = builder
        .build()
        .map_err(|e| ToolError::ThreadPool(e.to_string()))?;
    pool.install(|| run_in_pool(candidates, &mut errors, opts))
        .map(|mut r| {
            r.errors.extend(errors);
            r.errors
                .sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
            r
        })
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
        let config = resolver
            .for_path(&c.path)
            .map_err(|e| ToolError::Config(Box::new(e)))?;
        if config.includes(&c.path) {
            out.push((c, config));
        }
    }
    Ok(out)
}

/// Pass 2 output for one file: its findings, an internal error, and its text when it has
/// findings (for rendering).
type Pass2 = (Vec<Finding>, Option<FileError>, Option<(String, Arc<str>)>);

enum Pass1 {
    Done(Box<Analysed>, FileSummary, Vec<FileError>),
    ParsedOnly(u64, Vec<FileError>),
    Failed(FileError),
}

fn run_in_pool(
    candidates: Vec<(Candidate, Arc<Config>)>,
    _errors: &mut [FileError],
    opts: &Options,
) -> Result<Report, ToolError> {
    let files = candidates.len();
    let pass1: Vec<Pass1> = candidates
        .into_par_iter()
        .map(|(c, config)| {
            let cat: &Catalogue = &config.catalogue;
            let text = match read_source(&c.path) {
                Ok(t) => t,
                Err(e) => {
                    return Pass1::Failed(FileError {
                        path: c.display.clone(),
                        line: e.position.map(|p| p.0),
                        column: e.position.map(|p| p.1),
                        message: e.message,
                    });
                }
            };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let lines = LineIndex::new(&text);
                if opts.parse_only {
                    let model = crate::lang::lower(c.language, &text);
                    let errs = parse_errors(&c, &text, &lines, &model);
                    return Pass1::ParsedOnly(text.len() as u64, errs);
                }
                let (model, facts) = analyse_text(c.language, &text, cat);
                let errs = parse_errors(&c, &text, &lines, &model);
                let summary = summarize(&c.display, &text, &lines, &model, &facts, cat);
                Pass1::Done(
                    Box::new(Analysed {
                        candidate: c.clone(),
                        text: Arc::from(text.as_str()),
                        lines,
                        model,
                        facts,
                        config: config.clone(),
                    }),
                    summary,
                    errs,
                )
            }));
            result.unwrap_or_else(|p| {
                Pass1::Failed(FileError {
                    path: c.display.clone(),
                    line: None,
                    column: None,
                    message: format!(
                        "internal error while analysing this file (please report it): {}",
                        panic_message(p)
                    ),
                })
            })
        })
        .collect();

    let mut report = Report {
        files,
        ..Report::default()
    };
    let mut analysed = Vec::new();
    let mut summaries = Vec::new();
    for p in pass1 {
        match p {
            Pass1::Done(a, s, errs) => {
                report.bytes += a.text.len() as u64;
                report.errors.extend(errs);
                analysed.push(*a);
                summaries.push(s);
            }
            Pass1::ParsedOnly(bytes, errs) => {
                report.bytes += bytes;
                report.errors.extend(errs);
            }
            Pass1::Failed(e) => report.errors.push(e),
        }
    }
    if opts.parse_only {
        return Ok(report);
    }
    let index = ProjectIndex::build(summaries);
    let per_file: Vec<Pass2> = analysed
        .par_iter()
        .map(|a| {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let ctx = Ctx {
                    path: &a.candidate.display,
                    text: &a.text,
                    lines: &a.lines,
                    model: &a.model,
                    facts: &a.facts,
                    index: &index,
                    catalogue: &a.config.catalogue,
                };
                let mut findings = crate::suppress::apply(&ctx, check_file(&ctx), &a.config);
                crate::fix::attach(
                    &crate::fix::FixCtx {
                        text: &a.text,
                        lines: &a.lines,
                        model: &a.model,
                        facts: &a.facts,
                    },
                    &mut findings,
                );
                findings
            }));
            match r {
                Ok(f) => {
                    let text =
                        (!f.is_empty()).then(|| (a.candidate.display.clone(), a.text.clone()));
                    (f, None, text)
                }
                Err(p) => (
                    Vec::new(),
                    Some(FileError {
                        path: a.candidate.display.clone(),
                        line: None,
                        column: None,
                        message: format!(
                            "internal error while checking this file (please report it): {}",
                            panic_message(p)
                        ),
                    }),
                    None,
                ),
            }
        })
        .collect();
    for (f, e, t) in per_file {
        report.findings.extend(f);
        report.errors.extend(e);
        if let Some((k, v)) = t {
            report.texts.insert(k, v);
        }
    }
    report
        .findings
        .sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    Ok(report)
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
/// findings and rules that are off stay unfixed in every round.
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
        let language = match Language::from_path(std::path::Path::new(display)) {
            Some(l) => l,
            None => continue,
        };
        let base_errors = crate::lang::lower(language, &original).errors.len();
        let mut text = original.clone();
        let mut findings = findings;
        let mut rules = Vec::new();
        for _round in 0..5 {
            let (new, applied) = crate::fix::apply::apply(&text, &findings, mode);
            if applied.is_empty() || new == text {
                break;
            }
            let new_errors = crate::lang::lower(language, &new).errors.len();
            if new_errors > base_errors {
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
            let config = match resolver.for_path(std::path::Path::new(display)) {
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
        }
        if text != original {
            fixed.push(FixedFile {
                display: display.to_string(),
                path: PathBuf::from(display),
                old: original,
                new: text,
                rules,
            });
        }
    }
    (fixed, errors)
}

/// Writes fixed files to disk. Errors name the file.
pub fn write_fixed(files: &[FixedFile]) -> Result<(), String> {
    for f in files {
        std::fs::write(&f.path, &f.new)
            .map_err(|e| format!("could not write {}: {e}", f.display))?;
    }
    Ok(())
}
