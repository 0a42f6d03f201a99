//! Suppressions, rule levels, and the rules about suppressions themselves.
//!
//! [`apply`] is the one step between the rules and every output: `check::run` and
//! `check::check_text` (LSP, stdin) both call it on each file's findings, so the
//! configuration and the suppressions act the same everywhere.
//!
//! Forms (all three languages; Rust has only the comment, since rustc rejects lint
//! attributes of unregistered tools):
//! - `// idemlint: allow(key-in-retry-scope, time-in-key) -- reason` (or `/* … */`). A
//!   comment after code applies to findings that start on its own line; a comment on a
//!   line of its own applies to the next line that is not itself a `//` comment (so
//!   several suppression comments can be stacked above one line).
//! - Kotlin `@Suppress("idemlint:key-in-retry-scope")`, Java
//!   `@SuppressWarnings("idemlint:key-in-retry-scope")` (arrays and several strings
//!   accepted; `"idemlint:ID -- reason"` carries a reason): applies to findings inside the
//!   annotated declaration (class, function, method, property, field, local; Kotlin
//!   `@file:Suppress` to the whole file).
//!
//! A suppression that suppresses nothing, names an unknown rule, or cannot be read is
//! reported as `unused-suppression`; with `require-suppression-reason = true`, one without
//! `-- reason` is reported as `suppression-without-reason` (it still suppresses). These two
//! rules can themselves be suppressed (`allow(unused-suppression)`), and are configured
//! like any rule. A suppression naming a rule that is off is not reported.

use crate::config::Config;
use crate::finding::{Finding, Severity, fingerprint};
use crate::model::{FileModel, Span};
use crate::rules::{Ctx, RULES};
use crate::text::{LineIndex, did_you_mean};

/// Rule id: a suppression that suppresses nothing (or names an unknown rule, or cannot be
/// read).
pub const UNUSED_SUPPRESSION: &str = "unused-suppression";
/// Rule id: a suppression without `-- reason` while `require-suppression-reason = true`.
pub const SUPPRESSION_WITHOUT_REASON: &str = "suppression-without-reason";

const MARKER: &str = "idemlint:";

/// What a suppression covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Findings starting on this 1-based line (comment forms).
    Line(usize),
    /// Findings whose source span lies inside this byte span (annotation forms).
    Within(Span),
}

/// One suppression as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suppression {
    pub reach: Reach,
    /// Rule ids with the byte span of each id in the text.
    pub ids: Vec<(String, Span)>,
    /// The text after `--`, trimmed; `None` when absent or empty.
    pub reason: Option<String>,
    /// Byte span of the directive: from the comment opener to the end of the comment, or
    /// the annotation's string.
    pub span: Span,
    /// Written as an annotation (`@Suppress` / `@SuppressWarnings`).
    pub annotation: bool,
}

/// A comment that starts like a suppression directive but cannot be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    pub span: Span,
    pub why: String,
}

/// Finds every suppression of one file: comments (not inside string literals, which the
/// model records) and `@Suppress` / `@SuppressWarnings` annotations.
pub fn find(
    text: &str,
    lines: &LineIndex,
    model: &FileModel,
) -> (Vec<Suppression>, Vec<Malformed>) {
    let mut found = Vec::new();
    let mut bad = Vec::new();
    comments(text, lines, model, &mut found, &mut bad);
    annotations(text, model, &mut found, &mut bad);
    (found, bad)
}

/// The text of 1-based `line`, without its line break.
fn line_text<'t>(text: &'t str, lines: &LineIndex, line: usize) -> Option<&'t str> {
    let start = lines.line_start(line)?;
    let end = lines.line_start(line + 1).unwrap_or(text.len());
    text.get(start..end)
        .map(|l| l.trim_end_matches(['\n', '\r']))
}

