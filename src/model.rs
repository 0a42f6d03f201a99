//! The language-neutral model a frontend lowers one source file into.
//!
//! A [`FileModel`] is a tree of [`Scope`]s (file, type, function, lambda, loop, anonymous
//! object) and flat arenas of *facts* that point into that tree: ephemeral-value
//! [`Source`]s, [`Call`]s, [`Binding`]s (locals, fields, parameters), [`Assign`]ments,
//! [`Return`]s, string literals and named sinks. Every fact carries a byte [`Span`] into the
//! file's text exactly as it was read from disk (a BOM or shebang included), so reports,
//! fixes and the LSP can all convert positions the same way.
//!
//! Frontends (`crate::lang::*`) only *describe* syntax here: they never consult the
//! catalogue and never decide whether something is a finding. They record every call
//! (constructor invocations included) and leave `sources` empty; the language-neutral
//! [`crate::classify`] pass then turns calls the catalogue knows into [`Source`]s (rewriting
//! `Atom::Call` into `Atom::Source`) and classifies boundaries, sinks and locks.
//!
//! Invariants:
//! - `scopes[0]` is the file scope; every other scope has a parent with a smaller index.
//! - Spans are byte offsets, half-open, `start <= end <= text.len()`.
//! - A `Value`'s atoms are every call and every name reference inside the expression, in
//!   source order: receivers, nested call arguments, string templates, concatenations,
//!   `format!`/`String.format` arguments, conditions. Lambda / closure / anonymous-object
//!   bodies are *not* walked into (they are scopes of their own); the flow analysis follows
//!   a lambda argument through the lambda's [`Return`]s instead.
//! - The result of a lambda is recorded as a [`Return`] of the lambda scope: a Java or Rust
//!   expression body, a Kotlin lambda's last expression statement, a Rust closure's block
//!   tail expression.

use serde::Serialize;

/// Receiver texts longer than this many bytes are cut to their tail (see [`receiver_tail`]).
pub const RECEIVER_MAX_BYTES: usize = 512;

/// The last [`RECEIVER_MAX_BYTES`] bytes of a receiver text (cut on a char boundary). The
/// catalogue only looks at a receiver's last segments and at substrings like `retry`, so
/// the tail is enough, and it keeps very long call chains linear.
pub fn receiver_tail(raw: &str) -> &str {
    if raw.len() <= RECEIVER_MAX_BYTES {
        return raw;
    }
    let mut cut = raw.len() - RECEIVER_MAX_BYTES;
    while !raw.is_char_boundary(cut) {
        cut += 1;
    }
    // Start at a token boundary: a cut inside an identifier would leave a name (`er` of
    // `filter`) that is not in the text.
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while let Some(c) = raw[cut..].chars().next() {
        if !ident(c) || !raw[..cut].chars().next_back().is_some_and(ident) {
            break;
        }
        cut += c.len_utf8();
    }
    &raw[cut..]
}

/// Source language of a file, chosen by extension (`.rs`, `.java`, `.kt`/`.kts`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Rust,
    Java,
    Kotlin,
}

impl Language {
    /// Picks the language from a path's extension; `None` for anything else.
    pub fn from_path(path: &std::path::Path) -> Option<Language> {
        match path.extension()?.to_str()? {
            "rs" => Some(Language::Rust),
            "java" => Some(Language::Java),
            "kt" | "kts" => Some(Language::Kotlin),
            _ => None,
        }
    }

    /// The catalogue's spelling: `rust`, `java`, `kotlin`.
    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Java => "java",
            Language::Kotlin => "kotlin",
        }
    }
}

/// A half-open byte range `[start, end)` into the file's original text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }
    /// True when `other` lies inside `self` (inclusive of equal bounds).
    pub fn contains(&self, other: Span) -> bool {
        self.start <= other.start && other.end <= self.end
    }
}

pub type ScopeId = usize;
pub type CallId = usize;
pub type SourceId = usize;
pub type ValueId = usize;

/// What kind of syntactic region a scope is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScopeKind {
    File,
    /// A class, interface, object, enum, record, trait, or a Rust `impl` block.
    Type(TypeInfo),
    /// A named function or method (Java constructors and Rust trait methods included).
    Function(FunctionInfo),
    /// A lambda, closure, Kotlin lambda literal / anonymous function, Rust `async` block
    /// passed as a value, or Java method reference target (none). See [`LambdaInfo`].
    Lambda(LambdaInfo),
    /// A loop body (`for`, `while`, `do`, Rust `loop`). See [`LoopInfo`].
    Loop(LoopInfo),
    /// An anonymous object: Java `new T() { ... }`, Kotlin `object : T { ... }`.
    Object(TypeInfo),
}

/// Facts about a type-like scope.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TypeInfo {
    /// Simple name; empty for anonymous objects.
    pub name: String,
    /// Simple names of the supertypes / implemented interfaces / implemented Rust trait, as
    /// written but without generic arguments or qualification (`okhttp3.Interceptor` →
    /// `Interceptor`, `Callback<Charge>` → `Callback`).
    pub supertypes: Vec<String>,
    /// Annotation names without `@` and without qualification (`Configuration`).
    pub annotations: Vec<Annotation>,
    /// A Kotlin `companion object` (named or not): its members are called through the
    /// enclosing class's name (`Ids.fresh()`), as Java's static members are.
    pub companion: bool,
}

/// An annotation (Java/Kotlin) or attribute (Rust, path only).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Annotation {
    /// Simple name without `@` (`Scheduled`, `SchedulerLock`, `Header`).
    pub name: String,
    /// The annotation's arguments as written, each unquoted when it is a string literal
    /// (`@Header("Idempotency-Key")` → `["Idempotency-Key"]`; `@Header(value = "X")` → `["X"]`).
    pub args: Vec<String>,
    /// Byte span of the annotation itself (`@` included).
    pub span: Span,
    /// Byte span of the annotated construct: the whole declaration (modifiers, body)
    /// for a class, function, property, field, local or parameter; the whole file for
    /// Kotlin `@file:` annotations. Equal to `span` where the frontend does not know it
    /// (Rust attributes). Used to scope `@Suppress` / `@SuppressWarnings`.
    pub target: Span,
}

