//! One bug, one finding. Several rules can report the same source expression: a clock
//! reading inside a retry closure is both `time-in-key` (a clock in a key) and
//! `key-in-retry-scope` (evaluated again per attempt). [`one_per_bug`] keeps one finding
//! per file and source span — the one with the highest severity, then the most specific
//! rule (every boundary rule is more specific than `time-in-key`, which fires anywhere) —
//! and folds the others into its [`Finding::also`] list, appending their reasons to its
//! message and their help to its help.
//!
//! Runs after the configuration and suppressions (so a suppression or an `"off"` level
//! for one rule leaves the other rule's finding standing alone), before fixes are attached.

use crate::finding::{AlsoFinding, Finding};

/// Rules that fire on a key wherever it is built; any other rule on the same span says
/// more (where the key is re-evaluated, and what to do about that).
const LEAST_SPECIFIC: &[&str] = &["time-in-key"];

/// Merges findings of one file that share a source span (see the module documentation).
/// Findings with distinct spans, and the suppression rules, are left alone; the result is
/// sorted by path, line, column and rule.
pub fn one_per_bug(findings: Vec<Finding>) -> Vec<Finding> {
    let mut groups: Vec<Vec<Finding>> = Vec::new();
    let mut at: std::collections::HashMap<(String, usize, usize), usize> =
        std::collections::HashMap::new();
    for f in findings {
        let mergeable = crate::rules::rule(f.rule).is_some()
            && !matches!(f.rule, "unused-suppression" | "suppression-without-reason");
        if !mergeable {
            groups.push(vec![f]);
            continue;
        }
        let key = (f.path.clone(), f.span.start, f.span.end);
        match at.get(&key) {
            Some(&i) => groups[i].push(f),
            None => {
                at.insert(key, groups.len());
                groups.push(vec![f]);
            }
        }
    }
    let mut out: Vec<Finding> = groups.into_iter().map(merge_group).collect();
    out.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    out
}

/// What starts the help of a finding folded into another, appended to the kept one's
/// help: `; for `RULE`: HELP`. No rule's own help contains it, so
/// [`crate::fix::align_help`] finds where the kept finding's own advice ends.
pub const FOLDED_HELP: &str = "; for `";

/// The finding that represents `group` (non-empty), with the others folded in.
fn merge_group(mut group: Vec<Finding>) -> Finding {
    if group.len() == 1 {
        return group.pop().expect("non-empty");
    }
    // Highest severity, then not least-specific, then rule id (deterministic).
    group.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| {
                LEAST_SPECIFIC
                    .contains(&a.rule)
                    .cmp(&LEAST_SPECIFIC.contains(&b.rule))
            })
            .then_with(|| a.rule.cmp(b.rule))
    });
    let mut rest = group.split_off(1);
    let mut kept = group.pop().expect("non-empty");
    rest.dedup_by(|a, b| a.rule == b.rule);
    for other in rest {
        kept.message.push_str(&format!(
            "; it is also a `{}` finding: {}",
            other.rule, other.message
        ));
        kept.help
            .push_str(&format!("{FOLDED_HELP}{}`: {}", other.rule, other.help));
        kept.also.push(AlsoFinding {
            rule: other.rule,
            severity: other.severity,
            message: other.message,
            fingerprint: other.fingerprint,
        });
        kept.also.extend(other.also);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Severity;
    use crate::model::Span;

    fn finding(rule: &'static str, severity: Severity, span: (usize, usize)) -> Finding {
        Finding {
            rule,
            severity,
            path: "A.kt".into(),
            line: 1,
            column: span.0 + 1,
            end_line: 1,
            end_column: span.1 + 1,
            message: format!("{rule} message"),
            help: format!("{rule} help"),
            boundary: None,
            source: "System.currentTimeMillis()".into(),
            span: Span::new(span.0, span.1),
            sink: String::new(),
            fingerprint: format!("fp-{rule}"),
            fix: None,
            no_fix: None,
            also: Vec::new(),
            ambiguous: false,
        }
    }

    #[test]
    fn same_span_merges_into_the_most_specific_rule() {
        let out = one_per_bug(vec![
            finding("time-in-key", Severity::Warning, (4, 30)),
            finding("key-in-retry-scope", Severity::Error, (4, 30)),
        ]);
        assert_eq!(out.len(), 1);
        let f = &out[0];
        assert_eq!(f.rule, "key-in-retry-scope");
        assert_eq!(f.severity, Severity::Error);
        assert_eq!(
            f.message,
            "key-in-retry-scope message; it is also a `time-in-key` finding: time-in-key message"
        );
        assert!(f.help.ends_with("; for `time-in-key`: time-in-key help"));
        assert_eq!(f.also.len(), 1);
        assert_eq!(f.also[0].rule, "time-in-key");
        assert_eq!(f.also[0].fingerprint, "fp-time-in-key");
    }

    #[test]
    fn equal_severity_prefers_the_boundary_rule_and_distinct_spans_stay_apart() {
        let out = one_per_bug(vec![
            finding("time-in-key", Severity::Error, (4, 30)),
            finding("key-in-retry-scope", Severity::Error, (4, 30)),
            finding("time-in-key", Severity::Warning, (40, 60)),
        ]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].rule, "key-in-retry-scope");
        assert_eq!(out[1].rule, "time-in-key");
        assert!(out[1].also.is_empty());
        // A higher severity wins over specificity (the configuration raised it).
        let out = one_per_bug(vec![
            finding("time-in-key", Severity::Error, (4, 30)),
            finding("key-in-retry-scope", Severity::Note, (4, 30)),
        ]);
        assert_eq!(out[0].rule, "time-in-key");
        assert_eq!(out[0].also[0].rule, "key-in-retry-scope");
    }
}
