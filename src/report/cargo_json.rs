//! `--format cargo` (`--message-format json`, for `cargo idemlint` under rust-analyzer's
//! `rust-analyzer.check.overrideCommand`): cargo's JSON message stream, as `cargo clippy
//! --message-format json` prints it, one JSON object per line.
//!
//! Each finding is a `{"reason": "compiler-message", "package_id", "manifest_path",
//! "target", "message"}` object whose `message` is a rustc-style diagnostic: `message`,
//! `code` (`{"code": "idemlint::RULE-ID", "explanation": null}`), `level` (`error`,
//! `warning`, or `note` for notes), `spans` (the primary span of the key's ephemeral
//! source, labelled, and the boundary as a second span when it is in the same file: byte
//! offsets, 1-based lines and columns counted in characters, the lines' text with the
//! highlighted columns), `children` (the help, at level `help`) and `rendered` (the short
//! one-line form). The manifest is the nearest `Cargo.toml` above the file within its
//! repository, and the package id and target carry its `[package]` name and version
//! ([`NO_PACKAGE`] when there is none). The stream ends with `{"reason": "build-finished",
//! "success": …}`: `false` when there is a finding. File names are as displayed (relative
//! to the directory idemlint ran in: rust-analyzer resolves them against the workspace
//! root, so run it there). Files that could not be analysed are messages at level
//! `warning` without spans.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::check::Report;
use crate::finding::{Finding, Severity};

#[derive(Serialize)]
struct CompilerMessage<'a> {
    reason: &'static str,
    package_id: String,
    manifest_path: String,
    target: Target,
    message: Diagnostic<'a>,
}

#[derive(Serialize)]
struct Target {
    kind: [&'static str; 1],
    crate_types: [&'static str; 1],
    name: String,
    src_path: String,
    edition: &'static str,
    doc: bool,
    doctest: bool,
    test: bool,
}

#[derive(Serialize)]
struct Diagnostic<'a> {
    #[serde(rename = "$message_type")]
    message_type: &'static str,
    message: String,
    code: Option<Code>,
    level: &'static str,
    spans: Vec<Span<'a>>,
    children: Vec<Diagnostic<'a>>,
    rendered: Option<String>,
}

#[derive(Serialize)]
struct Code {
    code: String,
    explanation: Option<String>,
}

#[derive(Serialize)]
struct Span<'a> {
    file_name: &'a str,
    byte_start: usize,
    byte_end: usize,
    line_start: usize,
    line_end: usize,
    column_start: usize,
    column_end: usize,
    is_primary: bool,
    text: Vec<SpanLine>,
    label: Option<String>,
    suggested_replacement: Option<String>,
    suggestion_applicability: Option<String>,
    expansion: Option<()>,
}