/// Facts about a function scope.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionInfo {
    pub name: String,
    pub params: Vec<Param>,
    pub annotations: Vec<Annotation>,
    /// Return type text as written (`Mono<Charge>`, `Response`), empty when absent.
    pub return_type: String,
    /// Span of the function's name identifier.
    pub name_span: Span,
    /// True for Kotlin expression-bodied functions (`fun f() = expr`); their body value is
    /// recorded as a [`Return`].
    pub expression_body: bool,
    /// Kotlin extension functions: the receiver type's simple name (`String` of `fun
    /// String.toKey()`); empty otherwise.
    pub extends: String,
}

/// A declared parameter of a function or lambda.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    /// Type text as written, possibly empty.
    pub ty: String,
    pub annotations: Vec<Annotation>,
    pub span: Span,
}

/// When a guarded arm runs ([`FileModel::guards`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GuardKind {
    /// The condition holds (`if (c) arm`, `c ? arm : ..`).
    IfTrue,
    /// The condition does not hold (`else arm`, `c ? .. : arm`).
    IfFalse,
    /// The left side of `?:` is null.
    Elvis,
}

/// Facts about a lambda scope.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LambdaInfo {
    /// The call the lambda is an argument of (trailing lambdas included), if any.
    pub owner_call: Option<CallId>,
    /// 0-based index in `owner_call`'s `args` (a trailing lambda is the last arg).
    pub arg_index: usize,
    pub params: Vec<Param>,
    /// Rust: the closure is `move`, or its body is an `async move` block.
    pub is_move: bool,
}

/// Facts about a loop scope, computed syntactically by the frontend.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoopInfo {
    /// `for`, `while`, `do`, `loop` (Rust), `repeat` is a call with a lambda, not a loop.
    pub keyword: String,
    /// Text of the loop header (condition / pattern and iterable), for naming hints.
    pub header: String,
    /// The body handles a failure and can go round again: a `try`/`catch` whose catch does
    /// not unconditionally leave the loop, or (Rust) a `match`/`if let` arm on `Err(..)`,
    /// `.is_err()`, `.is_ok()` or `.is_success()` / `.status()` tests.
    pub handles_error: bool,
    /// The body contains a `break` or `return` that leaves this loop (on success).
    pub has_exit: bool,
    /// Rust: the body awaits `.tick()` (a `tokio::time::interval` loop).
    pub awaits_tick: bool,
    /// Java, Kotlin: each iteration takes the next item from a queue, channel or iterator
    /// (`val e = queue.poll() ?: break`): a drain loop, whose iterations are different items.
    pub drains: bool,
}

/// Whether a loop condition (lower-cased) tests a response for a failure: a status or
/// code compared against an error value (`statusCode() >= 500`, `code == 503`,
/// `status != 200`), a server-error predicate (`is5xxServerError()`,
/// `is_server_error()`), or a negated success test (`!resp.isSuccessful`). A test for a
/// pending status (`== 202`) or a job state (`status != DONE`) is not one: those loops
/// poll, they do not retry.
fn failure_status_test(h: &str) -> bool {
    let h: String = h.chars().filter(|c| !c.is_whitespace()).collect();
    const PREDICATES: [&str; 4] = [
        "is5xx",
        "isservererror",
        "is_server_error",
        "is4xxclienterror",
    ];
    if PREDICATES.iter().any(|w| h.contains(w)) {
        return true;
    }
    // `!resp.isSuccessful`, `!response.status().is_success()`: the operand of the `!`
    // runs from it to the predicate through names, dots, calls and `?`.
    for w in ["issuccess", "is_success"] {
        for (at, _) in h.match_indices(w) {
            let before =
                h[..at].trim_end_matches(|c: char| c.is_alphanumeric() || "_.()?$".contains(c));
            if before.ends_with('!') {
                return true;
            }
        }
    }
    const FAILURES: [&str; 14] = [
        ">=500", ">499", ">=400", ">399", ">=300", ">299", "==500", "==502", "==503", "==504",
        "==429", "!=200", "<200", "!=ok",
    ];
    (h.contains("status") || h.contains("code")) && FAILURES.iter().any(|w| h.contains(w))
}

/// Whether `code` (a status constant's last segment or an integer literal, any case) is a
/// success status or a failure worth trying again: `200`/`OK`/`HTTP_OK`, `408`, `429`,
/// `5xx`, `TOO_MANY_REQUESTS`, `SERVICE_UNAVAILABLE`, `INTERNAL_SERVER_ERROR`,
/// `BAD_GATEWAY`, `GATEWAY_TIMEOUT`, `REQUEST_TIMEOUT` and `java.net.HttpURLConnection`'s
/// `HTTP_UNAVAILABLE`, `HTTP_INTERNAL_ERROR`, `HTTP_BAD_GATEWAY`, `HTTP_GATEWAY_TIMEOUT`,
/// `HTTP_CLIENT_TIMEOUT`. A loop that compares a response's status with one of these
/// tells a failed attempt from a good one; a pending status (`202`, `ACCEPTED`) is what a
/// polling loop waits out, so it is not one.
pub fn names_outcome_status(code: &str) -> bool {
    if let Ok(n) = code.parse::<u16>() {
        return n == 200 || n == 408 || n == 429 || (500..600).contains(&n);
    }
    let c = code.to_ascii_lowercase();
    let c = c.strip_prefix("http_").unwrap_or(&c);
    matches!(
        c,
        "ok" | "too_many_requests"
            | "service_unavailable"
            | "internal_server_error"
            | "bad_gateway"
            | "gateway_timeout"
            | "request_timeout"
            | "unavailable"
            | "internal_error"
            | "client_timeout"
    )
}

