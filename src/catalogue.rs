//! The catalogue: which calls are ephemeral sources, key sinks, attempt boundaries and
//! locks, as data. The built-in entries are the TOML files in `rules/` compiled in with
//! `include_str!`; every file has the same shape (see [`CatalogueFile`]) so a user's own
//! entries can be merged with [`Catalogue::merge_toml`].
//!
//! Unknown keys are found by [`validate`] before serde sees the text, because serde's
//! `deny_unknown_fields` does not combine with `#[serde(flatten)]` (the entries flatten
//! [`CallMatch`]): through the flattened buffer a typo would be reported without its
//! position and without the list of keys the entry accepts.

use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::model::{Call, Language, SourceKind};

/// The built-in catalogue files, `(file name, TOML text)`.
pub const BUILTIN: &[(&str, &str)] = &[
    ("core.toml", include_str!("../rules/core.toml")),
    ("jdk.toml", include_str!("../rules/jdk.toml")),
    (
        "id-generators.toml",
        include_str!("../rules/id-generators.toml"),
    ),
    (
        "rust-sources.toml",
        include_str!("../rules/rust-sources.toml"),
    ),
    ("http.toml", include_str!("../rules/http.toml")),
    ("stripe.toml", include_str!("../rules/stripe.toml")),
    ("providers.toml", include_str!("../rules/providers.toml")),
    ("volley.toml", include_str!("../rules/volley.toml")),
    ("apollo.toml", include_str!("../rules/apollo.toml")),
    ("messaging.toml", include_str!("../rules/messaging.toml")),
    ("ktor.toml", include_str!("../rules/ktor.toml")),
    (
        "apache-httpclient.toml",
        include_str!("../rules/apache-httpclient.toml"),
    ),
    ("okhttp.toml", include_str!("../rules/okhttp.toml")),
    ("retrofit.toml", include_str!("../rules/retrofit.toml")),
    ("feign.toml", include_str!("../rules/feign.toml")),
    ("spring.toml", include_str!("../rules/spring.toml")),
    (
        "resilience4j.toml",
        include_str!("../rules/resilience4j.toml"),
    ),
    ("reactor.toml", include_str!("../rules/reactor.toml")),
    ("kotlin.toml", include_str!("../rules/kotlin.toml")),
    ("jvm-retry.toml", include_str!("../rules/jvm-retry.toml")),
    ("schedulers.toml", include_str!("../rules/schedulers.toml")),
    ("rust-retry.toml", include_str!("../rules/rust-retry.toml")),
    (
        "reqwest-middleware.toml",
        include_str!("../rules/reqwest-middleware.toml"),
    ),
    ("locks.toml", include_str!("../rules/locks.toml")),
    ("idemkey.toml", include_str!("../rules/idemkey.toml")),
    ("speakeasy.toml", include_str!("../rules/speakeasy.toml")),
    ("workflow.toml", include_str!("../rules/workflow.toml")),
    (
        "workmanager.toml",
        include_str!("../rules/workmanager.toml"),
    ),
];

/// Conditions on a call shared by several entry kinds. Every condition that is set must
/// hold; an entry with none matches every call.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallMatch {
    /// Languages the entry applies to (`rust`, `java`, `kotlin`); empty means all.
    #[serde(default)]
    pub langs: Vec<String>,
    /// Exact callee names.
    #[serde(default)]
    pub callee: Vec<String>,
    /// Callee globs with `*` wildcards, case-sensitive (`retry*`, `*Retry*`).
    #[serde(default)]
    pub callee_glob: Vec<String>,
    /// The receiver's last segment (split on `.` and `::`, call parentheses removed) equals
    /// one of these. With `free = true`, a call without receiver also matches.
    #[serde(default)]
    pub receiver: Vec<String>,
    /// The lower-cased receiver text contains one of these, or the receiver's declared type
    /// ([`Call::receiver_type`], a type written in the same file), lower-cased, ends with
    /// one (sources read the text alone, [`Self::matches_by_text`]).
    #[serde(default)]
    pub receiver_contains: Vec<String>,
    /// The receiver's last segment (as for `receiver`), lower-cased with `_` and `-`
    /// removed ([`normalize_name`]), is none of these: the entry does not apply to such a
    /// receiver (`idempotencykey`: `idempotencyKey.get()` unwraps the key itself).
    #[serde(default)]
    pub receiver_not: Vec<String>,
    #[serde(default)]
    pub free: bool,
    /// Only constructor invocations (`new Date()`, Kotlin `Date()`).
    #[serde(default)]
    pub new: bool,
    /// At most this many arguments (`0`: a generator called with no input cannot derive
    /// its result from the operation).
    #[serde(default)]
    pub max_args: Option<usize>,
    /// At least this many arguments (NATS JetStream's `subscribe(subject, dispatcher,
    /// handler, autoAck, options)`, not core NATS's `subscribe(subject, handler)`).
    #[serde(default)]
    pub min_args: Option<usize>,
}

impl CallMatch {
    fn is_unconstrained_callee(&self) -> bool {
        self.callee.is_empty() && self.callee_glob.is_empty()
    }

    /// True when `call` (in a file of `lang`) satisfies every condition.
    pub fn matches(&self, lang: Language, call: &Call) -> bool {
        self.matches_reading(lang, call, true)
    }

    /// [`Self::matches`] with `receiver_contains` read from the receiver's text alone, not
    /// its declared type: for sources, whose by-name entries guess a key generator from a
    /// receiver's name (`idempotencyKeyGenerator.create()`). A type so named
    /// (`IdempotencyKeyProvider provider`) is the project's own, and the index follows its
    /// declaration, which says more (what it returns, and from where).
    pub fn matches_by_text(&self, lang: Language, call: &Call) -> bool {
        self.matches_reading(lang, call, false)
    }

    fn matches_reading(&self, lang: Language, call: &Call, typed: bool) -> bool {
        // The callee first: it rules out almost every entry for almost every call.
        if !self.is_unconstrained_callee()
            && !self.callee.contains(&call.callee)
            && !self.callee_glob.iter().any(|g| glob_match(g, &call.callee))
        {
            return false;
        }
        if !self.langs.is_empty() && !self.langs.iter().any(|l| l == lang.name()) {
            return false;
        }
        if self.new && !call.is_new {
            return false;
        }
        if self.max_args.is_some_and(|m| call.args.len() > m) {
            return false;
        }
        if self.min_args.is_some_and(|m| call.args.len() < m) {
            return false;
        }
        if self.receiver.is_empty()
            && self.receiver_contains.is_empty()
            && self.receiver_not.is_empty()
        {
            return true;
        }
        let receiver = receiver_text(call);
        if let Some(r) = receiver.as_deref()
            && !self.receiver_not.is_empty()
        {
            let last = normalize_name(last_segment(r));
            if self.receiver_not.contains(&last) {
                return false;
            }
        }
        if !self.receiver.is_empty() {
            match receiver.as_deref() {
                None => {
                    if !self.free {
                        return false;
                    }
                }
                Some(r) => {
                    let last = last_segment(r);
                    if !self.receiver.iter().any(|x| x == last) {
                        return false;
                    }
                }
            }
        }
        if !self.receiver_contains.is_empty() {
            let Some(r) = receiver else { return false };
            let lower = r.to_ascii_lowercase();
            // The receiver's declared type counts too: `t.execute(..)` after `RetryTemplate t`
            // is a `RetryTemplate` call, whatever the variable's name. The type must end in
            // the word (`RetryTemplate`, `JdbcLockRegistry`): a name that merely contains it
            // (`RetryBudget` for `retry`) is some other type, often the project's own, whose
            // declaration the index reads.
            let ty = call
                .receiver_type
                .as_deref()
                .filter(|_| typed)
                .map(str::to_ascii_lowercase)
                .unwrap_or_default();
            if !self
                .receiver_contains
                .iter()
                .any(|x| lower.contains(x) || (!ty.is_empty() && ty.ends_with(x.as_str())))
            {
                return false;
            }
        }
        true
    }
}

/// The receiver as the catalogue sees it: the receiver text, or the Rust path joined by `::`.
pub fn receiver_text(call: &Call) -> Option<std::borrow::Cow<'_, str>> {
    match &call.receiver {
        Some(r) => Some(std::borrow::Cow::Borrowed(r.as_str())),
        None if call.path.len() == 1 => Some(std::borrow::Cow::Borrowed(call.path[0].as_str())),
        None if !call.path.is_empty() => Some(std::borrow::Cow::Owned(call.path.join("::"))),
        None => None,
    }
}

