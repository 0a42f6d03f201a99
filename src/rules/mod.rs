//! The rules. Each rule is one file with a `check` function over the shared [`Flows`] of a
//! file; the shared part (which ephemeral value reaches which key sink, inside which
//! boundary) is computed once here.

pub mod interceptor_mints_key;
pub mod key_in_callback_retry;
pub mod key_in_interceptor;
pub mod key_in_retry_scope;
pub mod time_in_key;
pub mod unlocked_scheduled_job;

use crate::catalogue::{BoundaryKind, Catalogue};
use crate::classify::{Boundary, FileFacts};
use crate::finding::{BoundaryRef, Finding, Severity};
use crate::flow::{Flow, Origin};
use crate::index::{MintInfo, ProjectIndex};
use crate::model::*;
use crate::text::LineIndex;

/// A rule's identity and documentation.
#[derive(Clone, Copy, Debug)]
pub struct RuleMeta {
    /// Stable id used in output, suppressions and configuration.
    pub id: &'static str,
    pub severity: Severity,
    /// The documentation in `rules/docs/<id>.md`; its first paragraph line is the summary.
    pub doc: &'static str,
}

impl RuleMeta {
    /// The documentation as `explain` and an editor's hover show it: links to the
    /// project's docs, written relative to `rules/docs/` (`../../docs/configuration.md`),
    /// read from the repository root (`docs/configuration.md`).
    pub fn reader_doc(&self) -> String {
        self.doc.replace("](../../docs/", "](docs/")
    }

    /// The one-line summary: the first non-heading, non-empty line of the docs.
    pub fn summary(&self) -> &'static str {
        self.doc
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('#'))
            .unwrap_or("")
    }
}

/// Every rule, in id order. `unused-suppression` and `suppression-without-reason` are
/// reported by [`crate::suppress`], not by a file here.
pub const RULES: &[RuleMeta] = &[
    RuleMeta {
        id: "interceptor-mints-key",
        severity: Severity::Warning,
        doc: include_str!("../../rules/docs/interceptor-mints-key.md"),
    },
    RuleMeta {
        id: "key-in-callback-retry",
        severity: Severity::Error,
        doc: include_str!("../../rules/docs/key-in-callback-retry.md"),
    },
    RuleMeta {
        id: "key-in-interceptor",
        severity: Severity::Error,
        doc: include_str!("../../rules/docs/key-in-interceptor.md"),
    },
    RuleMeta {
        id: "key-in-retry-scope",
        severity: Severity::Error,
        doc: include_str!("../../rules/docs/key-in-retry-scope.md"),
    },
    RuleMeta {
        id: "suppression-without-reason",
        severity: Severity::Warning,
        doc: include_str!("../../rules/docs/suppression-without-reason.md"),
    },
    RuleMeta {
        id: "time-in-key",
        severity: Severity::Warning,
        doc: include_str!("../../rules/docs/time-in-key.md"),
    },
    RuleMeta {
        id: "unlocked-scheduled-job",
        severity: Severity::Error,
        doc: include_str!("../../rules/docs/unlocked-scheduled-job.md"),
    },
    RuleMeta {
        id: "unused-suppression",
        severity: Severity::Warning,
        doc: include_str!("../../rules/docs/unused-suppression.md"),
    },
];

/// Looks a rule up by id.
pub fn rule(id: &str) -> Option<&'static RuleMeta> {
    RULES.iter().find(|r| r.id == id)
}

/// Everything a rule may look at for one file.
pub struct Ctx<'a> {
    pub path: &'a str,
    pub text: &'a str,
    pub lines: &'a LineIndex,
    pub model: &'a FileModel,
    pub facts: &'a FileFacts,
    pub index: &'a ProjectIndex,
    pub catalogue: &'a Catalogue,
    /// Built on first use by [`Ctx::enclosing_names`].
    pub scopes: std::sync::OnceLock<ScopeLookup>,
}

/// An ephemeral evaluation that reaches a key sink.
#[derive(Clone, Debug)]
pub struct KeyFlow {
    pub origin: Origin,
    pub sink_label: String,
    pub sink_scope: ScopeId,
    /// The sink's value expression.
    pub sink_span: Span,
    /// The call the sink is an argument of.
    pub sink_call: Option<CallId>,
    /// Innermost boundary enclosing both the evaluation and the sink.
    pub boundary: Option<ScopeId>,
}

/// A call, inside a boundary, to a project function that mints a key itself.
#[derive(Clone, Debug)]
pub struct MintCall {
    pub call: CallId,
    pub info: MintInfo,
    pub boundary: ScopeId,
    /// Where the other declarations the call may refer to mint theirs (`path:line`),
    /// when they differ from `info`'s.
    pub more_locations: Vec<String>,
    /// `(minting, candidates)` when only some of the declarations the call may refer to
    /// mint a key: the finding names the ambiguity at a lower severity.
    pub ambiguous: Option<(usize, usize)>,
}

impl MintCall {
    /// How a message says what the call mints: "`f()` mints a new idempotency key
    /// (`UUID.randomUUID()` at A.java:3)", or, when only some of the declarations it may
    /// refer to mint one, "`f()` may mint a new idempotency key (2 of the 3 declarations
    /// it may call do: `UUID.randomUUID()` at A.java:3; at B.java:9)".
    pub fn mints_phrase(&self, call: &Call) -> String {
        let callee = helper_name(call);
        match self.ambiguous {
            None => format!(
                "`{callee}()` mints a new idempotency key ({})",
                self.source_at()
            ),
            Some((k, n)) => format!(
                "`{callee}()` may mint a new idempotency key ({k} of the {n} declarations it may call do: {}; the call's receiver does not say which runs)",
                self.source_at()
            ),
        }
    }

    /// A finding about an ambiguous call is reported one severity lower.
    pub fn adjust(&self, mut f: Finding) -> Finding {
        if self.ambiguous.is_some() {
            f.ambiguous = true;
            f.severity = f.severity.lower();
        }
        f
    }

    /// "`UUID.randomUUID()` at A.java:3", plus "; at B.java:9" for each other minting
    /// declaration.
    pub fn source_at(&self) -> String {
        let mut s = format!("`{}` at {}", self.info.source, self.info.location);
        for l in &self.more_locations {
            s.push_str(&format!("; at {l}"));
        }
        s
    }
}

/// How messages name a called helper: `Event::new` for a Rust associated function called
/// through its type's path, the callee alone otherwise.
pub fn helper_name(call: &Call) -> String {
    if call.receiver.is_some() {
        return call.callee.clone();
    }
    match call.path.last() {
        Some(t) if !t.is_empty() && t != "self" && t != "Self" => format!("{t}::{}", call.callee),
        _ => call.callee.clone(),
    }
}

/// The shared analysis of one file.
pub struct Flows {
    pub key_flows: Vec<KeyFlow>,
    pub mint_calls: Vec<MintCall>,
}

/// Innermost boundary scope enclosing `a` that also encloses `b`.
pub fn common_boundary(
    model: &FileModel,
    facts: &FileFacts,
    a: ScopeId,
    b: ScopeId,
) -> Option<ScopeId> {
    model
        .ancestors(a)
        .find(|s| facts.boundaries[*s].is_some() && model.is_within(b, *s))
}

/// When the origin and the sink share no boundary: the boundary of the origin when both
/// lie in lambdas of one reactive pipeline that a `retry` re-subscribes (flavor
/// `reactive`), the origin's stage upstream of the sink's (`Mono.fromCallable(() ->
/// newKey()).flatMap(key -> send(key)).retry(3)`): each re-subscription evaluates the
/// origin again and hands the new value down to the sink. (A value a retry lambda
/// returns to code after the retry is not such a flow: the sink runs once.)
pub fn reactive_upstream_boundary(
    model: &FileModel,
    facts: &FileFacts,
    origin: ScopeId,
    sink: ScopeId,
) -> Option<ScopeId> {
    let reactive = |s: &ScopeId| {
        facts.boundaries[*s]
            .as_ref()
            .is_some_and(|b| b.flavor == "reactive" && b.owner_call.is_some())
    };
    let up = model.ancestors(origin).find(reactive)?;
    let down = model.ancestors(sink).find(reactive)?;
    let up_call = facts.boundaries[up].as_ref()?.owner_call?;
    let mut at = facts.boundaries[down].as_ref()?.owner_call;
    for _ in 0..256 {
        let c = at?;
        if c == up_call {
            return Some(up);
        }
        at = model.calls[c].receiver_call;
    }
    None
}

/// A message listener is run again only when its invocation fails (the exception
/// leaves the method, the message is not acknowledged and the broker redelivers it; not
/// so a hand-written receive loop, whose message comes back unless it is deleted): a
/// call whose failure a `try`/`catch` inside the listener handles without rethrowing does
/// not make it run again (Spring AMQP `SimpleMessageListenerContainer`, Spring Kafka
/// `DefaultErrorHandler`, JMS `DefaultMessageListenerContainer`: redelivery follows an
/// exception thrown by the listener; see `rules/messaging.toml`). The same holds for a
/// method whose retry annotation retries on exceptions that leave it (Spring Retry
/// `@Retryable`, Resilience4j `@Retry`: the proxy calls the method again only when it
/// throws): a failure the body catches and turns into a result is not retried.
///
/// A lambda handed to a project combinator that runs it again only after it throws
/// ([`crate::index::RETRY_ON_THROW`]) is treated the same way, and so is a call to a
/// helper whose key leaves only from inside a `try` that catches every exception
/// (`handled_in_callee`, see [`crate::index::ProjectIndex::mint_handled`]).
///
/// Two exceptions for redelivered handlers: a `catch` of the failure that hands the
/// message back ([`NACK_CALLS`]) has it delivered again; and for a broker that waits for
/// the handler's acknowledgement ([`crate::catalogue::BoundaryEntry::settle_calls`]:
/// Pub/Sub, RabbitMQ, JetStream), a message acknowledged before the key is sent (or in a
/// `finally`) is never delivered again, while a failure caught without an
/// acknowledgement (none in the `catch`, none after the `try`) leaves it to come back.
fn redelivery_handled(
    ctx: &Ctx,
    boundary: ScopeId,
    offset: usize,
    handled_in_callee: bool,
) -> bool {
    if let Some(b) = ctx.facts.boundaries[boundary].as_ref()
        && ctx
            .catalogue
            .boundaries
            .iter()
            .any(|e| e.id == b.entry && e.form == crate::catalogue::BoundaryForm::ReceiveLoop)
    {
        return deleted_regardless(ctx, boundary, offset, b);
    }
    if let Some(b) = ctx.facts.boundaries[boundary]
        .as_ref()
        .filter(|b| b.flavor == "redelivery")
    {
        let settle = settle_calls_of(ctx, b);
        // A consumer that acknowledges its own messages: one acknowledged before the
        // key is sent is not delivered again.
        if settled_before(ctx, boundary, offset, settle) {
            return true;
        }
        let catches = covering_catches(ctx, boundary, offset);
        // A listener that hands the message back when it catches the failure (a negative
        // acknowledgement with requeue) has it delivered again all the same.
        if catches_call(ctx, &catches, |c| nacks(ctx, c)) {
            return false;
        }
        // And one whose broker waits for an acknowledgement redelivers a message whose
        // failure was caught but never acknowledged (no `ack` in the `catch`).
        // (It is acknowledged when a `catch` does, or when the handler goes on after
        // the `try` and acknowledges it there.)
        if !settle.is_empty() {
            let last_catch = catches.iter().map(|(_, h)| h.end).max().unwrap_or(0);
            return !catches.is_empty()
                && (catches_call(ctx, &catches, |c| {
                    settle.contains(&c.callee) || settles_without_requeue(ctx, c)
                }) || ctx.model.calls.iter().any(|c| {
                    c.span.start >= last_catch
                        && settle.contains(&c.callee)
                        && ctx.model.is_within(c.scope, boundary)
                }));
        }
    }
    // A project combinator's body says which exceptions it retries only by its `catch`
    // clauses, so for it a failure counts as handled only by a `catch` of every exception.
    let strict = ctx.facts.boundaries[boundary]
        .as_ref()
        .is_some_and(|b| b.flavor == crate::index::RETRY_ON_THROW);
    let handled_here = if strict {
        ctx.model
            .failure_caught_all(offset, ctx.model.scopes[boundary].span)
    } else {
        ctx.model
            .failure_handled(offset, ctx.model.scopes[boundary].span)
    };
    ctx.facts.boundaries[boundary].as_ref().is_some_and(|b| {
        use crate::catalogue::BoundaryForm;
        let form = |f: BoundaryForm| {
            ctx.catalogue
                .boundaries
                .iter()
                .any(|e| e.id == b.entry && e.form == f)
        };
        // A hand-written receive loop's message comes back when it is not deleted, which
        // a caught failure does not change (`sqs.receive-loop`).
        (b.flavor == "redelivery" && !form(BoundaryForm::ReceiveLoop))
            || strict
            || (b.kind == crate::catalogue::BoundaryKind::Retry
                && form(BoundaryForm::AnnotatedFunction))
    }) && (handled_here
        // A same-file helper that handles every failure of its calls (the long-standing
        // rule for listeners and annotated retries, which does not look past the call).
        || (!strict && call_never_fails(ctx, offset, false))
        // A helper that handles its own send, for a project combinator or through other
        // files: only when no later step of the attempt can still fail.
        || ((handled_in_callee || (strict && call_never_fails(ctx, offset, true)))
            && nothing_fails_after(ctx, boundary, offset, strict)))
}

