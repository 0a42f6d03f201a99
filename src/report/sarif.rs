//! `--format sarif`: a SARIF 2.1.0 log (OASIS standard, errata 01) that GitHub code scanning
//! accepts, with one run.
//!
//! - `tool.driver.rules` lists every rule of [`crate::rules::RULES`] (id, PascalCase name,
//!   short and full description, the markdown docs of `rules/docs` as `help`, the default
//!   level, and `properties.tags` / `properties.precision` / `properties["problem.severity"]`
//!   as GitHub reads them). The full description is at most [`MAX_FULL_DESCRIPTION`]
//!   characters (GitHub's limit), cut after a whole paragraph or sentence.
//! - `runAutomationDetails.id` is `CATEGORY/` ([`render`]'s `category`: `idemlint`, or
//!   `idemlint-shard-I-of-N` for `--shard I/N`), so GitHub keeps one upload's runs apart.
//! - Each result has `ruleId`/`ruleIndex`, `level`, `message`, one physical location whose
//!   region has 1-based lines and 1-based columns counted in Unicode scalar values (the run
//!   says `columnKind: unicodeCodePoints`; the end column is exclusive, as in SARIF), a
//!   `relatedLocations` entry for the boundary, linked from the message text
//!   (`[retry boundary](1)`), `partialFingerprints["idemlint/v1"]` (see
//!   [`crate::finding::Finding::fingerprint`]; copies of one finding, which share it, get
//!   `/2`, `/3`, … appended in output order, so each result's value is unique) and, when a
//!   fix exists, `fixes`.
//! - Artifact URIs are relative to `%SRCROOT%`, which `originalUriBaseIds` maps to the
//!   directory given to [`render`] (the CLI passes the current directory). Paths outside it
//!   become absolute `file://` URIs. Segments are percent-encoded (RFC 3986).
//! - Files that could not be read or parsed appear as
//!   `invocations[0].toolExecutionNotifications`, so nothing is lost.
//!
//! The structs are written by hand: the few objects idemlint emits do not justify a
//! generated SARIF crate (see `../shared/notes/dependencies.md`).

use std::path::{Component, Path};

use serde::Serialize;

use crate::check::Report;
use crate::finding::{FileError, Finding, Severity};
use crate::rules::{RULES, RuleMeta};

type TextMap = std::collections::HashMap<String, std::sync::Arc<str>>;

/// The schema URI written in `$schema`: the final OASIS SARIF 2.1.0 schema (errata 01).
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// Where the project lives (`tool.driver.informationUri`; rule `helpUri`s point below it).
pub const INFORMATION_URI: &str = "https://github.com/idemlint/idemlint";

/// The `uriBaseId` every relative artifact URI is resolved against.
pub const SRCROOT: &str = "%SRCROOT%";

/// The key of idemlint's own fingerprint in `partialFingerprints`.
pub const FINGERPRINT_KEY: &str = "idemlint/v1";

/// Id of the notification descriptor used for files that could not be analysed.
pub const FILE_NOTIFICATION_ID: &str = "file-not-analysed";

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool<'a>,
    automation_details: AutomationDetails,
    invocations: Vec<Invocation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    original_uri_base_ids: Option<std::collections::BTreeMap<&'static str, BaseUri>>,
    column_kind: &'static str,
    results: Vec<SarifResult<'a>>,
}

#[derive(Serialize)]
struct AutomationDetails {
    id: String,
}