/// Last `.`/`::` segment of a receiver, with a trailing call's `(..)` removed
/// (`Clock.systemUTC()` → `systemUTC`, `uuid::Uuid` → `Uuid`).
pub fn last_segment(receiver: &str) -> &str {
    let mut r = receiver.trim();
    if r.ends_with(')')
        && let Some(open) = trailing_call_open(r)
    {
        r = &r[..open];
    }
    let r = r.rsplit("::").next().unwrap_or(r);
    let r = r.rsplit('.').next().unwrap_or(r);
    // Generic arguments: `Vec::<u8>` style turbofish segments are dropped by the frontends.
    r.trim()
}

/// Byte offset of the `(` that opens the argument list closing `r` (which ends with `)`):
/// `a.b(x).c(y)` → the `(` after `c`, not the first one.
fn trailing_call_open(r: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in r.bytes().enumerate().rev() {
        match b {
            b')' => depth += 1,
            b'(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `*` matches any run of characters; everything else matches itself. Compared byte by
/// byte (a `*` is one byte in UTF-8 and no other character contains it): callee names are
/// short, and every call is matched against the catalogue's globs.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (pattern, text) = (pattern.as_bytes(), text.as_bytes());
    if !pattern.contains(&b'*') {
        return pattern == text;
    }
    let mut parts = pattern.split(|b| *b == b'*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let mut parts = parts.peekable();
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            return rest.ends_with(part);
        }
        if part.is_empty() {
            continue;
        }
        match rest.windows(part.len()).position(|w| w == part) {
            Some(pos) => rest = &rest[pos + part.len()..],
            None => return false,
        }
    }
    true
}

/// An ephemeral source entry.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceEntry {
    pub kind: SourceKindName,
    /// How messages name it; default: `Receiver.callee()` built from the call.
    #[serde(default)]
    pub display: Option<String>,
    /// The entry recognises a source by its *name* (a key generator), not a library API:
    /// a call of a function the file declares itself is then the project's own code,
    /// which the flow follows through its body instead.
    #[serde(default)]
    pub by_name: bool,
    #[serde(flatten)]
    pub call: CallMatch,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SourceKindName {
    Random,
    Clock,
}

impl From<SourceKindName> for SourceKind {
    fn from(k: SourceKindName) -> SourceKind {
        match k {
            SourceKindName::Random => SourceKind::Random,
            SourceKindName::Clock => SourceKind::Clock,
        }
    }
}

/// `[keys]`: names that say "idempotency key".
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Keys {
    #[serde(default)]
    pub normalized_names: Vec<String>,
    #[serde(default)]
    pub header_names: Vec<String>,
    /// Fields that are a provider's deduplication key only on its own request types
    /// (`requestId` of Cadence's and Temporal's `StartWorkflowExecutionRequest`).
    #[serde(default)]
    pub typed_fields: Vec<TypedKeyField>,
}

/// A field that is a key on the named types only: a setter or builder call named after
/// one of `names` (`setRequestId(v)`, `.requestId(v)`; compared normalised: lower-cased,
/// `_`/`-` removed) whose receiver is declared as one of `types` or whose receiver text
/// names one (`StartWorkflowExecutionRequest.newBuilder().setRequestId(v)`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypedKeyField {
    pub names: Vec<String>,
    pub types: Vec<String>,
}

/// A header setter: argument `name_arg` names the header, `value_arg` is the value.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderSetter {
    pub name_arg: usize,
    pub value_arg: usize,
    #[serde(flatten)]
    pub call: CallMatch,
}

/// A header reader: a call on one argument that names a key header.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderReader {
    #[serde(flatten)]
    pub call: CallMatch,
}

/// A call whose argument `value_arg` is an idempotency key.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSink {
    pub value_arg: usize,
    pub label: String,
    #[serde(flatten)]
    pub call: CallMatch,
}

/// A library call that sends a request carrying a key the library mints itself when the
/// caller gave none (stripe-java gives every POST without a key a random one): evaluated
/// again per attempt, it is a new key per attempt.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MintingCall {
    /// Where and when the library mints: "stripe-java `StripeRequest`, for every POST sent
    /// without a key".
    pub label: String,
    /// The source it mints with, as messages show it (`UUID.randomUUID()`).
    pub source: String,
    /// The entry applies only in files whose text names one of these packages (as an
    /// import, a wildcard import, a package declaration or a qualified name; a substring
    /// of the text, case-sensitive, comments included), e.g. `com.stripe` for stripe-java's model classes.
    /// Empty: every file. Keeps a common receiver name (`Session.create(..)`) to the one
    /// library's.
    #[serde(default)]
    pub packages: Vec<String>,
    #[serde(flatten)]
    pub call: CallMatch,
}

impl MintingCall {
    /// Whether the entry applies in a file with this text ([`Self::packages`]).
    pub fn applies_in(&self, text: &str) -> bool {
        self.packages.is_empty() || self.packages.iter().any(|p| text.contains(p.as_str()))
    }
}

/// Kind of attempt boundary, which decides the rule.
#[derive(
    Clone, Copy, Debug, Deserialize, serde::Serialize, PartialEq, Eq, Hash, PartialOrd, Ord,
)]
#[serde(rename_all = "lowercase")]
pub enum BoundaryKind {
    Interceptor,
    Retry,
    Callback,
    Scheduler,
}

impl BoundaryKind {
    pub fn name(self) -> &'static str {
        match self {
            BoundaryKind::Interceptor => "interceptor",
            BoundaryKind::Retry => "retry",
            BoundaryKind::Callback => "callback",
            BoundaryKind::Scheduler => "scheduler",
        }
    }
}

/// How a boundary is recognised in the model.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum BoundaryForm {
    /// A lambda / closure / anonymous object passed as an argument of a matching call.
    LambdaArg,
    /// A closure that is the receiver of a matching call (backon's `(|| ..).retry(b)`).
    ReceiverLambda,
    /// A method named in `methods` of a type implementing one of `supertypes`.
    MethodOfType,
    /// A function carrying one of `annotations`.
    AnnotatedFunction,
    /// Any lambda argument of a call upstream (in the receiver chain) of a matching call.
    ReactiveUpstream,
    /// A loop that catches a failure and goes round again.
    RetryLoop,
    /// A Rust loop that awaits `interval.tick()`.
    TickLoop,
    /// A lambda returned by a function whose return type is one of `supertypes`
    /// (`@Bean RequestInterceptor idempotency() { return template -> ...; }`), or passed to
    /// a SAM constructor of one (`RequestInterceptor { template -> ... }`).
    ReturnedLambda,
    /// A loop over what a matching call received: its header holds the call
    /// (`for (Message m : sqs.receiveMessage(req).messages())`), or names a local bound
    /// before the loop to a value that holds it (`val out = sqs.receiveMessage(req)` …
    /// `for (m in out.messages())`). Each iteration handles one received message.
    ReceiveLoop,
}

