//! `--format json`: one object, `{"version": 1, "findings": [...], "errors": [...],
//! "summary": {...}}`.
//! The shape is a public interface documented in docs/json.md; changes go in CHANGELOG.md.

use serde::Serialize;

use crate::check::Report;
use crate::finding::{FileError, Finding};

/// Version of the JSON shape.
pub const VERSION: u32 = 1;

#[derive(Serialize)]
struct JsonReport<'a> {
    version: u32,
    findings: &'a [Finding],
    errors: &'a [FileError],
    /// Present when a baseline was applied: the file, how many findings it hid, and its
    /// stale entries.
    #[serde(skip_serializing_if = "Option::is_none")]
    baseline: Option<&'a crate::baseline::Outcome>,
    summary: Summary,
}

/// The run in counts, what the human report's last lines say (docs/json.md).
#[derive(Serialize)]
struct Summary {
    /// Findings reported (after suppressions, configuration and a baseline).
    findings: usize,
    by_severity: BySeverity,
    files: Files,
    /// Of the findings: with a safe fix, with an unsafe one, with none (`no_fix` says why).
    fixes: Fixes,
}

#[derive(Serialize)]
struct BySeverity {
    error: usize,
    warning: usize,
    note: usize,
}

#[derive(Serialize)]
struct Files {
    /// Source files checked (after include/exclude and ignore files).
    checked: usize,
    /// Of those, files parsed: the others hold no word a finding needs (the prefilter).
    parsed: usize,
    /// Files with an entry in `errors` (not read, not parsed, or cut short).
    with_problems: usize,
    /// Source files left out as ignored or hidden (`--no-ignore` checks them).
    ignored: usize,
}

#[derive(Serialize)]
struct Fixes {
    safe: usize,
    #[serde(rename = "unsafe")]
    unsafe_: usize,
    none: usize,
}

fn summary(report: &Report) -> Summary {
    use crate::finding::{Applicability, Severity};
    let count = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count();
    let fix = |a: Applicability| {
        report
            .findings
            .iter()
            .filter(|f| f.fix.as_ref().is_some_and(|x| x.applicability == a))
            .count()
    };
    Summary {
        findings: report.findings.len(),
        by_severity: BySeverity {
            error: count(Severity::Error),
            warning: count(Severity::Warning),
            note: count(Severity::Note),
        },
        files: Files {
            checked: report.files,
            parsed: report.parsed,
            with_problems: report.files_with_problems(),
            ignored: report.ignored.files,
        },
        fixes: Fixes {
            safe: fix(Applicability::Safe),
            unsafe_: fix(Applicability::Unsafe),
            none: report.findings.iter().filter(|f| f.fix.is_none()).count(),
        },
    }
}

/// Renders the report as pretty-printed JSON with a trailing newline.
pub fn render(report: &Report) -> String {
    let r = JsonReport {
        version: VERSION,
        findings: &report.findings,
        errors: &report.errors,
        baseline: report.baseline.as_ref(),
        summary: summary(report),
    };
    let mut s = serde_json::to_string_pretty(&r).unwrap_or_else(|e| {
        format!("{{\"version\": {VERSION}, \"findings\": [], \"errors\": [{{\"path\": \"\", \"message\": \"could not serialise: {e}\"}}]}}")
    });
    s.push('\n');
    s
}
