//! `--format human`: each finding as a miette graphical diagnostic with the source
//! expression and the boundary labelled, then file errors and a summary line.

use std::fmt;

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceCode,
};

use crate::check::Report;
use crate::finding::{Finding, Severity};

struct FindingDiagnostic<'a> {
    finding: &'a Finding,
    source: NamedSource<CharColumns>,
}

impl fmt::Debug for FindingDiagnostic<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&esc(&self.finding.message))
    }
}

impl fmt::Display for FindingDiagnostic<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&esc(&self.finding.message))
    }
}

/// Text from the input (messages quote source; paths are file names) with control
/// characters escaped, line breaks kept: nothing from a checked tree reaches the terminal
/// raw.
fn esc(s: &str) -> String {
    crate::text::escape_controls_multiline(s)
}

impl std::error::Error for FindingDiagnostic<'_> {}

impl Diagnostic for FindingDiagnostic<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(format!("idemlint::{}", self.finding.rule)))
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.finding.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Note => miette::Severity::Advice,
        })
    }
    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(esc(&self.finding.help)))
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let f = self.finding;
        let label = match f.rule {
            crate::suppress::UNUSED_SUPPRESSION => "suppresses nothing",
            crate::suppress::SUPPRESSION_WITHOUT_REASON => "no reason given",
            _ => "evaluated again on every run",
        };
        let mut labels = vec![LabeledSpan::new_primary_with_span(
            Some(label.to_string()),
            (f.span.start, f.span.end - f.span.start),
        )];
        if let Some(b) = &f.boundary
            && b.path.is_none()
            && b.span != f.span
        {
            labels.push(LabeledSpan::new_with_span(
                Some(crate::text::escape_controls(&b.snippet_label())),
                (b.span.start, (b.span.end - b.span.start).max(1)),
            ));
        }
        Some(Box::new(labels.into_iter()))
    }
}

/// A file's text as miette reads it, with the column of a span counted in characters
/// (miette's own `str` source counts bytes), so the `path:line:col` header agrees with
/// every other format (docs/json.md: columns count characters, 1-based).
struct CharColumns(std::sync::Arc<str>);

impl SourceCode for CharColumns {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let c = self.0.read_span(span, before, after)?;
        // miette gives a column only without context lines (else 0): bytes from the
        // line's start, which end where the span starts.
        let column = crate::text::char_column(&self.0, span.offset(), c.column());
        Ok(Box::new(miette::MietteSpanContents::new(
            c.data(),
            *c.span(),
            c.line(),
            column,
            c.line_count(),
        )))
    }
}

/// Whether to use colour: only on a terminal, and never when `NO_COLOR` is set (to any
/// non-empty value, per no-color.org).
pub fn use_colour() -> bool {
    use std::io::IsTerminal;
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    !no_color && std::io::stdout().is_terminal()
}

/// Renders every finding, every file error and a summary line.
pub fn render(report: &Report, colour: bool) -> String {
    let mut out = render_findings(report, colour);
    out.push_str(&render_errors(report));
    out.push_str(&summary(report));
    out
}

/// Renders only the findings (`--quiet`).
pub fn render_findings(report: &Report, colour: bool) -> String {
    let theme = if colour {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    // Lines wrap only at spaces: a `path:line:col`, a rule id or a code span longer than
    // the rest of a line moves to the next one whole instead of being split at a hyphen
    // or in the middle (a location cut in two is neither readable nor clickable).
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_break_words(false)
        .with_word_separator(textwrap::WordSeparator::AsciiSpace)
        .with_word_splitter(textwrap::WordSplitter::NoHyphenation);
    let mut out = String::new();
    for f in &report.findings {
        // The file's text is shared, not copied, per finding.
        // Control characters in the snippet are replaced by printable ones of the same
        // length, so spans still fit and no escape sequence reaches the terminal.
        let text: std::sync::Arc<str> = match report.texts.get(&f.path) {
            Some(t) => match crate::text::sanitize_snippet(t) {
                std::borrow::Cow::Borrowed(_) => t.clone(),
                std::borrow::Cow::Owned(o) => std::sync::Arc::from(o),
            },
            None => std::sync::Arc::from(""),
        };
        // miette panics on a line longer than 65,535 characters (a column it cannot
        // format): such a snippet is not drawn but one line printed, without the panic's
        // message on standard error; the unwind guard stays for what else it may do.
        let overlong = has_overlong_line(f, &text);
        let diag = FindingDiagnostic {
            finding: f,
            source: NamedSource::new(esc(&f.path), CharColumns(text)),
        };
        let mut one = String::new();
        let rendered = !overlong
            && std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                handler.render_report(&mut one, &diag).is_ok()
            }))
            .unwrap_or(false);
        if rendered {
            out.push_str(&one);
        } else {
            out.push_str(&format!(
                "{}:{}:{}: {}[{}] {}\n  help: {}\n",
                crate::text::escape_controls(&f.path),
                f.line,
                f.column,
                f.severity.name(),
                f.rule,
                crate::text::escape_controls(&f.message),
                esc(&f.help)
            ));
        }
        out.push('\n');
    }
    out
}

