//! The project index: facts that cross files. Pass 1 summarises each file on its own
//! ([`summarize`]); [`ProjectIndex::build`] merges the summaries and runs a small fixpoint so
//! that helpers calling helpers are understood; pass 2 analyses each file against it.
//!
//! Functions are matched by simple name and a compatible argument count. A name counts as
//! a fresh-value helper (or a key-minting function) only when *every* declaration of that
//! name in the project is one, so a common name (`get`, `create`) declared many times does
//! not turn every call into a finding.

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::collections::BTreeMap;

use crate::catalogue::Catalogue;
use crate::classify::FileFacts;
use crate::flow::{Flow, HelperInfo, HelperOracle, Recorder};
use crate::model::*;
use crate::text::LineIndex;
use thin_vec::ThinVec;

/// A function that mints an idempotency key from an ephemeral value and puts it somewhere.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MintInfo {
    /// `UUID.randomUUID()`.
    pub source: String,
    pub kind: SourceKind,
    /// `path:line` of the source.
    pub location: String,
    /// The function that mints it (may be a callee of the one being summarised).
    pub function: String,
}

/// One declared function.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct FnDecl {
    pub name: Name,
    /// Number of declared parameters; read it as a `usize` with [`Self::arity`] (4 bytes
    /// here: with the type's fields shared ([`TypeCtx`]), that brings a declaration from
    /// 104 to 96 bytes).
    pub param_count: u32,
    /// Kotlin functions may have default arguments, so fewer arguments can match.
    pub defaults_possible: bool,
    /// 1-based line of the declaration's name in [`Self::path`] ([`Self::location`]).
    pub line: u32,
    /// The file's display path: one interned copy, shared by the file's declarations
    /// (8 bytes here, where an `Arc<str>` took 16).
    pub path: Name,
    /// The type the declaration belongs to ([`TypeCtx`]), one copy shared by the type's
    /// methods: read it with [`Self::type_name`], [`Self::type_norm`],
    /// [`Self::type_outer`], [`Self::type_supers`], [`Self::extends`] and
    /// [`Self::companion`].
    pub ty: SharedType,
    /// The declared return type's simple name, generics and nullability removed
    /// (`PaymentSettingRepository` of `fun getPaymentSettings(): PaymentSettingRepository?`);
    /// empty when not written or not a type name.
    pub return_type: Name,
    /// The body reads an idempotency-key header (`request.header("Idempotency-Key")`),
    /// e.g. a `needsKey(request)` helper an interceptor consults before minting.
    pub reads_key_header: bool,
    /// Calls whose result flows into the return value (may be fresh helpers), each with
    /// what resolves it ([`ProjectIndex::candidates_of`]).
    pub fresh_via: SharedCalls,
    /// Every call made in the body with what resolves it (receiver text and declared
    /// type): key-minting functions are followed through these, by declaration.
    pub call_refs: SharedCalls,
    /// The declaration has no body (an interface or abstract method): a call resolves to
    /// the implementations instead.
    pub bodiless: bool,
    /// The body takes a distributed lock (see `rules/locks.toml`).
    pub has_lock: bool,
    /// Parameters passed on unchanged as an argument of another call, for wrappers of a
    /// combinator.
    pub passes_params: ThinVec<PassedParam>,
    /// Parameter names in order (Kotlin named arguments bind by them).
    pub param_names: SharedNames,
    /// Calls made with no receiver or on `this`, as 0-based positions in
    /// [`Self::call_refs`], one per callee name in name order: the methods a template
    /// method calls back (`doRun()` in `run()`), which a subclass may override
    /// ([`Self::self_callees`]).
    pub self_calls: ThinVec<u32>,
    /// The function sends an HTTP request itself, by client library ([`HTTP_OKHTTP`],
    /// [`HTTP_SPRING`]; 0: none): a declared endpoint of a Retrofit (`@GET`/`@POST`/…) or
    /// Feign (`@RequestLine`) interface or a body that calls OkHttp's `newCall` goes
    /// through OkHttp (Feign may use it, `feign-okhttp`); a Spring `@HttpExchange`
    /// endpoint or a `RestTemplate`/`RestClient`/`WebClient` exchange goes through Spring's
    /// interceptors.
    pub http: u8,
    /// The function is a declared endpoint of an HTTP client interface (an annotation of
    /// [`HTTP_ENDPOINT_ANNOTATIONS`]), not a body that sends.
    pub endpoint: bool,
    /// A key sink or a library call that mints its own key lies in the body outside a
    /// `try` that catches every exception ([`crate::model::FileModel::catch_all`]).
    pub sink_unhandled: bool,
    /// What few declarations have (retry and key parameters, handled calls, minting
    /// calls): boxed, so the many plain declarations of a large project pay 8 bytes for it
    /// (`None`) rather than one empty list each. Read it with [`Self::rare`].
    pub rare: Option<Box<FnRare>>,
}

/// Serde for a handle to an interned value (`$handle`, made by `$handle::new(&$target)`):
/// written as the value, read by interning it again (the disk cache of pass 1).
macro_rules! interned_serde {
    ($handle:ty, $target:ty) => {
        impl serde::Serialize for $handle {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.0.serialize(s)
            }
        }

        impl<'de> serde::Deserialize<'de> for $handle {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<$handle, D::Error> {
                Ok(<$handle>::new(&<$target>::deserialize(d)?))
            }
        }
    };
}

/// Where a declaration sits: its enclosing type and what calls through a receiver compare
/// with. Every method of a type has the same one, so declarations hold one process-wide
/// copy of it ([`SharedType`], 8 bytes): a generated SDK has 400k+ declarations in a few
/// thousand types, and these five fields took 41 bytes of each.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct TypeCtx {
    /// Simple name of the enclosing type or object; empty for a top-level function.
    pub name: Name,
    /// [`Self::name`] normalised ([`crate::catalogue::normalize_name`]), set when the copy
    /// is made: receivers are compared with it on every resolution.
    #[serde(skip)]
    pub norm: Name,
    /// The type enclosing [`Self::name`] when that type is nested (`PaymentRequest` for a
    /// method of `PaymentRequest.Builder`); empty for a top-level type.
    pub outer: Name,
    /// The enclosing type's supertypes (implemented interfaces, Rust trait of an `impl`),
    /// so a call through a receiver declared as the interface finds the implementation.
    pub supers: SharedNames,
    /// A Kotlin extension function's receiver type (simple name), else empty: a call on a
    /// receiver of that declared type resolves to it ([`FunctionInfo::extends`]).
    pub extends: Name,
    /// Declared in a Kotlin `companion object`: [`Self::name`] is then the enclosing
    /// class's (the companion's functions are called through it, `Ids.fresh()`).
    #[serde(default)]
    pub companion: bool,
    /// The file is test, example or benchmark code ([`is_test_source`]): only such code
    /// can call the declaration.
    pub test_source: bool,
    /// Rust functions are only called from Rust; Java and Kotlin call each other.
    pub jvm: bool,
}

impl TypeCtx {
    /// Every field but the derived [`Self::norm`].
    fn key(&self) -> (Name, Name, SharedNames, Name, bool, bool, bool) {
        (
            self.name,
            self.outer,
            self.supers,
            self.extends,
            self.companion,
            self.test_source,
            self.jvm,
        )
    }
}

impl PartialEq for TypeCtx {
    fn eq(&self, other: &TypeCtx) -> bool {
        self.key() == other.key()
    }
}

impl Eq for TypeCtx {}

impl std::hash::Hash for TypeCtx {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state)
    }
}

/// One process-wide copy of a [`TypeCtx`] (8 bytes, `Copy`), equal by address, which for
/// interned copies is the same as by content. Never freed ([`crate::name`]).
#[derive(Clone, Copy)]
pub struct SharedType(&'static TypeCtx);

static TYPES: std::sync::LazyLock<crate::name::Table<SharedType, crate::name::Slab<TypeCtx>>> =
    std::sync::LazyLock::new(crate::name::Table::new);

impl SharedType {
    /// The one copy of `t` (its [`TypeCtx::norm`] ignored and computed here), added to
    /// the process-wide table if it is new.
    pub fn new(t: &TypeCtx) -> SharedType {
        TYPES.intern(t, |t, slab| {
            SharedType(slab.alloc(TypeCtx {
                norm: Name::from(normalized(&t.name)),
                ..t.clone()
            }))
        })
    }
}

crate::name::interned_handle!(SharedType, TypeCtx);

impl Default for SharedType {
    fn default() -> SharedType {
        static E: std::sync::LazyLock<SharedType> =
            std::sync::LazyLock::new(|| SharedType::new(&TypeCtx::default()));
        *E
    }
}

interned_serde!(SharedType, TypeCtx);

/// The fields of a [`FnDecl`] that few declarations have ([`FnDecl::rare`]).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct FnRare {
    /// 0-based positions and names of parameters that carry an idempotency key (by name
    /// or by a `@Header("Idempotency-Key")` annotation).
    pub key_params: ThinVec<(usize, String)>,
    /// The return value derives from an ephemeral source evaluated in the body.
    pub fresh: Option<Box<HelperInfo>>,
    /// The body puts an ephemeral value into a key sink.
    pub mints: Option<Box<MintInfo>>,
    /// Fields the body always assigns (`this.idempotencyKey = ..` as a statement of the
    /// body itself, under no condition, loop, lambda or `catch`), normalised
    /// ([`crate::catalogue::normalize_name`]): a builder method such as `withDefaults()`
    /// that overwrites what an earlier setter of the chain put there.
    pub overwrites: ThinVec<Name>,
    /// For key parameters found by flow (not by name): `(position, path:line)` of the key
    /// sink the parameter reaches in the body (`"${id}-attempt-$attempt"` into a header).
    pub key_param_sinks: ThinVec<(usize, String)>,
    /// Parameters that reach a write under a name only the project index can resolve
    /// ([`crate::classify::NamedWrite`]): position, the name, its qualifier, the kind and
    /// `path:line`. [`ProjectIndex::build`] makes them key parameters once a
    /// [`NamedKey`] of that name is known.
    pub named_param_writes: ThinVec<(
        usize,
        String,
        Option<String>,
        crate::classify::SlotKind,
        String,
    )>,
    /// Calls whose result flows into a key sink in the body (as [`Self::fresh_via`]).
    pub mint_via_fresh: ThinVec<SharedCall>,
    /// Positional arguments that carry an ephemeral value ([`KeyedArg`]).
    pub keyed_arg_candidates: ThinVec<KeyedArg>,
    /// Parameters the body calls again after a failure (a retry combinator): 0-based
    /// position and the reason, "calls `block` again after a failure (path:line)".
    pub retry_params: ThinVec<(usize, String)>,
    /// Of [`Self::retry_params`], those the function calls again only after the call
    /// throws: it returns the call's result unchanged (`return block()` in the loop), so a
    /// failure the block handles itself is never retried.
    pub retry_on_throw: ThinVec<usize>,
    /// Parameters passed unchanged where a catalogue boundary takes its lambda
    /// (`.handler(handler)` of a Zeebe worker chain, `retryTemplate.execute(callback)`):
    /// the library runs them as that boundary does. 0-based position, the reason, and the
    /// boundary.
    pub boundary_params: ThinVec<(usize, String, ParamBoundary)>,
    /// 0-based positions in [`Self::call_refs`] of the calls made inside a `try` that
    /// catches every exception: their failures do not leave the function.
    pub handled_calls: ThinVec<u32>,
    /// Key parameters that reach a key sink of the body inside a `try` that catches every
    /// exception, and those that reach one outside such a `try` (0-based positions).
    pub param_sinks_handled: ThinVec<usize>,
    pub param_sinks_unhandled: ThinVec<usize>,
}

/// A positional argument of a call in a function body that carries an ephemeral value
/// (`charge(order, UUID.randomUUID())`): a key the function mints when the callee takes a
/// key at that position ([`FnRare::keyed_arg_candidates`]). Enterprise code passes clock
/// readings to setters everywhere, so this is kept small: names shared with the file's
/// other records, the line rather than a `path:line` string (the path is the
/// declaration's own, [`FnDecl::path`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeyedArg {
    pub callee: Name,
    /// The call's number of arguments.
    pub arity: u32,
    /// 0-based position of the argument.
    pub position: u32,
    /// How the ephemeral value reads (`UUID.randomUUID()`).
    pub source: Name,
    pub kind: SourceKind,
    /// 1-based line of the ephemeral value in the declaration's file.
    pub line: u32,
}

impl KeyedArg {
    /// What the declaration `d` (whose body makes the call) mints through this argument.
    pub fn mint_info(&self, d: &FnDecl) -> MintInfo {
        MintInfo {
            source: self.source.to_string(),
            kind: self.kind,
            location: format!("{}:{}", d.path, self.line),
            function: d.name.to_string(),
        }
    }
}

/// The catalogue boundary a function hands one of its parameters to (see
/// [`FnDecl::boundary_params`]): a lambda given to the function is that boundary.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ParamBoundary {
    pub kind: crate::catalogue::BoundaryKind,
    /// Catalogue entry id.
    pub entry: String,
    pub flavor: String,
}

/// Who can call a minting declaration ([`ProjectIndex::is_mint_name_from`]): JVM main
/// code, JVM test code, Rust main code, Rust test code.
const MINT_FROM_JVM_MAIN: u8 = 1;
const MINT_FROM_JVM_TEST: u8 = 2;
const MINT_FROM_RUST_MAIN: u8 = 4;
const MINT_FROM_RUST_TEST: u8 = 8;
/// Every kind of calling code ([`caller_kind`]).
pub const CALLERS_ALL: u8 = 15;

/// The kind of code a file at `path` (a display path) holds, as one of the bits
/// [`ProjectIndex::mention_reach`] answers with: JVM (Java or Kotlin) or Rust, main or
/// test code ([`is_test_source`]). The filter of [`ProjectIndex::candidates_of`].
pub fn caller_kind(path: &str) -> u8 {
    let jvm = Language::from_path(std::path::Path::new(path)) != Some(Language::Rust);
    match (jvm, is_test_source(path)) {
        (true, false) => MINT_FROM_JVM_MAIN,
        (true, true) => MINT_FROM_JVM_TEST,
        (false, false) => MINT_FROM_RUST_MAIN,
        (false, true) => MINT_FROM_RUST_TEST,
    }
}

/// Catalogue-entry id of boundaries inferred from a project retry combinator.
pub const INFERRED_COMBINATOR: &str = "inferred.retry-combinator";

/// Flavor of an inferred combinator that runs its block again only after the block throws
/// ([`FnDecl::retry_on_throw`]).
pub const RETRY_ON_THROW: &str = "retry-on-throw";

/// How a declaration runs one of its parameters per attempt: 0-based position, the
/// reason, and the catalogue boundary it is handed to (`None`: the function retries it
/// itself).
type RetryState = (usize, String, Option<ParamBoundary>);

/// A call as the index resolves it: the callee, its number of arguments and its
/// receiver (see [`ProjectIndex::candidates_of`]).
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct CallRef {
    pub callee: Name,
    pub arity: usize,
    /// Last segment of the receiver text ([`crate::catalogue::receiver_text`],
    /// [`crate::catalogue::last_segment`]), `None` for a free call.
    pub receiver: Option<Name>,
    /// The receiver's declared type ([`Call::receiver_type`]).
    pub receiver_type: Option<Name>,
}

impl CallRef {
    pub fn of(call: &Call) -> CallRef {
        CallRef {
            callee: Name::from(call.callee.as_str()),
            arity: call.args.len(),
            // Resolution reads only the receiver's last segment (and whether it is
            // `this`/`self`), so that is all that is kept.
            receiver: crate::catalogue::receiver_text(call)
                .map(|r| Name::from(crate::catalogue::last_segment(&r))),
            receiver_type: call.receiver_type.as_deref().map(Name::from),
        }
    }
}

/// One process-wide copy of a [`CallRef`] (8 bytes, `Copy`): generated code makes the
/// same call (`apply(1)`, `build()` on a builder) in thousands of declarations, and
/// declarations and demands hold a pointer to the one copy. Equal by address, which for
/// interned calls is the same as by content; hashed and ordered as the [`CallRef`] (so a
/// set of them is looked up by a `CallRef`, and sorts deterministically). The copies are
/// never freed ([`crate::name`]): a caller's resolution cache may key by the address.
#[derive(Clone, Copy)]
pub struct SharedCall(&'static CallRef);

static CALLS: std::sync::LazyLock<crate::name::Table<SharedCall, crate::name::Slab<CallRef>>> =
    std::sync::LazyLock::new(crate::name::Table::new);

impl SharedCall {
    /// The one copy of `r`, added to the process-wide table if it is new.
    pub fn new(r: &CallRef) -> SharedCall {
        CALLS.intern(r, |r, slab| SharedCall(slab.alloc(*r)))
    }

    /// The copy's address: the same for equal calls for the life of the process.
    pub fn addr(self) -> usize {
        self.0 as *const CallRef as usize
    }
}

crate::name::interned_handle!(SharedCall, CallRef, ordered);

impl Default for SharedCall {
    fn default() -> SharedCall {
        SharedCall::new(&CallRef::default())
    }
}

impl From<CallRef> for SharedCall {
    fn from(r: CallRef) -> SharedCall {
        SharedCall::new(&r)
    }
}

interned_serde!(SharedCall, CallRef);

/// One process-wide copy of a list (8 bytes, `Copy`): a type's supertypes, which each of
/// its methods' declarations holds, parameter-name lists and the calls of a body, which
/// generated code repeats across thousands of declarations (`value` and `into()` for
/// every setter). Equal by address, which for interned lists is the same as by content;
/// hashes and prints as the list does. The copies are never freed ([`crate::name`]); their
/// items are packed into shared chunks ([`ItemSlab`]), so a list costs its items and one
/// 16-byte cell, not an allocation of its own.
pub struct Shared<T: 'static>(&'static &'static [T]);

/// [`Shared`] names: a declaration's supertypes or parameter names.
pub type SharedNames = Shared<Name>;
/// [`Shared`] calls, a declaration's [`FnDecl::call_refs`] or [`FnDecl::fresh_via`].
pub type SharedCalls = Shared<SharedCall>;

/// What a [`Shared`] list holds: each item type has its own process-wide table.
pub trait SharedItem: Copy + Eq + std::hash::Hash + std::fmt::Debug + Send + 'static {
    /// The process-wide table of this item type's lists.
    fn lists() -> &'static crate::name::Table<Shared<Self>, ListStorage<Self>>;
    /// The empty list's copy, kept aside: every declaration starts with a few.
    fn empty() -> Shared<Self>;
}

/// A shard's storage of [`Shared`] lists: the cells a handle points to, and the items.
pub struct ListStorage<T: 'static> {
    cells: crate::name::Slab<&'static [T]>,
    items: ItemSlab<T>,
}

impl<T> Default for ListStorage<T> {
    fn default() -> ListStorage<T> {
        ListStorage {
            cells: Default::default(),
            items: ItemSlab { rest: &mut [] },
        }
    }
}

/// Lists of `T` leaked into chunks of [`ItemSlab::CHUNK`] items and handed out as
/// slices: an interned list takes no allocation (and no allocator header) of its own. A
/// list longer than a quarter chunk gets its own allocation; at most that much of a chunk
/// is left unused when the next list does not fit.
pub struct ItemSlab<T: 'static> {
    rest: &'static mut [T],
}

impl<T: Copy> ItemSlab<T> {
    const CHUNK: usize = 2048;

    /// A copy of `v` that lives as long as the process.
    fn alloc(&mut self, v: &[T]) -> &'static [T] {
        let Some(&first) = v.first() else {
            return &[];
        };
        if v.len() > Self::CHUNK / 4 {
            return Box::leak(Box::from(v));
        }
        if self.rest.len() < v.len() {
            // Filled with a copy of an item (any valid value), then overwritten as used.
            self.rest = Box::leak(vec![first; Self::CHUNK].into_boxed_slice());
        }
        let (head, rest) = std::mem::take(&mut self.rest).split_at_mut(v.len());
        self.rest = rest;
        head.copy_from_slice(v);
        head
    }
}

/// [`SharedItem`] for `$t`: its own list table and empty list.
macro_rules! shared_item {
    ($t:ty) => {
        impl SharedItem for $t {
            fn lists() -> &'static crate::name::Table<Shared<$t>, ListStorage<$t>> {
                static T: std::sync::LazyLock<crate::name::Table<Shared<$t>, ListStorage<$t>>> =
                    std::sync::LazyLock::new(crate::name::Table::new);
                &T
            }
            fn empty() -> Shared<$t> {
                static E: std::sync::LazyLock<Shared<$t>> =
                    std::sync::LazyLock::new(|| Shared(Box::leak(Box::new(&[][..]))));
                *E
            }
        }
    };
}

shared_item!(Name);
shared_item!(SharedCall);

impl<T: SharedItem> Shared<T> {
    /// The one copy of `v`, added to the process-wide table if it is new.
    pub fn new(v: &[T]) -> Shared<T> {
        if v.is_empty() {
            return T::empty();
        }
        T::lists().intern(v, |v, st| {
            let items = st.items.alloc(v);
            Shared(st.cells.alloc(items))
        })
    }
}

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Shared<T> {
        *self
    }
}

impl<T> Copy for Shared<T> {}

impl<T> std::ops::Deref for Shared<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.0
    }
}

impl<T> std::borrow::Borrow<[T]> for Shared<T> {
    fn borrow(&self) -> &[T] {
        self.0
    }
}

impl<T> PartialEq for Shared<T> {
    fn eq(&self, other: &Shared<T>) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl<T> Eq for Shared<T> {}

impl<T: std::hash::Hash> std::hash::Hash for Shared<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::hash::Hash::hash(&**self, state)
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Shared<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl<T: SharedItem> Default for Shared<T> {
    fn default() -> Shared<T> {
        T::empty()
    }
}

impl<T: SharedItem> FromIterator<T> for Shared<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Shared<T> {
        Shared::new(&iter.into_iter().collect::<Vec<T>>())
    }
}

impl<T: serde::Serialize> serde::Serialize for Shared<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de, T: SharedItem + serde::Deserialize<'de>> serde::Deserialize<'de> for Shared<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Shared<T>, D::Error> {
        Ok(Shared::new(&Vec::<T>::deserialize(d)?))
    }
}

/// What a call to project functions mints ([`ProjectIndex::mints`]): the key each
/// minting candidate declaration mints (distinct locations), and how many of the
/// candidates mint one.
#[derive(Clone, Debug)]
pub struct MintResolution<'a> {
    pub infos: Vec<&'a MintInfo>,
    pub minting: usize,
    pub candidates: usize,
}

impl MintResolution<'_> {
    /// Not every declaration the call may refer to mints a key: the finding names the
    /// ambiguity and is reported at a lower severity.
    pub fn ambiguous(&self) -> bool {
        self.minting < self.candidates
    }
}

/// A parameter a function passes on unchanged to another call (see
/// [`FnDecl::passes_params`]).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct PassedParam {
    /// 0-based position of the parameter ([`Self::param`]; 4 bytes, as many are held).
    pub param: u32,
    /// 0-based position of the argument in the call ([`Self::arg`]).
    pub arg: u32,
    /// The call, shared with the file's other records of it: callee, number of arguments,
    /// the receiver's last segment (`RetryHelper` in `RetryHelper.run(block)`: candidates
    /// on a type it names are preferred) and declared type.
    pub call: SharedCall,
    /// The argument's name when it is a Kotlin named argument (binds by name).
    pub arg_name: Option<Name>,
    /// 1-based line of the call, in the file of the declaration holding this.
    pub line: u32,
    /// The call sits in a `try` that catches every exception.
    pub handled: bool,
    /// The parameter's declared type may hold a function ([`may_hold_function`]): only
    /// then can the callee run it per attempt, so only then is the function a wrapper of
    /// a combinator the callee may be. Key parameters follow every passed parameter.
    pub callable: bool,
    /// The argument is a lambda that runs the parameter (`retrying { op() }`): it binds a
    /// parameter as a lambda argument does ([`lambda_param`]; a trailing lambda binds the
    /// last one when [`Self::trailing`]).
    pub lambda: bool,
    /// The lambda is written after the call's parentheses (Kotlin): it binds the last
    /// parameter.
    pub trailing: bool,
}

impl PassedParam {
    /// [`Self::param`] as an index.
    pub(crate) fn param(&self) -> usize {
        self.param as usize
    }

    /// [`Self::arg`] as an index.
    pub(crate) fn arg(&self) -> usize {
        self.arg as usize
    }

    /// The 0-based parameter of a declaration `c` of the callee that the argument binds:
    /// by name for a Kotlin named argument (`None` when `c` has no such parameter), the
    /// last parameter for a trailing lambda ([`lambda_param`]), else by position.
    pub(crate) fn position_in(&self, c: &FnDecl) -> Option<usize> {
        match &self.arg_name {
            Some(nm) => c.param_names.iter().position(|p| **p == **nm),
            None if self.trailing => lambda_param(c, self.arg(), self.call.arity, None),
            None => Some(self.arg()),
        }
    }
}

/// Annotations that declare a method as an HTTP call of a client interface (Retrofit,
/// Feign, Spring HTTP interfaces).
const HTTP_ENDPOINT_ANNOTATIONS: &[&str] = &[
    "GET",
    "POST",
    "PUT",
    "DELETE",
    "PATCH",
    "HEAD",
    "HTTP",
    "RequestLine",
    "HttpExchange",
    "GetExchange",
    "PostExchange",
    "PutExchange",
    "DeleteExchange",
    "PatchExchange",
];

/// Spring MVC's request mappings, which a Spring Cloud OpenFeign `@FeignClient` interface
/// uses to declare its endpoints
/// (<https://docs.spring.io/spring-cloud-openfeign/reference/spring-cloud-openfeign.html>).
const SPRING_MAPPING_ANNOTATIONS: &[&str] = &[
    "RequestMapping",
    "GetMapping",
    "PostMapping",
    "PutMapping",
    "DeleteMapping",
    "PatchMapping",
];

/// Recorded among a [`RetrySite`]'s calls when the site itself sends an HTTP request
/// through Spring's clients ([`is_spring_http_call`]); not a function name.
const SENDS_SPRING: &str = "<sends HTTP: Spring>";
/// Recorded among a [`RetrySite`]'s calls when the site itself calls OkHttp's `newCall`.
const SENDS_OKHTTP: &str = "<sends HTTP: OkHttp>";

/// [`FnDecl::http`]: the request goes through OkHttp (and its interceptors).
pub const HTTP_OKHTTP: u8 = 1;
/// [`FnDecl::http`]: the request goes through Spring's `ClientHttpRequestInterceptor`s.
pub const HTTP_SPRING: u8 = 2;
/// [`FnDecl::http`]: the function is a Feign client's endpoint (`@RequestLine`, or a Spring
/// MVC mapping of a `@FeignClient` interface or of an interface one may extend), whose
/// request runs Feign's `RequestInterceptor`s.
pub const HTTP_FEIGN: u8 = 8;
/// [`crate::prefilter::FileDemand::evidence_needed`]: a WebClient `ExchangeFilterFunction`
/// reads reactive re-subscription evidence ([`ProjectIndex::reactive_retry_sites`]).
pub const HTTP_WEBCLIENT: u8 = 4;

/// A Reactor or Kotlin Flow retry operator: `retryWhen(..)` / `retryBackoff(..)` on any
/// receiver, `retry(..)` on a chained call (`..bodyToMono(X.class).retry(3)`; a free or
/// variable `retry(..)` is more often a project's own function). Re-subscribes its
/// upstream, so a WebClient exchange there runs its filters again
/// (<https://projectreactor.io/docs/core/release/api/reactor/core/publisher/Mono.html#retryWhen-reactor.util.retry.Retry->).
fn is_reactive_retry(c: &Call) -> bool {
    match c.callee.as_str() {
        "retryWhen" | "retryBackoff" => c.receiver.is_some(),
        "retry" => c
            .receiver
            .as_deref()
            .is_some_and(|r| r.trim_end().ends_with(')')),
        _ => false,
    }
}

/// Retrofit and Feign endpoint annotations (OkHttp) vs Spring HTTP interface ones.
fn endpoint_client(annotation: &str) -> u8 {
    if !HTTP_ENDPOINT_ANNOTATIONS.contains(&annotation) {
        0
    } else if annotation.ends_with("Exchange") {
        HTTP_SPRING
    } else if annotation == "RequestLine" {
        HTTP_OKHTTP | HTTP_FEIGN
    } else {
        HTTP_OKHTTP
    }
}

/// `RestTemplate` methods that send a read (`GET`, `HEAD`, `OPTIONS`).
pub(crate) const SPRING_READS: &[&str] = &[
    "getForObject",
    "getForEntity",
    "headForHeaders",
    "optionsForAllow",
];

/// Methods that send a write: `RestTemplate`'s `POST`/`PATCH` methods, and the `post` /
/// `patch` verbs that start a `RestClient`, `WebClient`, reqwest or OkHttp request.
pub(crate) const SPRING_WRITES: &[&str] = &[
    "postForObject",
    "postForEntity",
    "postForLocation",
    "patchForObject",
    "post",
    "patch",
];

