//! `interceptor-mints-key`: an interceptor or middleware generates an idempotency key
//! itself — as a fallback when the caller set none, or in a middleware that is not (yet)
//! per attempt. Documentation: `rules/docs/interceptor-mints-key.md`.

use super::{Ctx, Flows, interceptor_case};
use crate::catalogue::BoundaryKind;
use crate::finding::Finding;

pub const ID: &str = "interceptor-mints-key";

pub fn check(ctx: &Ctx, flows: &Flows, out: &mut Vec<Finding>) {
    for kf in &flows.key_flows {
        let Some(b) = kf.boundary else { continue };
        if ctx.boundary_kind(Some(b)) != Some(BoundaryKind::Interceptor) {
            continue;
        }
        let case = interceptor_case(ctx, b);
        if !case.fallback && case.per_attempt {
            continue; // key-in-interceptor reports these
        }
        let label = &ctx.boundary(b).label;
        let what = if case.fallback {
            "when the request carries no key"
        } else {
            "for every request"
        };
        let message = format!(
            "{label} generates the idempotency key with {} {what}: the caller's missing key is hidden, and {}",
            ctx.origin_desc(&kf.origin),
            case.why
        );
        let help = format!(
            "require the key from the caller instead of minting one: fail when it is missing, and have the caller compute it once per operation (`{}`, or `{}` persisted with the intent)",
            ctx.derive_example(),
            ctx.mint_example()
        );
        out.push(ctx.finding(ID, kf.origin.span, Some(b), &kf.sink_label, message, help));
    }
}