/// The boundary entry's [`crate::catalogue::BoundaryEntry::settle_calls`].
fn settle_calls_of<'c>(ctx: &Ctx<'c>, b: &crate::classify::Boundary) -> &'c [String] {
    ctx.catalogue
        .boundaries
        .iter()
        .find(|e| e.id == b.entry)
        .map_or(&[][..], |e| e.settle_calls.as_slice())
}

/// Whether a call named in `settle` inside `boundary` starts before `offset` on the way to
/// it (not in a branch that leaves first, [`leaves_before`]: the "already handled: ack and
/// return" branch of a deduplicating consumer), or sits in a `finally` block.
fn settled_before(ctx: &Ctx, boundary: ScopeId, offset: usize, settle: &[String]) -> bool {
    let scope = ctx.model.scopes[boundary].span;
    !settle.is_empty()
        && ctx.model.calls.iter().any(|c| {
            settle.contains(&c.callee)
                && ctx.model.is_within(c.scope, boundary)
                && ((c.span.start < offset && !leaves_before(ctx.text, c.span.end, offset))
                    || in_finally(ctx.text, scope, c.span.start))
        })
}

/// Whether the code after byte `from`, in the block holding it, leaves that block with
/// `return`, `throw`, `continue` or `break` (a Kotlin `return@label` too) and the block then
/// closes before byte `to`: `from` lies in a branch that never reaches `to`. Read from the
/// text, braces counted (a brace or word inside a literal or comment can mislead it, which
/// only keeps the call counting as before `to`).
fn leaves_before(text: &str, from: usize, to: usize) -> bool {
    let Some(between) = text.get(from..to) else {
        return false;
    };
    let bytes = between.as_bytes();
    let mut depth = 0i32;
    let mut left = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'{' => depth += 1,
            b'}' => {
                if depth == 0 {
                    return left;
                }
                depth -= 1;
            }
            b'a'..=b'z'
                if i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') =>
            {
                let end = bytes[i..]
                    .iter()
                    .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                    .map_or(bytes.len(), |n| i + n);
                if depth == 0
                    && matches!(&between[i..end], "return" | "throw" | "continue" | "break")
                {
                    left = true;
                }
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// The `catch` clauses of the `try` blocks inside `boundary` that handle a failure at
/// `offset` ([`crate::model::FileModel::handled`]), each with its `try` block: the
/// clauses right after such a block, with only blank text between them.
fn covering_catches(ctx: &Ctx, boundary: ScopeId, offset: usize) -> Vec<(Span, Span)> {
    let m = ctx.model;
    let within = m.scopes[boundary].span;
    let mut out = Vec::new();
    let mut sorted: Vec<Span> = m.catches.clone();
    sorted.sort_by_key(|c| c.start);
    for t in m.handled.iter().filter(|t| {
        t.start <= offset && offset < t.end && within.start <= t.start && t.end <= within.end
    }) {
        let mut at = t.end;
        for c in sorted.iter().filter(|c| c.start >= t.end) {
            // Blank, or the `catch` keyword when a clause's span starts after it.
            if !ctx
                .text
                .get(at..c.start)
                .is_some_and(|g| matches!(g.trim(), "" | "catch" | "}"))
            {
                break;
            }
            out.push((*t, *c));
            at = c.end;
        }
    }
    out
}

/// Whether some call inside one of `catches` satisfies `pred`.
fn catches_call(
    ctx: &Ctx,
    catches: &[(Span, Span)],
    pred: impl Fn(&crate::model::Call) -> bool,
) -> bool {
    !catches.is_empty()
        && ctx.model.calls.iter().any(|c| {
            catches
                .iter()
                .any(|(_, h)| h.start <= c.span.start && c.span.end <= h.end)
                && pred(c)
        })
}

/// Calls that hand a message back to its broker for another delivery: Pub/Sub
/// `AckReplyConsumer.nack()` ("Nacking a message implies a later redelivery"), Spring
/// Kafka `Acknowledgment.nack(..)` (the record is redelivered after the sleep), RabbitMQ
/// `basicNack(tag, multiple, requeue)` / `basicReject(tag, requeue)`, NATS JetStream
/// `nak()` / `nakWithDelay(..)`, Azure Service Bus `abandon()` / `abandonMessage(..)`.
const NACK_CALLS: &[&str] = &[
    "nack",
    "basicNack",
    "basicReject",
    "nak",
    "nakWithDelay",
    "abandon",
    "abandonMessage",
];

/// Whether `c` hands the message back for another delivery ([`NACK_CALLS`]), unless
/// it is a RabbitMQ nack or reject whose requeue argument is written `false`.
fn nacks(ctx: &Ctx, c: &crate::model::Call) -> bool {
    NACK_CALLS.contains(&c.callee.as_str()) && !settles_without_requeue(ctx, c)
}

/// A RabbitMQ `basicNack(tag, multiple, false)` / `basicReject(tag, false)` (Kotlin
/// `requeue = false` too): the message is dropped or dead-lettered, not delivered again.
fn settles_without_requeue(ctx: &Ctx, c: &crate::model::Call) -> bool {
    if !matches!(c.callee.as_str(), "basicNack" | "basicReject") {
        return false;
    }
    let arg_text = |a: &crate::model::Arg| ctx.text.get(a.span.start..a.span.end).map(str::trim);
    let requeue = c
        .args
        .iter()
        .find(|a| a.name.as_deref() == Some("requeue"))
        .or_else(|| c.args.iter().rfind(|a| a.name.is_none()));
    requeue.and_then(arg_text).is_some_and(|t| {
        let t = t
            .strip_prefix("requeue")
            .map_or(t, |r| r.trim_start().trim_start_matches('=').trim());
        t == "false"
    })
}

/// For a receive loop ([`crate::catalogue::BoundaryForm::ReceiveLoop`]): whether the
/// message is deleted whatever happens at `offset`, so it is never received again: a
/// deletion in the loop (Amazon SQS `deleteMessage`, or a helper whose name says it
/// deletes) that starts before `offset` (deleted before it is handled), or one in a
/// `finally` block.
fn deleted_regardless(
    ctx: &Ctx,
    boundary: ScopeId,
    offset: usize,
    b: &crate::classify::Boundary,
) -> bool {
    let scope = ctx.model.scopes[boundary].span;
    let settle = settle_calls_of(ctx, b);
    ctx.model.calls.iter().any(|c| {
        (if settle.is_empty() {
            c.callee.to_ascii_lowercase().contains("delete")
        } else {
            settle.contains(&c.callee)
        }) && scope.contains(c.span)
            && (c.span.start < offset || in_finally(ctx.text, scope, c.span.start))
    })
}

/// Whether byte `at` of `text` lies in a `finally { .. }` block that starts within `scope`:
/// walking out through the enclosing braces, one is opened right after `finally`.
/// Textual (braces in strings or comments can only make it answer no, which keeps the
/// finding).
fn in_finally(text: &str, scope: crate::model::Span, at: usize) -> bool {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = at.min(bytes.len());
    while i > scope.start {
        i -= 1;
        match bytes[i] {
            b'}' => depth += 1,
            b'{' if depth > 0 => depth -= 1,
            b'{' if text[scope.start..i].trim_end().ends_with("finally") => return true,
            _ => {}
        }
    }
    false
}

/// Whether no call that starts after the end of the call at `offset`, within the boundary
/// scope, can fail out of the boundary: each sits in a `catch` clause (the handling of an
/// earlier failure, as [`call_never_fails`] takes it) or in a `try` inside the boundary that
/// handles it (with `strict`, one catching every exception). A helper that handles the
/// failure of its own send does not keep a later step from failing the attempt, after the
/// key went out, and the boundary then runs again with a new key.
fn nothing_fails_after(ctx: &Ctx, boundary: ScopeId, offset: usize, strict: bool) -> bool {
    let m = ctx.model;
    let Some(call) = m.calls.iter().find(|c| c.span.start == offset) else {
        return false;
    };
    let within = m.scopes[boundary].span;
    let inside = |spans: &[Span], c: &crate::model::Call| {
        spans.iter().any(|h| {
            h.start <= c.span.start
                && c.span.end <= h.end
                && within.start <= h.start
                && h.end <= within.end
        })
    };
    let tries = if strict { &m.catch_all } else { &m.handled };
    m.calls
        .iter()
        .filter(|c| c.span.start >= call.span.end && m.is_within(c.scope, boundary))
        .all(|c| inside(&m.catches, c) || inside(tries, c))
}

/// Whether the call starting at `offset` is to a function of this file (by name and number
/// of arguments, a Java/Kotlin method without receiver or on `this`) every call of whose body
/// sits in a `try` block whose `catch` clauses all complete without throwing
/// ([`crate::model::FileModel::handled`]), or in such a `catch` clause: such a helper
/// reports its failures itself and
/// returns normally, so calling it from a `catch` clause of a listener does not make the
/// listener fail (`catch (Exception e) { triggerManualReview(event); }`).
/// With `strict`, only a `try` that catches every exception counts
/// ([`crate::model::FileModel::catch_all`]).
fn call_never_fails(ctx: &Ctx, offset: usize, strict: bool) -> bool {
    let m = ctx.model;
    let Some(call) = m.calls.iter().find(|c| c.span.start == offset) else {
        return false;
    };
    if !matches!(call.receiver.as_deref().map(str::trim), None | Some("this")) {
        return false;
    }
    let mut fns = m.scopes.iter().enumerate().filter(|(_, s)| {
        matches!(&s.kind, crate::model::ScopeKind::Function(f)
            if f.name == call.callee && f.params.len() == call.args.len())
    });
    let Some((fid, _)) = fns.next() else {
        return false;
    };
    if fns.next().is_some() {
        return false; // overloads of one arity: which one is not known here
    }
    // Calls in the `catch` clauses themselves (the logging of the failure) are taken not to
    // fail.
    let inside = |spans: &[Span], c: &crate::model::Call| {
        spans
            .iter()
            .any(|h| h.start <= c.span.start && c.span.end <= h.end)
    };
    let mut calls = m
        .calls
        .iter()
        .filter(|c| m.is_within(c.scope, fid) && !inside(&m.catches, c))
        .peekable();
    let tries = if strict { &m.catch_all } else { &m.handled };
    calls.peek().is_some() && calls.all(|c| inside(tries, c))
}

/// Whether every HTTP request a retry boundary makes, as far as its own calls show, is a
/// read: a `GET`, `HEAD` or `OPTIONS` (`restTemplate.exchange(url, HttpMethod.GET, ..)`,
/// `getForObject(..)`) and no `POST`, `PUT`, `PATCH` or `DELETE`. RFC 9110 §9.2.2 defines
/// those reads as idempotent, and the IETF Idempotency-Key draft keys only non-idempotent
/// methods, so a request id minted per attempt of a read deduplicates nothing. `false`
/// when no verb is seen.
fn reads_only(ctx: &Ctx, boundary: ScopeId) -> bool {
    let m = ctx.model;
    let (mut read, mut write) = (false, false);
    for c in m.calls.iter().filter(|c| m.is_within(c.scope, boundary)) {
        if crate::index::SPRING_READS.contains(&c.callee.as_str()) {
            read = true;
        }
        if crate::index::SPRING_WRITES.contains(&c.callee.as_str()) {
            write = true;
        }
        for a in &c.args {
            match m.values[a.value].ident.as_deref() {
                Some("GET" | "HEAD" | "OPTIONS") => read = true,
                Some("POST" | "PUT" | "PATCH" | "DELETE") => write = true,
                _ => {}
            }
        }
    }
    read && !write
}

/// A retry boundary whose requests are all reads ([`reads_only`]).
fn retried_read(ctx: &Ctx, boundary: ScopeId) -> bool {
    ctx.facts.boundaries[boundary]
        .as_ref()
        .is_some_and(|b| b.kind == crate::catalogue::BoundaryKind::Retry)
        && reads_only(ctx, boundary)
}

/// Whether the parser had to recover between the start of the boundary `scope` and
/// `offset`: the boundary's extent past a syntax error is a guess (a method missing its
/// closing brace swallows the methods after it), so what lies beyond the error is not
/// known to run inside it. The syntax errors are reported with the file.
fn damaged(ctx: &Ctx, scope: ScopeId, offset: usize) -> bool {
    let start = ctx.model.scopes[scope].span.start;
    ctx.model
        .errors
        .iter()
        .any(|e| e.span.start >= start && e.span.start < offset)
}

/// Whether call `cid` is the base of a Rust struct literal that sets a key field itself
/// (`Payout { idempotency_key: key, ..Default::default() }`): whatever key the base
/// mints is replaced by the literal's.
fn base_key_overridden(ctx: &Ctx, cid: crate::model::CallId) -> bool {
    ctx.model
        .struct_bases
        .iter()
        .any(|(c, set)| *c == cid && set.iter().any(|f| ctx.catalogue.is_key_name(f)))
}

/// Whether the fresh value at `origin` is minted lazily, once per operation: it is stored
/// into a variable or field `x` that outlives the attempt (declared outside the boundary),
/// and only while `x` holds none (`if (x == null) x = UUID..`, `x = x != null ? x : ..`,
/// `x ?: UUID...also { x = it }`), so every later attempt finds it and sends the same key.
/// (A singleton's field shared by different operations is another bug, not this rule's.)
fn lazily_once(ctx: &Ctx, boundary: ScopeId, origin: Span) -> bool {
    use crate::model::{BindingKind, GuardKind};
    let m = ctx.model;
    let bspan = m.scopes[boundary].span;
    let at = origin.start;
    let guards = m
        .guards
        .iter()
        .map(|g| (*g, false))
        .chain(early_exits(ctx, bspan, origin).map(|g| (g, true)));
    for ((cond, arm, kind), after_exit) in guards {
        let (cond, arm) = (&cond, &arm);
        if !(arm.start <= at && at < arm.end && bspan.contains(*arm)) {
            continue;
        }
        let ctext = code_text(ctx.snippet(*cond));
        // The current value of an atomic reference declared outside the attempt, handed
        // to an update function that keeps it when set
        // (`ref.updateAndGet(k -> k != null ? k : UUID..)`): stored back into the
        // reference, so minted on the first attempt only.
        if let Some((param, holder)) = atomic_update_param(m, bspan, origin)
            && match kind {
                GuardKind::IfTrue => null_test(&ctext, param, true),
                GuardKind::IfFalse => null_test(&ctext, param, false),
                GuardKind::Elvis => ctext == param,
            }
            && !m.bindings.iter().any(|b| {
                b.name == holder && b.kind != BindingKind::Field && m.is_within(b.scope, boundary)
            })
        {
            return true;
        }
        // The names stored: by the assignment that holds the origin, or inside the arm.
        // (Not an assignment that empties the place again, `key[0] = null`: that is a
        // reset, below.)
        let empties = |a: &crate::model::Assign| {
            let text = code_text(ctx.snippet(a.span));
            text.split_once('=').is_some_and(|(_, v)| {
                matches!(
                    v.trim_end_matches(';'),
                    "null" | "None" | "\"\"" | "String::new()"
                )
            })
        };
        let stored = m
            .assigns
            .iter()
            .filter(|a| (a.span.contains(origin) || arm.contains(a.span)) && !empties(a));
        for a in stored {
            let x = a.name.as_str();
            // An element of a holder array (`key[0] = UUID..` under `if (key[0] == null)`:
            // Java lambdas cannot assign a captured local, so a one-element array stands
            // in for it) is tested as written.
            let element = array_element(&code_text(ctx.snippet(a.span)), x)
                .filter(|e| constant_index(ctx.text, e));
            let tests = |when_empty: bool| {
                null_test(&ctext, x, when_empty)
                    || element
                        .as_deref()
                        .is_some_and(|e| null_test(&ctext, e, when_empty))
            };
            let guarded = match kind {
                GuardKind::IfTrue => tests(true) || first_attempt_test(ctx, boundary, &ctext, true),
                GuardKind::IfFalse => {
                    tests(false) || first_attempt_test(ctx, boundary, &ctext, false)
                }
                GuardKind::Elvis => ctext == x || ctext == format!("this.{x}"),
            };
            if !guarded {
                continue;
            }
            // A local of that name declared inside the boundary is new on every attempt.
            let per_attempt = m.bindings.iter().any(|b| {
                b.name == x && b.kind != BindingKind::Field && m.is_within(b.scope, boundary)
            });
            // Another assignment of it in the boundary (`key[0] = null` at the start of an
            // attempt or in a `finally`, `holder = new String[1]`) empties it again.
            // (The code after an early exit runs to the end of the attempt, a `catch` or
            // `finally` included: a reset there counts.)
            let reset = m.assigns.iter().any(|r| {
                r.name == a.name
                    && r.span != a.span
                    && bspan.contains(r.span)
                    && (after_exit || !arm.contains(r.span))
                    && !r.span.contains(origin)
            });
            if !per_attempt && !reset {
                return true;
            }
        }
    }
    false
}

/// Whether the condition text `c` (whitespace removed) holds on the first attempt only
/// (`first`; `false`: on every later attempt only), read from the attempt count of the
/// operation context the retry library passes to the lambda `boundary`
/// ([`operation_context`]): Spring Retry's `RetryContext.getRetryCount()` is the number of
/// attempts made so far, 0 on the first
/// (<https://docs.spring.io/spring-retry/docs/api/current/org/springframework/retry/RetryContext.html>).
/// So `if (ctx.getRetryCount() == 0) key[0] = UUID..` stores a key once per operation.
fn first_attempt_test(ctx: &Ctx, boundary: ScopeId, c: &str, first: bool) -> bool {
    let m = ctx.model;
    let bspan = m.scopes[boundary].span;
    // Outer parentheses around the whole condition (`if ((ctx.getRetryCount() == 0))`).
    let c = strip_outer_parens(c);
    // Under `if`, one part of an `&&` is enough (the arm runs only when all hold); under
    // `else`, one part of an `||` (the arm runs only when none holds).
    let (join, other) = if first { ("&&", "||") } else { ("||", "&&") };
    if c.contains(other) {
        return false;
    }
    m.bindings
        .iter()
        .filter(|b| b.scope == boundary && operation_context(ctx, b))
        // Not when the lambda puts another context under the parameter's name.
        .filter(|b| {
            !m.assigns
                .iter()
                .any(|a| a.name == b.name && bspan.contains(a.span))
        })
        .any(|b| {
            // `getRetryCount()`, or Kotlin's property syntax for it.
            [
                format!("{}.getRetryCount()", b.name),
                format!("{}.retryCount", b.name),
            ]
            .iter()
            .any(|count| {
                let on_first = [
                    format!("{count}==0"),
                    format!("0=={count}"),
                    format!("{count}<1"),
                    format!("{count}<=0"),
                ];
                let on_later = [
                    format!("{count}>0"),
                    format!("{count}!=0"),
                    format!("0!={count}"),
                    format!("{count}>=1"),
                    format!("0<{count}"),
                ];
                let pats = if first { &on_first[..] } else { &on_later[..] };
                c.split(join)
                    .any(|part| pats.iter().any(|p| p == strip_outer_parens(part)))
            })
        })
}

/// When `origin` lies in a lambda (inside the boundary spanning `bspan`) given to an
/// atomic update of a named reference (`ref.updateAndGet(k -> ..)`,
/// `getAndUpdate`, Kotlin's `ref.updateAndGet { k -> .. }`): the lambda's parameter, which
/// holds the reference's current value, and the reference's name. `java.util.concurrent`
/// `AtomicReference.updateAndGet` stores the function's result as the new value.
fn atomic_update_param(
    m: &crate::model::FileModel,
    bspan: Span,
    origin: Span,
) -> Option<(&str, &str)> {
    let (_, info) = m
        .scopes
        .iter()
        .filter(|s| s.span.contains(origin) && bspan.contains(s.span))
        .filter_map(|s| match &s.kind {
            ScopeKind::Lambda(l) => Some((s.span, l)),
            _ => None,
        })
        .min_by_key(|(span, _)| span.end - span.start)?;
    let call = &m.calls[info.owner_call?];
    if !matches!(call.callee.as_str(), "updateAndGet" | "getAndUpdate") || info.params.len() != 1 {
        return None;
    }
    let holder = call.receiver.as_deref()?;
    if !holder.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    Some((info.params[0].name.as_str(), holder))
}

/// The assigned place of the assignment text `assign` when it is an element of the array
/// named `x` with a constant index (`key[0]` of `key[0] = UUID.randomUUID().toString()`),
/// whitespace removed; `None` for any other place.
fn array_element(assign: &str, x: &str) -> Option<String> {
    let place: String = assign
        .split_once('=')?
        .0
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    // `this.held[0]`: the field itself (the tests accept `this.` before the name).
    let place = place.strip_prefix("this.").unwrap_or(&place).to_string();
    let index = place
        .strip_prefix(x)?
        .strip_prefix('[')?
        .strip_suffix(']')?;
    // A literal index, or a name written as a constant's (`key[KEY]`: upper case by the
    // Java and Kotlin naming conventions, JLS 6.1), which [`constant_index`] then checks
    // is declared one.
    let constant = index.chars().all(|c| c.is_ascii_digit())
        || (index.starts_with(|c: char| c.is_ascii_uppercase())
            && index
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'));
    (!index.is_empty() && constant).then_some(place)
}

/// Whether the index of the holder element `place` (`key[0]`, `key[KEY]`) is a constant: a
/// literal, or a name the file declares unchangeable and initialised (`static final int
/// KEY = 0`, Kotlin `const val KEY = 0` or `val KEY = 0`). A name declared elsewhere, or
/// a variable (`static int SLOT`, a loop counter `N`), can name another element on the
/// next attempt.
fn constant_index(text: &str, place: &str) -> bool {
    let Some(index) = place
        .rsplit_once('[')
        .and_then(|(_, i)| i.strip_suffix(']'))
    else {
        return false;
    };
    if index.chars().all(|c| c.is_ascii_digit()) {
        return true;
    }
    text.lines().any(|line| {
        let Some(at) = line.find(index) else {
            return false;
        };
        let (before, after) = (&line[..at], &line[at + index.len()..]);
        let whole = !before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
            && !after.starts_with(|c: char| c.is_alphanumeric() || c == '_');
        let assigned = after
            .trim_start()
            .trim_start_matches(|c: char| c == ':' || c.is_alphanumeric() || c == ' ')
            .starts_with('=')
            && !after.trim_start().starts_with("==");
        let words: Vec<&str> = before
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .collect();
        whole && assigned && (words.contains(&"final") || words.contains(&"val"))
    })
}

/// `text` with its comments and whitespace removed, for comparing conditions and places
/// as written (`key[/* the key */ 0]` reads `key[0]`). Comment markers inside string
/// literals are removed too, which can only make a comparison fail.
fn code_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else {
            let ch = rest.chars().next().unwrap_or(' ');
            if !ch.is_whitespace() {
                out.push(ch);
            }
            rest = &rest[ch.len_utf8()..];
        }
    }
    out
}

/// `text` with its comments replaced by a space and the contents of its string and
/// character literals removed (the quotes kept), so that what is left is code: a `;`,
/// brace or `//` inside a literal (a URL) is not read as one. Raw strings and text blocks
/// are cut at their first inner quote, which can only leave more text to read as code.
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(ch) = rest.chars().next() {
        if let Some(r) = rest.strip_prefix("/*") {
            out.push(' ');
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else if let Some(r) = rest.strip_prefix("//") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if ch == '"' || ch == '\'' {
            out.push(ch);
            let mut end = rest.len();
            let mut escaped = false;
            for (i, c) in rest.char_indices().skip(1) {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == ch || c == '\n' {
                    end = i;
                    break;
                }
            }
            out.push(ch);
            rest = rest.get(end + 1..).unwrap_or("");
        } else {
            out.push(ch);
            rest = &rest[ch.len_utf8()..];
        }
    }
    out
}

/// Whether `s` starts with the keyword `word` (not a longer name: `returned`,
/// `throwIfStale`); a Kotlin label (`return@execute`) may follow.
fn starts_with_keyword(s: &str, word: &str) -> bool {
    s.strip_prefix(word)
        .is_some_and(|r| !r.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$'))
}

/// The code after an `if` whose arm always leaves (`if (key[0] != null) return
/// send(key[0]);` then `key[0] = UUID..`), inside the boundary spanning `bspan` and before
/// `origin`: it runs only when the condition does not hold, so it is a guard like an
/// `else` arm, up to the end of the innermost scope, conditional arm or `catch` that
/// holds the `if` (which must hold `origin` too). An arm leaves when it is one `return` or
/// `throw` statement, braced or not. The `if` must be a statement of the block that holds
/// `origin`: between them no brace closes a block the `if` is in (a `try`, a `match` arm)
/// and no `case` label starts another branch.
fn early_exits<'c>(
    ctx: &'c Ctx,
    bspan: Span,
    origin: Span,
) -> impl Iterator<Item = (Span, Span, crate::model::GuardKind)> + 'c {
    let m = ctx.model;
    m.guards.iter().filter_map(move |(cond, arm, kind)| {
        if *kind != crate::model::GuardKind::IfTrue
            || arm.end > origin.start
            || !bspan.contains(*arm)
        {
            return None;
        }
        let code = code_only(ctx.snippet(*arm));
        let code = code.trim();
        let body = code
            .strip_prefix('{')
            .and_then(|b| b.strip_suffix('}'))
            .unwrap_or(code)
            .trim();
        let statement = body.strip_suffix(';').unwrap_or(body);
        let leaves = (starts_with_keyword(body, "return") || starts_with_keyword(body, "throw"))
            && !statement.contains([';', '{', '}', '\n']);
        if !leaves {
            return None;
        }
        // The `if` statement's extent: from its condition to the end of its arm.
        let stmt = Span::new(cond.start.min(arm.start), arm.end);
        let between = code_only(ctx.text.get(arm.end..origin.start)?);
        let mut depth = 0i32;
        for ch in between.chars() {
            depth += match ch {
                '{' => 1,
                '}' => -1,
                _ => 0,
            };
            if depth < 0 {
                return None;
            }
        }
        if between
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|w| w == "case" || w == "default")
        {
            return None;
        }
        let holders = m
            .scopes
            .iter()
            .map(|s| s.span)
            .chain(m.conditional.iter().copied())
            .chain(m.catches.iter().copied())
            .filter(|h| h.contains(stmt) && *h != stmt && *h != *arm);
        let mut end = bspan.end;
        for h in holders {
            if !h.contains(origin) {
                return None;
            }
            end = end.min(h.end);
        }
        Some((
            *cond,
            Span::new(arm.end, end),
            crate::model::GuardKind::IfFalse,
        ))
    })
}