/// A boundary entry.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoundaryEntry {
    pub id: String,
    pub kind: BoundaryKind,
    pub form: BoundaryForm,
    /// Finer classification the rules use for messages (`okhttp-network`, `feign`, ...).
    pub flavor: String,
    pub label: String,
    #[serde(default)]
    pub supertypes: Vec<String>,
    #[serde(default)]
    pub methods: Vec<String>,
    /// For the `method-of-type` form: the method's first parameter is declared with one of
    /// these types (simple name, generic arguments and qualifier dropped): an AWS Lambda
    /// `handleRequest(SQSEvent event, Context context)`, not one of API Gateway's events.
    #[serde(default)]
    pub param_types: Vec<String>,
    /// For the `method-of-type` form: the method's body calls one of these (the consumer
    /// acknowledges its messages itself, so an unacknowledged one is delivered again).
    #[serde(default)]
    pub body_calls: Vec<String>,
    #[serde(default)]
    pub annotations: Vec<String>,
    #[serde(default)]
    pub exclude_return_types: Vec<String>,
    /// For the `annotated-function` form: one of `annotations` on a class stands for it on
    /// each method a proxy can invoke, the class's own `public` non-`static` methods (Java)
    /// or those neither `private` nor `protected` (Kotlin), constructors excluded. Spring
    /// Framework 7 reference, "Resilience Features": `@Retryable` "for all proxy-invoked
    /// methods in a given class hierarchy (with the annotation declared at the type
    /// level)"; Resilience4j's `@Retry` javadoc: on a class, "equivalent to applying it on
    /// all its public methods".
    #[serde(default)]
    pub on_type: bool,
    /// For the `annotated-function` form: one of `annotations` on a method of a supertype
    /// declared in the same file stands for it on the methods implementing it (same name
    /// and number of parameters) in the file's types. Spring Retry finds `@Retryable` on
    /// the interface method a bean implements (spring-retry issue #32, fixed in 1.1.3:
    /// `AnnotationAwareRetryOperationsInterceptor` looks at the interface too). One of
    /// `annotations` on the supertype itself counts for each of its methods (Temporal's
    /// `@ActivityInterface`: every method of the interface is an activity method).
    #[serde(default)]
    pub on_interface: bool,
    #[serde(default)]
    pub requires_nonlocal_return: bool,
    /// Annotations that stop the method's body from ever running when the method returns
    /// a plain value rather than one of [`Self::async_return_types`] (Resilience4j's
    /// `@TimeLimiter` aspect throws `IllegalReturnTypeException` before the call for a
    /// non-`CompletionStage` return type): such a method is no boundary, its body never runs.
    #[serde(default)]
    pub inert_with: Vec<String>,
    /// For the `returned-lambda` form: the returning function's declared return type must
    /// contain one of these texts (`Message<`: a `Consumer<Message<T>>`); empty: any.
    #[serde(default)]
    pub return_type_contains: Vec<String>,
    /// Return types (simple names) under which [`Self::inert_with`] lets the body run.
    #[serde(default)]
    pub async_return_types: Vec<String>,
    /// The entry applies only in files that import from one of these packages or crates:
    /// a prefix of the path after `import` (Java, Kotlin; `import static` too) or `use`
    /// (Rust), e.g. `dev.restate.sdk`. Empty: every file. Lets a common annotation name
    /// (`@Handler`) stand for one framework's.
    #[serde(default)]
    pub imports: Vec<String>,
    /// For the `lambda-arg` form: the 0-based argument positions that run per attempt
    /// (`RetryTemplate.execute(retryCallback, recoveryCallback)`: `[0]`, the recovery
    /// callback runs once, after the last attempt). Empty: every lambda argument.
    #[serde(default)]
    pub lambda_args: Vec<usize>,
    /// For the `lambda-arg` form: the 0-based parameters of the per-attempt lambda that
    /// receive one object for the whole operation, passed to every attempt (Spring
    /// Retry's `RetryContext`, which its README calls an attribute bag for the duration of
    /// the retries): a value one attempt stores in it is there for the next.
    #[serde(default)]
    pub context_params: Vec<usize>,
    /// For a redelivered handler (`flavor = "redelivery"`): the calls that acknowledge
    /// (settle) a message so that it is not delivered again (`ack`, `basicAck`), by exact
    /// name. One before the key is sent, or in a `finally`, means no redelivery; a failure
    /// a `catch` handles without one leaves the message to come back
    /// (`rules::redelivery_handled`). For the `receive-loop` form, empty means any call
    /// whose name contains `delete` (Amazon SQS `deleteMessage`, or a helper named for it).
    #[serde(default)]
    pub settle_calls: Vec<String>,
    /// For a redelivered handler: texts (compared with whitespace removed) that, in the
    /// matched call's chain or arguments, make the consumer settle each message as it is
    /// delivered, so none is delivered again (lapin's `no_ack: true`, Azure Service Bus's
    /// `RECEIVE_AND_DELETE`): such a call is no boundary
    /// ([`crate::classify::settles_on_delivery`] says where it looks).
    #[serde(default)]
    pub settled_on_delivery: Vec<String>,
    /// For the `lambda-arg` form of an executor built from policies (Failsafe): the calls
    /// that add policies to it (`with`, `compose`) along the boundary call's receiver
    /// chain. With [`Self::non_retry_policies`], a call whose chain starts at such a call
    /// on `Failsafe` and all of whose policy arguments are surely of those types is no
    /// boundary.
    #[serde(default)]
    pub policy_calls: Vec<String>,
    /// Policy types (simple names) that never run the executed code again (Failsafe's
    /// `CircuitBreaker`, `Fallback`, `Timeout`, `RateLimiter`, `Bulkhead`: only a
    /// `RetryPolicy` re-executes, failsafe.dev "Retry"). An argument is surely one when it
    /// is built in place (`CircuitBreaker.ofDefaults()`, `new Fallback<>(..)`,
    /// `Timeout.of(..)`) or names a variable every declaration of which in the file has
    /// such a type or initialiser; anything else may be a `RetryPolicy`.
    #[serde(default)]
    pub non_retry_policies: Vec<String>,
    /// Calls along the chain, after its first link, that only say where the executor runs
    /// (Failsafe's `FailsafeExecutor.with(ScheduledExecutorService | Executor |
    /// Scheduler)`, failsafe.dev "Async Execution"): no policy, whatever their argument.
    /// The chain's first link (`Failsafe.with(..)`) is a policy call all the same.
    #[serde(default)]
    pub executor_calls: Vec<String>,
    /// The entry comes from a user's configuration: its `label` is added to the finding's
    /// description of the boundary when that does not already say it.
    #[serde(skip)]
    pub user: bool,
    /// `label` was not written: it is the default [`boundary_defaults`] filled in.
    #[serde(skip)]
    pub label_default: bool,
    #[serde(flatten)]
    pub call: CallMatch,
}

impl BoundaryEntry {
    /// Whether the lambda at 0-based argument position `arg` of a matching `lambda-arg`
    /// call runs per attempt ([`Self::lambda_args`]; every position when it is empty).
    /// The entry recognises a team's own helper by its name alone (`callee_glob` such as
    /// `withRetry*`, no exact callee, receiver or import): where the project declares that
    /// helper, its body says better how it re-runs the lambda
    /// ([`crate::index::apply_inferred_boundaries`]).
    pub fn matches_by_name_only(&self) -> bool {
        !self.call.callee_glob.is_empty()
            && self.call.callee.is_empty()
            && self.call.receiver.is_empty()
            && self.call.receiver_contains.is_empty()
            && self.call.receiver_not.is_empty()
            && self.imports.is_empty()
    }

    pub fn runs_lambda_at(&self, arg: usize) -> bool {
        self.lambda_args.is_empty() || self.lambda_args.contains(&arg)
    }
}

/// Where interceptors / middlewares are registered, to learn their stage and order.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistrationEntry {
    /// `application`, `network`, `middleware`, `initialiser`.
    pub stage: String,
    /// Registered types that retry everything registered after them.
    #[serde(default)]
    pub retrying_types: Vec<String>,
    #[serde(flatten)]
    pub call: CallMatch,
}

#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LockForm {
    Sql,
    Call,
    Annotation,
}

/// A distributed lock or claim.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockEntry {
    pub form: LockForm,
    pub label: String,
    /// `sql`: the lower-cased string literal contains one of these.
    #[serde(default)]
    pub contains: Vec<String>,
    /// `sql`: the lower-cased string literal contains all of these.
    #[serde(default)]
    pub contains_all: Vec<String>,
    #[serde(default)]
    pub annotations: Vec<String>,
    /// `annotation`: counts only where the project enables ShedLock.
    #[serde(default)]
    pub requires_shedlock: bool,
    #[serde(flatten)]
    pub call: CallMatch,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShedLock {
    #[serde(default)]
    pub enable_annotations: Vec<String>,
    #[serde(default)]
    pub provider_suffix: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HeaderParam {
    /// Parameter annotations whose first argument names an HTTP header
    /// (`@Header("Idempotency-Key")`): a key parameter when the header is a key header.
    #[serde(default)]
    pub annotations: Vec<String>,
    /// Parameter annotations whose first argument names a URL path template variable
    /// (`@Path("txnId")`).
    #[serde(default)]
    pub path_annotations: Vec<String>,
    /// Method annotations of the HTTP methods whose client-chosen path variable is a
    /// deduplication key (`PUT`).
    #[serde(default)]
    pub path_methods: Vec<String>,
    /// Path variable names (compared normalised, see [`normalize_name`]) that carry a
    /// client-chosen transaction id the server deduplicates by (`txnId`).
    #[serde(default)]
    pub path_names: Vec<String>,
}

impl HeaderParam {
    /// Whether a parameter with `param_annotations`, of a function annotated with
    /// `fn_annotations`, carries a key: a key header, or a transaction-id path variable of
    /// an HTTP method listed in `path_methods`.
    pub fn is_key_param(
        &self,
        cat: &Catalogue,
        fn_annotations: &[crate::model::Annotation],
        param_annotations: &[crate::model::Annotation],
    ) -> bool {
        // A header named by a literal (`@Header("Idempotency-Key")`, `value = ..` in any
        // position) or by a constant named for a key (`@RequestHeader(Headers.IDEMPOTENCY_KEY)`).
        let names_key_header = |h: &String| {
            cat.is_key_header(h)
                || (h
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
                    && cat.is_key_name(h.rsplit('.').next().unwrap_or(h)))
        };
        param_annotations.iter().any(|a| {
            let arg = a.args.first();
            (self.annotations.contains(&a.name) && a.args.iter().any(names_key_header))
                || (self.path_annotations.contains(&a.name)
                    && arg.is_some_and(|v| {
                        let v = normalize_name(v);
                        self.path_names.iter().any(|n| normalize_name(n) == v)
                    })
                    && fn_annotations
                        .iter()
                        .any(|f| self.path_methods.contains(&f.name)))
        })
    }
}

/// A call matcher with no other fields (memoizers, stable derivations).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlainCall {
    #[serde(flatten)]
    pub call: CallMatch,
}