/// Whether a line the snippet of `f` would show (its lines and its boundary's, with three
/// lines of context) is longer than miette can draw (65,535 characters; a margin is kept).
fn has_overlong_line(f: &Finding, text: &str) -> bool {
    const MAX: usize = 60_000;
    let b = f.boundary.as_ref().map(|b| b.line);
    let first = f.line.min(b.unwrap_or(f.line)).saturating_sub(4);
    let last = f.end_line.max(b.unwrap_or(f.end_line)) + 3;
    text.lines()
        .skip(first)
        .take(last.saturating_sub(first))
        .any(|l| l.len() > MAX && l.chars().count() > MAX)
}

/// One `warning: path:line:col: message` line per file that could not be analysed fully.
pub fn render_errors(report: &Report) -> String {
    let mut out = String::new();
    for e in &report.errors {
        let e = crate::finding::FileError {
            path: crate::text::escape_controls(&e.path),
            message: crate::text::escape_controls(&e.message),
            ..e.clone()
        };
        match (e.line, e.column) {
            (Some(l), Some(c)) => {
                out.push_str(&format!("warning: {}:{l}:{c}: {}\n", e.path, e.message))
            }
            _ => out.push_str(&format!("warning: {}: {}\n", e.path, e.message)),
        }
    }
    out
}

/// The summary line: findings by severity, files checked, file problems (said to be
/// "reported above": [`render_errors`] printed them first).
pub fn summary(report: &Report) -> String {
    summary_with_problems(report, "reported above")
}

/// [`summary`], saying where the file problems were reported (`where_`: "reported above",
/// "listed in report.json", ...): with a machine-readable format or `-o FILE` they are in
/// the report, not above the summary.
pub fn summary_with_problems(report: &Report, where_: &str) -> String {
    let mut out = String::new();
    let errors = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let notes = report
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Note)
        .count();
    let warnings = report.findings.len() - errors - notes;
    out.push_str(&format!(
        "idemlint: {} finding{} ({errors} error{}, {warnings} warning{}{}) in {} file{} checked{}{}\n",
        report.findings.len(),
        if report.findings.len() == 1 { "" } else { "s" },
        if errors == 1 { "" } else { "s" },
        if warnings == 1 { "" } else { "s" },
        match notes {
            0 => String::new(),
            1 => ", 1 note".into(),
            n => format!(", {n} notes"),
        },
        report.files,
        if report.files == 1 { "" } else { "s" },
        // Checked is not parsed: the prefilter's word scan proves most files of most
        // projects cannot have a finding. Said when the run saw every file it checked
        // (not a shard of a larger run, whose parse count covers every shard).
        if report.stats.prefilter
            && report.stats.read == report.files
            && report.parsed < report.files
        {
            format!(
                " ({} parsed; a word scan rules out the rest)",
                report.parsed
            )
        } else {
            String::new()
        },
        if report.errors.is_empty() {
            String::new()
        } else {
            let n = report.errors.len();
            let files = report.files_with_problems();
            format!(
                ", {n} problem{} in {files} file{} {where_}",
                if n == 1 { "" } else { "s" },
                if files == 1 { "" } else { "s" }
            )
        }
    ));
    let ig = &report.ignored;
    if ig.files + ig.dirs > 0 {
        let files = format!(
            "{} source file{}",
            ig.files,
            if ig.files == 1 { "" } else { "s" }
        );
        // The first few by name: `.github`, `.mvn`, `build/generated`.
        let named = if ig.dirs_named.is_empty() {
            String::new()
        } else {
            let more = if ig.dirs > ig.dirs_named.len() {
                ", …"
            } else {
                ""
            };
            format!(" ({}{more})", ig.dirs_named.join(", "))
        };
        let dirs = format!(
            "{} director{}{named}",
            ig.dirs,
            if ig.dirs == 1 { "y" } else { "ies" }
        );
        let what = match (ig.files, ig.dirs) {
            (_, 0) => files,
            (0, _) => dirs,
            _ => format!("{files} and {dirs}"),
        };
        out.push_str(&format!(
            "idemlint: not checked: {what} matched by .gitignore/.ignore or hidden (`--show-files --no-ignore` lists them; name files or pass --no-ignore to check them)\n",
        ));
    }
    if !report.findings.is_empty() {
        out.push_str(&fix_summary(&report.findings));
    }
    out
}