/// Words that name attempts in a loop header.
const HINTS: [&str; 4] = ["attempt", "retr", "tries", "tried"];

/// Whether a name names attempts: one of its words ([`name_words`]) starts with a word of
/// [`HINTS`] (`attempt`, `retryCount`, `maxTries`, `retries_left`), not merely contains
/// one (`entries`, `countries`), and is no form of "retrieve".
pub fn names_attempts(name: &str) -> bool {
    has_word_starting(name, &HINTS, &HINT_ENDINGS)
}

/// Whether one of the words of `text` ([`name_words`]) starts with one of `stems` (a
/// "retrieve" is no retry) or ends with one of `endings` (a name written in one case,
/// `maxretries`).
fn has_word_starting(text: &str, stems: &[&str], endings: &[&str]) -> bool {
    name_words(text).iter().any(|w| {
        (!w.starts_with("retriev") && stems.iter().any(|s| w.starts_with(s)))
            || endings.iter().any(|e| w.ends_with(e))
    })
}

/// Endings that name attempts inside a one-case word (`maxretries`, `maxattempts`); not
/// `tries`, which ends `entries` and `countries`.
const HINT_ENDINGS: [&str; 4] = ["retry", "retries", "attempt", "attempts"];

/// The words of the identifiers in `text`, lower-cased: identifiers split at `_`, at a
/// lower-case letter or digit followed by an upper-case one (`retryCount` → `retry`,
/// `count`) and before the last capital of a capital run followed by a lower-case letter
/// (`HTTPRetry` → `http`, `retry`).
pub fn name_words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for ident in text.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
        for part in ident.split('_') {
            let chars: Vec<char> = part.chars().collect();
            let mut word = String::new();
            for (i, &c) in chars.iter().enumerate() {
                let prev = i.checked_sub(1).map(|j| chars[j]);
                let next = chars.get(i + 1).copied();
                let boundary = c.is_uppercase()
                    && (prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit())
                        || (prev.is_some_and(char::is_uppercase)
                            && next.is_some_and(char::is_lowercase)));
                if boundary && !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                }
                word.extend(c.to_lowercase());
            }
            if !word.is_empty() {
                out.push(word);
            }
        }
    }
    out
}

/// Words that name a schedule of waits between attempts, in the iterable of a `for`.
const SCHEDULE: [&str; 5] = ["delay", "backoff", "interval", "wait", "sleep"];

impl LoopInfo {
    /// Whether the loop retries: its body handles a failure and can go round again
    /// ([`LoopInfo::handles_error`]), and it either leaves on success or its header counts
    /// attempts. A `for` loop over a collection of distinct items is not a retry (one key
    /// per item is right there), whatever its body does: only a counted `for` (a range
    /// such as `0..3`, `1..=max`, `until`, or a C-style `for (int i = 0; i < n; i++)`) or
    /// a header naming attempts can be.
    pub fn is_retry(&self) -> bool {
        let h = self.header.to_ascii_lowercase();
        let mut hint = has_word_starting(&self.header, &HINTS, &HINT_ENDINGS);
        if self.keyword == "for" && !self.counted() {
            // Over a collection, each iteration is another item whatever the collection
            // is called (`for (Installment i : installmentsForRetry)`): only the loop
            // variable can name attempts (`for (attempt in attempts)`), or a schedule of
            // waits names the iterations as attempts (`for (delay in retryDelays)`,
            // `for delay in ExponentialBackoff::from_millis(10).take(3)`).
            let (var, iterable) = self.for_parts();
            // The iterable's own words, not those of the arguments of the calls that make
            // it: `sqs.receiveMessage(r -> r.waitTimeSeconds(20)).messages()` is a batch of
            // messages, however long its long poll waits.
            let mut depth = 0usize;
            let outer: String = iterable
                .chars()
                .filter(|c| {
                    match c {
                        '(' => depth += 1,
                        ')' => depth = depth.saturating_sub(1),
                        _ => return depth == 0,
                    }
                    false
                })
                .collect();
            hint = has_word_starting(&var, &HINTS, &HINT_ENDINGS)
                || has_word_starting(&var, &SCHEDULE, &[])
                || has_word_starting(&outer, &SCHEDULE, &[]);
            if !hint {
                return false;
            }
        }
        // A `while`/`do` whose condition tests the last response for a failure status
        // (`while (resp == null || resp.statusCode() >= 500 && tries < 3)`) goes round
        // again on a failure and leaves on success through the condition itself.
        let status = matches!(self.keyword.as_str(), "while" | "do") && failure_status_test(&h);
        !self.drains && (self.handles_error || status) && (self.has_exit || hint || status)
    }

    /// A range or C-style header: `0..3`, `1..=max`, `until`, `downTo`, `for (;;)`.
    fn counted(&self) -> bool {
        let h = self.header.to_ascii_lowercase();
        h.contains("..") || h.contains(" until ") || h.contains(" downto ") || h.contains(';')
    }

    /// Whether the header counts attempts: a counted `for`, or a header naming attempts
    /// (`while (attempts < 3)`).
    pub fn counts_attempts(&self) -> bool {
        (self.keyword == "for" && self.counted())
            || has_word_starting(&self.header, &HINTS, &HINT_ENDINGS)
    }

    /// A `for` over a collection: the loop variable's name (without its type:
    /// Java `Type name : items`, Kotlin `name: Type in items`) and the iterable's text, as
    /// written (their words are read by [`name_words`]).
    fn for_parts(&self) -> (String, String) {
        let h = self.header.clone();
        let (pat, iterable) = match h.split_once(" in ") {
            Some((p, i)) => (p.to_string(), i.to_string()),
            None => match h.split_once(':') {
                Some((p, i)) => (p.to_string(), i.to_string()),
                None => (h.clone(), String::new()),
            },
        };
        // Kotlin `name: Type`; Java `final Type name`.
        let pat = pat.split(':').next().unwrap_or("").trim();
        let var = if pat.starts_with('(') {
            pat.to_string()
        } else {
            pat.rsplit(char::is_whitespace)
                .next()
                .unwrap_or("")
                .to_string()
        };
        (var, iterable)
    }
}