/// One TOML file of the catalogue. Every table is optional.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogueFile {
    #[serde(default)]
    pub keys: Option<Keys>,
    #[serde(default)]
    pub source: Vec<SourceEntry>,
    #[serde(default)]
    pub header_setter: Vec<HeaderSetter>,
    #[serde(default)]
    pub header_reader: Vec<HeaderReader>,
    #[serde(default)]
    pub call_sink: Vec<CallSink>,
    #[serde(default)]
    pub minting_call: Vec<MintingCall>,
    #[serde(default)]
    pub boundary: Vec<BoundaryEntry>,
    #[serde(default)]
    pub registration: Vec<RegistrationEntry>,
    #[serde(default)]
    pub lock: Vec<LockEntry>,
    #[serde(default)]
    pub shedlock: Option<ShedLock>,
    #[serde(default)]
    pub header_param: Option<HeaderParam>,
    #[serde(default)]
    pub memoizer: Vec<PlainCall>,
    #[serde(default)]
    pub stable: Vec<PlainCall>,
}

/// Which entries of a list of [`CallMatch`]es can match a call of a given callee name:
/// those naming it among their exact `callee`s, and every entry with a glob or no callee
/// condition. Built for a list of a given length ([`CalleeIndex::built_for`]); a list
/// changed since is scanned whole instead.
#[derive(Clone, Debug, Default)]
pub struct CalleeIndex {
    built_for: usize,
    exact: foldhash::HashMap<String, Vec<u32>>,
    other: Vec<u32>,
}

impl CalleeIndex {
    /// The index of `entries`, in their order.
    pub fn of<'a>(entries: impl Iterator<Item = &'a CallMatch>) -> CalleeIndex {
        let mut ix = CalleeIndex::default();
        for (i, m) in entries.enumerate() {
            ix.built_for = i + 1;
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            if m.is_unconstrained_callee() || !m.callee_glob.is_empty() {
                ix.other.push(i);
            }
            for c in &m.callee {
                let at = ix.exact.entry(c.clone()).or_default();
                if at.last() != Some(&i) {
                    at.push(i);
                }
            }
        }
        ix
    }

    /// The first position, in the list's order, of an entry that may match a call of
    /// `callee` and that `fits`; `None` when the index was built for a list of another
    /// length than `len` (the caller scans the list instead).
    pub fn first(
        &self,
        callee: &str,
        len: usize,
        mut fits: impl FnMut(usize) -> bool,
    ) -> Option<Option<usize>> {
        if len != self.built_for {
            return None;
        }
        let exact = self.exact.get(callee).map_or(&[][..], Vec::as_slice);
        let (mut a, mut b) = (exact.iter().peekable(), self.other.iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x == y => {
                    b.next();
                    a.next()
                }
                (Some(x), Some(y)) if x < y => a.next(),
                (_, Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, None) => return Some(None),
            };
            if let Some(&i) = next
                && fits(i as usize)
            {
                return Some(Some(i as usize));
            }
        }
    }
}

/// The merged catalogue.
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    /// [`Catalogue::sources`] by callee name, built on first use (every call of every
    /// file is matched against the sources).
    source_index: std::sync::OnceLock<CalleeIndex>,
    pub keys: Keys,
    pub sources: Vec<SourceEntry>,
    pub header_setters: Vec<HeaderSetter>,
    pub header_readers: Vec<HeaderReader>,
    pub call_sinks: Vec<CallSink>,
    pub minting_calls: Vec<MintingCall>,
    pub boundaries: Vec<BoundaryEntry>,
    pub registrations: Vec<RegistrationEntry>,
    pub locks: Vec<LockEntry>,
    pub shedlock: ShedLock,
    pub header_param: HeaderParam,
    pub memoizers: Vec<PlainCall>,
    pub stable: Vec<PlainCall>,
}

/// A catalogue file that does not parse: the file name, the message, the byte span
/// inside the TOML text when known, and a hint ("did you mean `callee`?", the keys the
/// table accepts).
#[derive(Clone, Debug)]
pub struct CatalogueError {
    pub file: String,
    pub message: String,
    /// Byte range in the text the table was parsed from.
    pub span: Option<std::ops::Range<usize>>,
    pub help: Option<String>,
}

impl CatalogueError {
    fn at(file: &str, span: std::ops::Range<usize>, message: String, help: Option<String>) -> Self {
        CatalogueError {
            file: file.to_string(),
            message,
            span: Some(span),
            help,
        }
    }

    /// Wraps a `toml` parse or deserialisation error, keeping its span.
    pub fn from_toml(file: &str, e: &toml::de::Error) -> Self {
        CatalogueError {
            file: file.to_string(),
            message: e.message().trim_end().to_string(),
            span: e.span(),
            help: None,
        }
    }
}

/// Keys every call matcher accepts: the fields of [`CallMatch`].
pub const CALL_KEYS: &[&str] = &[
    "langs",
    "callee",
    "callee_glob",
    "receiver",
    "receiver_contains",
    "receiver_not",
    "free",
    "new",
    "max_args",
    "min_args",
];

/// The languages `langs` accepts.
pub const LANGS: &[&str] = &["rust", "java", "kotlin"];

/// How a catalogue table is written.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// `[name]`, one table with these keys.
    Table(&'static [&'static str]),
    /// `[[name]]`, a list of entries with these keys plus [`CALL_KEYS`].
    Entries(&'static [&'static str]),
}

/// Every table of a catalogue file and its keys; kept equal to the fields of
/// [`CatalogueFile`] and its entry structs (`catalogue::tests::key_lists_match_the_structs`).
const TABLES: &[(&str, Shape)] = &[
    (
        "keys",
        Shape::Table(&["normalized_names", "header_names", "typed_fields"]),
    ),
    ("source", Shape::Entries(&["kind", "display", "by_name"])),
    ("header_setter", Shape::Entries(&["name_arg", "value_arg"])),
    ("header_reader", Shape::Entries(&[])),
    ("call_sink", Shape::Entries(&["value_arg", "label"])),
    (
        "minting_call",
        Shape::Entries(&["label", "source", "packages"]),
    ),
    (
        "boundary",
        Shape::Entries(&[
            "id",
            "kind",
            "form",
            "flavor",
            "label",
            "supertypes",
            "methods",
            "param_types",
            "body_calls",
            "annotations",
            "exclude_return_types",
            "on_type",
            "on_interface",
            "requires_nonlocal_return",
            "inert_with",
            "async_return_types",
            "return_type_contains",
            "imports",
            "lambda_args",
            "context_params",
            "policy_calls",
            "non_retry_policies",
            "executor_calls",
            "settle_calls",
            "settled_on_delivery",
        ]),
    ),
    ("registration", Shape::Entries(&["stage", "retrying_types"])),
    (
        "lock",
        Shape::Entries(&[
            "form",
            "label",
            "contains",
            "contains_all",
            "annotations",
            "requires_shedlock",
        ]),
    ),
    (
        "shedlock",
        Shape::Table(&["enable_annotations", "provider_suffix"]),
    ),
    (
        "header_param",
        Shape::Table(&[
            "annotations",
            "path_annotations",
            "path_methods",
            "path_names",
        ]),
    ),
    ("memoizer", Shape::Entries(&[])),
    ("stable", Shape::Entries(&[])),
];

/// Every table with its own keys (`("boundary", ["id", "kind", ..])`); entry tables
/// (`[[..]]`) also take [`CALL_KEYS`]. For documentation checks.
pub fn table_keys() -> Vec<(&'static str, &'static [&'static str])> {
    TABLES
        .iter()
        .map(|(n, s)| match s {
            Shape::Table(k) | Shape::Entries(k) => (*n, *k),
        })
        .collect()
}

/// The names of the top-level tables a catalogue file may hold (`source`, `boundary`, ...).
pub fn table_names() -> Vec<&'static str> {
    TABLES.iter().map(|(n, _)| *n).collect()
}