/// A request sent through Spring's HTTP clients: a `RestTemplate` / `RestOperations`
/// exchange method, or the verb that starts a `RestClient` / `WebClient` request, on a
/// receiver declared (or named) as one of them.
fn is_spring_http_call(call: &Call) -> bool {
    const OTHER_METHODS: &[&str] = &["exchange", "execute", "put", "delete", "get", "method"];
    const CLIENTS: &[&str] = &["resttemplate", "restoperations", "restclient", "webclient"];
    let c = call.callee.as_str();
    if !(SPRING_READS.contains(&c) || SPRING_WRITES.contains(&c) || OTHER_METHODS.contains(&c)) {
        return false;
    }
    let typed = call
        .receiver_type_name()
        .is_some_and(|t| CLIENTS.contains(&t.to_ascii_lowercase().as_str()));
    typed
        || call.receiver.as_deref().is_some_and(|r| {
            let last = crate::catalogue::last_segment(r).to_ascii_lowercase();
            CLIENTS.iter().any(|c| last.ends_with(c))
        })
}

/// A retry boundary of a file (catalogue retry construct or retry loop) outside any
/// interceptor, with the calls made inside it: call-level retry evidence when one of them
/// reaches an HTTP call.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct RetrySite {
    /// The file (display path) and 1-based line of the boundary's anchor
    /// ([`Self::location`]): a large project has tens of thousands of sites (waqitiapp
    /// 11,063), and a `path:line` string and a list of its own took 5 MiB of them.
    pub path: Name,
    pub line: u32,
    /// Callees (simple names) of the calls inside the boundary, sorted, each once (one
    /// shared copy per distinct list, [`Shared`]).
    pub calls: SharedNames,
    /// For a lambda passed to a project function (a possible retry combinator, known only
    /// once the index is built): the callee, the argument position, the argument count and
    /// the argument's name when it is a Kotlin named argument ([`lambda_param`]).
    pub via: Option<(Name, usize, usize, Option<Name>)>,
}

impl RetrySite {
    /// `path:line` of the boundary's anchor.
    pub fn location(&self) -> String {
        format!("{}:{}", self.path, self.line)
    }
}

/// A registration of an interceptor / middleware on a client builder.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Registration {
    /// `application`, `network`, `middleware`, `initialiser` (from the catalogue).
    pub stage: String,
    /// The registered type, when the argument constructs or names one.
    pub type_name: Option<String>,
    /// Registrations with equal `chain` are on the same builder.
    pub chain: String,
    /// Byte offset of the registering call's name (orders registrations on one chain;
    /// chained calls all start where the chain starts, their names do not).
    pub offset: usize,
    pub path: String,
    /// `path:line` of the registering call's name (`.addInterceptor(..)` on its own line
    /// of a builder chain, not the line the chain starts on).
    pub location: String,
    /// The registered thing retries what comes after it (calls `proceed` more than once,
    /// or is a catalogue `retrying_types` entry such as `RetryTransientMiddleware`).
    pub retrying: bool,
    /// JVM: the name the built client is kept under ([`client_holder`]): the field or
    /// local the builder chain initialises, or the function that returns it. `None` when
    /// it cannot be told.
    pub client: Option<String>,
}

/// A field of an object the web framework builds from a request (a parameter of a Spring
/// `@GetMapping`/`@PostMapping`/.. handler: `@ModelAttribute` binding or `@RequestBody`)
/// that the handler sends as a key (`IdempotencyCreator.create(request.seed)` into
/// `idempotencyKey`). The framework constructs the object, so a field the client leaves
/// out takes its declared default, evaluated per request.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct BoundKeyField {
    /// The parameter's declared type (simple name).
    pub type_name: String,
    pub field: String,
    /// `path:line` of the handler's key sink.
    pub location: String,
    /// The handler's name.
    pub handler: String,
}

/// A positional argument of a call in a web handler that reads a request-bound field
/// ([`FileSummary::bound_arg_candidates`]): a [`BoundKeyField`] once the index knows the
/// position is a key parameter of the callee ([`BoundArgCandidate::field`]). Interned
/// names and a line rather than strings: a large Spring project has tens of thousands
/// (waqitiapp 12,672, which took 6 MiB as strings; 56 bytes each here).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BoundArgCandidate {
    pub callee: Name,
    /// The call's number of arguments.
    pub arity: u32,
    /// 0-based position of the argument.
    pub position: u32,
    /// As [`BoundKeyField::type_name`], [`BoundKeyField::field`] and
    /// [`BoundKeyField::handler`].
    pub type_name: Name,
    pub field: Name,
    pub handler: Name,
    /// The argument's file (display path) and 1-based line.
    pub path: Name,
    pub line: u32,
}

impl BoundArgCandidate {
    /// The bound field this candidate is when its position is a key parameter.
    pub fn field(&self) -> BoundKeyField {
        BoundKeyField {
            type_name: self.type_name.to_string(),
            field: self.field.to_string(),
            location: format!("{}:{}", self.path, self.line),
            handler: self.handler.to_string(),
        }
    }
}

/// The handler's declaration when function `f` is a Spring web handler (JVM).
fn handler_info(lang: Language, model: &FileModel, f: ScopeId) -> Option<&FunctionInfo> {
    let ScopeKind::Function(info) = &model.scopes[f].kind else {
        return None;
    };
    (lang != Language::Rust
        && info
            .annotations
            .iter()
            .any(|a| HANDLER_ANNOTATIONS.contains(&a.name.as_str())))
    .then_some(info)
}

/// The request-bound fields of handler `f`'s parameters that `value` reads: a field read
/// (`request.seed`) names its field, the whole object (`create(request)`, whose
/// `toString` a data class builds from every property) is `*`.
fn bound_fields(
    flow: &Flow,
    model: &FileModel,
    info: &FunctionInfo,
    f: ScopeId,
    value: ValueId,
    at: &str,
) -> Vec<BoundKeyField> {
    let mut out = Vec::new();
    for (b, field) in flow.param_fields_reaching(value, f) {
        let binding = &model.bindings[b];
        if binding.scope != f {
            continue;
        }
        let Some(p) = info.params.iter().find(|p| p.name == binding.name) else {
            continue;
        };
        let ty = simple_type_name(&p.ty);
        if !ty.is_empty() {
            out.push(BoundKeyField {
                type_name: ty,
                field: field.unwrap_or_else(|| "*".to_string()),
                location: at.to_string(),
                handler: info.name.clone(),
            });
        }
    }
    out
}

/// Spring web handler annotations: their parameters are bound from the request.
const HANDLER_ANNOTATIONS: &[&str] = &[
    "GetMapping",
    "PostMapping",
    "PutMapping",
    "PatchMapping",
    "DeleteMapping",
    "RequestMapping",
];

/// A Retrofit service created in the project (`retrofit.create(Api::class.java)`), in a
/// file that names `Retrofit`: its interface and the OkHttp client it runs on.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RetrofitService {
    /// The service interface's simple name.
    pub iface: String,
    /// The name the client passed to `.client(x)` is kept under (a field, local or
    /// function, see [`Registration::client`]); `Some("")` for a Retrofit built without
    /// `.client(..)` (its own default client, with no project interceptor); `None` when
    /// the client cannot be told (a parameter, an expression).
    pub client: Option<String>,
}

/// Per name, parallel to its declarations: whether a minting one's key leaves only from
/// inside a catch-all `try`, and which key parameters do
/// ([`ProjectIndex::handled_states`]).
type HandledStates = (HashMap<Name, Vec<bool>>, HashMap<Name, Vec<Vec<usize>>>);

/// The retry-site lists [`ProjectIndex::resolve_sites`] works out: per client, and those
/// reaching OkHttp, Spring and Feign HTTP calls.
type SiteLists = (
    HashMap<String, Vec<String>>,
    Vec<String>,
    Vec<String>,
    Vec<String>,
);

/// A `call.clone()` site (call-level retry evidence for OkHttp application interceptors)
/// and the client the cloned call was made through, when its file tells: the receiver is
/// a local or field initialised by `client.newCall(..)` (the client's name) or by a call of
/// a method on a receiver of a declared type (a Retrofit service method: the interface).
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct CloneSite {
    /// `path:line`.
    pub location: String,
    /// The client's holder name (`newCall` on it), or `None`.
    pub client: Option<String>,
    /// The service interface the call was made on, or `None`.
    pub service: Option<String>,
}

/// A name under which a value becomes an idempotency key in another file: a constant
/// whose value is a key header (`static final String CLIENT_CORRELATION_ID =
/// "X-CorrelationID"`), or an Apache Camel exchange property that a route copies into a
/// key header (`.setHeader("X-Reference-Id", simple("${exchangeProperty." +
/// CORRELATION_ID + "}"))`). See [`crate::classify::NamedWrite`].
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct NamedKey {
    /// The constant's simple name, or the property's name as the route writes it (a
    /// constant's simple name or a literal).
    pub name: String,
    pub slot: crate::classify::SlotKind,
    /// The key header's name as written (`X-CorrelationID`).
    pub header: String,
    /// `path:line` of the constant or of the route's `setHeader`.
    pub location: String,
    /// Declared in Java or Kotlin (JVM code reads it), else Rust.
    pub jvm: bool,
    /// For a constant, the type declaring it (`Props`; empty at top level); for an
    /// exchange property, the qualifier the route wrote (`Props` of `Props.ID`; empty).
    pub owner: String,
    /// Declared in test, example or benchmark code ([`is_test_source`]): only such code
    /// can use it.
    pub test_source: bool,
    /// For an exchange property whose route names the header by a constant of another
    /// file (`.setHeader(Props.REFERENCE_ID, ..)`): that constant's qualifier and name,
    /// resolved against the header constants when the property is looked up (`header`
    /// is then empty).
    pub header_via: Option<(Option<String>, String)>,
}

/// Pass 1 output for one file.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct FileSummary {
    pub functions: Vec<FnDecl>,
    pub registrations: Vec<Registration>,
    /// Retrofit services created here ([`RetrofitService`]).
    pub retrofit_services: Vec<RetrofitService>,
    pub shedlock_enabled: bool,
    /// Interceptor types that call `proceed` more than once (they retry).
    pub retrying_types: Vec<String>,
    /// `path:line` of `call.clone()` sites (call-level retries).
    pub clone_sites: Vec<CloneSite>,
    /// Retry boundaries in this file.
    pub retry_boundaries: usize,
    /// `path:line` of reactive retries here (`.retryWhen(..)`, `.retryBackoff(..)`, and
    /// `.retry(..)` on a chained call): a WebClient exchange upstream of one is
    /// re-subscribed, and its filters run again ([`ProjectIndex::reactive_retry_sites`]).
    pub reactive_retries: Vec<String>,
    /// Retry boundaries outside interceptors, with their calls (JVM files only).
    pub retry_sites: Vec<RetrySite>,
    /// Constants and exchange properties declared here that name or carry a key header.
    pub named_keys: Vec<NamedKey>,
    /// JVM types declared here: simple name, declared supertypes, and whether the type is
    /// top-level (not nested in another type).
    pub types: Vec<(String, Vec<String>, bool)>,
    /// Types declared here whose implementing methods an `on_interface` catalogue entry
    /// makes boundaries ([`TypeBoundary`]).
    #[serde(default)]
    pub type_boundaries: Vec<TypeBoundary>,
    /// The file's display path.
    pub path: String,
    /// Apache Camel routes declared here that start at an in-process endpoint.
    pub camel_routes: Vec<CamelRoute>,
    /// Messages sent to an in-process Camel endpoint from inside an attempt boundary.
    pub camel_sends: Vec<CamelSend>,
    /// Kotlin class properties as Java sees them: `(getter, type)`, `("getPaymentSettings",
    /// "PaymentSettingRepository")` for `val paymentSettings: PaymentSettingRepository`.
    pub property_getters: Vec<(String, String)>,
    /// Fields of request objects that a web handler sends as a key ([`BoundKeyField`]).
    pub bound_key_fields: Vec<BoundKeyField>,
    /// Positional arguments of calls in web handlers that read request-bound fields
    /// ([`BoundArgCandidate`]).
    pub bound_arg_candidates: Vec<BoundArgCandidate>,
}

/// An annotation of an `annotated-function` catalogue entry with `on_interface`
/// ([`crate::catalogue::BoundaryEntry::on_interface`]) on a JVM type, or on one of its
/// methods, in a file the entry applies to (its `imports`): the methods implementing it
/// in another file are boundaries (Temporal's `@ActivityInterface` is declared on the
/// interface, the implementing class usually in a file of its own;
/// [`apply_interface_boundaries`]).
#[derive(
    Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct TypeBoundary {
    /// The annotated type's simple name.
    pub type_name: String,
    /// The method's name: one annotated, or one the annotated type declares in its file.
    pub method: String,
    /// The method's number of parameters.
    pub params: u32,
    /// The catalogue entry's id.
    pub entry: String,
    /// The annotation's name, without `@`.
    pub annotation: String,
}

/// An Apache Camel route from an in-process endpoint (`from("direct:send-transfers")`):
/// the processors it runs (`.process(prepareTransferRequest)`, by the field's declared
/// type or the constructed type) and the in-process endpoints it sends on to
/// (`.to("direct:get-external-account")`). Endpoints are kept without their `?options`.
#[derive(
    Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct CamelRoute {
    pub endpoint: String,
    pub processors: Vec<String>,
    pub to: Vec<String>,
}

/// A `ProducerTemplate` send to an in-process endpoint
/// (`producerTemplate.send("direct:send-transfers", ex)`) inside an attempt boundary: the
/// route runs synchronously in the sender's thread, so each run of the boundary runs the
/// route's processors again (Camel `direct:` component: "synchronous call to another
/// endpoint", https://camel.apache.org/components/latest/direct-component.html).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CamelSend {
    pub endpoint: String,
    pub boundary: ParamBoundary,
    /// The boundary's label (`Zeebe job handler, run again when ..`).
    pub label: String,
    /// `path:line` of the send.
    pub location: String,
}

/// In-process Camel endpoint schemes: a send runs the consuming route in the caller's
/// thread (`direct`, `direct-vm`) or hands the exchange to a queue in the same JVM (`seda`,
/// `vm`); in each case the route's processors run once per send.
const CAMEL_IN_PROCESS: &[&str] = &["direct:", "direct-vm:", "seda:", "vm:"];

/// `ProducerTemplate` / `FluentProducerTemplate` methods whose first argument is the
/// endpoint URI.
const CAMEL_SENDS: &[&str] = &[
    "send",
    "sendBody",
    "sendBodyAndHeader",
    "sendBodyAndHeaders",
    "sendBodyAndProperty",
    "request",
    "requestBody",
    "requestBodyAndHeader",
    "requestBodyAndHeaders",
    "asyncSend",
    "asyncSendBody",
    "asyncRequestBody",
    "asyncCallback",
];

/// The in-process endpoint a string literal names, without `?options`.
fn camel_endpoint(literal: &str) -> Option<String> {
    let l = literal.trim();
    CAMEL_IN_PROCESS
        .iter()
        .any(|s| l.starts_with(s))
        .then(|| l.split('?').next().unwrap_or(l).to_string())
}

/// The endpoint of the `from(..)` a route chain starts with: the first string literal of
/// the receiver text when it begins with `from(`.
fn camel_route_head(receiver: &str) -> Option<String> {
    let r = receiver.trim_start();
    let rest = r.strip_prefix("from(")?;
    let open = rest.find('"')?;
    let after = &rest[open + 1..];
    let close = after.find('"')?;
    camel_endpoint(&after[..close])
}

/// The declared type of the field `name` in a Java or Kotlin file (its simple name, by
/// [`crate::lang::declared_type`]).
fn field_type(text: &str, model: &FileModel, name: &str) -> Option<String> {
    let b = model
        .bindings
        .iter()
        .find(|b| b.kind == BindingKind::Field && b.name == name)?;
    let t = crate::lang::declared_type(model.language, text, b);
    let t = t.rsplit('.').next().unwrap_or(&t);
    (!t.is_empty()).then(|| t.to_string())
}

/// Camel routes and sends of one JVM file importing `org.apache.camel` (see [`CamelRoute`]
/// and [`CamelSend`]).
fn camel_facts(
    path: &str,
    text: &str,
    lines: &LineIndex,
    model: &FileModel,
    facts: &FileFacts,
    cat: &Catalogue,
) -> (Vec<CamelRoute>, Vec<CamelSend>) {
    let mut routes: Vec<CamelRoute> = Vec::new();
    let mut sends = Vec::new();
    if model.language == Language::Rust || !text.contains("org.apache.camel") {
        return (routes, sends);
    }
    for call in &model.calls {
        // A route step: `.process(..)` / `.to(..)` on a chain that starts at `from(..)`.
        if let Some(endpoint) = call.receiver.as_deref().and_then(camel_route_head) {
            let idx = match routes.iter().position(|r| r.endpoint == endpoint) {
                Some(i) => i,
                None => {
                    routes.push(CamelRoute {
                        endpoint,
                        ..CamelRoute::default()
                    });
                    routes.len() - 1
                }
            };
            match call.callee.as_str() {
                "process" if call.args.len() == 1 => {
                    let v = &model.values[call.args[0].value];
                    let constructed = v.atoms.iter().find_map(|a| match a {
                        Atom::Call(c) if model.calls[*c].is_new => {
                            Some(model.calls[*c].callee.clone())
                        }
                        _ => None,
                    });
                    let ty = constructed.or_else(|| {
                        let name = v.ident.as_deref()?;
                        field_type(text, model, name)
                    });
                    if let Some(t) = ty
                        && !routes[idx].processors.contains(&t)
                    {
                        routes[idx].processors.push(t);
                    }
                }
                "to" | "toD" | "enrich" | "wireTap" => {
                    for a in &call.args {
                        if let Some(e) = model.values[a.value]
                            .literal
                            .as_deref()
                            .and_then(camel_endpoint)
                            && !routes[idx].to.contains(&e)
                        {
                            routes[idx].to.push(e);
                        }
                    }
                }
                _ => {}
            }
            continue;
        }
        // A send through a producer template, inside an attempt boundary.
        if !CAMEL_SENDS.contains(&call.callee.as_str()) || call.args.is_empty() {
            continue;
        }
        let template = call
            .receiver_type
            .as_deref()
            .is_some_and(|t| t.ends_with("ProducerTemplate"))
            || crate::catalogue::receiver_text(call).is_some_and(|r| {
                crate::catalogue::last_segment(&r)
                    .to_ascii_lowercase()
                    .contains("template")
            });
        let Some(endpoint) = model.values[call.args[0].value]
            .literal
            .as_deref()
            .and_then(camel_endpoint)
        else {
            continue;
        };
        if !template {
            continue;
        }
        let Some(b) = model
            .ancestors(call.scope)
            .find_map(|s| facts.boundaries[s].as_ref())
        else {
            continue;
        };
        sends.push(CamelSend {
            endpoint,
            boundary: ParamBoundary {
                kind: b.kind,
                entry: b.entry.clone(),
                flavor: b.flavor.clone(),
            },
            // The construct, and why it runs again (the catalogue entry's words).
            label: match cat.boundaries.iter().find(|e| e.id == b.entry) {
                Some(e) if !e.label.is_empty() && !b.label.contains(&e.label) => {
                    format!("{} ({})", b.label, e.label)
                }
                _ => b.label.clone(),
            },
            location: location(path, lines, text, call.name_span.start),
        });
    }
    routes.retain(|r| !r.processors.is_empty() || !r.to.is_empty());
    (routes, sends)
}

fn location(path: &str, lines: &LineIndex, text: &str, offset: usize) -> String {
    format!("{path}:{}", lines.position(text, offset).line)
}

/// A file's distinct calls while it is summarised: a lock-free cache in front of the
/// process-wide table of [`SharedCall`]s (generated code makes the same call thousands of
/// times in one file).
#[derive(Default)]
struct CallTable(HashMap<CallRef, SharedCall>);

/// A name or type text: most are repeated many times (every method of a type holds its
/// name), so each distinct text is stored once, process-wide ([`crate::name`]).
pub use crate::name::Name;

/// One file's distinct [`Name`]s, while it is summarised: a lock-free cache in front of
/// the process-wide table (taking a shard's lock for every name cost about 4 % of
/// `--no-prefilter` user time on fineract).
#[derive(Default)]
struct Names(HashSet<Name>);

impl Names {
    fn get(&mut self, s: &str) -> Name {
        if let Some(n) = self.0.get(s) {
            return *n;
        }
        let n = Name::new(s);
        self.0.insert(n);
        n
    }
}

impl CallTable {
    /// The process-wide copy of `r`.
    fn intern(&mut self, r: CallRef) -> SharedCall {
        *self.0.entry(r).or_insert_with_key(SharedCall::new)
    }
}

/// The 1-based line of byte `offset` (saturating at `u32::MAX`).
fn line_of(lines: &LineIndex, text: &str, offset: usize) -> u32 {
    u32::try_from(lines.position(text, offset).line).unwrap_or(u32::MAX)
}

impl FnDecl {
    /// The number of declared parameters ([`Self::param_count`]).
    pub fn arity(&self) -> usize {
        self.param_count as usize
    }

    /// [`TypeCtx::name`].
    pub fn type_name(&self) -> Name {
        self.ty.name
    }

    /// [`TypeCtx::norm`].
    pub fn type_norm(&self) -> Name {
        self.ty.norm
    }

    /// [`TypeCtx::outer`].
    pub fn type_outer(&self) -> Name {
        self.ty.outer
    }

    /// [`TypeCtx::supers`].
    pub fn type_supers(&self) -> SharedNames {
        self.ty.supers
    }

    /// [`TypeCtx::extends`].
    pub fn extends(&self) -> Name {
        self.ty.extends
    }

    /// [`TypeCtx::companion`].
    pub fn companion(&self) -> bool {
        self.ty.companion
    }

    /// [`TypeCtx::test_source`].
    pub fn test_source(&self) -> bool {
        self.ty.test_source
    }

    /// [`TypeCtx::jvm`].
    pub fn jvm(&self) -> bool {
        self.ty.jvm
    }

    /// Gives back the spare capacity of the declaration's lists: pass 1 keeps every
    /// declaration of the project until the index is built, and lists grown by doubling
    /// hold up to twice what they use.
    fn shrink(&mut self) {
        self.passes_params.shrink_to_fit();
        self.self_calls.shrink_to_fit();
        if let Some(r) = self.rare.as_deref_mut() {
            r.key_params.shrink_to_fit();
            r.overwrites.shrink_to_fit();
            r.key_param_sinks.shrink_to_fit();
            r.named_param_writes.shrink_to_fit();
            r.mint_via_fresh.shrink_to_fit();
            r.keyed_arg_candidates.shrink_to_fit();
            r.retry_params.shrink_to_fit();
            r.retry_on_throw.shrink_to_fit();
            r.boundary_params.shrink_to_fit();
            r.handled_calls.shrink_to_fit();
            r.param_sinks_handled.shrink_to_fit();
            r.param_sinks_unhandled.shrink_to_fit();
        }
    }

    /// The declaration's rare fields, empty when it has none.
    pub fn rare(&self) -> &FnRare {
        static NONE: std::sync::LazyLock<FnRare> = std::sync::LazyLock::new(FnRare::default);
        self.rare.as_deref().unwrap_or(&NONE)
    }

    /// [`FnRare::key_params`].
    pub fn key_params(&self) -> &[(usize, String)] {
        self.rare.as_deref().map_or(&[], |r| &r.key_params)
    }

    /// [`FnRare::fresh`].
    pub fn fresh(&self) -> Option<&HelperInfo> {
        self.rare.as_deref().and_then(|r| r.fresh.as_deref())
    }

    /// [`FnRare::mints`].
    pub fn mints(&self) -> Option<&MintInfo> {
        self.rare.as_deref().and_then(|r| r.mints.as_deref())
    }

    /// [`FnRare::overwrites`].
    pub fn overwrites(&self) -> &[Name] {
        self.rare.as_deref().map_or(&[], |r| &r.overwrites)
    }

    /// The declaration's rare fields, to add to (boxed on first use).
    pub fn rare_mut(&mut self) -> &mut FnRare {
        self.rare.get_or_insert_with(Default::default)
    }

    /// The callees of [`Self::self_calls`], in name order, each once.
    pub fn self_callees(&self) -> impl Iterator<Item = &str> + '_ {
        self.self_calls
            .iter()
            .filter_map(|&i| self.call_refs.get(i as usize))
            .map(|r| &*r.callee)
    }

    /// `path:line` of the declaration, as messages quote it.
    pub fn location(&self) -> String {
        format!("{}:{}", self.path, self.line)
    }

    /// Orders declarations as their [`Self::location`] strings compare (byte-wise, so
    /// `a.kt:100` before `a.kt:20`), without building them: the index keeps each name's
    /// declarations in this order, which decides the first one quoted.
    pub fn location_cmp(&self, other: &FnDecl) -> std::cmp::Ordering {
        fn digits(n: u32, buf: &mut [u8; 10]) -> &[u8] {
            let mut i = buf.len();
            let mut n = n;
            loop {
                i -= 1;
                buf[i] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    return &buf[i..];
                }
            }
        }
        let (mut x, mut y) = ([0u8; 10], [0u8; 10]);
        let a = self
            .path
            .bytes()
            .chain([b':'])
            .chain(digits(self.line, &mut x).iter().copied());
        let b = other
            .path
            .bytes()
            .chain([b':'])
            .chain(digits(other.line, &mut y).iter().copied());
        a.cmp(b)
    }
}

/// Pass 1: summarises one classified file.
/// Whether origin `o` of a value in function `f` is evaluated on each call of `f`, as far
/// as construction goes: not when it is a field's initialiser or lies in a constructor (a
/// function named as its type) other than `f`, since those run once per object, when it is
/// built, not on each call of a method that reads the field. A field initialiser counts for
/// the constructors of its own type. (Values other code stores are still followed by name:
/// a builder's `.id(UUID..)` in a factory method a listener calls per delivery.)
fn evaluated_per_call(model: &FileModel, f: ScopeId, o: &crate::flow::Origin) -> bool {
    if model.scopes[f].span.contains(o.span) {
        return true;
    }
    let constructor = |g: ScopeId| {
        model.scopes[g].parent.is_some_and(|p| {
            model
                .type_info(p)
                .is_some_and(|t| model.function_info(g).is_some_and(|fi| fi.name == t.name))
        })
    };
    let field_init = matches!(
        model.scopes[o.scope].kind,
        ScopeKind::Type(_) | ScopeKind::Object(_)
    );
    if field_init {
        return model.scopes[f].parent == Some(o.scope) && constructor(f);
    }
    !model.enclosing_function(o.scope).is_some_and(constructor)
}

