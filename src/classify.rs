//! The language-neutral classification pass: turns calls the catalogue knows into
//! [`Source`]s, and finds attempt boundaries, key sinks, header reads and locks in one
//! file's model. It knows the catalogue and the model, nothing of rules or reports.

use foldhash::{HashMap, HashMapExt};

use crate::catalogue::{BoundaryEntry, BoundaryForm, BoundaryKind, Catalogue, LockForm};
use crate::model::*;

/// A scope that is evaluated again per attempt (or per scheduler tick on each replica).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Boundary {
    pub kind: BoundaryKind,
    /// Catalogue entry id (`okhttp.network-interceptor-lambda`).
    pub entry: String,
    /// Finer classification from the catalogue (`okhttp-network`, `feign`, `retry`, ...).
    pub flavor: String,
    /// How messages name the construct: "`retryOnTransient { … }`".
    pub label: String,
    /// Where the construct starts (the call, the function name, the loop keyword).
    pub anchor: Span,
    /// For boundaries that are methods of a type: the type's simple name (empty when
    /// anonymous). For lambda boundaries: the owning call.
    pub type_name: Option<String>,
    pub owner_call: Option<CallId>,
}

/// Where an idempotency key is put.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sink {
    pub value: ValueId,
    pub scope: ScopeId,
    /// "the `Idempotency-Key` header", "`idempotencyKey`", "Stripe `setIdempotencyKey`".
    pub label: String,
    /// The call the sink is an argument of, if any.
    pub call: Option<CallId>,
}

/// What a [`NamedWrite`] writes.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum SlotKind {
    /// A header (or map entry) named by a constant: `addHeader(CLIENT_CORRELATION_ID, v)`.
    Header,
    /// A Camel exchange property: `exchange.setProperty(CORRELATION_ID, v)`.
    ExchangeProperty,
}

/// A value written under a name that only the project index can tell is a key: a header
/// set under a constant declared in another file, or an Apache Camel exchange property
/// that a route elsewhere copies into a key header
/// (`.setHeader("X-Reference-Id", simple("${exchangeProperty." + CORRELATION_ID + "}"))`).
/// Pass 2 turns it into a sink when [`crate::index::ProjectIndex::named_key`] knows the
/// name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedWrite {
    /// The constant's simple name (`CLIENT_CORRELATION_ID` of
    /// `Props.CLIENT_CORRELATION_ID`), or a property's literal name.
    pub name: String,
    /// The type the constant is qualified with (`Props`), when it is.
    pub qualifier: Option<String>,
    pub slot: SlotKind,
    pub value: ValueId,
    pub scope: ScopeId,
    pub call: CallId,
}

/// A distributed lock or claim acquisition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lock {
    pub label: String,
    pub span: Span,
    pub scope: ScopeId,
    /// ShedLock's annotation, which works only where the project enables ShedLock.
    pub requires_shedlock: bool,
}

/// Everything the classification pass learned about one file.
#[derive(Clone, Debug, Default)]
pub struct FileFacts {
    /// Parallel to `model.scopes`.
    pub boundaries: Vec<Option<Boundary>>,
    pub sinks: Vec<Sink>,
    pub locks: Vec<Lock>,
    /// Calls that read a key header (`request.header("Idempotency-Key")`): span and scope.
    pub header_reads: Vec<(Span, ScopeId)>,
    /// Library calls that mint a key per request (`[[minting_call]]`): the call and the
    /// index of its catalogue entry.
    pub library_mints: Vec<(CallId, usize)>,
    /// Writes under a name another file may declare a key (see [`NamedWrite`]).
    pub named_writes: Vec<NamedWrite>,
    /// Failure handlers that make a call of their protected code again ([`Reattempt`]).
    pub reattempts: Vec<Reattempt>,
}

/// A failure handler that runs an operation again: a `catch` clause (Java, Kotlin) that
/// makes the same call as its `try` block, or a recovery lambda (`exceptionally`,
/// `onErrorResume`, `recover`, ..) that makes the same call as the code it recovers
/// from. The second call evaluates its arguments, and runs the callee's body, again: a
/// key minted there is a new key for the same operation ([`reattempts`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reattempt {
    /// Byte span of the handler: the `catch` clause, or the recovery lambda.
    pub handler: Span,
    /// Byte span of where a message points at the handler: the `catch` keyword, or the
    /// recovery call's name.
    pub anchor: Span,
    /// How a message names it ("the `catch (ApiConnectionException e)` clause").
    pub label: String,
    /// The calls in the handler that repeat a call of the protected code (same callee,
    /// receiver text and number of arguments), each with the protected code's calls it
    /// repeats. Whether the arguments match is the rule's to judge (those that carry the
    /// key may differ).
    pub calls: Vec<(CallId, Vec<CallId>)>,
}

/// Recovery operators whose lambda runs after the code upstream failed, with the failure
/// (CompletableFuture `exceptionally`/`exceptionallyCompose`/`exceptionallyAsync`, Reactor
/// `onErrorResume`, RxJava `onErrorResumeNext`, Kotlin `Result.recover`/`recoverCatching`/
/// `getOrElse`).
const RECOVERY_CALLEES: &[&str] = &[
    "exceptionally",
    "exceptionallyAsync",
    "exceptionallyCompose",
    "exceptionallyComposeAsync",
    "onErrorResume",
    "onErrorResumeNext",
    "recover",
    "recoverCatching",
    "getOrElse",
];

/// Of [`RECOVERY_CALLEES`], Kotlin `Result`'s: recovery only on a `runCatching` chain.
const KOTLIN_RESULT_RECOVERY: &[&str] = &["recover", "recoverCatching", "getOrElse"];

/// Whether the receiver chain from call `c` (itself included) calls one of `names`.
fn chain_has(model: &FileModel, c: CallId, names: &[&str]) -> bool {
    let mut at = Some(c);
    let mut guard = 0;
    while let Some(i) = at {
        guard += 1;
        if guard > 256 {
            return false;
        }
        if names.contains(&model.calls[i].callee.as_str()) {
            return true;
        }
        at = model.calls[i].receiver_call;
    }
    false
}