/// One node of the scope tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scope {
    pub kind: ScopeKind,
    /// `None` only for the file scope (`scopes[0]`).
    pub parent: Option<ScopeId>,
    /// The whole construct: function declaration, lambda expression, loop statement.
    pub span: Span,
}

/// What an ephemeral source produces.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A random draw: UUID v4/v7, ULID, `Random`, `thread_rng`.
    Random,
    /// A clock reading: `Instant.now()`, `System.currentTimeMillis()`, `SystemTime::now()`.
    Clock,
}

/// An expression that yields a new value every time it is evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    pub kind: SourceKind,
    /// The expression as a user would name it, normalised: `UUID.randomUUID()`,
    /// `Uuid::new_v4()`, `System.currentTimeMillis()`.
    pub display: String,
    pub span: Span,
    pub scope: ScopeId,
    /// A clock reading reduced where it is read to a window of at least a minute
    /// (`System.currentTimeMillis() / 60000`, a format with no seconds): a deliberate time
    /// bucket, which every attempt inside the window shares (see
    /// [`crate::flow::clock_window`]). Not followed as an origin.
    pub window: bool,
    /// Recognised by its name alone (a `by_name` catalogue entry: a key generator such as
    /// `idempotencyKeyGenerator.generate()`): a declaration of the call in another file of
    /// the project takes its place once the project index is known
    /// ([`crate::classify::classify_in_project`]).
    pub by_name: bool,
}

/// One thing a value depends on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Atom {
    /// An ephemeral source evaluated right here.
    Source(SourceId),
    /// A reference to a name (local, parameter, field, property; `this.x` / `self.x` give
    /// `x`). `offset` is the byte offset of the use, for finding the binding in effect.
    Name { name: String, offset: usize },
    /// A call evaluated as part of this value (possibly a project helper that returns a
    /// fresh value).
    Call(CallId),
}

/// The atoms of one expression. See the module docs for what contributes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Value {
    pub atoms: Vec<Atom>,
    pub span: Span,
    /// The expression is a string literal; its unquoted content (for header names).
    pub literal: Option<String>,
    /// The expression is a plain name or path (`IDEMPOTENCY_HEADER`, `Headers::IDEMPOTENCY_KEY`);
    /// its last segment.
    pub ident: Option<String>,
}

/// One argument of a call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Arg {
    /// Kotlin named argument (`idempotencyKey = ...`); `None` when positional.
    pub name: Option<String>,
    pub value: ValueId,
    /// The argument is a lambda / closure / anonymous object; its scope.
    pub lambda: Option<ScopeId>,
    /// The argument constructs or names a type: `Foo()` (Kotlin), `new Foo(..)` (Java),
    /// `Foo::new(..)`, `Foo::with_x(..)`, `Foo { .. }`, `Foo` (Rust unit struct). Simple name.
    pub type_hint: Option<String>,
    /// The argument is a reference to a function or method: `this::runBilling`,
    /// `Billing::run` (Java), `::runBilling` / `this::runBilling` (Kotlin), or a plain
    /// lower-case path `run_billing` / `jobs::run_billing` (Rust). The simple name.
    pub fn_ref: Option<String>,
    pub span: Span,
}

impl Call {
    /// The simple name of [`Call::receiver_type`] (`Builder` of `HttpRequest.Builder`).
    pub fn receiver_type_name(&self) -> Option<&str> {
        self.receiver_type
            .as_deref()
            .map(|t| t.rsplit('.').next().unwrap_or(t))
    }
}

/// A call or constructor invocation (`new X()` in Java has `callee == "X"`, `is_new`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Call {
    /// Simple name of the function or method (`randomUUID`, `header`, `retry`, `new_v4`).
    pub callee: String,
    /// Rust path segments before the name (`["backoff","future"]` for
    /// `backoff::future::retry`), or the Java/Kotlin qualifier when the receiver is a plain
    /// dotted name of a type (`["Retry"]` in `Retry.decorateSupplier`). Empty otherwise.
    pub path: Vec<String>,
    /// Receiver expression text, whitespace-collapsed (`chain.request().newBuilder()`), or
    /// `None` for a free call. For chained calls this is the full text of the receiver.
    pub receiver: Option<String>,
    /// When the receiver is itself a call (`a.b().c()`), that call.
    pub receiver_call: Option<CallId>,
    pub args: Vec<Arg>,
    /// Java `new X(...)` / Kotlin constructor-looking call (capitalised callee).
    pub is_new: bool,
    pub span: Span,
    /// Span of the callee name token.
    pub name_span: Span,
    pub scope: ScopeId,
    /// Rust: the receiver is a closure, `(|| async { .. }).retry(b)` (backon); its scope.
    pub receiver_lambda: Option<ScopeId>,
    /// The declared type of the receiver when it is a plain name (or `this.x` / `self.x`)
    /// bound in this file with a written type: `billing` in `billing.collect(..)` after
    /// `private val billing: CollectionApi`. Simple name, no generics; a nested JVM type
    /// keeps its enclosing type (`HttpRequest.Builder`, see [`Call::receiver_type_name`]).
    /// Set by [`crate::lang::lower`]; the index resolves the call by it.
    pub receiver_type: Option<String>,
}

/// Where a binding comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    /// `val`/`var`/`let`/local variable declaration.
    Local,
    /// A field or property of a type, or a top-level property / `static`/`const`.
    Field,
    /// A parameter of a function or lambda, or a pattern binding (`for x in`, `catch (e)`).
    Param,
}

/// A name introduced into a scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    pub name: String,
    pub kind: BindingKind,
    /// Initializer, if any.
    pub value: Option<ValueId>,
    pub scope: ScopeId,
    /// Span of the name token.
    pub name_span: Span,
    /// Span of the whole declaration.
    pub span: Span,
}

