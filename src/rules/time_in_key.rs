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
        let message = format!(
            "the idempotency key ({}) contains a clock reading, {}: it differs on every attempt, every process and every node, so a retry is not recognised as the same operation",
            kf.sink_label,
            ctx.origin_desc(&kf.origin)
        );
        let help = format!(
            "build the key from what identifies the operation, not the moment: `{}`, or `{}` once when the intent is formed",
            ctx.derive_example(),
            ctx.mint_example()
        );
        out.push(ctx.finding(
            ID,
            kf.origin.span,
            kf.boundary,
            &kf.sink_label,
            message,
            help,
        ));
    }
    spel_key_expressions(ctx, out);
}

/// Clock readings in Spring Expression Language (SpEL): `T(java.time.LocalDateTime).now()`,
/// `T(System).currentTimeMillis()`. SpEL's `T(type)` names a class whose static methods the
/// expression calls (Spring Framework reference, "Types" in "Spring Expression Language").
const SPEL_CLOCKS: &[&str] = &[
    "T(java.time.",
    "T(LocalDateTime).now(",
    "T(Instant).now(",
    "T(ZonedDateTime).now(",
    "T(OffsetDateTime).now(",
    "T(System).currentTimeMillis(",
    "T(java.lang.System).currentTimeMillis(",
    "T(System).nanoTime(",
    "T(java.lang.System).nanoTime(",
];

/// Whether the file has an idempotency annotation with a SpEL clock reading in an
/// argument: the prefilter's demand counts it as both a key sink and an origin.
pub fn has_spel_clock_key(model: &crate::model::FileModel) -> bool {
    model.annotations.iter().any(|a| {
        a.name.to_ascii_lowercase().contains("idempot")
            && a.args
                .iter()
                .any(|x| SPEL_CLOCKS.iter().any(|p| x.contains(p)))
    })
}

/// An idempotency annotation whose key is a SpEL expression evaluated on each call
/// (`@Idempotent(keyExpression = "'p2p:' + #senderId + ':' + T(java.time.LocalDateTime).now()")`):
/// a clock reading in it makes the key differ per call. Annotations whose name does not say
/// idempotency (`@Cacheable(key = ..)`: a cache key, not a deduplication key) are left alone,
/// and so is a clock reduced to a window of a minute or more ([`crate::flow::clock_window`]).
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
        let mut from = 0;
        while let Some((at, pat)) = SPEL_CLOCKS
            .iter()
            .filter_map(|p| src[from..].find(p).map(|i| (from + i, *p)))
            .min_by_key(|(i, _)| *i)
        {
            from = at + pat.len();
            // The reading ends at its call's `()`: `T(java.time.X).now()`.
            let rest = &src[at..];
            let end = if pat == "T(java.time." {
                let Some(close) = rest.find(')') else { break };
                let after = &rest[close + 1..];
                if !after.starts_with(".now()") {
                    continue;
                }
                close + 1 + ".now()".len()
            } else {
                let Some(close) = rest[pat.len()..].find(')') else {
                    break;
                };
                pat.len() + close + 1
            };
            let span = Span::new(a.span.start + at, a.span.start + at + end);
            let display = &rest[..end];
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
