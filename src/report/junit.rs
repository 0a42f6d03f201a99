//! `--format junit`: a JUnit XML report, for CI systems that show test reports only
//! (GitLab `artifacts:reports:junit`, Jenkins, Azure Pipelines, CircleCI).
//!
//! `<testsuites name="idemlint">` holds one `<testsuite>` per rule (`name` the rule id)
//! with one `<testcase>` per file that has findings of that rule (`classname` the file's
//! path, `name` the rule id), failed by one `<failure>` per finding (`message` the
//! finding's first line, `type` its severity; the text gives `path:line:column`, the
//! message and the help). A rule without findings has one passing test case named
//! `no findings`. Files that could not be analysed are test cases of the suite
//! `idemlint` with an `<error>`. Counts (`tests`, `failures`, `errors`) are per suite and
//! in total.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::xml::escape;
use crate::check::Report;
use crate::finding::Finding;
use crate::rules::RULES;

/// Renders the report as a JUnit XML document with a trailing newline.
pub fn render(report: &Report) -> String {
    let mut suites = String::new();
    let mut tests = 0;
    let mut failures = 0;
    for rule in RULES {
        let mut by_file: BTreeMap<&str, Vec<&Finding>> = BTreeMap::new();
        for f in report.findings.iter().filter(|f| f.rule == rule.id) {
            by_file.entry(&f.path).or_default().push(f);
        }
        let n_fail: usize = by_file.values().map(Vec::len).sum();
        let cases = by_file.len().max(1);
        tests += cases;
        failures += n_fail;
        let _ = writeln!(
            suites,
            "  <testsuite name=\"{}\" tests=\"{cases}\" failures=\"{n_fail}\" errors=\"0\">",
            escape(rule.id)
        );
        if by_file.is_empty() {
            let _ = writeln!(
                suites,
                "    <testcase classname=\"idemlint\" name=\"{}: no findings\"/>",
                escape(rule.id)
            );
        }
        for (path, findings) in by_file {
            let _ = writeln!(
                suites,
                "    <testcase classname=\"{}\" name=\"{}\">",
                escape(path),
                escape(rule.id)
            );
            for f in findings {
                let first = f.message.lines().next().unwrap_or("");
                let _ = writeln!(
                    suites,
                    "      <failure message=\"{}\" type=\"{}\">{}</failure>",
                    escape(first),
                    f.severity.name(),
                    escape(&format!(
                        "{}:{}:{}: {}\nhelp: {}",
                        f.path, f.line, f.column, f.message, f.help
                    ))
                );
            }
            suites.push_str("    </testcase>\n");
        }
        suites.push_str("  </testsuite>\n");
    }
    let errors = report.errors.len();
    if errors > 0 {
        tests += errors;
        let _ = writeln!(
            suites,
            "  <testsuite name=\"idemlint\" tests=\"{errors}\" failures=\"0\" errors=\"{errors}\">"
        );
        for e in &report.errors {
            let at = match (e.line, e.column) {
                (Some(l), Some(c)) => format!(":{l}:{c}"),
                (Some(l), None) => format!(":{l}"),
                _ => String::new(),
            };
            let _ = writeln!(
                suites,
                "    <testcase classname=\"{}\" name=\"analysed\">\n      <error message=\"{}\" type=\"file-not-analysed\">{}</error>\n    </testcase>",
                escape(&e.path),
                escape(&e.message),
                escape(&format!("{}{at}: {}", e.path, e.message))
            );
        }
        suites.push_str("  </testsuite>\n");
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"idemlint\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\">\n{suites}</testsuites>\n"
    )
}