/// `name = value` / `name += value` / `this.name = value` / `obj.name = value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assign {
    /// Last segment of the assigned place (`this.idempotencyKey` → `idempotencyKey`).
    pub name: String,
    pub value: ValueId,
    pub scope: ScopeId,
    pub span: Span,
}

/// A value leaving a function: `return expr`, a Rust tail expression of the function body,
/// or a Kotlin expression body. The Kotlin frontend also records a bare `return` (with an
/// empty value), so non-local returns out of inline lambdas are visible.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Return {
    pub value: ValueId,
    /// Innermost scope of the return; returns inside lambdas belong to the lambda, except
    /// Kotlin `return` (non-local) which the frontend attributes to the enclosing function.
    pub scope: ScopeId,
    pub span: Span,
}

/// A named slot a value flows into that is not a binding: a Rust struct-literal field
/// (`idempotency_key: k`), a Kotlin named argument is an [`Arg`] instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldInit {
    pub name: String,
    /// The struct's simple name as written (`CreateEventInput`, or `Self` inside an
    /// `impl`), when the literal names one.
    pub ty: Option<String>,
    pub value: ValueId,
    pub scope: ScopeId,
    pub span: Span,
}

/// A Kotlin primary-constructor property with a default value (`data class
/// ChargeRequest(val amount: Long, val idempotencyKey: String = UUID.randomUUID()
/// .toString())`): a call that leaves it out evaluates the default at the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtorDefault {
    /// The class's simple name (the constructor call's callee).
    pub type_name: String,
    /// 0-based position of the parameter.
    pub index: usize,
    pub name: String,
    pub value: ValueId,
    pub span: Span,
}

/// A name/value pair written as an expression: a Rust 2-tuple `("Idempotency-Key", k)`
/// (in `vec![..]`, arrays, `headers.push(..)`), a Kotlin `"Idempotency-Key" to k`.
/// Classify makes `value` a key sink when `key` names a key header or a key field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pair {
    pub key: ValueId,
    pub value: ValueId,
    pub scope: ScopeId,
    pub span: Span,
}

/// A string literal anywhere in the file (used for SQL lock detection and header reads).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StringLit {
    /// Unquoted content (templates included as written).
    pub text: String,
    pub span: Span,
    pub scope: ScopeId,
}

/// A parse problem. The model may still be partial (tree-sitter recovers; syn does not).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    pub span: Span,
}

/// Everything a frontend knows about one file.
#[derive(Clone, Debug)]
pub struct FileModel {
    pub language: Language,
    pub scopes: Vec<Scope>,
    pub sources: Vec<Source>,
    pub values: Vec<Value>,
    pub calls: Vec<Call>,
    pub bindings: Vec<Binding>,
    pub assigns: Vec<Assign>,
    pub returns: Vec<Return>,
    pub field_inits: Vec<FieldInit>,
    /// Kotlin primary-constructor properties with default values.
    pub ctor_defaults: Vec<CtorDefault>,
    /// Names read only for one of their fields (`pos` in `format!("{}", pos.id)`,
    /// `"k-" + req.id`, `"${req.id}"`): byte offset of the name's [`Atom::Name`] and the
    /// field. The flow follows the field, not the whole object.
    pub field_reads: Vec<(usize, String)>,
    pub pairs: Vec<Pair>,
    /// Import aliases: `(alias, original)` from Rust `use uuid::Uuid as U;` and Kotlin
    /// `import java.util.UUID as U` (the original's last segment). Applied to calls by
    /// [`crate::lang::lower`], so the catalogue sees `Uuid::new_v4` in `U::new_v4()`.
    pub aliases: Vec<(String, String)>,
    pub strings: Vec<StringLit>,
    /// File-level annotations (Kotlin `@file:`) are folded into the file scope's types; this
    /// list holds every annotation on any declaration, for project-wide facts such as
    /// `@EnableSchedulerLock`.
    pub annotations: Vec<Annotation>,
    /// Bodies of `try` blocks (Java, Kotlin) whose every `catch` completes without
    /// throwing again: a failure of a call inside is handled there and does not leave the
    /// enclosing function. Byte spans of the `try` block, sorted by start.
    pub handled: Vec<Span>,
    /// The subset of [`FileModel::handled`] whose `catch` clauses include one for
    /// `Exception` or `Throwable` (Java multi-catch alternatives included): no exception a
    /// call inside throws leaves the block. Byte spans of the `try` block.
    pub catch_all: Vec<Span>,
    /// Byte spans of `catch` clauses (Java, Kotlin): code there runs after a failure.
    pub catches: Vec<Span>,
    /// Java and Kotlin `if`/`else`: the byte spans of the two arms (`else if` chains give
    /// one pair per `if`). Code in one arm never runs in the same pass as code in the other.
    pub branches: Vec<(Span, Span)>,
    /// Java and Kotlin code that runs only under a condition: each arm of an `if` (with or
    /// without `else`), of a conditional expression (`c ? a : b`), a `switch` / `when`
    /// body, and the right side of Kotlin's `?:`. Byte spans.
    pub conditional: Vec<Span>,
    /// Guarded code: `(condition, arm, kind)` for the arms of `if` (Java, Kotlin, Rust) and
    /// `c ? a : b` (the condition's span) and the right side of Kotlin's `a ?: b` (the left
    /// side's span). Byte spans.
    pub guards: Vec<(Span, Span, GuardKind)>,
    /// Rust: byte spans of branches that always leave their loop (a `match` arm, an `if`
    /// or `else` block whose last statement is `return` or `break`). Rust has no exceptions
    /// that a catch inside the loop could turn into another iteration, so code in such a
    /// branch runs at most once per run of the loop: on the attempt that ends it.
    pub exit_blocks: Vec<Span>,
    /// Rust: `(struct, field, type)` for each named field of a struct declared in the file,
    /// the type as a simple name with smart pointers removed (`broker: Arc<AngelOneClient>`
    /// → `AngelOneClient`), so `self.broker.f()` in an `impl` of that struct resolves by it.
    pub field_types: Vec<(String, String, String)>,
    /// Constructor parameters that are fields, by position: Java record components and
    /// Kotlin primary-constructor properties (`val`/`var`), `(type, names)` with an empty
    /// name for a parameter that is not a property. `new R(a, b)`, `R(a, b)` and `this(a,
    /// b)` inside `R` write argument `i` into field `names[i]`. The third element is the
    /// type's scope.
    pub components: Vec<(String, Vec<String>, ScopeId)>,
    /// Rust struct literals with a base (`T { a, b: x, ..base }`): the first call of the
    /// base expression and the fields the literal sets itself, which the base's values of
    /// those fields never reach.
    pub struct_bases: Vec<(CallId, Vec<String>)>,
    pub errors: Vec<ParseError>,
    /// How broken the syntax tree is, for telling whether an edit made it worse (a fix is
    /// refused then): the number of errors (not capped as [`Self::errors`] is) and the
    /// bytes inside the outermost error regions. Java and Kotlin fill it in
    /// ([`crate::lang::syntax_errors`]); `None`: [`Self::errors`]' length stands for it.
    pub damage: Option<(usize, usize)>,
}