fn unknown_key_help(key: &str, known: &[&str], what: &str) -> String {
    match crate::text::did_you_mean(key, known) {
        Some(s) => format!("did you mean `{s}`? {what}: {}", known.join(", ")),
        None => format!("{what}: {}", known.join(", ")),
    }
}

/// Checks the keys of a parsed catalogue table (a whole `rules/*.toml` file, or the
/// catalogue tables of a configuration) before deserialisation: unknown tables and keys,
/// the shape of each table, and the values of the [`CALL_KEYS`] (lists of strings,
/// booleans, known `langs`). Errors carry the byte span of the offending key or value in
/// the text the table was parsed from, and a help line.
pub fn validate(file: &str, table: &DeTable<'_>) -> Result<(), CatalogueError> {
    let names = table_names();
    for (key, value) in table.iter() {
        let name: &str = key.get_ref();
        let Some((_, shape)) = TABLES.iter().find(|(n, _)| *n == name) else {
            return Err(CatalogueError::at(
                file,
                key.span(),
                format!("unknown catalogue table `{name}`"),
                Some(unknown_key_help(name, &names, "catalogue tables")),
            ));
        };
        match shape {
            Shape::Table(keys) => {
                let Some(t) = value.get_ref().as_table() else {
                    return Err(CatalogueError::at(
                        file,
                        value.span(),
                        format!("`{name}` must be a table"),
                        Some(format!("write `[{name}]` followed by its keys")),
                    ));
                };
                check_keys(file, &format!("[{name}]"), t, keys, false)?;
            }
            Shape::Entries(keys) => {
                let Some(items) = value.get_ref().as_array() else {
                    return Err(CatalogueError::at(
                        file,
                        value.span(),
                        format!("`{name}` must be a list of entries"),
                        Some(format!("write each entry as a `[[{name}]]` table")),
                    ));
                };
                for item in items.iter() {
                    let Some(t) = item.get_ref().as_table() else {
                        return Err(CatalogueError::at(
                            file,
                            item.span(),
                            format!("each `{name}` entry must be a table"),
                            Some(format!("write each entry as a `[[{name}]]` table")),
                        ));
                    };
                    check_keys(file, &format!("[[{name}]]"), t, keys, true)?;
                }
            }
        }
    }
    Ok(())
}

fn check_keys(
    file: &str,
    table: &str,
    t: &DeTable<'_>,
    own: &[&'static str],
    call: bool,
) -> Result<(), CatalogueError> {
    for (k, v) in t.iter() {
        let key: &str = k.get_ref();
        if own.contains(&key) {
            continue; // serde checks the value against the field's type, with its span
        }
        if call && CALL_KEYS.contains(&key) {
            check_call_value(file, key, v)?;
            continue;
        }
        let mut known: Vec<&str> = own.to_vec();
        if call {
            known.extend_from_slice(CALL_KEYS);
        }
        return Err(CatalogueError::at(
            file,
            k.span(),
            format!("unknown key `{key}` in a `{table}` table"),
            Some(unknown_key_help(key, &known, &format!("keys of `{table}`"))),
        ));
    }
    Ok(())
}

/// The value of a [`CALL_KEYS`] key: `free`/`new` are booleans, `max_args` a
/// non-negative integer, the others lists of strings; `langs` entries must be known
/// languages.
fn check_call_value(file: &str, key: &str, v: &Spanned<DeValue<'_>>) -> Result<(), CatalogueError> {
    if key == "max_args" || key == "min_args" {
        let ok = matches!(v.get_ref(), DeValue::Integer(i) if !i.as_str().starts_with('-'));
        if !ok {
            return Err(CatalogueError::at(
                file,
                v.span(),
                format!("`{key}` must be a non-negative integer"),
                None,
            ));
        }
        return Ok(());
    }
    if matches!(key, "free" | "new") {
        if v.get_ref().as_bool().is_none() {
            return Err(CatalogueError::at(
                file,
                v.span(),
                format!("`{key}` must be `true` or `false`"),
                None,
            ));
        }
        return Ok(());
    }
    let list_help = Some(format!(
        "write a list of strings: `{key} = [\"withBackoff\"]`"
    ));
    let Some(items) = v.get_ref().as_array() else {
        return Err(CatalogueError::at(
            file,
            v.span(),
            format!("`{key}` must be a list of strings"),
            list_help,
        ));
    };
    for item in items.iter() {
        let Some(text) = item.get_ref().as_str() else {
            return Err(CatalogueError::at(
                file,
                item.span(),
                format!("`{key}` must be a list of strings"),
                list_help,
            ));
        };
        if key == "langs" && !LANGS.contains(&text) {
            return Err(CatalogueError::at(
                file,
                item.span(),
                format!("unknown language `{text}`"),
                Some(unknown_key_help(text, LANGS, "languages")),
            ));
        }
    }
    Ok(())
}

/// Validates ([`validate`]) and deserialises one parsed catalogue table. Spans in errors
/// are byte offsets into the text `table` was parsed from.
pub fn parse_table(
    file: &str,
    mut table: Spanned<DeTable<'_>>,
) -> Result<CatalogueFile, CatalogueError> {
    validate(file, table.get_ref())?;
    let defaulted = boundary_defaults(file, table.get_mut())?;
    let mut f = CatalogueFile::deserialize(toml::de::Deserializer::from(table))
        .map_err(|e| CatalogueError::from_toml(file, &e))?;
    for (b, d) in f.boundary.iter_mut().zip(defaulted) {
        b.label_default = d;
    }
    Ok(f)
}

/// Fills the fields of `[[boundary]]` entries that follow from the others, so a team's
/// retry helper takes two lines (`[[boundary]]`, `callee = ["withBackoff"]`):
///
/// - `form`: `lambda-arg` with a `callee`/`callee_glob`, `annotated-function` with
///   `annotations`, `method-of-type` with `supertypes`;
/// - `kind`: `retry`; `flavor`: the kind's name;
/// - `id`: `user.` and the first callee, annotation or supertype;
/// - `label`: that name as the finding shows it (`` `withBackoff` ``, `` `@Retry` ``).
///
/// Every field that is missing and has no default is reported at once, in one error at the
/// entry. Errors: an entry with no `form` and nothing it follows from; a `lambda-arg` /
/// `receiver-lambda` entry with no callee (it would make every lambda a boundary); an
/// `annotated-function` entry with no `annotations`; a `method-of-type` entry without
/// `supertypes` or `methods`; a `returned-lambda` entry without `supertypes`.
fn boundary_defaults(file: &str, table: &mut DeTable<'_>) -> Result<Vec<bool>, CatalogueError> {
    use std::borrow::Cow;
    let mut defaulted = Vec::new();
    let Some((_, v)) = table.iter_mut().find(|(k, _)| k.get_ref() == "boundary") else {
        return Ok(defaulted);
    };
    let DeValue::Array(items) = v.get_mut() else {
        return Ok(defaulted);
    };
    for item in items.iter_mut() {
        let span = item.span();
        let DeValue::Table(t) = item.get_mut() else {
            continue;
        };
        let text = |k: &str| -> Option<String> {
            t.iter()
                .find(|(n, _)| n.get_ref() == k)
                .and_then(|(_, v)| v.get_ref().as_str().map(str::to_string))
        };
        let list = |k: &str| -> Vec<String> {
            t.iter()
                .find(|(n, _)| n.get_ref() == k)
                .and_then(|(_, v)| v.get_ref().as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.get_ref().as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let callees: Vec<String> = list("callee")
            .into_iter()
            .chain(list("callee_glob"))
            .collect();
        let annotations = list("annotations");
        let supertypes = list("supertypes");
        let methods = list("methods");
        let form = text("form").or_else(|| {
            if !callees.is_empty() {
                Some("lambda-arg".into())
            } else if !annotations.is_empty() {
                Some("annotated-function".into())
            } else if !supertypes.is_empty() {
                Some("method-of-type".into())
            } else {
                None
            }
        });
        let mut missing: Vec<&str> = Vec::new();
        match form.as_deref() {
            None => missing
                .push("`form` (or a `callee`, `annotations` or `supertypes` it follows from)"),
            Some("lambda-arg" | "receiver-lambda" | "receive-loop") if callees.is_empty() => {
                missing.push(
                    "`callee` or `callee_glob` (without one every lambda would be a boundary)",
                )
            }
            Some("annotated-function") if annotations.is_empty() => missing.push("`annotations`"),
            Some("method-of-type") => {
                if supertypes.is_empty() {
                    missing.push("`supertypes`");
                }
                if methods.is_empty() {
                    missing.push("`methods`");
                }
            }
            Some("returned-lambda") if supertypes.is_empty() => missing.push("`supertypes`"),
            _ => {}
        }
        if !missing.is_empty() {
            return Err(CatalogueError::at(
                file,
                span,
                format!("a `[[boundary]]` entry is missing {}", missing.join(", ")),
                Some(
                    "a team's retry helper needs only `callee = [\"withBackoff\"]`; the fields are \
                     documented in docs/catalogue.md"
                        .into(),
                ),
            ));
        }
        let form = form.unwrap_or_default();
        let kind = text("kind").unwrap_or_else(|| "retry".into());
        let name = callees
            .first()
            .map(|c| format!("`{c}`"))
            .or_else(|| annotations.first().map(|a| format!("`@{a}`")))
            .or_else(|| {
                supertypes.first().map(|s| match methods.first() {
                    Some(m) => format!("`{s}.{m}()`"),
                    None => format!("`{s}`"),
                })
            })
            .unwrap_or_else(|| "boundary".into());
        let id_name = callees
            .first()
            .or(annotations.first())
            .or(supertypes.first())
            .cloned()
            .unwrap_or_default();
        let present: Vec<String> = t.iter().map(|(n, _)| n.get_ref().to_string()).collect();
        defaulted.push(!present.iter().any(|p| p == "label"));
        let defaults = [
            ("form", form),
            ("flavor", kind.clone()),
            ("kind", kind),
            ("id", format!("user.{id_name}")),
            ("label", name),
        ];
        for (k, value) in defaults {
            if !present.iter().any(|p| p == k) {
                t.insert(
                    Spanned::new(span.clone(), Cow::Borrowed(k)),
                    Spanned::new(span.clone(), DeValue::String(Cow::Owned(value))),
                );
            }
        }
    }
    Ok(defaulted)
}

impl std::fmt::Display for CatalogueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.file, self.message)
    }
}

