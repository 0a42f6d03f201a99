//! Configuration: rule levels, include/exclude globs, catalogue extensions and the
//! suppression-reason switch, read from `idemlint.toml`, `.idemlint.toml` or the
//! `[package.metadata.idemlint]` / `[workspace.metadata.idemlint]` table of a `Cargo.toml`.
//!
//! Discovery ([`Resolver::for_path`]): from the directory of each analysed file, walk up to
//! the file-system root; in each directory take, in this order, `idemlint.toml`,
//! `.idemlint.toml`, then a `Cargo.toml` that has an idemlint table. The nearest one wins
//! and is used alone (configurations are not merged). In a `Cargo.toml`,
//! `[package.metadata.idemlint]` counts only for the files of that package (the first
//! `Cargo.toml` met on the walk up) and wins over `[workspace.metadata.idemlint]` of the same
//! file; `[workspace.metadata.idemlint]` counts for every file below it. `--config FILE`
//! replaces discovery: that file applies to every analysed file.
//!
//! Errors are [`ConfigError`]s: miette diagnostics with the span inside the TOML file and a
//! help line (the CLI exits with code 2).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use miette::{Diagnostic, LabeledSpan, NamedSource, SourceCode};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::catalogue::{Catalogue, CatalogueError};
use crate::finding::Severity;
use crate::rules::RULES;
use crate::text::did_you_mean;

/// Configuration file names looked for in every directory, in this order.
pub const CONFIG_FILES: &[&str] = &["idemlint.toml", ".idemlint.toml"];

/// The keys of a configuration besides the catalogue tables (`[[boundary]]`, ...).
/// Largest `max-file-size` a configuration file may set (64 MiB); the command line's
/// `--max-file-size` is not limited.
pub const MAX_CONFIG_FILE_SIZE: u64 = 64 << 20;

pub const CONFIG_KEYS: &[&str] = &[
    "extend",
    "overrides",
    "rules",
    "include",
    "exclude",
    "require-suppression-reason",
    "java-version",
    "max-file-size",
];

/// What a configuration says about one rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// The rule does not run: its findings are dropped, and suppressions naming it are not
    /// reported as unused.
    Off,
    /// The rule runs; its findings get this severity.
    On(Severity),
}

impl Level {
    /// `"off"`, `"note"`, `"warning"` or `"error"`.
    pub fn parse(s: &str) -> Option<Level> {
        match s {
            "off" => Some(Level::Off),
            "note" => Some(Level::On(Severity::Note)),
            "warning" => Some(Level::On(Severity::Warning)),
            "error" => Some(Level::On(Severity::Error)),
            _ => None,
        }
    }
}

/// `--select` / `--ignore` from the command line; they win over every configuration file.
#[derive(Clone, Debug, Default)]
pub struct RuleSelection {
    /// Only these rules run (at their configured or default severity, even when a
    /// configuration turns them off); `None` = every rule.
    pub select: Option<Vec<String>>,
    /// These rules do not run.
    pub ignore: Vec<String>,
}