impl FileModel {
    /// An empty model holding only the file scope covering `len` bytes.
    pub fn new(language: Language, len: usize) -> FileModel {
        FileModel {
            language,
            scopes: vec![Scope {
                kind: ScopeKind::File,
                parent: None,
                span: Span::new(0, len),
            }],
            sources: Vec::new(),
            values: Vec::new(),
            calls: Vec::new(),
            bindings: Vec::new(),
            assigns: Vec::new(),
            returns: Vec::new(),
            field_inits: Vec::new(),
            ctor_defaults: Vec::new(),
            field_reads: Vec::new(),
            pairs: Vec::new(),
            aliases: Vec::new(),
            strings: Vec::new(),
            annotations: Vec::new(),
            handled: Vec::new(),
            catch_all: Vec::new(),
            catches: Vec::new(),
            branches: Vec::new(),
            conditional: Vec::new(),
            guards: Vec::new(),
            exit_blocks: Vec::new(),
            field_types: Vec::new(),
            components: Vec::new(),
            struct_bases: Vec::new(),
            errors: Vec::new(),
            damage: None,
        }
    }

    /// Whether `edited` (this file after an edit) parses worse than this: more errors,
    /// or more text inside error regions. Counts alone can hide a broken edit: a file
    /// already at the reported cap of errors, or one whose errors the edit folds into one
    /// larger region.
    pub fn parses_worse(&self, edited: &FileModel) -> bool {
        let of = |m: &FileModel| m.damage.unwrap_or((m.errors.len(), 0));
        let (count, bytes) = of(self);
        let (count2, bytes2) = of(edited);
        count2 > count || bytes2 > bytes
    }

    pub fn add_scope(&mut self, kind: ScopeKind, parent: ScopeId, span: Span) -> ScopeId {
        self.scopes.push(Scope {
            kind,
            parent: Some(parent),
            span,
        });
        self.scopes.len() - 1
    }

    /// Rewrites every byte offset in the model through `f` (a frontend that lowered a
    /// translated text, e.g. Java with its `\uXXXX` escapes decoded, maps its spans back to
    /// the file as read).
    pub fn remap_offsets(&mut self, f: impl Fn(usize) -> usize) {
        let sp = |s: &mut Span| {
            s.start = f(s.start);
            s.end = f(s.end).max(s.start);
        };
        let ann = |a: &mut Annotation| {
            sp(&mut a.span);
            sp(&mut a.target);
        };
        let params = |ps: &mut Vec<Param>| {
            for p in ps {
                sp(&mut p.span);
                p.annotations.iter_mut().for_each(ann);
            }
        };
        for s in &mut self.scopes {
            sp(&mut s.span);
            match &mut s.kind {
                ScopeKind::Type(t) | ScopeKind::Object(t) => t.annotations.iter_mut().for_each(ann),
                ScopeKind::Function(fi) => {
                    sp(&mut fi.name_span);
                    fi.annotations.iter_mut().for_each(ann);
                    params(&mut fi.params);
                }
                ScopeKind::Lambda(l) => params(&mut l.params),
                _ => {}
            }
        }
        self.sources.iter_mut().for_each(|x| sp(&mut x.span));
        for v in &mut self.values {
            sp(&mut v.span);
            for a in &mut v.atoms {
                if let Atom::Name { offset, .. } = a {
                    *offset = f(*offset);
                }
            }
        }
        for c in &mut self.calls {
            sp(&mut c.span);
            sp(&mut c.name_span);
            c.args.iter_mut().for_each(|a| sp(&mut a.span));
        }
        for b in &mut self.bindings {
            sp(&mut b.span);
            sp(&mut b.name_span);
        }
        self.assigns.iter_mut().for_each(|x| sp(&mut x.span));
        self.returns.iter_mut().for_each(|x| sp(&mut x.span));
        self.field_inits.iter_mut().for_each(|x| sp(&mut x.span));
        self.ctor_defaults.iter_mut().for_each(|x| sp(&mut x.span));
        for (o, _) in &mut self.field_reads {
            let mut x = Span::new(*o, *o);
            sp(&mut x);
            *o = x.start;
        }
        self.pairs.iter_mut().for_each(|x| sp(&mut x.span));
        self.strings.iter_mut().for_each(|x| sp(&mut x.span));
        self.annotations.iter_mut().for_each(ann);
        self.handled.iter_mut().for_each(sp);
        self.catch_all.iter_mut().for_each(sp);
        self.catches.iter_mut().for_each(sp);
        for (a, b) in &mut self.branches {
            sp(a);
            sp(b);
        }
        self.conditional.iter_mut().for_each(sp);
        for (c, a, _) in &mut self.guards {
            sp(c);
            sp(a);
        }
        self.errors.iter_mut().for_each(|x| sp(&mut x.span));
    }