impl Catalogue {
    /// The built-in catalogue. The built-in files are tested to parse, so this cannot fail
    /// at run time; should it ever, the broken file is skipped and reported on stderr.
    pub fn builtin() -> Catalogue {
        let mut c = Catalogue::default();
        for (name, text) in BUILTIN {
            if let Err(e) = c.merge_toml(name, text) {
                eprintln!("idemlint: built-in catalogue {e}");
            }
        }
        c
    }

    /// Parses one catalogue file and appends its entries. `[keys]` lists are extended.
    /// Errors: TOML syntax, unknown tables or keys, wrong value types (see [`validate`]).
    pub fn merge_toml(&mut self, file: &str, text: &str) -> Result<(), CatalogueError> {
        let table = DeTable::parse(text).map_err(|e| CatalogueError::from_toml(file, &e))?;
        let parsed = parse_table(file, table)?;
        self.merge(parsed);
        Ok(())
    }

    /// Appends a parsed file's entries.
    pub fn merge(&mut self, f: CatalogueFile) {
        if let Some(k) = f.keys {
            self.keys.normalized_names.extend(k.normalized_names);
            self.keys
                .typed_fields
                .extend(k.typed_fields.into_iter().map(|mut t| {
                    for n in &mut t.names {
                        *n = normalize_name(n);
                    }
                    t
                }));
            self.keys
                .header_names
                .extend(k.header_names.into_iter().map(|h| h.to_ascii_lowercase()));
        }
        self.sources.extend(f.source);
        self.source_index = std::sync::OnceLock::new();
        self.header_setters.extend(f.header_setter);
        self.header_readers.extend(f.header_reader);
        self.call_sinks.extend(f.call_sink);
        self.minting_calls.extend(f.minting_call);
        self.boundaries.extend(f.boundary);
        self.registrations.extend(f.registration);
        self.locks.extend(f.lock);
        if let Some(s) = f.shedlock {
            self.shedlock
                .enable_annotations
                .extend(s.enable_annotations);
            if !s.provider_suffix.is_empty() {
                self.shedlock.provider_suffix = s.provider_suffix;
            }
        }
        if let Some(h) = f.header_param {
            self.header_param.annotations.extend(h.annotations);
            self.header_param
                .path_annotations
                .extend(h.path_annotations);
            self.header_param.path_methods.extend(h.path_methods);
            self.header_param.path_names.extend(h.path_names);
        }
        self.memoizers.extend(f.memoizer);
        self.stable.extend(f.stable);
    }

    /// The source a call is, if any: its kind and how messages name it.
    pub fn match_source(&self, lang: Language, call: &Call) -> Option<(SourceKind, String)> {
        self.match_source_entry(lang, call, true)
    }

    /// [`Catalogue::match_source`], optionally skipping `by_name` entries.
    pub fn match_source_entry(
        &self,
        lang: Language,
        call: &Call,
        by_name: bool,
    ) -> Option<(SourceKind, String)> {
        self.match_source_entry_named(lang, call, by_name)
            .map(|(k, d, _)| (k, d))
    }

    /// [`Self::match_source_entry`], and whether the entry that matched is a `by_name` one.
    pub fn match_source_entry_named(
        &self,
        lang: Language,
        call: &Call,
        by_name: bool,
    ) -> Option<(SourceKind, String, bool)> {
        let fits = |s: &&SourceEntry| (by_name || !s.by_name) && s.call.matches_by_text(lang, call);
        let index = self
            .source_index
            .get_or_init(|| CalleeIndex::of(self.sources.iter().map(|s| &s.call)));
        let entry = match index.first(&call.callee, self.sources.len(), |i| {
            fits(&&self.sources[i])
        }) {
            Some(at) => at.map(|i| &self.sources[i]),
            None => self.sources.iter().find(fits),
        }?;
        let display = entry.display.clone().unwrap_or_else(|| {
            let sep = if lang == Language::Rust { "::" } else { "." };
            match receiver_text(call) {
                Some(r) if call.receiver.is_none() || r.len() <= 40 => {
                    let r = if lang == Language::Rust {
                        r.rsplit("::").next().unwrap_or(&r).to_string()
                    } else {
                        r.into_owned()
                    };
                    let sep = if call.receiver.is_some() && lang == Language::Rust {
                        "."
                    } else {
                        sep
                    };
                    format!("{r}{sep}{}()", call.callee)
                }
                _ => format!("{}()", call.callee),
            }
        });
        Some((entry.kind.into(), display, entry.by_name))
    }

    /// True when `name` says "idempotency key" (`idempotencyKey`, `IDEMPOTENCY_KEY`, ...).
    pub fn is_key_name(&self, name: &str) -> bool {
        // The flows ask this of every builder call they pass: an ASCII name is normalised
        // on the stack (`char::to_lowercase` of an ASCII letter is its ASCII lower case).
        const STACK: usize = 128;
        if name.is_ascii() && name.len() <= STACK {
            let mut buf = [0u8; STACK];
            let mut n = 0;
            for &b in name.as_bytes() {
                if b != b'_' && b != b'-' {
                    buf[n] = b.to_ascii_lowercase();
                    n += 1;
                }
            }
            let n = &buf[..n];
            return self
                .keys
                .normalized_names
                .iter()
                .any(|k| memchr::memmem::find(n, k.as_bytes()).is_some());
        }
        let n = normalize_name(name);
        self.keys.normalized_names.iter().any(|k| n.contains(k))
    }

    /// True when a string literal names a key field (`"idempotency_key"`,
    /// `"dedupKey"`): an identifier-like word (letters, digits, `_`, `-`, `.`; at most
    /// 64 bytes) that says idempotency key. A sentence or a format string that mentions
    /// one (`"incident triggered: dedup_key={}"`) names nothing.
    pub fn is_key_field_literal(&self, literal: &str) -> bool {
        let l = literal.trim();
        !l.is_empty()
            && l.len() <= 64
            && l.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
            && self.is_key_name(l)
    }

    /// True when a header name (a literal) is an idempotency-key header: one of
    /// `[keys] header_names` (ASCII case-insensitively), or a dashed name whose normalised
    /// form contains a key name (`Cko-Idempotency-Key`, `X-Idempotency-Key`). Body fields
    /// (`idempotency_key`) have no dash and are not headers.
    pub fn is_key_header(&self, header: &str) -> bool {
        let h = header.trim().to_ascii_lowercase();
        if self.keys.header_names.contains(&h) {
            return true;
        }
        h.contains('-') && !h.contains(char::is_whitespace) && h.len() <= 64 && self.is_key_name(&h)
    }

