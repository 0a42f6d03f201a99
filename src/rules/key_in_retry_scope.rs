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
        let help = match ctx.local_holding(kf.origin.span, b) {
            Some(binding) => format!(
                "move the declaration of `{}` (line {}) out of the retry, {}, so every attempt reuses one key; better, derive it from the operation's identity (`{}`)",
                binding.name,
                ctx.line_of(binding.span.start),
                ctx.before_boundary(b),
                ctx.derive_example()
            ),
            None => format!(
                "hoist the key out of the retry: add `{}` {} and use `{}` inside; better, derive it from the operation's identity (`{}`)",
                ctx.hoist_line(&ctx.hoist_expr(kf)),
                ctx.before_boundary(b),
                ctx.key_local(),
                ctx.derive_example()
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
            "`{}()` mints a new idempotency key (`{}` at {}) each time it runs, and it runs on every attempt of {label}, so each retry sends a different key",
            call.callee, mc.info.source, mc.info.location
        );
        let help = format!(
            "create the key once, {}, and pass it into `{}` as a parameter so every attempt reuses it",
            ctx.before_boundary(mc.boundary),
            call.callee
        );
        out.push(ctx.finding(ID, call.span, Some(mc.boundary), "", message, help));
    }
}