pub fn summarize(
    path: &str,
    text: &str,
    lines: &LineIndex,
    model: &FileModel,
    facts: &FileFacts,
    cat: &Catalogue,
) -> FileSummary {
    let flow = Flow::new(model, cat);
    let refs = crate::flow::CallRefCache::default();
    let mut out = FileSummary::default();
    let lang = model.language;

    // Which scopes belong to which function (innermost function ancestor).
    let owner_fn: Vec<Option<ScopeId>> = (0..model.scopes.len())
        .map(|s| model.enclosing_function(s))
        .collect();

    let mut decls: HashMap<ScopeId, FnDecl> = HashMap::new();
    let mut calls = CallTable::default();
    let mut names = Names::default();
    let file_path = Name::from(path);
    for (i, s) in model.scopes.iter().enumerate() {
        let ScopeKind::Function(f) = &s.kind else {
            continue;
        };
        let key_params: ThinVec<(usize, String)> = f
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                cat.is_key_name(&p.name)
                    || cat
                        .header_param
                        .is_key_param(cat, &f.annotations, &p.annotations)
            })
            .map(|(i, p)| (i, p.name.clone()))
            .collect();
        let outer_of = |t: ScopeId| model.scopes[t].parent.and_then(|p| model.enclosing_type(p));
        let owner_scope = s.parent.and_then(|p| model.enclosing_type(p));
        let owner = owner_scope.and_then(|t| model.type_info(t));
        // A Kotlin companion object's functions are called through the enclosing class
        // (`Ids.fresh()`): they are declared as that class's, with the companion's own
        // supertypes.
        let companion = owner.is_some_and(|o| o.companion);
        let named_scope = match owner_scope {
            Some(t) if companion => outer_of(t).or(Some(t)),
            other => other,
        };
        let type_name = named_scope
            .and_then(|t| model.type_info(t))
            .map(|t| t.name.clone())
            .unwrap_or_default();
        let type_outer = named_scope
            .and_then(outer_of)
            .and_then(|t| model.type_info(t))
            .map(|t| t.name.clone())
            .unwrap_or_default();
        let type_supers = owner.map(|t| t.supertypes.clone()).unwrap_or_default();
        let reads_key_header = facts
            .header_reads
            .iter()
            .any(|(_, sc)| model.enclosing_function(*sc) == Some(i));
        let return_type = {
            let head = f
                .return_type
                .split(['<', '?', '[', ' ', '('])
                .next()
                .unwrap_or("");
            let last = head.rsplit(['.', ':']).next().unwrap_or("");
            if last.starts_with(char::is_uppercase)
                && last.chars().all(|c| c.is_alphanumeric() || c == '_')
            {
                last.to_string()
            } else {
                String::new()
            }
        };
        // A Spring Cloud OpenFeign client: a `@FeignClient` interface's method mapped with
        // Spring MVC's annotations is sent by Feign, whose request interceptors it runs; so
        // may a mapped method of a plain interface, which a `@FeignClient` interface can
        // extend ("Feign Inheritance Support"). A controller's mapped methods have bodies.
        let in_interface = bodiless(lang, text.get(s.span.start..s.span.end).unwrap_or(""));
        let feign_endpoint = (in_interface
            || owner.is_some_and(|o| o.annotations.iter().any(|a| a.name == "FeignClient")))
            && lang != Language::Rust
            && f.annotations
                .iter()
                .any(|a| SPRING_MAPPING_ANNOTATIONS.contains(&a.name.as_str()));
        let mut d = FnDecl {
            return_type: names.get(&return_type),
            name: Name::from(&f.name),
            param_count: count_u32(f.params.len()),
            defaults_possible: lang == Language::Kotlin,
            line: line_of(lines, text, f.name_span.start),
            path: file_path,
            ty: SharedType::new(&TypeCtx {
                name: names.get(&type_name),
                extends: names.get(&f.extends),
                outer: names.get(&type_outer),
                supers: type_supers.iter().map(|t| names.get(t)).collect(),
                companion,
                test_source: is_test_source(path),
                jvm: lang != Language::Rust,
                norm: Name::default(),
            }),
            reads_key_header,
            param_names: f.params.iter().map(|p| names.get(&p.name)).collect(),
            bodiless: bodiless(lang, text.get(s.span.start..s.span.end).unwrap_or("")),
            http: f
                .annotations
                .iter()
                .fold(0, |acc, a| acc | endpoint_client(&a.name))
                | if feign_endpoint { HTTP_FEIGN } else { 0 },
            endpoint: feign_endpoint
                || f.annotations
                    .iter()
                    .any(|a| HTTP_ENDPOINT_ANNOTATIONS.contains(&a.name.as_str())),
            ..FnDecl::default()
        };
        if !key_params.is_empty() {
            d.rare_mut().key_params = key_params;
        }
        // Fresh return values.
        let rec = Recorder::cached(&refs);
        // An attempt counter is new on each attempt of the loop around it only: callers of
        // a function returning one do not get a new value per call.
        for v in flow.returns_of(i) {
            for o in flow
                .origins(v, &rec)
                .into_iter()
                .filter(|o| !o.counter && evaluated_per_call(model, i, o))
            {
                if d.fresh().is_none() {
                    d.rare_mut().fresh = Some(Box::new(HelperInfo {
                        kind: o.kind,
                        source: o.display.clone(),
                        location: location(path, lines, text, o.span.start),
                        ambiguous: None,
                    }));
                }
            }
        }
        d.fresh_via = rec
            .asked
            .into_inner()
            .into_iter()
            .map(|r| calls.intern(r))
            .collect();
        decls.insert(i, d);
    }

    infer_retry_params(path, text, lines, model, &mut decls, &mut calls, &mut names);
    infer_boundary_params(path, text, lines, model, cat, &mut decls);

    // Sinks inside functions: direct mints and mints through helpers.
    for sink in &facts.sinks {
        let Some(f) = owner_fn[sink.scope] else {
            continue;
        };
        if let Some(info) = handler_info(lang, model, f) {
            let at = location(path, lines, text, model.values[sink.value].span.start);
            out.bound_key_fields
                .extend(bound_fields(&flow, model, info, f, sink.value, &at));
        }
        let rec = Recorder::cached(&refs);
        let origins = flow.origins(sink.value, &rec);
        let Some(d) = decls.get_mut(&f) else { continue };
        let sink_handled =
            model.failure_caught_all(model.values[sink.value].span.start, model.scopes[f].span);
        d.sink_unhandled |= !sink_handled;
        if d.mints().is_none()
            && let Some(o) = origins.iter().find(|o| evaluated_per_call(model, f, o))
        {
            d.rare_mut().mints = Some(Box::new(MintInfo {
                source: o.display.clone(),
                kind: o.kind,
                location: location(path, lines, text, o.span.start),
                function: d.name.to_string(),
            }));
        }
        d.rare_mut()
            .mint_via_fresh
            .extend(rec.asked.into_inner().into_iter().map(|r| calls.intern(r)));
        // A parameter whose value reaches the sink is a key parameter too, whatever its
        // name (`for_customer(transaction_id, ..)` building `Self { transaction_id, .. }`):
        // a caller's positional argument there is the key.
        if let ScopeKind::Function(info) = &model.scopes[f].kind {
            for b in flow.params_reaching(sink.value) {
                let binding = &model.bindings[b];
                if binding.scope != f {
                    continue;
                }
                if let Some(pi) = info.params.iter().position(|p| p.name == binding.name) {
                    if sink_handled {
                        d.rare_mut().param_sinks_handled.push(pi);
                    } else {
                        d.rare_mut().param_sinks_unhandled.push(pi);
                    }
                }
                if let Some(pi) = info.params.iter().position(|p| p.name == binding.name)
                    && !d.key_params().iter().any(|(i, _)| *i == pi)
                {
                    d.rare_mut().key_params.push((pi, binding.name.clone()));
                    d.rare_mut().key_param_sinks.push((
                        pi,
                        location(path, lines, text, model.values[sink.value].span.start),
                    ));
                }
            }
        }
    }

    // Fields assigned under no condition (JVM builder methods).
    if lang != Language::Rust {
        let inside = |spans: &[Span], x: Span| spans.iter().any(|c| c.contains(x));
        for a in &model.assigns {
            let Some(f) = owner_fn[a.scope] else { continue };
            if a.scope != f || inside(&model.conditional, a.span) || inside(&model.catches, a.span)
            {
                continue;
            }
            if let Some(d) = decls.get_mut(&f) {
                let n = crate::catalogue::normalize_name(&a.name);
                if !d.overwrites().iter().any(|o| **o == *n) {
                    d.rare_mut().overwrites.push(names.get(&n));
                }
            }
        }
    }

    // Parameters written under names another file may declare keys.
    for w in &facts.named_writes {
        let Some(f) = owner_fn[w.scope] else {
            continue;
        };
        let ScopeKind::Function(info) = &model.scopes[f].kind else {
            continue;
        };
        let Some(d) = decls.get_mut(&f) else { continue };
        for b in flow.params_reaching(w.value) {
            let binding = &model.bindings[b];
            if binding.scope != f {
                continue;
            }
            if let Some(pi) = info.params.iter().position(|p| p.name == binding.name) {
                d.rare_mut().named_param_writes.push((
                    pi,
                    w.name.clone(),
                    w.qualifier.clone(),
                    w.slot,
                    location(path, lines, text, model.values[w.value].span.start),
                ));
            }
        }
    }

    // Library calls that mint their own key per request: the function mints one.
    for (cid, entry) in &facts.library_mints {
        let call = &model.calls[*cid];
        let Some(f) = owner_fn[call.scope] else {
            continue;
        };
        let e = &cat.minting_calls[*entry];
        if let Some(d) = decls.get_mut(&f) {
            d.sink_unhandled |= !model.failure_caught_all(call.span.start, model.scopes[f].span);
        }
        if let Some(d) = decls.get_mut(&f)
            && d.mints().is_none()
        {
            d.rare_mut().mints = Some(Box::new(MintInfo {
                source: e.source.clone(),
                kind: SourceKind::Random,
                location: e.label.clone(),
                function: d.name.to_string(),
            }));
        }
    }

    // Calls made by each function, and positional arguments carrying ephemeral values.
    // An argument that is a plain name reaches what its binding's value reaches: walked
    // once per binding (a handler passing one local to many calls).
    // (Only a local never reassigned: what a reassigned one holds depends on where it is
    // read.)
    let mut by_binding: HashMap<usize, Vec<BoundKeyField>> = HashMap::new();
    let reassigned: HashSet<&str> = model.assigns.iter().map(|a| a.name.as_str()).collect();
    // Calls recorded per declaration ([`FnDecl::call_refs`]), with their handling.
    let mut recorded: HashSet<(ScopeId, CallRef, bool)> = HashSet::new();
    // Each declaration's calls as they are recorded, interned once complete.
    let mut call_lists: HashMap<ScopeId, ThinVec<SharedCall>> = HashMap::new();
    // The arguments walked for keyed-argument candidates below, and the functions where
    // some of them may have an origin: one walk over all of a function's arguments
    // ([`crate::flow::Flow::any_origin`]) spares the walk per argument in the functions
    // where none has (most). A walk that runs out of budget spares nothing.
    let walked_arg = |arg: &crate::model::Arg| {
        arg.name.is_none()
            && arg.lambda.is_none()
            && model.values[arg.value]
                .atoms
                .iter()
                .any(|a| matches!(a, Atom::Source(_) | Atom::Name { .. }))
    };
    let arg_origins: HashSet<ScopeId> = {
        let mut by_fn: BTreeMap<ScopeId, Vec<crate::model::ValueId>> = BTreeMap::new();
        for call in &model.calls {
            if let Some(f) = owner_fn[call.scope] {
                let args = call.args.iter().filter(|a| walked_arg(a));
                by_fn.entry(f).or_default().extend(args.map(|a| a.value));
            }
        }
        let mut out = HashSet::new();
        for (f, values) in by_fn {
            let rec = Recorder::cached(&refs);
            if flow.any_origin(&values, &rec) != Some(false) {
                out.insert(f);
            }
        }
        out
    };
    for call in &model.calls {
        let Some(f) = owner_fn[call.scope] else {
            continue;
        };
        if let Some(info) = handler_info(lang, model, f) {
            for (i, arg) in call.args.iter().enumerate() {
                if arg.name.is_some() || arg.lambda.is_some() {
                    continue;
                }
                let line = lines
                    .position(text, model.values[arg.value].span.start)
                    .line;
                let local = match model.values[arg.value].atoms.as_slice() {
                    [Atom::Name { name, offset }] if !reassigned.contains(name.as_str()) => flow
                        .lookup(name, *offset)
                        .filter(|b| model.bindings[*b].kind == BindingKind::Local),
                    _ => None,
                };
                let fresh;
                let found = match local {
                    Some(b) => by_binding
                        .entry(b)
                        .or_insert_with(|| bound_fields(&flow, model, info, f, arg.value, "")),
                    None => {
                        fresh = bound_fields(&flow, model, info, f, arg.value, "");
                        &fresh
                    }
                };
                for b in found {
                    out.bound_arg_candidates.push(BoundArgCandidate {
                        callee: Name::from(call.callee.as_str()),
                        arity: call.args.len() as u32,
                        position: i as u32,
                        type_name: Name::from(b.type_name.as_str()),
                        field: Name::from(b.field.as_str()),
                        handler: Name::from(b.handler.as_str()),
                        path: Name::from(path),
                        line: line as u32,
                    });
                }
            }
        }
        let mut candidates = Vec::new();
        for (i, arg) in call.args.iter().enumerate() {
            if !arg_origins.contains(&f) || !walked_arg(arg) {
                continue;
            }
            let rec = Recorder::cached(&refs);
            if let Some(o) = flow
                .origins(arg.value, &rec)
                .iter()
                .find(|o| evaluated_per_call(model, f, o))
            {
                candidates.push(KeyedArg {
                    callee: names.get(call.callee.as_str()),
                    arity: u32::try_from(call.args.len()).unwrap_or(u32::MAX),
                    position: u32::try_from(i).unwrap_or(u32::MAX),
                    source: names.get(&o.display),
                    kind: o.kind,
                    line: line_of(lines, text, o.span.start),
                });
            }
        }
        if let Some(d) = decls.get_mut(&f) {
            let mut self_call = false;
            if lang != Language::Rust {
                if call.callee == "newCall" {
                    d.http |= HTTP_OKHTTP;
                }
                if is_spring_http_call(call) {
                    d.http |= HTTP_SPRING;
                }
            }
            if lang != Language::Rust
                && matches!(
                    crate::catalogue::receiver_text(call).as_deref(),
                    None | Some("this")
                )
            {
                self_call = true;
            }
            // One entry per distinct call and handling: every reader asks whether some
            // recorded call (handled or not) resolves somewhere.
            let handled = model.failure_caught_all(call.span.start, model.scopes[f].span);
            let r = CallRef::of(call);
            let list = call_lists.entry(f).or_default();
            if recorded.insert((f, r, handled)) {
                if handled {
                    let at = list.len() as u32;
                    d.rare_mut().handled_calls.push(at);
                }
                list.push(calls.intern(r));
            }
            if self_call && let Some(at) = list.iter().rposition(|r| *r.callee == *call.callee) {
                d.self_calls.push(at as u32);
            }
            for c in candidates {
                d.rare_mut().keyed_arg_candidates.push(c);
            }
        }
    }
    for lock in &facts.locks {
        if let Some(f) = owner_fn[lock.scope]
            && let Some(d) = decls.get_mut(&f)
        {
            d.has_lock = true;
        }
    }
    for (f, d) in decls.iter_mut() {
        if let Some(list) = call_lists.remove(f) {
            d.call_refs = SharedCalls::new(&list);
        }
        let refs = &d.call_refs;
        d.self_calls
            .sort_unstable_by(|a, b| refs[*a as usize].callee.cmp(&refs[*b as usize].callee));
        d.self_calls
            .dedup_by(|a, b| refs[*a as usize].callee == refs[*b as usize].callee);
        d.shrink();
    }
    let mut fns: Vec<(ScopeId, FnDecl)> = decls.into_iter().collect();
    fns.sort_by_key(|(s, _)| *s);
    out.functions = fns.into_iter().map(|(_, d)| d).collect();

    // A Kotlin constructor whose key property defaults to a fresh value mints a key when
    // a call leaves that argument out: a declaration of the class's name whose arity is
    // the key's position (so only calls with fewer arguments reach it, see `arity_ok`).
    for cd in &model.ctor_defaults {
        if !cat.is_key_name(&cd.name) {
            continue;
        }
        let rec = Recorder::cached(&refs);
        let Some(o) = flow.origins(cd.value, &rec).into_iter().next() else {
            continue;
        };
        out.functions.push(FnDecl {
            name: Name::from(&cd.type_name),
            param_count: count_u32(cd.index),
            defaults_possible: true,
            line: line_of(lines, text, cd.span.start),
            path: Name::from(path),
            ty: SharedType::new(&TypeCtx {
                test_source: is_test_source(path),
                jvm: true,
                ..TypeCtx::default()
            }),
            rare: Some(Box::new(FnRare {
                mints: Some(Box::new(MintInfo {
                    source: o.display.clone(),
                    kind: o.kind,
                    location: location(path, lines, text, o.span.start),
                    function: cd.type_name.clone(),
                })),
                ..FnRare::default()
            })),
            ..FnDecl::default()
        });
    }

    // A constructor whose parameters are fields (a Java record's canonical constructor, a
    // Kotlin primary constructor's properties) has no declaration of its own: one is made
    // when a field is named like a key, whose parameter is then a key parameter. Calls in
    // other files reach the field through it (`PayoutCommand(UUID.randomUUID().toString(),
    // amount)`); calls in this file also see the field itself
    // ([`crate::model::FileModel::components_written`]).
    for (ty, fields, scope) in &model.components {
        let key_params: ThinVec<(usize, String)> = fields
            .iter()
            .enumerate()
            .filter(|(_, n)| !n.is_empty() && cat.is_key_name(n))
            .map(|(i, n)| (i, n.clone()))
            .collect();
        // Unless the constructor is written out (a record's explicit canonical one): the
        // same parameters by name. Another constructor of the same arity is an overload.
        if key_params.is_empty()
            || out.functions.iter().any(|f| {
                *f.name == **ty
                    && f.arity() == fields.len()
                    && f.param_names.iter().zip(fields).all(|(a, b)| **a == **b)
            })
        {
            continue;
        }
        let at = model.scopes[*scope].span.start;
        // The type it is nested in, if any: `Outer.Inner(..)` reaches it.
        let outer = model
            .outer_type_name(*scope)
            .map(Name::from)
            .unwrap_or_default();
        out.functions.push(FnDecl {
            name: Name::from(ty),
            ty: SharedType::new(&TypeCtx {
                name: Name::from(ty),
                outer,
                test_source: is_test_source(path),
                jvm: lang != Language::Rust,
                ..TypeCtx::default()
            }),
            param_count: count_u32(fields.len()),
            // Exactly this arity: a call that leaves a defaulted argument out is another
            // constructor's (the `ctor_defaults` declarations above, a secondary one).
            defaults_possible: false,
            rare: Some(Box::new(FnRare {
                key_params,
                ..FnRare::default()
            })),
            line: line_of(lines, text, at),
            path: Name::from(path),
            param_names: fields.iter().map(Name::from).collect(),
            ..FnDecl::default()
        });
    }

    // ShedLock enabled here? Only `@EnableSchedulerLock` creates the advisor that makes
    // `@SchedulerLock` take the lock; a `LockProvider` bean alone does not (the
    // annotation is then inert, see `../shared/notes/library-semantics.md`).
    out.shedlock_enabled = model
        .annotations
        .iter()
        .any(|a| cat.shedlock.enable_annotations.contains(&a.name));

    // Interceptors that retry: `proceed` called more than once, or inside a loop.
    let proceed_calls: Vec<&Call> = model
        .calls
        .iter()
        .filter(|c| c.callee == "proceed")
        .collect();
    let retries_within = |scope: ScopeId| -> bool {
        let inside: Vec<&&Call> = proceed_calls
            .iter()
            .filter(|c| model.is_within(c.scope, scope))
            .collect();
        inside.len() >= 2
            || inside.iter().any(|c| {
                model
                    .ancestors(c.scope)
                    .take_while(|s| *s != scope)
                    .any(|s| matches!(model.scopes[s].kind, ScopeKind::Loop(_)))
            })
    };
    for (i, s) in model.scopes.iter().enumerate() {
        if let ScopeKind::Function(f) = &s.kind
            && f.name == "intercept"
            && retries_within(i)
            && let Some(t) = s.parent.and_then(|p| model.type_info(p))
            && !t.name.is_empty()
        {
            out.retrying_types.push(t.name.clone());
        }
    }

    // Registrations. The call each call is the receiver of (the first, as `chain_top`
    // climbs), and each chain's client holder, computed once per file and chain.
    let mut outer: Option<Vec<Option<CallId>>> = None;
    let mut holders: HashMap<CallId, Option<String>> = HashMap::new();
    for (cid, call) in model.calls.iter().enumerate() {
        let Some(entry) = cat
            .registrations
            .iter()
            .find(|r| r.call.matches(lang, call))
        else {
            continue;
        };
        let chain = chain_key(path, model, cid);
        let client = if lang == Language::Rust {
            None
        } else {
            let outer = outer.get_or_insert_with(|| outer_calls(model));
            let top = chain_top(outer, cid);
            holders
                .entry(top)
                .or_insert_with(|| client_holder(model, outer, top))
                .clone()
        };
        for arg in &call.args {
            let retrying = arg
                .type_hint
                .as_ref()
                .is_some_and(|t| entry.retrying_types.contains(t))
                || arg.lambda.is_some_and(&retries_within);
            out.registrations.push(Registration {
                stage: entry.stage.clone(),
                type_name: arg.type_hint.clone(),
                chain: chain.clone(),
                offset: call.name_span.start,
                path: path.to_string(),
                location: location(path, lines, text, call.name_span.start),
                retrying,
                client: client.clone(),
            });
        }
    }
    if lang != Language::Rust && text.contains("Retrofit") {
        out.retrofit_services = retrofit_services(model, text);
    }

    out.retry_boundaries = facts
        .boundaries
        .iter()
        .flatten()
        .filter(|b| b.kind == crate::catalogue::BoundaryKind::Retry)
        .count();
    if lang != Language::Rust {
        out.reactive_retries = model
            .calls
            .iter()
            .filter(|c| is_reactive_retry(c))
            .map(|c| location(path, lines, text, c.span.start))
            .collect();
    }
    if lang != Language::Rust {
        // Sites: retry boundaries outside interceptors, and lambdas passed to functions
        // that may turn out to be retry combinators. Each call is added to the sites among
        // its ancestors in one walk (linear in calls times nesting depth).
        let mut site_of: HashMap<ScopeId, usize> = HashMap::new();
        // The callees of each site's calls, as they are found (parallel to the sites).
        let mut site_calls: Vec<Vec<Name>> = vec![Vec::new(); out.retry_sites.len()];
        for (i, b) in facts.boundaries.iter().enumerate() {
            let Some(b) = b else { continue };
            if b.kind != crate::catalogue::BoundaryKind::Retry
                || model.ancestors(i).any(|a| {
                    facts.boundaries[a]
                        .as_ref()
                        .is_some_and(|x| x.kind == crate::catalogue::BoundaryKind::Interceptor)
                })
            {
                continue;
            }
            site_of.insert(i, out.retry_sites.len());
            site_calls.push(Vec::new());
            out.retry_sites.push(RetrySite {
                path: Name::from(path),
                line: lines.position(text, b.anchor.start).line as u32,
                calls: Default::default(),
                via: None,
            });
        }
        for call in &model.calls {
            if NOT_COMBINATORS.contains(&call.callee.as_str()) {
                continue;
            }
            for (ai, arg) in call.args.iter().enumerate() {
                let Some(l) = arg.lambda else { continue };
                if facts.boundaries[l].is_some() || site_of.contains_key(&l) {
                    continue;
                }
                site_of.insert(l, out.retry_sites.len());
                site_calls.push(Vec::new());
                out.retry_sites.push(RetrySite {
                    path: Name::from(path),
                    line: lines.position(text, call.name_span.start).line as u32,
                    calls: Default::default(),
                    via: Some((
                        names.get(&call.callee),
                        ai,
                        call.args.len(),
                        arg.name.as_deref().map(|n| names.get(n)),
                    )),
                });
            }
        }
        if !site_of.is_empty() {
            for call in &model.calls {
                for a in model.ancestors(call.scope) {
                    if let Some(si) = site_of.get(&a) {
                        site_calls[*si].push(names.get(&call.callee));
                        if is_spring_http_call(call) {
                            site_calls[*si].push(Name::from(SENDS_SPRING));
                        }
                        if call.callee == "newCall" {
                            site_calls[*si].push(Name::from(SENDS_OKHTTP));
                        }
                    }
                }
            }
            for (site, mut calls) in out.retry_sites.iter_mut().zip(site_calls) {
                calls.sort_unstable();
                calls.dedup();
                site.calls = calls.into_iter().collect();
            }
            out.retry_sites
                .retain(|s| s.via.is_none() || !s.calls.is_empty());
        }
    }
    for c in &model.calls {
        if c.callee == "clone"
            && c.args.is_empty()
            && c.receiver
                .as_deref()
                .is_some_and(|r| r.to_ascii_lowercase().contains("call"))
        {
            let (client, service) = cloned_call_client(model, c);
            out.clone_sites.push(CloneSite {
                location: location(path, lines, text, c.name_span.start),
                client,
                service,
            });
        }
    }
    out.named_keys = named_keys(path, text, lines, model, cat);
    (out.camel_routes, out.camel_sends) = camel_facts(path, text, lines, model, facts, cat);
    if lang == Language::Kotlin {
        for b in model.bindings.iter().filter(|b| {
            b.kind == BindingKind::Field
                && matches!(
                    model.scopes[b.scope].kind,
                    ScopeKind::Type(_) | ScopeKind::Object(_)
                )
        }) {
            let ty = crate::lang::declared_type(lang, text, b);
            let ty = ty.rsplit('.').next().unwrap_or(&ty).to_string();
            let mut cs = b.name.chars();
            if let Some(first) = cs.next()
                && !ty.is_empty()
            {
                let getter = format!("get{}{}", first.to_uppercase(), cs.as_str());
                out.property_getters.push((getter, ty));
            }
        }
    }
    out.path = path.to_string();
    if lang != Language::Rust {
        for (i, s) in model.scopes.iter().enumerate() {
            if let ScopeKind::Type(t) = &s.kind
                && !t.name.is_empty()
            {
                let top = model.scopes[i]
                    .parent
                    .is_none_or(|p| model.enclosing_type(p).is_none());
                out.types.push((t.name.clone(), t.supertypes.clone(), top));
            }
        }
        out.type_boundaries = type_boundaries(model, text, cat);
    }
    out
}

