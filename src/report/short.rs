//! `--format short`: one line per finding, `path:line:col: severity[rule-id] message`, for
//! editors' quickfix lists (Vim's `errorformat` `%f:%l:%c: %m`, Emacs compilation mode) and
//! grep. Lines are 1-based; columns are 1-based and count Unicode scalar values. Nothing
//! else goes to standard output; file problems and the summary go to standard error (see
//! [`crate::report::render`]).

use crate::check::Report;

/// Renders one line per finding. Line breaks inside a message become spaces, so one
/// finding is always one line.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let message = crate::text::escape_controls(&f.message.replace(['\r', '\n'], " "));
        out.push_str(&format!(
            "{}:{}:{}: {}[{}] {}\n",
            crate::text::escape_controls(&f.path),
            f.line,
            f.column,
            f.severity.name(),
            f.rule,
            message
        ));
    }
    out
}