impl RuleSelection {
    /// Checks every id against the known rules. Errors name the first unknown id, with a
    /// "did you mean" when one is close.
    pub fn validate(&self) -> Result<(), String> {
        let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
        for id in self.select.iter().flatten().chain(&self.ignore) {
            if !ids.contains(&id.as_str()) {
                return Err(format!(
                    "unknown rule `{id}`{}\n  known rules: {}",
                    did_you_mean(id, &ids)
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default(),
                    ids.join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// Most files in one `extend` chain (the configuration itself included).
pub const MAX_EXTEND_DEPTH: usize = 16;

/// A compiled `include` / `exclude` / `[[overrides]] files` list and the directory its
/// globs are relative to (the directory of the file that wrote it).
#[derive(Clone, Debug)]
struct Globs {
    root: PathBuf,
    set: GlobSet,
}

impl Globs {
    fn is_match(&self, abs: &Path) -> bool {
        let rel = abs.strip_prefix(&self.root).unwrap_or(abs);
        self.set.is_match(rel)
    }
}

/// One `[[overrides]]` entry: rule levels for the files matching `files`.
#[derive(Clone, Debug)]
pub struct Override {
    /// The configuration file that wrote it.
    pub origin: PathBuf,
    /// The `files` patterns as written.
    pub patterns: Vec<String>,
    files: Globs,
    levels: BTreeMap<String, Level>,
}

/// One resolved configuration: what applies to the files it governs.
#[derive(Clone, Debug)]
pub struct Config {
    /// The file it was read from; `None` for the built-in defaults.
    pub origin: Option<PathBuf>,
    /// The directory include/exclude globs are relative to (the configuration file's).
    pub root: PathBuf,
    /// The built-in catalogue plus this configuration's catalogue tables.
    pub catalogue: Arc<Catalogue>,
    levels: BTreeMap<String, Level>,
    include: Option<Globs>,
    exclude: Option<Globs>,
    /// The files this one inherits from with `extend`, nearest first (their settings are
    /// under this file's own).
    pub extends: Vec<PathBuf>,
    /// `[[overrides]]`, the extended files' first; later entries win.
    pub overrides: Vec<Override>,
    /// The overrides applied to this (per-file) configuration: indices into `overrides`.
    /// Empty for a configuration as read from its file.
    pub applied_overrides: Vec<usize>,
    /// The catalogue tables this configuration (and the files it extends) add to the
    /// built-in catalogue, per file in the order applied, as TOML (`idemlint catalogue`).
    pub additions: Vec<(PathBuf, toml::Table)>,
    /// `require-suppression-reason = true`: suppressions without `-- reason` are reported
    /// (rule `suppression-without-reason`).
    pub require_suppression_reason: bool,
    /// `java-version = 8`: the Java language level fixes are written for (`var` only from
    /// 10). `None`: read from the nearest `pom.xml` / `build.gradle(.kts)`, else 8.
    pub java_version: Option<u32>,
    /// `max-file-size = "20MB"`: largest source file analysed, bytes; larger files are
    /// reported in `errors` and not analysed. `--max-file-size` overrides it.
    pub max_file_size: u64,
}

impl Config {
    /// The defaults: every rule at its default severity, every file, the given catalogue.
    pub fn builtin(catalogue: Catalogue) -> Config {
        Config {
            origin: None,
            root: PathBuf::new(),
            catalogue: Arc::new(catalogue),
            levels: BTreeMap::new(),
            include: None,
            exclude: None,
            extends: Vec::new(),
            overrides: Vec::new(),
            applied_overrides: Vec::new(),
            additions: Vec::new(),
            require_suppression_reason: false,
            java_version: None,
            max_file_size: crate::fsio::DEFAULT_MAX_FILE_BYTES,
        }
    }

    /// The severity findings of `rule` get, or `None` when the rule is off (or unknown).
    pub fn severity(&self, rule: &str) -> Option<Severity> {
        match self.levels.get(rule) {
            Some(Level::Off) => None,
            Some(Level::On(s)) => Some(*s),
            None => crate::rules::rule(rule).map(|r| r.severity),
        }
    }

    /// True when this configuration (or `--select` / `--ignore`) sets `rule`'s level
    /// rather than leaving the rule's default (`--show-settings`).
    pub fn sets_level(&self, rule: &str) -> bool {
        self.levels.contains_key(rule)
    }

    /// The `[[overrides]]` entry that set `rule`'s level for this file, if one did (the
    /// last matching one that names it).
    pub fn override_for(&self, rule: &str) -> Option<&Override> {
        self.applied_overrides
            .iter()
            .rev()
            .map(|&i| &self.overrides[i])
            .find(|o| o.levels.contains_key(rule))
    }

    /// The indices of the `[[overrides]]` whose `files` match `path`, in order.
    fn matching_overrides(&self, path: &Path) -> Vec<usize> {
        if self.overrides.is_empty() {
            return Vec::new();
        }
        let abs = absolute_path(path);
        (0..self.overrides.len())
            .filter(|&i| self.overrides[i].files.is_match(&abs))
            .collect()
    }

    /// This configuration with the levels of overrides `applied` (indices, in order) on
    /// top of `[rules]`, then `selection` on top of those.
    fn with_overrides(&self, applied: &[usize], selection: &RuleSelection) -> Config {
        let mut c = self.clone();
        for &i in applied {
            c.levels.extend(
                self.overrides[i]
                    .levels
                    .iter()
                    .map(|(k, v)| (k.clone(), *v)),
            );
        }
        c.applied_overrides = applied.to_vec();
        c.select(selection);
        c
    }

    /// Whether `include` / `exclude` globs are set.
    pub fn has_globs(&self) -> (bool, bool) {
        (self.include.is_some(), self.exclude.is_some())
    }

    /// Applies `--select` / `--ignore` on top of the file's `[rules]`.
    pub fn select(&mut self, selection: &RuleSelection) {
        if let Some(select) = &selection.select {
            for r in RULES {
                if !select.iter().any(|s| s == r.id) {
                    self.levels.insert(r.id.to_string(), Level::Off);
                } else if self.levels.get(r.id) == Some(&Level::Off) {
                    self.levels.remove(r.id);
                }
            }
        }
        for id in &selection.ignore {
            self.levels.insert(id.clone(), Level::Off);
        }
    }

    /// True when `path` is analysed under this configuration: it matches an `include` glob
    /// (when there are any) and no `exclude` glob. Globs are matched against the path
    /// relative to [`Config::root`] (the absolute path when the file is outside it).
    pub fn includes(&self, path: &Path) -> bool {
        if self.include.is_none() && self.exclude.is_none() {
            return true;
        }
        let abs = absolute_path(path);
        if let Some(inc) = &self.include
            && !inc.is_match(&abs)
        {
            return false;
        }
        !self.exclude.as_ref().is_some_and(|e| e.is_match(&abs))
    }
}

/// `path` made absolute: canonical when it exists, otherwise joined to the current
/// directory with `.` and `..` resolved lexically.
pub fn absolute_path(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    let joined = match std::env::current_dir() {
        Ok(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    };
    crate::fsio::lexical_normal(&joined)
}

/// `path` for messages: relative to the current directory when it is inside it.
pub fn display_path(path: &Path) -> String {
    let shown = std::env::current_dir()
        .ok()
        .map(|cwd| absolute_path(&cwd))
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf());
    shown.display().to_string()
}

/// A configuration that cannot be used. Rendered by miette with the TOML snippet.
#[derive(Debug)]
pub struct ConfigError {
    /// The configuration file as the user should find it.
    pub file: String,
    pub message: String,
    /// Byte range in the file's text.
    pub span: Option<Range<usize>>,
    pub help: Option<String>,
    /// The file's text, for the snippet (only files read as regular files).
    text: Option<Arc<str>>,
    /// The snippet miette shows, built on first use from `text` and `span`.
    /// (Boxed with the rarely used rest, to keep `Result<_, ConfigError>` small.)
    extra: Box<Extra>,
}

#[derive(Debug, Default)]
struct Extra {
    excerpt: std::sync::OnceLock<Option<Excerpt>>,
    /// The other problems found in the same file, in file order, each with its own span:
    /// a file with three mistakes reports the three, not one per run.
    more: Vec<ConfigError>,
}

/// Longest snippet line shown in a configuration error, in chars.
const SNIPPET_CHARS: usize = 160;
/// Longest message shown in a configuration error, in chars.
const MESSAGE_CHARS: usize = 300;

/// The part of a configuration file an error shows: one line, at most [`SNIPPET_CHARS`]
/// around the span, control characters replaced, with its real line number.
#[derive(Debug)]
struct Excerpt {
    source: NamedSource<String>,
    /// 0-based line of the excerpt in the file.
    line: usize,
    /// Chars of that line left out before the excerpt.
    column: usize,
    span: Range<usize>,
}

impl Excerpt {
    fn new(name: &str, text: &str, span: Range<usize>) -> Excerpt {
        let clamp = |i: usize| {
            let mut i = i.min(text.len());
            while !text.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        let start = clamp(span.start);
        let line_start = text[..start].rfind(['\n', '\r']).map_or(0, |i| i + 1);
        let line_end = text[start..]
            .find(['\n', '\r'])
            .map_or(text.len(), |i| start + i);
        let line = text[..line_start].matches('\n').count();
        // A window of the line around the span's start.
        let before: Vec<(usize, char)> = text[line_start..start].char_indices().collect();
        let skip = before.len().saturating_sub(SNIPPET_CHARS / 3);
        let from = before.get(skip).map_or(start, |(i, _)| line_start + i);
        let to = text[from..line_end]
            .char_indices()
            .nth(SNIPPET_CHARS)
            .map_or(line_end, |(i, _)| from + i);
        let shown = crate::text::sanitize_snippet(&text[from..to]).into_owned();
        let end = clamp(span.end).clamp(start, to);
        Excerpt {
            source: NamedSource::new(name, shown),
            line,
            column: skip,
            span: (start - from)..(end - from),
        }
    }
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let text = self.source.inner();
        let inner = text.read_span(span, before, after)?;
        // miette's column counts bytes from the line's start to the span's (which ends
        // where the span starts); the header counts characters, as every report does.
        let column = crate::text::char_column(text, span.offset(), inner.column());
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.source.name().to_string(),
            inner.data(),
            *inner.span(),
            inner.line() + self.line,
            column + if inner.line() == 0 { self.column } else { 0 },
            inner.line_count(),
        )))
    }
}

impl ConfigError {
    fn excerpt(&self) -> Option<&Excerpt> {
        self.extra
            .excerpt
            .get_or_init(|| {
                let text = self.text.as_deref()?;
                let span = self.span.clone()?;
                Some(Excerpt::new(&self.file, text, span))
            })
            .as_ref()
    }

    /// The message as printed: control characters escaped, at most [`MESSAGE_CHARS`].
    fn shown_message(&self) -> String {
        let mut m: String = self.message.chars().take(MESSAGE_CHARS).collect();
        if m.len() < self.message.len() {
            m.push('…');
        }
        crate::text::escape_controls(&m)
    }
}

impl ConfigError {
    fn new(file: &Path, text: Option<&str>, message: String) -> ConfigError {
        let name = display_path(file);
        ConfigError {
            text: text.map(Arc::from),
            extra: Box::default(),
            file: crate::text::escape_controls(&name),
            message,
            span: None,
            help: None,
        }
    }

    /// The other problems of the same file, after this one (in file order).
    pub fn more(&self) -> &[ConfigError] {
        &self.extra.more
    }

    /// The first of `errors` (in file order) with the others in [`ConfigError::more`];
    /// `None` when there is none.
    fn joined(errors: Vec<ConfigError>) -> Option<ConfigError> {
        let mut all: Vec<ConfigError> = errors
            .into_iter()
            .flat_map(|mut e| {
                let more = std::mem::take(&mut e.extra.more);
                std::iter::once(e).chain(more)
            })
            .collect();
        all.sort_by_key(|e| e.span.as_ref().map_or(0, |s| s.start));
        let mut it = all.into_iter();
        let mut first = it.next()?;
        first.extra.more = it.collect();
        Some(first)
    }

    fn at(file: &Path, text: &str, span: Range<usize>, message: String, help: String) -> Self {
        let mut e = ConfigError::new(file, Some(text), message);
        e.span = Some(span);
        e.help = Some(help);
        e
    }

    fn from_catalogue(file: &Path, text: &str, e: CatalogueError) -> ConfigError {
        let mut c = ConfigError::new(file, Some(text), e.message);
        c.span = e.span;
        c.help = Some(e.help.unwrap_or_else(|| {
            "catalogue tables have the shape of idemlint's `rules/*.toml` (see CONTRIBUTING.md)"
                .to_string()
        }));
        c
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid configuration {}: {}",
            self.file,
            self.shown_message()
        )?;
        match self.more().len() {
            0 => Ok(()),
            1 => write!(f, " (and 1 more problem)"),
            n => write!(f, " (and {n} more problems)"),
        }
    }
}

impl std::error::Error for ConfigError {}

impl Diagnostic for ConfigError {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new("idemlint::config"))
    }
    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.excerpt().map(|s| s as &dyn SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let span = self.excerpt()?.span.clone();
        Some(Box::new(std::iter::once(
            LabeledSpan::new_primary_with_span(
                Some("here".to_string()),
                (span.start, span.end.saturating_sub(span.start)),
            ),
        )))
    }
}