/// The failure handlers of `model` that call again what they protect ([`Reattempt`]).
/// A `catch` clause's protected code is its `try` block, found in `text` by walking back
/// over the clauses before it to the block's braces; a recovery lambda's is the receiver
/// chain of its call. A repeated call counts only when the handler makes it directly (not
/// in a nested lambda or function) and the protected code makes one like it, outside any
/// conditional arm of its own.
pub fn reattempts(model: &FileModel, text: &str) -> Vec<Reattempt> {
    if model.language == Language::Rust {
        return Vec::new();
    }
    let same = |a: &Call, b: &Call| {
        a.callee == b.callee
            && a.args.len() == b.args.len()
            && crate::catalogue::receiver_text(a) == crate::catalogue::receiver_text(b)
    };
    let mut out = Vec::new();
    if model.catches.is_empty()
        && !model
            .calls
            .iter()
            .any(|c| RECOVERY_CALLEES.contains(&c.callee.as_str()))
    {
        return out;
    }
    // The calls by start offset: those within a span are a range of it.
    let mut by_start: Vec<(usize, CallId)> = model
        .calls
        .iter()
        .enumerate()
        .map(|(i, c)| (c.span.start, i))
        .collect();
    by_start.sort_unstable();
    let within = |span: Span| {
        let from = by_start.partition_point(|(s, _)| *s < span.start);
        by_start[from..]
            .iter()
            .take_while(move |(s, _)| *s < span.end)
            .map(|(_, i)| *i)
            .filter(move |i| span.contains(model.calls[*i].span))
    };
    // A call that is an operation of its own: not an argument of another call (a lambda
    // argument's body aside), and not a call on a value a source draws
    // (`UUID.randomUUID().toString()` is the key, not a call the handler repeats).
    let operation = |c: &Call| {
        !model.calls.iter().any(|o| {
            o.args
                .iter()
                .any(|a| a.lambda.is_none() && model.values[a.value].span.contains(c.span))
        }) && !model
            .sources
            .iter()
            .any(|s| s.span.start == c.span.start || s.span.contains(c.span))
    };
    // A name the handler assigns before offset `at` (`req = req.withCard(backup)`): the
    // call then sends another value under the same text.
    let reassigned_before = |handler: Span, at: usize, call_text: &str| {
        model.assigns.iter().any(|a| {
            handler.contains(a.span)
                && a.span.start < at
                && crate::text::has_word(call_text, &a.name)
        })
    };
    let mut push = |protected: Span,
                    protected_scope: Option<ScopeId>,
                    handler: Span,
                    handler_scope: ScopeId,
                    anchor: Span,
                    label: String| {
        let calls: Vec<(CallId, Vec<CallId>)> = within(handler)
            .filter(|i| model.calls[*i].scope == handler_scope)
            .filter_map(|i| {
                let c = &model.calls[i];
                let originals = within(protected)
                    .filter(|j| {
                        let p = &model.calls[*j];
                        !handler.contains(p.span)
                            && protected_scope.is_none_or(|s| p.scope == s)
                            && same(p, c)
                            // Made whenever the protected code runs, not on one of its
                            // paths: a handler repeating a call one arm of the `try` makes
                            // (`when (code) { .. -> redirect(..) }`) may be that call's
                            // first run, after another step failed.
                            && !model
                                .conditional
                                .iter()
                                .any(|k| protected.contains(*k) && k.contains(p.span))
                            && operation(p)
                    })
                    .collect::<Vec<_>>();
                let t = text.get(c.span.start..c.span.end).unwrap_or_default();
                (!originals.is_empty()
                    && operation(c)
                    && !reassigned_before(handler, c.span.start, t))
                .then_some((i, originals))
            })
            .collect();
        if !calls.is_empty() {
            out.push(Reattempt {
                handler,
                anchor,
                label,
                calls,
            });
        }
    };
    for k in &model.catches {
        let Some(t) = try_block_of(model, text, *k) else {
            continue;
        };
        let scope = model.innermost_scope_at(k.start);
        let head = text
            .get(k.start..k.end)
            .and_then(|c| c.split('{').next())
            .map(|h| h.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        let anchor = Span {
            start: k.start,
            end: (k.start + "catch".len()).min(k.end),
        };
        // The `try` block's own calls, not those of a lambda it hands elsewhere
        // (`pool.execute(() -> api.charge(..))`).
        push(
            t,
            Some(scope),
            *k,
            scope,
            anchor,
            format!("the `{head}` clause"),
        );
    }
    for (i, s) in model.scopes.iter().enumerate() {
        let ScopeKind::Lambda(l) = &s.kind else {
            continue;
        };
        let Some(owner) = l.owner_call else { continue };
        let call = &model.calls[owner];
        if !RECOVERY_CALLEES.contains(&call.callee.as_str()) {
            continue;
        }
        let Some(up) = call.receiver_call else {
            continue;
        };
        // Kotlin's `getOrElse`/`recover` are `Result`'s only on a `runCatching` chain
        // (`Map.getOrElse`, `List.getOrElse` run their lambda for a missing entry).
        if KOTLIN_RESULT_RECOVERY.contains(&call.callee.as_str())
            && !chain_has(
                model,
                up,
                &["runCatching", "mapCatching", "recoverCatching"],
            )
        {
            continue;
        }
        let protected = model.calls[up].span;
        push(
            protected,
            None,
            s.span,
            i,
            call.name_span,
            format!("the `{}(…)` handler", call.callee),
        );
    }
    out
}

/// The offset of the `open` byte that matches the `close` byte ending `bytes`, counting
/// nesting backwards (strings and comments are not told apart: a brace in one can only
/// make the match fail or land elsewhere, and the caller checks what precedes it).
fn matching_open(bytes: &[u8], open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    for (j, b) in bytes.iter().enumerate().rev() {
        if *b == close {
            depth += 1;
        } else if *b == open {
            depth = depth.checked_sub(1)?;
            if depth == 0 {
                return Some(j);
            }
        }
    }
    None
}

/// The byte span of the `try` block that the `catch` clause at `k` belongs to: back over
/// whitespace, comments and earlier `catch` clauses of the same statement to a `}`, then to
/// its matching `{`, which must follow `try` (or a try-with-resources header).
fn try_block_of(model: &FileModel, text: &str, k: Span) -> Option<Span> {
    let bytes = text.as_bytes();
    let mut at = k.start;
    loop {
        while at > 0 && bytes[at - 1].is_ascii_whitespace() {
            at -= 1;
        }
        // An earlier clause of the same `try`.
        match model.catches.iter().find(|c| c.end == at && c.start < at) {
            Some(c) => at = c.start,
            None => break,
        }
    }
    if at == 0 || bytes[at - 1] != b'}' {
        return None;
    }
    let close = at - 1;
    let open = matching_open(&bytes[..=close], b'{', b'}')?;
    let before = text[..open].trim_end();
    let is_try = |h: &str| {
        h.strip_suffix("try")
            .is_some_and(|r| !r.ends_with(|c: char| c.is_alphanumeric() || c == '_'))
    };
    // `try (Res r = ..)`: the parenthesis's match follows `try`.
    let resources = before.ends_with(')')
        && matching_open(before.as_bytes(), b'(', b')')
            .is_some_and(|j| is_try(before[..j].trim_end()));
    (is_try(before) || resources).then_some(Span {
        start: open,
        end: close + 1,
    })
}

/// Runs the pass: rewrites source calls into [`Source`] atoms in `model`, then classifies.
pub fn classify(model: &mut FileModel, text: &str, cat: &Catalogue) -> FileFacts {
    classify_in_project(model, text, cat, &|_| false)
}

/// [`classify`], where `declared_elsewhere(call)` says a call is of a function another file
/// of the project declares (on the type its receiver names, or a free function): such a
/// call is the project's own code, which the flow follows through the declaration, so a
/// `by_name` source (a key generator recognised by its name) does not apply to it, as for
/// a function this file declares. Pass 1 has no project index and passes a function that
/// says no ([`classify`]); pass 2 asks the index ([`crate::check::analyse_text_in_project`]).
pub fn classify_in_project(
    model: &mut FileModel,
    text: &str,
    cat: &Catalogue,
    declared_elsewhere: &dyn Fn(&Call) -> bool,
) -> FileFacts {
    lower_sources(model, text, cat, declared_elsewhere);
    let mut facts = FileFacts {
        boundaries: vec![None; model.scopes.len()],
        ..FileFacts::default()
    };
    boundaries(model, text, cat, &mut facts);
    paced_loops(model, &mut facts);
    self_retrying_functions(model, &mut facts);
    sinks(model, cat, &mut facts);
    named_writes(model, text, cat, &mut facts);
    locks(model, cat, &mut facts);
    header_reads(model, cat, &mut facts);
    facts.reattempts = reattempts(model, text);
    for (cid, call) in model.calls.iter().enumerate() {
        if let Some(i) = cat
            .minting_calls
            .iter()
            .position(|e| e.call.matches(model.language, call) && e.applies_in(text))
        {
            facts.library_mints.push((cid, i));
        }
    }
    facts
}

/// Lambdas with parameters that a retry boundary runs once per attempt and passes its
/// own values to (catalogue retry lambdas and lambdas passed to inferred retry
/// combinators, once [`crate::index::apply_inferred_boundaries`] has marked them). Not
/// reactive operators: a re-subscribed `flatMap(key -> ..)` receives the upstream's value
/// again, which `Mono.just(..)` evaluated once.
pub fn attempt_lambdas(model: &FileModel, facts: &FileFacts) -> Vec<ScopeId> {
    facts
        .boundaries
        .iter()
        .enumerate()
        .filter(|(s, b)| {
            b.as_ref().is_some_and(|b| {
                b.kind == crate::catalogue::BoundaryKind::Retry && b.flavor != "reactive"
            }) && matches!(&model.scopes[*s].kind, ScopeKind::Lambda(l) if !l.params.is_empty())
        })
        .map(|(s, _)| s)
        .collect()
}

fn lower_sources(
    model: &mut FileModel,
    text: &str,
    cat: &Catalogue,
    declared_elsewhere: &dyn Fn(&Call) -> bool,
) {
    let lang = model.language;
    let mut map: HashMap<CallId, SourceId> = HashMap::new();
    // A call of a function this file declares itself (free, or on a type declared here:
    // `IdempotencyKeyGenerator.generate()` next to `object IdempotencyKeyGenerator`) is the
    // project's own code, which the flow follows through its body: `by_name` sources (key
    // generators recognised by their name) do not apply to it.
    let own_types: foldhash::HashSet<&str> = model
        .scopes
        .iter()
        .filter_map(|s| match &s.kind {
            ScopeKind::Type(t) if !t.name.is_empty() => Some(t.name.as_str()),
            _ => None,
        })
        .collect();
    let own_fns: foldhash::HashSet<&str> = model
        .scopes
        .iter()
        .filter_map(|s| match &s.kind {
            ScopeKind::Function(f) => Some(f.name.as_str()),
            _ => None,
        })
        .collect();
    let mut owned: Vec<bool> = Vec::with_capacity(model.calls.len());
    for call in &model.calls {
        let own = own_fns.contains(call.callee.as_str())
            && match crate::catalogue::receiver_text(call) {
                None => true,
                Some(r) => own_types.contains(crate::catalogue::last_segment(&r)),
            };
        owned.push(own);
    }
    // `import static java.util.UUID.*;` (Java) / `import java.util.UUID.*` (Kotlin): a
    // free call of a function the file does not declare may be a member of one of these
    // types (JLS 7.5.4): it is a source when it is one as a member of them.
    let wildcard_owners: Vec<String> = if lang == Language::Rust {
        Vec::new()
    } else {
        text.lines()
            .filter_map(|l| {
                let l = l.trim_start();
                let p = l
                    .strip_prefix("import static ")
                    .or_else(|| l.strip_prefix("import "))?;
                let p = p.trim().trim_end_matches(';').trim();
                let owner = p.strip_suffix(".*")?.rsplit('.').next()?;
                owner
                    .starts_with(char::is_uppercase)
                    .then(|| owner.to_string())
            })
            .collect()
    };
    for (id, call) in model.calls.iter().enumerate() {
        let wildcard = || {
            if call.receiver.is_some() || !call.path.is_empty() || owned[id] || call.is_new {
                return None;
            }
            wildcard_owners.iter().find_map(|w| {
                let mut c = call.clone();
                c.receiver = Some(w.clone());
                c.path = vec![w.clone()];
                cat.match_source_entry(lang, &c, false)
            })
        };
        let mut by_name = false;
        let matched = match cat.match_source_entry_named(lang, call, !owned[id]) {
            Some((_, _, true)) if declared_elsewhere(call) => {
                cat.match_source_entry(lang, call, false)
            }
            Some((kind, display, named)) => {
                by_name = named;
                Some((kind, display))
            }
            None => None,
        };
        if let Some((kind, display)) = matched.or_else(wildcard) {
            let window =
                kind == SourceKind::Clock && crate::flow::clock_window(text, call.span, &display);
            model.sources.push(Source {
                kind,
                display,
                span: call.span,
                scope: call.scope,
                window,
                by_name,
            });
            map.insert(id, model.sources.len() - 1);
        }
    }
    if map.is_empty() {
        return;
    }
    for v in &mut model.values {
        for a in &mut v.atoms {
            if let Atom::Call(c) = a
                && let Some(s) = map.get(c)
            {
                *a = Atom::Source(*s);
            }
        }
    }
}

/// How messages name a call that owns a lambda: "`retry.executeSupplier { … }`",
/// "`Failsafe.with(…).get(…)`": the receiver as written from its last plain name on
/// (see [`receiver_chain`]).
pub fn call_label(model: &FileModel, call: &Call, trailing: bool) -> String {
    let recv = crate::catalogue::receiver_text(call).and_then(|r| receiver_chain(&r));
    let sep = if model.language == Language::Rust && call.receiver.is_none() {
        "::"
    } else {
        "."
    };
    let head = match recv {
        Some(r) => format!("{r}{sep}{}", call.callee),
        None => call.callee.clone(),
    };
    if trailing {
        format!("`{head} {{ … }}`")
    } else {
        format!("`{head}(…)`")
    }
}

/// The part of a receiver a label shows: from its last segment that is a plain name (a
/// variable, field or type) to its end, each call's arguments elided
/// (`Failsafe.with(policy)` → `Failsafe.with(…)`, `this.retryTemplate` → `retryTemplate`,
/// `backoff::future` → `future`, `RetryPolicy.builder().build()` →
/// `RetryPolicy.builder().build()`). `None` for a receiver that is no such chain (a
/// lambda, a block, an operator expression) or whose chain is longer than 48 characters.
pub fn receiver_chain(receiver: &str) -> Option<String> {
    // Split at `.` / `::` outside brackets, each segment with the separator before it.
    let mut segments: Vec<(&str, &str)> = Vec::new();
    let (mut depth, mut start, mut sep) = (0i32, 0usize, "");
    let b = receiver.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'.' if depth == 0 => {
                segments.push((sep, &receiver[start..i]));
                (start, sep) = (i + 1, ".");
            }
            b':' if depth == 0 && b.get(i + 1) == Some(&b':') => {
                segments.push((sep, &receiver[start..i]));
                (start, sep) = (i + 2, "::");
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    segments.push((sep, &receiver[start..]));
    // A name, with generic arguments dropped (`RetryPolicy.<R>builder()`, `retry<T>`).
    let name_of = |n: &str| -> Option<String> {
        let mut out = String::new();
        let mut angle = 0;
        for c in n.trim().chars() {
            match c {
                '<' => angle += 1,
                '>' if angle > 0 => angle -= 1,
                _ if angle > 0 => {}
                // `?` / `!!`: Kotlin's `retry?.run { … }`, `policy!!.get(…)`.
                c if c.is_alphanumeric() || "_$?!".contains(c) => out.push(c),
                _ => return None,
            }
        }
        (!out.is_empty() && angle == 0).then_some(out)
    };
    // Each segment: `name` (plain) or `name(args)` (one argument group, at its end).
    let mut shown: Vec<(&str, String, bool)> = Vec::new();
    for (sep, seg) in segments {
        let seg = seg.trim();
        match seg.find('(') {
            Some(open) if seg.ends_with(')') => {
                // The group that opens at `open` must close at the end: `f(a)(b)` is not
                // a plain call.
                let mut d = 0;
                for (j, c) in seg[open..].char_indices() {
                    match c {
                        '(' => d += 1,
                        ')' => {
                            d -= 1;
                            if d == 0 && open + j + 1 != seg.len() {
                                return None;
                            }
                        }
                        _ => {}
                    }
                }
                let name = name_of(&seg[..open])?;
                let args = seg[open + 1..seg.len() - 1].trim();
                let elided = if args.is_empty() { "()" } else { "(…)" };
                shown.push((sep, format!("{name}{elided}"), false));
            }
            // `retries[0]`: an indexed name is a plain segment too.
            _ if seg.ends_with(']') => {
                let open = seg.find('[')?;
                let name = name_of(&seg[..open])?;
                shown.push((sep, format!("{name}{}", &seg[open..]), true));
            }
            _ => shown.push((sep, name_of(seg)?, true)),
        }
    }
    let from = shown.iter().rposition(|(_, _, plain)| *plain).unwrap_or(0);
    let mut text = String::new();
    for (i, (sep, seg, _)) in shown[from..].iter().enumerate() {
        if i > 0 {
            text.push_str(sep);
        }
        text.push_str(seg);
    }
    (!text.is_empty() && text.chars().count() <= 48).then_some(text)
}

/// True for a Kotlin trailing lambda of `call`.
pub fn is_trailing_lambda(model: &FileModel, call: &Call, lambda: ScopeId) -> bool {
    model.language == Language::Kotlin
        && call.args.last().and_then(|a| a.lambda) == Some(lambda)
        && matches!(model.scopes[lambda].kind, ScopeKind::Lambda(_))
}

/// True when `text` has an `import` (Java, Kotlin) or `use` (Rust) line whose path starts
/// with one of `prefixes`.
fn imports_any(text: &str, prefixes: &[String]) -> bool {
    let mut paths = import_paths(text);
    paths.sort_unstable();
    imported_any(&paths, prefixes)
}

/// The paths a file's import lines name (`import static a.b.C`, `import a.b.C`,
/// `pub use a::b`, `use ::a::b`, each at the start of a line after indentation), with the
/// leading `::` removed, in order, sliced from `text`.
fn import_paths(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|line| {
            let l = line.trim_start();
            let path = l
                .strip_prefix("import static ")
                .or_else(|| l.strip_prefix("import "))
                .or_else(|| l.strip_prefix("pub use "))
                .or_else(|| l.strip_prefix("use "))?;
            Some(path.trim_start().trim_start_matches("::"))
        })
        .collect()
}

/// Whether one of `sorted` ([`import_paths`], sorted) starts with one of `prefixes`: for
/// each prefix, the first path not below it does when any does (a path above the prefix
/// that does not start with it is above every path that does).
fn imported_any(sorted: &[&str], prefixes: &[String]) -> bool {
    prefixes.iter().any(|x| {
        let at = sorted.partition_point(|p| *p < x.as_str());
        sorted.get(at).is_some_and(|p| p.starts_with(x.as_str()))
    })
}

/// The catalogue's boundary entries that apply to a file of `lang` with this text: their
/// `langs` include it (or are empty) and, when they list `imports`, the file imports one.
pub(crate) fn applicable_boundaries<'c>(
    cat: &'c Catalogue,
    lang: Language,
    text: &str,
) -> Vec<&'c BoundaryEntry> {
    // The file's import lines are read once, not once per entry.
    let mut paths = import_paths(text);
    paths.sort_unstable();
    cat.boundaries
        .iter()
        .filter(|b| b.call.langs.is_empty() || b.call.langs.iter().any(|l| l == lang.name()))
        .filter(|b| b.imports.is_empty() || imported_any(&paths, &b.imports))
        .collect()
}

