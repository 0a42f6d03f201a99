//! `--format gitlab`: a GitLab Code Quality report, the JSON array GitLab reads from a job's
//! `artifacts:reports:codequality` file (a subset of the Code Climate issue format).
//!
//! One object per finding: `type` (`issue`), `check_name` (the rule id), `description`
//! (message and help), `categories` (`["Bug Risk"]`), `severity` (`critical` for errors,
//! `major` for warnings, `info` for notes), `fingerprint` (the finding's fingerprint, with
//! `/N` appended to the N-th copy so each is unique, as GitLab requires) and `location`
//! (`path` as displayed, relative to the directory idemlint ran in, with `/`;
//! `lines.begin`, `lines.end`, 1-based). Files that could not be analysed are not issues
//! and are not listed (they are on standard error).

use serde::Serialize;

use crate::check::Report;
use crate::finding::Severity;

#[derive(Serialize)]
struct Issue<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    check_name: &'a str,
    description: String,
    categories: [&'static str; 1],
    severity: &'static str,
    fingerprint: String,
    location: Location,
}

#[derive(Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: usize,
    end: usize,
}

/// GitLab's severity of a finding (`info`, `minor`, `major`, `critical`, `blocker`).
pub fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "critical",
        Severity::Warning => "major",
        Severity::Note => "info",
    }
}

/// Renders the report as a pretty-printed JSON array with a trailing newline.
pub fn render(report: &Report) -> String {
    let issues: Vec<Issue> = report
        .findings
        .iter()
        .zip(super::unique_fingerprints(&report.findings))
        .map(|(f, fingerprint)| Issue {
            kind: "issue",
            check_name: f.rule,
            description: if f.help.is_empty() {
                f.message.clone()
            } else {
                format!("{} (help: {})", f.message, f.help)
            },
            categories: ["Bug Risk"],
            severity: severity(f.severity),
            fingerprint,
            location: Location {
                path: f.path.replace('\\', "/"),
                lines: Lines {
                    begin: f.line,
                    end: f.end_line.max(f.line),
                },
            },
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&issues).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s
}