/// The [`TypeBoundary`]s of a JVM file: the annotations of its `on_interface` boundary
/// entries (those that apply to the file, imports included) on its named types and on
/// their methods.
fn type_boundaries(model: &FileModel, text: &str, cat: &Catalogue) -> Vec<TypeBoundary> {
    let entries: Vec<&crate::catalogue::BoundaryEntry> =
        crate::classify::applicable_boundaries(cat, model.language, text)
            .into_iter()
            .filter(|e| {
                e.on_interface && e.form == crate::catalogue::BoundaryForm::AnnotatedFunction
            })
            .collect();
    let mut out = Vec::new();
    if entries.is_empty() {
        return out;
    }
    let found = |annotations: &[crate::model::Annotation], e: &crate::catalogue::BoundaryEntry| {
        annotations
            .iter()
            .find(|a| e.annotations.contains(&a.name))
            .map(|a| a.name.clone())
    };
    for s in &model.scopes {
        let ScopeKind::Function(f) = &s.kind else {
            continue;
        };
        let Some(t) = s.parent.and_then(|p| model.type_info(p)) else {
            continue;
        };
        if f.name.is_empty() || t.name.is_empty() || f.name == t.name {
            continue;
        }
        // On the method, or on its type (every method the type declares here).
        for e in &entries {
            if let Some(a) = found(&f.annotations, e).or_else(|| found(&t.annotations, e)) {
                out.push(TypeBoundary {
                    type_name: t.name.clone(),
                    method: f.name.clone(),
                    params: f.params.len() as u32,
                    entry: e.id.clone(),
                    annotation: a,
                });
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The [`NamedKey`]s a file declares: its constants whose value is a key header, and the
/// exchange properties its Camel routes copy into a key header.
fn named_keys(
    path: &str,
    text: &str,
    lines: &LineIndex,
    model: &FileModel,
    cat: &Catalogue,
) -> Vec<NamedKey> {
    use crate::classify::SlotKind;
    let jvm = model.language != Language::Rust;
    let test_source = is_test_source(path);
    let mut out = Vec::new();
    for b in model
        .bindings
        .iter()
        .filter(|b| b.kind == BindingKind::Field)
    {
        if let Some(l) = b.value.and_then(|v| model.values[v].literal.as_deref())
            && cat.is_key_header(l)
            && crate::classify::constant_case(&b.name)
        {
            let owner = std::iter::once(b.scope)
                .chain(model.ancestors(b.scope))
                .find_map(|t| match &model.scopes[t].kind {
                    ScopeKind::Type(t) | ScopeKind::Object(t) => Some(t.name.clone()),
                    _ => None,
                })
                .unwrap_or_default();
            out.push(NamedKey {
                name: b.name.clone(),
                slot: SlotKind::Header,
                header: l.trim().to_string(),
                location: location(path, lines, text, b.name_span.start),
                jvm,
                owner,
                test_source,
                header_via: None,
            });
        }
    }
    for call in &model.calls {
        if call.args.len() != 2
            || !cat.header_setters.iter().any(|hs| {
                hs.name_arg == 0 && hs.value_arg == 1 && hs.call.matches(model.language, call)
            })
        {
            continue;
        }
        let name_v = &model.values[call.args[0].value];
        let (header, header_via) = match crate::classify::names_key_header(model, cat, name_v) {
            Some(h) => (h, None),
            None => match &name_v.ident {
                Some(id) if crate::classify::constant_case(id) => {
                    let src = text.get(name_v.span.start..name_v.span.end).unwrap_or("");
                    (
                        String::new(),
                        Some((crate::classify::qualifier_of(src), id.clone())),
                    )
                }
                _ => continue,
            },
        };
        let v = &model.values[call.args[1].value];
        let src = text.get(v.span.start..v.span.end).unwrap_or("");
        for (owner, name) in exchange_properties_read(src) {
            out.push(NamedKey {
                name,
                slot: SlotKind::ExchangeProperty,
                header: header.clone(),
                location: location(path, lines, text, call.name_span.start),
                jvm,
                owner,
                test_source,
                header_via: header_via.clone(),
            });
        }
    }
    out
}

/// The exchange properties a Camel expression reads, by the name written after
/// `exchangeProperty`: `exchangeProperty("id")`, `exchangeProperty(Props.ID)`,
/// `"${exchangeProperty.id}"`, `"${exchangeProperty[id]}"`, the concatenation
/// `"${exchangeProperty." + ID + "}"` and the Kotlin template
/// `"\${exchangeProperty.${Props.ID}}"`; the last segment of a qualified name
/// (<https://camel.apache.org/components/latest/languages/simple-language.html>).
pub(crate) fn exchange_properties_read(src: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (i, _) in src.match_indices("exchangeProperty") {
        let rest = &src[i + "exchangeProperty".len()..];
        let rest = rest.trim_start_matches(|c: char| {
            c.is_whitespace() || matches!(c, '.' | '[' | '(' | '"' | '+' | '$' | '{')
        });
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
            .collect();
        let mut parts = name.rsplit('.');
        let last = parts.next().unwrap_or("").to_string();
        let owner = parts.next().unwrap_or("").to_string();
        if !last.is_empty() && !out.iter().any(|(_, n)| *n == last) {
            out.push((owner, last));
        }
    }
    out
}

/// Callee names that are never inferred to be retry combinators: the standard library's
/// scope functions and higher-order functions, which call their block once (or once per
/// element). Excluding them both here and from the prefilter's demand keeps
/// `--no-prefilter` equivalent without parsing every file that mentions `map`.
pub const NOT_COMBINATORS: &[&str] = &[
    "let",
    "also",
    "apply",
    "run",
    "with",
    "takeIf",
    "takeUnless",
    "map",
    "mapNotNull",
    "flatMap",
    "forEach",
    "forEachIndexed",
    "onEach",
    "filter",
    "filterNot",
    "any",
    "all",
    "none",
    "first",
    "firstOrNull",
    "find",
    "fold",
    "reduce",
    "sortedBy",
    "groupBy",
    "associate",
    "associateBy",
    "use",
    "synchronized",
    "lazy",
    "launch",
    "async",
    "runBlocking",
    "withContext",
    "coroutineScope",
    "supervisorScope",
    "thenApply",
    "thenCompose",
    "thenAccept",
    "subscribe",
    "onSuccess",
    "onFailure",
    "runCatching",
    "getOrElse",
    "orElseGet",
    "ifPresent",
    "computeIfAbsent",
    "and_then",
    "map_err",
    "unwrap_or_else",
    "or_else",
    "spawn",
    "block_on",
    "iter",
    "for_each",
    "then",
    "get",
    "invoke",
    "call",
    "execute",
    "accept",
    "test",
    "submit",
    "thread",
    "Thread",
];

/// How a parameter is invoked in a body: `block()` / `f()` (Kotlin, Rust), `op.get()` /
/// `op.call()` / `block.invoke()` (Java, Kotlin).
fn invokes_param(call: &Call, param: &str) -> bool {
    match call.receiver.as_deref().map(str::trim) {
        None => call.callee == param && call.path.is_empty(),
        Some(r) => {
            // Kotlin's `op!!()` is `invoke` on `op!!`.
            r.strip_suffix("!!").unwrap_or(r).trim_end() == param
                && match call.callee.as_str() {
                    // `Supplier.get()`, `Callable.call()`, `Runnable.run()`: no arguments
                    // (`propertyMap.get(ID)` reads a map).
                    "get" | "call" | "run" | "getAsInt" | "getAsLong" | "await" => {
                        call.args.is_empty()
                    }
                    "invoke" | "apply" | "execute" | "accept" => true,
                    _ => false,
                }
        }
    }
}

/// A method reference that runs parameter `param` when called: `op::get`, `op::call`,
/// `op::run` (Java's functional interfaces), `op::invoke` (Kotlin), as written in `text`.
fn method_ref_runs(text: &str, param: &str) -> bool {
    text.trim().split_once("::").is_some_and(|(r, m)| {
        r.trim() == param
            && matches!(
                m.trim(),
                "get" | "call" | "run" | "invoke" | "apply" | "accept" | "execute"
            )
    })
}

/// Simple names of types whose values are never functions or lambdas: a parameter declared
/// with one cannot be a block a combinator runs (`fun charge(userId: String)` passing
/// `userId` on is no wrapper of a combinator). Java primitives and their boxes, Kotlin's
/// and Rust's scalars, strings, numbers, times, identifiers and collections.
const VALUE_TYPES: &[&str] = &[
    "int",
    "long",
    "short",
    "byte",
    "double",
    "float",
    "boolean",
    "char",
    "Integer",
    "Long",
    "Short",
    "Byte",
    "Double",
    "Float",
    "Boolean",
    "Character",
    "Int",
    "Char",
    "String",
    "CharSequence",
    "StringBuilder",
    "UUID",
    "Uuid",
    "BigDecimal",
    "BigInteger",
    "Decimal",
    "Instant",
    "LocalDate",
    "LocalDateTime",
    "LocalTime",
    "OffsetDateTime",
    "ZonedDateTime",
    "Duration",
    "Date",
    "Timestamp",
    "Currency",
    "Locale",
    "List",
    "MutableList",
    "ArrayList",
    "LinkedList",
    "Set",
    "MutableSet",
    "HashSet",
    "LinkedHashSet",
    "TreeSet",
    "Map",
    "MutableMap",
    "HashMap",
    "LinkedHashMap",
    "TreeMap",
    "BTreeMap",
    "BTreeSet",
    "Collection",
    "Iterable",
    "Array",
    "ByteArray",
    "IntArray",
    "LongArray",
    "Vec",
    "str",
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "f32",
    "f64",
    "bool",
];

/// True unless a parameter's declared type `ty` (as written, [`crate::model::Param::ty`])
/// is one of [`VALUE_TYPES`]: its simple name after references, `mut`, a lifetime, a
/// package or path, generics, array brackets and nullability. An unwritten type (a Kotlin
/// lambda's or Rust closure's parameter), a function type (`() -> T`, `impl Fn()`), a
/// functional interface (`Supplier<T>`, `RetryCallback<T, E>`) and any type not listed may
/// hold one.
pub(crate) fn may_hold_function(ty: &str) -> bool {
    let t = ty.trim();
    if t.is_empty() || t.contains("->") || t.contains("Fn") {
        return true;
    }
    let mut t = t.trim_start_matches('&').trim_start();
    if let Some(rest) = t.strip_prefix('\'') {
        // A Rust lifetime: `&'a str`.
        t = rest.split_once(' ').map_or("", |(_, r)| r).trim_start();
    }
    let t = t.strip_prefix("mut ").unwrap_or(t).trim_start();
    // `java.util.List<..>`, `std::collections::HashMap<..>`, `String...`: the last segment.
    let head = t.split(['<', '[', '?', '(']).next().unwrap_or(t);
    let head = head.trim().trim_end_matches("...");
    let last = head.rsplit(['.', ':']).next().unwrap_or(head).trim();
    !VALUE_TYPES.contains(&last)
}

/// Finds retry combinators: functions that invoke one of their parameters again after a
/// failure. An invocation counts when it sits, within the function, in a loop that handles
/// an error and can go round again (see [`crate::model::LoopInfo`] and
/// [`crate::classify::is_retry_loop`]), or in the block of a Kotlin `repeat(n) { .. }`
/// that returns from the function on success; or when the function runs the parameter and
/// calls itself (no receiver, `this`/`self`, or its own type) with it in its place
/// (recursive retry). Also records parameters passed on to other calls, which
/// [`ProjectIndex::build`] follows for wrappers.
fn infer_retry_params(
    path: &str,
    text: &str,
    lines: &LineIndex,
    model: &FileModel,
    decls: &mut HashMap<ScopeId, FnDecl>,
    call_table: &mut CallTable,
    names: &mut Names,
) {
    // Calls grouped by their innermost function, once (linear in the file).
    let mut calls_of: HashMap<ScopeId, Vec<&Call>> = HashMap::new();
    for call in &model.calls {
        if let Some(f) = model.enclosing_function(call.scope) {
            calls_of.entry(f).or_default().push(call);
        }
    }
    // Locals and parameters by their innermost function, once (linear in the file): a
    // parameter hidden by one is looked up below.
    let mut locals_of: HashMap<ScopeId, Vec<&crate::model::Binding>> = HashMap::new();
    for b in &model.bindings {
        if b.kind != crate::model::BindingKind::Field
            && let Some(f) = model.enclosing_function(b.scope)
        {
            locals_of.entry(f).or_default().push(b);
        }
    }
    for (fi, s) in model.scopes.iter().enumerate() {
        let ScopeKind::Function(f) = &s.kind else {
            continue;
        };
        if f.params.is_empty() {
            continue;
        }
        // A name that is never a combinator (`submit`, `map`) still passes parameters on:
        // key parameters follow them ([`ProjectIndex::propagate_key_params`]).
        let may_retry = !NOT_COMBINATORS.contains(&f.name.as_str());
        let Some(calls) = calls_of.get(&fi) else {
            continue;
        };
        let Some(d) = decls.get_mut(&fi) else {
            continue;
        };
        for (pi, p) in f.params.iter().enumerate() {
            if p.name.is_empty() {
                continue;
            }
            // Names that hide the parameter inside the body: a local of its name, or a
            // lambda's parameter (`fallbacks.forEach { op -> retrying(op::invoke) }`).
            // (The function's own parameter is bound in its scope as a parameter.)
            use crate::model::BindingKind;
            let shadows: Vec<&crate::model::Binding> = locals_of
                .get(&fi)
                .into_iter()
                .flatten()
                .copied()
                .filter(|b| {
                    b.name == p.name
                        && match b.kind {
                            BindingKind::Field => false,
                            BindingKind::Local => true,
                            BindingKind::Param => b.scope != fi,
                        }
                })
                .collect();
            let hidden_at = |c: &Call| {
                shadows.iter().any(|b| {
                    b.span.start < c.span.start
                        && (b.scope == c.scope || model.is_within(c.scope, b.scope))
                })
            };
            for call in calls.iter().copied() {
                if hidden_at(call) {
                    continue;
                }
                if invokes_param(call, &p.name) {
                    if !may_retry {
                        continue;
                    }
                    let retried = model
                        .ancestors(call.scope)
                        .take_while(|a| *a != fi)
                        .find_map(|a| match &model.scopes[a].kind {
                            ScopeKind::Loop(l) if crate::classify::is_retry_loop(l) => {
                                Some("a retry loop".to_string())
                            }
                            ScopeKind::Lambda(li) => li
                                .owner_call
                                .filter(|c| model.calls[*c].callee == "repeat")
                                .filter(|_| {
                                    crate::classify::has_nonlocal_return(model, a)
                                        && !crate::classify::carries_progress(model, a)
                                })
                                .map(|_| "`repeat { … }`".to_string()),
                            _ => None,
                        })
                        .or_else(|| {
                            // `try { block() } catch (e: E) { block() }`: called again
                            // from a `catch` after a call outside it failed (JLS 14.20,
                            // Kotlin `try` expression), with no loop.
                            let in_catch =
                                |c: &Call| model.catches.iter().any(|k| k.contains(c.span));
                            (in_catch(call)
                                && calls.iter().any(|o| {
                                    invokes_param(o, &p.name)
                                        && o.span.start < call.span.start
                                        && !in_catch(o)
                                }))
                            .then(|| "a `catch` clause".to_string())
                        });
                    let from_catch = retried.as_deref() == Some("a `catch` clause");
                    if let Some(how) = retried
                        && !d.rare().retry_params.iter().any(|(i, _)| *i == pi)
                    {
                        if from_catch {
                            d.rare_mut().retry_on_throw.push(pi);
                        }
                        // `return block()` (Java, Kotlin): the result leaves at once, so
                        // only an exception thrown by the block makes another attempt.
                        if model.language != Language::Rust
                            && model
                                .returns
                                .iter()
                                .any(|r| model.values[r.value].span == call.span)
                        {
                            d.rare_mut().retry_on_throw.push(pi);
                        }
                        let at = location(path, lines, text, call.span.start);
                        d.rare_mut().retry_params.push((
                            pi,
                            format!("calls `{}` again in {how} after a failure ({at})", p.name),
                        ));
                    }
                    continue;
                }
                for (ai, arg) in call.args.iter().enumerate() {
                    let v = &model.values[arg.value];
                    let plain = v.ident.as_deref() == Some(p.name.as_str())
                        && v.atoms.len() == 1
                        && arg.lambda.is_none();
                    // Or a lambda that runs the parameter (`retrying { op() }`,
                    // `() -> op.get()`): the callee runs it whenever it runs the lambda.
                    // Unless a lambda on the way binds a parameter of the same name
                    // (`{ op -> runCatching { op() } }` runs its own `op`).
                    let shadowed = |c: &Call, l: ScopeId| {
                        model
                            .ancestors(c.scope)
                            .take_while(|x| *x != l)
                            .chain(std::iter::once(l))
                            .any(|x| {
                                matches!(&model.scopes[x].kind, ScopeKind::Lambda(li)
                                    if li.params.iter().any(|q| q.name == p.name))
                            })
                    };
                    // Or a method reference that runs it (`withRetries(op::get)`).
                    let forwarded = || {
                        method_ref_runs(text.get(v.span.start..v.span.end).unwrap_or(""), &p.name)
                            || arg.lambda.is_some_and(|l| {
                                calls.iter().any(|c| {
                                    model.is_within(c.scope, l)
                                        && invokes_param(c, &p.name)
                                        && !shadowed(c, l)
                                })
                            })
                    };
                    if !plain && !forwarded() {
                        continue;
                    }
                    let at = location(path, lines, text, call.span.start);
                    // Itself: no receiver, `this`/`self`, or its own type (a static call);
                    // `factory.create(tenant)` inside `create(tenant)` delegates to another
                    // object's method, a parameter passed on like any other.
                    let own_receiver = match crate::catalogue::receiver_text(call)
                        .as_deref()
                        .map(str::trim)
                    {
                        None | Some("this" | "self" | "Self") => true,
                        Some(r) => !d.type_name().is_empty() && r == &*d.type_name(),
                    };
                    // And the parameter is run here (`block()`, `call.call()`): a value
                    // handed on unchanged (`conditionType(type, codePrefix)` to an overload
                    // of the same arity) is not an attempt.
                    if call.callee == f.name
                        && own_receiver
                        && ai == pi
                        && call.args.len() == f.params.len()
                    {
                        if may_retry
                            && !d.rare().retry_params.iter().any(|(i, _)| *i == pi)
                            && calls.iter().any(|c| invokes_param(c, &p.name))
                        {
                            d.rare_mut().retry_params.push((
                                pi,
                                format!("calls itself with `{}` again to retry ({at})", p.name),
                            ));
                        }
                    } else if !NOT_COMBINATORS.contains(&call.callee.as_str()) {
                        d.passes_params.push(PassedParam {
                            param: pi as u32,
                            arg: ai as u32,
                            call: call_table.intern(CallRef::of(call)),
                            arg_name: arg.name.as_deref().map(|n| names.get(n)),
                            line: line_of(lines, text, call.span.start),
                            handled: model.failure_caught_all(call.span.start, s.span),
                            callable: may_hold_function(&p.ty),
                            lambda: !plain,
                            // A Kotlin lambda written after the parentheses binds the last
                            // parameter; one inside them binds by position.
                            trailing: !plain
                                && model.language == Language::Kotlin
                                && !text
                                    .get(..arg.span.start)
                                    .unwrap_or("")
                                    .trim_end()
                                    .ends_with(['(', ',']),
                        });
                    }
                }
            }
            // A parameter the function retries itself needs no wrapper state: the lambda
            // it runs the block in (`repeat(n) { try { return block() } .. }`) is its own
            // retry, and following it would only demand every `repeat` of the project.
            if d.rare().retry_params.iter().any(|(i, _)| *i == pi) {
                d.passes_params
                    .retain(|pp| !(pp.lambda && pp.param() == pi));
            }
        }
    }
}

/// Records [`FnDecl::boundary_params`]: a parameter passed, as a plain name, where a
/// catalogue boundary of the `lambda-arg` form takes its lambda (every argument of a
/// matching call) makes a lambda given to the function that boundary: a project wrapper
/// such as `void newWorker(Worker w, JobHandler handler) {
/// zeebeClient.newWorker().jobType(..).handler(handler).open(); }` turns
/// `newWorker(W, (client, job) -> ..)` into a Zeebe job handler.
fn infer_boundary_params(
    path: &str,
    text: &str,
    lines: &LineIndex,
    model: &FileModel,
    cat: &Catalogue,
    decls: &mut HashMap<ScopeId, FnDecl>,
) {
    let lang = model.language;
    let mut entries = crate::classify::applicable_boundaries(cat, lang, text);
    entries.retain(|b| {
        b.form == crate::catalogue::BoundaryForm::LambdaArg && !b.requires_nonlocal_return
    });
    if entries.is_empty() {
        return;
    }
    for call in &model.calls {
        let Some(fi) = model.enclosing_function(call.scope) else {
            continue;
        };
        let ScopeKind::Function(f) = &model.scopes[fi].kind else {
            continue;
        };
        // Only the function's own body: not a lambda inside it, which runs when it runs.
        if model
            .ancestors(call.scope)
            .take_while(|a| *a != fi)
            .any(|a| {
                matches!(
                    model.scopes[a].kind,
                    ScopeKind::Lambda(_) | ScopeKind::Object(_)
                )
            })
        {
            continue;
        }
        let Some(entry) = entries.iter().find(|e| e.call.matches(lang, call)) else {
            continue;
        };
        let Some(d) = decls.get_mut(&fi) else {
            continue;
        };
        for (ai, arg) in call.args.iter().enumerate() {
            if !entry.runs_lambda_at(ai) {
                continue;
            }
            let v = &model.values[arg.value];
            let Some(pi) = f.params.iter().position(|p| {
                !p.name.is_empty()
                    && v.ident.as_deref() == Some(p.name.as_str())
                    && v.atoms.len() == 1
                    && arg.lambda.is_none()
            }) else {
                continue;
            };
            if d.rare().boundary_params.iter().any(|(i, _, _)| *i == pi) {
                continue;
            }
            let at = location(path, lines, text, call.span.start);
            let to = crate::classify::call_label(model, call, false);
            let what = if entry.label.is_empty() {
                String::new()
            } else {
                format!("{}; ", entry.label)
            };
            d.rare_mut().boundary_params.push((
                pi,
                format!("hands `{}` to {to} ({what}{at})", f.params[pi].name),
                ParamBoundary {
                    kind: entry.kind,
                    entry: entry.id.clone(),
                    flavor: entry.flavor.clone(),
                },
            ));
        }
    }
}

/// The methods of the file's types that implement a type declared in another file whose
/// annotation makes them boundaries ([`TypeBoundary`]): a method with the name and number
/// of parameters of an annotated method, or of a method the annotated type declares. A
/// method already a boundary keeps its boundary (the same file's supertype is read by
/// [`crate::classify::classify_in_project`]); one returning a type the entry leaves out
/// (`exclude_return_types`, a reactive pipeline) is no boundary here, nor is a Spring
/// Retry `@Recover` method (recovery runs once, after the attempts).
fn apply_interface_boundaries(
    model: &FileModel,
    facts: &mut FileFacts,
    index: &ProjectIndex,
    cat: &Catalogue,
) {
    if index.type_boundaries.is_empty() || model.language == Language::Rust {
        return;
    }
    for (i, s) in model.scopes.iter().enumerate() {
        let ScopeKind::Function(f) = &s.kind else {
            continue;
        };
        if facts.boundaries[i].is_some() || f.name.is_empty() {
            continue;
        }
        let Some(t) = s.parent.and_then(|p| model.type_info(p)) else {
            continue;
        };
        if f.name == t.name || f.annotations.iter().any(|a| a.name == "Recover") {
            continue;
        }
        let found = t.supertypes.iter().find_map(|st| {
            let tbs = index.type_boundaries.get(st.as_str())?;
            tbs.iter().find_map(|tb| {
                if tb.method != f.name || tb.params as usize != f.params.len() {
                    return None;
                }
                let entry = cat.boundaries.iter().find(|e| {
                    e.id == tb.entry
                        && (e.call.langs.is_empty()
                            || e.call.langs.iter().any(|l| l == model.language.name()))
                })?;
                let rt = f.return_type.trim();
                if entry
                    .exclude_return_types
                    .iter()
                    .any(|x| rt == x || rt.starts_with(&format!("{x}<")))
                {
                    return None;
                }
                Some((entry, tb, st))
            })
        });
        let Some((entry, tb, st)) = found else {
            continue;
        };
        facts.boundaries[i] = Some(crate::classify::boundary_of(
            entry,
            format!(
                "method `{}()`, implementing `@{}` `{st}.{}()`",
                f.name, tb.annotation, f.name
            ),
            f.name_span,
            None,
            None,
        ));
    }
}

impl ProjectIndex {
    /// Whether a type of this name declared in a file merged so far carries an annotation
    /// that makes the methods implementing it boundaries ([`TypeBoundary`]).
    pub fn has_type_boundary(&self, type_name: &str) -> bool {
        self.type_boundaries.contains_key(type_name)
    }
}

/// Pass 2: marks lambdas passed to project retry combinators ([`FnDecl::retry_params`],
/// through wrappers too) as retry boundaries, where the catalogue did not already classify
/// them. The label says why the callee re-runs the lambda, with the place it does.
pub fn apply_inferred_boundaries(
    model: &FileModel,
    facts: &mut FileFacts,
    index: &ProjectIndex,
    path: &str,
    cat: &Catalogue,
) {
    use crate::classify::{Boundary, call_label, is_trailing_lambda, lambda_bound_to};
    for (cid, call) in model.calls.iter().enumerate() {
        if !index.is_combinator_name(&call.callee) {
            continue;
        }
        for (ai, arg) in call.args.iter().enumerate() {
            let lambda = arg.lambda.or_else(|| {
                model.values[arg.value]
                    .ident
                    .as_deref()
                    .and_then(|n| lambda_bound_to(model, n, arg.span.start))
            });
            let Some(l) = lambda else { continue };
            // A boundary the catalogue found by the helper's name alone is refined by the
            // project's declaration of that helper when it retries only after a throw.
            if let Some(b) = &mut facts.boundaries[l] {
                let by_name = cat
                    .boundaries
                    .iter()
                    .any(|e| e.id == b.entry && e.matches_by_name_only());
                if by_name
                    && b.kind == crate::catalogue::BoundaryKind::Retry
                    && let Some((_, Some(via))) = index.retried_arg(call, ai, path)
                    && via.flavor == RETRY_ON_THROW
                {
                    b.flavor = via.flavor;
                }
                continue;
            }
            let Some((why, via)) = index.retried_arg(call, ai, path) else {
                continue;
            };
            let trailing = is_trailing_lambda(model, call, l);
            let (kind, entry, flavor) = match via {
                Some(b) => (b.kind, b.entry, b.flavor),
                None => (
                    crate::catalogue::BoundaryKind::Retry,
                    INFERRED_COMBINATOR.to_string(),
                    "retry".to_string(),
                ),
            };
            facts.boundaries[l] = Some(Boundary {
                kind,
                entry,
                flavor,
                label: format!("{}, which {why}", call_label(model, call, trailing)),
                anchor: call.name_span,
                type_name: None,
                owner_call: Some(cid),
            });
        }
    }
    apply_template_hooks(model, facts, index);
    apply_camel_processors(model, facts, index);
    apply_interface_boundaries(model, facts, index, cat);
}

/// Camel processors run by a boundary's send ([`ProjectIndex::camel_processor`]): the
/// `process(Exchange)` method of a type the route runs becomes a boundary of the sender's
/// kind and flavor (a Zeebe job handler's redelivery reaches the processor's body).
fn apply_camel_processors(model: &FileModel, facts: &mut FileFacts, index: &ProjectIndex) {
    if index.camel_processors.is_empty() {
        return;
    }
    for (i, ty) in camel_process_methods(model) {
        if facts.boundaries[i].is_some() {
            continue;
        }
        let Some((send, endpoint)) = index.camel_processor(&ty.name) else {
            continue;
        };
        let ScopeKind::Function(f) = &model.scopes[i].kind else {
            continue;
        };
        facts.boundaries[i] = Some(crate::classify::Boundary {
            kind: send.boundary.kind,
            entry: send.boundary.entry.clone(),
            flavor: send.boundary.flavor.clone(),
            label: format!(
                "`{}.process`, which the Camel route `{endpoint}` runs each time {} sends to \
                 it ({})",
                ty.name, send.label, send.location
            ),
            anchor: f.name_span,
            type_name: Some(ty.name.clone()),
            owner_call: None,
        });
    }
}

/// The `process(exchange)` methods of Java and Kotlin types that implement Camel's
/// `Processor`, with their type.
pub(crate) fn camel_process_methods(model: &FileModel) -> Vec<(ScopeId, &TypeInfo)> {
    if model.language == Language::Rust {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, s) in model.scopes.iter().enumerate() {
        let ScopeKind::Function(f) = &s.kind else {
            continue;
        };
        if f.name != "process" || f.params.len() != 1 {
            continue;
        }
        if let Some(ty) = s
            .parent
            .and_then(|p| model.enclosing_type(p))
            .and_then(|t| model.type_info(t))
            && ty.supertypes.iter().any(|t| {
                crate::catalogue::last_segment(t.split('<').next().unwrap_or("")) == "Processor"
            })
        {
            out.push((i, ty));
        }
    }
    out
}

/// Template-method jobs: a scheduled method that calls an inherited method of a project
/// supertype explicitly (`super.run()`), whose body calls back a
/// method this type overrides (`doRun()`), runs that override on every tick too. The
/// override becomes a scheduler boundary, unless the template takes a distributed lock
/// around it (`FnDecl::has_lock`).
fn apply_template_hooks(model: &FileModel, facts: &mut FileFacts, index: &ProjectIndex) {
    use crate::catalogue::BoundaryKind;
    let jvm = model.language != Language::Rust;
    let mut marks: Vec<(ScopeId, crate::classify::Boundary)> = Vec::new();
    for (i, s) in model.scopes.iter().enumerate() {
        let Some(b) = &facts.boundaries[i] else {
            continue;
        };
        let ScopeKind::Function(_) = &s.kind else {
            continue;
        };
        if b.kind != BoundaryKind::Scheduler {
            continue;
        }
        let Some(ty_scope) = s.parent.and_then(|p| model.enclosing_type(p)) else {
            continue;
        };
        let Some(ty) = model.type_info(ty_scope) else {
            continue;
        };
        let supers: Vec<&str> = ty
            .supertypes
            .iter()
            .map(|t| crate::catalogue::last_segment(t.split('<').next().unwrap_or("").trim()))
            .collect();
        // Methods declared by this type, by name.
        let own: Vec<(ScopeId, &str)> = model
            .scopes
            .iter()
            .enumerate()
            .filter(|(_, x)| x.parent == Some(ty_scope))
            .filter_map(|(j, x)| match &x.kind {
                ScopeKind::Function(g) => Some((j, g.name.as_str())),
                _ => None,
            })
            .collect();
        for call in model.calls.iter().filter(|c| model.is_within(c.scope, i)) {
            let recv = crate::catalogue::receiver_text(call);
            if recv.as_deref() != Some("super") {
                continue;
            }
            for d in index
                .functions
                .get(call.callee.as_str())
                .into_iter()
                .flatten()
            {
                if d.jvm() != jvm || d.has_lock || !supers.contains(&&*d.type_name()) {
                    continue;
                }
                for hook in d.self_callees() {
                    for (j, n) in &own {
                        if *n == hook && *j != i && facts.boundaries[*j].is_none() {
                            marks.push((
                                *j,
                                crate::classify::Boundary {
                                    label: format!(
                                        "`{hook}()`, which `{}.{}()` ({}) calls from {}",
                                        d.type_name(),
                                        d.name,
                                        d.location(),
                                        b.label
                                    ),
                                    entry: "inferred.template-hook".into(),
                                    anchor: match &model.scopes[*j].kind {
                                        ScopeKind::Function(g) => g.name_span,
                                        _ => model.scopes[*j].span,
                                    },
                                    type_name: None,
                                    owner_call: None,
                                    ..b.clone()
                                },
                            ));
                        }
                    }
                }
            }
        }
    }
    for (j, b) in marks {
        if facts.boundaries[j].is_none() {
            facts.boundaries[j] = Some(b);
        }
    }
}

/// Identifies the builder a registering call is made on: the root of its receiver chain.
/// The outermost call of the builder chain `call` is in (`build()` of
/// `OkHttpClient.Builder().addInterceptor(x).build()`), by [`Call::receiver_call`] links.
fn chain_top(outer: &[Option<CallId>], call: CallId) -> CallId {
    let mut top = call;
    for _ in 0..512 {
        match outer.get(top).copied().flatten() {
            Some(o) => top = o,
            None => break,
        }
    }
    top
}

/// Per call, the first call (in source order) whose receiver it is, for [`chain_top`].
fn outer_calls(model: &FileModel) -> Vec<Option<CallId>> {
    let mut outer = vec![None; model.calls.len()];
    for (i, c) in model.calls.iter().enumerate() {
        if let Some(r) = c.receiver_call
            && let Some(slot) = outer.get_mut(r)
            && slot.is_none()
        {
            *slot = Some(i);
        }
    }
    outer
}

/// The calls of the chain ending at `top` (`top` and its receivers).
fn chain_calls(model: &FileModel, top: CallId) -> Vec<CallId> {
    let mut out = vec![top];
    let mut c = top;
    while let Some(r) = model.calls[c].receiver_call {
        if out.len() > 512 {
            break;
        }
        out.push(r);
        c = r;
    }
    out
}

/// The name a value built by the chain ending at `top` is kept under: the field or local
/// it initialises, or the function that returns it; through a lambda it is returned from
/// (`by lazy { .. }`, `run { .. }`), the name the lambda's call is kept under.
fn value_holder(
    model: &FileModel,
    outer: &[Option<CallId>],
    top: CallId,
    depth: u32,
) -> Option<String> {
    let chain: HashSet<CallId> = chain_calls(model, top).into_iter().collect();
    let holds = |v: ValueId| {
        model.values[v]
            .atoms
            .iter()
            .any(|a| matches!(a, Atom::Call(c) if chain.contains(c)))
    };
    if let Some(b) = model.bindings.iter().find(|b| b.value.is_some_and(holds)) {
        return Some(b.name.clone());
    }
    let r = model.returns.iter().find(|r| holds(r.value))?;
    match &model.scopes[r.scope].kind {
        ScopeKind::Function(f) => Some(f.name.clone()),
        ScopeKind::Lambda(_) if depth < 4 => {
            let owner = model
                .calls
                .iter()
                .position(|c| c.args.iter().any(|a| a.lambda == Some(r.scope)))?;
            value_holder(model, outer, chain_top(outer, owner), depth + 1)
        }
        _ => None,
    }
}

/// JVM: the name of the client a registration call (`addInterceptor(x)`) builds, from the
/// outermost call `top` of its chain ([`chain_top`]): the holder ([`value_holder`]) of
/// the builder chain, or, for statements on a builder variable (`b.addInterceptor(x); ..
/// b.build()`), of the chain that builds it in the same function.
fn client_holder(model: &FileModel, outer: &[Option<CallId>], top: CallId) -> Option<String> {
    let call = top;
    if let Some(h) = value_holder(model, outer, top, 0) {
        return Some(h);
    }
    let root = *chain_calls(model, top).last()?;
    let r = model.calls[root].receiver.as_deref()?;
    if !r.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let f = model.enclosing_function(model.calls[call].scope);
    let build = model.calls.iter().position(|c| {
        c.callee == "build"
            && c.receiver.as_deref() == Some(r)
            && model.enclosing_function(c.scope) == f
    })?;
    value_holder(model, outer, chain_top(outer, build), 0)
}

/// The client named by the argument of `.client(x)`: a plain name (`okHttpClient`,
/// `this.client`) or a call of a function of the project without receiver
/// (`provideClient()`); `None` for anything else.
fn client_arg(model: &FileModel, call: &Call) -> Option<String> {
    let [arg] = call.args.as_slice() else {
        return None;
    };
    let v = &model.values[arg.value];
    match v.atoms.as_slice() {
        [Atom::Name { name, .. }] => {
            // A parameter is whatever client the caller passes.
            let param = model.bindings.iter().any(|b| {
                b.kind == BindingKind::Param
                    && b.name == *name
                    && model.ancestors(call.scope).any(|s| s == b.scope)
            });
            (!param).then(|| name.trim_start_matches("this.").to_string())
        }
        [Atom::Call(c)] => {
            let c = &model.calls[*c];
            (c.receiver.is_none() && c.args.is_empty()).then(|| c.callee.clone())
        }
        _ => None,
    }
}

/// The Retrofit services a file creates: `create(Api::class.java)` / `create(Api.class)`
/// calls, with the client of the Retrofit they are created from (`.client(x)` in the
/// chain, or in the initialiser of the local or field the chain starts from).
/// What a cloned call (`call.clone()`) was made through, from the local or field its
/// receiver names: `(Some(client), None)` for one initialised by `client.newCall(..)`,
/// `(None, Some(interface))` for one initialised by a method call on a receiver of a
/// declared type (`api.charge(..)` with `api: PaymentApi`); `(None, None)` otherwise (a
/// callback's `call` parameter: any client).
fn cloned_call_client(model: &FileModel, clone: &Call) -> (Option<String>, Option<String>) {
    let Some(r) = clone.receiver.as_deref().map(str::trim) else {
        return (None, None);
    };
    let name = r.strip_prefix("this.").unwrap_or(r);
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return (None, None);
    }
    let Some(b) = model
        .bindings
        .iter()
        .filter(|b| {
            b.name == name && b.kind != BindingKind::Param && b.name_span.start < clone.span.start
        })
        .max_by_key(|b| b.name_span.start)
    else {
        return (None, None);
    };
    let Some(v) = b.value else {
        return (None, None);
    };
    for a in &model.values[v].atoms {
        let Atom::Call(ci) = a else { continue };
        let call = &model.calls[*ci];
        let recv = call
            .receiver
            .as_deref()
            .map(|x| x.trim().trim_start_matches("this.").to_string())
            .filter(|x| !x.is_empty() && x.chars().all(|c| c.is_alphanumeric() || c == '_'));
        if call.callee == "newCall" {
            // A parameter, or a Kotlin constructor property (a field without an
            // initialiser), holds whatever client the caller passes: only a field or local
            // the file initialises names the client.
            let known = recv.as_deref().is_some_and(|x| {
                let mut named = model.bindings.iter().filter(|b| b.name == x).peekable();
                named.peek().is_some()
                    && named.all(|b| b.kind != BindingKind::Param && b.value.is_some())
            });
            return (recv.filter(|_| known), None);
        }
        if let Some(t) = call.receiver_type.as_deref() {
            let t = t.rsplit('.').next().unwrap_or(t);
            return (None, Some(t.to_string()));
        }
    }
    (None, None)
}

fn retrofit_services(model: &FileModel, text: &str) -> Vec<RetrofitService> {
    let mut out = Vec::new();
    for (cid, call) in model.calls.iter().enumerate() {
        let [arg] = call.args.as_slice() else {
            continue;
        };
        if call.callee != "create" || call.receiver.is_none() {
            continue;
        }
        let t = text.get(arg.span.start..arg.span.end).unwrap_or("").trim();
        let iface = t
            .strip_suffix("::class.java")
            .or_else(|| t.strip_suffix("::class"))
            .or_else(|| t.strip_suffix(".class"));
        let Some(iface) = iface
            .map(|i| i.rsplit('.').next().unwrap_or(i))
            .filter(|i| !i.is_empty() && i.chars().all(|c| c.is_alphanumeric() || c == '_'))
        else {
            continue;
        };
        let chain = chain_calls(model, cid);
        let find_client = |calls: &[CallId]| -> Option<Option<String>> {
            calls
                .iter()
                .map(|c| &model.calls[*c])
                .find(|c| c.callee == "client")
                .map(|c| client_arg(model, c))
        };
        let mut client = find_client(&chain);
        if client.is_none() && chain.iter().any(|c| model.calls[*c].callee == "Builder") {
            // Built right here without `.client(..)`: Retrofit's own default client.
            client = Some(Some(String::new()));
        }
        if client.is_none() {
            // `retrofit.create(..)` on a local or field built in this file.
            let root = &model.calls[*chain.last().unwrap_or(&cid)];
            let built = root.receiver.as_deref().and_then(|r| {
                let r = r.trim_start_matches("this.");
                let b = model
                    .bindings
                    .iter()
                    .find(|b| b.name == r && b.kind != BindingKind::Param)?;
                let v = b.value?;
                let calls: Vec<CallId> = model.values[v]
                    .atoms
                    .iter()
                    .filter_map(|a| match a {
                        Atom::Call(c) => Some(chain_calls(model, *c)),
                        _ => None,
                    })
                    .flatten()
                    .collect();
                // A Retrofit built here without `.client(..)` runs on its own client.
                Some(find_client(&calls).unwrap_or_else(|| {
                    calls
                        .iter()
                        .any(|c| model.calls[*c].callee == "Builder")
                        .then(String::new)
                }))
            });
            client = built;
        }
        out.push(RetrofitService {
            iface: iface.to_string(),
            client: client.flatten(),
        });
    }
    out
}

/// Adds `b` to a map of bound key fields, keeping the first location per `(type, field)`.
fn insert_bound(map: &mut BTreeMap<(String, String), (String, String)>, b: BoundKeyField) {
    let e = map
        .entry((b.type_name, b.field))
        .or_insert((b.location.clone(), b.handler.clone()));
    if b.location < e.0 {
        *e = (b.location, b.handler);
    }
}

/// The simple name of a written type: `CheckoutRequest` of `CheckoutRequest?`,
/// `com.x.CheckoutRequest` or `@Valid CheckoutRequest`; empty for a primitive, a generic
/// container or nothing.
fn simple_type_name(ty: &str) -> String {
    let t = ty
        .split_whitespace()
        .rfind(|w| !w.starts_with('@'))
        .unwrap_or("")
        .trim_end_matches('?');
    if t.contains('<') || t.contains('[') {
        return String::new();
    }
    let t = t.rsplit('.').next().unwrap_or(t);
    if t.starts_with(char::is_uppercase) && t.chars().all(|c| c.is_alphanumeric() || c == '_') {
        t.to_string()
    } else {
        String::new()
    }
}

pub fn chain_key(path: &str, model: &FileModel, call: CallId) -> String {
    let mut root = call;
    let mut guard = 0;
    while let Some(r) = model.calls[root].receiver_call {
        root = r;
        guard += 1;
        if guard > 512 {
            break;
        }
    }
    let rc = &model.calls[root];
    match rc.receiver.as_deref() {
        Some(r)
            if root != call
                || r.chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '.') =>
        {
            if root == call {
                // `builder.addInterceptor(x)` statements on one variable in one function.
                format!(
                    "{path}#{}#{r}",
                    model.enclosing_function(rc.scope).unwrap_or(0)
                )
            } else {
                format!("{path}@{}", rc.span.start)
            }
        }
        _ => format!("{path}@{}", rc.span.start),
    }
}

/// Candidates of recorded calls during one [`ProjectIndex::resolve`], by the address of
/// the [`CallRef`] and of the caller's shared path (neither moves while it runs; the
/// addresses are identities, never dereferenced).
type NarrowCache = HashMap<(usize, usize), Vec<usize>>;

/// The merged project index with helper facts resolved.
#[derive(Clone, Debug, Default)]
pub struct ProjectIndex {
    /// Declarations by simple name, in path order.
    pub functions: HashMap<Name, Vec<FnDecl>>,
    /// Per declaration (parallel to `functions[name]`): does it return a fresh value?
    fresh: HashMap<Name, Vec<Option<Box<HelperInfo>>>>,
    /// Per declaration: does it mint a key and put it somewhere (with no lock)?
    mints: HashMap<Name, Vec<Option<Box<MintInfo>>>>,
    pub registrations: Vec<Registration>,
    /// Retrofit services of every summarised file, sorted.
    pub retrofit_services: Vec<RetrofitService>,
    /// Request-bound fields sent as keys, by `(type, field)`; the first sink's location
    /// and handler ([`BoundKeyField`]). Includes the candidates whose position is a key
    /// parameter of their callee.
    pub bound_key_fields: BTreeMap<(String, String), (String, String)>,
    /// Candidates of every summarised file ([`FileSummary::bound_arg_candidates`]).
    pub bound_arg_candidates: Vec<BoundArgCandidate>,
    /// The bound fields found directly at sinks (before the candidates are added).
    bound_at_sinks: BTreeMap<(String, String), (String, String)>,
    /// For each client name among OkHttp registrations ([`Registration::client`]), when
    /// every Retrofit service's client is known: the retry sites whose calls reach an
    /// endpoint of a service on that client, or OkHttp's `newCall` (sorted). Absent:
    /// [`Self::okhttp_retry_sites`] applies.
    pub client_retry_sites: HashMap<String, Vec<String>>,
    pub shedlock_enabled: bool,
    pub retrying_types: HashSet<String>,
    pub clone_sites: Vec<CloneSite>,
    /// Number of retry boundaries (retry lambdas, loops, `@Retryable` methods) in the
    /// project: evidence that calls are retried at the call level.
    pub retry_boundaries: usize,
    /// `path:line` of retry boundaries outside interceptors whose body calls a function
    /// that reaches an HTTP call (see [`FnDecl::http`]) through project functions, sorted:
    /// evidence that calls through an HTTP client are retried at the call level, which
    /// makes an OkHttp application interceptor run again per retry. Any client library.
    pub http_retry_sites: Vec<String>,
    /// The sites of [`Self::http_retry_sites`] whose calls reach OkHttp (Retrofit, Feign,
    /// `newCall`): the evidence for an OkHttp application interceptor. A retry of a
    /// `RestTemplate` exchange never runs an OkHttp interceptor.
    pub okhttp_retry_sites: Vec<String>,
    /// The sites whose calls reach Spring's HTTP clients: the evidence for a Spring
    /// `ClientHttpRequestInterceptor`.
    pub spring_retry_sites: Vec<String>,
    /// The sites whose calls reach a Feign client's endpoint ([`HTTP_FEIGN`]): the
    /// evidence for a Feign interceptor that sets the key only when its template has none.
    pub feign_retry_sites: Vec<String>,
    /// Reactive retries of every summarised file ([`FileSummary::reactive_retries`]),
    /// sorted: the evidence for a WebClient `ExchangeFilterFunction`, which WebClient runs
    /// again on every re-subscription.
    pub reactive_retry_sites: Vec<String>,
    /// Every retry site of the summaries merged so far (see [`RetrySite`]).
    retry_sites: Vec<RetrySite>,
    /// Constants and exchange properties that name or carry a key header, sorted.
    named_keys: Vec<NamedKey>,
    /// JVM types declared in each file (by display path), each with whether it is
    /// top-level, and each JVM type's declared supertypes: a call with no receiver may
    /// reach a method a caller's top-level type inherits; a constructor call of any type
    /// the file declares never reaches another file's namesake.
    file_types: HashMap<Name, Vec<(Name, bool)>>,
    type_supers: HashMap<Name, Vec<Name>>,
    /// [`TypeBoundary`]s of the files merged so far, by type name, sorted.
    type_boundaries: HashMap<Name, Vec<TypeBoundary>>,
    /// Names with at least one declaration that has a key parameter / returns a fresh
    /// value / mints a key / reads a key header: cheap early exits for every call.
    with_key_params: HashSet<Name>,
    with_fresh: HashSet<Name>,
    with_mints: HashSet<Name>,
    /// Of [`Self::with_mints`], who can call a minting declaration of the name, as
    /// [`Self::candidates_of`] sees it (the same language family; test code only from test
    /// code): [`MINT_FROM_JVM_MAIN`] and the other bits.
    mint_callers: HashMap<Name, u8>,
    with_header_reads: HashSet<Name>,
    /// Files were merged since [`ProjectIndex::handled_states`] last ran
    /// ([`ProjectIndex::extend_deferred`]).
    handled_stale: bool,
    /// Files were merged since [`ProjectIndex::resolve_sites`] last ran.
    sites_stale: bool,
    /// Per declaration (parallel to `functions[name]`): parameters it retries, directly or
    /// by passing them to a combinator (see [`FnDecl::retry_params`]).
    retry: HashMap<Name, Vec<Vec<RetryState>>>,
    /// Per declaration (parallel to `functions[name]`): it mints a key, and every way the
    /// key leaves for the wire sits in a `try` that catches every exception, in the body
    /// or in the helpers it calls ([`ProjectIndex::handled_states`]).
    mint_handled: HashMap<Name, Vec<bool>>,
    /// Per declaration: the key parameters whose every sink sits in such a `try`.
    key_params_handled: HashMap<Name, Vec<Vec<usize>>>,
    /// Camel routes and sends of every summarised file ([`CamelRoute`], [`CamelSend`]).
    camel_routes: Vec<CamelRoute>,
    camel_sends: Vec<CamelSend>,
    /// Kotlin properties' getters and their types, from every summarised file.
    property_getters: HashMap<Name, Vec<Name>>,
    /// Camel processor types a boundary's send runs (through routes, transitively), with
    /// the send that does, the first by location ([`ProjectIndex::camel_processor`]).
    camel_processors: HashMap<String, (CamelSend, String)>,
}

/// True when a function declaration's text has no body: Java and Rust declarations that
/// end in `;` (interface, abstract and trait methods), Kotlin ones with neither a block
/// nor `=` after the parameter list.
fn bodiless(lang: Language, decl: &str) -> bool {
    let t = decl.trim_end();
    match lang {
        Language::Java | Language::Rust => t.ends_with(';'),
        Language::Kotlin => {
            // After the parameter list (the first parenthesis after the keyword `fun`, to
            // its match; annotations before `fun` may have their own): a block or
            // `= expression`. String and character literals are skipped throughout.
            let code = kotlin_code_bytes(t);
            let word =
                |i: usize| i < code.len() && (code[i].is_ascii_alphanumeric() || code[i] == b'_');
            let kw = (0..code.len().saturating_sub(2))
                .find(|&i| &code[i..i + 3] == b"fun" && (i == 0 || !word(i - 1)) && !word(i + 3));
            let start = kw.map_or(0, |i| i + 3);
            let Some(open) = code[start..]
                .iter()
                .position(|&c| c == b'(')
                .map(|i| start + i)
            else {
                return !code.contains(&b'{') && !code.contains(&b'=');
            };
            let mut depth = 0usize;
            let mut close = code.len();
            for (i, &c) in code.iter().enumerate().skip(open) {
                match c {
                    b'(' => depth += 1,
                    b')' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            close = i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let after = &code[close.min(code.len())..];
            !after.contains(&b'{') && !after.contains(&b'=')
        }
    }
}

/// The bytes of Kotlin source text with the contents of string and character literals
/// (`"..."`, `"""..."""`, `'.'`, escapes included) replaced by spaces, quotes kept: the
/// punctuation left is code. Templates (`${..}`) are blanked with their string.
fn kotlin_code_bytes(t: &str) -> Vec<u8> {
    let b = t.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' if b[i..].starts_with(b"\"\"\"") => {
                let end = b[i + 3..]
                    .windows(3)
                    .position(|w| w == b"\"\"\"")
                    .map_or(b.len(), |p| i + 3 + p);
                for x in &mut out[i + 3..end] {
                    *x = b' ';
                }
                i = (end + 3).min(b.len());
            }
            q @ (b'"' | b'\'') => {
                let mut j = i + 1;
                while j < b.len() && b[j] != q {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = j.min(b.len());
                for x in &mut out[i + 1..end] {
                    *x = b' ';
                }
                i = end + 1;
            }
            _ => i += 1,
        }
    }
    out
}

/// Whether declaration `i` of `name` has a state in a sparse per-declaration map
/// ([`ProjectIndex::fresh`], [`ProjectIndex::mints`]: a missing name has none).
fn state_at<T>(states: &HashMap<Name, Vec<Option<T>>>, name: &str, i: usize) -> bool {
    states.get(name).is_some_and(|v| v[i].is_some())
}

pub(crate) fn arity_ok(d: &FnDecl, args: usize) -> bool {
    d.arity() == args || (d.defaults_possible && args < d.arity())
}

/// [`arity_ok`] for a caller in the file `from_path`: only Kotlin leaves out arguments
/// that have defaults (Java passes every one, short of `@JvmOverloads`).
/// What [`ProjectIndex::candidates_of`] reads of the calling file's path when the call has
/// a receiver other than `this`/`self`: its language and whether it is test code, as a
/// number from 1 to 8 (never an address, so it shares a key with the path's address).
fn path_class(path: &str) -> usize {
    let lang = match Language::from_path(std::path::Path::new(path)) {
        Some(Language::Java) => 0,
        Some(Language::Kotlin) => 1,
        Some(Language::Rust) => 2,
        None => 3,
    };
    1 + lang * 2 + usize::from(is_test_source(path))
}

pub(crate) fn arity_ok_from(d: &FnDecl, args: usize, from_path: &str) -> bool {
    d.arity() == args
        || (arity_ok(d, args)
            && Language::from_path(std::path::Path::new(from_path)) == Some(Language::Kotlin))
}

/// Method names so common on library types (collections, clients, builders) that a call
/// through an untyped receiver cannot be tied to a project declaration by name alone.
pub(crate) const COMMON_NAMES: &[&str] = &[
    "get",
    "set",
    "put",
    "add",
    "remove",
    "apply",
    "call",
    "run",
    "execute",
    "send",
    "post",
    "submit",
    "invoke",
    "create",
    "build",
    "of",
    "from",
    "map",
    "accept",
    "test",
    "handle",
    "process",
    "update",
    "save",
    "delete",
    "find",
    "load",
    "write",
    "read",
    "close",
    "start",
    "stop",
    "next",
    "clear",
    "contains",
    "equals",
    "hashCode",
    "toString",
    "compute",
    "merge",
    "offer",
    "poll",
    "take",
    "peek",
    "emit",
    "publish",
    "subscribe",
    "request",
    "fetch",
    "filter",
    "collect",
    "insert",
    "append",
    "push",
    "pop",
    "get_or_insert",
    "entry",
    "new",
    "with",
    "header",
    "headers",
    "body",
    "json",
];

/// `n` as a [`FnDecl::param_count`], saturated: no real declaration has 2³² parameters.
fn count_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn normalized(s: &str) -> String {
    crate::catalogue::normalize_name(s)
}

/// Test, example and benchmark code: a file under a Gradle/Maven test source set
/// (`src/test/`, `src/androidTest/`, `src/testFixtures/`, `src/integrationTest/`,
/// `src/jvmTest/`, `src/it/`), or a `tests/`, `test/`, `benches/` or `examples/`
/// directory (Cargo's test, bench and example targets; plain JVM layouts) above any
/// source set's language root (`src/main/java/com/acme/tests/` is a package named
/// `tests` in production code, not a test directory). Production
/// code cannot call into it: Gradle and Maven compile the main source set without the
/// test one, and Cargo's library target does not see its test, bench or example targets.
pub fn is_test_source(path: &str) -> bool {
    test_layout(path, true)
}

/// [`is_test_source`] without example programs: tests and benchmarks only, code that
/// never runs as a deployed service.
pub fn is_test_or_bench_source(path: &str) -> bool {
    test_layout(path, false)
}

fn test_layout(path: &str, examples: bool) -> bool {
    // Directories only: the file name itself says nothing (`src/testing.rs`).
    let Some(end) = path.rfind(['/', '\\']) else {
        return false;
    };
    let mut dirs = path[..end].split(['/', '\\']).peekable();
    while let Some(seg) = dirs.next() {
        if matches!(seg, "tests" | "test" | "benches") || (examples && seg == "examples") {
            return true;
        }
        if seg == "src"
            && let Some(set) = dirs.peek()
        {
            // `test`, `testFixtures`, `jvmTest`, `integrationTest`, `test-integration`,
            // `integration_test`, and build-variant sets such as `androidTestDebug` or
            // `testRelease`: the word `test` is a camel-case, `-` or `_` separated part
            // of the name (not `testing`, `latest`).
            let word_at = |at: usize| {
                let rest = &set[at + 4..];
                rest.is_empty()
                    || rest.starts_with(|c: char| c.is_uppercase() || c == '-' || c == '_')
            };
            let starts_word = |at: usize| at == 0 || set[..at].ends_with(['-', '_']);
            if *set == "it"
                || set
                    .match_indices("test")
                    .any(|(at, _)| starts_word(at) && word_at(at))
                || set.match_indices("Test").any(|(at, _)| word_at(at))
            {
                return true;
            }
            // `src/main/java/`, `src/jvmMain/kotlin/`: a Gradle/Maven source set's
            // language root. What follows is the package's directories, whose names say
            // nothing of the layout (`com/playtomic/tests/wallet` is production code).
            let mut ahead = dirs.clone();
            ahead.next();
            if ahead
                .next()
                .is_some_and(|root| JVM_SOURCE_ROOTS.contains(&root))
            {
                return false;
            }
        }
    }
    false
}

/// The language roots of a Gradle/Maven source set (`src/<set>/<root>/`).
const JVM_SOURCE_ROOTS: &[&str] = &["java", "kotlin", "groovy", "scala"];

/// Whether `caller` can call `d`: the same language family, and test code only from
/// test code (see [`is_test_source`]).
fn visible_from(d: &FnDecl, caller: &FnDecl) -> bool {
    d.jvm() == caller.jvm() && (caller.test_source() || !d.test_source())
}

/// A call receiver `getPaymentClient()` / `paymentClient()` names type `PaymentClient`:
/// the method's name, without a `get` prefix, equals the type's (normalised).
pub(crate) fn getter_names_type(method: &str, type_name: &str) -> bool {
    let m = method
        .strip_prefix("get")
        .filter(|r| r.starts_with(|c: char| c.is_uppercase()))
        .unwrap_or(method);
    let t = normalized(type_name);
    !t.is_empty() && normalized(m) == t
}

/// A recorded call whose receiver narrows the declarations it may reach, monotonically as
/// files are added: a declared receiver type, or a receiver naming something (not `this`,
/// `self`, `super`, `Self`, and not a call or getter, whose type another file's
/// declarations decide). See [`ProjectIndex::candidates_of`].
pub(crate) fn narrowable(r: &CallRef) -> bool {
    if r.receiver_type.is_some() {
        return true;
    }
    match r.receiver.as_deref().map(str::trim) {
        None | Some("this" | "self" | "super" | "Self" | "") => false,
        Some(x) => {
            let last = crate::catalogue::last_segment(x);
            let getter = last
                .strip_prefix("get")
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_uppercase()));
            !x.ends_with(')') && !getter && !x.starts_with('.')
        }
    }
}

