//! Applying fixes to a text, and showing them as a unified diff.

use crate::finding::{Applicability, Edit, Finding};

/// Which fixes to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Only `safe` fixes (`--fix`).
    Safe,
    /// `safe` and `unsafe` fixes (`--fix --unsafe-fixes`).
    All,
}

impl Mode {
    pub fn allows(self, a: Applicability) -> bool {
        match self {
            Mode::Safe => a == Applicability::Safe,
            Mode::All => true,
        }
    }
}

/// Applies every allowed fix of `findings` whose edits do not overlap an edit already
/// accepted and which does not declare a name an accepted fix declares in an overlapping
/// function (each picked its name free in `text` alone: two hoists in one block would both declare
/// `idempotencyKey`; the later one waits for the next round, which re-analyses and picks
/// `idempotencyKey2`). Fixes are taken in finding order; zero-width insertions at the same
/// offset are kept in order. Returns the new text and the rules of the fixes applied.
pub fn apply(text: &str, findings: &[Finding], mode: Mode) -> (String, Vec<&'static str>) {
    let mut accepted: Vec<&Edit> = Vec::new();
    let mut declared: Vec<&(String, std::ops::Range<usize>)> = Vec::new();
    let mut rules = Vec::new();
    for f in findings {
        let Some(fix) = &f.fix else { continue };
        if !mode.allows(fix.applicability) {
            continue;
        }
        let valid = fix.edits.iter().all(|e| {
            e.start <= e.end
                && e.end <= text.len()
                && text.is_char_boundary(e.start)
                && text.is_char_boundary(e.end)
        });
        // Edits overlap when they share a byte, or an insertion falls strictly inside a
        // replaced range.
        let overlaps = fix.edits.iter().any(|e| {
            accepted.iter().any(|a| {
                (e.start < a.end && a.start < e.end)
                    || (e.start == e.end && a.start < e.start && e.start < a.end)
                    || (a.start == a.end && e.start < a.start && a.start < e.end)
                    // Two insertions at one point (two hoists before one statement) would
                    // pick the same new name: one per round, then re-analyse.
                    || (e.start == e.end && a.start == a.end && e.start == a.start)
            })
        });
        let clashes = fix.declares.as_ref().is_some_and(|(n, r)| {
            declared
                .iter()
                .any(|(m, q)| m == n && r.start < q.end && q.start < r.end)
        });
        if !valid || overlaps || clashes {
            continue;
        }
        declared.extend(fix.declares.as_ref());
        accepted.extend(fix.edits.iter());
        rules.push(f.rule);
    }
    let mut order: Vec<(usize, &Edit)> = accepted.into_iter().enumerate().collect();
    order.sort_by_key(|(i, e)| (e.start, e.end, *i));
    let mut out = String::with_capacity(text.len() + 64);
    let mut pos = 0;
    for (_, e) in order {
        if e.start < pos {
            continue;
        }
        out.push_str(&text[pos..e.start]);
        out.push_str(&e.content);
        pos = e.end;
    }
    out.push_str(&text[pos..]);
    (out, rules)
}

/// A unified diff of `old` → `new` for `path`, with 3 lines of context (empty when equal).
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}