/// The gist of a no-fix reason for the one-line summary: the words before its first `: `
/// when they are short (`interceptor`, `scheduler`, "`create()` mints the key inside its own
/// body"), else its first clause when it fits in 80 characters, else the longest
/// part of it that ends at a clause boundary (before a `(`, a `,` or a ` — `) outside
/// brackets and backticks, so a parenthesis or a code span is never cut in half; only a
/// clause with no such boundary is cut at a word, marked `…`. The whole reason is in the
/// JSON `no_fix` and, for retry scopes, in the help.
fn reason_head(reason: &str) -> String {
    const MAX: usize = 80;
    if let Some((head, _)) = reason.split_once(": ")
        && head.chars().count() <= 64
    {
        return head.to_string();
    }
    let clause = reason.split("; ").next().unwrap_or(reason);
    if clause.chars().count() <= MAX {
        return clause.to_string();
    }
    // Byte offsets where the clause may end: outside brackets and code spans.
    let mut depth = 0usize;
    let mut code = false;
    let mut best = None;
    let mut words = None;
    for (n, (i, c)) in clause.char_indices().enumerate() {
        if n > MAX {
            break;
        }
        let outside = depth == 0 && !code;
        match c {
            '`' => code = !code,
            '(' | '[' | '{' if !code => {
                if outside {
                    best = Some(i);
                }
                depth += 1;
            }
            ')' | ']' | '}' if !code => depth = depth.saturating_sub(1),
            ',' if outside => best = Some(i),
            '—' if outside => best = Some(i),
            ' ' if outside => words = Some(i),
            _ => {}
        }
    }
    match best
        .map(|b| clause[..b].trim_end())
        .filter(|h| !h.is_empty())
    {
        Some(head) => head.to_string(),
        None => {
            let cut = words.unwrap_or_else(|| {
                clause
                    .char_indices()
                    .nth(MAX)
                    .map_or(clause.len(), |(i, _)| i)
            });
            format!("{}…", clause[..cut].trim_end())
        }
    }
}