fn comments(
    text: &str,
    lines: &LineIndex,
    model: &FileModel,
    found: &mut Vec<Suppression>,
    bad: &mut Vec<Malformed>,
) {
    // String literals sorted by start, with the largest end so far: an offset is inside
    // a string when the largest end among the strings starting at or before it is past it
    // (one binary search per directive instead of a scan of every string).
    let mut strings: Vec<(usize, usize)> = model
        .strings
        .iter()
        .map(|s| (s.span.start, s.span.end))
        .collect();
    strings.sort_unstable();
    let mut max_end = Vec::with_capacity(strings.len());
    let mut m = 0;
    for &(_, e) in &strings {
        m = m.max(e);
        max_end.push(m);
    }
    let in_string = |at: usize| {
        let n = strings.partition_point(|&(s, _)| s <= at);
        n > 0 && max_end[n - 1] > at
    };
    // The first line at or after each line that is not a `//` comment line, filled on
    // first use from the end (stacked directives resolve in linear time, not quadratic).
    let mut next_code: Option<Vec<usize>> = None;
    for (at, _) in text.match_indices(MARKER) {
        let line_start = text[..at].rfind('\n').map_or(0, |p| p + 1);
        let before = text[line_start..at].trim_end();
        let block = if before.ends_with("//") {
            false
        } else if before.ends_with("/*") {
            true
        } else {
            continue;
        };
        let opener = line_start + before.len() - 2;
        // Doc comments (`///`, `/**` ends differently) are documentation, not directives;
        // so is a directive quoted in one (`//! - `// idemlint: allow(..)``) or in inline
        // code anywhere (an odd number of backticks before it on its line).
        let head = &text[line_start..opener];
        let lead = head.trim_start();
        if text[..opener].ends_with('/')
            || lead.starts_with("///")
            || lead.starts_with("//!")
            || head.matches('`').count() % 2 == 1
        {
            continue;
        }
        if in_string(opener) {
            continue;
        }
        let line_end = text[at..].find('\n').map_or(text.len(), |p| at + p);
        let mut body_end = line_end;
        let mut after_comment = "";
        if block && let Some(p) = text[at..line_end].find("*/") {
            body_end = at + p;
            after_comment = text[body_end + 2..line_end].trim();
        }
        let body_start = at + MARKER.len();
        // A second directive on the same line ends this one:
        // `// idemlint: allow(a) -- why // idemlint: allow(unused-suppression)`.
        if let Some(q) = text[body_start..body_end].find(MARKER) {
            let head = &text[body_start..body_start + q];
            if let Some(o) = head.rfind("//").or_else(|| head.rfind("/*")) {
                body_end = body_start + o;
            }
        }
        let span = Span::new(opener, text[..body_end].trim_end().len().max(body_start));
        let directive = match parse_directive(text, body_start, body_end) {
            Ok(Some(d)) => d,
            Ok(None) => continue,
            Err(why) => {
                bad.push(Malformed { span, why });
                continue;
            }
        };
        let line = lines.position(text, opener).line;
        let trailing = !text[line_start..opener].trim().is_empty() || !after_comment.is_empty();
        let target = if trailing {
            line
        } else {
            let next = next_code.get_or_insert_with(|| {
                let n = lines.line_count();
                // next[l] for 1-based l in 1..=n+1; n + 1 stands for "none".
                let mut next = vec![n + 1; n + 2];
                for l in (1..=n).rev() {
                    let comment =
                        line_text(text, lines, l).is_some_and(|t| t.trim_start().starts_with("//"));
                    next[l] = if comment { next[l + 1] } else { l };
                }
                next
            });
            match next.get(line + 1) {
                Some(&l) if l <= lines.line_count() => l,
                _ => line + 1,
            }
        };
        found.push(Suppression {
            reach: Reach::Line(target),
            ids: directive.0,
            reason: directive.1,
            span,
            annotation: false,
        });
    }
}

type Directive = (Vec<(String, Span)>, Option<String>);

fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}