#[derive(Serialize)]
struct Tool<'a> {
    driver: Driver<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver<'a> {
    name: &'static str,
    version: &'static str,
    semantic_version: &'static str,
    information_uri: &'static str,
    rules: Vec<Rule<'a>>,
    notifications: Vec<NotificationDescriptor>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule<'a> {
    id: &'a str,
    name: String,
    short_description: Text,
    full_description: Multiformat,
    help: Multiformat,
    help_uri: String,
    default_configuration: Configuration,
    properties: RuleProperties,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct NotificationDescriptor {
    id: &'static str,
    name: &'static str,
    short_description: Text,
    full_description: Text,
    help: Multiformat,
    default_configuration: Configuration,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct Multiformat {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    tags: Vec<&'static str>,
    precision: &'static str,
    #[serde(rename = "problem.severity")]
    problem_severity: &'static str,
}

#[derive(Serialize)]
struct BaseUri {
    uri: String,
    description: Text,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    tool_execution_notifications: Vec<Notification>,
}

#[derive(Serialize)]
struct Notification {
    level: &'static str,
    message: Text,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    locations: Vec<Location>,
    descriptor: DescriptorRef,
}

#[derive(Serialize)]
struct DescriptorRef {
    id: &'static str,
    index: usize,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'a str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<RelatedLocation>,
    partial_fingerprints: std::collections::BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    fixes: Vec<SarifFix>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    physical_location: PhysicalLocation,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RelatedLocation {
    id: usize,
    physical_location: PhysicalLocation,
    message: Text,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
    #[serde(skip_serializing_if = "Option::is_none")]
    context_region: Option<Region>,
}

#[derive(Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactLocation {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    uri_base_id: Option<&'static str>,
}

/// A text region: 1-based lines, 1-based columns in Unicode scalar values, exclusive end
/// column.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: usize,
    start_column: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    end_column: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    snippet: Option<Text>,
}

impl Region {
    fn start(start_line: usize, start_column: usize) -> Region {
        Region {
            start_line,
            start_column,
            end_line: None,
            end_column: None,
            snippet: None,
        }
    }