/// Renders a configuration error as miette's graphical report (the TOML snippet with the
/// span labelled, and the help line), in colour only when `colour`.
pub fn render_error(e: &ConfigError, colour: bool) -> String {
    let theme = if colour {
        miette::GraphicalTheme::unicode()
    } else {
        miette::GraphicalTheme::unicode_nocolor()
    };
    let handler = miette::GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_break_words(false)
        .with_word_separator(textwrap::WordSeparator::AsciiSpace)
        .with_word_splitter(textwrap::WordSplitter::NoHyphenation);
    let mut out = String::new();
    // Every problem of the file, each with its snippet and location.
    for one in std::iter::once(e).chain(e.more()) {
        let mut part = String::new();
        if handler
            .render_report(&mut part, one as &dyn Diagnostic)
            .is_err()
        {
            part = format!(
                "error: invalid configuration {}: {}\n",
                one.file,
                one.shown_message()
            );
        }
        out.push_str(&part);
    }
    out
}

const HELP: &str = "see docs/configuration.md in idemlint's repository";

/// Reads a configuration file: a regular file of at most [`crate::fsio::MAX_CONFIG_BYTES`].
/// `follow`: the user named it (`--config`), so a symbolic link is followed; discovered
/// files are read only when they are regular files themselves. An error never carries the
/// text, so nothing of a file that was not read as configuration is ever shown.
fn read(path: &Path, follow: bool) -> Result<String, ConfigError> {
    crate::fsio::read_regular_text(path, crate::fsio::MAX_CONFIG_BYTES, follow).map_err(|e| {
        let mut c = ConfigError::new(path, None, format!("could not read it: {e}"));
        if !follow
            && matches!(
                e,
                crate::fsio::ReadError::Symlink | crate::fsio::ReadError::NotRegular
            )
        {
            c.help = Some(DISCOVERED_HELP.into());
        }
        c
    })
}

const DISCOVERED_HELP: &str = "configuration files found by discovery are read only when they are regular files (a checked-out tree could link them to a secret); replace it with a regular file, or name the file with --config";

/// Whether a discovered configuration file exists at `path`: `Ok(false)` when nothing is
/// there; an error when something other than a regular file is (a symbolic link, a FIFO,
/// a device), which is never read.
fn discovered(path: &Path) -> Result<bool, ConfigError> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => Ok(true),
        Ok(m) => {
            let what = if m.file_type().is_symlink() {
                "a symbolic link"
            } else if m.is_dir() {
                return Ok(false);
            } else {
                "not a regular file"
            };
            let mut c = ConfigError::new(path, None, format!("it is {what}; not read"));
            c.help = Some(DISCOVERED_HELP.into());
            Err(c)
        }
        Err(_) => Ok(false),
    }
}

/// Parses an `idemlint.toml` / `.idemlint.toml` text. `builtin` is the catalogue the
/// configuration's catalogue tables are added to.
pub fn parse_config(path: &Path, text: &str, builtin: &Catalogue) -> Result<Config, ConfigError> {
    parse_config_in_chain(path, text, builtin, &[])
}

/// [`parse_config`] for a file reached through `extend` from the files in `chain`.
fn parse_config_in_chain(
    path: &Path,
    text: &str,
    builtin: &Catalogue,
    chain: &[PathBuf],
) -> Result<Config, ConfigError> {
    let table = DeTable::parse(text).map_err(|e| toml_error(path, text, &e))?;
    from_table(path, text, table, builtin, chain)
}

/// Parses a `Cargo.toml`: the idemlint table of `[package.metadata]` (only when
/// `allow_package`) or else of `[workspace.metadata]`; `Ok(None)` when there is none.
pub fn parse_cargo_manifest(
    path: &Path,
    text: &str,
    builtin: &Catalogue,
    allow_package: bool,
) -> Result<Option<Config>, ConfigError> {
    let root = DeTable::parse(text).map_err(|e| toml_error(path, text, &e))?;
    let sections: &[&str] = if allow_package {
        &["package", "workspace"]
    } else {
        &["workspace"]
    };
    for section in sections {
        let found = root
            .get_ref()
            .get(*section)
            .and_then(|v| v.get_ref().as_table())
            .and_then(|t| t.get("metadata"))
            .and_then(|v| v.get_ref().as_table())
            .and_then(|t| t.get("idemlint"));
        let Some(value) = found else { continue };
        let span = value.span();
        let DeValue::Table(table) = value.get_ref().clone() else {
            return Err(ConfigError::at(
                path,
                text,
                span,
                format!("`{section}.metadata.idemlint` must be a table"),
                format!("write `[{section}.metadata.idemlint]` followed by its keys"),
            ));
        };
        return from_table(path, text, Spanned::new(span, table), builtin, &[]).map(Some);
    }
    Ok(None)
}

fn toml_error(path: &Path, text: &str, e: &toml::de::Error) -> ConfigError {
    let mut c = ConfigError::new(path, Some(text), e.message().trim_end().to_string());
    c.span = e.span();
    c.help = Some(format!("the file is not valid TOML; {HELP}"));
    c
}

