//! `--format github`: GitHub Actions workflow commands, one per finding:
//! `::error file=…,line=…,endLine=…,col=…,endColumn=…,title=…::message` (`::warning` and
//! `::notice` by severity), which the runner turns into annotations on the step and the
//! pull request's diff.
//!
//! Escaping follows GitHub's runner (documented in actions/toolkit `command.ts`): in the
//! message, `%` → `%25`, `\r` → `%0D`, `\n` → `%0A`; in property values also `:` → `%3A`
//! and `,` → `%2C`. Lines and columns are 1-based; columns count Unicode scalar values, and
//! `col`/`endColumn` are only given when the finding starts and ends on one line (GitHub
//! drops column ranges across lines).
//!
//! GitHub shows at most 10 error, 10 warning and 10 notice annotations per step (and 50 per
//! job). When more would be printed, every command is still printed (the log keeps them)
//! and one `::notice::` comes first — so that it is itself among the shown — saying so and
//! pointing at SARIF upload for code scanning.

use crate::check::Report;
use crate::finding::Severity;

/// Annotations of one kind GitHub shows per step.
pub const ANNOTATIONS_PER_KIND: usize = 10;

/// Escapes workflow-command data (the text after `::`).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow-command property value (`file=`, `title=`).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The workflow command of a severity.
pub fn command(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "notice",
    }
}

/// A path as GitHub resolves it against the workspace: forward slashes, no leading `./`.
fn github_path(path: &str) -> String {
    let p = if std::path::MAIN_SEPARATOR == '\\' {
        path.replace('\\', "/")
    } else {
        path.to_string()
    };
    p.strip_prefix("./").map(str::to_string).unwrap_or(p)
}

/// Renders the workflow commands. With `quiet`, files that could not be analysed are not
/// annotated (they stay in the JSON and SARIF outputs); the notice about GitHub's
/// annotation limit is printed either way, since without it annotations vanish silently.
pub fn render(report: &Report, quiet: bool) -> String {
    let mut lines = Vec::new();
    let mut counts = [0usize; 3]; // error, warning, notice
    let mut count = |cmd: &str| match cmd {
        "error" => counts[0] += 1,
        "warning" => counts[1] += 1,
        _ => counts[2] += 1,
    };
    for f in &report.findings {
        let cmd = command(f.severity);
        count(cmd);
        let mut props = format!(
            "file={},line={}",
            escape_property(&crate::text::escape_controls(&github_path(&f.path))),
            f.line
        );
        props.push_str(&format!(",endLine={}", f.end_line));
        if f.line == f.end_line {
            props.push_str(&format!(",col={},endColumn={}", f.column, f.end_column));
        }
        props.push_str(&format!(
            ",title={}",
            escape_property(&format!("idemlint: {}", f.rule))
        ));
        let message =
            crate::text::escape_controls_multiline(&format!("{}\nhelp: {}", f.message, f.help));
        lines.push(format!("::{cmd} {props}::{}", escape_data(&message)));
    }
    if !quiet {
        for e in &report.errors {
            count("warning");
            let mut props = format!(
                "file={}",
                escape_property(&crate::text::escape_controls(&github_path(&e.path)))
            );
            if let Some(l) = e.line {
                props.push_str(&format!(",line={l}"));
            }
            if let Some(c) = e.column {
                props.push_str(&format!(",col={c}"));
            }
            props.push_str(&format!(
                ",title={}",
                escape_property("idemlint: file not fully analysed")
            ));
            lines.push(format!(
                "::warning {props}::{}",
                escape_data(&crate::text::escape_controls(&e.message))
            ));
        }
    }
    let mut out = String::new();
    if counts.iter().any(|&n| n > ANNOTATIONS_PER_KIND) {
        let notice = format!(
            "idemlint printed {} error, {} warning and {} notice annotations; GitHub shows only the first {ANNOTATIONS_PER_KIND} of each kind per step (50 per job), so see this step's log for all of them. To see every finding in the Security tab, run `idemlint check --format sarif --output idemlint.sarif` and upload the file with github/codeql-action/upload-sarif.",
            counts[0], counts[1], counts[2]
        );
        out.push_str(&format!(
            "::notice title=idemlint::{}\n",
            escape_data(&notice)
        ));
    }
    for l in lines {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_matches_the_runner() {
        assert_eq!(escape_data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    }
}
