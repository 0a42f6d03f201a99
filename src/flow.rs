//! Intra-file value flow: which ephemeral evaluations a value depends on.
//!
//! Starting from a [`Value`], atoms are followed through local bindings (the binding in
//! effect at the use: nearest enclosing scope, declared before the use; fields regardless
//! of order), through the assignments to that binding that can reach the use (earlier in
//! the text, or around a loop's back edge, or any for a read inside a lambda), into the results of lambdas passed
//! to calls (`orElseGet { .. }`, `unwrap_or_else(|| ..)`) except memoizing calls
//! (`computeIfAbsent`), and stop at parameters (the caller's value) and at stable
//! derivations (`idemkey::derive`). A call to a project function that returns a fresh
//! value is an origin *at the call site*, because that is where it is evaluated.

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use crate::catalogue::Catalogue;
use crate::model::*;

/// An evaluation that yields a new value each time it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The source expression, or the helper call.
    pub span: Span,
    /// `UUID.randomUUID()`, or `newKey()` for a helper.
    pub display: String,
    pub kind: SourceKind,
    /// Innermost scope of the evaluation.
    pub scope: ScopeId,
    /// Set when the origin is a call to a project helper.
    pub helper: Option<HelperInfo>,
    /// A clock reading reduced to a window of a minute or more ([`clock_window`]): a
    /// deliberate time bucket. Reported only by a flow built [`Flow::keeping_windows`].
    pub window: bool,
    /// An attempt counter's read ([`Flow::attempt_counter`]): new on every attempt of the
    /// retry around it, not on every evaluation, so a function returning one does not
    /// return a fresh value to its callers (`crate::index::summarize`).
    pub counter: bool,
}

/// What the project index knows about a helper that returns a fresh value.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HelperInfo {
    pub kind: SourceKind,
    /// The source deep inside, e.g. `UUID.randomUUID()`.
    pub source: String,
    /// Where it is: `path:line`.
    pub location: String,
    /// `(fresh, candidates)` when only some of the declarations a call may refer to
    /// return a fresh value ([`crate::index::ProjectIndex::fresh_from`]): a finding
    /// through it names the ambiguity and is reported one severity lower.
    pub ambiguous: Option<(usize, usize)>,
}

/// Answers "does calling this return a fresh value?" for project functions.
pub trait HelperOracle {
    fn fresh(&self, lang: Language, call: &Call) -> Option<HelperInfo>;
}

/// An oracle that knows no helper, but records which calls it was asked about (pass 1).
pub struct Recorder<'c> {
    /// Each call asked about, with what resolves it (callee, arity, receiver).
    pub asked: std::cell::RefCell<Vec<crate::index::CallRef>>,
    /// Where the records of calls already met are kept (one per file), if anywhere.
    pub cache: Option<&'c CallRefCache>,
    /// How a call's record is made ([`crate::index::CallRef::of`] unless told otherwise).
    make: fn(&Call) -> crate::index::CallRef,
}

impl Default for Recorder<'_> {
    fn default() -> Self {
        Recorder {
            asked: Default::default(),
            cache: None,
            make: crate::index::CallRef::of,
        }
    }
}

impl<'c> Recorder<'c> {
    /// A recorder that makes each call's record ([`crate::index::CallRef::of`]) once per
    /// `cache`.
    pub fn cached(cache: &'c CallRefCache) -> Self {
        Self::cached_with(cache, crate::index::CallRef::of)
    }

    /// A recorder that makes each call's record with `make`, once per `cache` (a cache
    /// serves one `make`).
    pub fn cached_with(cache: &'c CallRefCache, make: fn(&Call) -> crate::index::CallRef) -> Self {
        Recorder {
            asked: Default::default(),
            cache: Some(cache),
            make,
        }
    }
}

impl HelperOracle for Recorder<'_> {
    fn fresh(&self, _lang: Language, call: &Call) -> Option<HelperInfo> {
        let r = match self.cache {
            Some(c) => c.get(call, self.make),
            None => (self.make)(call),
        };
        self.asked.borrow_mut().push(r);
        None
    }
}

/// The records ([`crate::index::CallRef`]) of one file's calls, each made once: the flows
/// of a file meet the same call on many paths, and a record costs a few allocations.
/// Keyed by the call's address and checked against its span, callee and argument count,
/// so a call of another model is never answered with a record of this one's. Each cache
/// serves one way of making records (one `make` function).
#[derive(Default)]
pub struct CallRefCache {
    made: std::cell::RefCell<HashMap<usize, (Span, crate::index::CallRef)>>,
}

impl CallRefCache {
    /// The record of `call`, made by `make` the first time it is asked for.
    pub fn get(
        &self,
        call: &Call,
        make: impl FnOnce(&Call) -> crate::index::CallRef,
    ) -> crate::index::CallRef {
        let key = std::ptr::from_ref(call) as usize;
        if let Some((span, r)) = self.made.borrow().get(&key)
            && *span == call.span
            && r.arity == call.args.len()
            && *r.callee == *call.callee
        {
            return *r;
        }
        let r = make(call);
        self.made.borrow_mut().insert(key, (call.span, r));
        r
    }
}

/// The field a zero-argument getter reads: `getIdempotencyKey` → `idempotencyKey`,
/// `isLive` → `live`; a Kotlin/Rust accessor-style name (`idempotency_key()`) is itself.
/// `None` for names that are not accessors (`toString`, `get`).
fn getter_field(callee: &str) -> Option<String> {
    // JDK value methods named like getters that return the value itself in another form
    // (`data.getBytes()` of a `String`, `date.getTime()` of a `Date`, `instant.getEpochSecond()`):
    // no field of an object, the whole value.
    if NOT_FIELD_GETTERS.contains(&callee) {
        return None;
    }
    for p in ["get", "is"] {
        if let Some(rest) = callee.strip_prefix(p)
            && rest.starts_with(|c: char| c.is_ascii_uppercase())
        {
            let mut cs = rest.chars();
            let first = cs.next()?.to_ascii_lowercase();
            return Some(std::iter::once(first).chain(cs).collect());
        }
    }
    None
}

const NOT_FIELD_GETTERS: &[&str] = &[
    "getBytes",
    "getChars",
    "getTime",
    "getEpochSecond",
    "getNano",
    "getMostSignificantBits",
    "getLeastSignificantBits",
];