/// Whether the condition text `c` (whitespace removed) tests that `x` holds no value
/// (`x == null`, `x.isNullOrEmpty()`, `Objects.isNull(x)`, ..; `when_empty`) or that it
/// holds one (`x != null`, ..; not `when_empty`), `this.x` included.
fn null_test(c: &str, x: &str, when_empty: bool) -> bool {
    let empty = [
        "{x}==null",
        "null=={x}",
        "{x}===null",
        "{x}.isNullOrEmpty()",
        "{x}.isNullOrBlank()",
        "{x}.isEmpty()",
        "{x}.isBlank()",
        "Objects.isNull({x})",
        "StringUtils.isEmpty({x})",
        "StringUtils.isBlank({x})",
        "{x}.is_none()",
        "{x}.is_empty()",
        "letNone={x}",
    ];
    let present = [
        "{x}!=null",
        "null!={x}",
        "{x}!==null",
        "Objects.nonNull({x})",
        "!{x}.isNullOrEmpty()",
        "!{x}.isNullOrBlank()",
        "StringUtils.isNotEmpty({x})",
        "StringUtils.isNotBlank({x})",
        "{x}.is_some()",
        "!{x}.is_empty()",
    ];
    // The arm must run only while `x` holds none: `x == null || retried` runs it on other
    // attempts too (and `x != null && ..` being false does not say `x` holds none), unless
    // every part of the condition tests `x` (`x == null || x.isEmpty()`).
    let connective = if when_empty { "||" } else { "&&" };
    if c.contains(connective) && !c.split(connective).all(|part| part.contains(x)) {
        return false;
    }
    let pats: &[&str] = if when_empty { &empty } else { &present };
    [x.to_string(), format!("this.{x}"), format!("self.{x}")]
        .iter()
        .any(|name| {
            pats.iter().any(|p| {
                let pat = p.replace("{x}", name);
                c.match_indices(&pat).any(|(i, _)| {
                    // `x` starts the pattern or follows `(`/`!`: not the tail of a longer name.
                    let before = c[..i].chars().next_back();
                    let head_is_name = p.starts_with("{x}");
                    !head_is_name
                        || before.is_none_or(|ch| !(ch.is_alphanumeric() || ch == '_' || ch == '.'))
                }) && (!when_empty || !c.contains(&format!("!{pat}")))
            })
        })
}