/// Parses `allow(ID, ...) -- reason` in `text[start..end]`. `Ok(None)`: prose that only
/// mentions idemlint (no `word(`), not a directive.
fn parse_directive(text: &str, start: usize, end: usize) -> Result<Option<Directive>, String> {
    let body = &text[start..end];
    let lead = body.len() - body.trim_start().len();
    let rest = &body[lead..];
    let word_len = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    let word = &rest[..word_len];
    let after_word = &rest[word_len..];
    let paren = after_word.trim_start();
    if word != "allow" {
        if paren.starts_with('(') && !word.is_empty() {
            return Err(format!(
                "unknown directive `{word}`{}",
                did_you_mean(word, &["allow"])
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default()
            ));
        }
        return Ok(None);
    }
    let Some(list) = paren.strip_prefix('(') else {
        return Err("expected `(` after `allow`".into());
    };
    let Some(close) = list.find(')') else {
        return Err("missing `)` after the rule ids".into());
    };
    let list_start = end - list.len();
    let mut ids = Vec::new();
    let mut offset = list_start;
    for part in list[..close].split(',') {
        let id = part.trim();
        let id_start = offset + (part.len() - part.trim_start().len());
        offset += part.len() + 1;
        if id.is_empty() || !id.chars().all(is_id_char) {
            return Err(if id.is_empty() {
                "empty rule id in `allow(…)`".into()
            } else {
                format!("`{id}` is not a rule id")
            });
        }
        ids.push((id.to_string(), Span::new(id_start, id_start + id.len())));
    }
    let tail = list[close + 1..].trim();
    let reason = if tail.is_empty() {
        None
    } else if let Some(r) = tail.strip_prefix("--") {
        Some(r.trim().to_string()).filter(|r| !r.is_empty())
    } else {
        return Err(format!(
            "unexpected `{tail}` after `)`; write the reason after ` -- `"
        ));
    };
    Ok(Some((ids, reason)))
}

fn annotations(
    text: &str,
    model: &FileModel,
    found: &mut Vec<Suppression>,
    bad: &mut Vec<Malformed>,
) {
    for a in &model.annotations {
        if a.name != "Suppress" && a.name != "SuppressWarnings" {
            continue;
        }
        let Some(snippet) = text.get(a.span.start..a.span.end) else {
            continue;
        };
        for (j, _) in snippet.match_indices(MARKER) {
            let id_at = j + MARKER.len();
            let rest = &snippet[id_at..];
            let lead = rest.len() - rest.trim_start().len();
            let id_len = rest[lead..]
                .find(|c: char| !is_id_char(c))
                .unwrap_or(rest.len() - lead);
            let id_start = a.span.start + id_at + lead;
            let string_end = rest.find('"').map_or(snippet.len(), |p| id_at + p);
            let span = Span::new(a.span.start + j, a.span.start + string_end);
            if id_len == 0 {
                bad.push(Malformed {
                    span,
                    why: "no rule id after `idemlint:`".into(),
                });
                continue;
            }
            let tail = snippet[id_at + lead + id_len..string_end].trim();
            let reason = tail
                .strip_prefix("--")
                .map(|r| r.trim().to_string())
                .filter(|r| !r.is_empty());
            found.push(Suppression {
                reach: Reach::Within(a.target),
                ids: vec![(
                    rest[lead..lead + id_len].to_string(),
                    Span::new(id_start, id_start + id_len),
                )],
                reason,
                span,
                annotation: true,
            });
        }
    }
}

fn is_meta(rule: &str) -> bool {
    rule == UNUSED_SUPPRESSION || rule == SUPPRESSION_WITHOUT_REASON
}

fn covers(s: &Suppression, f: &Finding) -> bool {
    match s.reach {
        Reach::Line(l) => f.line == l,
        Reach::Within(t) => t.contains(f.span),
    }
}

