//! `time-in-key`: a clock reading reaches an idempotency key, anywhere. A time-based key
//! differs per attempt and per node, so retries are not recognised as the same operation.
//! Documentation: `rules/docs/time-in-key.md`. In test and benchmark code
//! ([`crate::index::is_test_or_bench_source`]) a clock key with no retry boundary in reach
//! is not reported: a test makes a unique key per run on purpose, and runs once.

use super::{Ctx, Flows};
use crate::finding::Finding;
use crate::model::SourceKind;

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
}