/// Whether `offset` lies, inside a function that retries by calling itself
/// (`inferred.self-retry`), in an `if`/`else` arm opposite to every call of itself
/// ([`crate::model::FileModel::exclusive`]): a run that evaluates it does not recurse, so it
/// is the last run of the chain and the value is evaluated once per operation (the
/// dead-letter branch after the attempts ran out, the success branch).
fn once_per_recursion(ctx: &Ctx, boundary: ScopeId, offset: usize) -> bool {
    let m = ctx.model;
    let Some(b) = ctx.facts.boundaries[boundary].as_ref() else {
        return false;
    };
    if b.entry != "inferred.self-retry" {
        return false;
    }
    let Some(name) = m.function_info(boundary).map(|f| f.name.as_str()) else {
        return false;
    };
    let mut again = m
        .calls
        .iter()
        .filter(|c| {
            c.callee == name
                && matches!(c.receiver.as_deref(), None | Some("this") | Some("self"))
                && m.enclosing_function(c.scope) == Some(boundary)
        })
        .peekable();
    again.peek().is_some() && again.all(|c| m.exclusive(offset, c.span.start))
}

/// Whether `offset` lies in a Rust branch that always leaves the retry loop `boundary`
/// ([`crate::model::FileModel::exit_blocks`]) with no other loop between them: it runs once,
/// on the attempt that ends the loop (the event published on success, the failure recorded
/// after the last attempt), not once per attempt.
fn once_in_loop(ctx: &Ctx, boundary: ScopeId, offset: usize) -> bool {
    let m = ctx.model;
    // A periodic job's loop left once still runs once in every replica.
    if !matches!(m.scopes[boundary].kind, crate::model::ScopeKind::Loop(_))
        || ctx.boundary_kind(Some(boundary)) != Some(BoundaryKind::Retry)
    {
        return false;
    }
    let lspan = m.scopes[boundary].span;
    m.exit_blocks.iter().any(|e| {
        e.start <= offset
            && offset < e.end
            && lspan.start <= e.start
            && e.end <= lspan.end
            // No loop nested between the boundary and the branch: a `break` there leaves
            // that inner loop only.
            && !m.scopes.iter().enumerate().any(|(i, s)| {
                i != boundary
                    && matches!(s.kind, crate::model::ScopeKind::Loop(_))
                    && lspan.start <= s.span.start
                    && s.span.end <= lspan.end
                    && s.span.start <= e.start
                    && e.end <= s.span.end
            })
    })
}

/// Whether the fresh value at `origin` is the "get or create" of a store that outlives the
/// attempt: it is assigned to a name that was read from `store.get(..)` earlier in the same
/// function and is written back with `store.put(.., name)` / `store.set(name)` after it
/// (`String id = MDC.get(H); if (id == null) { id = newId(); MDC.put(H, id); }`, a
/// `ThreadLocal`, a map). The next attempt reads the stored value instead of minting again,
/// so the value is not per attempt.
fn stored_for_next_attempt(ctx: &Ctx, origin: &crate::flow::Origin) -> bool {
    let m = ctx.model;
    let holds = |v: crate::model::ValueId, inner: Span| m.values[v].span.contains(inner);
    let name_of = |inner: Span| -> Option<&str> {
        m.assigns
            .iter()
            .find(|a| holds(a.value, inner))
            .map(|a| a.name.as_str())
            .or_else(|| {
                m.bindings
                    .iter()
                    .find(|b| b.value.is_some_and(|v| holds(v, inner)))
                    .map(|b| b.name.as_str())
            })
    };
    let Some(name) = name_of(origin.span) else {
        return false;
    };
    let Some(func) = m.enclosing_function(origin.scope) else {
        return false;
    };
    let in_func = |c: &crate::model::Call| m.enclosing_function(c.scope) == Some(func);
    // A store declared inside the loop or lambda that runs per attempt is new each time,
    // except the operation's context a retry library passes to every attempt
    // ([`crate::catalogue::BoundaryEntry::context_params`]).
    let per_attempt_local = |store: &str| {
        m.bindings.iter().any(|b| {
            b.name == store
                && !operation_context(ctx, b)
                && m.ancestors(b.scope).any(|s| {
                    matches!(m.scopes[s].kind, ScopeKind::Loop(_) | ScopeKind::Lambda(_))
                        && m.scopes[s].span.contains(origin.span)
                })
        })
    };
    // A store emptied in the function (`MDC.remove(..)` in a `finally`, `keys.clear()` in a
    // `catch`) does not hand the value to the next attempt.
    let emptied = |store: &str| {
        m.calls.iter().any(|c| {
            in_func(c)
                && c.receiver.as_deref() == Some(store)
                && matches!(c.callee.as_str(), "remove" | "clear" | "delete" | "evict")
        })
    };
    m.calls.iter().any(|put| {
        matches!(
            put.callee.as_str(),
            "put" | "set" | "putIfAbsent" | "setAttribute" | "insert"
        ) && put.span.start >= origin.span.end
            && in_func(put)
            && put.args.iter().any(|a| {
                let ident = m.values[a.value].ident.as_deref();
                ident == Some(name) || ident.is_some_and(|i| passes_on(m, put, i, origin.span))
            })
            && put.receiver.as_deref().is_some_and(|store| {
                !per_attempt_local(store)
                    && !emptied(store)
                    && m.calls.iter().any(|get| {
                        matches!(get.callee.as_str(), "get" | "getAttribute")
                            && get.receiver.as_deref() == Some(store)
                            && get.span.end <= origin.span.start
                            && in_func(get)
                            && name_of(get.span) == Some(name)
                            // Minted only when the store had none.
                            && ctx.text.get(get.span.end..origin.span.start).is_some_and(|t| {
                                ["null", "isEmpty", "isBlank", "?:", "is_none", "orElse"]
                                    .iter()
                                    .any(|w| t.contains(w))
                            })
                    })
            })
    })
}