fn from_table(
    path: &Path,
    text: &str,
    table: Spanned<DeTable<'_>>,
    builtin: &Catalogue,
    chain: &[PathBuf],
) -> Result<Config, ConfigError> {
    let span = table.span();
    let table = table.into_inner();
    let catalogue_tables = crate::catalogue::table_names();
    let root = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    // `extend` first: the base's settings are what this file's own are laid over, and its
    // catalogue is what this file's catalogue tables are added to.
    let base = match table.get("extend") {
        Some(value) => Some(extended(path, text, value, builtin, chain)?),
        None => None,
    };
    let mut config = match &base {
        Some(b) => {
            let mut c = b.clone();
            c.extends.insert(0, b.origin.clone().unwrap_or_default());
            c
        }
        None => Config::builtin(Catalogue::default()),
    };
    config.origin = Some(path.to_path_buf());
    config.root = root.clone();
    let builtin = base.as_ref().map_or(builtin, |b| &*b.catalogue);
    let globs_here = |name: &str, value: &Spanned<DeValue<'_>>| {
        globs(path, text, name, value).map(|g| {
            g.map(|set| Globs {
                root: root.clone(),
                set,
            })
        })
    };
    let mut catalogue_part = DeTable::new();
    let mut errors = Vec::new();
    for (key, value) in table.iter() {
        let name: &str = key.get_ref();
        // Each key is checked on its own, so every mistake of the file is reported.
        let mut one_key = || -> Result<(), ConfigError> {
            match name {
                "extend" => {}
                "rules" => config.levels.extend(rule_levels(path, text, value)?),
                "include" => config.include = globs_here(name, value)?,
                "exclude" => config.exclude = globs_here(name, value)?,
                "overrides" => {
                    let entries = overrides(path, text, value)?;
                    config
                        .overrides
                        .extend(entries.into_iter().map(|(patterns, set, levels)| Override {
                            origin: path.to_path_buf(),
                            patterns,
                            files: Globs {
                                root: root.clone(),
                                set,
                            },
                            levels,
                        }));
                }
                "require-suppression-reason" => {
                    config.require_suppression_reason =
                        value.get_ref().as_bool().ok_or_else(|| {
                            ConfigError::at(
                                path,
                                text,
                                value.span(),
                                "`require-suppression-reason` must be `true` or `false`".into(),
                                "write `require-suppression-reason = true`".into(),
                            )
                        })?;
                }
                "java-version" => {
                    let v = value
                        .get_ref()
                        .as_integer()
                        .and_then(|i| i.as_str().parse::<u32>().ok());
                    config.java_version =
                        Some(v.filter(|v| (1..=99).contains(v)).ok_or_else(|| {
                            ConfigError::at(
                                path,
                                text,
                                value.span(),
                                "`java-version` must be a Java release number".into(),
                                "write `java-version = 8` (or 11, 17, 21, ...)".into(),
                            )
                        })?);
                }
                "max-file-size" => {
                    let v = value.get_ref();
                    let parsed = if let Some(i) = v.as_integer() {
                        i.as_str()
                            .parse::<u64>()
                            .map_err(|_| "a negative size".to_string())
                    } else if let Some(t) = v.as_str() {
                        crate::fsio::parse_size(t)
                    } else {
                        Err("not a size".into())
                    };
                    config.max_file_size = parsed.ok().filter(|n| *n > 0).ok_or_else(|| {
                        ConfigError::at(
                        path,
                        text,
                        value.span(),
                        "`max-file-size` must be a positive number of bytes or a size with a unit"
                            .into(),
                        "write `max-file-size = \"20MB\"` (units: KB, MB, GB, KiB, MiB, GiB)"
                            .into(),
                    )
                    })?;
                    // The tree being checked may have written this file: it must not lift the
                    // memory bound the limit exists for (about 100 bytes per source byte).
                    if config.max_file_size > MAX_CONFIG_FILE_SIZE {
                        return Err(ConfigError::at(
                            path,
                            text,
                            value.span(),
                            format!(
                                "`max-file-size` in a configuration file is at most {} (a checked tree must not lift the memory bound)",
                                crate::fsio::human_size(MAX_CONFIG_FILE_SIZE)
                            ),
                            "give a larger limit on the command line with `--max-file-size`".into(),
                        ));
                    }
                }
                _ if catalogue_tables.contains(&name) => {
                    catalogue_part.insert(key.clone(), value.clone());
                }
                _ => {
                    let known: Vec<&str> = CONFIG_KEYS
                        .iter()
                        .copied()
                        .chain(catalogue_tables.iter().copied())
                        .collect();
                    return Err(ConfigError::at(
                        path,
                        text,
                        key.span(),
                        format!("unknown configuration key `{}`", short(name)),
                        match did_you_mean(name, &known) {
                            Some(s) => {
                                format!("did you mean `{s}`? known keys: {}", known.join(", "))
                            }
                            None => format!("known keys: {}", known.join(", ")),
                        },
                    ));
                }
            }
            Ok(())
        };
        if let Err(e) = one_key() {
            errors.push(e);
        }
    }
    if let Some(e) = ConfigError::joined(errors) {
        return Err(e);
    }
    let mut catalogue = builtin.clone();
    if !catalogue_part.is_empty() {
        let file = display_path(path);
        let as_toml: toml::Table = catalogue_part
            .iter()
            .map(|(k, v)| (k.get_ref().to_string(), to_toml(v.get_ref())))
            .collect();
        let mut parsed = crate::catalogue::parse_table(&file, Spanned::new(span, catalogue_part))
            .map_err(|e| ConfigError::from_catalogue(path, text, e))?;
        for b in &mut parsed.boundary {
            b.user = true;
        }
        catalogue.merge(parsed);
        config.additions.push((path.to_path_buf(), as_toml));
    }
    config.catalogue = Arc::new(catalogue);
    Ok(config)
}

/// A parsed TOML value as a [`toml::Value`] (for printing a configuration's catalogue
/// tables back as TOML).
fn to_toml(v: &DeValue<'_>) -> toml::Value {
    match v {
        DeValue::String(s) => toml::Value::String(s.to_string()),
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .map(toml::Value::Integer)
            .unwrap_or_else(|_| toml::Value::String(i.as_str().to_string())),
        DeValue::Float(f) => f
            .as_str()
            .parse::<f64>()
            .map(toml::Value::Float)
            .unwrap_or_else(|_| toml::Value::String(f.as_str().to_string())),
        DeValue::Boolean(b) => toml::Value::Boolean(*b),
        DeValue::Datetime(d) => toml::Value::String(d.to_string()),
        DeValue::Array(a) => toml::Value::Array(a.iter().map(|x| to_toml(x.get_ref())).collect()),
        DeValue::Table(t) => toml::Value::Table(
            t.iter()
                .map(|(k, x)| (k.get_ref().to_string(), to_toml(x.get_ref())))
                .collect(),
        ),
    }
}

/// The directory `extend` targets must stay in: the nearest ancestor of the configuration
/// file's directory that holds `.git` (the checkout), else that directory itself.
fn extend_boundary(config_dir: &Path) -> PathBuf {
    let dir = absolute_path(config_dir);
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
        .unwrap_or(dir)
}

