//! `key-in-retry-scope`: an ephemeral value reaches an idempotency key inside a retry
//! closure, lambda, loop body, `@Retryable` method or a reactive pipeline re-subscribed by
//! `retry`. Documentation: `rules/docs/key-in-retry-scope.md`.

use super::{Ctx, Flows};
use crate::catalogue::BoundaryKind;
use crate::finding::Finding;
use crate::model::{CallId, Span};

pub const ID: &str = "key-in-retry-scope";

pub fn check(ctx: &Ctx, flows: &Flows, out: &mut Vec<Finding>) {
    for kf in &flows.key_flows {
        let Some(b) = kf.boundary else { continue };
        if ctx.boundary_kind(Some(b)) != Some(BoundaryKind::Retry) {
            continue;
        }
        let label = super::the_loop(&ctx.boundary(b).label);
        let message = format!(
            "{} is evaluated again on every attempt of {label}, so each retry sends a new idempotency key ({})",
            ctx.origin_desc(&kf.origin),
            kf.sink_label
        );
        let before = ctx.before_boundary(b);
        let help = match redelivery_help(ctx, b).or_else(|| whole_method_help(ctx, b)) {
            Some(h) => h,
            None => match ctx.local_holding(kf.origin.span, b) {
                Some(binding) => format!(
                    "compute the key once, {before}: derive it from the operation's identity (`{}`), or mint it once when the intent is formed (`{}`) and keep it; at least move the declaration of `{}` (line {}) out of the retry so every attempt reuses one key",
                    ctx.derive_example(),
                    ctx.mint_example(),
                    binding.name,
                    ctx.line_of(binding.span.start),
                ),
                None => format!(
                    "compute the key once, {before}: derive it from the operation's identity (`{}`), or mint it once when the intent is formed (`{}`); at least hoist it — add `{}` there and use `{}` inside",
                    ctx.derive_example(),
                    ctx.mint_example(),
                    ctx.hoist_line(&ctx.hoist_expr(kf)),
                    ctx.key_local(),
                ),
            },
        };
        out.push(ctx.origin_finding(ID, &kf.origin, Some(b), &kf.sink_label, message, help));
    }
    for mc in &flows.mint_calls {
        if ctx.boundary_kind(Some(mc.boundary)) != Some(BoundaryKind::Retry) {
            continue;
        }
        let call = &ctx.model.calls[mc.call];
        let label = super::the_loop(&ctx.boundary(mc.boundary).label);
        let message = format!(
            "{} each time it runs, and it runs on every attempt of {label}, so each retry sends a different key",
            mc.mints_phrase(call)
        );
        let help = redelivery_help(ctx, mc.boundary)
            .or_else(|| whole_method_help(ctx, mc.boundary))
            .unwrap_or_else(|| format!(
            "create the key once, {} (`{}`, or `{}` when the intent is formed), and pass it into `{}` as a parameter so every attempt reuses it",
            ctx.before_boundary(mc.boundary),
            ctx.derive_example(),
            ctx.mint_example(),
            call.callee
        ));
        let sink = format!("the key `{}()` mints", super::helper_name(call));
        out.push(mc.adjust(ctx.finding(ID, call.span, Some(mc.boundary), &sink, message, help)));
    }
    // Last, so that a finding a retry scope also makes keeps that scope (and its fix) when
    // `check_file` keeps one finding per rule and span.
    reattempts(ctx, flows, out);
}

