//! `unlocked-scheduled-job`: a job run by a per-process scheduler mints idempotency keys
//! with no distributed lock in reach, so every replica runs it with its own keys.
//! Documentation: `rules/docs/unlocked-scheduled-job.md`. Locks come from
//! `rules/locks.toml`; ShedLock's `@SchedulerLock` counts only where the project enables
//! ShedLock. Test and benchmark sources ([`is_test_or_bench_source`]) are not checked: a
//! load test's paced loop runs in one process, not on every replica. Example programs
//! are: users copy them into services. Android application code is not checked either (one
//! process per device, each doing its own work).
//!
//! [`is_test_or_bench_source`]: crate::index::is_test_or_bench_source

use super::{Ctx, Flows};
use crate::catalogue::BoundaryKind;
use crate::finding::Finding;
use crate::model::ScopeId;

pub const ID: &str = "unlocked-scheduled-job";

/// `Ok(())` when a working lock is held within the job; `Err(note)` otherwise, where the
/// note explains an inert lock (ShedLock not enabled) or is empty.
fn lock_state(ctx: &Ctx, job: ScopeId) -> Result<(), String> {
    let m = ctx.model;
    let mut inert = String::new();
    for lock in &ctx.facts.locks {
        if !m.is_within(lock.scope, job) {
            continue;
        }
        if lock.requires_shedlock && !ctx.index.shedlock_enabled {
            inert = format!(
                "; its {} is inert because the scanned project never enables ShedLock (`@EnableSchedulerLock` with a `LockProvider`)",
                lock.label
            );
            continue;
        }
        return Ok(());
    }
    Err(inert)
}

/// Locks and claims to suggest, in the file's language (ShedLock is a JVM library).
fn lock_examples(ctx: &Ctx) -> &'static str {
    match ctx.model.language {
        crate::model::Language::Rust => {
            "`pg_try_advisory_lock`, `INSERT … ON CONFLICT DO NOTHING`, a Redis `SET key value NX PX ttl` lease"
        }
        _ => {
            "`pg_try_advisory_lock`, `INSERT … ON CONFLICT DO NOTHING`, ShedLock with `@EnableSchedulerLock`"
        }
    }
}

/// Whether the file is Android application code (it imports `android.*` or `androidx.*`):
/// it runs in one process per device, where a paced loop or `WorkManager` job does that
/// device's own work, not on every replica of a service.
fn device_local(ctx: &Ctx) -> bool {
    ctx.model.language != crate::model::Language::Rust
        && ctx.text.lines().any(|l| {
            let l = l.trim_start();
            l.strip_prefix("import ")
                .map(str::trim_start)
                .is_some_and(|p| p.starts_with("android.") || p.starts_with("androidx."))
        })
}

/// Receiving from an in-process channel: tokio `watch`/`mpsc`/`broadcast`, `std::sync::mpsc`,
/// crossbeam, Kotlin `Channel`.
const LOCAL_RECEIVES: &[&str] = &[
    ".has_changed()",
    ".changed()",
    ".try_recv()",
    ".recv()",
    ".recv_timeout(",
    ".tryReceive()",
    ".receive()",
];

/// Whether `offset` lies in a block that runs only when the job received something from an
/// in-process channel (`if rx.has_changed()? { .. }`, `match rx.try_recv() { Ok(v) => .. }`,
/// `if let Ok(v) = rx.try_recv() { .. }`): that work was handed to this process alone, so
/// another replica's run of the job never sees it and sends no second key for it. The block
/// is the first `{` after the receive in the same statement (no `;` between them), matched
/// by its closing brace.
fn gated_by_local_channel(ctx: &Ctx, job: crate::model::ScopeId, offset: usize) -> bool {
    let start = ctx.model.scopes[job].span.start;
    let Some(region) = ctx.text.get(start..offset) else {
        return false;
    };
    let bytes = ctx.text.as_bytes();
    LOCAL_RECEIVES.iter().any(|tok| {
        region.match_indices(tok).any(|(i, _)| {
            let mut p = start + i + tok.len();
            let mut depth = 0i32;
            // The block the receive guards: the first `{` outside brackets, before any `;`.
            let open = loop {
                match bytes.get(p) {
                    None => return false,
                    Some(b'(' | b'[') => depth += 1,
                    Some(b')' | b']') => depth -= 1,
                    Some(b';') if depth <= 0 => return false,
                    Some(b'{') if depth <= 0 => break p,
                    _ => {}
                }
                p += 1;
                // A statement header is short: past 4 KiB it is no guard of this block.
                if p >= offset || p - (start + i) > 4096 {
                    return false;
                }
            };
            let mut depth = 0i32;
            for (j, b) in bytes.iter().enumerate().skip(open) {
                match b {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return open < offset && offset < j;
                        }
                    }
                    _ => {}
                }
            }
            false
        })
    })
}

pub fn check(ctx: &Ctx, flows: &Flows, out: &mut Vec<Finding>) {
    if crate::index::is_test_or_bench_source(ctx.path) || device_local(ctx) {
        return;
    }
    for kf in &flows.key_flows {
        let Some(b) = kf.boundary else { continue };
        // Every replica computes the same time bucket for one period: that is the
        // per-period key a job on every replica needs, not a per-run mint.
        if kf.origin.window
            || ctx.boundary_kind(Some(b)) != Some(BoundaryKind::Scheduler)
            || gated_by_local_channel(ctx, b, kf.origin.span.start)
        {
            continue;
        }
        let Err(inert) = lock_state(ctx, b) else {
            continue;
        };
        let label = &ctx.boundary(b).label;
        let message = format!(
            "{} mints a new idempotency key ({}) on every run of {label}, which runs in every process with no distributed lock{inert}: N replicas send N different keys for the same work",
            ctx.origin_desc(&kf.origin),
            kf.sink_label
        );
        let help = format!(
            "derive the key from the job's business identity (`{}`) so every replica sends the same key, and take a distributed lock or claim before the work ({})",
            ctx.derive_example(),
            lock_examples(ctx)
        );
        out.push(ctx.origin_finding(ID, &kf.origin, Some(b), &kf.sink_label, message, help));
    }
    for mc in &flows.mint_calls {
        if ctx.boundary_kind(Some(mc.boundary)) != Some(BoundaryKind::Scheduler) {
            continue;
        }
        let Err(inert) = lock_state(ctx, mc.boundary) else {
            continue;
        };
        let call = &ctx.model.calls[mc.call];
        if gated_by_local_channel(ctx, mc.boundary, call.span.start) {
            continue;
        }
        let label = &ctx.boundary(mc.boundary).label;
        let message = format!(
            "`{}()` mints idempotency keys (`{}` at {}) and runs on every run of {label}, which runs in every process with no distributed lock{inert}: N replicas send N different keys for the same work",
            call.callee, mc.info.source, mc.info.location
        );
        let help = format!(
            "derive the keys from business identity (`{}`) and take a distributed lock or claim before the work ({})",
            ctx.derive_example(),
            lock_examples(ctx)
        );
        let sink = format!("the key `{}()` mints", call.callee);
        out.push(ctx.finding(ID, call.span, Some(mc.boundary), &sink, message, help));
    }
}