/// Per-file lookup tables for flow queries.
pub struct Flow<'m> {
    pub model: &'m FileModel,
    cat: &'m Catalogue,
    bindings_by_scope: HashMap<(&'m str, ScopeId), Vec<(usize, usize)>>,
    assigns_by_name: HashMap<&'m str, Vec<usize>>,
    returns_by_scope: HashMap<ScopeId, Vec<usize>>,
    /// Names of fields declared in this file (record components included), for accessor
    /// calls `command.idempotencyKey()`.
    field_names: HashSet<&'m str>,
    /// [`FileModel::field_reads`] by the name's offset.
    field_reads: HashMap<usize, &'m str>,
    /// Writes into named slots by slot name, built on first use (see `field_writes`).
    field_writes: std::cell::OnceCell<HashMap<String, Vec<ValueId>>>,
    /// Scopes sorted by start (then by index), for innermost-scope queries.
    scope_order: Vec<ScopeId>,
    /// Functions declared in this file by (name, parameter count).
    fns_by_name: HashMap<(&'m str, usize), Vec<ScopeId>>,
    /// [`Flow::carried`] answers by function scope, computed on first use; `None` while a
    /// computation is under way (recursion is answered "unknown").
    carries: std::cell::RefCell<HashMap<ScopeId, Option<std::rc::Rc<Vec<Carry>>>>>,
    /// Lambdas that a retry construct runs once per attempt (see
    /// [`Flow::with_attempt_lambdas`]): their parameters are what it passes in each time.
    attempt_lambdas: HashSet<ScopeId>,
    /// Whether time buckets ([`Origin::window`]) are origins (see [`Flow::keeping_windows`]).
    keep_windows: bool,
    /// Calls by receiver text and by start offset (for the calls inside a span), so field
    /// and mutation queries do not scan every call of the file.
    calls_by_receiver: HashMap<&'m str, Vec<CallId>>,
    calls_by_start: Vec<CallId>,
    /// Nesting of [`Flow::carried`] computations (a chain of functions each returning the
    /// next one's result); past [`MAX_CARRY_DEPTH`] the answer is "unknown".
    carry_depth: std::cell::Cell<usize>,
    /// Within one outermost origins query: the origins of each lambda or getter body run
    /// by a call or read ([`Flow::body_origins`]), so a body read in many places (or
    /// reading other such bodies) is walked once, not once per path to it.
    body_memo: std::cell::RefCell<HashMap<ScopeId, BodyOrigins>>,
    /// Nesting of origins queries: the memo is dropped when the outermost one ends.
    query_depth: std::cell::Cell<usize>,
    /// Simple names of the types and objects declared in this file, built on first use
    /// ([`Flow::local_function`] asks once per call it meets).
    type_names: std::cell::OnceCell<HashSet<&'m str>>,
    /// Indices into [`FileModel::field_inits`] sorted by span start, built on first use,
    /// for the field initialisers inside a span ([`Flow::field_inits_within`]).
    field_inits_by_start: std::cell::OnceCell<Vec<usize>>,
    /// Per scope, whether it is a retry loop ([`crate::model::LoopInfo::is_retry`], which
    /// reads the loop's header text), built on first use: asked of every loop around
    /// every name a walk looks up.
    retry_loops: std::cell::OnceCell<Vec<bool>>,
}

/// Deepest chain of same-file functions [`Flow::carried`] follows.
const MAX_CARRY_DEPTH: usize = 32;

/// What a function's return value carries of one parameter: `(position, None)` the
/// parameter itself (or something computed from it), `(position, Some(field))` only that
/// field of it (`event.getDedupKey()`).
pub type Carry = (usize, Option<String>);

/// Parameters an [`Flow::origins_inner`] walk reached, for [`Flow::carried`].
struct ParamWalk {
    /// The function whose parameters count.
    function: ScopeId,
    /// Bindings (indices into `model.bindings`) and the field read of each.
    reached: Vec<(usize, Option<String>)>,
    /// The walk met something it cannot see through: a returned local that the body
    /// mutates (`r.setKey(key)`), so anything may be in it.
    unknown: bool,
}

/// An oracle that knows no project helper (for walks inside this file's own functions).
struct NoHelpers;

impl HelperOracle for NoHelpers {
    fn fresh(&self, _lang: Language, _call: &Call) -> Option<HelperInfo> {
        None
    }
}

/// Values visited per [`Flow::origins`] query before it gives up (see
/// [`budget_exhausted`]).
pub const MAX_STEPS: usize = 20_000;

thread_local! {
    static EXHAUSTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Clears this thread's "a flow query ran out of budget" flag (before analysing a file).
pub fn reset_budget() {
    EXHAUSTED.with(|e| e.set(false));
}

/// Sets this thread's "a flow query ran out of budget" flag again (after a query that
/// must not clear it was run with a fresh flag).
pub fn mark_exhausted() {
    EXHAUSTED.with(|e| e.set(true));
}

/// Whether a [`Flow::origins`] query on this thread stopped at [`MAX_STEPS`] since
/// [`reset_budget`]: its answer may miss origins, which the caller reports.
pub fn budget_exhausted() -> bool {
    EXHAUSTED.with(|e| e.get())
}

/// The single abstract methods through which Java and Kotlin code calls a lambda held in
/// a variable: `java.util.function` (`Supplier.get`, `Function.apply`, `getAsInt`..),
/// `Callable.call` and Kotlin's `invoke`.
const FUNCTIONAL_METHODS: &[&str] = &[
    "get",
    "getAsInt",
    "getAsLong",
    "getAsDouble",
    "getAsBoolean",
    "apply",
    "applyAsInt",
    "applyAsLong",
    "call",
    "invoke",
];

/// An origin found inside a lambda or getter, moved to where it is evaluated: the call
/// of the lambda or the read of the property at `span` (shown as `display`, in `scope`),
/// like a call of a project helper that returns it (from `location`).
fn read_through(
    o: Origin,
    span: Span,
    display: String,
    scope: ScopeId,
    location: String,
) -> Origin {
    let (source, location) = match o.helper {
        Some(h) => (h.source, h.location),
        None => (o.display, location),
    };
    Origin {
        span,
        display,
        kind: o.kind,
        scope,
        helper: Some(HelperInfo {
            kind: o.kind,
            source,
            location,
            ambiguous: None,
        }),
        window: o.window,
        counter: o.counter,
    }
}

/// What [`Flow::body_origins`] finds: each origin, and whether every run of the body
/// evaluates it.
type BodyOrigins = std::rc::Rc<Vec<(Origin, bool)>>;

/// How a call reads in a message: `mk`, `keys.get`.
fn call_display(call: &Call) -> String {
    match call.receiver.as_deref() {
        Some(r) => format!("{r}.{}", call.callee),
        None => call.callee.clone(),
    }
}

/// Calls whose lambda argument builds an error, not the value the call yields.
/// Pipeline stages that hand their lambda's first parameter the value upstream of them:
/// Reactor (`map`, `flatMap`, `concatMap`, `switchMap`, `flatMapMany`, `doOnNext`,
/// `handle`, `zipWhen`, `filter`), Mutiny (`transform`, `transformToUni`,
/// `transformToMulti`, `chain`, `invoke`, `call`), `CompletableFuture` (`thenApply`,
/// `thenCompose`, `thenAccept` and their `Async` forms), `Optional`/`Stream` `map` and
/// `flatMap`.
const VALUE_STAGES: &[&str] = &[
    "map",
    "flatMap",
    "concatMap",
    "switchMap",
    "flatMapMany",
    "flatMapSequential",
    "doOnNext",
    "doOnSuccess",
    "handle",
    "zipWhen",
    "filter",
    "filterWhen",
    "transform",
    "transformToUni",
    "transformToMulti",
    "chain",
    "invoke",
    "call",
    "thenApply",
    "thenApplyAsync",
    "thenCompose",
    "thenComposeAsync",
    "thenAccept",
    "thenAcceptAsync",
];

const ERROR_MAPPERS: &[&str] = &[
    "map_err",
    "ok_or_else",
    "with_context",
    "context",
    "orElseThrow",
];

/// Calls that give their receiver or arguments back in another form (a conversion, a
/// string format): a parameter inside one is carried whole (see
/// [`Flow::params_reaching`]).
const SAME_VALUE_CALLS: &[&str] = &[
    "clone",
    "to_string",
    "to_owned",
    "into",
    "as_str",
    "as_ref",
    "as_deref",
    "borrow",
    "unwrap",
    "expect",
    "trim",
    "toString",
    "strip",
    "toLowerCase",
    "toUpperCase",
    "to_lowercase",
    "to_uppercase",
    "lowercase",
    "uppercase",
    "orEmpty",
    "format",
    "formatted",
    "valueOf",
    "join",
    "concat",
    "append",
    "plus",
];

impl<'m> Flow<'m> {
    pub fn new(model: &'m FileModel, cat: &'m Catalogue) -> Flow<'m> {
        let mut bindings_by_scope: HashMap<(&str, ScopeId), Vec<(usize, usize)>> = HashMap::new();
        for (i, b) in model.bindings.iter().enumerate() {
            // A local is in effect after its initialiser: in `let k = format!("x-{k}");`
            // the `k` read is the one declared before (Rust shadowing; in Java and Kotlin
            // a local read in its own initialiser does not compile).
            let start = match b.value.map(|v| model.values[v].span) {
                Some(v) if b.kind == BindingKind::Local && v.start >= b.name_span.end => v.end,
                _ => b.name_span.start,
            };
            bindings_by_scope
                .entry((b.name.as_str(), b.scope))
                .or_default()
                .push((start, i));
        }
        for list in bindings_by_scope.values_mut() {
            list.sort_unstable();
        }
        let mut assigns_by_name: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, a) in model.assigns.iter().enumerate() {
            assigns_by_name.entry(a.name.as_str()).or_default().push(i);
        }
        let mut returns_by_scope: HashMap<ScopeId, Vec<usize>> = HashMap::new();
        for (i, r) in model.returns.iter().enumerate() {
            returns_by_scope.entry(r.scope).or_default().push(i);
        }
        let field_names = model
            .bindings
            .iter()
            .filter(|b| b.kind == BindingKind::Field)
            .map(|b| b.name.as_str())
            .collect();
        let mut scope_order: Vec<ScopeId> = (0..model.scopes.len()).collect();
        scope_order.sort_by_key(|s| (model.scopes[*s].span.start, *s));
        let mut calls_by_receiver: HashMap<&str, Vec<CallId>> = HashMap::new();
        for (i, c) in model.calls.iter().enumerate() {
            if let Some(r) = c.receiver.as_deref() {
                calls_by_receiver.entry(r).or_default().push(i);
            }
        }
        let mut calls_by_start: Vec<CallId> = (0..model.calls.len()).collect();
        calls_by_start.sort_by_key(|c| model.calls[*c].span.start);
        let mut fns_by_name: HashMap<(&str, usize), Vec<ScopeId>> = HashMap::new();
        for (i, sc) in model.scopes.iter().enumerate() {
            if let ScopeKind::Function(f) = &sc.kind {
                fns_by_name
                    .entry((f.name.as_str(), f.params.len()))
                    .or_default()
                    .push(i);
            }
        }
        Flow {
            model,
            cat,
            bindings_by_scope,
            assigns_by_name,
            returns_by_scope,
            field_names,
            field_reads: model
                .field_reads
                .iter()
                .map(|(o, f)| (*o, f.as_str()))
                .collect(),
            field_writes: std::cell::OnceCell::new(),
            scope_order,
            fns_by_name,
            carries: std::cell::RefCell::new(HashMap::new()),
            attempt_lambdas: HashSet::new(),
            keep_windows: false,
            calls_by_receiver,
            calls_by_start,
            carry_depth: std::cell::Cell::new(0),
            body_memo: std::cell::RefCell::new(HashMap::new()),
            query_depth: std::cell::Cell::new(0),
            type_names: std::cell::OnceCell::new(),
            retry_loops: std::cell::OnceCell::new(),
            field_inits_by_start: std::cell::OnceCell::new(),
        }
    }

    /// Indices into [`FileModel::field_inits`] of the initialisers whose span lies within
    /// `span`, in index order (the order a scan of the whole list meets them).
    fn field_inits_within(&self, span: Span) -> Vec<usize> {
        let m = self.model;
        if m.field_inits.is_empty() {
            return Vec::new();
        }
        let order = self.field_inits_by_start.get_or_init(|| {
            let mut o: Vec<usize> = (0..m.field_inits.len()).collect();
            o.sort_by_key(|i| (m.field_inits[*i].span.start, *i));
            o
        });
        let first = order.partition_point(|i| m.field_inits[*i].span.start < span.start);
        let mut out: Vec<usize> = order[first..]
            .iter()
            .take_while(|i| m.field_inits[**i].span.start <= span.end)
            .copied()
            .filter(|i| span.contains(m.field_inits[*i].span))
            .collect();
        out.sort_unstable();
        out
    }

    /// Marks lambdas a retry construct runs once per attempt (`withRetry { attempt -> .. }`,
    /// `retryTemplate.execute(context -> ..)`): a parameter of one is a value the
    /// construct passes in on every attempt (a counter, a retry context), so a key built
    /// from it differs per attempt, like the counter of `repeat(n) { attempt -> .. }`.
    pub fn with_attempt_lambdas(mut self, lambdas: impl IntoIterator<Item = ScopeId>) -> Self {
        self.attempt_lambdas.extend(lambdas);
        self
    }

    /// Time buckets ([`clock_window`]) become origins marked [`Origin::window`] instead of
    /// being dropped. A bucket is stable across attempts that fall into one window, so it is
    /// no key of its own (`time-in-key`) and no per-run mint of a periodic job (every
    /// replica computes the same bucket); but re-evaluated per attempt of a retry it still
    /// changes at the window's edge, so the retry rules keep it. The project index and the
    /// prefilter use the default (dropped): a helper returning a bucket is not a minting
    /// helper.
    pub fn keeping_windows(mut self) -> Self {
        self.keep_windows = true;
        self
    }

    /// The innermost scope whose span contains `offset`. Containing scopes are nested, and
    /// an inner scope starts at or after its parent (ties broken by creation order), so the
    /// containing scope with the greatest `(start, index)` is the innermost.
    pub fn scope_at(&self, offset: usize) -> ScopeId {
        let idx = self
            .scope_order
            .partition_point(|s| self.model.scopes[*s].span.start <= offset);
        self.scope_order[..idx]
            .iter()
            .rev()
            .copied()
            .find(|s| {
                let sp = self.model.scopes[*s].span;
                offset < sp.end.max(sp.start + 1)
            })
            .unwrap_or(0)
    }

    /// The binding `name` refers to at byte `offset`, if declared in this file.
    pub fn lookup(&self, name: &str, offset: usize) -> Option<usize> {
        let use_scope = self.scope_at(offset);
        for s in self.model.ancestors(use_scope) {
            // Bindings of `name` in scope `s`, sorted by start: the last one declared at or
            // before the use; a field (class member) is in effect wherever it is declared.
            let Some(list) = self.bindings_by_scope.get(&(name, s)) else {
                continue;
            };
            let n = list.partition_point(|(start, _)| *start <= offset);
            if n > 0 {
                return Some(list[n - 1].1);
            }
            if let Some((_, b)) = list
                .iter()
                .rev()
                .find(|(_, b)| self.model.bindings[*b].kind == BindingKind::Field)
            {
                return Some(*b);
            }
        }
        None
    }

    /// For a lambda's first parameter `b`, when the lambda is given to a stage of a
    /// pipeline that hands it the upstream's value ([`VALUE_STAGES`]: `map`, `flatMap`,
    /// Mutiny's `transformToUni`, `thenCompose`, ...): the nearest call upstream with
    /// arguments (calls without any, `onItem()`, are passed over), whose arguments (a
    /// supplier lambda's returns, `Mono.just(x)`'s `x`) make that value.
    fn upstream_of_param(&self, b: usize) -> Option<CallId> {
        let m = self.model;
        let binding = &m.bindings[b];
        let ScopeKind::Lambda(l) = &m.scopes[binding.scope].kind else {
            return None;
        };
        if l.params.first().is_none_or(|p| p.name != binding.name) {
            return None;
        }
        let stage = &m.calls[l.owner_call?];
        if !VALUE_STAGES.contains(&stage.callee.as_str()) {
            return None;
        }
        let mut up = stage.receiver_call?;
        for _ in 0..64 {
            if !m.calls[up].args.is_empty() {
                return Some(up);
            }
            up = m.calls[up].receiver_call?;
        }
        None
    }

    /// Spans of `val` whose insides do not flow on: stable derivations (`[[stable]]`), and
    /// with `sources`, the sources themselves (a seed inside `Random(seed)` is not drawn).
    fn blocked_spans(&self, val: &crate::model::Value, sources: bool) -> Vec<Span> {
        let m = self.model;
        val.atoms
            .iter()
            .filter_map(|a| match a {
                Atom::Call(c) if self.cat.is_stable(m.language, &m.calls[*c]) => {
                    Some(m.calls[*c].span)
                }
                Atom::Source(s) if sources => Some(m.sources[*s].span),
                _ => None,
            })
            .collect()
    }

    /// Pushes what binding `b` of `name` may hold at byte `offset`: its initialiser and
    /// the assignments to it that reach the use.
    fn values_of_local(&self, name: &str, offset: usize, b: usize, work: &mut Vec<ValueId>) {
        let m = self.model;
        let binding = &m.bindings[b];
        if let Some(init) = binding.value {
            work.push(init);
        }
        for a in self.assigns_by_name.get(name).into_iter().flatten() {
            let asg = &m.assigns[*a];
            if m.is_within(asg.scope, binding.scope) && self.reaches(asg, offset, binding.scope) {
                work.push(asg.value);
            }
        }
    }

    /// The parameter bindings (indices into `model.bindings`) whose value `value` carries
    /// as a whole: names read in it that are parameters, followed through the
    /// initialisers and assignments of local variables. A field read (`req.id`) carries
    /// the field, not the parameter, and a stable derivation (see [`Catalogue`]'s
    /// `[[stable]]`) blocks what is inside it, as in [`Flow::origins`].
    ///
    /// [`Catalogue`]: crate::catalogue::Catalogue
    pub fn params_reaching(&self, value: ValueId) -> Vec<usize> {
        let m = self.model;
        let mut out = Vec::new();
        let mut seen: HashSet<ValueId> = HashSet::new();
        let mut work = vec![value];
        let mut steps = 0;
        while let Some(v) = work.pop() {
            steps += 1;
            if steps > MAX_STEPS || !seen.insert(v) {
                continue;
            }
            let val = &m.values[v];
            if let (Some(field), [Atom::Name { name, .. }]) = (&val.ident, val.atoms.as_slice())
                && name != field
            {
                continue;
            }
            let blocked = self.blocked_spans(val, false);
            // A name inside a call (`alert.getId()`, `dedupKey(title, ctx)`) gives the
            // call's result, not itself, unless the call only converts or formats it
            // (`id.clone()`, `String.format("k-%s", id)`).
            let inside_call: Vec<Span> = val
                .atoms
                .iter()
                .filter_map(|a| match a {
                    Atom::Call(c) => {
                        let call = &m.calls[*c];
                        (!SAME_VALUE_CALLS.contains(&call.callee.as_str())).then_some(call.span)
                    }
                    _ => None,
                })
                .collect();
            for atom in &val.atoms {
                let Atom::Name { name, offset } = atom else {
                    continue;
                };
                let at = Span::new(*offset, *offset);
                if blocked.iter().chain(&inside_call).any(|b| b.contains(at))
                    || self.field_reads.contains_key(offset)
                {
                    continue;
                }
                let Some(b) = self.lookup(name, *offset) else {
                    continue;
                };
                let binding = &m.bindings[b];
                match binding.kind {
                    BindingKind::Param => {
                        if !out.contains(&b) {
                            out.push(b);
                        }
                    }
                    BindingKind::Local => {
                        self.values_of_local(name, *offset, b, &mut work);
                    }
                    BindingKind::Field => {}
                }
            }
        }
        out
    }

    /// The parameters of function `f` that `value` depends on, with the field read of
    /// each: `(binding, Some(field))` for `param.field` / `param.getField()` (`request.seed`
    /// in `create(request.seed)`), `(binding, None)` for the whole object.
    pub fn param_fields_reaching(
        &self,
        value: ValueId,
        f: ScopeId,
    ) -> Vec<(usize, Option<String>)> {
        let mut walk = ParamWalk {
            function: f,
            reached: Vec::new(),
            unknown: false,
        };
        // The arguments of the calls in the value too: `create(request.seed)` reads
        // `request` for its field `seed` in the argument's own value.
        let m = self.model;
        let mut starts = vec![value];
        for a in &m.values[value].atoms {
            if let Atom::Call(c) = a {
                starts.extend(m.calls[*c].args.iter().map(|a| a.value));
            }
        }
        starts.sort_unstable();
        starts.dedup();
        self.origins_from(&starts, &NoHelpers, Some(&mut walk));
        let mut out = walk.reached;
        out.sort();
        out.dedup();
        out
    }

    /// Every ephemeral evaluation `value` depends on, in source order, deduplicated.
    ///
    /// A call of a function declared in this file (see [`Flow::local_function`]) yields
    /// only what that function returns of its arguments ([`Flow::carried`]): a clock in
    /// an event passed to `sendEvent(event)`, which returns the event's `dedupKey`, is
    /// not in the result.
    pub fn origins(&self, value: ValueId, helpers: &dyn HelperOracle) -> Vec<Origin> {
        self.origins_inner(value, helpers, None)
    }

    /// Whether any of `values` has an origin ([`Flow::origins`] of one of them is not
    /// empty), in one walk: each value, binding and lambda body reached from several of
    /// them is walked once (what a value contributes does not depend on how it was
    /// reached), so the calls `helpers` is asked about are those the queries one by one
    /// would ask. `None` when that walk runs past [`MAX_STEPS`] (one query's budget, not
    /// one per value: a value a query alone would give up on must not run on for the
    /// others' share); the calls recorded in `helpers` are then partial, and the caller
    /// asks the values one by one with a fresh oracle, as before. The thread's
    /// [`budget_exhausted`] flag is left as it was found.
    pub fn any_origin(&self, values: &[ValueId], helpers: &dyn HelperOracle) -> Option<bool> {
        if values.is_empty() {
            return Some(false);
        }
        let was = budget_exhausted();
        reset_budget();
        let found = !self
            .query(values, helpers, None, MAX_STEPS, false)
            .is_empty();
        let ran_out = budget_exhausted();
        EXHAUSTED.with(|e| e.set(was));
        (!ran_out).then_some(found)
    }

    /// The function declared in this file that `call` calls, when exactly one matches
    /// its name and argument count and the call has no receiver other than `this` /
    /// `self` / `Self` or a type declared here (a call on another object may reach a
    /// namesake elsewhere). Kotlin named arguments are left out (positions differ).
    pub fn local_function(&self, call: &Call) -> Option<ScopeId> {
        let m = self.model;
        if call.is_new || call.args.iter().any(|a| a.name.is_some()) {
            return None;
        }
        let own_receiver = match crate::catalogue::receiver_text(call) {
            None => true,
            Some(r) => {
                matches!(&*r, "this" | "self" | "Self")
                    || self
                        .type_names
                        .get_or_init(|| {
                            m.scopes
                                .iter()
                                .filter_map(|s| match &s.kind {
                                    ScopeKind::Type(t) | ScopeKind::Object(t) => {
                                        Some(t.name.as_str())
                                    }
                                    _ => None,
                                })
                                .collect()
                        })
                        .contains(&*r)
            }
        };
        if !own_receiver {
            return None;
        }
        match self
            .fns_by_name
            .get(&(call.callee.as_str(), call.args.len()))
        {
            Some(list) if list.len() == 1 => Some(list[0]),
            _ => None,
        }
    }

    /// What function `f` (declared in this file) returns of its parameters, or `None`
    /// when that cannot be told: no return value seen (a bodiless or `void` function),
    /// a constructor, a function returning its own type, `Self` or a builder (it returns
    /// `this`, whose fields hold the arguments), or a returned local the body mutates.
    pub fn carried(&self, f: ScopeId) -> Option<std::rc::Rc<Vec<Carry>>> {
        let m = self.model;
        if let Some(known) = self.carries.borrow().get(&f) {
            return known.clone();
        }
        if self.carry_depth.get() >= MAX_CARRY_DEPTH {
            return None;
        }
        self.carries.borrow_mut().insert(f, None);
        self.carry_depth.set(self.carry_depth.get() + 1);
        let answer = (|| {
            let info = m.function_info(f)?;
            let own_type = m.scopes[f]
                .parent
                .and_then(|p| m.enclosing_type(p))
                .and_then(|t| m.type_info(t))
                .map(|t| t.name.as_str())
                .unwrap_or("");
            let rt = info.return_type.as_str();
            if rt.is_empty()
                || info.name == own_type
                || (!own_type.is_empty() && rt.contains(own_type))
                || rt.contains("Self")
                || rt.contains("Builder")
                || rt.contains("this")
            {
                return None;
            }
            let returns: Vec<ValueId> = self.returns_of(f).collect();
            if returns.is_empty() {
                return None;
            }
            let mut walk = ParamWalk {
                function: f,
                reached: Vec::new(),
                unknown: false,
            };
            for v in returns {
                self.origins_inner(v, &NoHelpers, Some(&mut walk));
            }
            if walk.unknown {
                return None;
            }
            let mut out: Vec<Carry> = Vec::new();
            for (b, field) in walk.reached {
                let name = &m.bindings[b].name;
                if let Some(i) = info.params.iter().position(|p| &p.name == name)
                    && !out.contains(&(i, field.clone()))
                {
                    out.push((i, field));
                }
            }
            Some(std::rc::Rc::new(out))
        })();
        self.carry_depth.set(self.carry_depth.get() - 1);
        self.carries.borrow_mut().insert(f, answer.clone());
        answer
    }

    /// Arguments of the calls in `val` that the called function (declared in this file)
    /// does not return whole: their spans, and `(argument value, field)` for each field
    /// it returns of one.
    fn dropped_args(&self, val: &Value) -> (Vec<Span>, Vec<(ValueId, String)>) {
        let m = self.model;
        let mut spans = Vec::new();
        let mut fields = Vec::new();
        for a in &val.atoms {
            let Atom::Call(c) = a else { continue };
            let call = &m.calls[*c];
            if call.args.is_empty() {
                continue;
            }
            let Some(carry) = self.local_function(call).and_then(|f| self.carried(f)) else {
                continue;
            };
            for (i, arg) in call.args.iter().enumerate() {
                let of_arg: Vec<&Option<String>> = carry
                    .iter()
                    .filter(|(p, _)| *p == i)
                    .map(|(_, f)| f)
                    .collect();
                if of_arg.iter().any(|f| f.is_none()) {
                    continue;
                }
                spans.push(m.values[arg.value].span);
                fields.extend(of_arg.into_iter().flatten().map(|f| (arg.value, f.clone())));
            }
        }
        (spans, fields)
    }

    /// The values `val` puts into key-named fields of an object it builds, when it also
    /// sets other things: builder calls `.idempotencyKey(v)` inside a longer chain, named
    /// arguments `idempotencyKey = v` of a call, struct-literal fields. Empty when the
    /// value is no such object (or is the key field's own value).
    fn key_field_values(&self, val: &Value) -> Vec<ValueId> {
        let m = self.model;
        let mut out = Vec::new();
        let mut other = false;
        for a in &val.atoms {
            let Atom::Call(c) = a else { continue };
            let call = &m.calls[*c];
            if call.span == val.span && call.args.iter().all(|a| a.name.is_none()) {
                continue;
            }
            if call.args.len() == 1
                && call.receiver.is_some()
                && self.cat.is_key_name(&call.callee)
                && call.span != val.span
            {
                out.push(call.args[0].value);
                continue;
            }
            for arg in &call.args {
                match &arg.name {
                    Some(n) if self.cat.is_key_name(n) => out.push(arg.value),
                    Some(_) => other = true,
                    None => {}
                }
            }
            if call.receiver.is_some() && call.args.len() == 1 && call.args[0].name.is_none() {
                other = true;
            }
        }
        for f in self.field_inits_within(val.span) {
            let f = &m.field_inits[f];
            if f.span != val.span {
                if self.cat.is_key_name(&f.name) {
                    out.push(f.value);
                } else {
                    other = true;
                }
            }
        }
        if other { out } else { Vec::new() }
    }

    /// Pushes what was put into field `field` of the object `value` evaluates to, as far as
    /// this file shows it: in the expression itself or in the initialiser and assignments
    /// of the local it names, a builder call `.field(v)`, a setter `setField(v)`, a
    /// struct-literal field or a named argument; and setter calls on that local. An object
    /// that comes from elsewhere (a parameter, a repository) contributes nothing: its
    /// field is what its producer put there, not every write of that name in the file.
    fn field_writes_into(&self, value: ValueId, field: &str, work: &mut Vec<ValueId>) {
        let m = self.model;
        let setter = {
            let mut cs = field.chars();
            cs.next()
                .map(|c| format!("set{}{}", c.to_ascii_uppercase(), cs.as_str()))
                .unwrap_or_default()
        };
        let mut holders = vec![value];
        let val = &m.values[value];
        for a in &val.atoms {
            let Atom::Name { name, offset } = a else {
                continue;
            };
            let Some(b) = self.lookup(name, *offset) else {
                continue;
            };
            if m.bindings[b].kind != BindingKind::Local {
                continue;
            }
            self.values_of_local(name, *offset, b, &mut holders);
            let scope = m.bindings[b].scope;
            for c in self
                .calls_by_receiver
                .get(name.as_str())
                .into_iter()
                .flatten()
            {
                let c = &m.calls[*c];
                if c.args.len() == 1
                    && (c.callee == setter || c.callee == field)
                    && m.is_within(c.scope, scope)
                {
                    work.push(c.args[0].value);
                }
            }
        }
        for h in holders {
            let span = m.values[h].span;
            let first = self
                .calls_by_start
                .partition_point(|c| m.calls[*c].span.start < span.start);
            for c in self.calls_by_start[first..]
                .iter()
                .map(|c| &m.calls[*c])
                .take_while(|c| c.span.start < span.end)
            {
                if !span.contains(c.span) {
                    continue;
                }
                if c.args.len() == 1
                    && c.receiver.is_some()
                    && (c.callee == setter || c.callee == field)
                {
                    work.push(c.args[0].value);
                }
                for a in &c.args {
                    if a.name.as_deref() == Some(field) {
                        work.push(a.value);
                    }
                }
            }
            for f in self.field_inits_within(span) {
                let f = &m.field_inits[f];
                if f.name == field {
                    work.push(f.value);
                }
            }
        }
    }

    /// [`Flow::origins`], also recording in `walk` the parameters of `walk.function`
    /// reached (for [`Flow::carried`]).
    fn origins_inner(
        &self,
        value: ValueId,
        helpers: &dyn HelperOracle,
        walk: Option<&mut ParamWalk>,
    ) -> Vec<Origin> {
        self.origins_from(&[value], helpers, walk)
    }

    /// [`Self::origins_inner`] from several values at once, each value and binding walked
    /// once (what a value contributes does not depend on how it was reached).
    fn origins_from(
        &self,
        values: &[ValueId],
        helpers: &dyn HelperOracle,
        walk: Option<&mut ParamWalk>,
    ) -> Vec<Origin> {
        self.query(values, helpers, walk, MAX_STEPS, true)
    }

    /// One walk from `values` of at most `budget` steps. Unsettled (`settle` false), the
    /// origins keep their duplicates and nested sources, in the order found: only whether
    /// there are any is meant (settling is quadratic in the origins found).
    fn query(
        &self,
        values: &[ValueId],
        helpers: &dyn HelperOracle,
        walk: Option<&mut ParamWalk>,
        budget: usize,
        settle: bool,
    ) -> Vec<Origin> {
        self.query_depth.set(self.query_depth.get() + 1);
        let out = self.origins_walk(values, helpers, walk, budget, settle);
        self.query_depth.set(self.query_depth.get() - 1);
        if self.query_depth.get() == 0 {
            self.body_memo.borrow_mut().clear();
        }
        out
    }

    /// The origins of what the lambda or getter `body` returns, memoised for the outermost
    /// query, each with whether it is evaluated on every run of the body: inside a body
    /// that writes no field (a memoising getter keeps what it made in one). The caller moves those to
    /// the call or read; the others (a captured local or a field minted once, read by the
    /// body) stay where they are evaluated. A body reached again while it is walked
    /// (recursion) adds nothing.
    fn body_origins(&self, body: ScopeId, helpers: &dyn HelperOracle) -> BodyOrigins {
        if let Some(known) = self.body_memo.borrow().get(&body) {
            return known.clone();
        }
        self.body_memo
            .borrow_mut()
            .insert(body, std::rc::Rc::new(Vec::new()));
        let m = self.model;
        let rets: Vec<ValueId> = self.returns_of(body).collect();
        // A body that writes a field keeps what it made there (a memoising getter:
        // `cached ?: UUID..also { cached = it }`, `if (c == null) c = ..; return c!!`):
        // nothing it returns is taken as made anew on each run.
        let memoises = m
            .assigns
            .iter()
            .any(|a| self.field_names.contains(a.name.as_str()) && m.is_within(a.scope, body));
        let found: Vec<(Origin, bool)> = self
            .origins_from(&rets, helpers, None)
            .into_iter()
            .map(|o| {
                let per_run = !memoises && m.is_within(o.scope, body);
                (o, per_run)
            })
            .collect();
        let found = std::rc::Rc::new(found);
        self.body_memo.borrow_mut().insert(body, found.clone());
        found
    }

    /// The origins of running `body` (a lambda or getter) at `span`, in `scope`: those
    /// every run evaluates moved there ([`read_through`], shown as `display`, from
    /// `location`), the others as they are ([`Self::body_origins`]).
    fn run_at(
        &self,
        body: ScopeId,
        helpers: &dyn HelperOracle,
        span: Span,
        display: &str,
        scope: ScopeId,
        location: &str,
    ) -> Vec<Origin> {
        self.body_origins(body, helpers)
            .iter()
            .cloned()
            .map(|(o, per_run)| match per_run {
                true => read_through(o, span, display.to_string(), scope, location.to_string()),
                false => o,
            })
            .collect()
    }

    fn origins_walk(
        &self,
        values: &[ValueId],
        helpers: &dyn HelperOracle,
        mut walk: Option<&mut ParamWalk>,
        budget: usize,
        settle: bool,
    ) -> Vec<Origin> {
        let m = self.model;
        let mut out: Vec<Origin> = Vec::new();
        let mut seen_values: HashSet<ValueId> = HashSet::new();
        let mut seen_bindings: HashSet<(usize, usize)> = HashSet::new();
        let mut work = values.to_vec();
        let mut steps = 0;
        while let Some(v) = work.pop() {
            steps += 1;
            if steps > budget {
                EXHAUSTED.with(|e| e.set(true));
                break;
            }
            if !seen_values.insert(v) {
                continue;
            }
            let val = &m.values[v];
            // A field read `order.idempotencyKey` / `order.idempotency_key`: the value
            // depends on the object only through that field, so its origins are what was
            // put into a field of that name (assignments, struct-literal fields, named
            // arguments, setters), not every origin of the object (a clock in `createdAt`).
            if let (Some(field), [Atom::Name { name, offset }]) = (&val.ident, val.atoms.as_slice())
                && name != field
            {
                // A field of a parameter holds what the caller put there: no origin here
                // (the call site's flow decides), not every write of that field name in
                // the file.
                let param = self
                    .lookup(name, *offset)
                    .filter(|b| m.bindings[*b].kind == BindingKind::Param);
                match param {
                    Some(b) => {
                        if let Some(w) = walk.as_deref_mut() {
                            w.reached.push((b, Some(field.clone())));
                        }
                    }
                    None => self.field_writes(field, &mut work),
                }
                continue;
            }
            // An object built with a key field (`IdempotencyRecord.builder()
            // .idempotencyKey(key).createdAt(now).build()`, `Charge(idempotencyKey = key,
            // at = now)`, `Record { idempotency_key: key, created_at: now }`): its key is
            // that field, so only what goes into it counts, not its timestamps or ids.
            let key_fields = self.key_field_values(val);
            if !key_fields.is_empty() {
                work.extend(key_fields);
                continue;
            }
            // Stable derivations hide everything inside them; a source hides its own
            // receiver and arguments (`Random(System.currentTimeMillis()).nextInt()` is a
            // random draw: the clock only seeds it).
            let blocked = self.blocked_spans(val, true);
            let (dropped, carried_fields) = self.dropped_args(val);
            for (arg, f) in &carried_fields {
                self.field_writes_into(*arg, f, &mut work);
            }
            let inside_blocked = |s: Span| {
                blocked.iter().any(|b| b.contains(s) && *b != s)
                    || dropped.iter().any(|d| d.contains(s))
            };
            let mut getters: Option<HashMap<&str, Option<String>>> = None;
            for atom in &val.atoms {
                match atom {
                    Atom::Source(s) => {
                        let src = &m.sources[*s];
                        if inside_blocked(src.span) {
                            continue;
                        }
                        if src.window && !self.keep_windows {
                            continue;
                        }
                        out.push(Origin {
                            span: src.span,
                            display: src.display.clone(),
                            kind: src.kind,
                            scope: src.scope,
                            helper: None,
                            window: src.window,
                            counter: false,
                        });
                    }
                    Atom::Name { name, offset } => {
                        if inside_blocked(Span::new(*offset, *offset)) {
                            continue;
                        }
                        // The receiver of a getter (`order.getIdempotencyKey()`): only
                        // that field of it counts.
                        // The first such getter per receiver name, found in one pass
                        // over the atoms (not one pass per name: `format!` with 40,000
                        // arguments was quadratic).
                        let getters = getters.get_or_insert_with(|| {
                            let mut g: HashMap<&str, Option<String>> = HashMap::new();
                            for a in &val.atoms {
                                let Atom::Call(c) = a else { continue };
                                let call = &m.calls[*c];
                                let Some(r) = call.receiver.as_deref() else {
                                    continue;
                                };
                                if !call.args.is_empty() || g.get(r).is_some_and(Option::is_some) {
                                    continue;
                                }
                                let f = getter_field(&call.callee).or_else(|| {
                                    self.field_names
                                        .contains(call.callee.as_str())
                                        .then(|| call.callee.clone())
                                });
                                if f.is_some() {
                                    g.insert(r, f);
                                }
                            }
                            g
                        });
                        if let Some(Some(field)) = getters.get(name.as_str()).cloned() {
                            let param = self
                                .lookup(name, *offset)
                                .filter(|b| m.bindings[*b].kind == BindingKind::Param);
                            if let Some(w) = walk.as_deref_mut()
                                && let Some(b) = param
                            {
                                w.reached.push((b, Some(field.clone())));
                            }
                            // The key an object a parameter holds carries
                            // (`payment.getIdempotencyKey()`) was minted by whoever made
                            // the object, once: what this file writes into that field of
                            // other objects is not it.
                            if param.is_some() && self.cat.is_key_name(&field) {
                                continue;
                            }
                            self.field_writes(&field, &mut work);
                            continue;
                        }
                        let Some(b) = self.lookup(name, *offset) else {
                            continue;
                        };
                        // Read for one field (`pos.id` inside `format!`): what was put
                        // into that field, none of a parameter's (the caller's flow).
                        if let Some(field) = self.field_reads.get(offset) {
                            if m.bindings[b].kind != BindingKind::Param {
                                self.field_writes(field, &mut work);
                            } else if let Some(w) = walk.as_deref_mut() {
                                w.reached.push((b, Some(field.to_string())));
                            }
                            continue;
                        }
                        if !seen_bindings.insert((b, *offset)) {
                            continue;
                        }
                        let binding = &m.bindings[b];
                        // A parameter a retry construct passes in, used as a receiver
                        // (`context.getAttribute("key")` of Spring Retry's one `RetryContext`
                        // per `execute`): what the call reads decides, not the object.
                        let receiver_use = self.attempt_lambdas.contains(&binding.scope)
                            && val.atoms.iter().any(|a| {
                                matches!(a, Atom::Call(c)
                                    if m.calls[*c].receiver.as_deref() == Some(name.as_str()))
                            });
                        if receiver_use {
                            continue;
                        }
                        if let Some(origin) = self.attempt_counter(name, *offset, b) {
                            out.push(origin);
                            continue;
                        }
                        if binding.kind == BindingKind::Param {
                            if let Some(w) = walk.as_deref_mut() {
                                w.reached.push((b, None));
                            }
                            // The value a pipeline stage hands its lambda
                            // (`Mono.fromCallable(() -> newKey()).flatMap(key -> ..)`): what
                            // the stage upstream produces, evaluated where it is (inside
                            // the supplier, which a re-subscription runs again).
                            if let Some(u) = self.upstream_of_param(b) {
                                let up = &m.calls[u];
                                for arg in &up.args {
                                    match arg.lambda {
                                        Some(l)
                                            if matches!(m.scopes[l].kind, ScopeKind::Lambda(_)) =>
                                        {
                                            for r in
                                                self.returns_by_scope.get(&l).into_iter().flatten()
                                            {
                                                work.push(m.returns[*r].value);
                                            }
                                        }
                                        Some(_) => {}
                                        None => work.push(arg.value),
                                    }
                                }
                            }
                            continue;
                        }
                        // A Kotlin property with a getter (`val key get() = ..`): each
                        // read runs the getter, so what it returns is evaluated here.
                        if let Some(g) = self.getter_of(b) {
                            let at = Span::new(*offset, *offset + name.len());
                            let scope = self.scope_at(*offset);
                            let location = format!("the getter of `{name}`");
                            out.extend(self.run_at(g, helpers, at, name, scope, &location));
                            continue;
                        }
                        if let Some(w) = walk.as_deref_mut()
                            && binding.kind == BindingKind::Local
                            && self.mutated_in(name, w.function)
                        {
                            w.unknown = true;
                        }
                        self.values_of_local(name, *offset, b, &mut work);
                    }
                    Atom::Call(c) => {
                        let call = &m.calls[*c];
                        if inside_blocked(call.span) || blocked.contains(&call.span) {
                            continue;
                        }
                        // A lambda or an object passed to a call of unknown effect may
                        // capture anything: a walk for `carried` cannot see through it.
                        if let Some(w) = walk.as_deref_mut()
                            && call.args.iter().any(|a| a.lambda.is_some())
                            && self.local_function(call).is_none()
                        {
                            w.unknown = true;
                        }
                        // A call of a lambda held in a local or field of this file
                        // (`let mk = || Uuid::new_v4(); mk()`, `keys.get()` of a
                        // `Supplier`, `mk.invoke()`): its body runs at the call, so what
                        // it returns is evaluated here, once per call.
                        if let Some((l, name)) = self.called_lambda(call) {
                            let display = format!("{}()", call_display(call));
                            let location = format!("the lambda `{name}`");
                            out.extend(
                                self.run_at(l, helpers, call.span, &display, call.scope, &location),
                            );
                            continue;
                        }
                        if let Some(h) = helpers.fresh(m.language, call) {
                            out.push(Origin {
                                span: call.span,
                                display: format!("{}()", call.callee),
                                kind: h.kind,
                                scope: call.scope,
                                helper: Some(h),
                                window: false,
                                counter: false,
                            });
                            continue;
                        }
                        if self.cat.is_memoizer(m.language, call) {
                            // The lambda runs once per cell (`key.get_or_insert_with(..)`,
                            // `cache.computeIfAbsent(..)`): once per attempt when the cell
                            // is a local declared inside the attempt, so what it returns
                            // is fresh where the cell is declared.
                            if let Some(cell) = self.local_cell_scope(call) {
                                let lambdas = call.args.iter().filter_map(|a| a.lambda);
                                for l in lambdas {
                                    let rets: Vec<ValueId> = self
                                        .returns_by_scope
                                        .get(&l)
                                        .into_iter()
                                        .flatten()
                                        .map(|r| m.returns[*r].value)
                                        .collect();
                                    for r in rets {
                                        for mut o in self.origins_inner(r, helpers, None) {
                                            o.scope = cell;
                                            out.push(o);
                                        }
                                    }
                                }
                            }
                            continue;
                        }
                        // The lambda of an error mapper makes the error, not the value
                        // (`.map_err(|e| ..)`, `.ok_or_else(|| ..)`, `.orElseThrow(() -> ..)`).
                        if ERROR_MAPPERS.contains(&call.callee.as_str()) {
                            continue;
                        }
                        let lambdas = call
                            .args
                            .iter()
                            .filter_map(|a| a.lambda)
                            .chain(call.receiver_lambda);
                        for l in lambdas {
                            if !matches!(m.scopes[l].kind, ScopeKind::Lambda(_)) {
                                continue;
                            }
                            for r in self.returns_by_scope.get(&l).into_iter().flatten() {
                                work.push(m.returns[*r].value);
                            }
                        }
                    }
                }
            }
        }
        if !settle {
            return out;
        }
        let mut seen = HashSet::new();
        out.retain(|o| seen.insert(o.span));
        // A source nested in another reached through a different value is subsumed too.
        let spans: Vec<Span> = out.iter().map(|o| o.span).collect();
        out.retain(|o| !spans.iter().any(|s| *s != o.span && s.contains(o.span)));
        out.sort_by_key(|o| o.span);
        out
    }

    /// The getter of the Kotlin property bound by `b`: the first scope declared at or after
    /// the property in the same type, when it is a function named `get` and no other
    /// member is declared in between (a getter on the next line is not inside the
    /// property's declaration node).
    fn getter_of(&self, b: usize) -> Option<ScopeId> {
        let m = self.model;
        let binding = &m.bindings[b];
        if m.language != Language::Kotlin || binding.kind != BindingKind::Field {
            return None;
        }
        let sp = binding.span;
        let i = self
            .scope_order
            .partition_point(|s| m.scopes[*s].span.start < sp.start);
        // Only scopes starting inside the declaring type can be its members.
        let owner_end = m.scopes[binding.scope].span.end;
        let g = self.scope_order[i..]
            .iter()
            .copied()
            .take_while(|s| m.scopes[*s].span.start < owner_end)
            .find(|s| m.scopes[*s].parent == Some(binding.scope))?;
        let gs = m.scopes[g].span;
        if !matches!(&m.scopes[g].kind, ScopeKind::Function(f) if f.name == "get") {
            return None;
        }
        let between = |x: Span| x.start > sp.start && x.start < gs.start;
        let other = m
            .bindings
            .iter()
            .enumerate()
            .any(|(i, o)| i != b && o.scope == binding.scope && between(o.name_span));
        (!other).then_some(g)
    }

    /// The lambda `call` runs, with the name holding it: a call of a local or field of
    /// this file whose initialiser is a lambda, by its name (`mk()`, Rust and Kotlin) or
    /// by a functional interface's single method on it (`keys.get()`, `mk.invoke()`).
    /// A name assigned again (`mk = ..`) is left out: which lambda runs is not known.
    fn called_lambda(&self, call: &Call) -> Option<(ScopeId, String)> {
        let m = self.model;
        if call.is_new || call.receiver_call.is_some() {
            return None;
        }
        // `this.mk()` / `self.mk()` (Kotlin) and `this.keys.get()` (Java) name the
        // field as the bare name does.
        let own = |r: &str| matches!(r, "this" | "self");
        let name: &str = match call.receiver.as_deref() {
            None if call.path.len() <= 1 => &call.callee,
            Some(r) if own(r) && !FUNCTIONAL_METHODS.contains(&call.callee.as_str()) => {
                &call.callee
            }
            Some(r) if FUNCTIONAL_METHODS.contains(&call.callee.as_str()) => {
                r.strip_prefix("this.").unwrap_or(r)
            }
            _ => return None,
        };
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        let b = self.lookup(name, call.span.start)?;
        let binding = &m.bindings[b];
        if binding.kind == BindingKind::Param || self.assigns_by_name.contains_key(name) {
            return None;
        }
        let v = &m.values[binding.value?];
        if !v.atoms.is_empty() {
            return None;
        }
        let i = self
            .scope_order
            .partition_point(|s| m.scopes[*s].span.start < v.span.start);
        self.scope_order[i..]
            .iter()
            .take_while(|s| m.scopes[**s].span.start == v.span.start)
            .find(|s| {
                m.scopes[**s].span.end == v.span.end
                    && matches!(m.scopes[**s].kind, ScopeKind::Lambda(_))
            })
            .map(|s| (*s, name.to_string()))
    }

    /// The scope of the local a memoizing call keeps its value in, when its receiver is a
    /// plain local name (`key` in `key.get_or_insert_with(..)`), not a field or a
    /// parameter (a cell that outlives the function), or when it is the `lazy { .. }` a
    /// local is delegated to (`val key by lazy { .. }`: one cell per run of its scope).
    fn local_cell_scope(&self, call: &Call) -> Option<ScopeId> {
        // Kotlin's `val key by lazy { .. }`: the cell is the delegated local itself.
        if call.receiver.is_none() && call.callee == "lazy" {
            let m = self.model;
            return m
                .bindings
                .iter()
                .find(|b| {
                    b.kind == BindingKind::Local
                        && b.value
                            .is_some_and(|v| m.values[v].span.contains(call.span))
                })
                .map(|b| b.scope);
        }
        let r = call.receiver.as_deref()?;
        if r.is_empty() || !r.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return None;
        }
        let b = self.lookup(r, call.span.start)?;
        let binding = &self.model.bindings[b];
        (binding.kind == BindingKind::Local).then_some(binding.scope)
    }

    /// Whether a call inside function `f` with arguments has the local `name` as its
    /// receiver (`r.setKey(key)`, `map.put(k, v)`): the local's contents are not only its
    /// initialiser.
    fn mutated_in(&self, name: &str, f: ScopeId) -> bool {
        let m = self.model;
        self.calls_by_receiver
            .get(name)
            .into_iter()
            .flatten()
            .any(|c| !m.calls[*c].args.is_empty() && m.is_within(m.calls[*c].scope, f))
    }

    /// A read of an attempt counter: inside a retry loop (see [`LoopInfo::is_retry`]), a
    /// name the loop's header drives (`for attempt in 1..=3`, `for (int i = 0; i < n;
    /// i++)`, `while (attempt++ < 5)`) or one the loop body increments (`tries += 1`) and
    /// that is declared outside the body; or the counter of a Kotlin `repeat(n) { attempt
    /// -> .. }`. Its value differs on every attempt, like a UUID's. The origin is the read.
    fn attempt_counter(&self, name: &str, offset: usize, b: usize) -> Option<Origin> {
        let m = self.model;
        let binding = &m.bindings[b];
        let use_scope = self.scope_at(offset);
        let word = |text: &str| {
            text.match_indices(name).any(|(i, _)| {
                let before = text[..i].chars().next_back();
                let after = text[i + name.len()..].chars().next();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        };

        let retry_loops = self.retry_loops.get_or_init(|| {
            m.scopes
                .iter()
                .map(|s| matches!(&s.kind, ScopeKind::Loop(l) if l.is_retry()))
                .collect()
        });
        let counter = m.ancestors(use_scope).any(|s| {
            match &m.scopes[s].kind {
                ScopeKind::Loop(l) if retry_loops[s] => {
                    // Declared in the body: a fresh local per iteration, not a counter.
                    let in_body = binding.scope != s && m.is_within(binding.scope, s);
                    if in_body {
                        return false;
                    }
                    word(&l.header)
                        || self
                            .assigns_by_name
                            .get(name)
                            .into_iter()
                            .flatten()
                            .any(|a| {
                                let asg = &m.assigns[*a];
                                m.is_within(asg.scope, s)
                                    && m.values[asg.value].atoms.iter().any(
                                        |at| matches!(at, Atom::Name { name: n, .. } if n == name),
                                    )
                            })
                }
                ScopeKind::Lambda(li) => {
                    binding.kind == BindingKind::Param
                        && binding.scope == s
                        && (li.owner_call.is_some_and(|c| m.calls[c].callee == "repeat")
                            || self.attempt_lambdas.contains(&s))
                }
                _ => false,
            }
        });
        let passed_in =
            self.attempt_lambdas.contains(&binding.scope) && binding.kind == BindingKind::Param;
        counter.then(|| Origin {
            span: Span::new(offset, offset + name.len()),
            display: if passed_in {
                // The finding goes on "is evaluated again on every attempt of ..": the
                // display says where the value comes from, not when.
                format!("`{name}` (the value the retry passes to the attempt)")
            } else {
                format!("`{name}` (the attempt counter)")
            },
            kind: SourceKind::Random,
            scope: use_scope,
            helper: None,
            window: false,
            counter: true,
        })
    }

    /// Values written into a field named `field` anywhere in this file: assignments
    /// (`x.field = v`), struct-literal fields, named arguments (`field = v`), setters
    /// (`setField(v)`, `.field(v)` builders).
    fn field_writes(&self, field: &str, work: &mut Vec<ValueId>) {
        let m = self.model;
        for a in self.assigns_by_name.get(field).into_iter().flatten() {
            work.push(m.assigns[*a].value);
        }
        let writes = self.field_writes.get_or_init(|| {
            // Every write into a named slot, by name: struct-literal fields, named
            // arguments, one-argument setters (`setX(v)`) and builder calls (`.x(v)`).
            let mut map: HashMap<String, Vec<ValueId>> = HashMap::new();
            for f in &m.field_inits {
                map.entry(f.name.clone()).or_default().push(f.value);
            }
            for c in &m.calls {
                for a in &c.args {
                    if let Some(n) = &a.name {
                        map.entry(n.clone()).or_default().push(a.value);
                    }
                }
                // Positional arguments of a constructor whose parameters are fields
                // (a record's canonical constructor, `this(..)` inside it).
                if let Some(names) = m.components_written(c)
                    && names.len() == c.args.len()
                {
                    for (n, a) in names.iter().zip(&c.args) {
                        if !n.is_empty() && a.name.is_none() {
                            map.entry(n.clone()).or_default().push(a.value);
                        }
                    }
                }
                if c.args.len() == 1 {
                    if let Some(f) = c
                        .callee
                        .strip_prefix("set")
                        .and_then(|r| getter_field(&format!("get{r}")))
                    {
                        map.entry(f).or_default().push(c.args[0].value);
                    }
                    if c.receiver.is_some() {
                        map.entry(c.callee.clone())
                            .or_default()
                            .push(c.args[0].value);
                    }
                }
            }
            map
        });
        work.extend(writes.get(field).into_iter().flatten().copied());
    }

    /// Whether an assignment can reach a read of the same local at byte `use_at`: it comes
    /// first in the text, or a loop inside the binding's scope holds both (the value comes
    /// round the back edge), or the read sits in a lambda or local function, which may run
    /// after any later assignment. Fields are not order-sensitive (any method may run
    /// before another).
    fn reaches(&self, asg: &Assign, use_at: usize, binding_scope: ScopeId) -> bool {
        let m = self.model;
        if asg.span.start < use_at
            || matches!(
                m.scopes[binding_scope].kind,
                ScopeKind::Type(_) | ScopeKind::File | ScopeKind::Object(_)
            )
        {
            return true;
        }
        let use_scope = self.scope_at(use_at);
        m.ancestors(use_scope)
            .take_while(|s| *s != binding_scope)
            .any(|s| match &m.scopes[s].kind {
                ScopeKind::Loop(_) => m.scopes[s].span.contains(asg.span),
                ScopeKind::Lambda(_) | ScopeKind::Function(_) => true,
                _ => false,
            })
    }

    /// The values a function or lambda scope returns.
    pub fn returns_of(&self, scope: ScopeId) -> impl Iterator<Item = ValueId> + '_ {
        self.returns_by_scope
            .get(&scope)
            .into_iter()
            .flatten()
            .map(|r| self.model.returns[*r].value)
    }
}