/// The suppressions of a file by the line they cover, and those covering a declaration
/// (annotations), so a finding is matched against the few that can cover it.
struct ByReach {
    by_line: std::collections::HashMap<usize, Vec<usize>>,
    /// Annotation suppressions sorted by the start of their span, with the largest end
    /// among the first `i + 1` in `max_end[i]`: the ones that can contain a span are
    /// found walking back from the last starting at or before it, stopping where no
    /// earlier one reaches its end.
    within: Vec<(Span, usize)>,
    max_end: Vec<usize>,
}

impl ByReach {
    fn new(sups: &[Suppression]) -> ByReach {
        let mut r = ByReach {
            by_line: Default::default(),
            within: Vec::new(),
            max_end: Vec::new(),
        };
        for (i, s) in sups.iter().enumerate() {
            match s.reach {
                Reach::Line(l) => r.by_line.entry(l).or_default().push(i),
                Reach::Within(t) => r.within.push((t, i)),
            }
        }
        r.within.sort_by_key(|(t, i)| (t.start, *i));
        let mut m = 0;
        for (t, _) in &r.within {
            m = m.max(t.end);
            r.max_end.push(m);
        }
        r
    }

    /// Indices of the suppressions that can cover a finding at `span` on `line`.
    fn candidates(&self, line: usize, span: Span) -> Vec<usize> {
        let mut out: Vec<usize> = self.by_line.get(&line).cloned().unwrap_or_default();
        let mut k = self.within.partition_point(|(t, _)| t.start <= span.start);
        while k > 0 && self.max_end[k - 1] >= span.end {
            k -= 1;
            out.push(self.within[k].1);
        }
        out
    }
}

/// True when a suppression names `f`'s rule and covers it; marks every such id used.
fn suppressed(f: &Finding, sups: &[Suppression], index: &ByReach, used: &mut [Vec<bool>]) -> bool {
    let mut hit = false;
    for i in index.candidates(f.line, f.span) {
        let (s, u) = (&sups[i], &mut used[i]);
        if !covers(s, f) {
            continue;
        }
        for ((id, _), flag) in s.ids.iter().zip(u.iter_mut()) {
            if id == f.rule {
                *flag = true;
                hit = true;
            }
        }
    }
    hit
}

/// A finding about a suppression itself, at `span`.
fn meta_finding(
    ctx: &Ctx,
    rule: &'static str,
    span: Span,
    message: String,
    help: String,
) -> Finding {
    let start = ctx.lines.position(ctx.text, span.start);
    let end = ctx.lines.position(ctx.text, span.end);
    let source = ctx
        .text
        .get(span.start..span.end)
        .unwrap_or("")
        .trim()
        .to_string();
    let normalized: String = source.chars().filter(|c| !c.is_whitespace()).collect();
    let path = ctx.path.replace('\\', "/");
    let enclosing = ctx.enclosing_names(span.start);
    Finding {
        rule,
        severity: Severity::Warning,
        path: ctx.path.to_string(),
        line: start.line,
        column: start.column,
        end_line: end.line,
        end_column: end.column,
        message,
        help,
        boundary: None,
        source,
        span,
        sink: String::new(),
        fingerprint: fingerprint(&[rule, &path, &enclosing, "", &normalized]),
        fix: None,
        no_fix: None,
        also: Vec::new(),
        ambiguous: false,
    }
}

