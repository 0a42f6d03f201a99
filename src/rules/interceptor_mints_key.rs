//! `interceptor-mints-key`: an interceptor or middleware generates an idempotency key
//! itself, inline or through a project helper it calls — as a fallback when the caller set
//! none, or in a middleware that is not (yet) per attempt — where it runs once per
//! request. Where it runs per attempt, `key-in-interceptor` reports it instead (the
//! fallback named in its message). Not a finding when the key is
//! put in place before the interceptor's own retry of `proceed` (every attempt it makes
//! shares the key). Documentation: `rules/docs/interceptor-mints-key.md`.

use super::{Ctx, Flows, interceptor_case, mint_before_own_retry};
use crate::catalogue::BoundaryKind;
use crate::finding::Finding;

pub const ID: &str = "interceptor-mints-key";

pub fn check(ctx: &Ctx, flows: &Flows, out: &mut Vec<Finding>) {
    let help = || {
        format!(
            "require the key from the caller instead of minting one: fail when it is missing, and have the caller compute it once per operation (`{}`, or `{}` persisted with the intent)",
            ctx.derive_example(),
            ctx.mint_example()
        )
    };
    // What the interceptor does to the caller's key: hides that it is missing, or
    // replaces (or joins) one the caller set, so no caller can make its attempts share one.
    let what = |fallback: bool| {
        if fallback {
            "when the request carries no key: the caller's missing key is hidden"
        } else {
            "for every request, over any key the caller sets: no caller can make its attempts share one"
        }
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
        if case.per_attempt {
            continue; // key-in-interceptor reports these
        }
        if mint_before_own_retry(ctx, b, kf.sink_span.start) {
            continue;
        }
        let label = &ctx.boundary(b).label;
        let message = format!(
            "{label} generates the idempotency key with {} {}, and {}",
            ctx.origin_desc(&kf.origin),
            what(case.fallback),
            case.why
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
        if case.per_attempt {
            continue;
        }
        let call = &ctx.model.calls[mc.call];
        if mint_before_own_retry(ctx, mc.boundary, call.span.start) {
            continue;
        }
        let label = &ctx.boundary(mc.boundary).label;
        let message = format!(
            "{label} generates the idempotency key through `{}()` ({}) {}, and {}",
            call.callee,
            mc.source_at(),
            what(case.fallback),
            case.why
        );
        let sink = format!("the key `{}()` mints", call.callee);
        out.push(mc.adjust(ctx.finding(ID, call.span, Some(mc.boundary), &sink, message, help())));
    }
}