/// Loads the configuration `extend = "…"` names in `path` (see docs/configuration.md):
/// relative to `path`'s directory, inside the checkout ([`extend_boundary`]), a regular
/// file (no symbolic link anywhere below the boundary) of at most
/// [`crate::fsio::MAX_CONFIG_BYTES`], an `idemlint.toml`-shaped file or a `Cargo.toml`
/// with an idemlint table; no cycle and at most [`MAX_EXTEND_DEPTH`] files in the chain.
fn extended(
    path: &Path,
    text: &str,
    value: &Spanned<DeValue<'_>>,
    builtin: &Catalogue,
    chain: &[PathBuf],
) -> Result<Config, ConfigError> {
    let err = |message: String, help: &str| {
        ConfigError::at(path, text, value.span(), message, help.to_string())
    };
    let Some(target) = value.get_ref().as_str() else {
        return Err(err(
            "`extend` must be a path string".into(),
            "write `extend = \"../idemlint.toml\"` (relative to this file)",
        ));
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    let here = absolute_path(path);
    let boundary = extend_boundary(dir);
    let joined = crate::fsio::lexical_normal(&absolute_path(dir).join(target));
    let Ok(rel) = joined.strip_prefix(&boundary) else {
        return Err(err(
            format!(
                "`extend` target `{}` is outside the checkout",
                short(target)
            ),
            &format!(
                "`extend` must name a file inside `{}` (the checkout: the directory holding `.git`, or else this file's directory)",
                match display_path(&boundary) {
                    d if d.is_empty() => ".".to_string(),
                    d => d,
                }
            ),
        ));
    };
    // No symbolic link on the way (a checked-out tree could point one at a secret).
    let mut walked = boundary.clone();
    for part in rel.components() {
        walked.push(part);
        if std::fs::symlink_metadata(&walked).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(err(
                format!(
                    "`extend` target `{}` goes through a symbolic link; not read",
                    short(target)
                ),
                DISCOVERED_HELP,
            ));
        }
    }
    let mut seen: Vec<PathBuf> = chain.to_vec();
    seen.push(here);
    if seen.contains(&joined) {
        let cycle: Vec<String> = seen
            .iter()
            .chain(std::iter::once(&joined))
            .map(|p| display_path(p))
            .collect();
        return Err(err(
            format!("`extend` cycle: {}", cycle.join(" → ")),
            "remove one of the `extend` keys so the chain ends",
        ));
    }
    if seen.len() >= MAX_EXTEND_DEPTH {
        return Err(err(
            format!("`extend` chain longer than {MAX_EXTEND_DEPTH} files"),
            "extend a shared file directly instead of a chain",
        ));
    }
    if !joined.exists() {
        return Err(err(
            format!("`extend` target `{}` does not exist", short(target)),
            "the path is relative to the directory of this configuration file",
        ));
    }
    let base_text = read(&joined, false)?;
    if joined.file_name().is_some_and(|n| n == "Cargo.toml") {
        let table = DeTable::parse(&base_text).map_err(|e| toml_error(&joined, &base_text, &e))?;
        let found = ["package", "workspace"].iter().find_map(|section| {
            table
                .get_ref()
                .get(*section)
                .and_then(|v| v.get_ref().as_table())
                .and_then(|t| t.get("metadata"))
                .and_then(|v| v.get_ref().as_table())
                .and_then(|t| t.get("idemlint"))
                .cloned()
        });
        let Some(v) = found else {
            return Err(err(
                format!("`extend` target `{}` has no idemlint table", short(target)),
                "a Cargo.toml needs `[package.metadata.idemlint]` or `[workspace.metadata.idemlint]`",
            ));
        };
        let span = v.span();
        let DeValue::Table(t) = v.into_inner() else {
            return Err(err(
                format!(
                    "`extend` target `{}`: its idemlint metadata is not a table",
                    short(target)
                ),
                "write `[workspace.metadata.idemlint]` followed by its keys",
            ));
        };
        return from_table(&joined, &base_text, Spanned::new(span, t), builtin, &seen);
    }
    parse_config_in_chain(&joined, &base_text, builtin, &seen)
}