/// Applies `config` and the file's suppressions to the findings of one file (see the
/// module docs): drops rules that are off, sets each finding's severity, removes
/// suppressed findings, adds `unused-suppression` / `suppression-without-reason`
/// findings, and sorts by path, line, column, rule.
pub fn apply(ctx: &Ctx, findings: Vec<Finding>, config: &Config) -> Vec<Finding> {
    let mut findings: Vec<Finding> = findings
        .into_iter()
        .filter_map(|mut f| {
            f.severity = config.severity(f.rule)?;
            if f.ambiguous {
                f.severity = f.severity.lower();
            }
            Some(f)
        })
        .collect();
    let (sups, malformed) = find(ctx.text, ctx.lines, ctx.model);
    if sups.is_empty() && malformed.is_empty() {
        return findings;
    }
    let mut used: Vec<Vec<bool>> = sups.iter().map(|s| vec![false; s.ids.len()]).collect();
    let index = ByReach::new(&sups);
    findings.retain(|f| !suppressed(f, &sups, &index, &mut used));

    let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
    let mut meta = Vec::new();
    for (s, u) in sups.iter().zip(&used) {
        for ((id, span), was_used) in s.ids.iter().zip(u) {
            if *was_used || is_meta(id) {
                continue;
            }
            if crate::rules::rule(id).is_none() {
                meta.push(meta_finding(
                    ctx,
                    UNUSED_SUPPRESSION,
                    *span,
                    format!("unknown rule `{id}` in a suppression"),
                    match did_you_mean(id, &ids) {
                        Some(s) => format!("did you mean `{s}`? `idemlint rules` lists every rule"),
                        None => format!("known rules: {}", ids.join(", ")),
                    },
                ));
                continue;
            }
            if config.severity(id).is_none() {
                continue;
            }
            let (message, help) = match s.reach {
                Reach::Line(l) => (
                    format!("this suppression of `{id}` matches no finding on line {l}"),
                    format!(
                        "remove `{id}` from the list (or the whole comment); a comment after code covers findings that start on its own line, a comment on a line of its own covers the next code line"
                    ),
                ),
                Reach::Within(_) => (
                    format!(
                        "this suppression of `{id}` matches no finding in the annotated declaration"
                    ),
                    format!("remove `\"idemlint:{id}\"` from the annotation"),
                ),
            };
            meta.push(meta_finding(ctx, UNUSED_SUPPRESSION, *span, message, help));
        }
        if config.require_suppression_reason && s.reason.is_none() {
            let first = s
                .ids
                .first()
                .map(|(id, _)| id.as_str())
                .unwrap_or("RULE-ID");
            let origin = config
                .origin
                .as_ref()
                .map(|p| format!(" in {}", crate::config::display_path(p)))
                .unwrap_or_default();
            meta.push(meta_finding(
                ctx,
                SUPPRESSION_WITHOUT_REASON,
                s.span,
                format!(
                    "suppression without a reason (`require-suppression-reason = true`{origin})"
                ),
                if s.annotation {
                    format!(
                        "write the reason in the string: `\"idemlint:{first} -- why this is safe\"`"
                    )
                } else {
                    "add ` -- why this is safe` after the closing parenthesis".to_string()
                },
            ));
        }
    }
    for m in malformed {
        meta.push(meta_finding(
            ctx,
            UNUSED_SUPPRESSION,
            m.span,
            format!("suppression comment cannot be read: {}", m.why),
            "write `// idemlint: allow(RULE-ID, …) -- reason`".to_string(),
        ));
    }
    let mut meta: Vec<Finding> = meta
        .into_iter()
        .filter_map(|mut f| {
            f.severity = config.severity(f.rule)?;
            if f.ambiguous {
                f.severity = f.severity.lower();
            }
            Some(f)
        })
        .collect();
    meta.retain(|f| !suppressed(f, &sups, &index, &mut used));
    findings.extend(meta);
    findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Language;

    fn sups(lang: Language, text: &str) -> (Vec<Suppression>, Vec<Malformed>) {
        let model = crate::lang::lower(lang, text);
        find(text, &LineIndex::new(text), &model)
    }

    #[test]
    fn comment_forms() {
        let text = "fn f() {\n    let a = 1; // idemlint: allow(time-in-key, key-in-retry-scope) -- derived\n    // idemlint: allow(key-in-interceptor)\n    // another comment\n    let b = 2;\n    let s = \"// idemlint: allow(time-in-key)\";\n    /// idemlint: allow(time-in-key)\n    let c = 3; /* idemlint: allow(time-in-key) -- x */\n}\n";
        let (s, bad) = sups(Language::Rust, text);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(s.len(), 3, "{s:#?}");
        // Two directives on one line are read separately.
        let two = "fn f() {\n    g(); // idemlint: allow(time-in-key) -- why // idemlint: allow(unused-suppression)\n}\n";
        let (t, bad) = sups(Language::Rust, two);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].reason.as_deref(), Some("why"));
        assert_eq!(t[1].ids[0].0, "unused-suppression");
        assert_eq!(s[0].reach, Reach::Line(2));
        assert_eq!(s[0].ids.len(), 2);
        assert_eq!(
            &text[s[0].ids[1].1.start..s[0].ids[1].1.end],
            "key-in-retry-scope"
        );
        assert_eq!(s[0].reason.as_deref(), Some("derived"));
        assert_eq!(
            s[1].reach,
            Reach::Line(5),
            "skips the comment line below it"
        );
        assert_eq!(s[1].reason, None);
        assert_eq!(s[2].reach, Reach::Line(8));
        assert_eq!(s[2].reason.as_deref(), Some("x"));
    }

    #[test]
    fn directives_quoted_in_documentation_are_not_directives() {
        let text = "//! Suppress with\n//! - `// idemlint: allow(time-in-key) -- reason`\nfn f() {\n    /// Write `// idemlint: allow(..)` above the line.\n    // Example: `// idemlint: allow(a) -- why // idemlint: allow(unused-suppression)`.\n    g(); // idemlint: allow(time-in-key) -- real\n}\n";
        let (s, bad) = sups(Language::Rust, text);
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(s.len(), 1, "{s:#?}");
        assert_eq!(s[0].reach, Reach::Line(6));
        assert_eq!(s[0].reason.as_deref(), Some("real"));
    }

    #[test]
    fn malformed_and_prose() {
        let text = "class A {\n  // idemlint: alow(time-in-key)\n  // idemlint: allow(time-in-key) because\n  // idemlint: checks this file in CI\n  // idemlint: allow time-in-key\n}\n";
        let (s, bad) = sups(Language::Java, text);
        assert!(s.is_empty());
        assert_eq!(bad.len(), 3, "{bad:?}");
        assert!(bad[0].why.contains("did you mean `allow`"));
        assert!(bad[1].why.contains("` -- `"));
    }

    #[test]
    fn annotation_forms_cover_the_declaration() {
        let text = "@SuppressWarnings({\"unchecked\", \"idemlint:time-in-key -- period key\"})\nclass A {\n  @SuppressWarnings(\"idemlint:key-in-retry-scope\")\n  void f() {}\n}\n";
        let (s, bad) = sups(Language::Java, text);
        assert!(bad.is_empty());
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].ids[0].0, "time-in-key");
        assert_eq!(s[0].reason.as_deref(), Some("period key"));
        let Reach::Within(t) = s[0].reach else {
            panic!()
        };
        assert_eq!(t, Span::new(0, text.len() - 1));
        let Reach::Within(t) = s[1].reach else {
            panic!()
        };
        assert!(
            text[t.start..t.end]
                .starts_with("@SuppressWarnings(\"idemlint:key-in-retry-scope\")\n  void f() {}")
        );
        let kt = "@file:Suppress(\"idemlint:time-in-key\")\nfun f() {\n    @Suppress(\"idemlint:key-in-retry-scope\") val k = g()\n    h()\n}\n";
        let (s, _) = sups(Language::Kotlin, kt);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].reach, Reach::Within(Span::new(0, kt.len())));
        let Reach::Within(t) = s[1].reach else {
            panic!()
        };
        assert_eq!(
            &kt[t.start..t.end],
            "@Suppress(\"idemlint:key-in-retry-scope\") val k = g()"
        );
    }
}