    /// The label of a typed key field a setter call writes, when `setter` (the callee with
    /// its `set`/`with` prefix removed, normalised) is one of a `typed_fields` entry's
    /// names and the call's receiver is one of its types.
    pub fn typed_key_field(&self, setter: &str, call: &Call) -> Option<String> {
        // `ty` as a whole word of the receiver text.
        let names = |r: &str, ty: &str| {
            r.match_indices(ty).any(|(i, _)| {
                let before = r[..i].chars().next_back();
                let after = r[i + ty.len()..].chars().next();
                !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            })
        };
        let ty = self
            .keys
            .typed_fields
            .iter()
            .filter(|t| t.names.iter().any(|n| n == setter))
            .flat_map(|t| &t.types)
            .find(|ty| {
                call.receiver_type_name() == Some(ty.as_str())
                    || call.receiver.as_deref().is_some_and(|r| names(r, ty))
            })?;
        Some(format!("`{}` of `{ty}`", call.callee))
    }

    /// True when `field` (normalised, see [`normalize_name`]) is a typed key field of the
    /// type named `ty` (simple name): a struct literal `CreateEventInput { transaction_id:
    /// v, .. }` or a named constructor argument `CreateEventInput(transactionId = v)`.
    pub fn is_typed_key_field_of(&self, field: &str, ty: &str) -> bool {
        self.keys
            .typed_fields
            .iter()
            .any(|t| t.names.iter().any(|n| n == field) && t.types.iter().any(|x| x == ty))
    }

    pub fn is_memoizer(&self, lang: Language, call: &Call) -> bool {
        self.memoizers.iter().any(|m| m.call.matches(lang, call))
    }

    pub fn is_stable(&self, lang: Language, call: &Call) -> bool {
        self.stable.iter().any(|m| m.call.matches(lang, call))
    }

    /// The names of every rule-relevant word, for a literal prefilter: callees and
    /// receivers of sources, sinks and boundaries, key names and header names.
    pub fn words(&self) -> Vec<String> {
        let mut w: Vec<String> = Vec::new();
        for s in &self.sources {
            w.extend(s.call.callee.iter().cloned());
        }
        w.extend(self.keys.header_names.iter().cloned());
        w.extend(self.header_param.path_names.iter().cloned());
        w.extend(
            self.keys
                .typed_fields
                .iter()
                .flat_map(|t| t.types.iter().cloned()),
        );
        w.push("idempotency".into());
        w.push("Idempotency".into());
        w.push("IDEMPOTENCY".into());
        w.push("idempotence".into());
        w.push("Idempotence".into());
        w.push("IDEMPOTENCE".into());
        w.sort();
        w.dedup();
        w
    }
}

