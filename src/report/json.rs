//! `--format json`: one object, `{"version": 1, "findings": [...], "errors": [...]}`.
//! The shape is a public interface documented in README.md; changes go in CHANGELOG.md.

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
}

/// Renders the report as pretty-printed JSON with a trailing newline.
pub fn render(report: &Report) -> String {
    let r = JsonReport {
        version: VERSION,
        findings: &report.findings,
        errors: &report.errors,
    };
    let mut s = serde_json::to_string_pretty(&r).unwrap_or_else(|e| {
        format!("{{\"version\": {VERSION}, \"findings\": [], \"errors\": [{{\"path\": \"\", \"message\": \"could not serialise: {e}\"}}]}}")
    });
    s.push('\n');
    s
}
