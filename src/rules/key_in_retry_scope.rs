//! `key-in-retry-scope`: an ephemeral value reaches an idempotency key inside a retry
//! closure, lambda, loop body, `@Retryable` method or a reactive pipeline re-subscribed by
//! `retry`. Documentation: `rules/docs/key-in-retry-scope.md`.

use super::{Ctx, Flows};
use crate::catalogue::BoundaryKind;
use crate::finding::Finding;

pub const ID: &str = "key-in-retry-scope";

pub fn check(ctx: &Ctx, flows: &Flows, out: &mut Vec<Finding>) {
    for kf in &flows.key_flows {
        let Some(b) = kf.boundary else { continue };
        if ctx.boundary_kind(Some(b)) != Some(BoundaryKind::Retry) {
            continue;
        }
        let label = &ctx.boundary(b).label;
        let message = format!(
            "{} is evaluated again on every attempt of {label}, so each retry sends a new idempotency key ({})",
            ctx.origin_desc(&kf.origin),
            kf.sink_label
        );
        let before = ctx.before_boundary(b);
        let help = match ctx.local_holding(kf.origin.span, b) {
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
        };
        out.push(ctx.finding(ID, kf.origin.span, Some(b), &kf.sink_label, message, help));
    }
    for mc in &flows.mint_calls {
        if ctx.boundary_kind(Some(mc.boundary)) != Some(BoundaryKind::Retry) {
            continue;
        }
        let call = &ctx.model.calls[mc.call];
        let label = &ctx.boundary(mc.boundary).label;
        let message = format!(
            "{} each time it runs, and it runs on every attempt of {label}, so each retry sends a different key",
            mc.mints_phrase(call)
        );
        let help = format!(
            "create the key once, {} (`{}`, or `{}` when the intent is formed), and pass it into `{}` as a parameter so every attempt reuses it",
            ctx.before_boundary(mc.boundary),
            ctx.derive_example(),
            ctx.mint_example(),
            call.callee
        );
        let sink = format!("the key `{}()` mints", super::helper_name(call));
        out.push(mc.adjust(ctx.finding(ID, call.span, Some(mc.boundary), &sink, message, help)));
    }
}