/// Where an `annotated-function` entry's annotation was found when not on the function
/// itself: on its class ([`BoundaryEntry::on_type`]) or on the supertype method it
/// implements ([`BoundaryEntry::on_interface`]); the type's name.
enum Via<'m> {
    Class(&'m str),
    Implements(&'m str),
}

/// The function scope `i` with its facts and those of the type directly declaring it.
fn method_of_type(
    model: &FileModel,
    i: ScopeId,
) -> Option<(&Scope, &crate::model::FunctionInfo, &crate::model::TypeInfo)> {
    let s = &model.scopes[i];
    let ScopeKind::Function(f) = &s.kind else {
        return None;
    };
    Some((s, f, model.type_info(s.parent?)?))
}

/// For an `annotated-function` entry with [`BoundaryEntry::on_interface`]: the entry's
/// annotation on the method that the function scope `i` implements, declared in a
/// supertype of its class in this file (same name, same number of parameters), or on
/// that supertype, with the supertype's name.
fn interface_annotation<'m>(
    model: &'m FileModel,
    i: ScopeId,
    entry: &BoundaryEntry,
) -> Option<(&'m crate::model::Annotation, &'m str)> {
    let (s, f, t) = method_of_type(model, i)?;
    // Spring Retry's `@Recover` runs once, after the attempts.
    if f.name.is_empty() || f.name == t.name || f.annotations.iter().any(|a| a.name == "Recover") {
        return None;
    }
    model.scopes.iter().find_map(|m| {
        let ScopeKind::Function(g) = &m.kind else {
            return None;
        };
        if g.name != f.name || g.params.len() != f.params.len() {
            return None;
        }
        let owner = m.parent?;
        let ScopeKind::Type(st) = &model.scopes[owner].kind else {
            return None;
        };
        if owner == s.parent? || !t.supertypes.contains(&st.name) {
            return None;
        }
        // On the method, or on the supertype itself (Temporal's `@ActivityInterface`
        // makes every method of the interface an activity method).
        let a = g
            .annotations
            .iter()
            .chain(st.annotations.iter())
            .find(|a| entry.annotations.contains(&a.name))?;
        Some((a, st.name.as_str()))
    })
}

/// For an `annotated-function` entry with [`BoundaryEntry::on_type`]: the entry's
/// annotation on the type that directly declares the function scope `i`, and that type's
/// name, when a proxy can invoke the function: a Java method declared `public` and not
/// `static`, a Kotlin function that is neither `private` nor `protected` (Resilience4j's
/// `@Retry` javadoc: on a class it is "equivalent to applying it on all its public
/// methods"; Spring AOP's pointcuts match public methods). Constructors, Kotlin `init`
/// blocks and `@Recover` methods are not, nor is a function nested in another function.
fn type_level_annotation<'m>(
    model: &'m FileModel,
    text: &str,
    i: ScopeId,
    entry: &BoundaryEntry,
) -> Option<(&'m crate::model::Annotation, &'m str)> {
    let (s, f, t) = method_of_type(model, i)?;
    let a = t
        .annotations
        .iter()
        .find(|a| entry.annotations.contains(&a.name))?;
    if f.name.is_empty() || f.name == t.name || f.name == "constructor" || f.name == "init" {
        return None;
    }
    // Spring Retry leaves a class's `@Recover` methods out of its class-level `@Retryable`
    // (`AnnotationAwareRetryOperationsInterceptor`): recovery runs once, after the attempts.
    if f.annotations.iter().any(|x| x.name == "Recover") {
        return None;
    }
    // The modifiers written before the name, the function's own annotations skipped.
    let head_end = f.name_span.start.min(text.len());
    let head_start = s.span.start.min(head_end);
    let mut head = text.get(head_start..head_end)?.to_string();
    for x in &f.annotations {
        if x.span.start >= head_start && x.span.end <= head_end {
            let (a0, a1) = (x.span.start - head_start, x.span.end - head_start);
            head.replace_range(a0..a1, &" ".repeat(a1 - a0));
        }
    }
    let words: Vec<&str> = head
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    let has = |w: &str| words.contains(&w);
    let proxied = match model.language {
        // A bodiless interface method mints nothing, so the class's own are what count.
        Language::Java => has("public") && !has("static"),
        _ => !has("private") && !has("protected"),
    };
    proxied.then_some((a, t.name.as_str()))
}

/// Whether `call`, matched by a redelivered handler's `entry`, puts its consumer in a
/// mode that settles each message on delivery ([`BoundaryEntry::settled_on_delivery`]).
/// One of the entry's texts must be a whole argument or field value ([`whole_value_in`],
/// comments and string literals left out) somewhere in the call's chain
/// (`builder.receiveMode(RECEIVE_AND_DELETE).processMessage(..)`, the links after the call
/// included, the bodies of lambdas in it left out), or in the value of the local an
/// argument names: the nearest one bound before the call in a scope around it and still
/// in its block ([`binding_reaches`]), not assigned to since (`options.no_ack = false`).
/// `chain_parent` maps a call to the call made on its result (`a.b()` → `.c()` of
/// `a.b().c()`), built once per file.
pub(crate) fn settles_on_delivery(
    model: &FileModel,
    text: &str,
    call: CallId,
    entry: &BoundaryEntry,
    chain_parent: &HashMap<CallId, CallId>,
) -> bool {
    if entry.settled_on_delivery.is_empty() {
        return false;
    }
    let found = |span: Span| {
        let t =
            crate::text::blank_comments_and_strings(text.get(span.start..span.end).unwrap_or(""));
        entry
            .settled_on_delivery
            .iter()
            .any(|w| whole_value_in(&t, w))
    };
    let mut outer = call;
    let mut hops = 0;
    while let Some(&next) = chain_parent.get(&outer) {
        outer = next;
        hops += 1;
        if hops > model.calls.len() {
            break;
        }
    }
    let chain = model.calls[outer].span;
    // The chain's text with the bodies of its lambdas blanked out.
    let mut chain_text: Vec<u8> = text
        .get(chain.start..chain.end)
        .unwrap_or("")
        .as_bytes()
        .to_vec();
    for sc in &model.scopes {
        if matches!(sc.kind, ScopeKind::Lambda(_) | ScopeKind::Object(_)) && chain.contains(sc.span)
        {
            for b in &mut chain_text[sc.span.start - chain.start..sc.span.end - chain.start] {
                if *b != b'\n' {
                    *b = b' ';
                }
            }
        }
    }
    let chain_text = String::from_utf8_lossy(&chain_text);
    let chain_text = crate::text::blank_comments_and_strings(&chain_text);
    if entry
        .settled_on_delivery
        .iter()
        .any(|w| whole_value_in(&chain_text, w))
    {
        return true;
    }
    let c = &model.calls[call];
    c.args.iter().any(|a| {
        let Some(name) = model.values[a.value].ident.as_deref() else {
            return false;
        };
        let Some(b) = model
            .bindings
            .iter()
            .filter(|b| {
                b.name == name
                    && b.span.end <= c.span.start
                    && model.ancestors(c.scope).any(|s| s == b.scope)
                    && binding_reaches(text, b.span.end, c.span.start)
            })
            .max_by_key(|b| b.span.start)
        else {
            return false;
        };
        let assigned_since = model.assigns.iter().any(|x| {
            x.span.start >= b.span.end
                && x.span.start < c.span.start
                && (x.name == name || x.name.starts_with(&format!("{name}.")))
        }) || text
            .get(b.span.end..c.span.start)
            .is_some_and(|t| assigns_to(&crate::text::blank_comments_and_strings(t), name));
        !assigned_since && b.value.is_some_and(|v| found(model.values[v].span))
    })
}

/// Whether `word` (whitespace ignored) occurs in `text` as a whole argument or field
/// value: after `(`, `,` or `{` (a qualifier such as `ServiceBusReceiveMode.` may come
/// between) and before `)`, `,` or `}`. So `fast ? RECEIVE_AND_DELETE : PEEK_LOCK` and
/// `no_ack: true && other` are not it.
fn whole_value_in(text: &str, word: &str) -> bool {
    let squeeze = |t: &str| -> String { t.chars().filter(|c| !c.is_whitespace()).collect() };
    let (t, w) = (squeeze(text), squeeze(word));
    if w.is_empty() {
        return false;
    }
    let bytes = t.as_bytes();
    t.match_indices(&w).any(|(at, _)| {
        let mut i = at;
        while i > 0
            && (bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'_' | b'.' | b':'))
        {
            // `Mode::X`, `Mode.X`: a qualifier; a `:` of `name: value` is not one.
            if bytes[i - 1] == b':' && !(i >= 2 && bytes[i - 2] == b':') {
                break;
            }
            if bytes[i - 1] == b':' {
                i -= 2;
                continue;
            }
            i -= 1;
        }
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(at + w.len()).copied();
        let starts_word =
            at == i || !bytes[at - 1].is_ascii_alphanumeric() && bytes[at - 1] != b'_';
        starts_word
            && matches!(before, Some(b'(' | b',' | b'{'))
            && matches!(after, Some(b')' | b',' | b'}'))
    })
}

/// Whether `text` assigns to the local `name` or to one of its fields (`name = ..`,
/// `name.field = ..`, `name.field += ..`), not merely compares it (`==`).
fn assigns_to(text: &str, name: &str) -> bool {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    text.match_indices(name).any(|(at, _)| {
        if at > 0 && (ident(b[at - 1]) || b[at - 1] == b'.') {
            return false;
        }
        let mut i = at + name.len();
        // `.field` links.
        loop {
            while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
                i += 1;
            }
            if b.get(i) == Some(&b'.') {
                i += 1;
                while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
                    i += 1;
                }
                let start = i;
                while b.get(i).is_some_and(|&c| ident(c)) {
                    i += 1;
                }
                if i == start {
                    return false;
                }
                continue;
            }
            break;
        }
        if i == at + name.len() && b.get(i).is_some_and(|&c| ident(c)) {
            return false;
        }
        match (b.get(i), b.get(i + 1)) {
            (Some(b'='), Some(b'=')) => false,
            (Some(b'='), _) => true,
            (Some(op), Some(b'=')) => b"+-*/|&^%".contains(op),
            _ => false,
        }
    })
}