#[derive(Serialize)]
struct SpanLine {
    text: String,
    highlight_start: usize,
    highlight_end: usize,
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// The package name used when a file belongs to no package (no `Cargo.toml` at or above
/// it within the repository): its version is `0.0.0` and its `manifest_path` the
/// `Cargo.toml` that would be in the file's directory, which does not exist.
pub const NO_PACKAGE: &str = "unpackaged";

/// Where the `Cargo.toml` of a file is looked for: the nearest at or above its directory,
/// never above the root of the git repository holding it (a directory with `.git`) nor,
/// outside any repository, above the outermost of `roots` (the checked paths and the
/// current directory, absolute) that contains it. A manifest above that, in a home
/// directory say, belongs to another project.
fn manifest_of(path: &str, roots: &[PathBuf]) -> (PathBuf, crate::cargo::Package) {
    let abs = crate::config::absolute_path(Path::new(path));
    let top = roots
        .iter()
        .filter(|r| abs.starts_with(r))
        .min_by_key(|r| r.components().count());
    let mut dir = abs.parent();
    while let Some(d) = dir {
        let m = d.join("Cargo.toml");
        if std::fs::symlink_metadata(&m).is_ok_and(|t| t.is_file())
            && let Some(p) = crate::cargo::package(&m)
        {
            return (m, p);
        }
        if d.join(".git").exists() || top.is_some_and(|t| t == d) {
            break;
        }
        dir = d.parent();
    }
    let d = abs.parent().map(Path::to_path_buf).unwrap_or_default();
    (
        d.join("Cargo.toml"),
        crate::cargo::Package {
            name: NO_PACKAGE.into(),
            version: "0.0.0".into(),
        },
    )
}

/// The lines `start..end` (bytes) touch, each with the highlighted 1-based char columns.
fn span_lines(text: &str, start: usize, end: usize) -> Vec<SpanLine> {
    let (Some(_), Some(_)) = (text.get(start..start), text.get(end..end)) else {
        return Vec::new();
    };
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
    let mut out = Vec::new();
    let mut at = line_start;
    for line in text[line_start..line_end].split('\n') {
        let l_end = at + line.len();
        let lo = start.max(at).min(l_end);
        let hi = end.min(l_end).max(lo);
        out.push(SpanLine {
            text: line.trim_end_matches('\r').to_string(),
            highlight_start: text[at..lo].chars().count() + 1,
            highlight_end: text[at..hi].chars().count() + 1,
        });
        at = l_end + 1;
    }
    out
}

fn message<'a>(f: &'a Finding, text: Option<&str>) -> Diagnostic<'a> {
    let lines = |s: usize, e: usize| text.map(|t| span_lines(t, s, e)).unwrap_or_default();
    let mut spans = vec![Span {
        file_name: &f.path,
        byte_start: f.span.start,
        byte_end: f.span.end,
        line_start: f.line,
        line_end: f.end_line,
        column_start: f.column,
        column_end: f.end_column,
        is_primary: true,
        text: lines(f.span.start, f.span.end),
        label: Some("evaluated again on every run".into()),
        suggested_replacement: None,
        suggestion_applicability: None,
        expansion: None,
    }];
    if let Some(b) = f.boundary.as_ref().filter(|b| b.path.is_none()) {
        let t = lines(b.span.start, b.span.end);
        let (line_end, column_end) = text
            .and_then(|t| t.get(..b.span.end))
            .map(|before| {
                let line = before.matches('\n').count() + 1;
                let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                (line, col)
            })
            .unwrap_or((b.line, b.column));
        spans.push(Span {
            file_name: &f.path,
            byte_start: b.span.start,
            byte_end: b.span.end,
            line_start: b.line,
            line_end,
            column_start: b.column,
            column_end,
            is_primary: false,
            text: t,
            label: Some(format!("{} boundary", b.kind)),
            suggested_replacement: None,
            suggestion_applicability: None,
            expansion: None,
        });
    }
    let children = if f.help.is_empty() {
        Vec::new()
    } else {
        vec![Diagnostic {
            message_type: "diagnostic",
            message: f.help.clone(),
            code: None,
            level: "help",
            spans: Vec::new(),
            children: Vec::new(),
            rendered: None,
        }]
    };
    Diagnostic {
        message_type: "diagnostic",
        message: f.message.clone(),
        code: Some(Code {
            code: format!("idemlint::{}", f.rule),
            explanation: None,
        }),
        level: level(f.severity),
        spans,
        children,
        rendered: Some(format!(
            "{}:{}:{}: {}[{}] {}\n",
            f.path,
            f.line,
            f.column,
            level(f.severity),
            f.rule,
            f.message
        )),
    }
}

/// Manifests by file directory, so each is read once per run.
type Manifests = std::collections::HashMap<PathBuf, (PathBuf, crate::cargo::Package)>;

fn envelope<'a>(
    path: &str,
    message: Diagnostic<'a>,
    roots: &[PathBuf],
    seen: &mut Manifests,
) -> CompilerMessage<'a> {
    let key = crate::config::absolute_path(Path::new(path))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let (manifest, pkg) = seen
        .entry(key)
        .or_insert_with(|| manifest_of(path, roots))
        .clone();
    let name = &pkg.name;
    let dir = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
    CompilerMessage {
        reason: "compiler-message",
        package_id: format!(
            "path+{}#{name}@{}",
            super::sarif::file_uri(&dir, false),
            pkg.version
        ),
        manifest_path: manifest.to_string_lossy().into_owned(),
        target: Target {
            kind: ["lib"],
            crate_types: ["lib"],
            name: name.replace('-', "_"),
            src_path: crate::config::absolute_path(Path::new(path))
                .to_string_lossy()
                .into_owned(),
            edition: "2021",
            doc: false,
            doctest: false,
            test: false,
        },
        message,
    }
}

/// Renders the report as cargo's JSON message stream (one object per line). `roots`
/// bound the search for manifests outside a git repository (see `manifest_of`).
pub fn render(report: &Report, roots: &[PathBuf]) -> String {
    let mut seen = Manifests::new();
    let mut out = String::new();
    let mut line = |v: &dyn erased::Json| {
        out.push_str(&v.json());
        out.push('\n');
    };
    for f in &report.findings {
        let text = report.texts.get(&f.path).map(|t| &**t);
        line(&envelope(&f.path, message(f, text), roots, &mut seen));
    }
    for e in &report.errors {
        let d = Diagnostic {
            message_type: "diagnostic",
            message: format!("{}: {}", e.path, e.message),
            code: Some(Code {
                code: "idemlint::file-not-analysed".into(),
                explanation: None,
            }),
            level: "warning",
            spans: Vec::new(),
            children: Vec::new(),
            rendered: Some(format!("warning: {}: {}\n", e.path, e.message)),
        };
        line(&envelope(&e.path, d, roots, &mut seen));
    }
    line(&BuildFinished {
        reason: "build-finished",
        success: report.findings.is_empty(),
    });
    out
}

#[derive(Serialize)]
struct BuildFinished {
    reason: &'static str,
    success: bool,
}

mod erased {
    /// Serialises any of the message types to one line of JSON.
    pub trait Json {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> String {
            serde_json::to_string(self).unwrap_or_else(|_| "{}".into())
        }
    }
}