    fn range(start_line: usize, start_column: usize, end_line: usize, end_column: usize) -> Region {
        Region {
            end_line: Some(end_line),
            end_column: Some(end_column),
            ..Region::start(start_line, start_column)
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifFix {
    description: Text,
    artifact_changes: Vec<ArtifactChange>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactChange {
    artifact_location: ArtifactLocation,
    replacements: Vec<Replacement>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Replacement {
    deleted_region: Region,
    inserted_content: Text,
}

/// SARIF `level` of a severity (`error`, `warning`, `note`: the same words).
pub fn level(severity: Severity) -> &'static str {
    severity.name()
}

/// The PascalCase "friendly name" SARIF recommends for a rule (`key-in-retry-scope` →
/// `KeyInRetryScope`).
pub fn friendly_name(id: &str) -> String {
    id.split(['-', '_']).map(capitalise).collect()
}

/// `s` trimmed, ending with a period (SARIF asks that messages be complete sentences);
/// text already ending in `.`, `!` or `?` is left as it is.
pub fn sentence(s: &str) -> String {
    let s = s.trim_end();
    if s.ends_with(['.', '!', '?']) {
        s.to_string()
    } else {
        format!("{s}.")
    }
}

/// `s` as SARIF message text (§3.11.6): `[` and `]` are escaped with a backslash so a
/// consumer does not read `keys[i]` or `[x](1)` in quoted code as an embedded link, and a
/// backslash before a bracket is escaped too (`\\[`). Only text idemlint writes as a link
/// (`[boundary](1)`) is left unescaped, by not passing it through here.
pub fn message_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            '\\' if matches!(chars.peek(), Some('[' | ']')) => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out
}

/// `s` with its first character upper-cased.
fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// GitHub code scanning's limit on a rule's `fullDescription`, characters.
pub const MAX_FULL_DESCRIPTION: usize = 1024;

/// `text` cut to at most `max` characters: whole paragraphs (split at blank lines) while
/// they fit, else whole sentences of the first paragraph, else words with `…`.
pub fn clip_description(text: &str, max: usize) -> String {
    let len = |s: &str| s.chars().count();
    if len(text) <= max {
        return text.to_string();
    }
    let mut out = String::new();
    for p in text.split("\n\n") {
        let next = if out.is_empty() {
            p.to_string()
        } else {
            format!("{out}\n\n{p}")
        };
        if len(&next) > max {
            // A list that does not fit whole: as many of its items as fit.
            let is_item =
                |l: &str| l.trim_start().starts_with("- ") || l.trim_start().starts_with("* ");
            if !out.is_empty() && p.lines().next().is_some_and(is_item) {
                let mut items: Vec<String> = Vec::new();
                for l in p.lines() {
                    match items.last_mut() {
                        Some(last) if !is_item(l) => {
                            last.push('\n');
                            last.push_str(l);
                        }
                        _ => items.push(l.to_string()),
                    }
                }
                let mut with = format!("{out}\n");
                for item in items {
                    if len(&with) + len(&item) + 1 > max {
                        break;
                    }
                    with.push('\n');
                    with.push_str(&item);
                }
                if with.len() > out.len() + 1 {
                    out = with;
                }
            }
            break;
        }
        out = next;
    }
    if !out.is_empty() {
        return out;
    }
    let first = text.split("\n\n").next().unwrap_or(text);
    for (i, _) in first.match_indices(". ") {
        if len(&first[..=i]) <= max {
            out = first[..=i].to_string();
        }
    }
    if !out.is_empty() {
        return out;
    }
    let mut words = String::new();
    for w in first.split_whitespace() {
        if len(&words) + len(w) + 2 > max {
            break;
        }
        if !words.is_empty() {
            words.push(' ');
        }
        words.push_str(w);
    }
    words.push('…');
    words
}

/// GitHub's `problem.severity` of a rule (`error`, `warning` or `recommendation`).
fn problem_severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "recommendation",
    }
}

/// The body of the `## {heading}` section of a rule's markdown docs, trimmed; empty when the
/// section is missing.
fn doc_section(doc: &str, heading: &str) -> String {
    let mut lines = doc.lines();
    let wanted = format!("## {heading}");
    if !lines.any(|l| l.trim_end() == wanted) {
        return String::new();
    }
    let body: Vec<&str> = lines.take_while(|l| !l.starts_with("## ")).collect();
    body.join("\n").trim().to_string()
}

/// Joins the hard-wrapped lines of markdown paragraphs with spaces for plain text; blank
/// lines and list items keep their line breaks.
fn unwrap_lines(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut prev_blank = true;
    for line in markdown.lines() {
        let t = line.trim();
        if t.is_empty() {
            out.push_str("\n\n");
            prev_blank = true;
            continue;
        }
        if !prev_blank {
            if t.starts_with("- ") || t.starts_with("* ") {
                out.push('\n');
            } else {
                out.push(' ');
            }
        }
        out.push_str(t);
        prev_blank = false;
    }
    out.trim().to_string()
}

/// GitHub code scanning's `precision` for a rule. The catalogue makes a rule an error when
/// its findings are bugs whenever the flow is real, and a warning when a legitimate design
/// can look the same (a clock value in a key, a fallback key in an interceptor), so the
/// default severity stands for the precision.
fn precision(rule: &RuleMeta) -> &'static str {
    match rule.severity {
        Severity::Error => "high",
        Severity::Warning => "medium",
        Severity::Note => "low",
    }
}

