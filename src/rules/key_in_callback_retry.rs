//! `key-in-callback-retry`: a Retrofit callback retries by calling the service method again,
//! which evaluates its key argument again; `call.clone()` would resend the same request.
//! Documentation: `rules/docs/key-in-callback-retry.md`.

use super::{Ctx, Flows};
use crate::catalogue::BoundaryKind;
use crate::finding::Finding;
use crate::model::ScopeKind;

pub const ID: &str = "key-in-callback-retry";

/// The service method the callback was enqueued for: the callee of the call that
/// `.enqueue(callback)` is made on.
fn original_call(ctx: &Ctx, boundary: usize) -> Option<String> {
    let m = ctx.model;
    let object = m.scopes[boundary].parent?;
    if !matches!(m.scopes[object].kind, ScopeKind::Object(_)) {
        return None;
    }
    let enqueue = m
        .calls
        .iter()
        .find(|c| c.args.iter().any(|a| a.lambda == Some(object)))?;
    let service = enqueue.receiver_call?;
    Some(m.calls[service].callee.clone())
}

pub fn check(ctx: &Ctx, flows: &Flows, out: &mut Vec<Finding>) {
    for kf in &flows.key_flows {
        let Some(b) = kf.boundary else { continue };
        if ctx.boundary_kind(Some(b)) != Some(BoundaryKind::Callback) {
            continue;
        }
        let label = &ctx.boundary(b).label;
        let reinvoked = kf
            .sink_call
            .map(|c| ctx.model.calls[c].callee.clone())
            .filter(|c| c != "header" && c != "addHeader");
        let original = original_call(ctx, b);
        let what = match (&reinvoked, &original) {
            (Some(r), Some(o)) if r == o => format!("re-invokes `{r}(…)`"),
            (Some(r), _) => format!("calls `{r}(…)`"),
            _ => "builds a new request".to_string(),
        };
        let message = format!(
            "{label} {what} with {} evaluated again, so the retry sends a new idempotency key ({}); `call.clone()` would resend the original request with its key",
            ctx.origin_desc(&kf.origin),
            kf.sink_label
        );
        let help = match ctx.model.language {
            crate::model::Language::Rust => format!(
                "compute the key once before the first call (`{}`) and reuse it",
                ctx.derive_example()
            ),
            _ => format!(
                "compute the key once before the first call (`{}`) and pass that value, or retry with `call.clone().enqueue(this)`, which reuses the original arguments",
                ctx.derive_example()
            ),
        };
        out.push(ctx.origin_finding(ID, &kf.origin, Some(b), &kf.sink_label, message, help));
    }
    // The callback calls again a function that mints the key in its own body: the function
    // that enqueued it (`charge(body, attempt + 1)` from `onFailure`), or the service
    // method.
    for mc in &flows.mint_calls {
        if ctx.boundary_kind(Some(mc.boundary)) != Some(BoundaryKind::Callback) {
            continue;
        }
        let call = &ctx.model.calls[mc.call];
        // Only a call that makes the request again: of the function that enqueued the
        // callback (flows keep those only when they retry, `callback_retries`), or of the
        // service method the callback was enqueued for. Another minting helper the
        // callback calls once per response starts other work.
        let m = ctx.model;
        let enqueuer = m
            .ancestors(mc.boundary)
            .filter(|s| *s != mc.boundary)
            .filter_map(|s| m.function_info(s))
            .any(|f| f.name == call.callee);
        if !enqueuer && original_call(ctx, mc.boundary).as_deref() != Some(call.callee.as_str()) {
            continue;
        }
        let label = &ctx.boundary(mc.boundary).label;
        let message = format!(
            "{label} calls `{}(…)` again, and {} each time it runs, so the retry sends a new idempotency key; `call.clone()` would resend the original request with its key",
            super::helper_name(call),
            mc.mints_phrase(call)
        );
        let help = format!(
            "compute the key once, before the first call (`{}`), and pass it to `{}` as a parameter so the retry sends the same value, or retry with `call.clone().enqueue(this)`, which resends the original request",
            ctx.derive_example(),
            call.callee
        );
        let sink = format!("the key `{}()` mints", super::helper_name(call));
        out.push(mc.adjust(ctx.finding(ID, call.span, Some(mc.boundary), &sink, message, help)));
    }
}