/// The 0-based parameter of `d` that argument `arg` (0-based) of a call with `args`
/// arguments binds, as [`ProjectIndex::retried_arg`] reads it. A Kotlin named argument
/// (`name`: `guarded(onGiveUp = { .. }, block = { .. })`) binds the parameter of that
/// name, `None` when `d` has none (Kotlin reference, "Named arguments"); otherwise a
/// trailing lambda (the last argument) binds the last parameter when `d` has more
/// parameters than the call has arguments (defaults before it), and any other argument
/// the parameter at its position.
pub(crate) fn lambda_param(
    d: &FnDecl,
    arg: usize,
    args: usize,
    name: Option<&str>,
) -> Option<usize> {
    if let Some(n) = name {
        return d.param_names.iter().position(|p| **p == *n);
    }
    Some(if arg + 1 == args && d.arity() > args {
        d.arity() - 1
    } else {
        arg
    })
}

/// True when `d` can never retry its parameter `p`, whatever else the project declares:
/// `p` is neither retried nor run per attempt by `d` itself, and `d` passes it on to no
/// call (the only way [`ProjectIndex::resolve_retry`] adds a state). `None` (an argument
/// bound by a name `d` has no parameter of) never retries.
pub(crate) fn never_retries(d: &FnDecl, p: Option<usize>) -> bool {
    let Some(p) = p else { return true };
    !d.rare().retry_params.iter().any(|(x, _)| *x == p)
        && !d.rare().boundary_params.iter().any(|(x, _, _)| *x == p)
        && !d
            .passes_params
            .iter()
            .any(|pp| pp.param() == p && pp.callable)
}

/// A receiver names a type when either normalised name contains the other (at least three
/// characters): `stripeService` → `StripeService`, `api` → `PaymentsApi`. Both names come
/// normalised ([`crate::catalogue::normalize_name`]): the receiver's last segment and a
/// declaration's [`FnDecl::type_norm`].
pub(crate) fn receiver_names_norm(r: &str, t: &str) -> bool {
    r.len() >= 3 && !t.is_empty() && (t.contains(r) || r.contains(t))
}

/// A named receiver (not a call) names declaration `d`'s type: as
/// [`receiver_names_norm`], or, for a receiver written as a type (capitalised), its
/// normalised name is the type's whatever its length (`Q` of `Q.mid { .. }` names
/// `object Q`; a one-letter local `q` does not), or it is `Companion` and `d` is declared
/// in a companion object (`Ids.Companion.fresh()`). `last` is the receiver's last
/// segment, `last_norm` its normalised form. Read by [`ProjectIndex::candidates_of`] and,
/// alike, by the prefilter.
pub(crate) fn receiver_names_decl(last: &str, last_norm: &str, d: &FnDecl) -> bool {
    !d.type_name().is_empty()
        && (receiver_names_norm(last_norm, &d.type_norm())
            || (last.starts_with(char::is_uppercase) && *last_norm == *d.type_norm())
            || (d.companion() && last == "Companion"))
}

impl ProjectIndex {
    /// Merges pass-1 summaries (in a deterministic order) and resolves helpers.
    pub fn build(summaries: Vec<FileSummary>) -> ProjectIndex {
        let mut idx = ProjectIndex::default();
        idx.extend(summaries);
        idx
    }

    /// Adds more pass-1 summaries (a later prefilter round) and resolves again. The
    /// summaries are moved in, not copied; the result equals [`ProjectIndex::build`] over
    /// all summaries so far, whatever order they came in (declarations are kept sorted by
    /// location, registrations by path and offset).
    pub fn extend(&mut self, summaries: Vec<FileSummary>) {
        self.extend_deferred(summaries);
        self.finish();
    }