    /// The innermost scope at byte `offset`: of the scopes whose span holds it (an empty
    /// span holds its start), the one that starts last, the later-added on a tie; the file
    /// scope when none does. Linear in the number of scopes; [`ScopeLookup`] answers the
    /// same question in logarithmic time for many offsets.
    pub fn innermost_scope_at(&self, offset: usize) -> ScopeId {
        self.scopes
            .iter()
            .enumerate()
            .filter(|(_, s)| s.span.start <= offset && offset < s.span.end.max(s.span.start + 1))
            .map(|(i, _)| i)
            .max_by_key(|i| (self.scopes[*i].span.start, *i))
            .unwrap_or(0)
    }

    /// True when a failure at byte `offset` is caught and handled by an enclosing `try`
    /// (see [`FileModel::handled`]) that lies inside `within` (a scope's span).
    pub fn failure_handled(&self, offset: usize, within: Span) -> bool {
        self.handled.iter().any(|h| {
            h.start <= offset && offset < h.end && within.start <= h.start && h.end <= within.end
        })
    }

    /// True when every exception thrown at byte `offset` is caught by an enclosing `try`
    /// that catches `Exception` or `Throwable` and does not throw again
    /// ([`FileModel::catch_all`]), one that lies inside `within` (a scope's span).
    pub fn failure_caught_all(&self, offset: usize, within: Span) -> bool {
        self.catch_all.iter().any(|h| {
            h.start <= offset && offset < h.end && within.start <= h.start && h.end <= within.end
        })
    }

    /// Whether byte offsets `a` and `b` lie in the two arms of one `if`/`else`
    /// ([`FileModel::branches`]), so they never run in the same pass.
    pub fn exclusive(&self, a: usize, b: usize) -> bool {
        let inside = |s: &Span, o: usize| s.start <= o && o < s.end;
        self.branches
            .iter()
            .any(|(x, y)| (inside(x, a) && inside(y, b)) || (inside(y, a) && inside(x, b)))
    }

    pub fn add_value(&mut self, value: Value) -> ValueId {
        self.values.push(value);
        self.values.len() - 1
    }

    /// Iterates `scope`, its parent, ..., the file scope.
    pub fn ancestors(&self, scope: ScopeId) -> impl Iterator<Item = ScopeId> + '_ {
        std::iter::successors(Some(scope), move |s| self.scopes[*s].parent)
    }

    /// True when `inner` is `outer` or nested inside it.
    pub fn is_within(&self, inner: ScopeId, outer: ScopeId) -> bool {
        self.ancestors(inner).any(|s| s == outer)
    }

    /// The innermost function scope enclosing `scope` (itself included), if any.
    pub fn enclosing_function(&self, scope: ScopeId) -> Option<ScopeId> {
        self.ancestors(scope)
            .find(|s| matches!(self.scopes[*s].kind, ScopeKind::Function(_)))
    }

    /// The fields a constructor call writes by position ([`FileModel::components`]):
    /// `new R(..)` / `R(..)` of a type declared in this file, or `this(..)` inside it.
    pub fn components_written(&self, c: &Call) -> Option<&Vec<String>> {
        if c.args.is_empty()
            || c.receiver
                .as_deref()
                .is_some_and(|r| !names_a_type_scope(r))
        {
            return None;
        }
        let ty: &str = if c.callee == "this" {
            let t = self.enclosing_type(c.scope)?;
            match &self.scopes[t].kind {
                ScopeKind::Type(t) => t.name.as_str(),
                _ => return None,
            }
        } else if c.callee.starts_with(char::is_uppercase) {
            c.callee.as_str()
        } else {
            return None;
        };
        // `Outer.Inner(..)`: the `Inner` nested in `Outer`.
        let outer = c
            .receiver
            .as_deref()
            .map(|r| r.rsplit('.').next().unwrap_or(r).trim())
            .filter(|r| r.starts_with(char::is_uppercase));
        let mut fitting = self
            .components
            .iter()
            .filter(|(t, n, _)| t == ty && n.len() == c.args.len());
        match outer {
            Some(o) => fitting
                .find(|(_, _, s)| self.outer_type_name(*s) == Some(o))
                .map(|(_, n, _)| n),
            // Unqualified or through a package: a top-level type of that name first (a
            // nested namesake is reached unqualified only from inside its outer type or
            // through an import).
            None => {
                let all: Vec<_> = fitting.by_ref().collect();
                all.iter()
                    .find(|(_, _, s)| self.outer_type_name(*s).is_none())
                    .or(all.first())
                    .map(|(_, n, _)| n)
            }
        }
    }

    /// The name of the type that type scope `t` is nested in, if any.
    pub fn outer_type_name(&self, t: ScopeId) -> Option<&str> {
        let p = self.scopes[t].parent?;
        let o = self.enclosing_type(p)?;
        self.type_info(o).map(|i| i.name.as_str())
    }

    /// The innermost type or anonymous-object scope enclosing `scope`, if any.
    pub fn enclosing_type(&self, scope: ScopeId) -> Option<ScopeId> {
        self.ancestors(scope).find(|s| {
            matches!(
                self.scopes[*s].kind,
                ScopeKind::Type(_) | ScopeKind::Object(_)
            )
        })
    }

    pub fn function_info(&self, scope: ScopeId) -> Option<&FunctionInfo> {
        match &self.scopes[scope].kind {
            ScopeKind::Function(f) => Some(f),
            _ => None,
        }
    }

    pub fn type_info(&self, scope: ScopeId) -> Option<&TypeInfo> {
        match &self.scopes[scope].kind {
            ScopeKind::Type(t) | ScopeKind::Object(t) => Some(t),
            _ => None,
        }
    }
}