fn rule_descriptor(rule: &'static RuleMeta) -> Rule<'static> {
    let what = doc_section(rule.doc, "What it does");
    let full = if what.is_empty() {
        rule.summary().to_string()
    } else {
        what
    };
    Rule {
        id: rule.id,
        name: friendly_name(rule.id),
        short_description: Text {
            text: sentence(rule.summary()),
        },
        full_description: Multiformat {
            text: clip_description(&sentence(&unwrap_lines(&full)), MAX_FULL_DESCRIPTION),
            markdown: clip_description(&full, MAX_FULL_DESCRIPTION),
        },
        help: Multiformat {
            text: rule.doc.to_string(),
            markdown: rule.doc.to_string(),
        },
        help_uri: format!("{INFORMATION_URI}/blob/main/rules/docs/{}.md", rule.id),
        default_configuration: Configuration {
            level: level(rule.severity),
        },
        properties: RuleProperties {
            tags: match rule.id {
                crate::suppress::UNUSED_SUPPRESSION
                | crate::suppress::SUPPRESSION_WITHOUT_REASON => {
                    vec!["maintainability", "suppression"]
                }
                _ => vec!["correctness", "reliability", "idempotency"],
            },
            precision: precision(rule),
            problem_severity: problem_severity(rule.severity),
        },
    }
}

/// Percent-encodes one path segment (RFC 3986): every byte of the UTF-8 form except the
/// unreserved characters `A-Z a-z 0-9 - . _ ~`.
pub fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The segments of a path as strings (a Windows prefix like `C:` is kept as a segment).
fn segments(p: &Path) -> Vec<String> {
    p.components()
        .filter_map(|c| match c {
            Component::RootDir => None,
            other => Some(other.as_os_str().to_string_lossy().into_owned()),
        })
        .collect()
}

/// An absolute `file://` URI for an absolute path; `dir` adds the trailing slash SARIF
/// requires of base URIs.
pub fn file_uri(abs: &Path, dir: bool) -> String {
    let segs: Vec<String> = segments(abs)
        .iter()
        .map(|s| {
            // Keep a drive letter's colon (`C:`) readable; everything else is encoded.
            if s.len() == 2 && s.ends_with(':') && s.as_bytes()[0].is_ascii_alphabetic() {
                s.clone()
            } else {
                encode_segment(s)
            }
        })
        .collect();
    let mut uri = format!("file:///{}", segs.join("/"));
    if dir && !uri.ends_with('/') {
        uri.push('/');
    }
    uri
}

/// The artifact location of a displayed path: relative to `%SRCROOT%` (`srcroot`) with
/// forward slashes and percent-encoded segments when the path is inside it, otherwise an
/// absolute `file://` URI. Without a `srcroot`, relative paths stay relative.
fn artifact(path: &str, srcroot: Option<&Path>) -> ArtifactLocation {
    let p = Path::new(path);
    let relative = |rel: &Path| ArtifactLocation {
        uri: segments(rel)
            .iter()
            .map(|s| encode_segment(s))
            .collect::<Vec<_>>()
            .join("/"),
        uri_base_id: Some(SRCROOT),
    };
    match srcroot {
        Some(root) => {
            let root = crate::fsio::lexical_normal(root);
            let abs = crate::fsio::lexical_normal(&root.join(p));
            match abs.strip_prefix(&root) {
                Ok(rel) if !rel.as_os_str().is_empty() => relative(rel),
                _ => ArtifactLocation {
                    uri: file_uri(&abs, false),
                    uri_base_id: None,
                },
            }
        }
        None => {
            let n = crate::fsio::lexical_normal(p);
            if n.is_absolute() {
                ArtifactLocation {
                    uri: file_uri(&n, false),
                    uri_base_id: None,
                }
            } else {
                relative(&n)
            }
        }
    }
}

/// Most bytes of context shown on each side of a finding in `contextRegion` (a long line
/// is cut to this window, so one minified line with many findings cannot multiply the
/// report by its length).
pub const MAX_CONTEXT_BYTES: usize = 512;

/// Longest finding text given as the region's `snippet`, bytes (longer ones have none).
pub const MAX_SNIPPET_BYTES: usize = 4096;

/// The finding's region with its text as `snippet`, and the lines it is on (at most
/// [`MAX_CONTEXT_BYTES`] on each side) as the context region, when the file's text is at
/// hand and the span fits it.
fn regions(f: &Finding, text: Option<&str>) -> (Region, Option<Region>) {
    let mut region = Region::range(f.line, f.column, f.end_line, f.end_column);
    let Some(text) = text else {
        return (region, None);
    };
    let (start, end) = (f.span.start, f.span.end);
    let Some(snippet) = text.get(start..end) else {
        return (region, None);
    };
    if snippet.len() > MAX_SNIPPET_BYTES {
        return (region, None);
    }
    region.snippet = Some(Text {
        text: snippet.to_string(),
    });
    let mut lo = start.saturating_sub(MAX_CONTEXT_BYTES);
    while !text.is_char_boundary(lo) {
        lo += 1;
    }
    let mut hi = (end + MAX_CONTEXT_BYTES).min(text.len());
    while !text.is_char_boundary(hi) {
        hi -= 1;
    }
    let line_start = text[lo..start].rfind('\n').map_or(lo, |i| lo + i + 1);
    let mut line_end = text[end..hi].find('\n').map_or(hi, |i| end + i);
    if text[..line_end].ends_with('\r') && line_end > end {
        line_end -= 1;
    }
    let lines = &text[line_start..line_end];
    let start_column = f
        .column
        .saturating_sub(text[line_start..start].chars().count())
        .max(1);
    let end_column = f.end_column + text[end..line_end].chars().count();
    let context = Region {
        snippet: Some(Text {
            text: lines.to_string(),
        }),
        ..Region::range(f.line, start_column, f.end_line, end_column)
    };
    (region, Some(context))
}

fn result<'a>(
    f: &'a Finding,
    fingerprint: String,
    texts: &TextMap,
    srcroot: Option<&Path>,
) -> SarifResult<'a> {
    let rule_index = RULES.iter().position(|r| r.id == f.rule).unwrap_or(0);
    let (region, context_region) = regions(f, texts.get(&f.path).map(|t| &**t));
    let here = artifact(&f.path, srcroot);
    let related_locations = f
        .boundary
        .iter()
        .map(|b| RelatedLocation {
            id: 1,
            physical_location: PhysicalLocation {
                artifact_location: match &b.path {
                    Some(p) => artifact(p, srcroot),
                    None => here.clone(),
                },
                region: Some(Region::start(b.line, b.column)),
                context_region: None,
            },
            message: Text {
                text: message_text(&sentence(&format!("{} boundary: {}", b.kind, b.label))),
            },
        })
        .collect();
    let fixes = f
        .fix
        .iter()
        .map(|fix| SarifFix {
            description: Text {
                text: message_text(&sentence(&capitalise(&format!(
                    "{} ({})",
                    fix.message,
                    applicability(fix)
                )))),
            },
            artifact_changes: vec![ArtifactChange {
                artifact_location: here.clone(),
                replacements: fix
                    .edits
                    .iter()
                    .map(|e| Replacement {
                        deleted_region: Region::range(
                            e.start_line,
                            e.start_column,
                            e.end_line,
                            e.end_column,
                        ),
                        inserted_content: Text {
                            text: e.content.clone(),
                        },
                    })
                    .collect(),
            }],
        })
        .collect();
    SarifResult {
        rule_id: f.rule,
        rule_index,
        level: level(f.severity),
        message: Text {
            text: match &f.boundary {
                // GitHub shows a related location when the message links to it.
                // The link is idemlint's own; everything else is escaped.
                Some(b) => format!(
                    "{} See the [{} boundary](1). To fix: {}",
                    message_text(&sentence(&f.message)),
                    message_text(&b.kind),
                    message_text(&sentence(&f.help))
                ),
                None => message_text(&format!(
                    "{} To fix: {}",
                    sentence(&f.message),
                    sentence(&f.help)
                )),
            },
        },
        locations: vec![Location {
            physical_location: PhysicalLocation {
                artifact_location: here,
                region: Some(region),
                context_region,
            },
        }],
        related_locations,
        partial_fingerprints: [(FINGERPRINT_KEY, fingerprint)].into(),
        fixes,
    }
}