/// `[[overrides]]`: a list of tables, each with `files` (globs, required) and `rules`
/// (levels, required). Returns `(patterns, compiled files, levels)` per entry.
#[allow(clippy::type_complexity)]
fn overrides(
    path: &Path,
    text: &str,
    value: &Spanned<DeValue<'_>>,
) -> Result<Vec<(Vec<String>, GlobSet, BTreeMap<String, Level>)>, ConfigError> {
    let shape = |span: Range<usize>| {
        ConfigError::at(
            path,
            text,
            span,
            "`overrides` must be a list of tables with `files` and `rules`".into(),
            "write `[[overrides]]`, then `files = [\"tests/**\"]` and `rules = { time-in-key = \"off\" }`"
                .into(),
        )
    };
    let Some(items) = value.get_ref().as_array() else {
        return Err(shape(value.span()));
    };
    let mut out = Vec::new();
    for item in items.iter() {
        let Some(t) = item.get_ref().as_table() else {
            return Err(shape(item.span()));
        };
        let mut files = None;
        let mut levels = None;
        for (k, v) in t.iter() {
            let kname: &str = k.get_ref();
            match kname {
                "files" => {
                    let patterns: Vec<String> = v
                        .get_ref()
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(|x| x.get_ref().as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    files = globs(path, text, "files", v)?.map(|g| (patterns, g));
                }
                "rules" => levels = Some(rule_levels(path, text, v)?),
                other => {
                    return Err(ConfigError::at(
                        path,
                        text,
                        k.span(),
                        format!("unknown key `{}` in `[[overrides]]`", short(other)),
                        match did_you_mean(other, &["files", "rules"]) {
                            Some(s) => {
                                format!("did you mean `{s}`? an override has `files` and `rules`")
                            }
                            None => "an override has `files` and `rules`".into(),
                        },
                    ));
                }
            }
        }
        match (files, levels) {
            (Some((patterns, set)), Some(levels)) if !patterns.is_empty() => {
                out.push((patterns, set, levels))
            }
            _ => return Err(shape(item.span())),
        }
    }
    Ok(out)
}

fn rule_levels(
    path: &Path,
    text: &str,
    value: &Spanned<DeValue<'_>>,
) -> Result<BTreeMap<String, Level>, ConfigError> {
    let Some(table) = value.get_ref().as_table() else {
        return Err(ConfigError::at(
            path,
            text,
            value.span(),
            "`rules` must be a table of rule ids".into(),
            "write `[rules]` followed by lines such as `time-in-key = \"off\"`".into(),
        ));
    };
    let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
    let mut levels = BTreeMap::new();
    let mut errors = Vec::new();
    for (key, v) in table.iter() {
        let id: &str = key.get_ref();
        if !ids.contains(&id) {
            errors.push(ConfigError::at(
                path,
                text,
                key.span(),
                format!("unknown rule `{}`", short(id)),
                match did_you_mean(id, &ids) {
                    Some(s) => format!("did you mean `{s}`? `idemlint rules` lists every rule"),
                    None => format!("`idemlint rules` lists every rule: {}", ids.join(", ")),
                },
            ));
            continue;
        }
        match v.get_ref().as_str().and_then(Level::parse) {
            Some(level) => {
                levels.insert(id.to_string(), level);
            }
            None => errors.push(ConfigError::at(
                path,
                text,
                v.span(),
                format!("invalid level for `{id}`"),
                "use \"off\", \"note\", \"warning\" or \"error\"".into(),
            )),
        }
    }
    match ConfigError::joined(errors) {
        Some(e) => Err(e),
        None => Ok(levels),
    }
}

/// Most patterns in one `include` / `exclude` list.
const MAX_GLOBS: usize = 10_000;
/// Longest pattern in an `include` / `exclude` list, in bytes.
const MAX_GLOB_BYTES: usize = 1_000;
/// Most bytes of all the patterns of one list together.
const MAX_GLOB_TOTAL_BYTES: usize = 256 << 10;

/// At most 80 chars of `s` for a message (input quoted in errors).
fn short(s: &str) -> String {
    let mut out: String = s.chars().take(80).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// Compiles an include/exclude list. A pattern without `/` matches a file or directory
/// name at any depth (`generated`, `*Test.kt`); a pattern with `/` is anchored at the
/// configuration's directory (`src/legacy/**`, `/build`). A pattern that names a directory
/// also matches everything below it. `*` does not cross `/`; `**` does.
fn globs(
    path: &Path,
    text: &str,
    key: &str,
    value: &Spanned<DeValue<'_>>,
) -> Result<Option<GlobSet>, ConfigError> {
    let list_error = |span: Range<usize>| {
        ConfigError::at(
            path,
            text,
            span,
            format!("`{key}` must be a list of glob strings"),
            format!("write `{key} = [\"generated\", \"src/legacy/**\"]`"),
        )
    };
    let Some(items) = value.get_ref().as_array() else {
        return Err(list_error(value.span()));
    };
    if items.len() > MAX_GLOBS {
        return Err(ConfigError::at(
            path,
            text,
            value.span().start..value.span().start + 1,
            format!(
                "`{key}` has {} patterns; at most {MAX_GLOBS} are allowed",
                items.len()
            ),
            "use directory patterns (`generated`, `src/legacy/**`) instead of listing files".into(),
        ));
    }
    let total: usize = items
        .iter()
        .filter_map(|i| i.get_ref().as_str())
        .map(str::len)
        .sum();
    if total > MAX_GLOB_TOTAL_BYTES {
        return Err(ConfigError::at(
            path,
            text,
            value.span().start..value.span().start + 1,
            format!(
                "the `{key}` patterns are {total} bytes in all; at most {MAX_GLOB_TOTAL_BYTES} are allowed"
            ),
            "use directory patterns (`generated`, `src/legacy/**`) instead of listing files".into(),
        ));
    }
    let mut builder = GlobSetBuilder::new();
    for item in items.iter() {
        let Some(pattern) = item.get_ref().as_str() else {
            return Err(list_error(item.span()));
        };
        if pattern.len() > MAX_GLOB_BYTES {
            return Err(ConfigError::at(
                path,
                text,
                item.span(),
                format!(
                    "a pattern in `{key}` is {} bytes long; at most {MAX_GLOB_BYTES} are allowed",
                    pattern.len()
                ),
                "shorten the pattern; `**` matches across directories".into(),
            ));
        }
        let anchored = pattern.starts_with('/');
        let p = pattern
            .trim_start_matches("./")
            .trim_start_matches('/')
            .trim_end_matches('/');
        if p.is_empty() {
            return Err(ConfigError::at(
                path,
                text,
                item.span(),
                format!("empty pattern in `{key}`"),
                "remove it, or name a file or directory".into(),
            ));
        }
        let forms = if anchored || p.contains('/') {
            [p.to_string(), format!("{p}/**")]
        } else {
            [format!("**/{p}"), format!("**/{p}/**")]
        };
        for g in forms {
            let glob = GlobBuilder::new(&g)
                .literal_separator(true)
                .build()
                .map_err(|e| {
                    ConfigError::at(
                        path,
                        text,
                        item.span(),
                        format!("invalid glob `{}`: {}", short(pattern), e.kind()),
                        "globs use `*` (within a directory), `**` (across directories), `?`, `[abc]` and `{a,b}`".into(),
                    )
                })?;
            builder.add(glob);
        }
    }
    builder.build().map(Some).map_err(|e| {
        ConfigError::at(
            path,
            text,
            value.span(),
            format!("the `{key}` patterns are too complex to compile: {e}"),
            "use fewer or simpler patterns".into(),
        )
    })
}

/// Finds the configuration of each analysed file (see the module docs) and caches it per
/// directory, so every file under one configuration shares one [`Config`] (and one
/// catalogue).
pub struct Resolver {
    builtin: Catalogue,
    selection: RuleSelection,
    explicit: Option<Arc<Config>>,
    default: Arc<Config>,
    by_dir: foldhash::HashMap<PathBuf, Arc<Config>>,
    /// [`Resolver::for_file`]'s cache: directories as written in the walk's paths.
    by_written_dir: foldhash::HashMap<PathBuf, Arc<Config>>,
    /// Directories as written in the walk's paths, with their absolute paths
    /// ([`Resolver::written_dir_path`]).
    written_dirs: foldhash::HashMap<PathBuf, PathBuf>,
    /// What the walk saw of the directories it listed: a configuration file, manifest or
    /// `.git` is looked up only where a directory may hold one ([`Resolver::set_listing`]).
    listing: crate::discover::Listing,
    /// Parsed files, keyed by path and whether package metadata was allowed.
    by_file: HashMap<(PathBuf, bool), Option<Arc<Config>>>,
    /// Per-file configurations with `[[overrides]]` applied, keyed by the configuration
    /// and the overrides that match.
    by_overrides: HashMap<(*const Config, Vec<usize>), Arc<Config>>,
    /// The checked paths (absolute): without a repository root, discovery stops at the
    /// one that contains the file ([`Resolver::set_roots`]).
    roots: Vec<PathBuf>,
    /// Per directory, its repository root as [`Resolver::ceiling`] found it (the nearest
    /// directory at or above it with a `.git` entry), so each directory's `.git` is
    /// looked up once however many directories below it are resolved.
    git_roots: foldhash::HashMap<PathBuf, Option<PathBuf>>,
    /// The working directory, absolute ([`absolute_path`]), once asked.
    cwd: Option<Option<PathBuf>>,
}

impl Resolver {
    /// `config_file` (`--config`) replaces discovery; `selection` (`--select`/`--ignore`)
    /// applies on top of every configuration. Errors: `config_file` cannot be read or is
    /// invalid.
    pub fn new(
        builtin: &Catalogue,
        config_file: Option<&Path>,
        selection: RuleSelection,
    ) -> Result<Resolver, ConfigError> {
        let mut default = Config::builtin(builtin.clone());
        default.select(&selection);
        let mut r = Resolver {
            builtin: builtin.clone(),
            selection,
            explicit: None,
            default: Arc::new(default),
            by_dir: Default::default(),
            by_written_dir: Default::default(),
            written_dirs: Default::default(),
            listing: Default::default(),
            by_file: HashMap::new(),
            by_overrides: HashMap::new(),
            roots: Vec::new(),
            git_roots: Default::default(),
            cwd: None,
        };
        if let Some(file) = config_file {
            if !file.is_file() {
                return Err(ConfigError::new(
                    file,
                    None,
                    "no such file (given with --config)".into(),
                ));
            }
            let text = read(file, true)?;
            let is_manifest = file.file_name().is_some_and(|n| n == "Cargo.toml");
            let mut config = if is_manifest {
                parse_cargo_manifest(file, &text, builtin, true)?.ok_or_else(|| {
                    ConfigError::new(
                        file,
                        None,
                        "has no [package.metadata.idemlint] or [workspace.metadata.idemlint] table"
                            .into(),
                    )
                })?
            } else {
                parse_config(file, &text, builtin)?
            };
            config.root = absolute_path(&config.root);
            config.select(&r.selection);
            r.explicit = Some(Arc::new(config));
        }
        Ok(r)
    }

    /// The configuration that applies to `path` (a file, or a directory for a file not on
    /// disk, like `--stdin-filename`'s). Errors: a configuration file on the way up is
    /// unreadable or invalid.
    pub fn for_path(&mut self, path: &Path) -> Result<Arc<Config>, ConfigError> {
        let config = self.for_path_unspecialised(path)?;
        Ok(self.specialise(config, path))
    }

    /// `config` with the `[[overrides]]` that match `path` applied (itself when none do),
    /// and `--select` / `--ignore` on top again.
    fn specialise(&mut self, config: Arc<Config>, path: &Path) -> Arc<Config> {
        let applied = config.matching_overrides(path);
        if applied.is_empty() {
            return config;
        }
        let key = (Arc::as_ptr(&config), applied);
        if let Some(c) = self.by_overrides.get(&key) {
            return c.clone();
        }
        let c = Arc::new(config.with_overrides(&key.1, &self.selection));
        self.by_overrides.insert(key, c.clone());
        c
    }

    fn for_path_unspecialised(&mut self, path: &Path) -> Result<Arc<Config>, ConfigError> {
        if let Some(c) = &self.explicit {
            return Ok(c.clone());
        }
        let abs = absolute_path(path);
        let dir = if abs.is_dir() {
            abs
        } else {
            abs.parent().map(Path::to_path_buf).unwrap_or(abs)
        };
        if let Some(c) = self.by_dir.get(&dir) {
            return Ok(c.clone());
        }
        let mut visited = Vec::new();
        let found = self.walk_up(&dir, &mut visited)?;
        let config = found.unwrap_or_else(|| self.default.clone());
        for d in visited {
            self.by_dir.insert(d, config.clone());
        }
        self.by_dir.insert(dir, config.clone());
        Ok(config)
    }

    /// [`Resolver::for_path`] for a path known to be a file (the walk's candidates): the
    /// configuration of its directory, without asking the file system what `path` is.
    pub fn for_file(&mut self, path: &Path) -> Result<Arc<Config>, ConfigError> {
        let config = self.for_file_unspecialised(path)?;
        Ok(self.specialise(config, path))
    }

    fn for_file_unspecialised(&mut self, path: &Path) -> Result<Arc<Config>, ConfigError> {
        if self.explicit.is_some() {
            return self.for_path_unspecialised(path);
        }
        let Some(parent) = path.parent() else {
            return self.for_path_unspecialised(path);
        };
        // Keyed by the directory as written, so a walk's 10,000s of files resolve (and
        // canonicalise) each directory once.
        if let Some(c) = self.by_written_dir.get(parent) {
            return Ok(c.clone());
        }
        let dir = self.written_dir_path(parent);
        let config = match self.by_dir.get(&dir) {
            Some(c) => c.clone(),
            None => {
                let mut visited = Vec::new();
                let found = self.walk_up(&dir, &mut visited)?;
                let config = found.unwrap_or_else(|| self.default.clone());
                for d in visited {
                    self.by_dir.insert(d, config.clone());
                }
                self.by_dir.insert(dir.clone(), config.clone());
                config
            }
        };
        self.by_written_dir
            .insert(parent.to_path_buf(), config.clone());
        Ok(config)
    }

    /// [`absolute_path`] of the directory `dir` as a walk's paths write it (empty for the
    /// current directory), cached: a plain name that is a directory and not a symbolic
    /// link is its written parent's absolute path joined with the name, which is what
    /// `absolute_path` returns (it resolves the same links), at the cost of one `lstat`
    /// instead of one `readlink` per component of every directory of a walk.
    fn written_dir_path(&mut self, dir: &Path) -> PathBuf {
        if let Some(p) = self.written_dirs.get(dir) {
            return p.clone();
        }
        let mut parts = dir.components();
        let resolved = match parts.next_back() {
            Some(std::path::Component::Normal(name)) => {
                let joined = self.written_dir_path(parts.as_path()).join(name);
                // A directory the walk entered is no link; anything else is asked.
                if self.listing.is_listed(&joined)
                    || std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir())
                {
                    joined
                } else {
                    absolute_path(dir)
                }
            }
            _ if dir.as_os_str().is_empty() => absolute_path(Path::new(".")),
            _ => absolute_path(dir),
        };
        self.written_dirs
            .insert(dir.to_path_buf(), resolved.clone());
        resolved
    }

    /// The entries the walk saw in the directories it listed ([`crate::discover::Listing`]):
    /// discovery then skips looking up, in such a directory, a configuration file, a
    /// manifest or `.git` that it does not hold. Without it every name is looked up.
    pub fn set_listing(&mut self, listing: crate::discover::Listing) {
        self.listing = listing;
    }

    /// The paths a run checks: discovery outside a git repository stops at them.
    pub fn set_roots(&mut self, roots: &[PathBuf]) {
        self.roots = roots
            .iter()
            .map(|r| {
                let a = absolute_path(r);
                if a.is_dir() {
                    a
                } else {
                    a.parent().map(Path::to_path_buf).unwrap_or(a)
                }
            })
            .collect();
    }

    /// The highest directory discovery may read a configuration from for files in `dir`:
    /// the repository root (the nearest directory with a `.git` entry, a directory or a
    /// worktree's file), else the working directory when `dir` is inside it, else the
    /// outermost checked path containing `dir`, else `dir` itself. Configuration above it
    /// is never read unless `--config` names it.
    fn ceiling(&mut self, dir: &Path) -> PathBuf {
        if let Some(git) = self.git_root(dir) {
            return git;
        }
        let cwd = self
            .cwd
            .get_or_insert_with(|| std::env::current_dir().ok().map(|c| absolute_path(&c)));
        if let Some(cwd) = cwd
            && dir.starts_with(&*cwd)
        {
            return cwd.clone();
        }
        self.roots
            .iter()
            .filter(|r| dir.starts_with(r))
            .min_by_key(|r| r.components().count())
            .cloned()
            .unwrap_or_else(|| dir.to_path_buf())
    }

    /// The nearest directory at or above `dir` with a `.git` entry (a directory or a
    /// worktree's file), each directory looked up once ([`Resolver::git_roots`]).
    fn git_root(&mut self, dir: &Path) -> Option<PathBuf> {
        let mut below: Vec<&Path> = Vec::new();
        let mut found = None;
        for a in dir.ancestors() {
            if let Some(known) = self.git_roots.get(a) {
                found = known.clone();
                break;
            }
            below.push(a);
            if self.listing.may_hold(a, ".git") && std::fs::symlink_metadata(a.join(".git")).is_ok()
            {
                found = Some(a.to_path_buf());
                break;
            }
        }
        for a in below {
            self.git_roots.insert(a.to_path_buf(), found.clone());
        }
        found
    }

    /// The nearest configuration above `dir`. Directories passed before any `Cargo.toml`
    /// was seen get the same answer, so they are pushed to `visited` (for the cache) and a
    /// cached one ends the walk.
    fn walk_up(
        &mut self,
        dir: &Path,
        visited: &mut Vec<PathBuf>,
    ) -> Result<Option<Arc<Config>>, ConfigError> {
        let mut seen_manifest = false;
        let ceiling = self.ceiling(dir);
        for d in dir.ancestors() {
            if !d.starts_with(&ceiling) {
                break;
            }
            if !seen_manifest {
                if let Some(c) = self.by_dir.get(d) {
                    return Ok(Some(c.clone()));
                }
                visited.push(d.to_path_buf());
            }
            for name in CONFIG_FILES {
                let candidate = d.join(name);
                if self.listing.may_hold(d, name) && discovered(&candidate)? {
                    return self.load(&candidate, false);
                }
            }
            let manifest = d.join("Cargo.toml");
            if self.listing.may_hold(d, "Cargo.toml") && discovered(&manifest)? {
                if let Some(c) = self.load(&manifest, !seen_manifest)? {
                    return Ok(Some(c));
                }
                seen_manifest = true;
            }
        }
        Ok(None)
    }

    /// Loads (once) a configuration file; for a `Cargo.toml`, `allow_package` says whether
    /// its package table counts. `Ok(None)`: a manifest without idemlint table.
    fn load(
        &mut self,
        file: &Path,
        allow_package: bool,
    ) -> Result<Option<Arc<Config>>, ConfigError> {
        let is_manifest = file.file_name().is_some_and(|n| n == "Cargo.toml");
        let key = (file.to_path_buf(), is_manifest && allow_package);
        if let Some(c) = self.by_file.get(&key) {
            return Ok(c.clone());
        }
        let text = read(file, false)?;
        let parsed = if is_manifest {
            if text.contains("idemlint") {
                parse_cargo_manifest(file, &text, &self.builtin, allow_package)?
            } else {
                None
            }
        } else {
            Some(parse_config(file, &text, &self.builtin)?)
        };
        let parsed = parsed.map(|mut c| {
            c.select(&self.selection);
            Arc::new(c)
        });
        self.by_file.insert(key, parsed.clone());
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        parse_config(Path::new("/p/idemlint.toml"), text, &Catalogue::builtin())
    }

    fn covered(text: &str) -> (ConfigError, String) {
        let e = parse(text).unwrap_err();
        let s = e
            .span
            .clone()
            .map(|s| text[s].to_string())
            .unwrap_or_default();
        (e, s)
    }

    #[test]
    fn levels_and_selection() {
        let mut c =
            parse("[rules]\ntime-in-key = \"off\"\nkey-in-retry-scope = \"note\"\n").unwrap();
        assert_eq!(c.severity("time-in-key"), None);
        assert_eq!(c.severity("key-in-retry-scope"), Some(Severity::Note));
        assert_eq!(c.severity("key-in-interceptor"), Some(Severity::Error));
        c.select(&RuleSelection {
            select: Some(vec!["time-in-key".into(), "key-in-retry-scope".into()]),
            ignore: vec![],
        });
        // --select turns a rule the file switched off back on, at its default severity.
        assert_eq!(c.severity("time-in-key"), Some(Severity::Warning));
        assert_eq!(c.severity("key-in-retry-scope"), Some(Severity::Note));
        assert_eq!(c.severity("key-in-interceptor"), None);
        c.select(&RuleSelection {
            select: None,
            ignore: vec!["time-in-key".into()],
        });
        assert_eq!(c.severity("time-in-key"), None);
    }

    #[test]
    fn errors_point_into_the_file() {
        let (e, s) = covered("[rules]\nkey-in-retry-scop = \"off\"\n");
        assert_eq!(s, "key-in-retry-scop");
        assert!(
            e.help
                .unwrap()
                .contains("did you mean `key-in-retry-scope`?")
        );
        let (e, s) = covered("[rules]\ntime-in-key = \"of\"\n");
        assert_eq!(s, "\"of\"");
        assert!(e.help.unwrap().contains("\"off\""));
        let (e, s) = covered("require_suppression_reason = true\n");
        assert_eq!(s, "require_suppression_reason");
        assert!(
            e.help
                .unwrap()
                .contains("did you mean `require-suppression-reason`?")
        );
        let (_, s) = covered("exclude = \"generated\"\n");
        assert_eq!(s, "\"generated\"");
        let (e, s) = covered("include = [\"src/[\"]\n");
        assert_eq!(s, "\"src/[\"");
        assert!(e.message.contains("invalid glob"), "{}", e.message);
        // Catalogue tables inside a configuration keep their spans.
        let (e, s) = covered("[rules]\n\n[[boundary]]\nid = \"x\"\ncalle = [\"withBackoff\"]\n");
        assert_eq!(s, "calle");
        assert!(e.help.unwrap().contains("did you mean `callee`?"));
        let (e, _) = covered("[rules\n");
        assert!(e.span.is_some());
        assert!(e.to_string().contains("/p/idemlint.toml"));
    }

    #[test]
    fn globs_match_relative_to_the_config_directory() {
        let c = parse(
            "include = [\"src\"]\nexclude = [\"generated\", \"*Test.kt\", \"/src/legacy\"]\n",
        )
        .unwrap();
        assert!(c.includes(Path::new("/p/src/a/Billing.kt")));
        assert!(!c.includes(Path::new("/p/other/Billing.kt")));
        assert!(!c.includes(Path::new("/p/src/generated/Billing.kt")));
        assert!(!c.includes(Path::new("/p/src/a/BillingTest.kt")));
        assert!(!c.includes(Path::new("/p/src/legacy/Billing.kt")));
        assert!(c.includes(Path::new("/p/src/a/legacy/Billing.kt")));
    }

    #[test]
    fn cargo_metadata_tables() {
        let text = "[package]\nname = \"a\"\n[package.metadata.idemlint.rules]\ntime-in-key = \"off\"\n[workspace.metadata.idemlint.rules]\ntime-in-key = \"error\"\n";
        let cat = Catalogue::builtin();
        let p = Path::new("/w/Cargo.toml");
        let own = parse_cargo_manifest(p, text, &cat, true).unwrap().unwrap();
        assert_eq!(own.severity("time-in-key"), None);
        let below = parse_cargo_manifest(p, text, &cat, false).unwrap().unwrap();
        assert_eq!(below.severity("time-in-key"), Some(Severity::Error));
        assert!(
            parse_cargo_manifest(p, "[package]\nname = \"a\"\n", &cat, true)
                .unwrap()
                .is_none()
        );
        let bad = "[package.metadata.idemlint]\nrules = { key-in-retry = \"off\" }\n";
        let e = parse_cargo_manifest(p, bad, &cat, true).unwrap_err();
        assert_eq!(&bad[e.span.unwrap()], "key-in-retry");
    }

    #[test]
    fn unknown_selection_ids_are_rejected() {
        let e = RuleSelection {
            select: Some(vec!["key-in-retry-scop".into()]),
            ignore: vec![],
        }
        .validate()
        .unwrap_err();
        assert!(e.contains("did you mean `key-in-retry-scope`?"), "{e}");
        assert!(RuleSelection::default().validate().is_ok());
    }
}

#[cfg(all(test, unix))]
mod listing_tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d =
            std::env::temp_dir().join(format!("idemlint-listing-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A directory as a walk writes it resolves, lstat by lstat, to what `absolute_path`
    /// gives: through links in the middle, `..`, and with or without a listing.
    #[test]
    fn written_directories_resolve_as_absolute_path_does() {
        let root = scratch("written");
        for d in ["a/b/c", "x/y", "a/.hidden/z"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::os::unix::fs::symlink(root.join("x"), root.join("a/link")).unwrap();
        std::os::unix::fs::symlink("../x/y", root.join("a/rel")).unwrap();
        let (_, _, _, listing) =
            crate::discover::discover_counting(std::slice::from_ref(&root), 1, false).unwrap();
        for with_listing in [false, true] {
            let mut r =
                Resolver::new(&Catalogue::builtin(), None, RuleSelection::default()).unwrap();
            if with_listing {
                r.set_listing(
                    crate::discover::discover_counting(std::slice::from_ref(&root), 1, false)
                        .unwrap()
                        .3,
                );
            }
            for d in [
                "a/b/c",
                "a/b",
                "a/link",
                "a/link/y",
                "a/rel",
                "a/b/../link/y",
                "a/.hidden/z",
                "x",
            ] {
                let written = root.join(d);
                assert_eq!(r.written_dir_path(&written), absolute_path(&written), "{d}");
            }
        }
        // The walk's listing: walked directories only, never the links to directories.
        let canonical = absolute_path(&root);
        assert!(listing.is_listed(&canonical.join("a/b/c")));
        assert!(listing.is_listed(&canonical.join("a/.hidden/z")));
        assert!(!listing.is_listed(&canonical.join("a/link")));
        assert!(!listing.is_listed(&canonical.join("a/rel")));
        let _ = std::fs::remove_dir_all(&root);
    }

    /// The listing says a name may be in a walked directory exactly when the directory
    /// has an entry of that name, whatever its type or case; an unlisted directory or a
    /// name discovery does not look up may always be there.
    #[test]
    fn the_listing_holds_the_names_discovery_looks_up() {
        let root = scratch("names");
        std::fs::create_dir_all(root.join("plain")).unwrap();
        std::fs::create_dir_all(root.join("configured/.git")).unwrap();
        std::fs::write(root.join("configured/.idemlint.toml"), "").unwrap();
        std::fs::write(root.join("configured/CARGO.TOML"), "").unwrap();
        std::os::unix::fs::symlink("/nonexistent", root.join("configured/idemlint.toml")).unwrap();
        let (_, _, _, listing) =
            crate::discover::discover_counting(std::slice::from_ref(&root), 1, true).unwrap();
        let canonical = absolute_path(&root);
        let (plain, configured) = (canonical.join("plain"), canonical.join("configured"));
        for name in crate::discover::LISTED_NAMES {
            assert!(!listing.may_hold(&plain, name), "{name}");
            assert!(listing.may_hold(&configured, name), "{name}");
            assert!(listing.may_hold(Path::new("/not/walked"), name), "{name}");
        }
        assert!(listing.may_hold(&plain, "anything-else"));
        let _ = std::fs::remove_dir_all(&root);
    }
}