/// Whether a local bound by a statement ending at `end` is still in scope at `at`: the text
/// between never closes the block it was declared in (comments and strings left out).
fn binding_reaches(text: &str, end: usize, at: usize) -> bool {
    let Some(between) = text.get(end..at) else {
        return false;
    };
    let mut depth = 0i64;
    for b in crate::text::blank_comments_and_strings(between).bytes() {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// Whether the executor `call` runs its lambda on (`Failsafe.with(breaker).get(..)`) is
/// built only from policies that never run it again ([`BoundaryEntry::policy_calls`],
/// [`BoundaryEntry::non_retry_policies`]): its receiver chain starts at a policy call on
/// `Failsafe` itself (`Failsafe.with(..)`, the only library whose entry sets these keys),
/// and every argument of every policy call on it is surely a non-retry policy. An executor held in a variable
/// (`failsafe.compose(breaker)`), or any argument that may be a `RetryPolicy`, keeps the
/// boundary. `known` caches [`surely_policy_of`] per argument text for the file.
fn runs_once_by_policies(
    model: &FileModel,
    text: &str,
    call: &crate::model::Call,
    entry: &BoundaryEntry,
    known: &mut HashMap<String, bool>,
    lookup: &std::cell::OnceCell<crate::model::ScopeLookup>,
) -> bool {
    if entry.policy_calls.is_empty() || entry.non_retry_policies.is_empty() {
        return false;
    }
    let mut policy_calls = Vec::new();
    let mut next = call.receiver_call;
    let mut root = None;
    while let Some(id) = next {
        let c = &model.calls[id];
        if entry.policy_calls.contains(&c.callee) {
            policy_calls.push(c);
        }
        root = Some(c);
        next = c.receiver_call;
    }
    // A later link that sets the executor's scheduler (`.with(scheduledExecutor)`) adds
    // no policy; the first link (`Failsafe.with(..)`) always does.
    if let Some(r) = root {
        policy_calls.retain(|c| std::ptr::eq(*c, r) || !entry.executor_calls.contains(&c.callee));
    }
    // The chain must start at `Failsafe.with(..)`: anything else (a variable, a factory)
    // may hold a retry policy already.
    let Some(root) = root else { return false };
    let starts_at_entry_type = entry.policy_calls.contains(&root.callee)
        && crate::catalogue::receiver_text(root)
            .is_some_and(|r| crate::catalogue::last_segment(&r) == "Failsafe");
    if !starts_at_entry_type {
        return false;
    }
    policy_calls.iter().all(|c| {
        !c.args.is_empty()
            && c.args.iter().all(|a| {
                let Some(t) = text.get(a.span.start..a.span.end) else {
                    return false;
                };
                // A local is seen only in its function: the answer is per function.
                let func = enclosing_function(model, call.scope);
                let cache_key = format!("{func}:{t}");
                if let Some(k) = known.get(&cache_key) {
                    return *k;
                }
                let lookup = lookup.get_or_init(|| crate::model::ScopeLookup::new(model));
                let visible = |at: usize| {
                    // Outside every function (a field), or inside the call's own.
                    let inner = enclosing_function(model, lookup.innermost(at));
                    inner == 0 || model.is_within(call.scope, inner)
                };
                let k =
                    surely_policy_of(model.language, text, t, &entry.non_retry_policies, &visible);
                known.insert(cache_key, k);
                k
            })
    })
}

/// The innermost function scope enclosing `scope` (the file's scope when none).
fn enclosing_function(model: &FileModel, scope: ScopeId) -> ScopeId {
    model
        .ancestors(scope)
        .find(|s| matches!(model.scopes[*s].kind, ScopeKind::Function(_)))
        .unwrap_or(0)
}

/// How far back from a variable [`surely_policy_of`] looks for its declared type, generic
/// arguments included: a declaration's type is right before the name.
const DECLARED_TYPE_WINDOW: usize = 256;

/// Whether the expression `arg` (source text) is surely a value of one of `types`: built in
/// place (`Type.f(..)`, `Type.<T>f(..)`, `new Type<>(..)`, `Type(..)`), or a variable (or
/// `this.x`) that `text` declares, every time, with one of `types` or such an initialiser
/// (Java `Type<T> x`, Kotlin `x: Type<T>`, either `x = Type..`), counting only the
/// occurrences `visible` from the call (fields, and the call's own function: another
/// function's local or parameter of the name is another variable). Any other value given to
/// the name (`var policy = policies.retryFor(..)`) may be a retry policy: no. An
/// assignment from a namesake (`this.breaker = breaker`) adds nothing: the namesake's own
/// declarations are among those checked.
fn surely_policy_of(
    lang: Language,
    text: &str,
    arg: &str,
    types: &[String],
    visible: &dyn Fn(usize) -> bool,
) -> bool {
    let arg = arg.trim();
    if built_as(arg, types) == Some(true) {
        return true;
    }
    let name = arg.strip_prefix("this.").unwrap_or(arg);
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return false;
    }
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut declared = 0;
    for (i, _) in text.match_indices(name) {
        let before = &text[..i];
        let after = &text[i + name.len()..];
        if before.chars().next_back().is_some_and(ident)
            || after.chars().next().is_some_and(ident)
            || !visible(i)
        {
            continue;
        }
        let after = after.trim_start();
        // Kotlin `x: Type`; a `::` is a reference, not a declaration.
        if lang == Language::Kotlin
            && let Some(ty) = after.strip_prefix(':').filter(|t| !t.starts_with(':'))
        {
            declared += 1;
            if !types.iter().any(|t| starts_with_type(ty.trim_start(), t)) {
                return false;
            }
            continue;
        }
        // Java `Type<T> x` (a type name right before, generic arguments skipped, within
        // a short window).
        let mut from = i.saturating_sub(DECLARED_TYPE_WINDOW);
        while !text.is_char_boundary(from) {
            from -= 1;
        }
        let mut b = text[from..i].trim_end();
        if b.ends_with('>') {
            match matching_open(b.as_bytes(), b'<', b'>') {
                Some(open) => b = b[..open].trim_end(),
                None => continue,
            }
        }
        let word_start = b
            .char_indices()
            .rev()
            .take_while(|(_, c)| ident(*c))
            .last()
            .map(|(i, _)| i);
        let prev = word_start.map(|w| &b[w..]).unwrap_or("");
        let declares = lang == Language::Java
            && prev.starts_with(char::is_uppercase)
            && (after.starts_with('=') && !after.starts_with("==")
                || after.starts_with(';')
                || after.starts_with(',')
                || after.starts_with(')'));
        if declares {
            declared += 1;
            if !types.iter().any(|t| t == prev) {
                return false;
            }
            continue;
        }
        // `x = ..` (a declaration's or an assignment's initialiser).
        if let Some(init) = after.strip_prefix('=').filter(|t| !t.starts_with('=')) {
            let init = init.trim_start();
            let end = init.find([';', '\n']).unwrap_or(init.len());
            let init = init[..end].trim();
            let namesake = init.strip_prefix("this.").unwrap_or(init) == name;
            match built_as(init, types) {
                Some(true) => declared += 1,
                _ if namesake => {}
                _ => return false,
            }
        }
    }
    declared > 0
}

/// Whether `expr` is built in place as one of `types` (`Type.f(..)`, `Type.<T>f(..)`,
/// `new Type<>(..)`, `Type(..)`): `Some(true)`; built as another capitalised type:
/// `Some(false)`; anything else (a call of a variable's method, a name): `None`.
fn built_as(expr: &str, types: &[String]) -> Option<bool> {
    let e = expr.strip_prefix("new ").map_or(expr, str::trim_start);
    if !e.starts_with(char::is_uppercase) {
        return None;
    }
    Some(types.iter().any(|t| starts_with_type(e, t)))
}

/// Whether `s` starts with the type name `ty` followed by `.`, `<`, `(`, `?`, a space or
/// its end.
fn starts_with_type(s: &str, ty: &str) -> bool {
    s.strip_prefix(ty).is_some_and(|rest| {
        rest.is_empty() || rest.starts_with(['.', '<', '(', '?', ' ', '>', ',', ')', '='])
    })
}

fn boundaries(model: &FileModel, text: &str, cat: &Catalogue, facts: &mut FileFacts) {
    let lang = model.language;
    let entries = applicable_boundaries(cat, lang, text);
    let set = |facts: &mut FileFacts, scope: ScopeId, b: Boundary| {
        if facts.boundaries[scope].is_none() {
            facts.boundaries[scope] = Some(b);
        }
    };
    // Functions by name, for method references given to boundary calls.
    let mut functions: HashMap<&str, Vec<ScopeId>> = HashMap::new();
    for (i, s) in model.scopes.iter().enumerate() {
        if let ScopeKind::Function(f) = &s.kind {
            functions.entry(f.name.as_str()).or_default().push(i);
        }
    }
    // The calls an entry may match: by callee name, for an entry naming its callees (most);
    // every call otherwise. In the order of the file's calls either way.
    let mut by_callee: HashMap<&str, Vec<CallId>> = HashMap::new();
    for (cid, call) in model.calls.iter().enumerate() {
        by_callee.entry(call.callee.as_str()).or_default().push(cid);
    }
    let calls_for = |m: &crate::catalogue::CallMatch| -> Vec<CallId> {
        if m.callee.is_empty() || !m.callee_glob.is_empty() {
            return (0..model.calls.len()).collect();
        }
        let mut ids: Vec<CallId> = m
            .callee
            .iter()
            .filter_map(|c| by_callee.get(c.as_str()))
            .flatten()
            .copied()
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    };
    // Each call's link after it in a chain (`a.b()` → the `.c()` of `a.b().c()`), for
    // `settled_on_delivery`; built once, when an entry asks.
    let chain_parent_cell = std::cell::OnceCell::new();
    let chain_parent = || {
        chain_parent_cell.get_or_init(|| {
            let mut m: HashMap<CallId, CallId> = HashMap::default();
            for (i, c) in model.calls.iter().enumerate() {
                if let Some(r) = c.receiver_call {
                    m.insert(r, i);
                }
            }
            m
        })
    };
    for entry in &entries {
        match entry.form {
            BoundaryForm::LambdaArg | BoundaryForm::ReceiverLambda => {
                // The scopes holding a call of `body_calls` (each such call's scope and its
                // ancestors), found once for the file.
                let with_body_call: std::collections::HashSet<ScopeId> =
                    if entry.body_calls.is_empty() {
                        Default::default()
                    } else {
                        model
                            .calls
                            .iter()
                            .filter(|c| entry.body_calls.contains(&c.callee))
                            .flat_map(|c| model.ancestors(c.scope))
                            .collect()
                    };
                let mut known = HashMap::new();
                let lookup = std::cell::OnceCell::new();
                for cid in calls_for(&entry.call) {
                    let call = &model.calls[cid];
                    if !entry.call.matches(lang, call) {
                        continue;
                    }
                    if runs_once_by_policies(model, text, call, entry, &mut known, &lookup)
                        || settles_on_delivery(model, text, cid, entry, chain_parent())
                    {
                        continue;
                    }
                    let mut targets: Vec<(ScopeId, bool)> = Vec::new();
                    if entry.form == BoundaryForm::ReceiverLambda {
                        if let Some(l) = call.receiver_lambda.or_else(|| {
                            call.receiver
                                .as_deref()
                                .and_then(|r| lambda_bound_to(model, r, call.span.start))
                        }) {
                            targets.push((l, false));
                        } else if let Some(r) = call.receiver.as_deref().filter(|r| {
                            // A function item named as the receiver (`settle_once.retry(b)`,
                            // backon's `Retryable` for `FnMut() -> Fut`): its body runs per
                            // attempt. Not a local of that name.
                            !r.is_empty()
                                && r.chars().all(|c| c.is_alphanumeric() || c == '_')
                                && !model
                                    .bindings
                                    .iter()
                                    .any(|b| b.name == *r && b.name_span.start < call.span.start)
                        }) {
                            for f in functions.get(r).into_iter().flatten() {
                                targets.push((*f, false));
                            }
                        }
                    } else {
                        for (ai, arg) in call.args.iter().enumerate() {
                            if !entry.runs_lambda_at(ai) {
                                continue;
                            }
                            if let Some(l) = arg.lambda {
                                targets.push((l, is_trailing_lambda(model, call, l)));
                            } else if let Some(l) = sam_lambda(model, &model.values[arg.value]) {
                                targets.push((l, false));
                            } else if let Some(l) = model.values[arg.value]
                                .ident
                                .as_deref()
                                .and_then(|n| lambda_bound_to(model, n, arg.span.start))
                            {
                                targets.push((l, false));
                            } else if let Some(f) = &arg.fn_ref {
                                for s in functions.get(f.as_str()).into_iter().flatten() {
                                    targets.push((*s, false));
                                }
                            } else if let Some(f) = model.values[arg.value]
                                .ident
                                .as_deref()
                                .and_then(|n| fn_ref_bound_to(model, text, n, arg.span.start))
                            {
                                for s in functions.get(f).into_iter().flatten() {
                                    targets.push((*s, false));
                                }
                            } else {
                                // `basicConsume(q, false, new Handler(), ..)` with `class
                                // Handler implements DeliverCallback` in the file (or a local
                                // bound to such an instance): the methods it overrides.
                                let v = &model.values[arg.value];
                                let v = v
                                    .ident
                                    .as_deref()
                                    .and_then(|n| local_value(model, n, arg.span.start))
                                    .unwrap_or(v);
                                for s in own_class_overrides(model, text, v) {
                                    targets.push((s, false));
                                }
                            }
                        }
                    }
                    for (scope, trailing) in targets {
                        // A callback that settles its own deliveries (RabbitMQ's
                        // `DeliverCallback` with `basicAck`), not another callback of the
                        // same call (its `CancelCallback`).
                        if !entry.body_calls.is_empty() && !with_body_call.contains(&scope) {
                            continue;
                        }
                        if entry.requires_nonlocal_return
                            && (!has_nonlocal_return(model, scope)
                                || carries_progress(model, scope))
                        {
                            continue;
                        }
                        set(
                            facts,
                            scope,
                            boundary_of(
                                entry,
                                call_label(model, call, trailing),
                                call.name_span,
                                None,
                                Some(cid),
                            ),
                        );
                    }
                }
            }
            BoundaryForm::MethodOfType => {
                for (i, s) in model.scopes.iter().enumerate() {
                    let ScopeKind::Function(f) = &s.kind else {
                        continue;
                    };
                    if !entry.methods.contains(&f.name) {
                        continue;
                    }
                    let Some(parent) = s.parent else { continue };
                    let Some(t) = model.type_info(parent) else {
                        continue;
                    };
                    if !t.supertypes.iter().any(|st| entry.supertypes.contains(st)) {
                        continue;
                    }
                    if !entry.param_types.is_empty()
                        && !f.params.first().is_some_and(|p| {
                            let ty = simple_type_name(&p.ty);
                            entry.param_types.iter().any(|x| x == ty)
                        })
                    {
                        continue;
                    }
                    if !entry.body_calls.is_empty()
                        && !model.calls.iter().any(|c| {
                            entry.body_calls.contains(&c.callee) && model.is_within(c.scope, i)
                        })
                    {
                        continue;
                    }
                    let who = if t.name.is_empty() {
                        format!(
                            "anonymous `{}`",
                            t.supertypes.first().cloned().unwrap_or_default()
                        )
                    } else {
                        format!("`{}`", t.name)
                    };
                    set(
                        facts,
                        i,
                        boundary_of(
                            entry,
                            format!("`{}()` of {who}", f.name),
                            f.name_span,
                            Some(t.name.clone()),
                            None,
                        ),
                    );
                }
            }
            BoundaryForm::AnnotatedFunction => {
                for (i, s) in model.scopes.iter().enumerate() {
                    let ScopeKind::Function(f) = &s.kind else {
                        continue;
                    };
                    // The function's own annotation, else its class's (`on_type`), with
                    // the class's name.
                    let Some((a, on_class)) = f
                        .annotations
                        .iter()
                        .find(|a| entry.annotations.contains(&a.name))
                        .map(|a| (a, None))
                        .or_else(|| {
                            entry
                                .on_type
                                .then(|| type_level_annotation(model, text, i, entry))
                                .flatten()
                                .map(|(a, t)| (a, Some(Via::Class(t))))
                        })
                        .or_else(|| {
                            entry
                                .on_interface
                                .then(|| interface_annotation(model, i, entry))
                                .flatten()
                                .map(|(a, t)| (a, Some(Via::Implements(t))))
                        })
                    else {
                        continue;
                    };
                    let rt = f.return_type.trim();
                    let simple_rt = simple_type_name(rt);
                    // Java only: a Kotlin `suspend` function's declared type is no guide to
                    // what the aspect sees.
                    if model.language == Language::Java
                        && f.annotations
                            .iter()
                            .any(|x| entry.inert_with.contains(&x.name))
                        && !entry.async_return_types.iter().any(|t| t == simple_rt)
                    {
                        continue;
                    }
                    if entry
                        .exclude_return_types
                        .iter()
                        .any(|x| rt == x || rt.starts_with(&format!("{x}<")))
                    {
                        // A reactive return value is decorated with a retry and
                        // re-subscribed: the body runs once, the returned pipeline's
                        // lambdas run per attempt.
                        for r in model.returns.iter().filter(|r| r.scope == i) {
                            for atom in &model.values[r.value].atoms {
                                let Atom::Call(c) = atom else { continue };
                                let call = &model.calls[*c];
                                for arg in &call.args {
                                    let Some(l) = arg.lambda else { continue };
                                    set(
                                        facts,
                                        l,
                                        Boundary {
                                            kind: entry.kind,
                                            entry: entry.id.clone(),
                                            flavor: "reactive".into(),
                                            label: format!(
                                                "{} in the pipeline returned by `@{}` method `{}()`",
                                                call_label(
                                                    model,
                                                    call,
                                                    is_trailing_lambda(model, call, l)
                                                ),
                                                a.name,
                                                f.name
                                            ),
                                            anchor: call.name_span,
                                            type_name: None,
                                            owner_call: Some(*c),
                                        },
                                    );
                                }
                            }
                        }
                        continue;
                    }
                    let why = if entry.flavor == "redelivery" {
                        format!(" ({})", entry.label)
                    } else {
                        String::new()
                    };
                    set(
                        facts,
                        i,
                        boundary_of(
                            entry,
                            match on_class {
                                None => format!("`@{}` method `{}()`{why}", a.name, f.name),
                                Some(Via::Implements(t)) => format!(
                                    "method `{}()`, implementing `@{}` `{t}.{}()`{why}",
                                    f.name, a.name, f.name
                                ),
                                Some(Via::Class(t)) => {
                                    format!(
                                        "method `{}()` of `@{}` class `{t}`{why}",
                                        f.name, a.name
                                    )
                                }
                            },
                            f.name_span,
                            None,
                            None,
                        ),
                    );
                }
            }
            BoundaryForm::ReactiveUpstream => {
                for cid in calls_for(&entry.call) {
                    let call = &model.calls[cid];
                    if !entry.call.matches(lang, call) {
                        continue;
                    }
                    let mut up = call.receiver_call;
                    let mut guard = 0;
                    while let Some(u) = up {
                        guard += 1;
                        if guard > 256 {
                            break;
                        }
                        let upstream = &model.calls[u];
                        for arg in &upstream.args {
                            if let Some(l) = arg.lambda {
                                let trailing = is_trailing_lambda(model, upstream, l);
                                set(
                                    facts,
                                    l,
                                    boundary_of(
                                        entry,
                                        format!(
                                            "{} re-run by `{}`",
                                            call_label(model, upstream, trailing),
                                            call.callee
                                        ),
                                        upstream.name_span,
                                        None,
                                        Some(u),
                                    ),
                                );
                            }
                        }
                        up = upstream.receiver_call;
                    }
                }
            }
            BoundaryForm::ReturnedLambda => {
                let mut targets: Vec<(ScopeId, String, Span)> = Vec::new();
                // With `annotations`, only a function carrying one returns a boundary
                // (`@Bean`), and none whose return type names one of
                // `exclude_return_types` (a reactive `Function<Flux<T>, Flux<R>>`).
                let returning = |f: &crate::model::FunctionInfo| {
                    (entry.return_type_contains.is_empty()
                        || entry
                            .return_type_contains
                            .iter()
                            .any(|x| f.return_type.contains(x.as_str())))
                        && (entry.annotations.is_empty()
                            || f.annotations
                                .iter()
                                .any(|a| entry.annotations.contains(&a.name)))
                        && !entry
                            .exclude_return_types
                            .iter()
                            .any(|x| crate::text::has_word(&f.return_type, x))
                };
                // With `annotations`, a SAM constructor counts only as the value such a
                // function returns (`fun f(): Consumer<T> = Consumer { .. }`).
                let returned_by_annotated = |call: &crate::model::Call| {
                    model.returns.iter().any(|r| {
                        model.values[r.value].span == call.span
                            && matches!(&model.scopes[r.scope].kind,
                                ScopeKind::Function(f) if returning(f))
                    })
                };
                // SAM constructors: `RequestInterceptor { template -> ... }`.
                for call in &model.calls {
                    if entry.supertypes.contains(&call.callee)
                        && (entry.annotations.is_empty() || returned_by_annotated(call))
                    {
                        for arg in &call.args {
                            if let Some(l) = arg.lambda {
                                targets.push((
                                    l,
                                    format!("`{} {{ … }}`", call.callee),
                                    call.name_span,
                                ));
                            }
                        }
                    }
                }
                // Lambdas returned by `X factory()` where X is one of the supertypes.
                for (i, s) in model.scopes.iter().enumerate() {
                    let ScopeKind::Function(f) = &s.kind else {
                        continue;
                    };
                    let rt = simple_type_name(&f.return_type);
                    // A Kotlin function type (`(Message<T>) -> Unit`) is a `Function`.
                    let function_type = model.language == Language::Kotlin
                        && f.return_type
                            .trim_start_matches("suspend")
                            .trim_start()
                            .starts_with('(')
                        && f.return_type.contains("->");
                    let rt = if function_type { "Function" } else { rt };
                    if !entry.supertypes.iter().any(|t| t == rt) || !returning(f) {
                        continue;
                    }
                    for r in model.returns.iter().filter(|r| r.scope == i) {
                        let v = &model.values[r.value];
                        let label = format!("`{rt}` returned by `{}()`", f.name);
                        for (l, ls) in model.scopes.iter().enumerate() {
                            if matches!(ls.kind, ScopeKind::Lambda(_)) && ls.span == v.span {
                                targets.push((l, label.clone(), f.name_span));
                            }
                        }
                        // A local bound to a lambda (`Consumer<Charge> c = m -> ..;
                        // return c;`), or a method reference (`return this::charge;`):
                        // the lambda, or the referenced method of this file.
                        if let Some(l) = v
                            .ident
                            .as_deref()
                            .and_then(|n| lambda_bound_to(model, n, v.span.start))
                        {
                            targets.push((l, label.clone(), f.name_span));
                        } else if let Some(name) =
                            text.get(v.span.start..v.span.end).and_then(own_method_ref)
                        {
                            for &g in functions.get(name).into_iter().flatten() {
                                targets.push((g, label.clone(), f.name_span));
                            }
                        }
                    }
                }
                // (A redelivered handler's label says why it runs again: `boundary_of`.)
                for (l, label, anchor) in targets {
                    set(facts, l, boundary_of(entry, label, anchor, None, None));
                }
            }
            BoundaryForm::ReceiveLoop => {
                for (i, s) in model.scopes.iter().enumerate() {
                    let ScopeKind::Loop(l) = &s.kind else {
                        continue;
                    };
                    let Some(parent) = s.parent else { continue };
                    // The call in the header (evaluated in the enclosing scope, inside the
                    // loop's span) or in the body itself (`while (true) { r =
                    // sqs.receiveMessage(..); .. }`: each iteration handles what it
                    // received); or a local named in the header, bound before the loop.
                    let in_header = model.calls.iter().position(|c| {
                        (c.scope == i || c.scope == parent && s.span.contains(c.span))
                            && entry.call.matches(lang, c)
                    });
                    // The nearest binding before the loop in a scope around it and still in
                    // its block (another function's or an ended block's local of the same
                    // name is another consumer).
                    let via_local = || {
                        model.bindings.iter().rev().find_map(|b| {
                            if b.span.end > s.span.start
                                || !crate::text::has_word(&l.header, &b.name)
                                || !model.ancestors(parent).any(|a| a == b.scope)
                                || !binding_reaches(text, b.span.end, s.span.start)
                            {
                                return None;
                            }
                            let v = &model.values[b.value?];
                            v.atoms.iter().find_map(|a| match a {
                                Atom::Call(c) if entry.call.matches(lang, &model.calls[*c]) => {
                                    Some(*c)
                                }
                                _ => None,
                            })
                        })
                    };
                    let Some(rid) = in_header.or_else(via_local) else {
                        continue;
                    };
                    if settles_on_delivery(model, text, rid, entry, chain_parent()) {
                        continue;
                    }
                    let receive = &model.calls[rid];
                    set(
                        facts,
                        i,
                        boundary_of(
                            entry,
                            format!(
                                "the loop over what `{}` received ({})",
                                receive.callee, entry.label
                            ),
                            Span::new(s.span.start, s.span.start),
                            None,
                            None,
                        ),
                    );
                }
                // The same handling written as `receiveMessage(..).messages().forEach(m ->
                // ..)`: the lambda given to `forEach` on a chain holding the call, or on a
                // local bound to it before.
                for call in &model.calls {
                    if call.callee != "forEach" && call.callee != "for_each" {
                        continue;
                    }
                    let mut chain = call.receiver_call;
                    let mut receive = None;
                    while let Some(c) = chain {
                        if entry.call.matches(lang, &model.calls[c]) {
                            receive = Some(c);
                            break;
                        }
                        chain = model.calls[c].receiver_call;
                    }
                    // A receiver that is no call (Kotlin `receiveMessage(..).messages?`):
                    // the call inside its text.
                    let receive = receive.or_else(|| {
                        model.calls.iter().position(|c| {
                            c.span.start >= call.span.start
                                && c.span.end <= call.name_span.start
                                && entry.call.matches(lang, c)
                        })
                    });
                    let receive = receive.or_else(|| {
                        let r = call.receiver.as_deref()?;
                        let root = r.split(['.', '?', '(']).next()?.trim();
                        model.bindings.iter().rev().find_map(|b| {
                            if b.name != root
                                || b.span.end > call.span.start
                                || !model.ancestors(call.scope).any(|a| a == b.scope)
                                || !binding_reaches(text, b.span.end, call.span.start)
                            {
                                return None;
                            }
                            model.values[b.value?].atoms.iter().find_map(|a| match a {
                                Atom::Call(c) if entry.call.matches(lang, &model.calls[*c]) => {
                                    Some(*c)
                                }
                                _ => None,
                            })
                        })
                    });
                    let Some(rid) = receive else { continue };
                    if settles_on_delivery(model, text, rid, entry, chain_parent()) {
                        continue;
                    }
                    let receive = &model.calls[rid];
                    for arg in &call.args {
                        if let Some(l) = arg.lambda {
                            set(
                                facts,
                                l,
                                boundary_of(
                                    entry,
                                    format!(
                                        "the `forEach` over what `{}` received ({})",
                                        receive.callee, entry.label
                                    ),
                                    call.name_span,
                                    None,
                                    None,
                                ),
                            );
                        }
                    }
                }
            }
            BoundaryForm::RetryLoop | BoundaryForm::TickLoop => {
                for (i, s) in model.scopes.iter().enumerate() {
                    let ScopeKind::Loop(l) = &s.kind else {
                        continue;
                    };
                    let hit = if entry.form == BoundaryForm::TickLoop {
                        l.awaits_tick
                    } else {
                        is_retry_loop(l)
                    };
                    if !hit {
                        continue;
                    }
                    let label = if entry.form == BoundaryForm::TickLoop {
                        "`loop { interval.tick().await; … }`".to_string()
                    } else if l.header.is_empty() {
                        format!("`{}` retry loop", l.keyword)
                    } else {
                        let mut h = l.header.clone();
                        if h.len() > 40 {
                            let mut cut = 40;
                            while !h.is_char_boundary(cut) {
                                cut -= 1;
                            }
                            h.truncate(cut);
                            h.push('…');
                        }
                        if model.language == Language::Rust {
                            format!("`{} {}` retry loop", l.keyword, h)
                        } else if l.keyword == "do" {
                            // Its condition comes last: `do { … } while (++tries < 3)`.
                            format!("`do … while ({h})` retry loop")
                        } else {
                            format!("`{} ({})` retry loop", l.keyword, h)
                        }
                    };
                    set(
                        facts,
                        i,
                        boundary_of(
                            entry,
                            label,
                            Span::new(s.span.start, s.span.start),
                            None,
                            None,
                        ),
                    );
                }
            }
        }
    }
}

/// Calls that pace a periodic loop: `Thread.sleep`, `TimeUnit.X.sleep`, Kotlin `delay`,
/// `tokio::time::sleep`, `std::thread::sleep`, `async_std::task::sleep`.
const PACING_CALLS: &[&str] = &["sleep", "delay", "sleep_until"];

/// Periodic jobs by their pacing: a `loop` / `while` loop (not a retry loop, not a `for`
/// over items) whose own body waits on a timer runs its body once per period for as long as
/// the process lives, in every process that starts it, which makes it a per-process
/// scheduler like `@Scheduled` ([`BoundaryKind::Scheduler`]). A key minted in it with no
/// distributed lock is `unlocked-scheduled-job`; a job that sends no key is no finding.
fn paced_loops(model: &FileModel, facts: &mut FileFacts) {
    for call in &model.calls {
        if !PACING_CALLS.contains(&call.callee.as_str()) {
            continue;
        }
        // The innermost loop around the call, with no function or lambda in between.
        let Some(lp) = model.ancestors(call.scope).find(|s| {
            !matches!(
                model.scopes[*s].kind,
                ScopeKind::Lambda(_) | ScopeKind::Function(_)
            ) && matches!(model.scopes[*s].kind, ScopeKind::Loop(_))
        }) else {
            continue;
        };
        if model
            .ancestors(call.scope)
            .take_while(|s| *s != lp)
            .any(|s| {
                matches!(
                    model.scopes[s].kind,
                    ScopeKind::Lambda(_) | ScopeKind::Function(_)
                )
            })
        {
            continue;
        }
        let ScopeKind::Loop(l) = &model.scopes[lp].kind else {
            continue;
        };
        if l.is_retry()
            || !matches!(l.keyword.as_str(), "loop" | "while")
            || facts.boundaries[lp].is_some()
        {
            continue;
        }
        let head = if l.header.is_empty() {
            format!("`{}`", l.keyword)
        } else if model.language == Language::Rust {
            format!(
                "`{} {}`",
                l.keyword,
                l.header.chars().take(40).collect::<String>()
            )
        } else {
            format!(
                "`{} ({})`",
                l.keyword,
                l.header.chars().take(40).collect::<String>()
            )
        };
        facts.boundaries[lp] = Some(Boundary {
            kind: BoundaryKind::Scheduler,
            entry: "inferred.paced-loop".into(),
            flavor: "paced-loop".into(),
            // Rust's bare `loop` names itself: "`loop` paced by", not "`loop` loop".
            label: if l.header.is_empty() && l.keyword == "loop" {
                format!("{head} paced by `{}`", call.callee)
            } else {
                format!("{head} loop paced by `{}`", call.callee)
            },
            anchor: Span::new(model.scopes[lp].span.start, model.scopes[lp].span.start),
            type_name: None,
            owner_call: None,
        });
    }
}

/// A function that calls itself again after a failure retries its own body: the
/// recursive call sits in a `catch` clause of the function (`catch (e: IOException) {
/// if (retryCount < max) postWithRetry(.., retryCount = retryCount + 1) }`), or passes an
/// attempt counter on changed (`attempt(times - 1, ..)`). Each call is one attempt, so
/// the body is a retry boundary. A recursion that moves to other work (`sync(page + 1)`,
/// `walk(node.left)`) passes no attempt counter and is not one.
fn self_retrying_functions(model: &FileModel, facts: &mut FileFacts) {
    const COUNTERS: &[&str] = &["retry", "retries", "attempt", "tries", "times", "remaining"];
    // Calls by callee, so the search is linear in the file, not functions × calls.
    let mut by_callee: HashMap<&str, Vec<&crate::model::Call>> = HashMap::new();
    for c in &model.calls {
        by_callee.entry(c.callee.as_str()).or_default().push(c);
    }
    for (fi, scope) in model.scopes.iter().enumerate() {
        let ScopeKind::Function(f) = &scope.kind else {
            continue;
        };
        if f.name.is_empty() || facts.boundaries[fi].is_some() {
            continue;
        }
        let counter = |name: &str| {
            let n = name.to_ascii_lowercase();
            COUNTERS.iter().any(|c| n.contains(c))
        };
        let Some(calls) = by_callee.get(f.name.as_str()) else {
            continue;
        };
        let again = calls.iter().find(|c| {
            if c.callee != f.name
                || !matches!(c.receiver.as_deref(), None | Some("this") | Some("self"))
                || model.enclosing_function(c.scope) != Some(fi)
                || c.args.len() > f.params.len()
                || (c.args.len() < f.params.len() && model.language != Language::Kotlin)
            {
                return false;
            }
            let in_catch = model
                .catches
                .iter()
                .any(|k| k.contains(c.span) && scope.span.contains(*k));
            let counts = c.args.iter().enumerate().any(|(i, a)| {
                let p = a
                    .name
                    .as_deref()
                    .or_else(|| f.params.get(i).map(|p| p.name.as_str()));
                let Some(p) = p.filter(|p| counter(p)) else {
                    return false;
                };
                let v = &model.values[a.value];
                v.ident.as_deref() != Some(p)
                    && v.atoms
                        .iter()
                        .any(|at| matches!(at, Atom::Name { name, .. } if name == p))
            });
            in_catch || counts
        });
        let Some(call) = again else { continue };
        let why = if model.catches.iter().any(|k| k.contains(call.span)) {
            "after a failure"
        } else {
            "with its attempt counter advanced"
        };
        facts.boundaries[fi] = Some(Boundary {
            kind: BoundaryKind::Retry,
            entry: "inferred.self-retry".into(),
            flavor: "retry".into(),
            label: format!("`{}()`, which calls itself again {why}", f.name),
            anchor: f.name_span,
            type_name: None,
            owner_call: None,
        });
    }
}

/// Whether a loop retries; see [`LoopInfo::is_retry`].
pub fn is_retry_loop(l: &LoopInfo) -> bool {
    l.is_retry()
}

/// A boundary from a catalogue entry, with the construct's label and anchor.
pub(crate) fn boundary_of(
    entry: &BoundaryEntry,
    label: String,
    anchor: Span,
    type_name: Option<String>,
    owner_call: Option<CallId>,
) -> Boundary {
    // A user's entry: its label names the team's helper as the team knows it. A
    // redelivering one's label says why the handler runs again (`processMessage(…)`
    // alone does not).
    let label = if (entry.user || entry.flavor == "redelivery")
        && !entry.label_default
        && !entry.label.is_empty()
        && !label.contains(entry.label.trim_matches('`'))
    {
        format!("{label} ({})", entry.label)
    } else {
        label
    };
    Boundary {
        kind: entry.kind,
        entry: entry.id.clone(),
        flavor: entry.flavor.clone(),
        label,
        anchor,
        type_name,
        owner_call,
    }
}

/// The lambda a local named `name` holds at `offset` (`let op = || async { .. };
/// op.retry(b)`; `Runnable task = () -> ..; executor.schedule(task, ..)`).
pub fn lambda_bound_to(model: &FileModel, name: &str, offset: usize) -> Option<ScopeId> {
    let v = local_value(model, name, offset)?;
    model
        .scopes
        .iter()
        .position(|s| {
            matches!(s.kind, ScopeKind::Lambda(_) | ScopeKind::Object(_)) && s.span == v.span
        })
        .or_else(|| sam_lambda(model, v))
}

/// When `v` is exactly an instance of a class the file declares with a supertype (`new
/// Handler()`, `new Handler(api, "x")`, Kotlin `Handler(api)`), the one method of that
/// class that overrides a supertype's (Java `@Override`, Kotlin `override`; `toString`,
/// `equals` and `hashCode` aside): what a library calls on the object it was given. Its
/// constructors and field initialisers run once, when the object is made. A class with
/// several such methods (`RetryCallback` and `RecoveryCallback` at once) gives none: which
/// one the library runs per attempt is not known. The class is the one of that name nested
/// in a type around the call, else the file's top-level one.
fn own_class_overrides(model: &FileModel, text: &str, v: &Value) -> Vec<ScopeId> {
    let Some(call) = v.atoms.iter().find_map(|a| match a {
        Atom::Call(c) if model.calls[*c].span == v.span => Some(&model.calls[*c]),
        _ => None,
    }) else {
        return Vec::new();
    };
    let constructs = call.is_new || model.language == Language::Kotlin;
    if !constructs || call.receiver.is_some() || !call.callee.starts_with(char::is_uppercase) {
        return Vec::new();
    }
    let named: Vec<ScopeId> = model
        .scopes
        .iter()
        .enumerate()
        .filter(|(_, s)| {
            matches!(&s.kind, ScopeKind::Type(t) if t.name == call.callee && !t.supertypes.is_empty())
        })
        .map(|(i, _)| i)
        .collect();
    // Nested in a type around the call (the nearest), else at the top level of the file.
    let class = model
        .ancestors(call.scope)
        .find_map(|a| {
            named
                .iter()
                .copied()
                .find(|&c| model.scopes[c].parent == Some(a))
        })
        .or_else(|| {
            let top: Vec<ScopeId> = named
                .iter()
                .copied()
                .filter(|&c| model.scopes[c].parent == Some(0))
                .collect();
            (top.len() == 1).then(|| top[0])
        });
    let Some(class) = class else {
        return Vec::new();
    };
    let overrides: Vec<ScopeId> = model
        .scopes
        .iter()
        .enumerate()
        .filter(|(_, s)| s.parent == Some(class))
        .filter_map(|(i, s)| match &s.kind {
            ScopeKind::Function(f)
                if f.name != call.callee
                    && !matches!(f.name.as_str(), "toString" | "equals" | "hashCode") =>
            {
                let head = text.get(s.span.start..f.name_span.start).unwrap_or("");
                let overrides = f.annotations.iter().any(|a| a.name == "Override")
                    || (model.language == Language::Kotlin
                        && crate::text::has_word(head, "override"));
                overrides.then_some(i)
            }
            _ => None,
        })
        .collect();
    if overrides.len() == 1 {
        overrides
    } else {
        Vec::new()
    }
}

/// The simple name of a written type: generic arguments, qualifier and a Kotlin `?`
/// dropped (`java.util.function.Consumer<Message<T>>` → `Consumer`).
fn simple_type_name(ty: &str) -> &str {
    let t = ty.split('<').next().unwrap_or("").trim();
    t.rsplit('.').next().unwrap_or(t).trim_end_matches('?')
}

/// The lambda a Kotlin SAM constructor wraps when the value `v` is one
/// (`MessageReceiver { m, c -> .. }`, as an argument or a local's initialiser).
fn sam_lambda(model: &FileModel, v: &Value) -> Option<ScopeId> {
    let [Atom::Call(c)] = v.atoms.as_slice() else {
        return None;
    };
    let call = &model.calls[*c];
    if model.language != Language::Kotlin
        || call.span != v.span
        || call.receiver.is_some()
        || !call.callee.starts_with(char::is_uppercase)
    {
        return None;
    }
    match call.args.as_slice() {
        [a] => a.lambda,
        _ => None,
    }
}

/// The function a local named `name` is bound to as a method reference before `offset`
/// (`MessageReceiver receiver = this::onMessage;`, `val h = ::onMessage`): its simple name.
pub fn fn_ref_bound_to<'t>(
    model: &FileModel,
    text: &'t str,
    name: &str,
    offset: usize,
) -> Option<&'t str> {
    let v = local_value(model, name, offset)?;
    own_method_ref(text.get(v.span.start..v.span.end)?)
}