fn applicability(fix: &crate::finding::Fix) -> &'static str {
    match fix.applicability {
        crate::finding::Applicability::Safe => "safe: `--fix` applies it",
        crate::finding::Applicability::Unsafe => "needs review: `--fix --unsafe-fixes` applies it",
    }
}

fn file_notification_descriptor() -> NotificationDescriptor {
    let help = "A file that cannot be read (permission denied, binary, not UTF-8) is skipped. \
                Java and Kotlin files with syntax errors are analysed where tree-sitter \
                recovered; a Rust file that `syn` cannot parse is skipped. Fix the file, or \
                exclude it from the paths given to idemlint.";
    NotificationDescriptor {
        id: FILE_NOTIFICATION_ID,
        name: "FileNotAnalysed",
        short_description: Text {
            text: "A file could not be read or parsed.".into(),
        },
        full_description: Text {
            text: "A file could not be read or parsed, so it was skipped or analysed only \
                   where the parser recovered; findings in it may be missing."
                .into(),
        },
        help: Multiformat {
            text: help.into(),
            markdown: help.into(),
        },
        default_configuration: Configuration { level: "warning" },
    }
}

fn notification(e: &FileError, srcroot: Option<&Path>) -> Notification {
    let region = e
        .line
        .map(|line| Region::start(line, e.column.unwrap_or(1)));
    Notification {
        level: "warning",
        message: Text {
            text: message_text(&sentence(&format!("{}: {}", e.path, e.message))),
        },
        locations: vec![Location {
            physical_location: PhysicalLocation {
                artifact_location: artifact(&e.path, srcroot),
                region,
                context_region: None,
            },
        }],
        descriptor: DescriptorRef {
            id: FILE_NOTIFICATION_ID,
            index: 0,
        },
    }
}

