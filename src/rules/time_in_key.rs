//! `time-in-key`: a clock reading reaches an idempotency key, anywhere. A time-based key
//! differs per attempt and per node, so retries are not recognised as the same operation.
//! Documentation: `rules/docs/time-in-key.md`. In test and benchmark code
//! ([`crate::index::is_test_or_bench_source`]) a clock key with no retry boundary in reach
//! is not reported: a test makes a unique key per run on purpose, and runs once. Example
//! programs are reported: users copy them into services (corpus policy, eval/README.md).

use super::{Ctx, Flows};
use crate::finding::Finding;
use crate::model::{Language, SourceKind, Span};

pub const ID: &str = "time-in-key";

pub fn check(ctx: &Ctx, flows: &Flows, out: &mut Vec<Finding>) {
    let test_code = crate::index::is_test_or_bench_source(ctx.path);
    for kf in &flows.key_flows {
        // A time bucket names a period, not a moment: only the retry rules report it.
        if kf.origin.kind != SourceKind::Clock
            || kf.origin.window
            || (test_code && kf.boundary.is_none())
        {
            continue;
        }
        // With a retry boundary in reach the attempts differ; with none, the key is still
        // new on every call (a caller's retry, a job re-run, a redelivery) and shared by
        // two operations in one clock tick (rules/docs/time-in-key.md).
        let why = if kf.boundary.is_some() {
            "it differs on every attempt, every process and every node, so a retry is not recognised as the same operation"
        } else {
            "it is new on every call and differs between nodes, so a retried call is not recognised as the same operation, and two operations read in the same tick share one key"
        };
        let message = format!(
            "the idempotency key ({}) contains a clock reading, {}: {why}",
            kf.sink_label,
            ctx.origin_desc(&kf.origin)
        );
        let help = format!(
            "build the key from what identifies the operation, not the moment: `{}`, or `{}` once when the intent is formed",
            ctx.derive_example(),
            ctx.mint_example()
        );
        out.push(ctx.origin_finding(ID, &kf.origin, kf.boundary, &kf.sink_label, message, help));
    }
    spel_key_expressions(ctx, out);
}

/// Types whose static `now()` reads the clock, as SpEL's `T(type)` names them (simple or
/// `java.time.` qualified), and whether the reading is a calendar period (a day, a month, a
/// year: every attempt that day computes the same value, like a time bucket).
const SPEL_NOW_TYPES: &[(&str, bool)] = &[
    ("LocalDateTime", false),
    ("Instant", false),
    ("ZonedDateTime", false),
    ("OffsetDateTime", false),
    ("LocalTime", false),
    ("OffsetTime", false),
    ("LocalDate", true),
    ("YearMonth", true),
    ("Year", true),
];

/// Whether the file has an idempotency annotation with a SpEL clock reading in an
/// argument: the prefilter's demand counts it as both a key sink and an origin.
pub fn has_spel_clock_key(model: &crate::model::FileModel) -> bool {
    model.annotations.iter().any(|a| {
        a.name.to_ascii_lowercase().contains("idempot")
            && a.args.iter().any(|x| {
                let x = x.replace(' ', "");
                x.contains("T(")
                    && (x.contains(".now(")
                        || x.contains("currentTimeMillis(")
                        || x.contains("nanoTime("))
            })
    })
}

/// The clock methods a SpEL key calls on a `T(..)` type, as [`has_spel_clock_key`] and the
/// rule look for them (keep the three in step); the prefilter needs one of them as a token
/// in a file with such an annotation.
pub const SPEL_CLOCK_METHODS: [&str; 3] = ["now", "currentTimeMillis", "nanoTime"];

/// The string literals of an annotation's source `src` that hold its key: those assigned to
/// an attribute whose name says key (`keyExpression = "..."`, `key = "..."`, and literals
/// concatenated to them), or every literal when no attribute is named (`@Idempotent("...")`).
/// Byte ranges of the literals' contents in `src`.
fn key_literals(src: &str) -> Vec<std::ops::Range<usize>> {
    let b = src.as_bytes();
    let named = src.contains('=');
    let mut out = Vec::new();
    let mut i = 0;
    let mut last_key = false;
    while i < b.len() {
        if b[i] != b'"' {
            i += 1;
            continue;
        }
        let start = i + 1;
        let mut j = start;
        while j < b.len() && b[j] != b'"' {
            j += if b[j] == b'\\' { 2 } else { 1 };
        }
        let before = src[..i].trim_end();
        let is_key = if before.ends_with('+') {
            last_key
        } else if let Some(lhs) = before.strip_suffix('=') {
            let lhs = lhs.trim_end();
            let name = &lhs[lhs
                .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
                .map_or(0, |k| k + 1)..];
            name.to_ascii_lowercase().contains("key")
        } else {
            !named
        };
        if is_key {
            out.push(start..j.min(b.len()));
        }
        last_key = is_key;
        i = j + 1;
    }
    out
}