/// Whether `ident`, read by `put`, is the value made at `origin` as a Kotlin scope
/// function hands it to its lambda: `put` lies in the lambda of an `also`/`let` called on
/// an expression holding `origin` (`UUID.randomUUID().toString().also { ctx.setAttribute(K,
/// it) }`), and `ident` is that lambda's parameter (`it` when it names none).
fn passes_on(m: &FileModel, put: &Call, ident: &str, origin: Span) -> bool {
    m.ancestors(put.scope).any(|s| {
        let ScopeKind::Lambda(l) = &m.scopes[s].kind else {
            return false;
        };
        let Some(owner) = l.owner_call.map(|c| &m.calls[c]) else {
            return false;
        };
        let param = l.params.first().map_or("it", |p| p.name.as_str());
        matches!(owner.callee.as_str(), "also" | "let")
            && param == ident
            && owner.span.contains(origin)
            && !m.scopes[s].span.contains(origin)
    })
}

/// Whether binding `b` is a parameter of a per-attempt lambda that receives one object for
/// the whole operation: the lambda is a boundary whose catalogue entry lists the
/// parameter's position in `context_params` (Spring Retry's `RetryContext`).
fn operation_context(ctx: &Ctx, b: &crate::model::Binding) -> bool {
    use crate::model::BindingKind;
    let m = ctx.model;
    let ScopeKind::Lambda(lambda) = &m.scopes[b.scope].kind else {
        return false;
    };
    if b.kind != BindingKind::Param {
        return false;
    }
    let Some(Some(boundary)) = ctx.facts.boundaries.get(b.scope) else {
        return false;
    };
    let Some(entry) = ctx
        .catalogue
        .boundaries
        .iter()
        .find(|e| e.id == boundary.entry)
    else {
        return false;
    };
    lambda
        .params
        .iter()
        .position(|p| p.name == b.name)
        .is_some_and(|k| entry.context_params.contains(&k))
}

/// Whether `call`, inside the counted retry loop `boundary`, constructs a value from the
/// loop's attempt counter (`Event::new(OrderRetrying { attempt, .. })` in `for attempt in
/// 0..=max`): it builds a record of this attempt, which is a different thing on every attempt, so a key it
/// mints per attempt is what it should be.
fn records_the_attempt(ctx: &Ctx, boundary: ScopeId, call: &Call) -> bool {
    let crate::model::ScopeKind::Loop(li) = &ctx.model.scopes[boundary].kind else {
        return false;
    };
    // A record is constructed (`Event::new(..)`, `RetryEvent(..)`, `new RetryEvent(..)`); a
    // function given the counter (`send_charge(order, attempt)`) may send the request itself.
    let constructs = call.is_new
        || call.callee.starts_with(char::is_uppercase)
        || (call.receiver.is_none()
            && call
                .path
                .last()
                .is_some_and(|t| t.starts_with(char::is_uppercase))
            && matches!(call.callee.as_str(), "new" | "of" | "from" | "create"));
    if !constructs {
        return false;
    }
    if li.keyword != "for" {
        return false;
    }
    let var = li
        .header
        .split(" in ")
        .next()
        .unwrap_or("")
        .trim()
        .trim_start_matches('(')
        .trim();
    let var = var.rsplit([' ', ':']).next().unwrap_or("").trim();
    if var.is_empty()
        || var == "_"
        || !var.chars().all(|c| c.is_alphanumeric() || c == '_')
        || !["attempt", "retr", "tries", "try"]
            .iter()
            .any(|w| var.to_ascii_lowercase().contains(w))
    {
        return false;
    }
    let args = ctx.snippet(call.span);
    let args = args.find('(').map_or("", |i| &args[i..]);
    crate::text::has_word(args, var)
}

/// Whether the key a builder setter puts into its field (`.idempotencyKey(k)`,
/// `.setIdempotencyKey(k)`) is replaced later in the same chain, before anything reads it:
/// by a later setter of the same field, or by a project builder method that always
/// assigns that field (`.withDefaults()` whose body sets `this.idempotencyKey = ..`, see
/// [`crate::index::FnDecl::overwrites`]). The value set first never leaves.
fn overwritten_later(ctx: &Ctx, setter: CallId) -> bool {
    let m = ctx.model;
    let call = &m.calls[setter];
    if call.args.len() != 1 || call.is_new || call.receiver.is_none() {
        return false;
    }
    let field_of = |callee: &str| -> String {
        let f = ["set", "with"]
            .iter()
            .find_map(|p| {
                callee
                    .strip_prefix(p)
                    .filter(|r| r.starts_with(|c: char| c.is_uppercase() || c == '_'))
            })
            .unwrap_or(callee);
        crate::catalogue::normalize_name(f)
    };
    let field = field_of(&call.callee);
    if !ctx.catalogue.keys.normalized_names.contains(&field) {
        return false;
    }
    let mut at = setter;
    // Walk the chain outwards: the call whose receiver is the current one.
    for _ in 0..64 {
        let Some((next, later)) = m
            .calls
            .iter()
            .enumerate()
            .find(|(_, c)| c.receiver_call == Some(at))
        else {
            return false;
        };
        if later.args.len() == 1 && field_of(&later.callee) == field {
            return true;
        }
        if later.args.is_empty()
            && later.callee != "build"
            && ctx.index.overwrites(later, ctx.path, &field)
        {
            return true;
        }
        at = next;
    }
    false
}

/// Computes [`Flows`] for one file.
pub fn flows(ctx: &Ctx) -> Flows {
    let m = ctx.model;
    let flow = Flow::new(m, ctx.catalogue)
        .with_attempt_lambdas(crate::classify::attempt_lambdas(m, ctx.facts))
        .keeping_windows();
    // (value, scope, label, call, the callee sends the key only from a handled `try`).
    let mut sinks: Vec<(ValueId, ScopeId, String, Option<CallId>, bool)> = ctx
        .facts
        .sinks
        .iter()
        .filter(|s| s.call.is_none_or(|c| !overwritten_later(ctx, c)))
        .map(|s| (s.value, s.scope, s.label.clone(), s.call, false))
        .collect();
    // Defaults of fields that a web handler in any file sends as a key, on a type the
    // framework builds from each request ([`crate::index::BoundKeyField`]): Kotlin
    // primary-constructor defaults and Java field initialisers.
    if !ctx.index.bound_key_fields.is_empty() {
        let type_scope = |name: &str| {
            m.scopes
                .iter()
                .position(|s| matches!(&s.kind, crate::model::ScopeKind::Type(t) if t.name == name))
        };
        let label = |ty: &str, field: &str, (at, handler): &(String, String)| {
            format!(
                "the `{field}` default of `{ty}`, which the web framework evaluates for each request that leaves it out and `{handler}` sends as a key ({at})"
            )
        };
        for cd in &m.ctor_defaults {
            // The whole object reaches the key (a data class's `toString` has every
            // property), or this property.
            if let Some(b) = ctx
                .index
                .bound_key_field(&cd.type_name, &cd.name)
                .or_else(|| ctx.index.bound_key_field(&cd.type_name, "*"))
            {
                let scope = type_scope(&cd.type_name).unwrap_or(0);
                sinks.push((
                    cd.value,
                    scope,
                    label(&cd.type_name, &cd.name, b),
                    None,
                    false,
                ));
            }
        }
        for b in &m.bindings {
            let (crate::model::BindingKind::Field, Some(v)) = (b.kind, b.value) else {
                continue;
            };
            let crate::model::ScopeKind::Type(t) = &m.scopes[b.scope].kind else {
                continue;
            };
            if let Some(k) = ctx.index.bound_key_field(&t.name, &b.name) {
                sinks.push((v, b.scope, label(&t.name, &b.name, k), None, false));
            }
        }
    }
    // Positional arguments bound to key parameters of project functions.
    for (cid, call) in m.calls.iter().enumerate() {
        if call.args.is_empty() || overwritten_later(ctx, cid) {
            continue;
        }
        for (a, i, pname) in ctx.index.key_args(call, ctx.path) {
            let arg = &call.args[a];
            let into = ctx
                .index
                .key_param_sink(call, ctx.path, i)
                .map(|at| format!(", which goes into the key at {at}"))
                .unwrap_or_default();
            sinks.push((
                arg.value,
                call.scope,
                format!("the `{pname}` parameter of `{}`{into}", call.callee),
                Some(cid),
                ctx.index.key_arg_handled(call, ctx.path, i),
            ));
        }
    }
    // Writes under a name another file declares a key: a header constant, or a Camel
    // exchange property a route copies into a key header.
    for w in &ctx.facts.named_writes {
        let Some((k, header)) = ctx.index.named_key(
            &w.name,
            w.qualifier.as_deref(),
            w.slot,
            m.language != crate::model::Language::Rust,
            ctx.path,
        ) else {
            continue;
        };
        let label = match w.slot {
            crate::classify::SlotKind::Header => {
                format!(
                    "the `{}` header (`{}`, declared at {})",
                    header, w.name, k.location
                )
            }
            crate::classify::SlotKind::ExchangeProperty => format!(
                "the exchange property `{}`, which the route at {} sends as the `{}` header",
                w.name, k.location, header
            ),
        };
        sinks.push((w.value, w.scope, label, Some(w.call), false));
    }
    let mut key_flows = Vec::new();
    for (value, scope, label, call, handled_in_callee) in sinks {
        let failure_at = call.map_or(m.values[value].span.start, |c| m.calls[c].span.start);
        for origin in flow.origins(value, &ctx.index.view(ctx.path)) {
            let per_attempt = |b: ScopeId| {
                !redelivery_handled(ctx, b, failure_at, handled_in_callee)
                    && !retried_read(ctx, b)
                    && !damaged(ctx, b, origin.span.start)
                    && !once_in_loop(ctx, b, origin.span.start)
                    && !once_per_recursion(ctx, b, origin.span.start)
            };
            let memoised = |b: ScopeId| {
                lazily_once(ctx, b, origin.span) || stored_for_next_attempt(ctx, &origin)
            };
            // A key memoised across the attempts of one boundary in a holder that an outer
            // boundary's attempt makes anew (`String[] key` declared inside a `@Retryable`
            // method, around the `RetryTemplate` whose attempts share it) is new on every
            // attempt of the outer one.
            let mut boundary = None;
            let mut at = common_boundary(m, ctx.facts, origin.scope, scope)
                .or_else(|| reactive_upstream_boundary(m, ctx.facts, origin.scope, scope));
            while let Some(b) = at {
                if !per_attempt(b) {
                    break;
                }
                if !memoised(b) {
                    boundary = Some(b);
                    break;
                }
                at = m.scopes[b]
                    .parent
                    .and_then(|p| common_boundary(m, ctx.facts, p, scope));
            }
            key_flows.push(KeyFlow {
                origin,
                sink_label: label.clone(),
                sink_scope: scope,
                sink_span: m.values[value].span,
                sink_call: call,
                boundary,
            });
        }
    }
    let mut mint_calls = Vec::new();
    for (cid, entry) in &ctx.facts.library_mints {
        let call = &m.calls[*cid];
        let Some(b) = m
            .ancestors(call.scope)
            .find(|s| ctx.facts.boundaries[*s].is_some())
        else {
            continue;
        };
        if redelivery_handled(ctx, b, call.span.start, false)
            || retried_read(ctx, b)
            || damaged(ctx, b, call.span.start)
        {
            continue;
        }
        let e = &ctx.catalogue.minting_calls[*entry];
        mint_calls.push(MintCall {
            call: *cid,
            info: MintInfo {
                source: e.source.clone(),
                kind: SourceKind::Random,
                location: e.label.clone(),
                function: call.callee.clone(),
            },
            boundary: b,
            more_locations: Vec::new(),
            ambiguous: None,
        });
    }
    for (cid, call) in m.calls.iter().enumerate() {
        if ctx.facts.library_mints.iter().any(|(c, _)| *c == cid) {
            continue;
        }
        let Some(b) = m
            .ancestors(call.scope)
            .find(|s| ctx.facts.boundaries[*s].is_some())
        else {
            continue;
        };
        // A call named like an enclosing function is a delegation to another object's
        // method of the same name (`http.send(..)` inside `send`), or recursion; neither
        // is a helper call into the boundary.
        // In a callback, though, a call of the function that enqueued it (outside the
        // callback, with no receiver or `this`) is the re-invocation the callback retries
        // by (`onFailure` calling `charge(body, attempt + 1)`).
        let reinvoked = ctx.facts.boundaries[b]
            .as_ref()
            .is_some_and(|bd| bd.kind == BoundaryKind::Callback)
            && call.receiver.as_deref().is_none_or(|r| r == "this")
            && call.path.len() <= 1
            && m.ancestors(b)
                .filter(|s| *s != b)
                .filter_map(|s| m.function_info(s))
                .any(|f| f.name == call.callee && callback_retries(ctx, b, call, f));
        if !reinvoked
            && m.ancestors(call.scope)
                .filter_map(|s| m.function_info(s))
                .any(|f| f.name == call.callee)
        {
            continue;
        }
        if redelivery_handled(
            ctx,
            b,
            call.span.start,
            ctx.index.mint_handled(call, ctx.path),
        ) || retried_read(ctx, b)
            || damaged(ctx, b, call.span.start)
            || once_in_loop(ctx, b, call.span.start)
            || once_per_recursion(ctx, b, call.span.start)
            || records_the_attempt(ctx, b, call)
            || base_key_overridden(ctx, cid)
        {
            continue;
        }
        // A constructor of a class this file declares is that class's, not a namesake's
        // in another module.
        let own_type = call.callee.starts_with(char::is_uppercase)
            && m.scopes.iter().any(
                |s| matches!(&s.kind, crate::model::ScopeKind::Type(t) if t.name == call.callee),
            );
        if let Some(r) = ctx.index.mints(call, ctx.path).filter(|r| {
            !own_type
                || r.infos.iter().any(|i| {
                    i.location
                        .strip_prefix(ctx.path)
                        .is_some_and(|l| l.starts_with(':'))
                })
        }) {
            mint_calls.push(MintCall {
                call: cid,
                info: r.infos[0].clone(),
                boundary: b,
                more_locations: r.infos[1..].iter().map(|i| i.location.clone()).collect(),
                ambiguous: r.ambiguous().then_some((r.minting, r.candidates)),
            });
        }
    }
    Flows {
        key_flows,
        mint_calls,
    }
}