/// The initial value of the last local named `name` declared before `offset`; with none,
/// that of the file's only field of that name (`private final DeliverCallback onMessage =
/// (tag, d) -> ..`), unless a parameter of that name is in scope at `offset`.
fn local_value<'m>(model: &'m FileModel, name: &str, offset: usize) -> Option<&'m Value> {
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let local = model
        .bindings
        .iter()
        .filter(|b| b.kind == BindingKind::Local && b.name_span.start < offset && b.name == name)
        .max_by_key(|b| b.name_span.start);
    if let Some(b) = local {
        return Some(&model.values[b.value?]);
    }
    let mut fields = model
        .bindings
        .iter()
        .filter(|b| b.kind == BindingKind::Field && b.name == name);
    let field = fields.next()?;
    if fields.next().is_some()
        || model.bindings.iter().any(|b| {
            b.kind == BindingKind::Param
                && b.name == name
                && model.scopes[b.scope]
                    .span
                    .contains(Span::new(offset, offset))
        })
    {
        return None;
    }
    Some(&model.values[field.value?])
}

/// The method named by a reference to one of this type's methods, `this::charge` or
/// `::charge` (source text): its simple name.
fn own_method_ref(expr: &str) -> Option<&str> {
    let (owner, f) = expr.trim().rsplit_once("::")?;
    let f = f.trim();
    (matches!(owner.trim(), "" | "this")
        && !f.is_empty()
        && f != "new"
        && f.chars().all(|c| c.is_alphanumeric() || c == '_'))
    .then_some(f)
}

