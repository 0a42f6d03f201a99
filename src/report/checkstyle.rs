//! `--format checkstyle`: Checkstyle's XML report (`<checkstyle version="4.3">`), which
//! Jenkins warnings-ng, SonarQube, reviewdog and many IDEs read.
//!
//! One `<file name="PATH">` per file with findings or errors, in path order; one
//! `<error>` per finding with `line`, `column` (1-based, characters), `severity`
//! (`error`, `warning`, `info` for notes), `message` (message and help) and `source`
//! (`idemlint.RULE-ID`). A file that could not be analysed gets an `<error>` with the
//! source `idemlint.file-not-analysed` and severity `warning`.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::xml::escape;
use crate::check::Report;
use crate::finding::Severity;

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "info",
    }
}

/// Renders the report as a Checkstyle XML document with a trailing newline.
pub fn render(report: &Report) -> String {
    let mut files: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for f in &report.findings {
        let message = if f.help.is_empty() {
            f.message.clone()
        } else {
            format!("{} (help: {})", f.message, f.help)
        };
        files.entry(&f.path).or_default().push(format!(
            "    <error line=\"{}\" column=\"{}\" severity=\"{}\" message=\"{}\" source=\"idemlint.{}\"/>",
            f.line,
            f.column,
            severity(f.severity),
            escape(&message),
            escape(f.rule)
        ));
    }
    for e in &report.errors {
        let mut attrs = String::new();
        if let Some(l) = e.line {
            let _ = write!(attrs, " line=\"{l}\"");
        }
        if let Some(c) = e.column {
            let _ = write!(attrs, " column=\"{c}\"");
        }
        files.entry(&e.path).or_default().push(format!(
            "    <error{attrs} severity=\"warning\" message=\"{}\" source=\"idemlint.file-not-analysed\"/>",
            escape(&e.message)
        ));
    }
    let mut out =
        String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<checkstyle version=\"4.3\">\n");
    for (path, errors) in files {
        let _ = writeln!(out, "  <file name=\"{}\">", escape(path));
        for e in errors {
            out.push_str(&e);
            out.push('\n');
        }
        out.push_str("  </file>\n");
    }
    out.push_str("</checkstyle>\n");
    out
}
