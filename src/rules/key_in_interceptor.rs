//! `key-in-interceptor`: an ephemeral value reaches an idempotency key inside an
//! interceptor or middleware that runs again per attempt, inline or through a project
//! helper the interceptor calls (`request.withIdempotencyKey()` that mints one).
//! Documentation: `rules/docs/key-in-interceptor.md`. The case (network interceptor,
//! application interceptor under call-level retry, Feign, WebClient filter,
//! reqwest-middleware after the retry middleware) comes from [`super::interceptor_case`].

use super::{Ctx, Flows, interceptor_case};
use crate::catalogue::BoundaryKind;
use crate::finding::Finding;

pub const ID: &str = "key-in-interceptor";

pub fn check(ctx: &Ctx, flows: &Flows, out: &mut Vec<Finding>) {
    let help = || {
        format!(
            "compute the key once per operation in the caller, before the request is sent — `{}` when the operation has a natural identity, or `{}` when the intent is formed, persisted with it — and set the header there; the interceptor should only pass it through (or fail when it is missing)",
            ctx.derive_example(),
            ctx.mint_example()
        )
    };
    for kf in &flows.key_flows {
        let Some(b) = kf.boundary else { continue };
        if ctx.boundary_kind(Some(b)) != Some(BoundaryKind::Interceptor) {
            continue;
        }
        let case = interceptor_case(ctx, b, kf.origin.span, Some(kf.sink_span));
        if case.dead {
            continue;
        }
        if !case.per_attempt {
            continue; // interceptor-mints-key reports these
        }
        let label = &ctx.boundary(b).label;
        let message = format!(
            "{} is evaluated on every run of {label}{}, and {}; each run puts a new value into {}",
            ctx.origin_desc(&kf.origin),
            fallback_phrase(case.fallback),
            case.why,
            kf.sink_label
        );
        out.push(ctx.origin_finding(ID, &kf.origin, Some(b), &kf.sink_label, message, help()));
    }
    for mc in &flows.mint_calls {
        if ctx.boundary_kind(Some(mc.boundary)) != Some(BoundaryKind::Interceptor) {
            continue;
        }
        let case = interceptor_case(ctx, mc.boundary, ctx.model.calls[mc.call].span, None);
        if case.dead {
            continue;
        }
        if !case.per_attempt {
            continue;
        }
        let call = &ctx.model.calls[mc.call];
        let label = &ctx.boundary(mc.boundary).label;
        let message = format!(
            "{} and is called on every run of {label}{}, and {}",
            mc.mints_phrase(call),
            fallback_phrase(case.fallback),
            case.why
        );
        let sink = format!("the key `{}()` mints", call.callee);
        out.push(mc.adjust(ctx.finding(ID, call.span, Some(mc.boundary), &sink, message, help())));
    }
}

/// For an interceptor that mints only when the request carries no key: a caller that sets
/// one is safe, every other caller's retries send new keys.
fn fallback_phrase(fallback: bool) -> &'static str {
    if fallback {
        " whenever the request carries no key of its own"
    } else {
        ""
    }
}