/// Whether the clock reading at `span` is reduced, right where it is read, to a window of
/// at least a minute: divided by a constant window (`System.currentTimeMillis() / 60000`,
/// `Utc::now().timestamp() / 3600`, `/ WINDOW_MS`), truncated (`.truncatedTo(ChronoUnit.HOURS)`)
/// or formatted with a pattern that has no seconds (`.format(ofPattern("yyyyMMddHH"))`,
/// chrono `.format("%Y%m%d%H")`). Every attempt inside the window reads the same value:
/// a deliberate time bucket names a period, like a calendar date (`[[stable]]`), not a
/// moment. A division by 1000 (milliseconds to seconds) is no window.
///
/// `text` is the file, `span` the source's byte range; `display` its normalised form,
/// which gives the unit (`currentTimeMillis` counts milliseconds, `nanoTime` nanoseconds).
pub fn clock_window(text: &str, span: Span, display: &str) -> bool {
    let Some(mut rest) = text.get(span.end..) else {
        return false;
    };
    // Milliseconds unless the reading says otherwise: most JVM clock values are.
    let mut unit_secs = if display.contains("nanoTime") {
        1e-9
    } else {
        1e-3
    };
    // The method chain applied to the reading: `.duration_since(UNIX_EPOCH)?.as_secs()`.
    loop {
        let t = skip_trivia(rest);
        if let Some(r) = t.strip_prefix('?').or_else(|| t.strip_prefix("!!")) {
            rest = r;
            continue;
        }
        let Some(r) = t.strip_prefix('.') else {
            rest = t;
            break;
        };
        let r = skip_trivia(r);
        let name_len = r
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(r.len());
        if name_len == 0 {
            return false;
        }
        let name = &r[..name_len];
        let after = skip_trivia(&r[name_len..]);
        let (args, next) = match after.strip_prefix('(') {
            Some(a) => match matching_paren(a) {
                Some(close) => (&a[..close], &a[close + 1..]),
                None => return false,
            },
            None => ("", after),
        };
        let lower = name.to_ascii_lowercase();
        if lower.contains("nano") {
            unit_secs = 1e-9;
        } else if lower.contains("milli") {
            unit_secs = 1e-3;
        } else if lower.contains("sec") || lower == "timestamp" || lower == "unix_timestamp" {
            unit_secs = 1.0;
        }
        match name {
            "truncatedTo" => {
                return ["MINUTES", "HOURS", "HALF_DAYS", "DAYS", "WEEKS"]
                    .iter()
                    .any(|u| args.contains(u));
            }
            "format" | "formatted" => {
                if let Some(p) = string_literal(args) {
                    return if p.contains('%') {
                        !strftime_has_seconds(p)
                    } else {
                        !java_pattern_has_seconds(p)
                    };
                }
                return ["ISO_LOCAL_DATE", "ISO_DATE", "BASIC_ISO_DATE"]
                    .iter()
                    .any(|c| args.trim_end().ends_with(c));
            }
            _ => {}
        }
        rest = next;
    }
    // A division by a constant window.
    let Some(d) = rest.strip_prefix('/') else {
        return false;
    };
    if d.starts_with(['/', '*', '=']) {
        return false;
    }
    let d = skip_trivia(d);
    let d = d.strip_prefix('(').unwrap_or(d);
    let end = d
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '*' || c == ' ' || c == '.'))
        .unwrap_or(d.len());
    let expr = d[..end].trim();
    if expr.starts_with(|c: char| c.is_ascii_digit()) {
        let mut product = 1f64;
        for factor in expr.split('*') {
            let digits: String = factor
                .trim()
                .trim_end_matches(|c: char| c.is_ascii_alphabetic())
                .chars()
                .filter(|c| *c != '_')
                .collect();
            let digits = digits.trim_end_matches(|c: char| !c.is_ascii_digit());
            match digits.parse::<f64>() {
                Ok(n) => product *= n,
                Err(_) => return false,
            }
        }
        // Further divisions divide again: `/ 1000 / 3600` is a division by 3,600,000.
        let mut more = &d[end..];
        while let Some(r) = more.trim_start().strip_prefix('/') {
            if r.starts_with(['/', '*', '=']) {
                break;
            }
            let r = r.trim_start();
            let n_end = r
                .find(|c: char| !(c.is_ascii_digit() || c == '_'))
                .unwrap_or(r.len());
            let digits: String = r[..n_end].chars().filter(|c| *c != '_').collect();
            match digits.parse::<f64>() {
                Ok(n) if !digits.is_empty() => product *= n,
                _ => break,
            }
            // A type suffix (`L`, `u64`) ends the number.
            more = r[n_end..].trim_start_matches(|c: char| c.is_ascii_alphanumeric());
        }
        product * unit_secs >= 60.0
    } else {
        // A named window: `/ BUCKET_MS`, `/ ONE_HOUR`, `/ windowMillis`.
        let upper = expr.to_ascii_uppercase();
        [
            "WINDOW", "BUCKET", "MINUTE", "HOUR", "DAY", "PERIOD", "INTERVAL",
        ]
        .iter()
        .any(|w| upper.contains(w))
    }
}