/// Failure handlers that repeat a call of the code they protect ([`crate::classify::Reattempt`]):
/// a key the repeated call gets from a value the handler evaluates, or that the repeated
/// callee mints in its own body, is a new key for the second attempt of the operation.
fn reattempts(ctx: &Ctx, flows: &Flows, out: &mut Vec<Finding>) {
    let m = ctx.model;
    let text_of = |span: Span| -> String {
        ctx.text
            .get(span.start..span.end)
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    };
    // The repeated call sends what one of its originals sent: each argument written the
    // same, but those for which `carries(argument span)` says it carries the key.
    let same_args = |c: CallId, originals: &[CallId], carries: &dyn Fn(Span) -> bool| {
        let args = &m.calls[c].args;
        originals.iter().any(|o| {
            args.iter().zip(&m.calls[*o].args).all(|(a, b)| {
                let (sa, sb) = (m.values[a.value].span, m.values[b.value].span);
                carries(sa) || text_of(sa) == text_of(sb)
            })
        })
    };
    for r in &ctx.facts.reattempts {
        // The local of the handler whose value holds `span`, read by the repeated call.
        let holder = |span: Span| {
            m.bindings.iter().find(|b| {
                r.handler.contains(b.span)
                    && b.value.is_some_and(|v| m.values[v].span.contains(span))
            })
        };
        // A repeated call that sends the key at `sink` (inside its arguments, or through a
        // local of the handler one of them reads), with its other arguments as before.
        let repeated = |sink: Span| {
            r.calls.iter().find(|(c, originals)| {
                let call = &m.calls[*c];
                let local = holder(sink).map(|b| b.name.clone());
                let carries = |a: Span| {
                    a.contains(sink)
                        || local
                            .as_deref()
                            .is_some_and(|n| crate::text::has_word(&text_of(a), n))
                };
                (call.span.contains(sink)
                    || local.as_deref().is_some_and(|n| {
                        call.args
                            .iter()
                            .any(|a| crate::text::has_word(&text_of(m.values[a.value].span), n))
                    }))
                    && same_args(*c, originals, &carries)
            })
        };
        let how = |callee: &str| {
            format!(
                "{}, which calls `{callee}(…)` again after the same call failed",
                r.label
            )
        };
        let help = format!(
            "compute the key once, before the first call (`{}`, or `{}` when the intent is formed), and pass the same value to both calls",
            ctx.derive_example(),
            ctx.mint_example()
        );
        for kf in &flows.key_flows {
            if kf.origin.counter
                || !r.handler.contains(kf.origin.span)
                || !r.handler.contains(kf.sink_span)
            {
                continue;
            }
            let Some((c, _)) = repeated(kf.sink_span) else {
                continue;
            };
            let callee = &m.calls[*c];
            let message = format!(
                "{} is evaluated again in {}, so the second attempt sends a new idempotency key ({})",
                ctx.origin_desc(&kf.origin),
                how(&super::helper_name(callee)),
                kf.sink_label
            );
            let f = ctx.origin_finding(ID, &kf.origin, None, &kf.sink_label, message, help.clone());
            out.push(ctx.with_construct(f, "retry", &r.label, r.anchor, "reattempt"));
        }
        for (c, originals) in &r.calls {
            let call = &m.calls[*c];
            // A call of an enclosing function is recursion, which the self-retrying
            // function's own boundary reports.
            if !same_args(*c, originals, &|_| false)
                || m.ancestors(call.scope)
                    .filter_map(|s| m.function_info(s))
                    .any(|f| f.name == call.callee)
            {
                continue;
            }
            let Some(res) = ctx.index.mints(call, ctx.path) else {
                continue;
            };
            let mc = super::MintCall {
                call: *c,
                info: res.infos[0].clone(),
                boundary: call.scope,
                more_locations: res.infos[1..].iter().map(|i| i.location.clone()).collect(),
                ambiguous: res.ambiguous().then_some((res.minting, res.candidates)),
            };
            let message = format!(
                "{} each time it runs, and {} repeats the call after it failed, so the second attempt sends a different key",
                mc.mints_phrase(call),
                r.label
            );
            let sink = format!("the key `{}()` mints", super::helper_name(call));
            let help = format!(
                "create the key once, before the first call (`{}`, or `{}` when the intent is formed), and pass it into `{}` as a parameter so both calls send it",
                ctx.derive_example(),
                ctx.mint_example(),
                call.callee
            );
            let f = mc.adjust(ctx.finding(ID, call.span, None, &sink, message, help));
            out.push(ctx.with_construct(f, "retry", &r.label, r.anchor, "reattempt"));
        }
    }
}

/// A boundary's label as the object of "every attempt of ..": a loop's label (`` `loop`
/// retry loop ``) takes the article ("every attempt of the `loop` retry loop"); the others
/// name their construct (`` `@Retryable` method `pay()` ``) and read as they are.
/// The help for a boundary that is a whole function run again per attempt (`@Retryable`,
/// a listener method, a self-retrying method): nothing inside it runs once, so the key
/// must come from the caller as a parameter; a declaration "before" the method would be a
/// field shared by every operation.
fn whole_method_help(ctx: &Ctx, b: crate::model::ScopeId) -> Option<String> {
    let crate::model::ScopeKind::Function(f) = &ctx.model.scopes[b].kind else {
        return None;
    };
    let key = ctx.key_local();
    Some(format!(
        "every attempt runs the whole of `{name}()`, so the key must come from its caller: add a parameter `{key}` to `{name}()`, have the caller compute it once per operation (`{}`, or `{}` when the intent is formed) and pass the same value on every call, and use `{key}` here (a key declared beside the method, as a field, would be shared by every operation)",
        ctx.derive_example(),
        ctx.mint_example(),
        name = f.name,
    ))
}

/// The help for a boundary that runs once per message or job and again when it is
/// redelivered (a listener, a job handler): the key must come from what is handled, since
/// a key computed before the boundary would be shared by every message or job.
fn redelivery_help(ctx: &Ctx, b: crate::model::ScopeId) -> Option<String> {
    (ctx.boundary(b).flavor == "redelivery").then(|| {
        format!(
            "derive the key from the message or job being handled, so a redelivery sends the same key: its business id, or the broker's or engine's id for it (`{}` with that id); a key computed before {} would be shared by every message or job it handles",
            ctx.derive_example(),
            short_label(&ctx.boundary(b).label)
        )
    })
}

/// A boundary's label without what it adds after the boundary itself: the relative
/// clause (`, which ..`) and a closing parenthesis saying why it runs again (`@KafkaHandler`
/// method `on()` (the container delivers the message again ..)`), which the finding's
/// message says already.
fn short_label(label: &str) -> &str {
    let l = label.split(", which ").next().unwrap_or_default();
    match l.strip_suffix(')').and_then(|x| x.rfind(" (")) {
        Some(i) if !l[..i].is_empty() => &l[..i],
        _ => l,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_loop_label_takes_the_article() {
        assert_eq!(
            crate::rules::the_loop("`loop` retry loop"),
            "the `loop` retry loop"
        );
        assert_eq!(crate::rules::the_loop("retry loop"), "the retry loop");
        assert_eq!(
            super::short_label(
                "`@KafkaHandler` method `on()` (the container delivers the message again after the listener fails)"
            ),
            "`@KafkaHandler` method `on()`"
        );
        assert_eq!(super::short_label("`Consumer { … }`"), "`Consumer { … }`");
        assert_eq!(
            crate::rules::the_loop("`@Retryable` method `pay()`"),
            "`@Retryable` method `pay()`"
        );
    }
}