impl Ctx<'_> {
    pub fn boundary(&self, scope: ScopeId) -> &Boundary {
        self.facts.boundaries[scope]
            .as_ref()
            .expect("boundary scope")
    }

    pub fn boundary_kind(&self, scope: Option<ScopeId>) -> Option<BoundaryKind> {
        scope.and_then(|s| self.facts.boundaries[s].as_ref().map(|b| b.kind))
    }

    pub fn snippet(&self, span: Span) -> &str {
        self.text.get(span.start..span.end).unwrap_or("")
    }

    pub fn line_of(&self, offset: usize) -> usize {
        self.lines.position(self.text, offset).line
    }

    fn boundary_ref(&self, scope: ScopeId) -> BoundaryRef {
        let b = self.boundary(scope);
        let p = self.lines.position(self.text, b.anchor.start);
        BoundaryRef {
            kind: b.kind.name().to_string(),
            label: b.label.clone(),
            line: p.line,
            column: p.column,
            span: b.anchor,
            path: None,
            flavor: b.flavor.clone(),
            user_label: self
                .catalogue
                .boundaries
                .iter()
                .find(|e| e.id == b.entry)
                .filter(|e| e.user && !e.label_default && !e.label.is_empty())
                .map(|e| e.label.clone()),
        }
    }

    /// `f` (built with no boundary scope) with the construct that runs its code again
    /// named as its boundary: `kind` (`retry`), `label`, the `anchor` a snippet marks, and
    /// a catalogue-style `flavor`. The fingerprint counts the construct as a boundary's.
    pub fn with_construct(
        &self,
        mut f: Finding,
        kind: &str,
        label: &str,
        anchor: Span,
        flavor: &str,
    ) -> Finding {
        let p = self.lines.position(self.text, anchor.start);
        let normalized: String = f.source.chars().filter(|c| !c.is_whitespace()).collect();
        let path = crate::finding::project_relative(self.path);
        let enclosing = self.enclosing_names(f.span.start);
        let sig = format!("{kind}:{label}");
        f.fingerprint =
            crate::finding::fingerprint(&[f.rule, &path, &enclosing, &sig, &normalized]);
        f.boundary = Some(BoundaryRef {
            kind: kind.to_string(),
            label: label.to_string(),
            line: p.line,
            column: p.column,
            span: anchor,
            path: None,
            flavor: flavor.to_string(),
            user_label: None,
        });
        f
    }

    /// Builds a finding at `span` (the ephemeral expression).
    pub fn finding(
        &self,
        rule: &'static str,
        span: Span,
        boundary: Option<ScopeId>,
        sink: &str,
        message: String,
        help: String,
    ) -> Finding {
        let meta = crate::rules::rule(rule).expect("known rule");
        let start = self.lines.position(self.text, span.start);
        let end = self.lines.position(self.text, span.end);
        let source = self.snippet(span).to_string();
        let normalized: String = source.chars().filter(|c| !c.is_whitespace()).collect();
        let path = crate::finding::project_relative(self.path);
        let enclosing = self.enclosing_names(span.start);
        let boundary_sig = boundary
            .map(|b| {
                let bd = self.boundary(b);
                format!("{}:{}", bd.kind.name(), bd.label)
            })
            .unwrap_or_default();
        let fingerprint =
            crate::finding::fingerprint(&[rule, &path, &enclosing, &boundary_sig, &normalized]);
        Finding {
            rule,
            severity: meta.severity,
            path: self.path.to_string(),
            line: start.line,
            column: start.column,
            end_line: end.line,
            end_column: end.column,
            message,
            help,
            boundary: boundary.map(|b| self.boundary_ref(b)),
            source,
            span,
            sink: sink.to_string(),
            fingerprint,
            fix: None,
            no_fix: None,
            also: Vec::new(),
            ambiguous: false,
        }
    }

    /// Names of the types and functions enclosing `offset`, outermost first, `::`-joined
    /// (`BillingJob::runBilling`). Used for fingerprints.
    pub fn enclosing_names(&self, offset: usize) -> String {
        let m = self.model;
        let flow_scope = self
            .scopes
            .get_or_init(|| ScopeLookup::new(m))
            .innermost(offset);
        let mut names: Vec<&str> = m
            .ancestors(flow_scope)
            .filter_map(|s| match &m.scopes[s].kind {
                ScopeKind::Function(f) => Some(f.name.as_str()),
                ScopeKind::Type(t) => Some(t.name.as_str()),
                _ => None,
            })
            .collect();
        names.reverse();
        names.join("::")
    }

    /// The name a hoisted key gets in this file's language.
    pub fn key_local(&self) -> &'static str {
        match self.model.language {
            Language::Rust => "idempotency_key",
            _ => "idempotencyKey",
        }
    }

    /// A declaration of the hoisted key in this file's language.
    pub fn hoist_line(&self, expr: &str) -> String {
        let name = self.key_local();
        match self.model.language {
            Language::Kotlin => format!("val {name} = {expr}"),
            Language::Java => format!("final var {name} = {expr};"),
            Language::Rust => format!("let {name} = {expr};"),
        }
    }

    /// The idemkey helper call that derives a key from business identity.
    pub fn derive_example(&self) -> &'static str {
        match self.model.language {
            Language::Rust => "idemkey::derive(\"charge\", [customer_id, billing_period])",
            _ => "IdemKey.derive(\"charge\", customerId, billingPeriod)",
        }
    }

    /// The idemkey helper call that mints a key once per intent.
    pub fn mint_example(&self) -> &'static str {
        match self.model.language {
            Language::Rust => "idemkey::mint()",
            _ => "IdemKey.mint()",
        }
    }

    /// The expression to hoist for a flow: the sink's value when it contains the origin
    /// and is short (`UUID.randomUUID().toString()`), else the origin itself.
    pub fn hoist_expr(&self, kf: &KeyFlow) -> String {
        let sink = self.snippet(kf.sink_span);
        if kf.sink_span.contains(kf.origin.span)
            && sink.len() <= 80
            && !sink.contains('\n')
            && !sink.trim_start().starts_with('{')
        {
            sink.to_string()
        } else {
            self.snippet(kf.origin.span).to_string()
        }
    }

    /// The local declared inside `boundary` whose initializer contains `span`, if any.
    pub fn local_holding(&self, span: Span, boundary: ScopeId) -> Option<&Binding> {
        let m = self.model;
        m.bindings.iter().find(|b| {
            b.kind == BindingKind::Local
                && m.is_within(b.scope, boundary)
                && b.value.is_some_and(|v| m.values[v].span.contains(span))
        })
    }

    /// "before `retryOnTransient { … }` (line 12)". A label that goes on to say why the
    /// call retries ("`Retry.attemptThrice(…)`, which calls `body` again … (Helper.java:10)")
    /// may end with another file's location, so this file's line goes right after the call:
    /// "before `Retry.attemptThrice(…)` at line 12, which calls …".
    pub fn before_boundary(&self, scope: ScopeId) -> String {
        let b = self.boundary(scope);
        let line = self.line_of(b.anchor.start);
        let label = the_loop(&b.label);
        match label.split_once(", which ") {
            Some((call, why)) => format!("before {call} at line {line}, which {why}"),
            // A label ending in its own parenthesis (a configured helper's `label`,
            // "`Patiently.persist(…)` (Acme patient retry)") takes the line inside it.
            None => match label.strip_suffix(')') {
                Some(head) if head.contains(" (") => format!("before {head}, line {line})"),
                _ => format!("before {label} (line {line})"),
            },
        }
    }

    /// Describes an origin for messages: "`UUID.randomUUID()`" or "`newKey()` (which
    /// returns `UUID.randomUUID()`, Keys.kt:4)".
    pub fn origin_desc(&self, o: &Origin) -> String {
        match &o.helper {
            // An attempt counter's display already reads as prose: "`attempt` (the
            // attempt counter)".
            None if o.display.starts_with('`') => o.display.clone(),
            None => format!("`{}`", o.display),
            Some(h) => match h.ambiguous {
                None => format!(
                    "`{}` (which returns `{}` from {})",
                    o.display, h.source, h.location
                ),
                Some((k, n)) => format!(
                    "`{}` (which may return `{}` from {}: {k} of the {n} declarations it may call {}; the call's receiver does not say which runs)",
                    o.display,
                    h.source,
                    h.location,
                    if k == 1 { "does" } else { "do" }
                ),
            },
        }
    }

    /// Builds a finding whose ephemeral expression is `origin` ([`Self::finding`] at the
    /// origin's span). When the origin is a call only some of whose candidate
    /// declarations return a fresh value ([`crate::flow::HelperInfo::ambiguous`]), the
    /// finding is marked ambiguous and reported one severity lower.
    pub fn origin_finding(
        &self,
        rule: &'static str,
        origin: &Origin,
        boundary: Option<ScopeId>,
        sink: &str,
        message: String,
        help: String,
    ) -> Finding {
        let mut f = self.finding(rule, origin.span, boundary, sink, message, help);
        if origin
            .helper
            .as_ref()
            .is_some_and(|h| h.ambiguous.is_some())
        {
            f.ambiguous = true;
            f.severity = f.severity.lower();
        }
        f
    }
}

