//! `--format json`: one object, `{"version": 1, "findings": [...], "errors": [...]}`.
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
}

/// Renders the report as pretty-printed JSON with a trailing newline.
pub fn render(report: &Report) -> String {
    let r = JsonReport {
        version: VERSION,
        findings: &report.findings,
        errors: &report.errors,
        baseline: report.baseline.as_ref(),
    };
    let mut s = serde_json::to_string_pretty(&r).unwrap_or_else(|e| {
        format!("{{\"version\": {VERSION}, \"findings\": [], \"errors\": [{{\"path\": \"\", \"message\": \"could not serialise: {e}\"}}]}}")
    });
    s.push('\n');
    s
}