    /// [`ProjectIndex::extend`] without what only pass 2 reads (whether minting and key
    /// parameters are handled, [`ProjectIndex::mint_handled`],
    /// [`ProjectIndex::key_arg_handled`]): the prefilter's rounds merge files this way and
    /// call [`ProjectIndex::finish`] once before pass 2.
    pub fn extend_deferred(&mut self, summaries: Vec<FileSummary>) {
        let idx = self;
        let mut clock = PhaseClock::new();
        // Each name's declarations get their room when the name is first met: vectors
        // grown by pushes (then shrunk) left a third of the peak heap of a run over 14k
        // files free in the allocator's arenas, and room reserved for every name up front
        // could not reuse the memory of the files merged before. Counted by the names'
        // hashes: a collision only reserves more.
        let hasher = foldhash::fast::FixedState::default();
        let mut counts: HashMap<u64, usize> = HashMap::new();
        for s in &summaries {
            for f in s.functions.iter().filter(|f| !f.name.is_empty()) {
                *counts
                    .entry(std::hash::BuildHasher::hash_one(&hasher, f.name.as_str()))
                    .or_default() += 1;
            }
        }
        let mut moved = 0usize;
        for s in summaries {
            // The files' own lists, freed as their declarations move into the names'
            // lists, leave room the allocator keeps: given back every 16 MiB moved.
            moved += s.functions.len() * std::mem::size_of::<FnDecl>();
            if moved >= 16 << 20 {
                moved = 0;
                crate::check::release_free_memory();
            }
            idx.retry_sites.extend(s.retry_sites);
            // A nameless function (an anonymous Kotlin `fun`) cannot be called by name; an
            // empty callee (`(f)()`) must not find it.
            // One copy of the path per file, shared by its declarations.
            let path = Name::from(s.path.as_str());
            for mut f in s.functions.into_iter().filter(|f| !f.name.is_empty()) {
                if *f.path == *path {
                    f.path = path;
                }
                let room = counts
                    .remove(&std::hash::BuildHasher::hash_one(&hasher, f.name.as_str()))
                    .unwrap_or(0);
                match idx.functions.get_mut(&f.name) {
                    Some(v) => {
                        v.reserve_exact(room);
                        v.push(f);
                    }
                    None => {
                        let mut v = Vec::with_capacity(room.max(1));
                        let name = f.name;
                        v.push(f);
                        idx.functions.insert(name, v);
                    }
                }
            }
            idx.registrations.extend(s.registrations);
            idx.retrofit_services.extend(s.retrofit_services);
            idx.shedlock_enabled |= s.shedlock_enabled;
            idx.retrying_types.extend(s.retrying_types);
            idx.clone_sites.extend(s.clone_sites);
            idx.retry_boundaries += s.retry_boundaries;
            if !s.reactive_retries.is_empty() {
                idx.reactive_retry_sites.extend(s.reactive_retries);
                idx.reactive_retry_sites.sort();
                idx.reactive_retry_sites.dedup();
            }
            idx.named_keys.extend(s.named_keys);
            idx.camel_routes.extend(s.camel_routes);
            idx.camel_sends.extend(s.camel_sends);
            for b in s.bound_key_fields {
                insert_bound(&mut idx.bound_at_sinks, b);
            }
            idx.bound_arg_candidates.extend(s.bound_arg_candidates);
            for (g, t) in s.property_getters {
                let t = Name::from(t.as_str());
                let ts = idx
                    .property_getters
                    .entry(Name::from(g.as_str()))
                    .or_default();
                if !ts.contains(&t) {
                    ts.push(t);
                }
            }
            if !s.types.is_empty() {
                let ts = idx
                    .file_types
                    .entry(Name::from(s.path.as_str()))
                    .or_default();
                for (name, _, top) in &s.types {
                    match ts.iter_mut().find(|(t, _)| **t == **name) {
                        Some((_, t)) => *t |= *top,
                        None => ts.push((Name::from(name.as_str()), *top)),
                    }
                }
            }
            for tb in s.type_boundaries {
                let v = idx
                    .type_boundaries
                    .entry(Name::from(tb.type_name.as_str()))
                    .or_default();
                if let Err(at) = v.binary_search(&tb) {
                    v.insert(at, tb);
                }
            }
            for (name, supers, _) in s.types {
                let ss = idx
                    .type_supers
                    .entry(Name::from(name.as_str()))
                    .or_default();
                for sup in supers {
                    let sup = Name::from(sup.as_str());
                    if !ss.contains(&sup) {
                        ss.push(sup);
                    }
                }
            }
        }
        // Vectors grown by pushes hold up to twice their length: one declaration is
        // 96 bytes and the SDKs have 100k+ of them (420k on google-cloud-rust).
        for decls in idx.functions.values_mut() {
            decls.shrink_to_fit();
        }
        for ts in idx.file_types.values_mut() {
            ts.sort();
        }
        for ss in idx.type_supers.values_mut() {
            ss.sort();
        }
        idx.named_keys.sort();
        idx.named_keys.dedup();
        idx.camel_routes.sort();
        idx.camel_routes.dedup();
        idx.camel_sends.sort_by(|a, b| a.location.cmp(&b.location));
        idx.camel_sends.dedup();
        idx.resolve_camel();
        clock.lap("merge");
        for decls in idx.functions.values_mut() {
            decls.sort_by(|a, b| a.location_cmp(b));
        }
        idx.clone_sites.sort();
        idx.registrations
            .sort_by(|a, b| (&a.path, a.offset).cmp(&(&b.path, b.offset)));
        for r in &mut idx.registrations {
            if let Some(t) = &r.type_name
                && idx.retrying_types.contains(t)
            {
                r.retrying = true;
            }
        }
        clock.lap("sort");
        idx.propagate_key_params();
        clock.lap("key params");
        idx.bound_key_fields = idx.bound_at_sinks.clone();
        for c in &idx.bound_arg_candidates {
            let key = idx.functions.get(&*c.callee).is_some_and(|decls| {
                decls.iter().any(|d| {
                    d.jvm()
                        && d.arity() == c.arity as usize
                        && d.key_params()
                            .iter()
                            .any(|(p, _)| *p == c.position as usize)
                })
            });
            if key {
                insert_bound(&mut idx.bound_key_fields, c.field());
            }
        }
        clock.lap("bound");
        idx.resolve();
        clock.lap("resolve");
        idx.resolve_retry();
        clock.lap("retry");
        idx.handled_stale = true;
        idx.sites_stale = true;
        idx.retrofit_services
            .sort_by(|a, b| (&a.iface, &a.client).cmp(&(&b.iface, &b.client)));
        idx.retrofit_services.dedup();
        idx.with_key_params.clear();
        idx.with_header_reads.clear();
        idx.with_fresh.clear();
        idx.with_mints.clear();
        for (name, decls) in &idx.functions {
            if decls.iter().any(|d| !d.key_params().is_empty()) {
                idx.with_key_params.insert(*name);
            }
            if decls.iter().any(|d| d.reads_key_header) {
                idx.with_header_reads.insert(*name);
            }
        }
        for (name, states) in &idx.fresh {
            if states.iter().any(Option::is_some) {
                idx.with_fresh.insert(*name);
            }
        }
        idx.mint_callers.clear();
        for (name, states) in &idx.mints {
            if states.iter().any(Option::is_some) {
                idx.with_mints.insert(*name);
                let decls = &idx.functions[name.as_str()];
                let mut bits = 0;
                for (d, _) in decls.iter().zip(states).filter(|(_, m)| m.is_some()) {
                    bits |= match (d.jvm(), d.test_source()) {
                        (true, false) => MINT_FROM_JVM_MAIN | MINT_FROM_JVM_TEST,
                        (true, true) => MINT_FROM_JVM_TEST,
                        (false, false) => MINT_FROM_RUST_MAIN | MINT_FROM_RUST_TEST,
                        (false, true) => MINT_FROM_RUST_TEST,
                    };
                }
                idx.mint_callers.insert(*name, bits);
            }
        }
        clock.lap("names");
    }