/// Whether `call`, made in callback boundary `b` to the function `f` that enqueued the
/// callback, retries the call rather than moving on to other work (`exportFrom(page + 1)`,
/// `sendNext()` after a success): it passes `f`'s own parameters back unchanged, except
/// those named for attempts (`attempt + 1`), and it sits in `onFailure` or advances such a
/// counter. A function without parameters is not judged (its call says nothing of what it
/// sends).
fn callback_retries(ctx: &Ctx, b: ScopeId, call: &Call, f: &FunctionInfo) -> bool {
    let m = ctx.model;
    // With no parameter the call says nothing of what it sends (`sendNext()` takes the
    // next item from a queue).
    if f.params.is_empty() || call.args.len() != f.params.len() {
        return false;
    }
    let mut advances = false;
    for (a, p) in call.args.iter().zip(&f.params) {
        let t: String = ctx
            .snippet(m.values[a.value].span)
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if t == p.name {
            continue;
        }
        if crate::model::names_attempts(&p.name) && crate::text::has_word(&t, &p.name) {
            advances = true;
            continue;
        }
        return false;
    }
    let in_on_failure = m.function_info(b).is_some_and(|cb| cb.name == "onFailure");
    in_on_failure || advances
}

/// Runs every rule over one file and returns its findings, deduplicated per rule and
/// source span, sorted.
pub fn check_file(ctx: &Ctx) -> Vec<Finding> {
    let flows = flows(ctx);
    let mut out = Vec::new();
    key_in_interceptor::check(ctx, &flows, &mut out);
    interceptor_mints_key::check(ctx, &flows, &mut out);
    key_in_retry_scope::check(ctx, &flows, &mut out);
    key_in_callback_retry::check(ctx, &flows, &mut out);
    unlocked_scheduled_job::check(ctx, &flows, &mut out);
    time_in_key::check(ctx, &flows, &mut out);
    let mut seen = std::collections::HashSet::new();
    out.retain(|f| seen.insert((f.rule, f.span)));
    crate::identity::personalise_help(ctx.model, ctx.derive_example(), &mut out);
    out.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    out
}

/// Whether an interceptor-kind boundary re-evaluates per attempt, and why (for messages).
#[derive(Clone, Debug)]
pub struct InterceptorCase {
    /// The interceptor runs again for retries the scanned code shows or the library does.
    pub per_attempt: bool,
    /// The interceptor reads the key header first (it only mints a missing key).
    pub fallback: bool,
    /// Sentence explaining which case applies.
    pub why: String,
    /// The interceptor never runs: a hook class that nothing in the scanned code registers,
    /// where the library runs only registered hooks (Speakeasy SDKs). Neither rule reports it.
    pub dead: bool,
}

/// Whether the interceptor `scope` makes its own retries of `proceed` (a retry loop or
/// retry lambda inside it that calls `proceed`/`execute`/`run`) and the key is put in
/// place (`offset`) before that retry starts: every attempt the interceptor makes then
/// shares the key, so minting it there is not a per-attempt defect of the interceptor.
pub fn mint_before_own_retry(ctx: &Ctx, scope: ScopeId, offset: usize) -> bool {
    let m = ctx.model;
    (0..m.scopes.len()).any(|s| {
        s != scope
            && m.is_within(s, scope)
            && ctx
                .facts
                .boundaries
                .get(s)
                .and_then(|b| b.as_ref())
                .is_some_and(|b| b.kind == BoundaryKind::Retry)
            && offset < m.scopes[s].span.start
            && m.calls.iter().any(|c| {
                m.is_within(c.scope, s)
                    && matches!(c.callee.as_str(), "proceed" | "execute" | "run" | "send")
            })
    })
}

/// Works out the case for an interceptor boundary, following each library's documented
/// semantics (see `rules/docs/key-in-interceptor.md`).
pub fn interceptor_case(
    ctx: &Ctx,
    scope: ScopeId,
    mint: Span,
    sink: Option<Span>,
) -> InterceptorCase {
    let b = ctx.boundary(scope);
    let m = ctx.model;
    // The interceptor checks for a caller-set key first, inline or through a helper
    // (`if (!needsKey(request)) return chain.proceed(request)`).
    let fallback = ctx
        .facts
        .header_reads
        .iter()
        .any(|(_, s)| m.is_within(*s, scope))
        || m.calls
            .iter()
            .any(|c| m.is_within(c.scope, scope) && ctx.index.reads_key_header(c, ctx.path));
    // A Feign interceptor mints only a missing key when its own template says so, at the
    // mint ([`feign_template_guard`]).
    let feign_guarded = b.flavor == "feign" && feign_template_guard(ctx, scope, mint, sink);
    let fallback = if b.flavor == "feign" {
        feign_guarded
    } else {
        fallback
    };
    let idx = ctx.index;
    // The call-level retry sites that reach the client(s) this interceptor is registered
    // on, when the index can tell ([`crate::index::ProjectIndex::client_retry_sites`]),
    // else every retry that reaches OkHttp.
    let regs: Vec<&crate::index::Registration> = match b.flavor.as_str() {
        "okhttp-application" => b
            .owner_call
            .and_then(|c| {
                let off = m.calls[c].name_span.start;
                idx.registrations
                    .iter()
                    .find(|r| r.path == ctx.path && r.offset == off)
            })
            .into_iter()
            .collect(),
        "okhttp-class" => b
            .type_name
            .as_deref()
            .map(|t| {
                idx.registrations_of(t)
                    .filter(|r| r.stage == "application")
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    };
    let okhttp_sites: Vec<&String> = {
        let per_client: Option<Vec<&String>> = (!regs.is_empty())
            .then(|| {
                regs.iter()
                    .map(|r| {
                        r.client
                            .as_ref()
                            .and_then(|h| idx.client_retry_sites.get(h))
                    })
                    .collect::<Option<Vec<_>>>()
            })
            .flatten()
            .map(|lists| {
                let mut all: Vec<&String> = lists.into_iter().flatten().collect();
                all.sort();
                all.dedup();
                all
            });
        per_client.unwrap_or_else(|| idx.okhttp_retry_sites.iter().collect())
    };
    // The `call.clone()` sites that may clone a call of those clients (every site when a
    // registration's client cannot be told).
    let clone_sites: Vec<&String> = {
        let clients: Option<Vec<&str>> = (!regs.is_empty())
            .then(|| {
                regs.iter()
                    .map(|r| r.client.as_deref())
                    .collect::<Option<Vec<_>>>()
            })
            .flatten()
            .filter(|c| c.iter().all(|x| !x.is_empty()));
        match clients {
            Some(cs) => {
                let mut all: Vec<&String> = cs
                    .into_iter()
                    .flat_map(|c| idx.clone_sites_for(Some(c)))
                    .collect();
                all.sort();
                all.dedup();
                all
            }
            None => idx.clone_sites_for(None),
        }
    };
    let clone_hint = match clone_sites.first() {
        Some(loc) => format!(" (the scanned code clones calls, e.g. at {loc})"),
        None => String::new(),
    };
    let retry_hint = match okhttp_sites.first() {
        Some(loc) if clone_hint.is_empty() => {
            format!(" (the scanned code retries a call that reaches an HTTP client at {loc})")
        }
        _ => String::new(),
    };
    let call_level = format!(
        "application interceptors run once per `Call` (OkHttp's own retries and redirects reuse the header), but every call-level retry — `call.clone()`{clone_hint}, a re-invoked service method, or a retry wrapper around the call{retry_hint} — runs it again and sends a new key"
    );
    // Evidence that calls through an HTTP client are retried at the call level: a
    // `call.clone()` site, or a retry outside interceptors around a call that reaches a
    // Retrofit/Feign endpoint or OkHttp's `newCall` (an interceptor's own loop around
    // `proceed`, or a retry of a database call, is not).
    let call_level_retries = !clone_sites.is_empty() || !okhttp_sites.is_empty();
    let mut dead = false;
    let (per_attempt, why) = match b.flavor.as_str() {
        "apache-retry-exec" => (
            true,
            "Apache HttpClient runs request interceptors below its retry executor (`RetryExec` in 4.x, `HttpRequestRetryExec` in 5.x), once per attempt its retry handler or strategy makes".to_string(),
        ),
        "okhttp-network" => (
            true,
            "network interceptors run once per physical request, OkHttp's own retries, redirects and auth follow-ups included".to_string(),
        ),
        "okhttp-application" => {
            let reg = b.owner_call.and_then(|c| {
                let off = m.calls[c].name_span.start;
                idx.registrations
                    .iter()
                    .find(|r| r.path == ctx.path && r.offset == off)
            });
            match reg.and_then(|r| idx.retrying_before(r)) {
                Some(prev) => (
                    true,
                    format!(
                        "it is registered after an interceptor that calls `chain.proceed` more than once ({}), so every retry that interceptor makes runs this one again",
                        prev.location
                    ),
                ),
                None => (call_level_retries, call_level),
            }
        }
        "okhttp-class" => {
            let name = b.type_name.clone().unwrap_or_default();
            let regs: Vec<_> = idx.registrations_of(&name).collect();
            if let Some(r) = regs.iter().find(|r| r.stage == "network") {
                (
                    true,
                    format!(
                        "`{name}` is registered with `addNetworkInterceptor` ({}), and network interceptors run once per physical request, OkHttp's own retries, redirects and auth follow-ups included",
                        r.location
                    ),
                )
            } else if let Some((r, prev)) = regs
                .iter()
                .find_map(|r| idx.retrying_before(r).map(|p| (r, p)))
            {
                (
                    true,
                    format!(
                        "`{name}` is registered ({}) after an interceptor that calls `chain.proceed` more than once ({}), so every retry it makes runs `{name}` again",
                        r.location, prev.location
                    ),
                )
            } else if let Some(r) = regs.first() {
                (
                    call_level_retries,
                    format!("`{name}` is registered with `addInterceptor` ({}): {call_level}", r.location),
                )
            } else {
                (
                    call_level_retries,
                    format!(
                        "`{name}` is not registered in the scanned code: as a network interceptor it would run on every network attempt; as an application interceptor it runs once per `Call`, and again on every call-level retry (`call.clone()`, a re-invoked service method, a retry wrapper)"
                    ),
                )
            }
        }
        "spring-client-interceptor" => {
            let hint = retry_site_hint(&idx.spring_retry_sites, "an HTTP client");
            (
                !idx.spring_retry_sites.is_empty(),
                format!(
                    "RestTemplate and RestClient run their interceptors once per exchange and never retry it, but every call-level retry around the exchange — `@Retryable`, a `RetryTemplate`, a retry loop{hint} — runs the interceptor again and sends a new key"
                ),
            )
        }
        "apollo" => (
            false,
            "Apollo runs its interceptors once per execution of an operation, so the key belongs to that execution, not to the mutation: executing it again (a retry around the call, a \"try again\", Apollo Kotlin's `RetryOnErrorInterceptor`) runs the interceptor again and sends a new key".to_string(),
        ),
        // Feign hands one `RequestTemplate` to the interceptors on every `Retryer` attempt
        // of a call (`SynchronousMethodHandler` builds it once per method call), so a key
        // set only when the template has none is set on the first attempt and kept: only
        // a call-level retry, which builds a new template, mints another.
        "feign" if feign_guarded => {
            let hint = retry_site_hint(&idx.feign_retry_sites, "a Feign client");
            (
                !idx.feign_retry_sites.is_empty(),
                format!(
                    "Feign hands the same `RequestTemplate` to its interceptors on every `Retryer` attempt of a call, so the key set on the first attempt is kept, but every call of the client method builds a new template, so a call-level retry around it — `@Retryable`, a `RetryTemplate`, a retry loop{hint} — runs the interceptor again and sends a new key"
                ),
            )
        }
        "feign" => (
            true,
            "Feign runs request interceptors again on every attempt: on each call of the client method, so a call-level retry around it (`@Retryable`, a `RetryTemplate`, a retry loop) sends a new key, and before each attempt of its `Retryer` (vanilla `Feign.builder()` retries up to 5 times; Spring Cloud OpenFeign's default `Retryer.NEVER_RETRY` does not retry), where `RequestTemplate.header` appends, so a retried request carries the old and a new key".to_string(),
        ),
        "speakeasy-hook" => {
            if let Some(name) = b.type_name.as_deref()
                && idx.registrations_of(name).next().is_none()
            {
                dead = true;
            }
            (
                true,
                "Speakeasy-generated SDKs rebuild the request and run `beforeRequest` hooks inside their retry action, once per attempt, so a retried request gets the hook's header anew".to_string(),
            )
        }
        // Per attempt only when something re-subscribes: a reactive retry in the project
        // (the index cannot tie it to this filter's client; any counts).
        "webclient-filter" => (
            !idx.reactive_retry_sites.is_empty(),
            "WebClient runs `ExchangeFilterFunction`s again on every `retry()`/`retryWhen()` re-subscription (Spring Framework 5.2 and later)".to_string(),
        ),
        "reqwest-middleware" => {
            let name = b.type_name.clone().unwrap_or_default();
            let regs: Vec<_> = idx.registrations_of(&name).collect();
            if let Some((r, prev)) = regs
                .iter()
                .find_map(|r| idx.retrying_before(r).map(|p| (r, p)))
            {
                (
                    true,
                    format!(
                        "`{name}` is attached ({}) after `RetryTransientMiddleware` ({}), which runs every later middleware once per attempt",
                        r.location, prev.location
                    ),
                )
            } else if let Some(r) = regs.first() {
                (
                    false,
                    format!(
                        "`{name}` is attached ({}) before any retry middleware, so it runs once per request today, but the key still belongs to the caller: any retry around the request, or moving the middleware after `RetryTransientMiddleware`, makes it per attempt",
                        r.location
                    ),
                )
            } else {
                (
                    true,
                    format!(
                        "`{name}` is not attached in the scanned code: attached after `RetryTransientMiddleware` (the usual order) it runs once per attempt"
                    ),
                )
            }
        }
        _ => (true, "it runs once per attempt".to_string()),
    };
    InterceptorCase {
        per_attempt,
        fallback,
        why,
        dead,
    }
}

/// The parenthesised pointer to the first of `sites` (`path:line` of call-level retries
/// that reach `what`), or nothing when there is none.
fn retry_site_hint(sites: &[String], what: &str) -> String {
    match sites.first() {
        Some(loc) => format!(" (the scanned code retries a call that reaches {what} at {loc})"),
        None => String::new(),
    }
}

/// The name of the Feign interceptor `scope`'s `RequestTemplate`: its first parameter, or
/// Kotlin's implicit `it` of a lambda that declares none.
fn template_param<'c>(ctx: &'c Ctx, scope: ScopeId) -> Option<&'c str> {
    let m = ctx.model;
    match &m.scopes[scope].kind {
        ScopeKind::Function(f) => f.params.first().map(|p| p.name.as_str()),
        ScopeKind::Lambda(l) => match l.params.first() {
            Some(p) => Some(p.name.as_str()),
            None if m.language == crate::model::Language::Kotlin => Some("it"),
            None => None,
        },
        _ => None,
    }
}