/// `s` after its leading whitespace and comments (`// ..` to the end of the line, `/* .. */`),
/// so a comment between a clock reading and its window changes nothing.
fn skip_trivia(mut s: &str) -> &str {
    loop {
        s = s.trim_start();
        if let Some(r) = s.strip_prefix("//") {
            s = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = s.strip_prefix("/*") {
            s = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else {
            return s;
        }
    }
}

/// Byte offset of the `)` that closes a group whose `(` precedes `s`.
fn matching_paren(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut prev = '\0';
    for (i, c) in s.char_indices() {
        // The arguments of a call in a clock's method chain are short: past 4 KiB this is
        // no such call (an unbalanced `'('` or `"\\"` would otherwise send every clock
        // reading of the file to its end: quadratic).
        if i > MAX_CHAIN_ARGS {
            return None;
        }
        if in_str {
            if c == '"' && prev != '\\' {
                in_str = false;
            }
        } else {
            match c {
                '"' => in_str = true,
                '(' => depth += 1,
                ')' if depth == 0 => return Some(i),
                ')' => depth -= 1,
                _ => {}
            }
        }
        prev = c;
    }
    None
}

/// How far [`matching_paren`] looks for the closing parenthesis, in bytes.
const MAX_CHAIN_ARGS: usize = 4096;

/// The content of the first `"…"` literal in `s`.
fn string_literal(s: &str) -> Option<&str> {
    let start = s.find('"')? + 1;
    let len = s[start..].find('"')?;
    Some(&s[start..start + len])
}

/// A `java.time.format.DateTimeFormatter` pattern shows seconds or finer (`s`, `S`, `n`,
/// `A`, `N`), outside quoted literal text.
pub(crate) fn java_pattern_has_seconds(p: &str) -> bool {
    let mut quoted = false;
    p.chars().any(|c| {
        if c == '\'' {
            quoted = !quoted;
            return false;
        }
        !quoted && matches!(c, 's' | 'S' | 'n' | 'A' | 'N')
    })
}

/// A chrono/strftime format shows seconds or finer: `%S`, `%s`, `%f`, `%T`, `%X`, `%c`,
/// `%r`, `%+` (after optional flags, widths and `.`).
fn strftime_has_seconds(p: &str) -> bool {
    let mut it = p.chars().peekable();
    while let Some(c) = it.next() {
        if c != '%' {
            continue;
        }
        while it
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '_' | '0' | '.' | '#' | ':'))
        {
            it.next();
        }
        if matches!(
            it.next(),
            Some('S' | 's' | 'f' | 'T' | 'X' | 'c' | 'r' | '+')
        ) {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod clock_window_tests {
    use super::clock_window;
    use crate::model::Span;

    fn window(text: &str, source: &str) -> bool {
        let start = text.find(source).unwrap();
        clock_window(text, Span::new(start, start + source.len()), source)
    }

    /// An unbalanced `'('` or `"\\"` after a clock reading must not send every reading of
    /// the file to its end: the look-ahead for the closing parenthesis stops at 4 KiB.
    #[test]
    fn the_closing_parenthesis_is_looked_for_within_a_bound() {
        assert_eq!(super::matching_paren("a, b) + 1"), Some(4));
        let far = format!("{})", "x".repeat(super::MAX_CHAIN_ARGS + 10));
        assert_eq!(super::matching_paren(&far), None);
    }

    #[test]
    fn windows_of_a_minute_or_more() {
        let ms = "System.currentTimeMillis()";
        assert!(window("f(System.currentTimeMillis() / 60000)", ms));
        assert!(window("System.currentTimeMillis() / (60 * 1000)", ms));
        assert!(window("System.currentTimeMillis() / 3_600_000L;", ms));
        assert!(window("System.currentTimeMillis() / WINDOW_MS", ms));
        // Chained divisions divide again.
        assert!(window("System.currentTimeMillis() / 1000 / 3600", ms));
        assert!(window(
            "Utc::now().timestamp_millis() / 1_000 / 60;",
            "Utc::now()"
        ));
        assert!(!window("System.currentTimeMillis() / 1000 / 10", ms));
        // Comments between the reading and its window change nothing.
        assert!(window(
            "System.currentTimeMillis() /* a minute */ / 60000",
            ms
        ));
        assert!(window(
            "System.currentTimeMillis() // bucket\n    / 60000",
            ms
        ));
        assert!(window(
            "Instant.now() /* c */ .truncatedTo(ChronoUnit.HOURS)",
            "Instant.now()"
        ));
        let rust = "Utc::now()";
        assert!(window("Utc::now().timestamp() / 3600", rust));
        assert!(window(
            "SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs() / 300",
            "SystemTime::now()"
        ));
        assert!(window("Utc::now().format(\"%Y%m%d%H\")", rust));
        let ldt = "LocalDateTime.now()";
        assert!(window(
            "LocalDateTime.now().format(DateTimeFormatter.ofPattern(\"yyyyMMddHH\"))",
            ldt
        ));
        assert!(window(
            "LocalDateTime.now().format(DateTimeFormatter.ISO_LOCAL_DATE)",
            ldt
        ));
        assert!(window(
            "Instant.now().truncatedTo(ChronoUnit.HOURS)",
            "Instant.now()"
        ));
    }

    #[test]
    fn not_windows() {
        let ms = "System.currentTimeMillis()";
        assert!(!window("System.currentTimeMillis() / 1000", ms));
        assert!(!window("System.currentTimeMillis()", ms));
        assert!(!window("System.currentTimeMillis() // 60000", ms));
        assert!(!window("System.currentTimeMillis() / divisor", ms));
        assert!(!window(
            "System.nanoTime() / 1_000_000",
            "System.nanoTime()"
        ));
        assert!(!window("Utc::now().timestamp() / 10", "Utc::now()"));
        assert!(!window("Utc::now().format(\"%Y%m%d%H%M%S\")", "Utc::now()"));
        let ldt = "LocalDateTime.now()";
        assert!(!window(
            "LocalDateTime.now().format(DateTimeFormatter.ofPattern(\"yyyyMMddHHmmss\"))",
            ldt
        ));
        assert!(!window(
            "LocalDateTime.now().format(DateTimeFormatter.ofPattern(\"yyyy-MM-dd'T'HH:mm:ss\"))",
            ldt
        ));
        assert!(!window("LocalDateTime.now().format(FORMATTER)", ldt));
        assert!(!window(
            "Instant.now().truncatedTo(ChronoUnit.MILLIS)",
            "Instant.now()"
        ));
        assert!(!window(
            "Instant.now().toEpochMilli() / 1000",
            "Instant.now()"
        ));
    }
}

#[cfg(test)]
mod index_tests {
    use super::*;
    use crate::model::Language;

    const NESTED: &str = r#"
fn charge(k: String) -> Charge {
    let at = now();
    let c = Charge { idempotency_key: k.clone(), meta: Meta { created: at, id: Uuid::new_v4() }, amount: 5 };
    let d = Other { x: Inner { idempotency_key: Uuid::new_v4() }, y: 1 };
    send(Req { idempotency_key: c.idempotency_key, body: Body { n: d } });
    c
}
"#;

    /// The field initialisers found inside a span by the sorted index are those a scan
    /// of the whole list finds, in the same order, for every value of a file with nested
    /// struct literals.
    #[test]
    fn field_initialisers_within_a_span_are_those_a_scan_finds() {
        let cat = Catalogue::builtin();
        let m = crate::lang::lower(Language::Rust, NESTED);
        assert!(m.field_inits.len() >= 8, "{}", m.field_inits.len());
        let flow = Flow::new(&m, &cat);
        let mut nonempty = 0;
        for v in &m.values {
            let scan: Vec<usize> = (0..m.field_inits.len())
                .filter(|i| v.span.contains(m.field_inits[*i].span))
                .collect();
            nonempty += usize::from(!scan.is_empty());
            assert_eq!(flow.field_inits_within(v.span), scan, "{:?}", v.span);
        }
        assert!(nonempty >= 4, "{nonempty}");
    }

    /// A recorder with a per-file cache records the same calls, in the same order and
    /// with the same records, as one that makes each record anew.
    #[test]
    fn one_walk_from_many_values_answers_what_the_walks_one_by_one_do() {
        let cat = Catalogue::builtin();
        let text = "class A { String k(Order o) { String a = helper(o.id()); String t = \
                    String.valueOf(System.currentTimeMillis()); Supplier<String> s = () -> \
                    UUID.randomUUID().toString(); String b = mk(a, other.get(a)); \
                    send(b, s.get()); log(a, t); return a + b + util.Keys.make(b); } }";
        let (m, _) = crate::check::analyse_text(Language::Java, text, &cat);
        let flow = Flow::new(&m, &cat);
        let all: Vec<ValueId> = (0..m.values.len()).collect();
        let (mut with, mut without) = (0, 0);
        // Every window of consecutive values, and the whole file at once.
        let groups = all
            .windows(3)
            .chain(all.windows(1))
            .chain(std::iter::once(&all[..]));
        for group in groups {
            let one_by_one = Recorder::default();
            // Every value is walked (no short cut): all the calls asked about count.
            let mut any = false;
            for v in group {
                any |= !flow.origins(*v, &one_by_one).is_empty();
            }
            let together = Recorder::default();
            assert_eq!(flow.any_origin(group, &together), Some(any), "{group:?}");
            let mut a = one_by_one.asked.into_inner();
            let mut b = together.asked.into_inner();
            for r in [&mut a, &mut b] {
                r.sort();
                r.dedup();
            }
            assert_eq!(a, b, "{group:?}");
            if any {
                with += 1;
            } else {
                without += 1;
            }
        }
        // Both answers occur.
        assert!(with > 3 && without > 3, "{with} {without}");
        assert_eq!(flow.any_origin(&[], &NoHelpers), Some(false));
    }

    #[test]
    fn a_group_with_a_value_past_the_budget_is_left_to_the_walks_one_by_one() {
        let cat = Catalogue::builtin();
        // Each of the 300 writes of `k` reads `k`: a walk from `k` meets every write
        // again from each write, past one query's budget.
        let writes = "if (c) k = k + \"b\"; ".repeat(300);
        let text = format!(
            "class A {{ void f(boolean c) {{ String k = \"a\"; {writes} send(k); \
             send(\"x\"); send(\"y\"); }} }}"
        );
        let (m, _) = crate::check::analyse_text(Language::Java, &text, &cat);
        let flow = Flow::new(&m, &cat);
        let sends: Vec<ValueId> = m
            .calls
            .iter()
            .filter(|c| c.callee == "send")
            .map(|c| c.args[0].value)
            .collect();
        assert_eq!(sends.len(), 3);
        reset_budget();
        flow.origins(sends[0], &NoHelpers);
        assert!(budget_exhausted(), "the value alone runs out");
        // Together with cheap values it still has one query's budget, not three; the
        // flag stays as it was, both ways.
        for was in [false, true] {
            reset_budget();
            if was {
                mark_exhausted();
            }
            assert_eq!(flow.any_origin(&sends, &NoHelpers), None);
            assert_eq!(budget_exhausted(), was);
        }
        reset_budget();
        assert_eq!(flow.any_origin(&sends[1..], &NoHelpers), Some(false));
        assert!(!budget_exhausted());
    }

    #[test]
    fn a_cached_recorder_records_what_an_uncached_one_does() {
        let cat = Catalogue::builtin();
        let text = "class A { String k(Order o) { String a = helper(o.id()); String b = mk(a, other.get(a)); \
                    return a + b + util.Keys.make(b) + helper(o.id()); } }";
        let m = crate::lang::lower(Language::Java, text);
        let flow = Flow::new(&m, &cat);
        let cache = CallRefCache::default();
        let mut asked = 0;
        for (i, _) in m.values.iter().enumerate() {
            let plain = Recorder::default();
            let cached = Recorder::cached(&cache);
            let a = flow.origins(i, &plain);
            let b = flow.origins(i, &cached);
            assert_eq!(a.len(), b.len());
            let (p, c) = (plain.asked.into_inner(), cached.asked.into_inner());
            asked += p.len();
            assert_eq!(p, c, "value {i}");
        }
        assert!(asked > 5, "{asked}");
    }
}