/// Lower-cases and drops `_` and `-`: `IDEMPOTENCY_KEY` → `idempotencykey`.
pub fn normalize_name(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(|c| c.to_lowercase())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The source a call is, found by scanning every entry (what the callee index must
    /// agree with).
    fn scanned(c: &Catalogue, lang: Language, call: &Call, by_name: bool) -> Option<usize> {
        c.sources
            .iter()
            .position(|s| (by_name || !s.by_name) && s.call.matches_by_text(lang, call))
    }

    #[test]
    fn the_source_index_finds_the_entry_a_scan_finds() {
        let c = Catalogue::builtin();
        let mut callees: Vec<String> = c
            .sources
            .iter()
            .flat_map(|s| s.call.callee.iter().cloned())
            .collect();
        callees.extend(
            [
                "generateIdempotencyKey",
                "mintIdempotencyToken",
                "randomUUID2",
                "save",
                "",
            ]
            .map(String::from),
        );
        let receivers = [
            None,
            Some("UUID"),
            Some("Uuid"),
            Some("System"),
            Some("keyGen"),
        ];
        let mut found = 0;
        for lang in [Language::Java, Language::Kotlin, Language::Rust] {
            for callee in &callees {
                for receiver in receivers {
                    for is_new in [false, true] {
                        let call = Call {
                            callee: callee.clone(),
                            receiver: receiver.map(String::from),
                            is_new,
                            ..Call::default()
                        };
                        for by_name in [false, true] {
                            let want = scanned(&c, lang, &call, by_name);
                            let got = c
                                .match_source_entry_named(lang, &call, by_name)
                                .map(|(k, _, named)| (k, named));
                            let want_entry = want.map(|i| {
                                (SourceKind::from(c.sources[i].kind), c.sources[i].by_name)
                            });
                            assert_eq!(got, want_entry, "{lang:?} {call:?} by_name={by_name}");
                            found += usize::from(want.is_some());
                        }
                    }
                }
            }
        }
        // The calls above do hit entries (exact callees and the by-name globs).
        assert!(found > 50, "{found}");
        // A catalogue grown after its first match is matched against every entry.
        let mut grown = c.clone();
        let call = Call {
            callee: "tick".into(),
            receiver: Some("Clock".into()),
            ..Call::default()
        };
        assert!(grown.match_source(Language::Java, &call).is_none());
        grown
            .merge_toml(
                "extra.toml",
                "[[source]]\nkind = \"clock\"\ncallee = [\"tick\"]\nreceiver = [\"Clock\"]\n",
            )
            .unwrap();
        assert!(grown.match_source(Language::Java, &call).is_some());
        grown.sources.push(grown.sources[0].clone());
        assert_eq!(
            grown.match_source(Language::Java, &call).is_some(),
            scanned(&grown, Language::Java, &call, true).is_some()
        );
    }

    fn one_boundary(text: &str) -> Result<BoundaryEntry, CatalogueError> {
        let mut c = Catalogue::default();
        c.merge_toml("t.toml", text)?;
        assert_eq!(c.boundaries.len(), 1);
        Ok(c.boundaries.pop().unwrap())
    }

    #[test]
    fn boundary_fields_follow_from_the_others() {
        let b = one_boundary("[[boundary]]\ncallee = [\"withBackoff\"]\n").unwrap();
        assert_eq!(b.form, BoundaryForm::LambdaArg);
        assert_eq!(b.kind, BoundaryKind::Retry);
        assert_eq!(b.flavor, "retry");
        assert_eq!(b.id, "user.withBackoff");
        assert_eq!(b.label, "`withBackoff`");
        assert!(b.label_default);
        let b = one_boundary("[[boundary]]\nannotations = [\"TeamRetry\"]\nkind = \"callback\"\n")
            .unwrap();
        assert_eq!(b.form, BoundaryForm::AnnotatedFunction);
        assert_eq!(b.kind, BoundaryKind::Callback);
        assert_eq!(b.flavor, "callback");
        assert_eq!(b.label, "`@TeamRetry`");
        let b = one_boundary(
            "[[boundary]]\nsupertypes = [\"Hook\"]\nmethods = [\"before\"]\nlabel = \"hooks\"\nid = \"x\"\n",
        )
        .unwrap();
        assert_eq!(b.form, BoundaryForm::MethodOfType);
        assert_eq!((b.id.as_str(), b.label.as_str()), ("x", "hooks"));
        assert!(!b.label_default);
    }

    #[test]
    fn missing_boundary_fields_are_reported_together() {
        let e = one_boundary("[[boundary]]\nform = \"method-of-type\"\n").unwrap_err();
        assert!(
            e.message.contains("`supertypes`, `methods`"),
            "{}",
            e.message
        );
        assert_eq!(e.span, Some(0..12));
        let e = one_boundary("[[boundary]]\nkind = \"retry\"\n").unwrap_err();
        assert!(e.message.contains("missing `form`"), "{}", e.message);
        let e = one_boundary("[[boundary]]\nform = \"lambda-arg\"\n").unwrap_err();
        assert!(
            e.message.contains("`callee` or `callee_glob`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn builtin_files_parse() {
        for (name, text) in BUILTIN {
            let mut c = Catalogue::default();
            c.merge_toml(name, text)
                .unwrap_or_else(|e| panic!("{name} does not parse: {e}"));
        }
        let c = Catalogue::builtin();
        assert!(c.sources.len() > 10);
        assert!(c.boundaries.len() > 15);
        assert!(c.is_key_header("Idempotency-Key"));
        assert!(c.is_key_header("x-idempotency-key"));
        assert!(!c.is_key_header("X-Request-Id"));
        assert!(c.is_key_name("IDEMPOTENCY_KEY"));
        assert!(c.is_key_name("idempotencyKey"));
        assert!(!c.is_key_name("requestId"));
    }

    /// The stack-normalised fast path of `is_key_name` answers as normalising with
    /// `normalize_name` does, on names built from pieces of key names, separators, case
    /// changes and non-ASCII letters, and on names longer than the stack buffer.
    #[test]
    fn key_names_on_the_stack_agree_with_normalize_name() {
        let c = Catalogue::builtin();
        let slow = |n: &str| {
            let n = normalize_name(n);
            c.keys
                .normalized_names
                .iter()
                .any(|k| n.contains(k.as_str()))
        };
        let pieces = [
            "idem",
            "Idem",
            "POTENCY",
            "potency",
            "_",
            "-",
            "Key",
            "key",
            "dedup",
            "De",
            "dup",
            "Id",
            "ID",
            "e",
            "İ",
            "K",
            "distinct",
            "Deduplication",
            "x",
            "ß",
            "request",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |m: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % m as u64) as usize
        };
        let (mut yes, mut no) = (0, 0);
        for round in 0..20_000 {
            let len = 1 + next(if round % 50 == 0 { 60 } else { 6 });
            let name: String = (0..len).map(|_| pieces[next(pieces.len())]).collect();
            let want = slow(&name);
            assert_eq!(c.is_key_name(&name), want, "{name:?}");
            if want { yes += 1 } else { no += 1 }
        }
        assert!(yes > 100 && no > 100, "{yes} key names, {no} others");
        let long = format!("{}idempotency_key", "a".repeat(200));
        assert!(c.is_key_name(&long) && slow(&long));
    }

    #[test]
    fn globs() {
        // Against a matcher by regular expression (`*` as `.*`, anchored), on every
        // pattern of the built-in catalogue and some of their edges.
        let mut patterns: Vec<String> = Catalogue::builtin()
            .sources
            .iter()
            .flat_map(|s| s.call.callee_glob.clone())
            .chain(
                Catalogue::builtin()
                    .boundaries
                    .iter()
                    .flat_map(|b| b.call.callee_glob.clone()),
            )
            .collect();
        patterns.extend(["*", "**", "a*a", "*a*a*", "ab", "", "a**b"].map(String::from));
        let texts = [
            "",
            "a",
            "aa",
            "aba",
            "ab",
            "b",
            "retry",
            "retryOnTransient",
            "withRetryPolicy",
            "noretry",
            "send_with_retry",
            "generateIdempotencyKey",
            "newIdempotencyToken",
            "claimLease",
            "tryClaim",
            "acquire_lease_now",
            "Retrying",
            "é*retry",
            "withRetry",
        ];
        let mut matched = 0;
        for p in &patterns {
            let re = p
                .split('*')
                .map(regex::escape)
                .collect::<Vec<_>>()
                .join(".*");
            let re = regex::Regex::new(&format!("^(?s){re}$")).unwrap();
            for t in texts {
                let want = re.is_match(t);
                assert_eq!(glob_match(p, t), want, "{p} {t}");
                matched += usize::from(want);
            }
        }
        assert!(matched > 20, "{matched}");
        assert!(glob_match("retry*", "retryOnTransient"));
        assert!(glob_match("*Retry*", "withRetryPolicy"));
        assert!(!glob_match("*Retry*", "retry"));
        assert!(glob_match("*_retry", "send_with_retry"));
        assert!(!glob_match("retry*", "noretry"));
    }

    #[test]
    fn last_segments() {
        assert_eq!(last_segment("java.util.UUID"), "UUID");
        assert_eq!(last_segment("uuid::Uuid"), "Uuid");
        assert_eq!(last_segment("Clock.systemUTC()"), "systemUTC");
        // A chain: the last call's name, not the first one's.
        assert_eq!(
            last_segment("Event.builder().id(e.getId()).at(Instant.now())"),
            "at"
        );
        assert_eq!(last_segment("f(a(b)).g()"), "g");
    }

    /// The error for `text` and the text its span covers.
    fn error_at(text: &str) -> (CatalogueError, String) {
        let mut c = Catalogue::default();
        let err = c.merge_toml("team.toml", text).unwrap_err();
        let covered = err
            .span
            .clone()
            .map(|s| text[s].to_string())
            .unwrap_or_default();
        (err, covered)
    }

    #[test]
    fn unknown_key_is_an_error_with_span() {
        // A typo in a flattened call key: serde alone would point at `[[source]]`.
        let (err, covered) = error_at("[[source]]\nkind = \"random\"\ncalee = [\"x\"]\n");
        assert!(err.message.contains("calee"), "{}", err.message);
        assert_eq!(covered, "calee");
        assert!(err.help.unwrap().contains("did you mean `callee`?"));
        // A typo in an entry's own field, next to flattened ones.
        let (err, covered) = error_at(
            "[[boundary]]\nid = \"a\"\nkind = \"retry\"\nform = \"lambda-arg\"\nflavour = \"x\"\nlabel = \"l\"\ncallee = [\"withBackoff\"]\n",
        );
        assert_eq!(covered, "flavour", "{}", err.message);
        assert!(err.help.unwrap().contains("did you mean `flavor`?"));
        // Plain entries (only call keys) and single tables.
        let (_, covered) = error_at("[[stable]]\ncallees = [\"deriveKey\"]\n");
        assert_eq!(covered, "callees");
        let (_, covered) = error_at("[keys]\nheader_name = [\"X-Key\"]\n");
        assert_eq!(covered, "header_name");
        let (err, covered) = error_at("[[sourc]]\nkind = \"random\"\n");
        assert_eq!(covered, "sourc");
        assert!(err.help.unwrap().contains("did you mean `source`?"));
    }

    #[test]
    fn wrong_value_types_point_at_the_value() {
        let (err, covered) = error_at("[[stable]]\ncallee = \"deriveKey\"\n");
        assert_eq!(covered, "\"deriveKey\"");
        assert!(err.message.contains("list of strings"), "{}", err.message);
        let (err, covered) = error_at("[[stable]]\nlangs = [\"kotln\"]\ncallee = [\"d\"]\n");
        assert_eq!(covered, "\"kotln\"");
        assert!(err.help.unwrap().contains("did you mean `kotlin`?"));
        let (_, covered) =
            error_at("[[header_setter]]\nname_arg = 0\nvalue_arg = \"x\"\ncallee = [\"h\"]\n");
        assert_eq!(covered, "\"x\"");
        let (err, covered) = error_at("[boundary]\nid = \"a\"\n");
        assert_eq!(covered, "[boundary]");
        assert!(err.help.unwrap().contains("[[boundary]]"));
        let (err, _) = error_at("[[stable]\n");
        assert!(err.span.is_some());
    }

    /// Every key of the lists deserialises into its struct (no stale or misspelt key in
    /// [`TABLES`]); the built-in files exercise the other direction.
    #[test]
    fn key_lists_match_the_structs() {
        let sample = |key: &str| -> String {
            match key {
                "free"
                | "new"
                | "requires_nonlocal_return"
                | "requires_shedlock"
                | "by_name"
                | "on_type"
                | "on_interface" => "true".into(),
                "name_arg" | "value_arg" | "max_args" | "min_args" => "0".into(),
                "kind" => "\"retry\"".into(),
                "form" => "\"lambda-arg\"".into(),
                "langs" => "[\"kotlin\"]".into(),
                "id" | "flavor" | "label" | "display" | "stage" | "provider_suffix" | "source" => {
                    "\"x\"".into()
                }
                _ => "[\"x\"]".into(),
            }
        };
        for (name, shape) in TABLES {
            let (header, keys, call) = match shape {
                Shape::Table(k) => (format!("[{name}]"), *k, false),
                Shape::Entries(k) => (format!("[[{name}]]"), *k, true),
            };
            let mut text = format!("{header}\n");
            for k in keys.iter().chain(if call { CALL_KEYS } else { &[] }) {
                let v = match (*name, *k) {
                    ("source", "kind") => "\"random\"".to_string(),
                    ("lock", "form") => "\"call\"".to_string(),
                    ("boundary", "lambda_args" | "context_params") => "[0]".to_string(),
                    ("keys", "typed_fields") => {
                        "[{ names = [\"x\"], types = [\"T\"] }]".to_string()
                    }
                    _ => sample(k),
                };
                text.push_str(&format!("{k} = {v}\n"));
            }
            let mut c = Catalogue::default();
            c.merge_toml("all.toml", &text)
                .unwrap_or_else(|e| panic!("{text}\n{e}"));
        }
    }
}