/// Whether the key minted at `mint` in the Feign interceptor `scope` is put on the
/// template only while the template has no key: the mint lies in the arm of a test of the
/// interceptor's own `RequestTemplate` (`if (!template.headers().containsKey("K"))`, an
/// `else` of a presence test, the code after `if (hasKey(template)) return;`, or a helper
/// given the template that reads a key header), read directly or joined by `&&` to other
/// conditions (`||` may run it anyway), naming the header the key goes into when the test
/// names one (`sink`, the header call, as written). Feign hands that one template to the
/// interceptors on every `Retryer` attempt, so such a key is set on the first attempt and
/// kept. Not when the interceptor clears the header (`removeHeader`, `header(name)` with
/// no values): the test then sees none again. Reading another store (`MDC`, a
/// `ThreadLocal`) does not see the key an earlier attempt put on the template.
fn feign_template_guard(ctx: &Ctx, scope: ScopeId, mint: Span, sink: Option<Span>) -> bool {
    use crate::model::GuardKind;
    let m = ctx.model;
    let Some(template) = template_param(ctx, scope) else {
        return false;
    };
    let on_template = |r: &str| receiver_is(r, template);
    let in_scope = |c: &&Call| m.is_within(c.scope, scope);
    let arg_text = |c: &Call, i: usize| {
        c.args
            .get(i)
            .map(|a| code_text(ctx.snippet(m.values[a.value].span)))
    };
    // The header the key goes into, as written (`"Idempotency-Key"`, `KEY_HEADER`): the
    // first argument of the innermost call around the sink that has one.
    let sink_header: Option<String> = sink
        .and_then(|s| {
            m.calls
                .iter()
                .filter(|c| c.span.contains(s) && c.args.len() >= 2)
                .min_by_key(|c| c.span.end - c.span.start)
        })
        .and_then(|c| arg_text(c, 0));
    // Whether a header written `h` is the sink's: the same text, a string literal compared
    // case-insensitively (RFC 9110 5.1; Feign's header map is case-insensitive). Unknown
    // when the sink's header is not known: a yes.
    let same_header = |h: &str| {
        sink_header
            .as_deref()
            .is_none_or(|s| s == h || (h.starts_with('"') && s.eq_ignore_ascii_case(h)))
    };
    // The interceptor empties the header again before the test can see it: `removeHeader`
    // or a value-less `header(name)` of the sink's header (or one not written as a
    // literal), an empty value list, or `headers(..)`, which replaces them all.
    if m.calls.iter().filter(in_scope).any(|c| {
        c.receiver.as_deref().is_some_and(on_template)
            && match (c.callee.as_str(), c.args.len()) {
                ("removeHeader", 1) | ("header", 1) => {
                    arg_text(c, 0).is_none_or(|h| !h.starts_with('"') || same_header(&h))
                }
                ("header", 2) => arg_text(c, 1).is_some_and(|v| {
                    v.contains("emptyList") || v == "List.of()" || v.contains("EMPTY_LIST")
                }),
                ("headers", 1) => true,
                _ => false,
            }
    }) {
        return false;
    }
    // The calls in `cond` that read the sink's header from the template, as written
    // (whitespace and comments removed), each with whether its result is negated (a
    // helper in this file that returns `!..`): a part of the condition tests the key only
    // if it holds one.
    let template_reads = |cond: Span| -> Vec<(String, bool)> {
        m.calls
            .iter()
            .filter(in_scope)
            .filter(|c| cond.contains(c.span))
            .filter_map(|c| {
                let direct = ctx.facts.header_reads.iter().any(|(s, _)| *s == c.span)
                    && c.receiver.as_deref().is_some_and(on_template)
                    && arg_text(c, 0).is_some_and(|h| same_header(&h));
                if direct {
                    return Some((code_text(ctx.snippet(c.span)), false));
                }
                let at = c
                    .args
                    .iter()
                    .position(|a| m.values[a.value].ident.as_deref() == Some(template))?;
                if !ctx.index.reads_key_header(c, ctx.path) {
                    return None;
                }
                let negated = helper_reads_param(ctx, c, at)?;
                Some((code_text(ctx.snippet(c.span)), negated))
            })
            .collect()
    };
    let bspan = m.scopes[scope].span;
    m.guards
        .iter()
        .copied()
        .chain(early_exits(ctx, bspan, mint))
        .any(|(cond, arm, kind)| {
            if !(arm.contains(mint) && bspan.contains(arm)) {
                return false;
            }
            let reads = template_reads(cond);
            if reads.is_empty() {
                return false;
            }
            let text = code_text(ctx.snippet(cond));
            let text = strip_outer_parens(&text);
            // The arm runs only while the key is missing: under `if`, one part of an `&&`
            // says it is missing; under `else`, one part of an `||` says it is present.
            let (join, other, wanted_missing) = match kind {
                GuardKind::IfTrue => ("&&", "||", true),
                GuardKind::IfFalse => ("||", "&&", false),
                GuardKind::Elvis => return false,
            };
            // A negated compound (`!(a && b)`) is not split into its parts.
            if text.contains(other) || (text.starts_with("!(") && text.contains(join)) {
                return false;
            }
            text.split(join).any(|part| {
                let part = strip_outer_parens(part);
                reads.iter().any(|(r, negated)| {
                    part.contains(r.as_str())
                        && key_missing_test(part).map(|missing| missing != *negated)
                            == Some(wanted_missing)
                })
            })
        })
}

/// Whether the receiver text `r` is the variable `name` or starts with it
/// (`template`, `template.headers()`).
fn receiver_is(r: &str, name: &str) -> bool {
    let r = r.trim();
    r == name
        || r.strip_prefix(name)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Whether the helper `call` reads a key header from the argument at position `at` (a
/// `RequestTemplate`): `Some(negated)` when its declaration in this file reads one from
/// that parameter (`negated`: it returns the opposite, `return !t.headers()..`), or when
/// it is not declared here (the index says it reads a key header; trusted); `None` when
/// its declaration here reads another store (`MDC.get(..)`).
fn helper_reads_param(ctx: &Ctx, call: &Call, at: usize) -> Option<bool> {
    let m = ctx.model;
    // In the caller's own type (another class of the file may have a helper so named).
    let ty = m.enclosing_type(call.scope);
    let mut decls = m.scopes.iter().enumerate().filter(|(i, s)| {
        matches!(&s.kind, ScopeKind::Function(f) if f.name == call.callee && f.params.len() == call.args.len())
            && m.enclosing_type(*i) == ty
    });
    let Some((fid, _)) = decls.next() else {
        return Some(false);
    };
    if decls.next().is_some() {
        return None;
    }
    let ScopeKind::Function(f) = &m.scopes[fid].kind else {
        return None;
    };
    let param = f.params.get(at)?.name.as_str();
    let reads_param = ctx.facts.header_reads.iter().any(|(s, sc)| {
        m.is_within(*sc, fid)
            && m.calls.iter().any(|c| {
                c.span == *s && c.receiver.as_deref().is_some_and(|r| receiver_is(r, param))
            })
    });
    if !reads_param {
        return None;
    }
    let returns: Vec<String> = m
        .returns
        .iter()
        .filter(|r| m.enclosing_function(r.scope) == Some(fid))
        .map(|r| code_text(ctx.snippet(m.values[r.value].span)))
        .collect();
    match returns.as_slice() {
        [one] => Some(one.starts_with('!') && !one.starts_with("!=")),
        _ => None,
    }
}

/// Whether the condition part `part` (whitespace and comments removed) tests that a header
/// is missing (`Some(true)`: `!t.headers().containsKey(..)`, `!hasKey(t)`,
/// `t.headers().get(..) == null`, `...isEmpty()`) or present (`Some(false)`:
/// `t.headers().containsKey(..)`, `hasKey(t)`, `!= null`, `!...isEmpty()`); `None` when it
/// compares something else.
fn key_missing_test(part: &str) -> Option<bool> {
    let empty_call = [
        "isEmpty()",
        "isNullOrEmpty()",
        "isBlank()",
        "isNullOrBlank()",
    ];
    let negated = part.starts_with('!') && !part.starts_with("!=");
    let body = part.trim_start_matches('!');
    if let Some(lhs) = part
        .strip_suffix("==null")
        .or_else(|| part.strip_suffix("===null"))
    {
        return (!lhs.is_empty()).then_some(true);
    }
    if part.ends_with("!=null") || part.ends_with("!==null") {
        return Some(false);
    }
    if part.contains("==") || part.contains("!=") || part.contains('<') || part.contains('>') {
        return None;
    }
    if empty_call.iter().any(|e| body.ends_with(e)) {
        return Some(!negated);
    }
    body.ends_with(')').then_some(negated)
}

/// `c` without the parentheses around the whole of it (`((a == 0))` → `a == 0`).
fn strip_outer_parens(c: &str) -> &str {
    let mut c = c;
    while let Some(inner) = c.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        let mut depth = 0i32;
        if inner.chars().any(|ch| {
            depth += match ch {
                '(' => 1,
                ')' => -1,
                _ => 0,
            };
            depth < 0
        }) {
            break;
        }
        c = inner;
    }
    c
}

/// A boundary label as a noun phrase in prose: a loop's label (`` `loop` retry loop ``)
/// takes "the"; a call's (`` `retry.executeSupplier(…)` ``) reads as it is.
pub(crate) fn the_loop(label: &str) -> String {
    if label == "retry loop" || label.ends_with(" retry loop") {
        format!("the {label}")
    } else {
        label.to_string()
    }
}