/// [`FileModel::innermost_scope_at`] for many offsets: the scopes sorted by (start, index)
/// and a max-tree over their (effective) ends, so each lookup is the rightmost scope that
/// starts at or before the offset and ends after it, in O(log n) with no assumption about
/// how the spans nest. (One linear scan per finding or unused suppression made a file with
/// tens of thousands of them quadratic.)
#[derive(Clone, Debug, Default)]
pub struct ScopeLookup {
    /// Scope ids sorted by (span start, id).
    order: Vec<ScopeId>,
    starts: Vec<usize>,
    /// Leaves at `size..size + n`: the effective end (`max(end, start + 1)`) of `order[i]`;
    /// inner nodes hold the maximum of their children.
    tree: Vec<usize>,
    size: usize,
}

impl ScopeLookup {
    pub fn new(m: &FileModel) -> ScopeLookup {
        let mut order: Vec<ScopeId> = (0..m.scopes.len()).collect();
        order.sort_by_key(|&i| (m.scopes[i].span.start, i));
        let starts: Vec<usize> = order.iter().map(|&i| m.scopes[i].span.start).collect();
        let size = order.len().next_power_of_two().max(1);
        let mut tree = vec![0usize; 2 * size];
        for (k, &i) in order.iter().enumerate() {
            let s = m.scopes[i].span;
            tree[size + k] = s.end.max(s.start + 1);
        }
        for k in (1..size).rev() {
            tree[k] = tree[2 * k].max(tree[2 * k + 1]);
        }
        ScopeLookup {
            order,
            starts,
            tree,
            size,
        }
    }

    /// Same answer as [`FileModel::innermost_scope_at`].
    pub fn innermost(&self, offset: usize) -> ScopeId {
        // Candidates are the sorted positions 0..limit (start <= offset); the answer is the
        // rightmost of them whose end is past the offset.
        let limit = self.starts.partition_point(|&s| s <= offset);
        self.rightmost_above(1, 0, self.size, limit, offset)
            .map(|k| self.order[k])
            .unwrap_or(0)
    }

    /// Rightmost leaf position in `[lo, hi)` of node `node`, below `limit`, with a value
    /// greater than `offset`.
    fn rightmost_above(
        &self,
        node: usize,
        lo: usize,
        hi: usize,
        limit: usize,
        offset: usize,
    ) -> Option<usize> {
        if lo >= limit || self.tree[node] <= offset {
            return None;
        }
        if hi - lo == 1 {
            return Some(lo);
        }
        let mid = (lo + hi) / 2;
        self.rightmost_above(2 * node + 1, mid, hi, limit, offset)
            .or_else(|| self.rightmost_above(2 * node, lo, mid, limit, offset))
    }
}

/// Whether a call's receiver text names where a type is declared, so that a capitalised
/// callee on it is a constructor: an enclosing type (`Outer.Inner(..)`, Kotlin) or a package
/// (`shop.model.Command(..)`). Every segment is an identifier; the last is capitalised, or
/// every segment is lower-case.
pub(crate) fn names_a_type_scope(receiver: &str) -> bool {
    let segs: Vec<&str> = receiver.trim().split('.').map(str::trim).collect();
    let ident = |s: &str| {
        s.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    segs.iter().all(|s| ident(s))
        && (segs
            .last()
            .is_some_and(|s| s.starts_with(char::is_uppercase))
            || segs.iter().all(|s| s.starts_with(char::is_lowercase)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempt_names_are_told_by_their_words() {
        assert_eq!(
            name_words("maxRetries HTTPRetry retry_count nTries x2Attempts"),
            [
                "max", "retries", "http", "retry", "retry", "count", "n", "tries", "x2", "attempts"
            ]
        );
        for n in [
            "attempt",
            "maxAttempts",
            "retryCount",
            "RETRIES_LEFT",
            "triesLeft",
            "tried",
        ] {
            assert!(names_attempts(n), "{n}");
        }
        // A hint inside another word (`entries`, `countries`), and "retrieve", name none.
        for n in [
            "entries",
            "countries",
            "retrievedItems",
            "pastries",
            "await",
        ] {
            assert!(!names_attempts(n), "{n}");
        }
        // A batch over `entries` with a stream's `.await` in its header is no retry loop.
        let l = LoopInfo {
            keyword: "while".into(),
            header: "let Some(entry) = entries.next().await".into(),
            handles_error: true,
            ..LoopInfo::default()
        };
        assert!(!l.is_retry());
        let l = LoopInfo {
            keyword: "for".into(),
            header: "invoice in db.due_invoices().await".into(),
            handles_error: true,
            ..LoopInfo::default()
        };
        assert!(!l.is_retry());
        let l = LoopInfo {
            keyword: "for".into(),
            header: "delay in ExponentialBackoff::from_millis(10).take(3)".into(),
            handles_error: true,
            ..LoopInfo::default()
        };
        assert!(l.is_retry());
    }

    fn while_loop(keyword: &str, header: &str) -> LoopInfo {
        LoopInfo {
            keyword: keyword.to_string(),
            header: header.to_string(),
            ..LoopInfo::default()
        }
    }

    #[test]
    fn a_condition_testing_for_a_failure_status_retries() {
        for (k, h) in [
            (
                "while",
                "resp == null || (resp.statusCode() >= 500 && tries < 3)",
            ),
            ("do", "resp.statusCode() >= 500 && tries < 3"),
            ("while", "!resp.isSuccessful && n < 3"),
            ("while", "response.code == 503"),
            ("while", "!response.status().is_success()"),
            ("while", "status.is5xxServerError()"),
        ] {
            assert!(while_loop(k, h).is_retry(), "{k} ({h})");
        }
        for (k, h) in [
            // Polling a pending request or a job's state is not a retry.
            ("while", "resp.statusCode() == 202"),
            ("while", "job.getStatus() != Status.DONE"),
            ("while", "page != null && resp.isSuccessful()"),
            // A `for` over items stays what it was.
            ("for", "Order o : orders"),
        ] {
            assert!(!while_loop(k, h).is_retry(), "{k} ({h})");
        }
    }
}