/// A `return` inside `lambda` that leaves the enclosing function (Kotlin non-local return).
/// True when a lambda holds a `return` that leaves the enclosing function (Kotlin inline
/// lambdas: `repeat(3) { try { return block() } catch (..) {} }`).
pub fn has_nonlocal_return(model: &FileModel, lambda: ScopeId) -> bool {
    let span = model.scopes[lambda].span;
    model
        .returns
        .iter()
        .any(|r| span.contains(r.span) && !model.is_within(r.scope, lambda))
}

/// True when a lambda carries progress from one run to the next: outside any `catch`, it
/// assigns a local declared before it from a local declared in it whose value was
/// computed from the assigned local (`val page = api.page(cursor)` .. `cursor =
/// page.nextCursor`, directly or through further locals of the lambda). Each run of such
/// a `repeat` continues where the last one left off (pages, batches): an iteration, not a
/// retry of the same work, whatever its returns. A retry carries only what failed, for
/// after the loop or for its wait (`last = e`, `last = r` with `r` the attempt's result,
/// not computed from `last`), or a backoff computed from itself (`delay = minOf(delay * 2,
/// max)`, through no local of the lambda).
pub fn carries_progress(model: &FileModel, lambda: ScopeId) -> bool {
    let span = model.scopes[lambda].span;
    let inside = |off: usize| span.start <= off && off < span.end;
    let assigns: Vec<&Assign> = model
        .assigns
        .iter()
        .filter(|a| span.contains(a.span) && !model.catches.iter().any(|c| c.contains(a.span)))
        .collect();
    if assigns.is_empty() {
        return false;
    }
    // Bindings by name, in source order (one pass; lookups are then per name).
    let mut by_name: HashMap<&str, Vec<&Binding>> = HashMap::new();
    for b in &model.bindings {
        by_name.entry(b.name.as_str()).or_default().push(b);
    }
    for v in by_name.values_mut() {
        v.sort_by_key(|b| b.name_span.start);
    }
    let in_effect = |name: &str, at: usize| -> Option<&Binding> {
        let v = by_name.get(name)?;
        let i = v.partition_point(|b| b.name_span.start < at);
        i.checked_sub(1).map(|i| v[i])
    };
    // Reads inside the lambda, by name (byte offsets, sorted).
    let mut reads: HashMap<&str, Vec<usize>> = HashMap::new();
    for v in &model.values {
        if !span.contains(v.span) {
            continue;
        }
        for at in &v.atoms {
            if let Atom::Name { name, offset } = at
                && inside(*offset)
            {
                reads.entry(name.as_str()).or_default().push(*offset);
            }
        }
    }
    for v in reads.values_mut() {
        v.sort_unstable();
        v.dedup();
    }
    assigns.iter().any(|a| {
        let outer_local = in_effect(&a.name, a.span.start)
            .is_some_and(|b| b.kind == BindingKind::Local && b.name_span.start < span.start);
        if !outer_local {
            return false;
        }
        let target_reads = reads.get(a.name.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        // A local of the lambda whose value (its span, nested lambdas included) reads the
        // target, directly or through another local of the lambda (a few steps).
        let mut seen: Vec<usize> = Vec::new();
        let mut work: Vec<(&str, usize, u8)> = model.values[a.value]
            .atoms
            .iter()
            .filter_map(|at| match at {
                Atom::Name { name, offset } => Some((name.as_str(), *offset, 0)),
                _ => None,
            })
            .collect();
        while let Some((name, at, depth)) = work.pop() {
            let Some(b) = in_effect(name, at) else {
                continue;
            };
            if !inside(b.name_span.start) || seen.contains(&b.name_span.start) {
                continue;
            }
            seen.push(b.name_span.start);
            let Some(vid) = b.value else { continue };
            let vs = model.values[vid].span;
            let i = target_reads.partition_point(|o| *o < vs.start);
            if target_reads.get(i).is_some_and(|o| *o < vs.end) {
                return true;
            }
            if depth < 8 {
                work.extend(model.values[vid].atoms.iter().filter_map(|at| match at {
                    Atom::Name { name, offset } => Some((name.as_str(), *offset, depth + 1)),
                    _ => None,
                }));
            }
        }
        false
    })
}

/// True when a value names a key header: a key-header literal, a constant whose name says
/// idempotency, or a string literal inside it that is a key header
/// (`HeaderName::from_static("idempotency-key")`).
pub fn names_key_header(model: &FileModel, cat: &Catalogue, v: &Value) -> Option<String> {
    if let Some(l) = &v.literal {
        return cat.is_key_header(l).then(|| l.clone());
    }
    // A constant that names the header (`IDEMPOTENCY_KEY_HEADER`, `Headers.IDEMPOTENCY`),
    // not a variable holding the key's value (`idempotencyKey`).
    if let Some(id) = &v.ident {
        // A constant declared in this file with a string value: the header is that value
        // (`IDEMPOTENCY_HTTP_HEADER_KEY = "ibanity-idempotency-key"`), which is what a
        // reader looks for in traffic, not the constant's name.
        // Only when it is the one binding of that name in the file (another class's
        // constant or a local that shadows it could be the one meant) and its value reads
        // as a header name: a token of at most 100 characters (RFC 9110 `tchar`s).
        let mut same_name = model.bindings.iter().filter(|b| b.name == *id);
        let declared = match (same_name.next(), same_name.next()) {
            (Some(b), None) if b.kind == BindingKind::Field => b
                .value
                .and_then(|bv| model.values[bv].literal.clone())
                .filter(|l| {
                    !l.is_empty()
                        && l.len() <= 100
                        && l.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
                }),
            _ => None,
        };
        let constant_like =
            id.chars().all(|c| !c.is_lowercase()) || id.to_ascii_lowercase().contains("header");
        if constant_like && crate::catalogue::normalize_name(id).contains("idempotency")
            || crate::catalogue::normalize_name(id).contains("idempotence")
        {
            return Some(
                declared
                    .filter(|l| !l.is_empty())
                    .unwrap_or_else(|| id.clone()),
            );
        }
        // A constant whose value is a key header (`const val IDEM_HEADER =
        // "Idempotency-Key"`).
        if let Some(h) = model.bindings.iter().find_map(|b| {
            (b.kind == BindingKind::Field && b.name == *id)
                .then_some(b.value)
                .flatten()
                .and_then(|bv| model.values[bv].literal.clone())
                .filter(|l| cat.is_key_header(l))
        }) {
            return Some(h);
        }
    }
    model
        .strings
        .iter()
        .find(|s| v.span.contains(s.span) && cat.is_key_header(&s.text))
        .map(|s| s.text.clone())
}

/// A name written as a constant: upper case, digits and `_`, with a letter
/// (`CLIENT_CORRELATION_ID`).
pub(crate) fn constant_case(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase())
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The qualifier of a constant reference as written (`Props` of `Props.ID`,
/// `a.b.Props.ID`, `Props::ID`), if any.
pub(crate) fn qualifier_of(src: &str) -> Option<String> {
    let src = src.trim();
    let (q, _) = src.rsplit_once("::").or_else(|| src.rsplit_once('.'))?;
    let q = q.rsplit(['.', ':']).next().unwrap_or(q).trim();
    (!q.is_empty() && q.chars().all(|c| c.is_alphanumeric() || c == '_')).then(|| q.to_string())
}

/// Records [`FileFacts::named_writes`]: header setters whose name is a constant this file
/// neither declares nor resolves to a key header, and, in a file importing Apache Camel,
/// `setProperty(name, value)` calls (an exchange property; `System.setProperty` and
/// `java.util.Properties` are not).
fn named_writes(model: &FileModel, text: &str, cat: &Catalogue, facts: &mut FileFacts) {
    let lang = model.language;
    let sunk: foldhash::HashSet<ValueId> = facts.sinks.iter().map(|s| s.value).collect();
    let camel = imports_any(text, &["org.apache.camel".to_string()]);
    // Constants this file declares itself: a write under one of them is resolved here.
    let own: foldhash::HashSet<&str> = model
        .bindings
        .iter()
        .filter(|b| b.kind == BindingKind::Field)
        .map(|b| b.name.as_str())
        .collect();
    for (cid, call) in model.calls.iter().enumerate() {
        if call.args.len() != 2 || call.args.iter().any(|a| a.name.is_some()) {
            continue;
        }
        let (name_v, value) = (&model.values[call.args[0].value], call.args[1].value);
        if sunk.contains(&value) {
            continue;
        }
        let slot = if call.callee == "setProperty" {
            if !camel
                || call.receiver.as_deref().is_some_and(|r| {
                    matches!(
                        crate::catalogue::last_segment(r),
                        "System" | "props" | "properties"
                    )
                })
            {
                continue;
            }
            SlotKind::ExchangeProperty
        } else if cat
            .header_setters
            .iter()
            .any(|hs| hs.name_arg == 0 && hs.value_arg == 1 && hs.call.matches(lang, call))
        {
            SlotKind::Header
        } else {
            continue;
        };
        let src = text.get(name_v.span.start..name_v.span.end).unwrap_or("");
        let qualifier = qualifier_of(src);
        let name = match (&name_v.ident, &name_v.literal, slot) {
            (Some(id), _, _)
                if constant_case(id) && (qualifier.is_some() || !own.contains(id.as_str())) =>
            {
                id.clone()
            }
            (None, Some(l), SlotKind::ExchangeProperty) if !l.is_empty() => l.clone(),
            _ => continue,
        };
        facts.named_writes.push(NamedWrite {
            name,
            qualifier,
            slot,
            value,
            scope: call.scope,
            call: cid,
        });
    }
}

fn sinks(model: &FileModel, cat: &Catalogue, facts: &mut FileFacts) {
    let lang = model.language;
    for (cid, call) in model.calls.iter().enumerate() {
        for hs in &cat.header_setters {
            if call.args.len() <= hs.name_arg.max(hs.value_arg) || !hs.call.matches(lang, call) {
                continue;
            }
            // Kotlin named arguments (`header(value = v, name = "Idempotency-Key")`) may come
            // in any order: pick them by name when present.
            let named = |names: &[&str]| {
                call.args
                    .iter()
                    .position(|a| a.name.as_deref().is_some_and(|n| names.contains(&n)))
            };
            let name_idx = named(&["name", "key", "headerName"]).unwrap_or(hs.name_arg);
            let value_idx = named(&["value", "headerValue"]).unwrap_or(hs.value_arg);
            let name_v = &model.values[call.args[name_idx].value];
            // `params.put("idempotency_key", key)`: a request-body field named after the key.
            if let Some(l) = &name_v.literal
                && cat.is_key_field_literal(l)
                && !cat.is_key_header(l)
            {
                facts.sinks.push(Sink {
                    value: call.args[value_idx].value,
                    scope: call.scope,
                    label: format!("the `{l}` field"),
                    call: Some(cid),
                });
                break;
            }
            if let Some(h) = names_key_header(model, cat, name_v) {
                facts.sinks.push(Sink {
                    value: call.args[value_idx].value,
                    scope: call.scope,
                    label: format!("the `{h}` header"),
                    call: Some(cid),
                });
                break;
            }
        }
        for cs in &cat.call_sinks {
            if call.args.len() > cs.value_arg && cs.call.matches(lang, call) {
                facts.sinks.push(Sink {
                    value: call.args[cs.value_arg].value,
                    scope: call.scope,
                    label: cs.label.clone(),
                    call: Some(cid),
                });
            }
        }
        // A setter named after the key: setIdempotencyKey(k), idempotencyKey(k),
        // with_idempotency_key(k).
        if !call.args.is_empty() && !call.is_new {
            let stripped = ["set", "with", "put"]
                .iter()
                .find_map(|p| {
                    call.callee
                        .strip_prefix(p)
                        .filter(|r| r.starts_with(|c: char| c.is_uppercase() || c == '_'))
                })
                .unwrap_or(&call.callee);
            let n = crate::catalogue::normalize_name(stripped);
            if cat.keys.normalized_names.contains(&n) {
                facts.sinks.push(Sink {
                    value: call.args[0].value,
                    scope: call.scope,
                    label: format!("`{}`", call.callee),
                    call: Some(cid),
                });
            } else if let Some(label) = cat.typed_key_field(&n, call) {
                // A provider's own deduplication field on its request types
                // (`startRequest.setRequestId(v)` on a `StartWorkflowExecutionRequest`).
                facts.sinks.push(Sink {
                    value: call.args[0].value,
                    scope: call.scope,
                    label,
                    call: Some(cid),
                });
            }
        }
        // A positional argument of a constructor whose parameter is a key field (a record
        // component, a Kotlin `val`; `this(.., UUID.randomUUID().toString())`).
        if let Some(names) = model.components_written(call) {
            for (name, arg) in names.iter().zip(&call.args) {
                if arg.name.is_none() && !name.is_empty() && cat.is_key_name(name) {
                    let ty = if call.callee == "this" {
                        "this".to_string()
                    } else {
                        call.callee.clone()
                    };
                    facts.sinks.push(Sink {
                        value: arg.value,
                        scope: call.scope,
                        label: format!("the `{name}` component of `{ty}(..)`"),
                        call: Some(cid),
                    });
                }
            }
        }
        for arg in &call.args {
            let Some(name) = &arg.name else { continue };
            // A named argument of a constructor of a type with its own key field
            // (`CreateEventInput(transactionId = v)`).
            if cat.is_key_name(name)
                || (call.is_new
                    && cat.is_typed_key_field_of(
                        &crate::catalogue::normalize_name(name),
                        &call.callee,
                    ))
            {
                facts.sinks.push(Sink {
                    value: arg.value,
                    scope: call.scope,
                    label: format!("the `{name}` argument of `{}`", call.callee),
                    call: Some(cid),
                });
            }
        }
    }
    let key_strings: Vec<(Span, &str)> = model
        .strings
        .iter()
        .filter(|s| cat.is_key_header(&s.text))
        .map(|s| (s.span, s.text.as_str()))
        .collect();
    // Constants of this file whose value is a key-header literal: (name, header).
    let key_consts: foldhash::HashSet<(&str, &str)> = model
        .bindings
        .iter()
        .filter(|b| b.kind == BindingKind::Field)
        .filter_map(|b| {
            let l = model.values[b.value?].literal.as_deref()?;
            cat.is_key_header(l).then_some((b.name.as_str(), l))
        })
        .collect();
    // Name/value pairs: `("Idempotency-Key", k)`, `"Idempotency-Key" to k`.
    for p in &model.pairs {
        if let Some(label) = pair_key_label(model, cat, &key_strings, &key_consts, p.key) {
            facts.sinks.push(Sink {
                value: p.value,
                scope: p.scope,
                label,
                call: None,
            });
        }
    }
    let sunk: foldhash::HashSet<ValueId> = facts.sinks.iter().map(|s| s.value).collect();
    // Calls that take a name and then its value, whatever their name or receiver:
    // `headers.put("Idempotency-Key", k)`, `Map.of("Idempotency-Key", k)`,
    // `headers.insert(IDEMPOTENCY_KEY, k)`, `Map.entry(..)`, `Pair(..)`, `append(..)`.
    for (cid, call) in model.calls.iter().enumerate() {
        for i in 0..call.args.len().saturating_sub(1) {
            let value = call.args[i + 1].value;
            if call.args[i].name.is_some() || sunk.contains(&value) {
                continue;
            }
            if let Some(label) =
                pair_key_label(model, cat, &key_strings, &key_consts, call.args[i].value)
            {
                facts.sinks.push(Sink {
                    value,
                    scope: call.scope,
                    label,
                    call: Some(cid),
                });
            }
        }
    }
    for b in &model.bindings {
        if let Some(v) = b.value
            && cat.is_key_name(&b.name)
        {
            facts.sinks.push(Sink {
                value: v,
                scope: b.scope,
                label: format!("`{}`", b.name),
                call: None,
            });
        }
    }
    for a in &model.assigns {
        if cat.is_key_name(&a.name) {
            facts.sinks.push(Sink {
                value: a.value,
                scope: a.scope,
                label: format!("`{}`", a.name),
                call: None,
            });
        }
    }
    for f in &model.field_inits {
        if cat.is_key_name(&f.name) {
            facts.sinks.push(Sink {
                value: f.value,
                scope: f.scope,
                label: format!("the `{}` field", f.name),
                call: None,
            });
            continue;
        }
        // A provider's own key field on its request type, in a struct literal
        // (`Self { transaction_id, .. }` inside `impl CreateEventInput`).
        let ty = match f.ty.as_deref() {
            Some("Self") => {
                model
                    .enclosing_type(f.scope)
                    .and_then(|t| match &model.scopes[t].kind {
                        crate::model::ScopeKind::Type(info) => Some(info.name.as_str()),
                        _ => None,
                    })
            }
            other => other,
        };
        if let Some(ty) = ty
            && cat.is_typed_key_field_of(&crate::catalogue::normalize_name(&f.name), ty)
        {
            facts.sinks.push(Sink {
                value: f.value,
                scope: f.scope,
                label: format!("the `{}` field of `{ty}`", f.name),
                call: None,
            });
        }
    }
}

/// How a message names the key slot a pair's name designates: a key header
/// ("the `Idempotency-Key` header") or a body field named after the key
/// ("the `idempotency_key` field").
fn pair_key_label(
    model: &FileModel,
    cat: &Catalogue,
    key_strings: &[(Span, &str)],
    key_consts: &foldhash::HashSet<(&str, &str)>,
    key: ValueId,
) -> Option<String> {
    let v = &model.values[key];
    if let Some(l) = &v.literal {
        if cat.is_key_field_literal(l) && !cat.is_key_header(l) {
            return Some(format!("the `{l}` field"));
        }
        return cat.is_key_header(l).then(|| format!("the `{l}` header"));
    }
    if let Some(id) = &v.ident {
        // Cheap test first: only names that say idempotency, or constants of this file
        // whose value is a key header, can name one.
        let says = crate::catalogue::normalize_name(id).contains("idempotency");
        if !says
            && !key_strings
                .iter()
                .any(|(_, h)| key_consts.contains(&(id.as_str(), *h)))
        {
            return None;
        }
        return names_key_header(model, cat, v).map(|h| format!("the `{h}` header"));
    }
    // One small call around a key-header literal
    // (`HeaderName::from_static("idempotency-key")`); never an expression holding a lambda
    // or a block that merely mentions the header somewhere inside. `key_strings` are the
    // file's key-header literals (few), so this stays linear in the number of arguments.
    if v.atoms.len() > 2 {
        return None;
    }
    let (ss, h) = key_strings.iter().find(|(ss, _)| v.span.contains(*ss))?;
    let holds_scope = model
        .scopes
        .iter()
        .skip(1)
        .any(|s| v.span.contains(s.span) && s.span.contains(*ss));
    (!holds_scope).then(|| format!("the `{h}` header"))
}

fn locks(model: &FileModel, cat: &Catalogue, facts: &mut FileFacts) {
    let lang = model.language;
    for entry in &cat.locks {
        match entry.form {
            LockForm::Sql => {
                for s in &model.strings {
                    let lower = s.text.to_ascii_lowercase();
                    let any = entry.contains.is_empty()
                        || entry.contains.iter().any(|c| lower.contains(c.as_str()));
                    let all = entry
                        .contains_all
                        .iter()
                        .all(|c| lower.contains(c.as_str()));
                    if any && all && !(entry.contains.is_empty() && entry.contains_all.is_empty()) {
                        facts.locks.push(Lock {
                            label: entry.label.clone(),
                            span: s.span,
                            scope: s.scope,
                            requires_shedlock: false,
                        });
                    }
                }
            }
            LockForm::Call => {
                for c in &model.calls {
                    if entry.call.matches(lang, c) {
                        facts.locks.push(Lock {
                            label: entry.label.clone(),
                            span: c.span,
                            scope: c.scope,
                            requires_shedlock: false,
                        });
                    }
                }
            }
            LockForm::Annotation => {
                for (i, s) in model.scopes.iter().enumerate() {
                    if let ScopeKind::Function(f) = &s.kind
                        && let Some(a) = f
                            .annotations
                            .iter()
                            .find(|a| entry.annotations.contains(&a.name))
                    {
                        facts.locks.push(Lock {
                            label: entry.label.clone(),
                            span: a.span,
                            scope: i,
                            requires_shedlock: entry.requires_shedlock,
                        });
                    }
                }
            }
        }
    }
}

fn header_reads(model: &FileModel, cat: &Catalogue, facts: &mut FileFacts) {
    let lang = model.language;
    for c in &model.calls {
        if c.args.len() != 1 || c.args[0].lambda.is_some() {
            continue;
        }
        if !cat.header_readers.iter().any(|r| r.call.matches(lang, c)) {
            continue;
        }
        if names_key_header(model, cat, &model.values[c.args[0].value]).is_some() {
            facts.header_reads.push((c.span, c.scope));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_import_prefix_is_found_in_sorted_paths_as_a_scan_finds_it() {
        let text = "package p;\nimport org.springframework.retry.annotation.Retryable;\n\
                    import static io.github.resilience4j.retry.Retry.decorate;\n\
                    import org.springframework.kafka.annotation.KafkaListener;\n\
                    import com.rabbitmq.client.DeliverCallback;\nimport a.b;\nimport a.bc.D;\n";
        let mut paths = import_paths(text);
        assert_eq!(paths.len(), 6);
        let scan = |x: &str| paths.iter().any(|p| p.starts_with(x));
        let prefixes = [
            "org.springframework.retry",
            "org.springframework.kafka",
            "org.springframework.web",
            "io.github.resilience4j",
            "com.rabbitmq",
            "com.rabbit",
            "a.b",
            "a.bc",
            "a.bd",
            "a",
            "b",
            "",
            "zzz",
        ];
        let want: Vec<bool> = prefixes.iter().map(|x| scan(x)).collect();
        paths.sort_unstable();
        for (x, want) in prefixes.iter().zip(want) {
            assert_eq!(imported_any(&paths, &[x.to_string()]), want, "{x}");
        }
        assert!(!imported_any(&paths, &[]));
        assert!(imported_any(&paths, &["zzz".into(), "com.rabbitmq".into()]));
        assert!(!imported_any(&[], &["a".into()]));
    }
}