/// The SARIF category of a run (`runAutomationDetails.id` is `CATEGORY/`): `idemlint`, or
/// `idemlint-shard-I-of-N` for shard I (1-based) of N.
pub fn category(shard: Option<crate::check::Shard>) -> String {
    match shard {
        Some(s) => format!("idemlint-shard-{}-of-{}", s.index + 1, s.count),
        None => "idemlint".into(),
    }
}

/// Renders `report` as a pretty-printed SARIF 2.1.0 log with a trailing newline.
/// `srcroot` is the directory `%SRCROOT%` stands for (absolute; the CLI passes the current
/// directory, against which displayed paths are relative); `None` leaves it undefined
/// in the log and keeps relative paths relative. `category` names the analysis for
/// `runAutomationDetails.id` ([`category`]; `None`: `idemlint`). `exit_code` is the
/// process's exit code when known (the CLI's); the invocation records it, and
/// `executionSuccessful` is false when it is 2 (a tool error, `--strict` with a file that
/// could not be analysed) or when any file could not be analysed: findings may be missing.
pub fn render(
    report: &Report,
    srcroot: Option<&Path>,
    category: Option<&str>,
    exit_code: Option<i32>,
) -> String {
    let original_uri_base_ids = srcroot.filter(|r| r.is_absolute()).map(|root| {
        [(
            SRCROOT,
            BaseUri {
                uri: file_uri(&crate::fsio::lexical_normal(root), true),
                description: Text {
                    text: "The directory idemlint was run from; paths are relative to it.".into(),
                },
            },
        )]
        .into()
    });
    let log = Log {
        schema: SCHEMA_URI,
        version: "2.1.0",
        runs: vec![Run {
            automation_details: AutomationDetails {
                id: format!("{}/", category.unwrap_or("idemlint")),
            },
            tool: Tool {
                driver: Driver {
                    name: "idemlint",
                    version: env!("CARGO_PKG_VERSION"),
                    semantic_version: env!("CARGO_PKG_VERSION"),
                    information_uri: INFORMATION_URI,
                    rules: RULES.iter().map(rule_descriptor).collect(),
                    notifications: vec![file_notification_descriptor()],
                },
            },
            invocations: vec![Invocation {
                execution_successful: report.errors.is_empty()
                    && exit_code != Some(crate::cli::EXIT_TOOL_ERROR),
                exit_code,
                tool_execution_notifications: report
                    .errors
                    .iter()
                    .map(|e| notification(e, srcroot))
                    .collect(),
            }],
            original_uri_base_ids,
            column_kind: "unicodeCodePoints",
            results: report
                .findings
                .iter()
                .zip(super::unique_fingerprints(&report.findings))
                .map(|(f, fp)| result(f, fp, &report.texts, srcroot))
                .collect(),
        }],
    };
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_else(|e| {
        // Serialising plain strings and numbers cannot fail; keep a valid log regardless.
        format!(
            "{{\"$schema\": \"{SCHEMA_URI}\", \"version\": \"2.1.0\", \"runs\": [{{\"tool\": {{\"driver\": {{\"name\": \"idemlint\"}}}}, \"invocations\": [{{\"executionSuccessful\": false, \"toolExecutionNotifications\": [{{\"message\": {{\"text\": {}}}}}]}}], \"results\": []}}]}}",
            serde_json::Value::from(format!("could not serialise the SARIF log: {e}."))
        )
    });
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_are_clipped_at_paragraphs_sentences_or_words() {
        assert_eq!(clip_description("short", 10), "short");
        assert_eq!(clip_description("one.\n\ntwo two two", 8), "one.");
        assert_eq!(clip_description("A b. C d. E f g h", 10), "A b. C d.");
        assert_eq!(
            clip_description("Kinds:\n\n- one\n  more\n- two\n- three", 26),
            "Kinds:\n\n- one\n  more\n- two"
        );
        let long = "word ".repeat(300);
        let c = clip_description(&long, 1024);
        assert!(c.chars().count() <= 1024 && c.ends_with('…'), "{c}");
    }

    #[test]
    fn friendly_names_are_pascal_case() {
        assert_eq!(friendly_name("key-in-retry-scope"), "KeyInRetryScope");
        assert_eq!(friendly_name("time-in-key"), "TimeInKey");
    }

    #[test]
    fn sentences_end_with_a_period() {
        assert_eq!(sentence("a `b`"), "a `b`.");
        assert_eq!(sentence("done. "), "done.");
        assert_eq!(sentence("why?"), "why?");
    }

    #[test]
    fn segments_are_percent_encoded() {
        assert_eq!(encode_segment("Zahlung ü.kt"), "Zahlung%20%C3%BC.kt");
        assert_eq!(encode_segment("a:b,c#d%e"), "a%3Ab%2Cc%23d%25e");
        assert_eq!(encode_segment("Ok-file_1.~rs"), "Ok-file_1.~rs");
    }

    #[cfg(unix)]
    #[test]
    fn artifact_uris_are_relative_inside_the_root_and_absolute_outside() {
        let root = Path::new("/repo/app");
        let a = artifact("src/my dir/A.kt", Some(root));
        assert_eq!(a.uri, "src/my%20dir/A.kt");
        assert_eq!(a.uri_base_id, Some(SRCROOT));
        let a = artifact("./src/../lib/B.java", Some(root));
        assert_eq!(a.uri, "lib/B.java");
        let a = artifact("/repo/app/x.rs", Some(root));
        assert_eq!((a.uri.as_str(), a.uri_base_id), ("x.rs", Some(SRCROOT)));
        let a = artifact("../other/y.rs", Some(root));
        assert_eq!(
            (a.uri.as_str(), a.uri_base_id),
            ("file:///repo/other/y.rs", None)
        );
        let a = artifact("/elsewhere/z é.rs", Some(root));
        assert_eq!(a.uri, "file:///elsewhere/z%20%C3%A9.rs");
        assert_eq!(file_uri(root, true), "file:///repo/app/");
        let a = artifact("src/A.kt", None);
        assert_eq!((a.uri.as_str(), a.uri_base_id), ("src/A.kt", Some(SRCROOT)));
    }

    #[test]
    fn wrapped_paragraphs_are_joined_for_plain_text() {
        assert_eq!(
            unwrap_lines("Flags a key\nbuilt here:\n\n- one\n  two\n- three\n\nEnd."),
            "Flags a key built here:\n\n- one two\n- three\n\nEnd."
        );
    }

    #[test]
    fn what_it_does_section_is_the_full_description() {
        let doc = "# x\n\nSummary.\n\n## What it does\n\nFlags things.\nMore.\n\n## Why is this bad?\n\nBad.\n";
        assert_eq!(doc_section(doc, "What it does"), "Flags things.\nMore.");
        assert_eq!(doc_section(doc, "Missing"), "");
    }
}