    /// The declarations a call may refer to, from the call's receiver:
    /// - a receiver with a declared type in the caller's file ([`Call::receiver_type`]):
    ///   declarations in that type or in types that list it as a supertype;
    /// - no receiver (or `this`/`self`): declarations in the caller's file, else top-level
    ///   functions elsewhere;
    /// - a receiver that names a type (`Keys.newKey()`, `stripeService.charge(..)`):
    ///   declarations in types whose name matches;
    /// - any other receiver: every declaration of that name, unless the name is one of
    ///   [`COMMON_NAMES`] (then none: `map.remove(id)` is not `Store.remove`).
    pub fn candidates<'a>(&'a self, call: &Call, from_path: &str) -> Vec<(usize, &'a FnDecl)> {
        let receiver = crate::catalogue::receiver_text(call);
        self.candidates_of(
            &call.callee,
            call.args.len(),
            receiver.as_deref(),
            call.receiver_type.as_deref(),
            from_path,
        )
    }

    /// True when `call` (made in the file `from_path`) reaches a declaration of the
    /// project ([`Self::candidates`]): a free call that resolves, or a call on a receiver
    /// that names the declaring type (its declared type, or a name that contains or is
    /// contained in the type's). A receiver that names no candidate's type (`keys.next()`
    /// with `next` declared by unrelated iterators) does not count.
    pub fn declared_for(&self, call: &Call, from_path: &str) -> bool {
        let cands = self.candidates(call, from_path);
        if cands.is_empty() {
            return false;
        }
        let Some(r) = crate::catalogue::receiver_text(call) else {
            return true;
        };
        let last = normalized(crate::catalogue::last_segment(&r));
        cands.iter().any(|(_, d)| {
            !d.type_name().is_empty()
                && (call.receiver_type.as_deref() == Some(&*d.type_name())
                    || receiver_names_norm(&last, &d.type_norm()))
        })
    }

    /// The supertypes, transitively and nearest first (one set per inheritance level), that
    /// every top-level JVM type declared in `path` inherits: a call without a receiver in
    /// such a file may reach a method of one of them, the nearest level declaring it first.
    /// Empty when the file declares no type, or its types share no supertype.
    /// Every supertype the index knows, transitively, of the types declared in the file
    /// `path` (the prefilter demands their declarations: a call with no receiver reaches
    /// a method inherited through them, [`Self::candidates_of`]).
    pub(crate) fn file_supertypes(&self, path: &str) -> Vec<&str> {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut frontier: Vec<&str> = self.file_type_names(path).collect();
        let mut out = Vec::new();
        while let Some(t) = frontier.pop() {
            for sup in self.type_supers.get(t).into_iter().flatten() {
                if seen.insert(sup.as_str()) {
                    out.push(sup.as_str());
                    frontier.push(sup.as_str());
                }
            }
        }
        out
    }

    /// The JVM types declared at the top of the file `path` (simple names).
    pub(crate) fn file_type_names(&self, path: &str) -> impl Iterator<Item = &str> + '_ {
        self.file_types
            .get(path)
            .into_iter()
            .flatten()
            .filter(|(_, top)| *top)
            .map(|(t, _)| t.as_str())
    }

    fn inherited_levels(&self, path: &str) -> Vec<Vec<&str>> {
        let types: Vec<&str> = self.file_type_names(path).collect();
        if types.is_empty() {
            return Vec::new();
        }
        let levels_of = |t: &str| -> Vec<Vec<&str>> {
            let mut seen: HashSet<&str> = [t].into_iter().collect();
            let mut levels = Vec::new();
            let mut frontier = vec![t];
            while !frontier.is_empty() {
                let mut next = Vec::new();
                for f in frontier {
                    for sup in self.type_supers.get(f).into_iter().flatten() {
                        if seen.insert(sup.as_str()) {
                            next.push(sup.as_str());
                        }
                    }
                }
                if !next.is_empty() {
                    levels.push(next.clone());
                }
                frontier = next;
            }
            levels
        };
        let mut levels = levels_of(types[0]);
        for t in &types[1..] {
            let common: HashSet<&str> = levels_of(t).into_iter().flatten().collect();
            for l in &mut levels {
                l.retain(|x| common.contains(x));
            }
        }
        levels.retain(|l| !l.is_empty());
        levels
    }

    /// The type a call written as `name(..)` returns, when every project declaration of
    /// that name (in the caller's language family) declares the same return type.
    fn returned_type(&self, call_text: &str, jvm: bool) -> Option<&str> {
        let name = call_text.split('(').next().unwrap_or(call_text).trim();
        let mut types: Vec<&str> = self
            .functions
            .get(name)
            .into_iter()
            .flatten()
            .filter(|d| d.jvm() == jvm)
            .map(|d| &*d.return_type)
            .collect();
        // A Kotlin property read through its getter from Java (`getPaymentSettings()`).
        if jvm {
            types.extend(
                self.property_getters
                    .get(name)
                    .into_iter()
                    .flatten()
                    .map(|n| &**n),
            );
        }
        let first = *types.first().filter(|t| !t.is_empty())?;
        types.iter().all(|t| *t == first).then_some(first)
    }

    /// [`Self::candidates`] of the call a parameter is passed on to ([`PassedParam`]).
    fn candidates_of_passed<'a>(
        &'a self,
        pp: &PassedParam,
        from_path: &str,
    ) -> Vec<(usize, &'a FnDecl)> {
        self.candidates_of_ref(&pp.call, from_path)
    }

    /// [`Self::candidates`] of a recorded call ([`CallRef`]).
    pub fn candidates_of_ref<'a>(
        &'a self,
        c: &CallRef,
        from_path: &str,
    ) -> Vec<(usize, &'a FnDecl)> {
        self.candidates_of(
            &c.callee,
            c.arity,
            c.receiver.as_deref(),
            c.receiver_type.as_deref(),
            from_path,
        )
    }

    /// [`Self::candidates`] from a call's parts. Declarations without a body (interface
    /// and abstract methods) are left out when the call also reaches one with a body.
    pub fn candidates_of<'a>(
        &'a self,
        callee: &str,
        args: usize,
        receiver: Option<&str>,
        receiver_type: Option<&str>,
        from_path: &str,
    ) -> Vec<(usize, &'a FnDecl)> {
        let Some(decls) = self.functions.get(callee) else {
            return Vec::new();
        };
        let jvm = Language::from_path(std::path::Path::new(from_path)) != Some(Language::Rust);
        let test = is_test_source(from_path);
        let all = decls.iter().enumerate().filter(|(_, d)| {
            arity_ok_from(d, args, from_path) && d.jvm() == jvm && (test || !d.test_source())
        });
        // A receiver whose declared type is known resolves by that type alone: the
        // declarations in it, or in the types that implement it. None means a library
        // type (`Interval::tick`, `List::add`), never a project function of that name.
        let mut out: Vec<(usize, &FnDecl)> = if let Some(t) = receiver_type {
            // `HttpRequest.Builder`: only a project `Builder` nested in `HttpRequest`.
            let (outer, t) = match t.rsplit_once('.') {
                Some((o, t)) => (Some(o), t),
                None => (None, t),
            };
            // A Kotlin companion object's functions are not called on an instance.
            all.filter(|(_, d)| !d.companion())
                .filter(|(_, d)| {
                    (*d.type_name() == *t && outer.is_none_or(|o| *d.type_outer() == *o))
                        || (outer.is_none() && d.type_supers().iter().any(|s| **s == *t))
                        || (outer.is_none() && *d.extends() == *t)
                })
                .collect()
        } else {
            match receiver.map(str::trim) {
                None | Some("this") | Some("self") | Some("super") | Some("Self") => {
                    // `T(..)` where this file declares a top-level `T`: that one, not a
                    // `T` nested in another type of the file.
                    let top_type = jvm
                        && self
                            .file_types
                            .get(from_path)
                            .is_some_and(|ts| ts.iter().any(|(t, top)| *top && **t == *callee));
                    let same: Vec<_> = all
                        .clone()
                        .filter(|(_, d)| *d.path == *from_path)
                        .filter(|(_, d)| {
                            !top_type || d.type_outer().is_empty() || *d.type_name() != *callee
                        })
                        .collect();
                    if !same.is_empty() {
                        same
                    } else if jvm
                        && self
                            .file_types
                            .get(from_path)
                            .is_some_and(|ts| ts.iter().any(|(t, _)| **t == *callee))
                    {
                        // `T(..)` / `new T(..)` of a type this file declares (a private
                        // record with no constructor written out): that type's
                        // constructor, not a namesake's of another file.
                        Vec::new()
                    } else {
                        // A top-level function, or a method the caller's type inherits
                        // from a project supertype (`newWorker(..)` in a class extending
                        // `BaseWorker`), from the nearest supertype declaring it.
                        // Constructors too: `T(..)`, `new T(..)` from anywhere.
                        let mut out: Vec<_> = all
                            .clone()
                            .filter(|(_, d)| d.type_name().is_empty() || d.type_name() == d.name)
                            .collect();
                        if jvm {
                            for level in self.inherited_levels(from_path) {
                                let found: Vec<_> = all
                                    .clone()
                                    .filter(|(_, d)| level.contains(&&*d.type_name()))
                                    .collect();
                                if !found.is_empty() {
                                    out.extend(found);
                                    break;
                                }
                            }
                        }
                        out
                    }
                }
                Some(r) => {
                    let last = crate::catalogue::last_segment(r);
                    // A receiver that is a call names its type only as a getter does
                    // (`getPaymentClient()` → `PaymentClient`); a variable may name it
                    // in part (`stripeClient`, `client` → `StripeClient`).
                    let is_call = r.trim_end().ends_with(')');
                    // `Outer.Inner(..)` (Kotlin) or `shop.model.Command(..)`: when the
                    // project declares constructors of that name, the ones of the type
                    // nested there or declared at top level, and nothing else (a receiver
                    // naming a type by part, `CaptureTraces`, or a companion's factory of
                    // the same name elsewhere, is not the way to it).
                    if jvm
                        && !is_call
                        && callee.starts_with(char::is_uppercase)
                        && crate::model::names_a_type_scope(r)
                        && all
                            .clone()
                            .any(|(_, d)| *d.type_name() == *callee && *d.name == *callee)
                    {
                        let package = !last.starts_with(char::is_uppercase);
                        return all
                            .filter(|(_, d)| {
                                *d.type_name() == *callee
                                    && *d.name == *callee
                                    && (if package {
                                        d.type_outer().is_empty()
                                    } else {
                                        *d.type_outer() == *last
                                    })
                            })
                            .collect();
                    }
                    let last_norm = normalized(last);
                    let mut typed: Vec<_> = all
                        .clone()
                        .filter(|(_, d)| {
                            !d.type_name().is_empty()
                                && if is_call {
                                    getter_names_type(last, &d.type_name())
                                } else {
                                    receiver_names_decl(last, &last_norm, d)
                                }
                        })
                        .collect();
                    // A receiver that is a getter call of a project method whose
                    // declarations all return one type (`getPaymentSettings():
                    // PaymentSettingRepository`), or a Kotlin property read through its
                    // getter: that type and its implementations.
                    // (A recorded call keeps only the receiver's last segment, without
                    // its parentheses: a getter's name says it is a call.)
                    let getter = last
                        .strip_prefix("get")
                        .is_some_and(|x| x.starts_with(|c: char| c.is_uppercase()));
                    // Only a getter: a builder chain's links (`.json(..).build()`) return
                    // nested `Builder` types of every name's builder alike.
                    if typed.is_empty()
                        && getter
                        && let Some(t) = self.returned_type(last, jvm)
                    {
                        typed = all
                            .clone()
                            .filter(|(_, d)| {
                                *d.type_name() == *t || d.type_supers().iter().any(|s| **s == *t)
                            })
                            .collect();
                    }
                    // A class's name as the receiver calls its companion object's
                    // functions, not its instance methods (`Receipt.fresh()`).
                    if last.starts_with(char::is_uppercase)
                        && typed.iter().any(|(_, d)| d.companion())
                    {
                        typed.retain(|(_, d)| d.companion());
                    }
                    if !typed.is_empty() {
                        typed
                    } else if COMMON_NAMES.contains(&callee)
                        || last.starts_with(|c: char| c.is_uppercase())
                    {
                        Vec::new()
                    } else {
                        all.collect()
                    }
                }
            }
        };
        if out.iter().any(|(_, d)| !d.bodiless) {
            out.retain(|(_, d)| !d.bodiless);
        }
        out
    }

    /// Name-level unanimity used inside the fixpoint (no receiver is known there): the
    /// state shared by every arity-compatible declaration of `name` in the caller's
    /// language family (`jvm`: Java and Kotlin call each other, Rust only Rust), if all
    /// have one.
    fn unanimous<'a, T>(
        &'a self,
        states: &'a HashMap<Name, Vec<Option<T>>>,
        name: &str,
        args: usize,
        caller: &FnDecl,
    ) -> Option<&'a T> {
        let decls = self.functions.get(name)?;
        let mut info = None;
        for (d, st) in decls.iter().zip(states.get(name)?) {
            if arity_ok_from(d, args, &caller.path) && visible_from(d, caller) {
                info.get_or_insert(st.as_ref()?);
            }
        }
        info
    }

    fn name_fresh(&self, name: &str, args: usize, caller: &FnDecl) -> Option<&HelperInfo> {
        self.unanimous(&self.fresh, name, args, caller)
            .map(|b| &**b)
    }

    /// What a recorded call returns fresh, inside the fixpoint: the name's unanimous state
    /// ([`Self::name_fresh`]), and, for a call of one of [`COMMON_NAMES`] on a named receiver,
    /// only when that receiver resolves to some declaration at all ([`Self::candidates_of`]). `headers.get(name)` on a `HeaderMap`
    /// parameter, or `map.get(id)` on any receiver that names no project type, is a library
    /// call, never the project's own `get` that happens to return a fresh value.
    fn ref_fresh(
        &self,
        r: SharedCall,
        caller: &FnDecl,
        cache: &mut NarrowCache,
    ) -> Option<&HelperInfo> {
        if !self.with_fresh.contains(&*r.callee) {
            return None;
        }
        let Some(info) = self.name_fresh(&r.callee, r.arity, caller) else {
            return self.narrowed_fresh(r, caller, cache);
        };
        // Only a common collection-like name on a named receiver (`headers.get(name)`,
        // `map.put(k, v)`) must resolve through its receiver: a call without receiver (or on
        // `this`/`self`) may reach an inherited method, a static import or a trait's default
        // method, and a named receiver of another name a Kotlin extension or a companion
        // object's function, which the receiver cannot tell apart: the name decides there.
        let own = matches!(
            r.receiver.as_deref().map(str::trim),
            None | Some("this" | "self" | "super" | "Self")
        );
        (own || !COMMON_NAMES.contains(&&*r.callee)
            || !self.cached_candidates(r, caller, cache).is_empty())
        .then_some(info)
    }

    /// [`Self::candidates_of_ref`] of a call recorded in `caller`, as positions in
    /// [`Self::functions`]`[callee]`, computed once per [`Self::resolve`]: what a call
    /// resolves to does not change while the fixpoints run.
    fn cached_candidates<'c>(
        &self,
        r: SharedCall,
        caller: &FnDecl,
        cache: &'c mut NarrowCache,
    ) -> &'c [usize] {
        // Calls are shared process-wide ([`SharedCall`]) and resolve from the caller's file:
        // keyed by both addresses (the caller's shared path). A call on a typed or named
        // receiver resolves alike from every file of one language and kind (test or
        // not), which [`candidates_of`](Self::candidates_of) reads of the path; only a
        // call on `this`/`self` or none looks in the file and its supertypes. Keyed by
        // that class (a number below any address), such a call resolves once for all
        // files: in google-cloud-rust, `builder.send()` in hundreds of files, against
        // every `send` of the generated clients, was most of the index's time.
        let own = r.receiver_type.is_none()
            && matches!(
                r.receiver.as_deref().map(str::trim),
                None | Some("this" | "self" | "super" | "Self")
            );
        let from = if own {
            caller.path.as_str().as_ptr() as usize
        } else {
            path_class(&caller.path)
        };
        cache.entry((r.addr(), from)).or_insert_with(|| {
            self.candidates_of_ref(&r, &caller.path)
                .into_iter()
                .map(|(j, _)| j)
                .collect()
        })
    }

    /// When the name's declarations disagree: a call whose receiver narrows its candidates
    /// ([`narrowable`]: a declared type, or a receiver naming a type, `Ids.newId()`) is
    /// fresh when every candidate it resolves to is ([`Self::candidates_of_ref`]), so one
    /// unrelated namesake (`Names.newId(id)`) does not hide a helper one call down.
    fn narrowed_fresh(
        &self,
        r: SharedCall,
        caller: &FnDecl,
        cache: &mut NarrowCache,
    ) -> Option<&HelperInfo> {
        if !narrowable(&r) {
            return None;
        }
        let states = self.fresh.get(&*r.callee)?;
        // No declaration of the name is fresh: no candidate is (the common case; resolving
        // the receiver costs a pass over every declaration of the name).
        if states.iter().all(Option::is_none) {
            return None;
        }
        let mut info = None;
        for &j in self.cached_candidates(r, caller, cache) {
            info.get_or_insert(states.get(j)?.as_deref()?);
        }
        info
    }

    /// Retry combinators through wrappers: a function that passes its parameter on to a
    /// parameter some declaration of the callee retries (every arity-compatible
    /// declaration of that callee in the caller's language must agree) retries it too.
    /// The retried parameters of declaration `i` of `name` ([`Self::retry`] is sparse).
    fn retry_at(&self, name: &str, i: usize) -> &[RetryState] {
        self.retry.get(name).map_or(&[], |v| &v[i])
    }

    fn resolve_retry(&mut self) {
        let mut names: Vec<Name> = self.functions.keys().copied().collect();
        names.sort();
        for n in &names {
            let v = self.functions[n]
                .iter()
                .map(|d| {
                    let mut st: Vec<RetryState> = d
                        .rare()
                        .retry_params
                        .iter()
                        .map(|(p, why)| {
                            let on_throw =
                                d.rare().retry_on_throw.contains(p).then(|| ParamBoundary {
                                    kind: crate::catalogue::BoundaryKind::Retry,
                                    entry: INFERRED_COMBINATOR.to_string(),
                                    flavor: RETRY_ON_THROW.to_string(),
                                });
                            (*p, why.clone(), on_throw)
                        })
                        .collect();
                    for (p, why, b) in &d.rare().boundary_params {
                        if !st.iter().any(|(x, _, _)| x == p) {
                            st.push((*p, why.clone(), Some(b.clone())));
                        }
                    }
                    st
                })
                .collect::<Vec<Vec<RetryState>>>();
            // Sparse: only names with a retried parameter (a missing name has none).
            if v.iter().any(|st| !st.is_empty()) {
                self.retry.insert(*n, v);
            } else {
                self.retry.remove(n);
            }
        }
        // A least fixpoint: every round adds a state, and there are finitely many, so it
        // ends; no cap, or a long wrapper chain would depend on how files were batched.
        let mut work = Worklist::new(
            &names,
            |n| &self.functions[n],
            |d| {
                d.passes_params
                    .iter()
                    .filter(|pp| pp.callable)
                    .map(|pp| &*pp.call.callee)
                    .collect()
            },
        );
        loop {
            let mut changed = false;
            for (k, n) in names.iter().enumerate() {
                if !work.pending(k) {
                    continue;
                }
                if NOT_COMBINATORS.contains(&n.as_str()) {
                    continue;
                }
                for i in 0..self.functions[n].len() {
                    if !work.take(k, i) {
                        continue;
                    }
                    let d = &self.functions[n][i];
                    let mut add = Vec::new();
                    for pp in d.passes_params.iter().filter(|pp| pp.callable) {
                        let (pi, callee) = (&pp.param(), &*pp.call.callee);
                        if self.retry_at(n, i).iter().any(|(x, _, _)| x == pi)
                            || add.iter().any(|(x, _, _)| x == pi)
                        {
                            continue;
                        }
                        let Some(decls) = self.functions.get(callee) else {
                            continue;
                        };
                        // No declaration of the callee retries a parameter (yet): none of
                        // them retries this one (most names; skipping them spares a pass
                        // over every declaration of a name like `send` per call of it).
                        if !self.retry.contains_key(callee) {
                            continue;
                        }
                        let fits = |c: &FnDecl| arity_ok(c, pp.call.arity) && c.jvm() == d.jvm();
                        // Does declaration `j` of the callee retry the argument?
                        let retries = |j: usize, c: &FnDecl| -> bool {
                            let Some(ai) = pp.position_in(c) else {
                                return false;
                            };
                            self.retry_at(callee, j).iter().any(|(x, _, _)| *x == ai)
                        };
                        // The boundary the first retrying declaration hands it to.
                        let via = |j: usize, c: &FnDecl| -> Option<ParamBoundary> {
                            let ai = pp.position_in(c)?;
                            self.retry_at(callee, j)
                                .iter()
                                .find(|(x, _, _)| *x == ai)
                                .and_then(|(_, _, b)| b.clone())
                        };
                        let fitting: Vec<(usize, &FnDecl)> =
                            decls.iter().enumerate().filter(|(_, c)| fits(c)).collect();
                        let yes = fitting.iter().filter(|(j, c)| retries(*j, c)).count();
                        let mut all = yes == fitting.len();
                        if yes > 0 && !all {
                            // Candidates disagree: a receiver that names a type
                            // (`RetryHelper.executeWithRetry(..)`) picks the declarations on
                            // that type, when there are any.
                            if let Some(r) = pp.call.receiver.as_deref() {
                                let r = normalized(crate::catalogue::last_segment(r));
                                let typed: Vec<&(usize, &FnDecl)> = fitting
                                    .iter()
                                    .filter(|(_, c)| receiver_names_norm(&r, &c.type_norm()))
                                    .collect();
                                all =
                                    !typed.is_empty() && typed.iter().all(|(j, c)| retries(*j, c));
                            }
                        }
                        if yes > 0 && all {
                            let b = fitting
                                .iter()
                                .find(|(j, c)| retries(*j, c))
                                .and_then(|(j, c)| via(*j, c));
                            let how = if b.as_ref().is_some_and(|b| b.entry != INFERRED_COMBINATOR)
                            {
                                "runs it per attempt"
                            } else {
                                "retries it"
                            };
                            let hands = if pp.lambda {
                                "runs it in a lambda it passes to"
                            } else {
                                "passes it to"
                            };
                            add.push((
                                *pi,
                                format!("{hands} `{callee}`, which {how} ({}:{})", d.path, pp.line),
                                b,
                            ));
                        }
                    }
                    if !add.is_empty() {
                        changed = true;
                        let len = self.functions[n].len();
                        self.retry
                            .entry(*n)
                            .or_insert_with(|| vec![Vec::new(); len])[i]
                            .extend(add);
                        work.touch(k);
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// The processor types each boundary's Camel send runs: the routes from the sent
    /// endpoint, and every in-process endpoint they send on to, transitively.
    fn resolve_camel(&mut self) {
        let mut by_endpoint: HashMap<&str, Vec<&CamelRoute>> = HashMap::new();
        for r in &self.camel_routes {
            by_endpoint.entry(r.endpoint.as_str()).or_default().push(r);
        }
        let mut out: HashMap<String, (CamelSend, String)> = HashMap::new();
        for send in &self.camel_sends {
            let mut seen: HashSet<&str> = HashSet::new();
            let mut work = vec![send.endpoint.as_str()];
            while let Some(e) = work.pop() {
                if !seen.insert(e) {
                    continue;
                }
                for r in by_endpoint.get(e).into_iter().flatten() {
                    for t in &r.processors {
                        out.entry(t.clone())
                            .or_insert_with(|| (send.clone(), r.endpoint.clone()));
                    }
                    work.extend(r.to.iter().map(String::as_str));
                }
            }
        }
        self.camel_processors = out;
    }

    /// The boundary whose Camel send runs processor type `type_name` (a
    /// `org.apache.camel.Processor`), and the route endpoint that runs it.
    pub fn camel_processor(&self, type_name: &str) -> Option<(&CamelSend, &str)> {
        self.camel_processors
            .get(type_name)
            .map(|(s, e)| (s, e.as_str()))
    }

    /// Which mints and key parameters leave for the wire only inside a `try` that catches
    /// every exception ([`crate::model::FileModel::catch_all`]), in the function or in a
    /// helper it calls there: a failure of that send is handled and does not leave the
    /// function, so a boundary that runs again only when an exception leaves it (Spring
    /// Retry `@Retryable`, a listener the broker redelivers to, a combinator that retries
    /// on a thrown exception) is not run again by it. Greatest fixpoints: every candidate
    /// starts handled when its own sinks are, and loses it when a call outside such a
    /// `try` reaches a helper that is not; so a cycle of helpers with no sink outside a
    /// `try` stays handled, and any path to an unhandled sink makes the caller unhandled.
    /// Completes what [`ProjectIndex::extend_deferred`] left out; a no-op when nothing is.
    pub fn finish(&mut self) {
        // The retry-site lists and the handled states read the index and write disjoint
        // fields: they are worked out side by side.
        let mut clock = PhaseClock::new();
        let sites = self
            .sites_stale
            .then(|| std::mem::take(&mut self.retry_sites));
        let this = &*self;
        let (lists, handled) = rayon::join(
            || sites.as_ref().map(|sites| this.site_lists(sites)),
            || this.handled_stale.then(|| this.handled_states()),
        );
        if let (Some(sites), Some(lists)) = (sites, lists) {
            self.set_site_lists(sites, lists);
        }
        if let Some((mh, kh)) = handled {
            self.mint_handled = mh;
            self.key_params_handled = kh;
            self.handled_stale = false;
        }
        clock.lap("sites and handled");
        if std::env::var_os("IDEMLINT_TRACE_INDEX").is_some() {
            let mut names: Vec<&Name> = self.retry.keys().collect();
            names.sort();
            for n in names {
                for (i, st) in self.retry[n].iter().enumerate() {
                    if let Some((p, why, _)) = st.first() {
                        let d = &self.functions[n][i];
                        eprintln!(
                            "index: combinator {n} at {}: parameter {p} {why}",
                            d.location()
                        );
                    }
                }
            }
        }
    }

    /// Brings the retry sites that reach an HTTP client ([`Self::okhttp_retry_sites`],
    /// [`Self::spring_retry_sites`], [`Self::http_retry_sites`],
    /// [`Self::client_retry_sites`]) up to date with the files merged so far. Only pass 2
    /// and the prefilter's last question ([`crate::prefilter::needs_retry_evidence`]) read
    /// them, so the rounds' merges leave them stale and this runs once per need.
    pub fn resolve_sites(&mut self) {
        if !self.sites_stale {
            return;
        }
        let mut clock = PhaseClock::new();
        let sites = std::mem::take(&mut self.retry_sites);
        let lists = self.site_lists(&sites);
        self.set_site_lists(sites, lists);
        clock.lap("sites");
    }

    /// The retry-site lists of [`Self::resolve_sites`] (per client, OkHttp, Spring) over
    /// `sites`, the index's retry sites taken out of it.
    fn site_lists(&self, sites: &[RetrySite]) -> SiteLists {
        let graph = SiteGraph::of(self, sites);
        (
            self.client_retry_sites(&graph),
            graph.reaching(HTTP_OKHTTP, |_| true),
            graph.reaching(HTTP_SPRING, |_| true),
            graph.reaching(HTTP_FEIGN, |_| true),
        )
    }

    /// Stores [`Self::site_lists`] and puts the retry sites back.
    fn set_site_lists(
        &mut self,
        sites: Vec<RetrySite>,
        (clients, okhttp, spring, feign): SiteLists,
    ) {
        let idx = self;
        idx.client_retry_sites = clients;
        idx.okhttp_retry_sites = okhttp;
        idx.spring_retry_sites = spring;
        idx.feign_retry_sites = feign;
        idx.http_retry_sites = idx
            .okhttp_retry_sites
            .iter()
            .chain(&idx.spring_retry_sites)
            .cloned()
            .collect();
        idx.http_retry_sites.sort();
        idx.http_retry_sites.dedup();
        idx.retry_sites = sites;
        idx.sites_stale = false;
    }

    /// Whether the retry-site lists are up to date ([`Self::resolve_sites`]).
    pub fn sites_resolved(&self) -> bool {
        !self.sites_stale
    }

    /// Whether each minting declaration's key, and each key parameter's, leaves only from
    /// inside a `try` that catches every exception: [`Self::mint_handled`] and
    /// [`Self::key_params_handled`] as [`Self::finish`] stores them.
    fn handled_states(&self) -> HandledStates {
        let mut names: Vec<&Name> = self.functions.keys().collect();
        names.sort();
        // Mints.
        // Sparse, as `mints` is: only names with a minting declaration.
        let mut mh: HashMap<Name, Vec<bool>> = HashMap::new();
        for (n, st) in &self.mints {
            let v = self.functions[n]
                .iter()
                .zip(st)
                .map(|(d, m)| m.is_some() && !d.sink_unhandled && !d.bodiless)
                .collect();
            mh.insert(*n, v);
        }
        // A state reads the states of the body's calls' names.
        let mut work = Worklist::new(
            &names,
            |n| &self.functions[n],
            |d| d.call_refs.iter().map(|r| &*r.callee).collect(),
        );
        loop {
            let mut changed = false;
            for (k, n) in names.iter().enumerate() {
                if !work.pending(k) {
                    continue;
                }
                for i in 0..self.functions[*n].len() {
                    if !mh.get(*n).is_some_and(|v| v[i]) || !work.take(k, i) {
                        continue;
                    }
                    let d = &self.functions[*n][i];
                    let unhandled_call = |k: usize, r: &CallRef| -> bool {
                        !d.rare().handled_calls.contains(&(k as u32))
                            && self.mints.get(&*r.callee).is_some_and(|st| {
                                self.candidates_of_ref(r, &d.path).iter().any(|(j, _)| {
                                    !(*r.callee == ***n && *j == i)
                                        && st[*j].is_some()
                                        && !mh.get(&*r.callee).is_some_and(|v| v[*j])
                                })
                            })
                    };
                    let mut ok = !d
                        .call_refs
                        .iter()
                        .enumerate()
                        .any(|(k, r)| unhandled_call(k, r));
                    // A fresh argument handed to a key parameter outside such a `try`.
                    if ok {
                        ok = !d.rare().keyed_arg_candidates.iter().any(|ka| {
                            let arity = ka.arity as usize;
                            self.key_params_by_name(&ka.callee, arity, d)
                                && d.call_refs.iter().enumerate().any(|(k, r)| {
                                    r.callee == ka.callee
                                        && r.arity == arity
                                        && !d.rare().handled_calls.contains(&(k as u32))
                                })
                        });
                    }
                    if !ok {
                        if let Some(v) = mh.get_mut(*n) {
                            v[i] = false;
                        }
                        work.touch(k);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // Key parameters.
        let mut kh: HashMap<Name, Vec<Vec<usize>>> = HashMap::new();
        for n in &names {
            let v = self.functions[*n]
                .iter()
                .map(|d| {
                    d.key_params()
                        .iter()
                        .map(|(p, _)| *p)
                        .filter(|p| {
                            !d.rare().param_sinks_unhandled.contains(p)
                                && !d.rare().named_param_writes.iter().any(|w| w.0 == *p)
                                && (d.rare().param_sinks_handled.contains(p)
                                    || d.passes_params
                                        .iter()
                                        .any(|pp| pp.param() == *p && !pp.lambda))
                        })
                        .collect()
                })
                .collect::<Vec<Vec<usize>>>();
            // Sparse: only names with a key parameter in some declaration.
            if v.iter().any(|x| !x.is_empty()) {
                kh.insert(*(*n), v);
            }
        }
        // A state reads the states of the names the parameters are passed on to.
        let mut work = Worklist::new(
            &names,
            |n| &self.functions[n],
            |d| {
                d.passes_params
                    .iter()
                    .filter(|pp| !pp.lambda)
                    .map(|pp| &*pp.call.callee)
                    .collect()
            },
        );
        loop {
            let mut changed = false;
            for (k, n) in names.iter().enumerate() {
                if !work.pending(k) {
                    continue;
                }
                for i in 0..self.functions[*n].len() {
                    if !work.take(k, i) {
                        continue;
                    }
                    let d = &self.functions[*n][i];
                    let mut drop = Vec::new();
                    let held: &[usize] = kh.get(*n).map_or(&[], |v| &v[i]);
                    for &p in held {
                        let mut evidence = d.rare().param_sinks_handled.contains(&p);
                        let mut fails = false;
                        for pp in d
                            .passes_params
                            .iter()
                            .filter(|pp| pp.param() == p && !pp.lambda)
                        {
                            let cands = self.candidates_of_passed(pp, &d.path);
                            let keyed: Vec<(usize, usize)> = cands
                                .iter()
                                .filter_map(|(j, c)| {
                                    let ai = pp.position_in(c)?;
                                    c.key_params()
                                        .iter()
                                        .any(|(x, _)| *x == ai)
                                        .then_some((*j, ai))
                                })
                                .collect();
                            if keyed.is_empty() {
                                continue;
                            }
                            evidence = true;
                            if !pp.handled
                                && !keyed.iter().all(|(j, ai)| {
                                    kh.get(&*pp.call.callee).is_some_and(|v| v[*j].contains(ai))
                                })
                            {
                                fails = true;
                            }
                        }
                        if fails || !evidence {
                            drop.push(p);
                        }
                    }
                    if !drop.is_empty() {
                        if let Some(v) = kh.get_mut(*n) {
                            v[i].retain(|p| !drop.contains(p));
                        }
                        work.touch(k);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        (mh, kh)
    }

    /// Whether every declaration a call may refer to (at least one) always assigns the field
    /// `field` ([`FnDecl::overwrites`]; compared normalised).
    pub fn overwrites(&self, call: &Call, from_path: &str, field: &str) -> bool {
        let n = crate::catalogue::normalize_name(field);
        let cands = self.candidates(call, from_path);
        !cands.is_empty()
            && cands
                .iter()
                .all(|(_, d)| d.overwrites().iter().any(|o| **o == *n))
    }

    /// Whether every declaration a call may refer to that mints a key sends it only from
    /// inside a `try` that catches every exception ([`Self::handled_states`]); `false`
    /// when none mints one.
    pub fn mint_handled(&self, call: &Call, from_path: &str) -> bool {
        debug_assert!(!self.handled_stale, "ProjectIndex::finish not called");
        let (Some(states), Some(handled)) = (
            self.mints.get(call.callee.as_str()),
            self.mint_handled.get(call.callee.as_str()),
        ) else {
            return false;
        };
        let minting: Vec<usize> = self
            .candidates(call, from_path)
            .into_iter()
            .map(|(i, _)| i)
            .filter(|i| states[*i].is_some())
            .collect();
        !minting.is_empty() && minting.iter().all(|i| handled[*i])
    }

    /// Whether every declaration a call may refer to that takes a key at argument `arg`
    /// (0-based) puts it into its sinks only from inside a `try` that catches every
    /// exception ([`Self::handled_states`]); `false` when none takes a key there.
    pub fn key_arg_handled(&self, call: &Call, from_path: &str, arg: usize) -> bool {
        debug_assert!(!self.handled_stale, "ProjectIndex::finish not called");
        let Some(handled) = self.key_params_handled.get(call.callee.as_str()) else {
            return false;
        };
        let keyed: Vec<usize> = self
            .candidates(call, from_path)
            .into_iter()
            .filter(|(_, d)| d.key_params().iter().any(|(p, _)| *p == arg))
            .map(|(i, _)| i)
            .collect();
        !keyed.is_empty() && keyed.iter().all(|i| handled[*i].contains(&arg))
    }

    /// Whether a call passes a lambda to a parameter that the callee retries: the
    /// parameter's position and the reason. Every declaration the call may refer to (see
    /// [`ProjectIndex::candidates`]) must retry that parameter. `arg` is the argument's
    /// position in the call; a trailing lambda (the last argument) binds the last
    /// parameter.
    pub fn retried_arg(
        &self,
        call: &Call,
        arg: usize,
        from_path: &str,
    ) -> Option<(String, Option<ParamBoundary>)> {
        if NOT_COMBINATORS.contains(&call.callee.as_str()) {
            return None;
        }
        let states = self.retry.get(call.callee.as_str())?;
        let cands = self.candidates(call, from_path);
        if cands.is_empty() {
            return None;
        }
        let mut reason = None;
        for (i, d) in cands {
            let name = call.args.get(arg).and_then(|a| a.name.as_deref());
            let p = lambda_param(d, arg, call.args.len(), name)?;
            let (_, why, via) = states[i].iter().find(|(x, _, _)| *x == p)?;
            reason.get_or_insert_with(|| (why.clone(), via.clone()));
        }
        reason
    }

    /// The arguments of `call` bound to key parameters of the function it refers to, as
    /// `(argument index, parameter index, parameter name)`, all 0-based: a positional
    /// argument by its position (while no named argument comes before it), a Kotlin named
    /// argument by its name (`charge(token = k)` into `fun charge(amount: Long = 1,
    /// token: String)`).
    pub fn key_args(&self, call: &Call, from_path: &str) -> Vec<(usize, usize, String)> {
        if !self.with_key_params.contains(call.callee.as_str()) {
            return Vec::new();
        }
        let first_named = call
            .args
            .iter()
            .position(|a| a.name.is_some())
            .unwrap_or(call.args.len());
        let mut out: Vec<(usize, usize, String)> = self
            .candidates(call, from_path)
            .into_iter()
            .flat_map(|(_, d)| d.key_params().iter())
            .filter_map(|(p, name)| {
                let arg = if *p < first_named {
                    *p
                } else {
                    call.args
                        .iter()
                        .position(|a| a.name.as_deref() == Some(name.as_str()))?
                };
                Some((arg, *p, name.clone()))
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Where the body of the function `call` resolves to puts its argument `arg` into a key
    /// (`path:line`), for a key parameter found by flow; the first candidate's.
    pub fn key_param_sink(&self, call: &Call, from_path: &str, arg: usize) -> Option<String> {
        if !self.with_key_params.contains(call.callee.as_str()) {
            return None;
        }
        self.candidates(call, from_path)
            .into_iter()
            .find_map(|(_, d)| {
                d.rare()
                    .key_param_sinks
                    .iter()
                    .find(|(i, _)| *i == arg)
                    .map(|(_, at)| at.clone())
            })
    }

    /// Per client name of an OkHttp registration, the retry sites that reach it (see
    /// [`Self::client_retry_sites`]); empty when some Retrofit service's client is unknown.
    fn client_retry_sites(&self, graph: &SiteGraph<'_>) -> HashMap<String, Vec<String>> {
        let mut out = HashMap::new();
        if self.retrofit_services.iter().any(|s| s.client.is_none()) {
            return out;
        }
        let holders: std::collections::BTreeSet<&str> = self
            .registrations
            .iter()
            .filter(|r| r.stage == "application")
            .filter_map(|r| r.client.as_deref())
            .filter(|c| !c.is_empty())
            .collect();
        let served: HashSet<&str> = self
            .retrofit_services
            .iter()
            .map(|s| s.iface.as_str())
            .collect();
        for h in holders {
            let ifaces: HashSet<&str> = self
                .retrofit_services
                .iter()
                .filter(|s| s.client.as_deref() == Some(h))
                .map(|s| s.iface.as_str())
                .collect();
            // An endpoint counts only on a service of this client, or of an interface no
            // scanned code creates a service of (its client is unknown); a function that
            // calls `newCall` itself may use any client.
            let found = graph.reaching(HTTP_OKHTTP, |d| {
                !d.endpoint || ifaces.contains(&*d.type_name()) || !served.contains(&*d.type_name())
            });
            out.insert(h.to_string(), found);
        }
        out
    }

    /// Key parameters through wrappers: a parameter a function passes on unchanged to a key
    /// parameter of a function the call resolves to ([`Self::candidates_of`]; any
    /// candidate, as [`Self::key_params`] reads them) is a key parameter too
    /// (`invoke(.., cid, ..)` calling `entity(.., cid, ..)`, which puts `cid` into the
    /// `X-CorrelationID` header). A least fixpoint; the sink location is the callee's.
    fn propagate_key_params(&mut self) {
        let mut names: Vec<Name> = self.functions.keys().copied().collect();
        names.sort();
        // Parameters written under a name the project declares a key are key parameters.
        let mut named: Vec<(Name, usize, usize, String, String)> = Vec::new();
        for n in &names {
            for (i, d) in self.functions[n].iter().enumerate() {
                for (pi, name, q, slot, at) in &d.rare().named_param_writes {
                    if !d.key_params().iter().any(|(p, _)| p == pi)
                        && self
                            .named_key(name, q.as_deref(), *slot, d.jvm(), &d.path)
                            .is_some()
                    {
                        let pname = d
                            .param_names
                            .get(*pi)
                            .map(|p| p.to_string())
                            .unwrap_or_default();
                        named.push((*n, i, *pi, pname, at.clone()));
                    }
                }
            }
        }
        for (n, i, p, pname, at) in named {
            if let Some(d) = self.functions.get_mut(&n).and_then(|v| v.get_mut(i))
                && !d.key_params().iter().any(|(x, _)| *x == p)
            {
                d.rare_mut().key_params.push((p, pname));
                d.rare_mut().key_param_sinks.push((p, at));
            }
        }
        // Which names each file declares: a free call resolves in its own file first. By
        // position in `names` and the file's shared path: a pair of strings per
        // declaration was a fifth of a large project's heap while the index was built.
        let name_ids: HashMap<&str, u32> = names
            .iter()
            .enumerate()
            .map(|(k, n)| (n.as_str(), k as u32))
            .collect();
        let declared_in: HashSet<(Name, u32)> = names
            .iter()
            .enumerate()
            .flat_map(|(k, n)| self.functions[n].iter().map(move |d| (d.path, k as u32)))
            .collect();
        // Files whose types inherit project supertypes (free calls may reach those).
        let inheriting: HashSet<Name> = self
            .file_types
            .keys()
            .filter(|p| !self.inherited_levels(p).is_empty())
            .cloned()
            .collect();
        // A least fixpoint (each round adds a key parameter; finitely many), uncapped so
        // the result does not depend on how the prefilter batched the files.
        loop {
            let mut adds: Vec<(Name, usize, usize, String, String)> = Vec::new();
            let mut added: HashSet<(usize, usize, usize)> = HashSet::new();
            let keyed: HashSet<&str> = self
                .functions
                .iter()
                .filter(|(_, ds)| ds.iter().any(|c| !c.key_params().is_empty()))
                .map(|(n, _)| n.as_str())
                .collect();
            // A free positional call from a file that neither declares the callee nor
            // inherits: its candidates are the same top-level functions from anywhere, so
            // the answer is shared (callee, arity, position, test source).
            let mut free_cache: HashMap<(Name, usize, usize, bool), Option<String>> =
                HashMap::new();
            for (k, n) in names.iter().enumerate() {
                for (i, d) in self.functions[n].iter().enumerate() {
                    for pp in d.passes_params.iter().filter(|pp| !pp.lambda) {
                        if d.key_params().iter().any(|(p, _)| *p == pp.param())
                            || added.contains(&(k, i, pp.param()))
                            || !keyed.contains(&*pp.call.callee)
                        {
                            continue;
                        }
                        let free = pp.call.receiver.is_none()
                            && pp.call.receiver_type.is_none()
                            && pp.arg_name.is_none()
                            && !inheriting.contains(&*d.path)
                            && !name_ids
                                .get(&*pp.call.callee)
                                .is_some_and(|c| declared_in.contains(&(d.path, *c)));
                        let cache_key = (pp.call.callee, pp.call.arity, pp.arg(), d.test_source());
                        if free && let Some(hit) = free_cache.get(&cache_key) {
                            if let Some(at) = hit.clone() {
                                let pname = d
                                    .param_names
                                    .get(pp.param())
                                    .map(|p| p.to_string())
                                    .unwrap_or_default();
                                added.insert((k, i, pp.param()));
                                adds.push((*n, i, pp.param(), pname, at));
                            }
                            continue;
                        }
                        let receiver = pp
                            .call
                            .receiver
                            .as_deref()
                            .map(|r| crate::catalogue::last_segment(r).to_string());
                        let cands = self.candidates_of_passed(pp, &d.path);
                        // Only a call that resolves by scope (no receiver or `this`: the
                        // caller's file, its supertypes, top-level functions) or by a
                        // receiver naming the type, and only when every candidate takes the
                        // key there: a name shared by unrelated classes
                        // (`notifier.sendCriticalAlert(..)`) proves nothing.
                        let scoped = pp.call.receiver_type.is_some()
                            || match receiver.as_deref().map(str::trim) {
                                None | Some("this" | "self" | "super" | "Self") => true,
                                Some(r) => {
                                    let r = normalized(r);
                                    cands.iter().all(|(_, c)| {
                                        !c.type_name().is_empty()
                                            && receiver_names_norm(&r, &c.type_norm())
                                    })
                                }
                            };
                        let key_at = |c: &FnDecl| -> Option<String> {
                            let ai = pp.position_in(c)?;
                            c.key_params().iter().any(|(x, _)| *x == ai).then(|| {
                                c.rare()
                                    .key_param_sinks
                                    .iter()
                                    .find(|(x, _)| *x == ai)
                                    .map_or_else(|| c.location(), |(_, at)| at.clone())
                            })
                        };
                        let hit = (scoped
                            && !cands.is_empty()
                            && cands.iter().all(|(_, c)| key_at(c).is_some()))
                        .then(|| key_at(cands[0].1))
                        .flatten();
                        if free {
                            free_cache.insert(cache_key, hit.clone());
                        }
                        if let Some(at) = hit {
                            let pname = d
                                .param_names
                                .get(pp.param())
                                .map(|p| p.to_string())
                                .unwrap_or_default();
                            added.insert((k, i, pp.param()));
                            adds.push((*n, i, pp.param(), pname, at));
                        }
                    }
                }
            }
            if adds.is_empty() {
                break;
            }
            for (n, i, p, pname, at) in adds {
                if let Some(d) = self.functions.get_mut(&n).and_then(|v| v.get_mut(i))
                    && !d.key_params().iter().any(|(x, _)| *x == p)
                {
                    d.rare_mut().key_params.push((p, pname));
                    d.rare_mut().key_param_sinks.push((p, at));
                }
            }
        }
    }

    fn key_params_by_name(&self, name: &str, args: usize, caller: &FnDecl) -> bool {
        self.functions.get(name).into_iter().flatten().any(|d| {
            arity_ok_from(d, args, &caller.path)
                && visible_from(d, caller)
                && !d.key_params().is_empty()
        })
    }

    fn resolve(&mut self) {
        let mut names: Vec<Name> = self.functions.keys().copied().collect();
        names.sort();
        // Sparse: a name is in `fresh` / `mints` once one of its declarations is (most
        // names never are; a missing name reads as all `None`).
        self.fresh.clear();
        self.mints.clear();
        // Names with a fresh declaration so far: [`Self::ref_fresh`] exits early on the
        // others (most calls). Complete once the fixpoint ends.
        self.with_fresh.clear();
        for n in &names {
            if self.functions[n].iter().any(|d| d.fresh().is_some()) {
                self.with_fresh.insert(*n);
            }
        }
        // Fresh helpers, per declaration.
        let mut cache = NarrowCache::new();
        let mut work = Worklist::new(
            &names,
            |n| &self.functions[n],
            |d| d.fresh_via.iter().map(|r| &*r.callee).collect(),
        );
        loop {
            let mut changed = false;
            for (k, n) in names.iter().enumerate() {
                if !work.pending(k) {
                    continue;
                }
                for i in 0..self.functions[n].len() {
                    if state_at(&self.fresh, n, i) || !work.take(k, i) {
                        continue;
                    }
                    let d = &self.functions[n][i];
                    let info = d.fresh().cloned().or_else(|| {
                        d.fresh_via
                            .iter()
                            .filter(|r| *r.callee != **n)
                            .find_map(|r| self.ref_fresh(*r, d, &mut cache).cloned())
                    });
                    if let Some(info) = info {
                        let len = self.functions[n].len();
                        self.fresh.entry(*n).or_insert_with(|| vec![None; len])[i] =
                            Some(Box::new(info));
                        if !self.with_fresh.contains(n) {
                            self.with_fresh.insert(*n);
                        }
                        work.touch(k);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        // Key-minting functions, per declaration.
        let mut minting: HashSet<Name> = HashSet::new();
        for n in &names {
            if self.functions[n].iter().any(|d| d.mints().is_some()) {
                minting.insert(*n);
            }
        }
        // A declaration's state reads the states of its calls' names (the fresh states
        // and key parameters are settled by now).
        let mut work = Worklist::new(
            &names,
            |n| &self.functions[n],
            |d| d.call_refs.iter().map(|r| &*r.callee).collect(),
        );
        loop {
            let mut changed = false;
            for (k, n) in names.iter().enumerate() {
                if !work.pending(k) {
                    continue;
                }
                for i in 0..self.functions[n].len() {
                    if state_at(&self.mints, n, i) || !work.take(k, i) {
                        continue;
                    }
                    let d = &self.functions[n][i];
                    if d.has_lock {
                        continue;
                    }
                    let mut info = d.mints().cloned();
                    if info.is_none() {
                        info = d.rare().mint_via_fresh.iter().find_map(|r| {
                            self.ref_fresh(*r, d, &mut cache).map(|f| MintInfo {
                                source: format!("{}()", r.callee),
                                kind: f.kind,
                                location: f.location.clone(),
                                function: d.name.to_string(),
                            })
                        });
                    }
                    if info.is_none() {
                        info = d
                            .rare()
                            .keyed_arg_candidates
                            .iter()
                            .find(|ka| {
                                // Resolved as the call is (the same callee and arity among
                                // the body's calls): some candidate takes a key there.
                                let (arity, pos) = (ka.arity as usize, ka.position as usize);
                                self.key_params_by_name(&ka.callee, arity, d)
                                    && d.call_refs
                                        .iter()
                                        .filter(|r| r.callee == ka.callee && r.arity == arity)
                                        .any(|r| {
                                            self.candidates_of_ref(r, &d.path).iter().any(
                                                |(_, x)| {
                                                    x.key_params().iter().any(|(p, _)| *p == pos)
                                                },
                                            )
                                        })
                            })
                            .map(|ka| ka.mint_info(d));
                    }
                    // A call whose every candidate declaration (resolved as at the call:
                    // same file, receiver type, receiver name) mints a key; the function
                    // itself does not decide (recursion, delegation to a namesake).
                    if info.is_none() {
                        info = d
                            .call_refs
                            .iter()
                            .filter(|c| minting.contains(&*c.callee))
                            .find_map(|c| {
                                let states = self.mints.get(&*c.callee)?;
                                let mut first = None;
                                let mut any = false;
                                for (j, _) in self.candidates_of_ref(c, &d.path) {
                                    if *c.callee == **n && j == i {
                                        continue;
                                    }
                                    any = true;
                                    first.get_or_insert(states[j].as_deref()?);
                                }
                                any.then_some(first).flatten().cloned()
                            });
                    }
                    if let Some(info) = info {
                        let len = self.functions[n].len();
                        self.mints.entry(*n).or_insert_with(|| vec![None; len])[i] =
                            Some(Box::new(info));
                        minting.insert(*n);
                        work.touch(k);
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// The keys a call to project functions mints: `None` when no declaration it may
    /// refer to mints one; otherwise the distinct keys of those that do and how many of
    /// the candidates that is ([`MintResolution::ambiguous`] when not all of them).
    pub fn mints(&self, call: &Call, from_path: &str) -> Option<MintResolution<'_>> {
        if !self.with_mints.contains(call.callee.as_str()) {
            return None;
        }
        let cands = self.candidates(call, from_path);
        let states = self.mints.get(call.callee.as_str())?;
        let mut infos: Vec<&MintInfo> = Vec::new();
        let mut minting = 0;
        for (i, _) in &cands {
            if let Some(m) = &states[*i] {
                minting += 1;
                if !infos.iter().any(|x| x.location == m.location) {
                    infos.push(m);
                }
            }
        }
        (minting > 0).then_some(MintResolution {
            infos,
            minting,
            candidates: cands.len(),
        })
    }

    /// Whether the function a call refers to reads a key header (all candidates do).
    pub fn reads_key_header(&self, call: &Call, from_path: &str) -> bool {
        if !self.with_header_reads.contains(call.callee.as_str()) {
            return false;
        }
        let cands = self.candidates(call, from_path);
        !cands.is_empty() && cands.iter().all(|(_, d)| d.reads_key_header)
    }

    /// The fresh value a call to a project function returns: `None` when no declaration
    /// it may refer to ([`Self::candidates`]) returns one; the first fresh candidate's
    /// value otherwise, with [`HelperInfo::ambiguous`] set to `(fresh, candidates)` when
    /// only some of them do (the call's receiver does not say which runs, so the finding
    /// names the ambiguity at a lower severity instead of dropping it).
    pub fn fresh_from(&self, call: &Call, from_path: &str) -> Option<HelperInfo> {
        if !self.with_fresh.contains(call.callee.as_str()) {
            return None;
        }
        let cands = self.candidates(call, from_path);
        let states = self.fresh.get(call.callee.as_str())?;
        let mut info: Option<&HelperInfo> = None;
        let mut fresh = 0;
        for (i, _) in &cands {
            if let Some(h) = &states[*i] {
                fresh += 1;
                info.get_or_insert(h);
            }
        }
        let mut h = info.cloned()?;
        if fresh < cands.len() {
            h.ambiguous = Some((fresh, cands.len()));
        }
        Some(h)
    }

    /// Whether some declaration a recorded call may refer to returns a fresh value (what
    /// [`Self::fresh_from`] answers for the call, ambiguous answers included).
    pub fn is_fresh_ref(&self, c: &CallRef, from_path: &str) -> bool {
        if !self.with_fresh.contains(&*c.callee) {
            return false;
        }
        let Some(states) = self.fresh.get(&*c.callee) else {
            return false;
        };
        self.candidates_of_ref(c, from_path)
            .iter()
            .any(|(i, _)| states.get(*i).is_some_and(Option::is_some))
    }

    /// The `call.clone()` sites that may clone a call made through the client kept under
    /// `client` ([`Registration::client`]); every site when `client` is `None`. A site
    /// whose client cannot be told (a callback's `call` parameter), or made on a service
    /// whose client is unknown, counts for every client.
    pub fn clone_sites_for(&self, client: Option<&str>) -> Vec<&String> {
        let Some(h) = client else {
            return self.clone_sites.iter().map(|s| &s.location).collect();
        };
        self.clone_sites
            .iter()
            .filter(|s| match (&s.client, &s.service) {
                (Some(c), _) => c == h,
                (None, Some(iface)) => {
                    let mut services = self.retrofit_services.iter().filter(|r| &r.iface == iface);
                    let mut any = false;
                    let ok = services.all(|r| {
                        any = true;
                        r.client.as_deref().is_none_or(|c| c == h)
                    });
                    !any || ok
                }
                (None, None) => true,
            })
            .map(|s| &s.location)
            .collect()
    }

    /// True when some declaration of `name` returns a fresh value.
    pub fn is_fresh_name(&self, name: &str) -> bool {
        self.with_fresh.contains(name)
    }

    /// Some declaration of `name` retries one of its parameters.
    pub fn is_combinator_name(&self, name: &str) -> bool {
        self.retry
            .get(name)
            .is_some_and(|v| v.iter().any(|p| !p.is_empty()))
    }

    /// The `i`-th declaration of `name` mints a key, in the fixpoint's state.
    pub(crate) fn mints_at(&self, name: &str, i: usize) -> Option<&MintInfo> {
        self.mints.get(name)?.get(i)?.as_deref()
    }

    /// True when a call of `name` made in the file at `from_path` (a display path) may
    /// resolve to a declaration that mints a key: one is visible from there, in the same
    /// language family and, unless the file is test code, not in test code (the filter
    /// of [`Self::candidates_of`]). A project whose only minting `build()` is a test
    /// fixture's does not make every `build()` of its main code a possible mint.
    pub fn is_mint_name_from(&self, name: &str, from_path: &str) -> bool {
        let Some(bits) = self.mint_callers.get(name) else {
            return false;
        };
        bits & caller_kind(from_path) != 0
    }

    /// Of the key names ([`Self::key_names`]), the kinds of code ([`caller_kind`] bits)
    /// whose mentions of `name` can matter: for a name that is a key name only because
    /// some declarations mint a key, the code that can call one of those
    /// ([`Self::is_mint_name_from`]); [`CALLERS_ALL`] for any other name, since a key
    /// parameter, a key-header read or a named key is looked up by name alone
    /// (`FileDemand::keyed`, [`Self::has_key_params`]).
    pub fn mention_reach(&self, name: &str) -> u8 {
        if self.with_key_params.contains(name)
            || self.with_header_reads.contains(name)
            || self.named_keys.iter().any(|k| k.name == name)
        {
            return CALLERS_ALL;
        }
        self.mint_callers.get(name).copied().unwrap_or(CALLERS_ALL)
    }

    /// True when some declaration of `name` has a key parameter.
    pub fn has_key_params(&self, name: &str) -> bool {
        self.with_key_params.contains(name)
    }

    /// Names with a declaration that returns a fresh value, mints a key, has a key
    /// parameter or reads a key header: answers about calls of them depend on every
    /// declaration of the name (see `crate::prefilter`).
    pub fn special_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.with_fresh
            .iter()
            .chain(&self.with_mints)
            .chain(&self.with_key_params)
            .chain(&self.with_header_reads)
            .map(|n| n.as_str())
    }

    /// Names with a declaration that mints a key, has a key parameter or reads a key
    /// header: the prefilter demands every file that mentions one (see `crate::prefilter`).
    pub fn key_names(&self) -> impl Iterator<Item = &str> + '_ {
        self.with_mints
            .iter()
            .chain(&self.with_key_params)
            .chain(&self.with_header_reads)
            .map(|n| n.as_str())
            .chain(self.named_keys.iter().map(|k| k.name.as_str()))
    }

    /// The key a write under `name` of kind `slot` makes, for code in Java or Kotlin
    /// (`jvm`) or Rust at `from_path`: the first (by location) constant or route that
    /// declares it. A write qualified with a type (`Props.ID`) needs a constant of that
    /// type, or a route that qualified the property the same way (or not at all); test
    /// sources' declarations count only for test sources.
    pub fn named_key(
        &self,
        name: &str,
        qualifier: Option<&str>,
        slot: crate::classify::SlotKind,
        jvm: bool,
        from_path: &str,
    ) -> Option<(&NamedKey, String)> {
        let test = is_test_source(from_path);
        self.named_keys
            .iter()
            .filter(|k| k.name == name && k.slot == slot && k.jvm == jvm)
            .filter(|k| test || !k.test_source)
            .filter(|k| match (qualifier, slot) {
                (None, _) => true,
                (Some(q), crate::classify::SlotKind::Header) => k.owner == q,
                (Some(q), crate::classify::SlotKind::ExchangeProperty) => {
                    k.owner.is_empty() || k.owner == q
                }
            })
            .filter_map(|k| match &k.header_via {
                None => Some((k, k.header.clone())),
                // The route named the header by a constant: it must be a key header.
                Some((q, n)) => self
                    .named_key(
                        n,
                        q.as_deref(),
                        crate::classify::SlotKind::Header,
                        jvm,
                        from_path,
                    )
                    .map(|(_, h)| (k, h)),
            })
            .min_by(|a, b| a.0.location.cmp(&b.0.location))
    }

    /// A view answering helper questions for calls made in `path`.
    pub fn view<'a>(&'a self, path: &'a str) -> IndexView<'a> {
        IndexView { index: self, path }
    }

    /// Registrations of a type on any builder.
    pub fn registrations_of<'a>(
        &'a self,
        type_name: &'a str,
    ) -> impl Iterator<Item = &'a Registration> + 'a {
        self.registrations
            .iter()
            .filter(move |r| r.type_name.as_deref() == Some(type_name))
    }

    /// Whether a handler sends field `field` of a request-bound `type_name` as a key:
    /// the sink's location and the handler ([`BoundKeyField`]).
    pub fn bound_key_field(&self, type_name: &str, field: &str) -> Option<&(String, String)> {
        self.bound_key_fields
            .get(&(type_name.to_string(), field.to_string()))
    }

    /// The first retrying registration before `reg` on the same builder.
    pub fn retrying_before<'a>(&'a self, reg: &Registration) -> Option<&'a Registration> {
        self.registrations.iter().find(|r| {
            r.chain == reg.chain
                && r.offset < reg.offset
                && r.retrying
                && (reg.stage == "network" || r.stage == reg.stage)
        })
    }
}

/// [`ProjectIndex`] seen from one file, for [`HelperOracle`] queries.
pub struct IndexView<'a> {
    pub index: &'a ProjectIndex,
    pub path: &'a str,
}

impl HelperOracle for IndexView<'_> {
    fn fresh(&self, _lang: Language, call: &Call) -> Option<HelperInfo> {
        self.index.fresh_from(call, self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::{bodiless, exchange_properties_read, is_test_source};
    use crate::model::Language;

    #[test]
    fn kotlin_declarations_are_bodiless_only_without_a_block_or_expression_body() {
        for (decl, want) in [
            ("fun keyFor(id: String): String", true),
            ("abstract fun keyFor(id: String = \"x\"): String", true),
            (
                "@Throws(IOException::class) fun keyFor(id: String): String",
                true,
            ),
            ("fun keyFor(id: String): String { return id }", false),
            // The expression body ends in a call: its parentheses are not the parameters'.
            (
                "override fun keyFor(id: String): String = UUID.randomUUID().toString()",
                false,
            ),
            (
                "fun <T> Box<T>.keyFor(f: (T) -> String): String = f(value)",
                false,
            ),
            // Parentheses, `=` and `fun` inside literals and annotation arguments.
            (
                "override fun keyFor(id: String, prefix: String = \"(\"): String { return id }",
                false,
            ),
            (
                "fun keyFor(id: String, open: String = \")\", close: String = \"(\"): String",
                true,
            ),
            (
                "fun keyFor(id: String, sep: Char = ')', end: Char = '('): String",
                true,
            ),
            (
                "@JvmName(\"refundKey\") @Deprecated(message = \"use keyForV2\") fun keyFor(id: String): String",
                true,
            ),
            (
                "fun keyFor(id: String = \"\"\"a(b\"\"\"): String = id",
                false,
            ),
        ] {
            assert_eq!(bodiless(Language::Kotlin, decl), want, "{decl}");
        }
        assert!(bodiless(Language::Java, "String keyFor(String id);"));
        assert!(!bodiless(
            Language::Rust,
            "fn key(&self) -> String { self.0.clone() }"
        ));
    }

    fn names(v: Vec<(String, String)>) -> Vec<String> {
        v.into_iter().map(|(_, n)| n).collect()
    }

    #[test]
    fn camel_expressions_name_the_exchange_properties_they_read() {
        for (src, want) in [
            (
                r#"simple("${exchangeProperty." + CORRELATION_ID + "}")"#,
                vec!["CORRELATION_ID"],
            ),
            (
                r#"simple("${exchangeProperty.correlationId}")"#,
                vec!["correlationId"],
            ),
            (
                r#"exchangeProperty(Props.CORRELATION_ID)"#,
                vec!["CORRELATION_ID"],
            ),
            (r#"exchangeProperty("ref")"#, vec!["ref"]),
            (r#"simple("${exchangeProperty[ref]}")"#, vec!["ref"]),
            (r#"simple("\${exchangeProperty.${Props.ID}}")"#, vec!["ID"]),
            (
                r#"simple("${exchangeProperty.a}-${exchangeProperty.b}")"#,
                vec!["a", "b"],
            ),
            (r#"simple("${header.ref}")"#, vec![]),
        ] {
            assert_eq!(names(exchange_properties_read(src)), want, "{src}");
        }
    }

    #[test]
    fn test_sources_by_layout() {
        for p in [
            "svc/src/test/java/a/B.java",
            "app/src/androidTest/kotlin/A.kt",
            "lib/src/testFixtures/java/F.java",
            "lib/src/integrationTest/kotlin/I.kt",
            "mpp/src/jvmTest/kotlin/T.kt",
            "crate/tests/retry.rs",
            "crate/benches/b.rs",
            "crate/examples/event.rs",
            "tests/e2e/src/main/java/a/B.java",
            "svc/src/test/java/com/acme/main/B.java",
            "app/src/androidTestDebug/java/com/acme/tests/Keys.java",
            "app/src/testRelease/kotlin/a/K.kt",
            "svc/src/test-integration/java/a/B.java",
            "svc/src/integration_test/java/a/B.java",
            "svc/src/e2e-test/kotlin/a/B.kt",
        ] {
            assert!(is_test_source(p), "{p}");
        }
        for p in [
            "svc/src/main/java/a/B.java",
            "mpp/src/jvmMain/kotlin/T.kt",
            "crate/src/lib.rs",
            "crate/src/testing_utils.rs",
            "svc/src/main/java/contest/Entry.java",
            // Packages named `test(s)` inside a main source set are production code.
            "svc/src/main/java/com/acme/tests/wallet/Pay.java",
            "mpp/src/commonMain/kotlin/org/test/Key.kt",
            "app/src/latestApi/java/a/B.java",
            "app/src/testing/java/a/B.java",
            "app/src/contest-entries/java/a/B.java",
            "app/src/latest_api/java/a/B.java",
        ] {
            assert!(!is_test_source(p), "{p}");
        }
    }
}

/// The project's call edges as the retry sites see them, built once per index build and
/// asked per client library ([`SiteGraph::reaching`]): JVM functions by simple name,
/// closed over calls (a least fixpoint; each name is added once).
struct SiteGraph<'a> {
    index: &'a ProjectIndex,
    /// The sites whose retried lambda (if any) is a retried parameter of its callee.
    sites: Vec<&'a RetrySite>,
    /// The names the sites' calls reach through JVM declarations; a name's position is
    /// its id below.
    seen: Vec<&'a str>,
    /// Reverse call edges among `seen`, each once, by id: the callers of name `i` are
    /// `callers[starts[i]..starts[i + 1]]` (a million edges on waqitiapp: 4 bytes each).
    starts: Vec<u32>,
    callers: Vec<u32>,
}

impl<'a> SiteGraph<'a> {
    fn of(index: &'a ProjectIndex, sites: &'a [RetrySite]) -> SiteGraph<'a> {
        let retried = |(name, arg, args, arg_name): &(Name, usize, usize, Option<Name>)| -> bool {
            let (Some(states), Some(decls)) = (
                index.retry.get(name.as_str()),
                index.functions.get(name.as_str()),
            ) else {
                return false;
            };
            decls.iter().zip(states).any(|(d, st)| {
                let p = lambda_param(d, *arg, *args, arg_name.as_deref());
                d.jvm()
                    && st.iter().any(|(x, _, b)| {
                        Some(*x) == p
                            && b.as_ref()
                                .is_none_or(|b| b.kind == crate::catalogue::BoundaryKind::Retry)
                    })
            })
        };
        let sites: Vec<&RetrySite> = sites
            .iter()
            .filter(|s| s.via.as_ref().is_none_or(retried))
            .collect();
        // The names the sites' calls reach through JVM declarations (forward); the sites
        // are few, the project's call edges many.
        // A name joins the worklist once, when first seen (a popular callee is reached
        // from many declarations; pushing it per edge made the list millions long).
        let mut seen: HashSet<&str> = HashSet::new();
        let mut work: Vec<&str> = Vec::new();
        for c in sites.iter().flat_map(|s| s.calls.iter().map(Name::as_str)) {
            if seen.insert(c) {
                work.push(c);
            }
        }
        while let Some(n) = work.pop() {
            for c in Self::jvm_callees(index, n) {
                if seen.insert(c) {
                    work.push(c);
                }
            }
        }
        let mut seen: Vec<&str> = seen.into_iter().collect();
        seen.sort_unstable();
        let ids: HashMap<&str, u32> = seen
            .iter()
            .enumerate()
            .map(|(i, n)| (*n, i as u32))
            .collect();
        // Each edge once (a name's declarations call the same callee many times), counted
        // first so the edge list is allocated once at its size.
        let callees_of = |n: &str, out: &mut Vec<u32>| {
            out.clear();
            out.extend(Self::jvm_callees(index, n).filter_map(|c| ids.get(c).copied()));
            out.sort_unstable();
            out.dedup();
        };
        let mut scratch: Vec<u32> = Vec::new();
        let mut starts = vec![0u32; seen.len() + 1];
        for n in &seen {
            callees_of(n, &mut scratch);
            for &c in &scratch {
                starts[c as usize + 1] += 1;
            }
        }
        for i in 0..seen.len() {
            starts[i + 1] += starts[i];
        }
        let mut fill = starts.clone();
        let mut callers = vec![0u32; starts[seen.len()] as usize];
        for (i, n) in seen.iter().enumerate() {
            callees_of(n, &mut scratch);
            for &c in &scratch {
                callers[fill[c as usize] as usize] = i as u32;
                fill[c as usize] += 1;
            }
        }
        SiteGraph {
            index,
            sites,
            seen,
            starts,
            callers,
        }
    }

    fn jvm_callees(index: &'a ProjectIndex, n: &str) -> impl Iterator<Item = &'a str> {
        index
            .functions
            .get(n)
            .into_iter()
            .flatten()
            .filter(|d| d.jvm())
            .flat_map(|d| d.call_refs.iter().map(|c| &*c.callee))
    }

    /// The locations of the retry sites whose calls reach, through project functions, a
    /// JVM function that sends through the client library `client` ([`HTTP_OKHTTP`] or
    /// [`HTTP_SPRING`]) and passes `seed`: backward from those functions over the reverse
    /// edges. Sorted, without duplicates.
    fn reaching(&self, client: u8, seed: impl Fn(&FnDecl) -> bool) -> Vec<String> {
        if self.sites.is_empty() {
            return Vec::new();
        }
        // A site that sends a request itself (`restTemplate.exchange(..)` in a
        // `@Retryable` method, `client.newCall(..)` in a retry loop) needs no project
        // function in between.
        // A Feign request is sent only through an endpoint method: no marker.
        let sends = match client {
            HTTP_OKHTTP => SENDS_OKHTTP,
            HTTP_SPRING => SENDS_SPRING,
            _ => "",
        };
        let mut reached = vec![false; self.seen.len()];
        let mut work: Vec<u32> = Vec::new();
        for (i, n) in self.seen.iter().enumerate() {
            if (!sends.is_empty() && *n == sends)
                || self.index.functions.get(*n).is_some_and(|decls| {
                    decls
                        .iter()
                        .any(|d| d.jvm() && d.http & client != 0 && seed(d))
                })
            {
                reached[i] = true;
                work.push(i as u32);
            }
        }
        while let Some(n) = work.pop() {
            let n = n as usize;
            for &c in &self.callers[self.starts[n] as usize..self.starts[n + 1] as usize] {
                if !reached[c as usize] {
                    reached[c as usize] = true;
                    work.push(c);
                }
            }
        }
        let reach = |name: &str| self.seen.binary_search(&name).is_ok_and(|i| reached[i]);
        let mut out: Vec<String> = self
            .sites
            .iter()
            .filter(|s| s.calls.iter().any(|c| reach(c.as_str())))
            .map(|s| s.location())
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

/// Time per phase of [`ProjectIndex::extend`], printed to stderr when
/// `IDEMLINT_TRACE_INDEX` is set (a debugging aid; `--timings` gives the whole).
struct PhaseClock {
    on: bool,
    last: std::time::Instant,
}

impl PhaseClock {
    fn new() -> PhaseClock {
        PhaseClock {
            on: std::env::var_os("IDEMLINT_TRACE_INDEX").is_some(),
            last: std::time::Instant::now(),
        }
    }

    fn lap(&mut self, what: &str) {
        if self.on {
            eprintln!("index: {what} {:.3} s", self.last.elapsed().as_secs_f64());
            crate::check::trace_heap(&format!("index: heap after {what}"));
            self.last = std::time::Instant::now();
        }
    }
}

/// Which declarations a fixpoint over the index must evaluate again. The fixpoints of
/// [`ProjectIndex::resolve`], [`ProjectIndex::resolve_retry`] and
/// [`ProjectIndex::handled_states`] are passes over the names in sorted order, each
/// declaration's new state a function of its own (fixed) data and of the states of the
/// names it reads. A declaration none of whose read names changed since it was last
/// evaluated would compute what it computed then, so only the others are evaluated: at
/// first all, then those reading a name [`Worklist::touch`]ed since. The states, and the
/// order they are reached in, are the same as evaluating every declaration every pass.
pub(crate) struct Worklist {
    /// Per name (by position in the sorted names), the flat position of its first
    /// declaration.
    base: Vec<usize>,
    /// Per flat position: to be evaluated.
    dirty: Vec<bool>,
    /// Per name (by position): the flat positions of the declarations reading it, each
    /// once, as `readers[starts[k]..starts[k + 1]]` (compressed rows: one list for every
    /// name instead of a vector each). A read of a name the passes do not go over is never
    /// touched, so not kept.
    starts: Vec<u32>,
    readers: Vec<u32>,
}

impl Worklist {
    /// `names`: the sorted names the passes go over; `decls`: each name's declarations;
    /// `reads`: the names a declaration's state depends on (called twice per declaration:
    /// once to count each name's readers, once to fill them in).
    pub(crate) fn new<'a, N: AsRef<str>>(
        names: &[N],
        decls: impl Fn(&str) -> &'a [FnDecl],
        reads: impl Fn(&'a FnDecl) -> Vec<&'a str>,
    ) -> Worklist {
        let position: HashMap<&str, u32> = names
            .iter()
            .enumerate()
            .map(|(k, n)| (n.as_ref(), k as u32))
            .collect();
        // Calls `edge(k, at)` once for each name `k` that declaration `at` reads.
        let each_edge = |edge: &mut dyn FnMut(usize, u32)| {
            let mut last_reader = vec![u32::MAX; names.len()];
            let mut at = 0u32;
            for n in names {
                for d in decls(n.as_ref()) {
                    for r in reads(d) {
                        if let Some(&k) = position.get(r) {
                            let k = k as usize;
                            if last_reader[k] != at {
                                last_reader[k] = at;
                                edge(k, at);
                            }
                        }
                    }
                    at += 1;
                }
            }
        };
        let mut starts = vec![0u32; names.len() + 1];
        each_edge(&mut |k, _| starts[k + 1] += 1);
        for k in 0..names.len() {
            starts[k + 1] += starts[k];
        }
        let mut readers = vec![0u32; starts[names.len()] as usize];
        let mut next: Vec<u32> = starts[..names.len()].to_vec();
        each_edge(&mut |k, at| {
            readers[next[k] as usize] = at;
            next[k] += 1;
        });
        let mut base = Vec::with_capacity(names.len());
        let mut at = 0usize;
        for n in names {
            base.push(at);
            at += decls(n.as_ref()).len();
        }
        Worklist {
            base,
            dirty: vec![true; at],
            starts,
            readers,
        }
    }

    /// Whether some declaration of the `k`-th name is to be evaluated (a pass skips the
    /// others' lookups).
    pub(crate) fn pending(&self, k: usize) -> bool {
        let end = self.base.get(k + 1).copied().unwrap_or(self.dirty.len());
        self.dirty[self.base[k]..end].contains(&true)
    }

    /// Whether declaration `i` of the `k`-th name is to be evaluated (and clears that).
    pub(crate) fn take(&mut self, k: usize, i: usize) -> bool {
        std::mem::replace(&mut self.dirty[self.base[k] + i], false)
    }

    /// The state of a declaration of the `k`-th name changed: its readers are evaluated
    /// again.
    pub(crate) fn touch(&mut self, k: usize) {
        let (from, to) = (self.starts[k] as usize, self.starts[k + 1] as usize);
        for &r in &self.readers[from..to] {
            self.dirty[r as usize] = true;
        }
    }

    /// The flat positions of the declarations reading the `k`-th name.
    #[cfg(test)]
    fn readers_of(&self, k: usize) -> &[u32] {
        &self.readers[self.starts[k] as usize..self.starts[k + 1] as usize]
    }
}

#[cfg(test)]
mod shared_call_tests {
    use super::*;

    fn call(callee: &str, arity: usize, receiver: Option<&str>) -> CallRef {
        CallRef {
            callee: Name::from(callee),
            arity,
            receiver: receiver.map(Name::from),
            receiver_type: None,
        }
    }

    #[test]
    fn equal_calls_share_one_copy_across_threads_and_sort_by_content() {
        let made: Vec<Vec<SharedCall>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        (0..300)
                            .map(|i| SharedCall::new(&call(&format!("f{}", i % 30), i % 3, None)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for v in &made[1..] {
            for (x, y) in v.iter().zip(&made[0]) {
                assert_eq!(x, y);
                assert_eq!(x.addr(), y.addr());
            }
        }
        // Different arity or receiver: another copy.
        let a = SharedCall::new(&call("charge", 1, Some("api")));
        assert_ne!(a, SharedCall::new(&call("charge", 2, Some("api"))));
        assert_ne!(a, SharedCall::new(&call("charge", 1, None)));
        // Ordered as the calls are, whatever the addresses.
        let mut v = [
            SharedCall::new(&call("b", 0, None)),
            SharedCall::new(&call("a", 1, None)),
            SharedCall::new(&call("a", 0, None)),
        ];
        v.sort();
        assert_eq!(
            v.map(|c| (c.callee.as_str(), c.arity)),
            [("a", 0), ("a", 1), ("b", 0)]
        );
        // Looked up by content.
        let set: HashSet<SharedCall> = [a].into_iter().collect();
        assert!(set.contains(&call("charge", 1, Some("api"))));
    }

    #[test]
    fn a_shared_call_round_trips_through_json_as_the_call() {
        let a = SharedCall::new(&call("newKey", 0, Some("Ids")));
        let s = serde_json::to_string(&a).unwrap();
        assert_eq!(s, serde_json::to_string(&*a).unwrap());
        let back: SharedCall = serde_json::from_str(&s).unwrap();
        assert_eq!(back.addr(), a.addr());
    }
}

#[cfg(test)]
mod worklist_tests {
    use super::*;

    fn decl(name: &str, calls: &[&str]) -> FnDecl {
        FnDecl {
            name: Name::from(name),
            call_refs: calls
                .iter()
                .map(|c| {
                    SharedCall::new(&CallRef {
                        callee: Name::from(*c),
                        arity: 0,
                        receiver: None,
                        receiver_type: None,
                    })
                })
                .collect(),
            ..FnDecl::default()
        }
    }

    #[test]
    fn only_readers_of_a_touched_name_are_evaluated_again() {
        let functions: HashMap<Name, Vec<FnDecl>> = [
            (Name::from("a"), vec![decl("a", &["b"]), decl("a", &["c"])]),
            (Name::from("b"), vec![decl("b", &["c", "c"])]),
            (Name::from("c"), vec![decl("c", &[])]),
        ]
        .into_iter()
        .collect();
        let names = ["a", "b", "c"];
        let mut w = Worklist::new(
            &names,
            |n| &functions[n],
            |d| d.call_refs.iter().map(|r| &*r.callee).collect(),
        );
        // At first every declaration is evaluated, once.
        for (k, i) in [(0, 0), (0, 1), (1, 0), (2, 0)] {
            assert!(w.take(k, i));
            assert!(!w.take(k, i));
        }
        // `c` changed: its readers, the second `a` and `b` (read twice, listed once).
        w.touch(2);
        assert_eq!(w.readers_of(2), [1, 2]);
        assert_eq!(w.readers_of(1), [0]);
        assert_eq!(w.readers_of(0), [] as [u32; 0]);
        assert!(!w.take(0, 0));
        assert!(w.take(0, 1));
        assert!(w.take(1, 0));
        assert!(!w.take(2, 0));
        // A name nobody reads touches nothing.
        w.touch(0);
        assert!(w.dirty.iter().all(|d| !d));
    }
}

#[cfg(test)]
mod param_type_tests {
    use super::may_hold_function;

    #[test]
    fn only_parameters_of_value_types_cannot_hold_a_block() {
        for ty in [
            "String",
            "java.lang.String",
            "String...",
            "String[]",
            "long",
            "Long?",
            "UUID",
            "List<Supplier<T>>",
            "Map<String, Object>",
            "&str",
            "&'a str",
            "&mut Vec<u8>",
            "std::collections::HashMap<String, u64>",
            "BigDecimal",
        ] {
            assert!(!may_hold_function(ty), "{ty}");
        }
        for ty in [
            "",
            "() -> T",
            "suspend () -> Unit",
            "Supplier<T>",
            "Callable<PaymentResult>",
            "RetryCallback<T, E>",
            "F",
            "impl Fn() -> u64",
            "Box<dyn FnMut()>",
            "Object",
            "Any",
            "Optional<Runnable>",
            "ConsumerRecord<String, String>",
        ] {
            assert!(may_hold_function(ty), "{ty:?}");
        }
    }
}

#[cfg(test)]
mod shared_list_tests {
    use super::{ItemSlab, Shared, SharedNames};
    use crate::name::Name;

    fn names(prefix: &str, n: usize) -> Vec<Name> {
        (0..n)
            .map(|i| Name::from(format!("{prefix}{i}").as_str()))
            .collect()
    }

    /// Lists packed into shared chunks keep their items, however many chunks they take,
    /// and equal lists are one copy.
    #[test]
    fn interned_lists_keep_their_items_across_chunks_and_are_shared() {
        let lists: Vec<Vec<Name>> = (0..3000)
            .map(|k| names(&format!("shared_list_test_{k}_"), 1 + k % 7))
            .collect();
        let shared: Vec<SharedNames> = lists.iter().map(|l| Shared::new(l)).collect();
        for (l, s) in lists.iter().zip(&shared) {
            assert_eq!(&**s, l.as_slice());
            assert_eq!(Shared::new(l), *s, "an equal list is the same copy");
        }
        assert_eq!(Shared::<Name>::new(&[]), SharedNames::default());
        assert!(SharedNames::default().is_empty());
        // Longer than a quarter chunk: a list of its own, still interned.
        let long = names("shared_list_test_long_", ItemSlab::<Name>::CHUNK);
        assert_eq!(&*Shared::new(&long), long.as_slice());
        assert_eq!(Shared::new(&long), Shared::new(&long));
    }

    /// A chunk's unused end is never handed out twice: consecutive lists do not overlap.
    #[test]
    fn slab_lists_do_not_overlap() {
        let mut slab = ItemSlab::<u32> { rest: &mut [] };
        let a = slab.alloc(&[1, 2, 3]);
        let b = slab.alloc(&[4, 5]);
        let c = slab.alloc(&(0..ItemSlab::<u32>::CHUNK as u32 / 4).collect::<Vec<_>>());
        let d = slab.alloc(&[]);
        assert_eq!((a, b, d), (&[1, 2, 3][..], &[4, 5][..], &[][..]));
        assert_eq!(c.len(), ItemSlab::<u32>::CHUNK / 4);
        assert!(c.iter().enumerate().all(|(i, &x)| x as usize == i));
        assert_eq!(a, &[1, 2, 3], "later lists left the first one alone");
    }
}
