//! What a rule reports: a [`Finding`], with positions already converted for output.

use serde::Serialize;

use sha2::{Digest, Sha256};

use crate::model::Span;

/// The path that goes into fingerprints: relative to the project root (the nearest
/// ancestor holding `.git`, `idemlint.toml` or `.idemlint.toml`), with `/` separators, so
/// a baseline does not depend on the directory idemlint runs from or on how the path was
/// spelled. Falls back to `display` when the file is not on disk (stdin, unsaved buffers).
pub fn project_relative(display: &str) -> String {
    let fallback = || {
        display
            .replace('\\', "/")
            .trim_start_matches("./")
            .to_string()
    };
    let Ok(abs) = std::fs::canonicalize(display) else {
        return fallback();
    };
    let mut dir = abs.parent();
    while let Some(d) = dir {
        if [".git", "idemlint.toml", ".idemlint.toml"]
            .iter()
            .any(|m| d.join(m).exists())
            && let Ok(rel) = abs.strip_prefix(d)
        {
            return rel.to_string_lossy().replace('\\', "/");
        }
        dir = d.parent();
    }
    fallback()
}

/// Computes [`Finding::fingerprint`] from its parts; `parts` are length-prefixed so no two
/// different lists hash the same.
pub fn fingerprint(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    h.update(b"idemlint/v1");
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// How serious a finding is. Ordered `Note < Warning < Error`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// The attempt boundary a finding is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BoundaryRef {
    /// `interceptor`, `retry`, `callback`, `scheduler`.
    pub kind: String,
    /// How the message names it ("`retryOnTransient { … }`").
    pub label: String,
    /// 1-based line and column (chars) of the construct's start.
    pub line: usize,
    pub column: usize,
    #[serde(skip)]
    pub span: Span,
    /// The boundary's file when it is not the finding's own file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The catalogue flavor (`redelivery`, `retryable`, `loop`, ..): a `retry` boundary
    /// that a broker or engine re-runs is labelled as a redelivery in snippets.
    #[serde(skip)]
    pub flavor: String,
    /// The `label` a user's `[[boundary]]` entry gives its helper, shown in snippets.
    #[serde(skip)]
    pub user_label: Option<String>,
}

impl BoundaryRef {
    /// How a snippet labels the construct: the user's label for a configured helper
    /// (`Acme patient retry (retry boundary)`), `redelivery boundary` for a message
    /// listener or worker the broker or engine runs again, else `<kind> boundary`.
    pub fn snippet_label(&self) -> String {
        if let Some(l) = &self.user_label {
            format!("{l} ({} boundary)", self.kind)
        } else if self.flavor == "redelivery" {
            "redelivery boundary".to_string()
        } else {
            format!("{} boundary", self.kind)
        }
    }
}

/// One reported problem. Lines are 1-based; columns are 1-based and counted in chars.
/// `line`/`column` are the start of the ephemeral source expression (or of the helper
/// call that evaluates one), `end_line`/`end_column` its end (exclusive column).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub rule: &'static str,
    pub severity: Severity,
    /// The path as the user gave it (relative when they gave it relative).
    pub path: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub message: String,
    pub help: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boundary: Option<BoundaryRef>,
    /// The ephemeral expression as written.
    pub source: String,
    /// Byte range of the source expression in the file.
    #[serde(skip)]
    pub span: Span,
    /// Where the key goes ("the `Idempotency-Key` header").
    pub sink: String,
    /// A stable identity for baselines and SARIF `partialFingerprints` (`idemlint/v1`):
    /// 32 hex chars of SHA-256 over the rule, the path, the enclosing declarations and
    /// boundary, and the source expression with whitespace removed. Moving the code up or
    /// down does not change it; two copies of the same bug in one function share it.
    pub fingerprint: String,
    /// A suggested edit, when one can be computed (see `crate::fix`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<Fix>,
    /// Why there is no fix (set by `crate::fix::attach`; shown in the summary and, as
    /// `no_fix`, in JSON).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_fix: Option<String>,
    /// Findings of other rules for the same bug (the same source expression), merged into
    /// this one so one bug gives one finding (see `crate::report::merge`); empty for most.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<AlsoFinding>,
    /// Only some of the declarations a call may refer to are per-attempt key minters (the
    /// message names them): the finding is reported one severity below its rule's.
    #[serde(skip)]
    pub ambiguous: bool,
}

impl Severity {
    /// One step lower (`error` → `warning` → `note`; `note` stays).
    pub fn lower(self) -> Severity {
        match self {
            Severity::Error => Severity::Warning,
            _ => Severity::Note,
        }
    }
}

/// Another rule's finding on the same source expression, folded into the finding that
/// reports the bug (its reason is appended to that finding's message).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AlsoFinding {
    pub rule: &'static str,
    /// The severity it had on its own (after the configuration).
    pub severity: Severity,
    pub message: String,
    /// Its own `idemlint/v1` fingerprint.
    pub fingerprint: String,
}

/// Whether a fix may be applied without review.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// Keeps the program's meaning apart from the bug it fixes; `--fix` applies it.
    Safe,
    /// Probably right but needs review (e.g. a Rust `move` closure that may need a clone);
    /// applied only with `--unsafe-fixes`.
    Unsafe,
}

/// One text replacement. `start`/`end` are byte offsets into the file's original text
/// (half-open); positions are 1-based lines and char columns, for outputs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Edit {
    #[serde(rename = "start_byte")]
    pub start: usize,
    #[serde(rename = "end_byte")]
    pub end: usize,
    pub start_line: usize,
    pub start_column: usize,
    pub end_line: usize,
    pub end_column: usize,
    /// The replacement text.
    pub content: String,
}

/// A fix: edits that must be applied together.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Fix {
    pub applicability: Applicability,
    /// What the fix does ("hoist `UUID.randomUUID()` into `idempotencyKey` before …").
    pub message: String,
    /// Non-overlapping edits, sorted by start.
    pub edits: Vec<Edit>,
    /// Why the fix is `unsafe` (a check of `fix::verify` failed, or the edit cannot be
    /// proven to keep the meaning); `None` for safe fixes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The local variable the fix declares (`idempotencyKey`), if any, with the byte range
    /// (0-based, end exclusive) of the function it is declared in: its name is chosen free
    /// in the text the fix was computed on, so two fixes declaring one name in overlapping
    /// functions are not applied in the same round ([`crate::fix::apply::apply`]).
    #[serde(skip)]
    pub declares: Option<(String, std::ops::Range<usize>)>,
}

impl Finding {
    /// Sort key: path, line, column, rule (the documented output order).
    pub fn sort_key(&self) -> (&str, usize, usize, &str) {
        (&self.path, self.line, self.column, self.rule)
    }
}

/// A file that could not be read or parsed (fully). The run goes on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct FileError {
    pub path: String,
    /// 1-based; absent when the whole file is unreadable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    pub message: String,
}