/// "idemlint: fixes: 2 safe (`--fix`), 1 more with `--unsafe-fixes`, 3 without a fix
/// (2 the job needs a lock, 1 …)" ("none safe" when there is no safe fix): how many findings each kind of fix covers, and why the
/// others have none (the reasons `crate::fix::attach` recorded), most frequent first.
pub fn fix_summary(findings: &[crate::finding::Finding]) -> String {
    use crate::finding::Applicability;
    let safe = findings
        .iter()
        .filter(|f| {
            f.fix
                .as_ref()
                .is_some_and(|x| x.applicability == Applicability::Safe)
        })
        .count();
    let unsafe_only = findings
        .iter()
        .filter(|f| {
            f.fix
                .as_ref()
                .is_some_and(|x| x.applicability != Applicability::Safe)
        })
        .count();
    let mut reasons: Vec<(String, usize)> = Vec::new();
    for f in findings.iter().filter(|f| f.fix.is_none()) {
        let r = f
            .no_fix
            .as_deref()
            .map(reason_head)
            .unwrap_or_else(|| "no mechanical edit".into());
        match reasons.iter_mut().find(|(x, _)| *x == r) {
            Some((_, n)) => *n += 1,
            None => reasons.push((r, 1)),
        }
    }
    reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let none: usize = reasons.iter().map(|(_, n)| n).sum();
    // None left (after `--fix`, say): "0 safe (`--fix`)" read as advice to run it again.
    let mut line = if safe > 0 {
        format!("idemlint: fixes: {safe} safe (`--fix`)")
    } else {
        "idemlint: fixes: none safe".to_string()
    };
    if unsafe_only > 0 {
        line.push_str(&format!(", {unsafe_only} more with `--unsafe-fixes`"));
    }
    if none > 0 {
        let mut why: Vec<String> = reasons
            .iter()
            .take(3)
            .map(|(r, n)| format!("{n}: {}", crate::text::escape_controls(r)))
            .collect();
        // The reasons left out, counted, so the parts add up to the total.
        let rest: usize = reasons.iter().skip(3).map(|(_, n)| n).sum();
        if rest > 0 {
            why.push(format!("{rest}: other reasons"));
        }
        // The rule to explain, named when the findings without a fix share one.
        let mut rules: Vec<&str> = findings
            .iter()
            .filter(|f| f.fix.is_none())
            .map(|f| f.rule)
            .collect();
        rules.sort_unstable();
        rules.dedup();
        let explain = match rules.as_slice() {
            [one] => format!("`idemlint explain {one}`"),
            _ => "`idemlint explain RULE`".to_string(),
        };
        line.push_str(&format!(
            ", {none} without a fix ({}; {explain} or JSON `no_fix` says why)",
            why.join("; ")
        ));
    }
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reasons past the first three are counted, so the parts add up to the total.
    #[test]
    fn fix_summary_counts_the_reasons_it_leaves_out() {
        let finding = |why: &str| crate::finding::Finding {
            rule: "time-in-key",
            severity: crate::finding::Severity::Error,
            path: "a.java".into(),
            line: 1,
            column: 1,
            end_line: 1,
            end_column: 2,
            message: String::new(),
            help: String::new(),
            boundary: None,
            source: String::new(),
            span: crate::model::Span::new(0, 1),
            sink: String::new(),
            fingerprint: String::new(),
            fix: None,
            no_fix: Some(why.to_string()),
            also: Vec::new(),
            ambiguous: false,
        };
        let findings: Vec<_> = ["a", "a", "a", "b", "b", "c", "d", "e"]
            .iter()
            .map(|r| finding(r))
            .collect();
        let line = fix_summary(&findings);
        assert!(
            line.contains("8 without a fix (3: a; 2: b; 1: c; 2: other reasons;"),
            "{line}"
        );
        let line = fix_summary(&findings[..6]);
        assert!(
            line.contains("6 without a fix (3: a; 2: b; 1: c; `idemlint"),
            "{line}"
        );
        // No safe fix (after `--fix`, say): no count that reads as advice to run it.
        assert!(
            line.starts_with("idemlint: fixes: none safe, 6 without"),
            "{line}"
        );
        // One rule among them: the command to run names it.
        assert!(
            line.contains("`idemlint explain time-in-key` or JSON"),
            "{line}"
        );
        let mut mixed = findings[..2].to_vec();
        mixed[1].rule = "key-in-retry-scope";
        let line = fix_summary(&mixed);
        assert!(line.contains("`idemlint explain RULE` or JSON"), "{line}");
    }

    /// The "not checked" line names only what was left out: no "0 source files".
    #[test]
    fn not_checked_names_only_nonzero_counts() {
        let line = |files, dirs| {
            let report = Report {
                ignored: crate::discover::Ignored {
                    files,
                    dirs,
                    dirs_named: Vec::new(),
                },
                ..Report::default()
            };
            summary(&report)
                .lines()
                .find(|l| l.contains("not checked"))
                .map(str::to_string)
        };
        assert_eq!(line(0, 0), None);
        let dirs = line(0, 1).unwrap();
        assert!(
            dirs.starts_with("idemlint: not checked: 1 directory matched"),
            "{dirs}"
        );
        let files = line(2, 0).unwrap();
        assert!(
            files.starts_with("idemlint: not checked: 2 source files matched"),
            "{files}"
        );
        let both = line(1, 2).unwrap();
        assert!(
            both.starts_with("idemlint: not checked: 1 source file and 2 directories matched"),
            "{both}"
        );
    }
}