/// The end (exclusive) of the call whose `(` is at `open` in `s`.
fn close_paren(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (k, c) in s[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + k + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// An idempotency annotation whose key is a SpEL expression evaluated on each call
/// (`@Idempotent(keyExpression = "'p2p:' + #senderId + ':' + T(java.time.LocalDateTime).now()")`):
/// a clock reading in it (`T(java.time.Instant).now()`, `T(System).currentTimeMillis()`; SpEL's
/// `T(type)` names a class whose static methods the expression calls, Spring Framework
/// reference, "Types") makes the key differ per call. Only the key attribute counts (not a
/// `condition`), annotations whose name does not say idempotency (`@Cacheable(key = ..)`: a
/// cache key) are left alone, and so is a period: a date, month or year (`T(LocalDate).now()`),
/// a pattern without seconds (`.format(T(..DateTimeFormatter).ofPattern('yyyyMMddHH'))`), or
/// a truncation to a minute or more ([`crate::flow::clock_window`]).
fn spel_key_expressions(ctx: &Ctx, out: &mut Vec<Finding>) {
    if !matches!(ctx.model.language, Language::Java | Language::Kotlin) {
        return;
    }
    for a in &ctx.model.annotations {
        if !a.name.to_ascii_lowercase().contains("idempot") {
            continue;
        }
        let Some(src) = ctx.text.get(a.span.start..a.span.end) else {
            continue;
        };
        for lit in key_literals(src) {
            let body = &src[lit.clone()];
            let mut from = 0;
            while let Some(k) = body[from..].find("T(") {
                let at = from + k;
                from = at + 2;
                let Some(close) = close_paren(body, at + 1) else {
                    break;
                };
                let ty: String = body[at + 2..close - 1]
                    .chars()
                    .filter(|c| !c.is_whitespace())
                    .collect();
                let simple = ty.rsplit('.').next().unwrap_or("");
                let rest = &body[close..];
                let (method, period) = if matches!(ty.as_str(), "System" | "java.lang.System") {
                    if rest.starts_with(".currentTimeMillis(") {
                        (".currentTimeMillis(", false)
                    } else if rest.starts_with(".nanoTime(") {
                        (".nanoTime(", false)
                    } else {
                        continue;
                    }
                } else if let Some((_, p)) = SPEL_NOW_TYPES.iter().find(|(t, _)| *t == simple) {
                    if !(ty == simple || ty == format!("java.time.{simple}"))
                        || !rest.starts_with(".now(")
                    {
                        continue;
                    }
                    (".now(", *p)
                } else {
                    continue;
                };
                let Some(end) = close_paren(body, close + method.len() - 1) else {
                    break;
                };
                if period {
                    continue;
                }
                // `.format(T(..).ofPattern('yyyyMMddHHmm'))`: a window when the pattern has no
                // seconds.
                let after = &body[end..];
                if let Some(p) = after.strip_prefix(".format(").and_then(|f| {
                    let q = f.find('\'')?;
                    let r = &f[q + 1..];
                    Some(&r[..r.find('\'')?])
                }) && !crate::flow::java_pattern_has_seconds(p)
                {
                    continue;
                }
                let span = Span::new(
                    a.span.start + lit.start + at,
                    a.span.start + lit.start + end,
                );
                let display = &body[at..end];
                if crate::flow::clock_window(ctx.text, span, display) {
                    continue;
                }
                let sink = format!("the SpEL key expression of `@{}`", a.name);
                let message = format!(
                    "the idempotency key ({sink}) contains a clock reading, `{display}`, evaluated on every call: it differs on every attempt, every process and every node, so a retry is not recognised as the same operation"
                );
                let help = "build the key expression from the operation's identity only (its parameters, `#request.id`), never from the clock".to_string();
                out.push(ctx.finding(ID, span, None, &sink, message, help));
            }
        }
    }
}
