//! Which files need a parse: a literal prefilter over each file's bytes.
//!
//! Parsing is most of idemlint's cost, and in most code bases almost no file can matter:
//! a finding needs an idempotency-key *sink* and an ephemeral *origin* in one file. This
//! module decides, from the bytes alone, which files [`crate::check`] parses. It is a
//! separate, replaceable step: `check` asks it three questions and `--no-prefilter`
//! replaces every answer by "yes".
//!
//! 1. [`Prefilter::scan`] (every file, once): does the file contain a catalogue *source*
//!    word, a *sink* word, or a ShedLock word? Each identifier token of the file is looked
//!    up among the words that must appear as a token (a hash map, behind a table of
//!    first bytes and lengths), and one overlapping Aho-Corasick pass over the file's
//!    *normalised view* ([`normalized_view`]: lower-cased, `_`, `-` and backticks removed,
//!    Rust string escapes decoded) finds the normalised words and, in normalised form, the words that
//!    must appear as a substring (case-sensitively or not): a superset of where those are,
//!    which only parses more. The same token pass fills the file's [`TokenSig`], a Bloom
//!    filter of its tokens kept for the files not parsed yet.
//! 2. [`NameScan`] (later rounds, files not parsed yet; only those whose [`TokenSig`] may
//!    hold the names are read again, [`NameScan::may_match`]): does the file contain, as a token,
//!    one of the names pass 1 found ([`demanded_names`]): functions that mint a key, take a
//!    key parameter or read a key header; constants whose value is a key header and Camel
//!    exchange properties a route copies into one ([`crate::index::NamedKey`]); the callees a key can come from (those the value
//!    flows of the parsed files' sinks pass through, and what their declarations return,
//!    transitively); possible retry combinators called where a key flow or a minting call
//!    is; and, where a file that can have a key flow holds an interceptor boundary, its
//!    interceptor types, the types registered next to them, and `clone`? Rounds repeat
//!    until no new file is selected (a helper calling a helper calling a minting function
//!    takes one round per step).
//! 3. [`needs_check`] (after pass 1): can a parsed file have a finding, given the project
//!    index? Only those are parsed again for pass 2, so no model is kept between passes.
//!
//! # Why the words are sufficient
//!
//! Every name the frontends record is a substring of the file's text, at identifier
//! boundaries (they copy or trim node text and never join two identifiers), except
//! Kotlin's `invoke` for `f()()` and `set` for `a[i] = v`, and the empty callee of Rust's `(f)()`
//! ([`SYNTHETIC_CALLEES`]; nameless functions are not indexed) and the name `Companion` of
//! an unnamed Kotlin companion object (no demand names a type so); `tests/prefilter.rs` checks
//! this on every fixture. Rust string literal values have their escapes decoded, which the
//! normalised view also does; a Java file is scanned with its unicode escapes decoded, as
//! the Java frontend lowers it. Given that:
//!
//! - A *source* needs a call whose callee is one of its entry's `callee` names, whose
//!   receiver's last segment is one of `receiver` (unless `free`), and whose lower-cased
//!   receiver contains one of `receiver_contains`: each is a token or an ASCII
//!   case-insensitive substring of the file, so each of the entry's word clauses hits (the
//!   source scan checks them all; a call sink's scan only the most selective one, a
//!   weaker condition). A `callee_glob` is
//!   checked through its longest literal part, which every matching callee contains.
//! - A *sink* needs a name whose normalised form contains a `[keys] normalized_names`
//!   entry (bindings, assignments, fields, named arguments, key-named setters, key
//!   parameters), a header literal equal (ASCII case-insensitively) to a `header_names`
//!   entry (or a dashed header literal whose normalised form contains a key name), a
//!   path-variable literal naming a `[header_param] path_names` entry, an identifier whose
//!   normalised form contains `idempotence`, or `idempotency` in a name read as a
//!   header-name constant (no lower-case character, or `header` in it:
//!   [`may_name_header_constant`]), a type of a `[keys]
//!   typed_fields` entry (its setters are sinks on that type only), or a `[[call_sink]]`
//!   call. Normalising is done character by character, so
//!   the normalised form of any substring of the text is a substring of the normalised
//!   view: those words are searched there.
//! - With no sink word anywhere in the project there is no sink, no key parameter, hence no
//!   key-minting function and no finding: nothing is parsed.
//! - Otherwise every file with a sink or ShedLock word is parsed (round 0); a source word
//!   alone does not make a file matter. Let P be the parsed files and N the names of step
//!   2 computed from P's summaries. A file outside P contains no sink word and no name of
//!   N. Its functions then cannot mint (needs a sink, or a call to a minting function or to
//!   a key-parameter function, whose names are in N), have no key parameter, and share no
//!   name with a minting or key-parameter function (the declared name would be in the
//!   text). Whether a call returns a fresh value is asked (pass 2, [`crate::flow`]) only
//!   for calls the flows from sinks pass through: sinks of P's files, and arguments of
//!   key-parameter calls (in N, so in P). With no oracle answer a flow explores at least
//!   what it explores with any answers (a fresh call ends a path), so the calls pass 1
//!   records ([`FileDemand::asks`], [`FileDemand::arg_asks`]; every callee by name when
//!   the step budget ran out) cover pass 2's questions. The index answers such a call from
//!   its candidates ([`ProjectIndex::candidates`]: by receiver type, file, receiver name
//!   and language), all of which must be fresh. Each asked call is resolved the same way
//!   ([`resolve_call`]): a receiver of declared type `T` has candidates only in files with
//!   both the callee and `T` as tokens (a declaration in `T` or in a type listing `T` as
//!   a supertype, simple names of the text); a call with no receiver, candidates in its own
//!   file (parsed) if it has any, else anywhere the callee is a token, through the
//!   supertypes of the file's types (merged by simple name over every type so named: the
//!   files declaring those names and, round by round, their supertypes are demanded, so
//!   the chain the index reads is the whole project's); a receiver that is not a getter,
//!   under a common or capitalised name, only in a type named for the receiver (by
//!   normalised name: equal to a called receiver's method, or containing or contained
//!   in a named receiver), so in files with the callee and a type-declaring keyword (or
//!   Rust `impl` self type) followed by such a name ([`Demand::named_for`], anything
//!   unclear a yes); any other call, anywhere the
//!   callee is a token. So every candidate of the whole project is in P, and the
//!   candidates in P are those of the whole project. (The answer counts the fresh
//!   candidates: all of them fresh is a finding, some of them an ambiguous finding at a
//!   lower severity, [`ProjectIndex::fresh_from`]; so every candidate of an asked call is
//!   demanded, a non-fresh one included.) Whether a candidate is fresh depends
//!   on its own file and, by name (the fixpoint's unanimity over the fitting declarations
//!   of each callee it returns the result of, [`crate::index::FnDecl::fresh_via`]), on the
//!   declarations of those names, which are in N with theirs, by induction over the
//!   fixpoint's iterations. One cut keeps this sound: a declaration is *settled*
//!   ([`settled_of`]) when it has no fresh value of its own and each call it returns the
//!   result of has a settled fitting declaration of its name in P and, when its receiver
//!   narrows its candidates (the fixpoint then also accepts a call all of whose
//!   candidates are fresh, `ProjectIndex::narrowed_fresh`), a settled candidate in a
//!   narrowing that can only grow ([`narrowed_settled`]); its state is "not fresh" in
//!   every project containing P (one non-fresh declaration defeats each unanimity), so a
//!   call followed through `fresh_via` that is settled so needs no more declarations
//!   than its narrowing's (for a receiver of the kind above, the files that may declare
//!   a type named for it). A followed call of a common name through such a receiver
//!   is answered only when it has a candidate (`ProjectIndex::ref_fresh`): the files
//!   that may declare one are scanned for first, and the name's declarations only once
//!   one is parsed; once they are scanned for and none is, the call is settled
//!   (`never_a_candidate`). A
//!   call of a name scanned for in full in an earlier round (every declaration of it is
//!   in P) with no fitting declaration is never fresh, so it is settled too
//!   (`none_fit`: `Some(..)`, `Ok(..)`). A name followed by name only for the
//!   unanimity is sampled ([`Demand::sampled`]): the first files (in discovery order)
//!   that may declare it, twice as many each round while no settled declaration decides
//!   it, until a sample takes the rest, after which it counts as scanned in full. A
//!   settled declaration decides the unanimity in every larger project, so sampling,
//!   like holding back, only delays a demand. A followed call whose candidates are parsed and
//!   wait only on callees not scanned for yet is held back one round (those callees are
//!   demanded; [`Demand::deferred`] keeps the rounds going): the candidates may then
//!   settle it without every declaration of its name. A held-back call whose callees are
//!   not scanned for in full after all is followed as usual, so holding back only delays
//!   a demand. Registrations, retrying interceptors and `call.clone()` sites are
//!   only read for a file with an interceptor boundary and a key flow: such a file has a
//!   sink word or calls a key-parameter function, so it is in P and its interceptor types,
//!   the types registered beside them and `clone` are in N; a file outside P therefore
//!   registers none of them, declares none of them and has no `clone`. Whether the project
//!   retries calls anywhere (any retry boundary, even a hand-written loop) is settled by
//!   parsing further files until one does, when such an interceptor exists and no parsed
//!   file says so ([`needs_retry_evidence`]). (The finding is the same; the retry site its
//!   message quotes as an example is the first of those found, which with the prefilter
//!   can be another site than the first of the whole project: finding every site would
//!   mean parsing every file.) Functions that read a key header have key
//!   words, and their names are in N like the other special names. ShedLock's
//!   enabling annotation and `LockProvider` suffix are seed words. An inferred retry scope
//!   (a lambda given to a project retry combinator) changes findings only in a file with a
//!   key flow or a minting call, which is in P. Pass 2 asks
//!   [`ProjectIndex::retried_arg`] only for calls given a lambda (or a local bound to one)
//!   that pass 1 left unclassified ([`FileDemand::lambda_calls`]), and every candidate
//!   must retry the parameter the lambda binds: these calls are resolved as above, a
//!   candidate that neither retries nor passes on that parameter settling "no". A
//!   parameter's state depends only on the calls it is itself passed on to, so the callees
//!   the candidates pass that parameter on to are in N with, of their fitting
//!   declarations, the callees of the parameter the argument binds, transitively, unless a
//!   fitting declaration that neither retries nor passes on that parameter, and that the
//!   call's receiver cannot set aside, settles "no" (`comb_settled`), so every declaration
//!   deciding whether a combinator retries is in P. Where a file with a key flow holds an
//!   interceptor boundary, every declaration of each possible combinator name is followed
//!   instead (the quoted call-level retry sites count declarations by name). Finally a file
//!   outside P has no finding: that needs a sink (word or key-parameter call, in N), or a
//!   call of a minting function (in N). A named write (a header set under a constant, a
//!   Camel `setProperty`, [`crate::classify::NamedWrite`]) is a sink only once the index
//!   holds a [`crate::index::NamedKey`] of its name; those are declared by files with a
//!   key-header literal (sink words, so in P), and their names are in N, so every file
//!   writing under them is in P too ([`FileDemand::keyed`] counts such writes, and their
//!   values' flows are among the asked calls).
//! - A Camel processor's `process` method is a boundary only through a route and a send
//!   ([`crate::index::CamelRoute`], [`crate::index::CamelSend`]); it changes findings only
//!   in the processor's file, which then has a sink (in P). Such a file demands the
//!   processor's type name and the tokens `RouteBuilder`, `ProducerTemplate` and
//!   `FluentProducerTemplate`: a route running the processor names its type (a field's
//!   declared type, `new T()`) or extends `RouteBuilder`, and a send holds a template. (A
//!   route that only hops on with `.to(..)`, in a class extending a project base class, is
//!   not found this way; `--no-prefilter` reads it.)
//!
//! - A method implementing a type that another file annotates for an `on_interface`
//!   boundary entry (Temporal's `@ActivityInterface`, [`crate::index::TypeBoundary`]) is
//!   a boundary only once that file is merged. A file that can have a finding (a key
//!   flow, a library call that mints, or a call of a minting function, all of which put
//!   it in P) demands the declarations of its types' supertypes
//!   ([`FileDemand::implemented`]), so the annotated type's file is in P; `needs_check`
//!   counts such a supertype as a boundary of the file.
//! - A web handler's request-bound field default is a sink only in the file declaring the
//!   request type (the default is recorded under the type whose declaration holds it), so
//!   the type's declarations are demanded ([`Demand::decls`]), not its mentions. The
//!   calls such a default's flow passes through ([`FileDemand::default_asks`]) are asked
//!   about like a sink's once the index knows a handler sends the field: a default from a
//!   project helper (`requestRef = Seeds.now()`) has the helper's declarations parsed and
//!   the request type's file checked.
//! - A call can reach a minting declaration only from code that declaration is visible to
//!   (the same language family; test code only from test code), which is how
//!   [`ProjectIndex::is_mint_name_from`] and candidate resolution see it. A name that is a
//!   key name only because some declarations mint a key is therefore scanned for in full
//!   in those kinds of code and for its declarations elsewhere ([`Demand::reach`]), which
//!   still parses every declaration of it (the name is complete); a key parameter, a
//!   key-header read or a named key is looked up by name alone, so such names are wanted
//!   everywhere.
//! - The fresh closure ([`FreshScope`]) can spare the declarations of an asked name
//!   altogether. A declaration's own fresh value comes from a catalogue source in its
//!   file (an attempt counter is no fresh value of a function, `crate::flow::Origin`), so
//!   once every file with a source word is parsed, and every file mentioning a name that
//!   some parsed declaration may make fresh ([`may_fresh_names`], transitively through
//!   `fresh_via`), any other name has no fresh declaration in the whole project (by
//!   induction over the index's fixpoint: a declaration fresh through a call names its
//!   callee as a token). Every call of it is then answered "not fresh"
//!   (`ProjectIndex::fresh_from` exits on a name with no fresh declaration), so such a
//!   freshness question needs no declaration, and a `fresh_via` call of it settles its
//!   caller ([`settled_of`]). Until the closure is complete those questions are held
//!   back. `check` runs the closure only while its files cost fewer bytes than the
//!   demand without it would select, and drops it for good otherwise; the demand is
//!   sound either way. A Rust source entry with receivers is checked as a path or method
//!   call (`Utc::now`, [`rust_path_call`]), which is how the catalogue matches it.
//! - When a name round has parsed files, at least 500 are parsed and the files left hold
//!   at most half as many bytes, pass 1 parses them all (fewer rounds of index and
//!   demand); its result is then `--no-prefilter`'s.
//! - Suppressions: a file that mentions `idemlint` is parsed and checked in any case
//!   ([`mentions_idemlint`]), since an unused suppression is reported on its own.
//!
//! `tests/prefilter.rs` runs every fixture and a generated project both ways and compares
//! the findings; the CLI offers `--no-prefilter`. Parse errors are reported only for files
//! that are parsed, so a broken file that cannot matter is not reported unless
//! `--no-prefilter` is given; files that cannot be read or are not UTF-8 are always
//! reported (every file is read).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use thin_vec::ThinVec;

use crate::catalogue::{CallMatch, Catalogue};
use crate::classify::FileFacts;
use crate::index::{CallRef, FileSummary, FnDecl, Name, ProjectIndex, SharedCall};
use crate::model::Call;
use crate::model::{BindingKind, FileModel, Language, ScopeKind};

/// Callee names a frontend records without the name appearing in the text, per language:
/// Kotlin names the call of a non-identifier callee (`f()()`, `(g)()`) `invoke` and an
/// indexed assignment (`headers["Idempotency-Key"] = v`) `set`, as the language reads
/// them; Rust records the empty name for `(f)()`. A name in this list matches every file
/// of the language.
pub const SYNTHETIC_CALLEES: &[(&str, Language)] = &[
    ("invoke", Language::Kotlin),
    ("set", Language::Kotlin),
    ("", Language::Rust),
    ("", Language::Kotlin),
    ("", Language::Java),
];

/// A word [`Prefilter::view`] finds: an index into the normalised or the raw words.
#[derive(Clone, Copy, Debug)]
enum ViewWord {
    Norm(usize),
    Raw(usize),
    /// `idemlint`, in any case ([`mentions_idemlint`]; the view is lower-cased, and
    /// removing `_`, `-` and backticks only finds it in more places).
    Mention,
}

/// How a word must appear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WordKind {
    /// Case-sensitive, not preceded or followed by `[A-Za-z0-9_]`.
    Token,
    /// Case-sensitive anywhere.
    Substring,
    /// ASCII case-insensitive anywhere (matches a lower-cased `receiver_contains`).
    CaseInsensitive,
}

/// One clause: any of these words (indices into the raw or normalised word lists).
#[derive(Clone, Debug, Default)]
struct Clause {
    raw: Vec<usize>,
    norm: Vec<usize>,
}

/// A conjunction of clauses for the files of some languages.
#[derive(Clone, Debug)]
struct Condition {
    /// Empty: every language.
    langs: Vec<Language>,
    clauses: Vec<Clause>,
}

/// What [`Prefilter::scan`] found in one file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileWords {
    /// A catalogue source may be called here.
    pub source: bool,
    /// An idempotency-key sink may be here.
    pub sink: bool,
    /// A ShedLock enabling word is here.
    pub shedlock: bool,
    /// The file mentions `idemlint` (any case): it may hold suppressions, which are
    /// reported when they suppress nothing (see [`mentions_idemlint`]).
    pub suppression: bool,
}

impl FileWords {
    /// The file must be parsed in round 0 (when the project has a sink word at all). A
    /// source word alone does not make a file matter: its functions matter only when a
    /// key can come from a call of them, and then their names are demanded.
    pub fn is_seed(&self) -> bool {
        self.sink || self.shedlock
    }
}

/// The catalogue's words, compiled for scanning (built once per run).
pub struct Prefilter {
    raw_words: Vec<(String, WordKind)>,
    /// Raw [`WordKind::Token`] words made of identifier bytes only, by their bytes: a file's
    /// tokens are looked up here (the raw words they stand for).
    token_words: HashMap<Box<[u8]>, Vec<usize>, foldhash::fast::FixedState>,
    /// Per first byte, a bit per length (bit 63: 63 bytes or more) of the keys of
    /// `token_words`: most tokens are ruled out before they are hashed.
    token_shapes: Box<[u64; 256]>,
    norm_words: Vec<String>,
    /// Pattern `i` of `view` stands for these words: normalised words, and the raw words
    /// not in `token_words` in normalised form (found where the raw word is, and maybe
    /// where it is not: a superset is sound for a prefilter).
    view_patterns: Vec<Vec<ViewWord>>,
    view: Option<ViewSearch>,
    /// Raw words with no normalised form (all `_` or `-`): taken to be everywhere.
    raw_everywhere: Vec<usize>,
    sources: Vec<Condition>,
    /// Per entry of `sources`: for a Rust-only entry with receivers and callees (plain
    /// identifiers), those words, which a call matching it holds as a path or method
    /// call (`Utc::now`, [`rust_path_call`]).
    source_paths: Vec<Option<(Vec<String>, Vec<String>)>>,
    sinks: Vec<Condition>,
    /// The normalised word `idempotency`: a sink where [`may_name_header_constant`] holds.
    idempotency: usize,
    shedlock: Vec<Condition>,
}

fn langs_of(m: &CallMatch) -> Vec<Language> {
    [Language::Rust, Language::Java, Language::Kotlin]
        .into_iter()
        .filter(|l| m.langs.is_empty() || m.langs.iter().any(|x| x == l.name()))
        .collect()
}

/// A callee as it appears in the text: Rust raw identifiers (`r#gen`) are recorded with or
/// without `r#`; the part after it is a token either way.
fn callee_word(c: &str) -> &str {
    c.strip_prefix("r#").unwrap_or(c)
}

struct Builder {
    raw_words: Vec<(String, WordKind)>,
    norm_words: Vec<String>,
}

impl Builder {
    fn raw(&mut self, w: &str, kind: WordKind) -> usize {
        if let Some(i) = self
            .raw_words
            .iter()
            .position(|(x, k)| x == w && *k == kind)
        {
            return i;
        }
        self.raw_words.push((w.to_string(), kind));
        self.raw_words.len() - 1
    }

    fn norm(&mut self, w: &str) -> usize {
        if let Some(i) = self.norm_words.iter().position(|x| x == w) {
            return i;
        }
        self.norm_words.push(w.to_string());
        self.norm_words.len() - 1
    }

    /// The clause a call matching `m` must satisfy: of the entry's word clauses (callee,
    /// receiver, receiver substring; each must hold), the most selective one. Keeping one
    /// clause of a conjunction only weakens it, which is sound; it keeps common words
    /// (`new`, `now`) out of the scan when a rarer one (`Ulid`) is required anyway. No
    /// clause (every file matches) when the entry constrains nothing by words.
    fn call_clauses(&mut self, m: &CallMatch) -> Vec<Clause> {
        let mut clauses = self.all_call_clauses(m);
        // Short words are common: prefer the clause whose shortest word is longest, then
        // the one with fewer words.
        let score = |b: &Builder, c: &Clause| {
            let min = c
                .raw
                .iter()
                .map(|w| b.raw_words[*w].0.len())
                .min()
                .unwrap_or(0);
            (min, usize::MAX - c.raw.len())
        };
        clauses.sort_by_key(|c| std::cmp::Reverse(score(self, c)));
        clauses.truncate(1);
        clauses
    }

    /// A clause that holds when any of `words` (raw words of one kind) is found.
    fn raw_clause(&mut self, words: &[String], kind: WordKind) -> Clause {
        Clause {
            raw: words.iter().map(|w| self.raw(w, kind)).collect(),
            norm: Vec::new(),
        }
    }

    fn all_call_clauses(&mut self, m: &CallMatch) -> Vec<Clause> {
        let mut clauses = Vec::new();
        let callees: Vec<&str> = m
            .callee
            .iter()
            .map(|c| callee_word(c))
            .chain(m.callee_glob.iter().map(|g| longest_literal(g)))
            .collect();
        // An unconstrained callee, or a glob / name with no literal part: no clause.
        if !callees.is_empty() && callees.iter().all(|c| !c.is_empty()) {
            let raw = callees
                .iter()
                .map(|c| {
                    // Glob parts are substrings of the callee; exact names are tokens.
                    let kind = if m.callee.iter().any(|x| callee_word(x) == *c) {
                        WordKind::Token
                    } else {
                        WordKind::Substring
                    };
                    self.raw(c, kind)
                })
                .collect();
            clauses.push(Clause {
                raw,
                norm: Vec::new(),
            });
        }
        if !m.receiver.is_empty() && !m.free && m.receiver.iter().all(|r| !r.is_empty()) {
            clauses.push(self.raw_clause(&m.receiver, WordKind::Token));
        }
        if !m.receiver_contains.is_empty() && m.receiver_contains.iter().all(|r| !r.is_empty()) {
            clauses.push(self.raw_clause(&m.receiver_contains, WordKind::CaseInsensitive));
        }
        clauses
    }
}

/// The longest `*`-free part of a glob: every callee the glob matches contains it.
fn longest_literal(glob: &str) -> &str {
    glob.split('*').max_by_key(|p| p.len()).unwrap_or("")
}

/// Lower-cases (Unicode, as [`crate::catalogue::normalize_name`] does) and drops `_`,
/// `-` and `` ` `` (the Kotlin frontend reads `` `refunds`() `` as `refunds()`), appending
/// to `out`. With `decode_escapes` (Rust), `\x41`, `\u{41}`, `\n`-style
/// escapes and `\`-newline continuations are decoded first, as `syn` does for string
/// literal values; doing so over the whole text keeps every literal's decoded value a
/// substring, because no escape can start outside a literal and end inside it.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
const LOW_BITS: u64 = 0x0101_0101_0101_0101;

/// Whether one of the 8 ASCII bytes of `w` is `b`.
fn has_byte(w: u64, b: u8) -> bool {
    let x = w ^ (LOW_BITS * u64::from(b));
    x.wrapping_sub(LOW_BITS) & !x & HIGH_BITS != 0
}

/// The 8 ASCII bytes of `w` (high bits clear) with `A`-`Z` lower-cased.
fn ascii_lowercase_word(w: u64) -> u64 {
    // Per byte, b + 0x3f has its high bit set when b >= b'A', b + 0x25 when b > b'Z'
    // (no carry crosses a byte: every byte is below 0x80).
    let at_least_a = w + LOW_BITS * 0x3f;
    let above_z = w + LOW_BITS * 0x25;
    let upper = at_least_a & !above_z & HIGH_BITS;
    w | (upper >> 2)
}

pub fn normalized_view(text: &str, decode_escapes: bool, out: &mut Vec<u8>) {
    let bytes = text.as_bytes();
    // Written in place: ASCII bytes shrink or stay; a non-ASCII character may grow when
    // lower-cased, and then the buffer is grown first.
    out.clear();
    out.resize(bytes.len() + 8, 0);
    let mut j = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Eight ASCII bytes with nothing to drop or decode: lower-cased as one word (the
        // buffer always has room for the rest of the text plus 8 bytes).
        if let Some(w) = bytes.get(i..i + 8) {
            let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            let special = w & HIGH_BITS != 0
                || has_byte(w, b'_')
                || has_byte(w, b'-')
                || has_byte(w, b'`')
                || decode_escapes && has_byte(w, b'\\');
            if !special {
                out[j..j + 8].copy_from_slice(&ascii_lowercase_word(w).to_le_bytes());
                i += 8;
                j += 8;
                continue;
            }
        }
        let b = bytes[i];
        if b.is_ascii() && !(decode_escapes && b == b'\\') {
            out[j] = b.to_ascii_lowercase();
            j += usize::from(b != b'_' && b != b'-' && b != b'`');
            i += 1;
            continue;
        }
        let (c, len) = if b == b'\\' {
            match rust_escape(&bytes[i..]) {
                Some((c, len)) => (c, len),
                None => (Some('\\'), 1),
            }
        } else {
            // A non-ASCII character: `text` is valid UTF-8 and `i` is at a char boundary.
            let c = text[i..].chars().next().unwrap_or('\u{fffd}');
            (Some(c), c.len_utf8())
        };
        i += len;
        let Some(c) = c else { continue };
        if c == '_' || c == '-' || c == '`' {
            continue;
        }
        let mut buf = [0u8; 12];
        let mut n = 0;
        for l in c.to_lowercase() {
            n += l.encode_utf8(&mut buf[n..]).len();
        }
        let need = j + n + (bytes.len() - i) + 8;
        if out.len() < need {
            out.resize(need, 0);
        }
        out[j..j + n].copy_from_slice(&buf[..n]);
        j += n;
    }
    out.truncate(j);
}

/// Decodes one Rust escape at the start of `s` (which starts with `\`): the character it
/// stands for (`None` for a line continuation) and its length in bytes.
fn rust_escape(s: &[u8]) -> Option<(Option<char>, usize)> {
    let next = *s.get(1)?;
    let simple = |c: char| Some((Some(c), 2));
    match next {
        b'n' => simple('\n'),
        b'r' => simple('\r'),
        b't' => simple('\t'),
        b'0' => simple('\0'),
        b'\\' => simple('\\'),
        b'\'' => simple('\''),
        b'"' => simple('"'),
        b'x' => {
            let hex = s.get(2..4)?;
            let v = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
            Some((Some(char::from(v)), 4))
        }
        b'u' => {
            if s.get(2) != Some(&b'{') {
                return None;
            }
            let close = s.iter().take(12).position(|b| *b == b'}')?;
            let digits: String = std::str::from_utf8(&s[3..close])
                .ok()?
                .chars()
                .filter(|c| *c != '_')
                .collect();
            let v = u32::from_str_radix(&digits, 16).ok()?;
            Some((Some(char::from_u32(v)?), close + 1))
        }
        b'\n' | b'\r' => {
            let mut j = 1;
            while j < s.len() && matches!(s[j], b' ' | b'\t' | b'\n' | b'\r') {
                j += 1;
            }
            Some((None, j))
        }
        _ => None,
    }
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// True when `text[start..end]` is not glued to identifier characters on either side.
fn at_boundaries(text: &[u8], start: usize, end: usize) -> bool {
    (start == 0 || !is_ident_byte(text[start - 1]))
        && (end >= text.len() || !is_ident_byte(text[end]))
}

/// The bit of [`Prefilter::token_shapes`] for a token of `len` bytes.
fn length_bit(len: usize) -> u64 {
    1u64 << len.min(63)
}

/// Calls `f` on each identifier token of `bytes`: each maximal run of `[A-Za-z0-9_]`, the
/// bytes [`at_boundaries`] stops at, so a word made of such bytes is found at identifier
/// boundaries exactly when it is one of these tokens.
fn for_each_token(bytes: &[u8], mut f: impl FnMut(&[u8])) {
    static IDENT: [bool; 256] = {
        let mut t = [false; 256];
        let mut b = 0;
        while b < 256 {
            t[b] = (b as u8).is_ascii_alphanumeric() || b == b'_' as usize;
            b += 1;
        }
        t
    };
    let mut i = 0;
    while i < bytes.len() {
        if !IDENT[usize::from(bytes[i])] {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && IDENT[usize::from(bytes[i])] {
            i += 1;
        }
        f(&bytes[start..i]);
    }
}

/// The hash of one token in a [`TokenSig`].
fn token_hash(token: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::with_seed(0x1de4_11d7).hash_one(token)
}

/// Reusable buffers of [`Prefilter::scan`], one per worker.
#[derive(Default)]
pub struct ScanScratch {
    /// The normalised view ([`normalized_view`]).
    view: Vec<u8>,
    /// The last scanned file's tokens.
    sig: SigBuilder,
}

impl ScanScratch {
    /// The [`TokenSig`] of the file [`Prefilter::scan`] read last.
    pub fn signature(&self) -> TokenSig {
        TokenSig {
            bits: self.sig.bits.as_slice().into(),
        }
    }
}

/// A [`TokenSig`] being filled.
#[derive(Default)]
struct SigBuilder {
    bits: Vec<u64>,
}

impl SigBuilder {
    /// Starts the signature of a text of `len` bytes: one bit per 3 bytes, rounded up to a
    /// power of two (at least 64). A token with its separator takes about 6 bytes and a
    /// file's distinct tokens are a fraction of its tokens, so this is about 8 to 20 bits
    /// per distinct token.
    fn start(&mut self, len: usize) {
        let bits = (len / 3).max(64).next_power_of_two();
        self.bits.clear();
        self.bits.resize(bits / 64, 0);
    }

    fn insert(&mut self, h: u64) {
        let mask = (self.bits.len() * 64) as u64 - 1;
        for p in TokenSig::probes(h, mask) {
            self.bits[(p / 64) as usize] |= 1 << (p % 64);
        }
    }
}

/// A Bloom filter of one file's identifier tokens ([`for_each_token`], over the text as
/// [`Prefilter::scan`] reads it: Java unicode escapes decoded). Later prefilter rounds ask
/// it whether a file may contain the names they scan for ([`NameScan::may_match`]) and
/// read only the files that may: a "no" is certain; a "yes" for an absent name comes
/// with a probability of a few percent at most ([`SigBuilder::start`]'s size, 4 probes).
/// Its size is a third of the file's length in bits.
#[derive(Clone, Debug)]
pub struct TokenSig {
    bits: Box<[u64]>,
}

const SIG_PROBES: u64 = 4;

impl TokenSig {
    /// The bit positions of a hash (double hashing), below `mask + 1` (a power of two).
    fn probes(h: u64, mask: u64) -> impl Iterator<Item = u64> {
        let step = h.rotate_left(32) | 1;
        (0..SIG_PROBES).map(move |i| h.wrapping_add(i.wrapping_mul(step)) & mask)
    }

    /// False when no token of the file hashes to `h` ([`token_hash`]).
    fn may_contain(&self, h: u64) -> bool {
        let mask = (self.bits.len() * 64) as u64 - 1;
        Self::probes(h, mask).all(|p| self.bits[(p / 64) as usize] & (1 << (p % 64)) != 0)
    }
}

/// The normalised view's patterns, searched in two steps ([`ViewSearch::each_match`]).
struct ViewSearch {
    /// Every match, overlapping ones included: what the scan needs.
    all: AhoCorasick,
    /// One short piece of each pattern (its *anchor*, [`anchor_of`]), searched
    /// leftmost-first and not overlapping: a search the crate accelerates with a
    /// vectorised prefilter (Teddy, for up to 64 patterns), which an overlapping search
    /// cannot use. A pattern's first bytes are often common in code (`ran` of `random`,
    /// `ses` of `sessions()`) and each place they occur costs the prefilter a check; an
    /// anchor of rarer bytes is found in fewer places.
    first: AhoCorasick,
    /// The longest pattern's length (bytes).
    longest: usize,
    /// The largest offset of an anchor in its pattern (bytes).
    behind: usize,
}

/// Bytes of lower-cased source text, most frequent first (measured on the bench corpus's
/// Java, Kotlin and Rust files). Only the order matters: it ranks how rare an anchor's
/// bytes are ([`anchor_of`]); a byte not listed counts as rarer than any listed.
const VIEW_BYTES_BY_FREQUENCY: &[u8] =
    b" etrasinolcpud.hmg)(fbv\"yw;/*,xk}{:=@jq>0<[]21#z!&'3+?45|\\6897$%^~";

/// The anchor of a view pattern: the four bytes (the whole pattern when shorter) whose
/// bytes are rarest by [`VIEW_BYTES_BY_FREQUENCY`], leftmost of equals, with its offset.
fn anchor_of(pattern: &[u8]) -> (&[u8], usize) {
    const WIDTH: usize = 4;
    if pattern.len() <= WIDTH {
        return (pattern, 0);
    }
    let rank = |b: &u8| {
        VIEW_BYTES_BY_FREQUENCY
            .iter()
            .position(|x| x == b)
            .unwrap_or(VIEW_BYTES_BY_FREQUENCY.len())
    };
    let mut best = (0, 0);
    for (i, w) in pattern.windows(WIDTH).enumerate() {
        let score: usize = w.iter().map(rank).sum();
        if i == 0 || score > best.0 {
            best = (score, i);
        }
    }
    (&pattern[best.1..best.1 + WIDTH], best.1)
}

impl ViewSearch {
    fn new(patterns: &[String]) -> Option<ViewSearch> {
        let all = build_ac(patterns, false)?;
        let mut anchors: Vec<&[u8]> = Vec::new();
        let mut behind = 0;
        for p in patterns {
            let (a, at) = anchor_of(p.as_bytes());
            behind = behind.max(at);
            if !anchors.contains(&a) {
                anchors.push(a);
            }
        }
        let first = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostFirst)
            .kind(
                (anchors.iter().map(|a| a.len()).sum::<usize>() > 4096)
                    .then_some(aho_corasick::AhoCorasickKind::ContiguousNFA),
            )
            .build(&anchors)
            .ok()?;
        let longest = patterns.iter().map(String::len).max().unwrap_or(0);
        Some(ViewSearch {
            all,
            first,
            longest,
            behind,
        })
    }

    /// Calls `f` with the pattern of every match in `hay`, overlapping ones included (a
    /// pattern may be reported more than once). The leftmost-first search of the anchors
    /// finds, from where its last match ended, the match that starts leftmost, so every
    /// occurrence of any anchor starts inside a match it reports: from a restart point at
    /// or before an occurrence's start `a`, the leftmost match starts at or before `a`;
    /// it either ends after `a` or the search restarts at its end, still at or before
    /// `a`. An occurrence of a pattern holds its anchor at the anchor's offset (at most
    /// `behind`), so a pattern whose anchor starts inside a reported match `[s, e)` lies
    /// within `[s - behind, e - 1 + longest)`, which the overlapping search then reads.
    /// Anchors are rare in most files, so the time is the accelerated search's.
    fn each_match(&self, hay: &[u8], mut f: impl FnMut(usize)) {
        for m in self.first.find_iter(hay) {
            let start = m.start().saturating_sub(self.behind);
            let end = (m.end() - 1 + self.longest).min(hay.len());
            let window = aho_corasick::Input::new(hay).range(start..end);
            for o in self.all.find_overlapping_iter(window) {
                f(o.pattern().as_usize());
            }
        }
    }
}

fn build_ac(patterns: &[String], ascii_ci: bool) -> Option<AhoCorasick> {
    if patterns.is_empty() {
        return None;
    }
    // Building cannot fail short of an absurd size, in which case scanning falls back to
    // "everything matches". The automaton the crate picks for a few patterns is a DFA,
    // whose construction took time quadratic in a long self-overlapping pattern (a
    // declared name of 16 KiB repeating one letter: 5 s; 64 KiB: 155 s). Names come from
    // the scanned tree, so past a few KiB of patterns an NFA is asked for: built in time
    // linear in the patterns, slower per byte scanned only for such inputs.
    let long = patterns.iter().map(String::len).sum::<usize>() > 4096;
    AhoCorasickBuilder::new()
        .match_kind(MatchKind::Standard)
        .ascii_case_insensitive(ascii_ci)
        .kind(long.then_some(aho_corasick::AhoCorasickKind::ContiguousNFA))
        .build(patterns)
        .ok()
}

impl Prefilter {
    /// Compiles the words of `cat` (built-in plus any merged entries).
    pub fn new(cat: &Catalogue) -> Prefilter {
        let mut b = Builder {
            raw_words: Vec::new(),
            norm_words: Vec::new(),
        };
        let mut sources = Vec::new();
        let mut source_paths = Vec::new();
        // Every clause of a source entry: a file with a source word is where the fresh
        // closure starts ([`FreshScope`]), so the fewer the better, and the few more words
        // cost the token lookups little.
        for s in &cat.sources {
            let clauses = b.all_call_clauses(&s.call);
            let langs = langs_of(&s.call);
            let m = &s.call;
            let plain = |w: &String| !w.is_empty() && w.bytes().all(is_ident_byte);
            source_paths.push(
                (langs == [Language::Rust]
                    && !m.free
                    && !m.receiver.is_empty()
                    && m.callee_glob.is_empty()
                    && !m.callee.is_empty()
                    && m.receiver.iter().all(plain)
                    && m.callee.iter().all(plain))
                .then(|| (m.receiver.clone(), m.callee.clone())),
            );
            sources.push(Condition { langs, clauses });
        }
        let mut sinks = Vec::new();
        // Key names, the hard-coded `idempotency` of header-name constants, header names.
        let mut norm = Vec::new();
        for k in &cat.keys.normalized_names {
            if !k.is_empty() {
                norm.push(b.norm(k));
            }
        }
        // `idempotency` in a header-name constant's name is a sink only in the names that
        // `classify::names_key_header` reads as constants ([`may_name_header_constant`]),
        // checked apart; `idempotence` in any.
        let idempotency = b.norm("idempotency");
        norm.push(b.norm("idempotence"));
        // Typed key fields are sinks only on their types: a file must name one.
        for t in cat.keys.typed_fields.iter().flat_map(|t| &t.types) {
            norm.push(b.norm(&crate::catalogue::normalize_name(t)));
        }
        for h in &cat.keys.header_names {
            let n = crate::catalogue::normalize_name(h.trim());
            if !n.is_empty() {
                norm.push(b.norm(&n));
            }
        }
        // Transaction-id path variables (`@Path("txnId")` of a `@PUT`) are key parameters
        // (`HeaderParam::is_key_param`): in Java and Kotlin (a Rust parameter has no
        // annotations), in a file naming one of the path annotations and one of the
        // methods, whose names are tokens there (an alias is imported by that name).
        let hp = &cat.header_param;
        let path_names: Vec<usize> = hp
            .path_names
            .iter()
            .map(|h| crate::catalogue::normalize_name(h.trim()))
            .filter(|n| !n.is_empty())
            .map(|n| b.norm(&n))
            .collect();
        if !path_names.is_empty() && !hp.path_annotations.is_empty() && !hp.path_methods.is_empty()
        {
            let annotations = b.raw_clause(&hp.path_annotations, WordKind::Token);
            let methods = b.raw_clause(&hp.path_methods, WordKind::Token);
            sinks.push(Condition {
                langs: vec![Language::Java, Language::Kotlin],
                clauses: vec![
                    Clause {
                        raw: Vec::new(),
                        norm: path_names,
                    },
                    annotations,
                    methods,
                ],
            });
        }
        // A word that contains another word of the same clause adds nothing.
        let all = norm.clone();
        norm.retain(|w| {
            !all.iter()
                .any(|o| o != w && b.norm_words[*w].contains(b.norm_words[*o].as_str()))
        });
        norm.sort();
        norm.dedup();
        sinks.push(Condition {
            langs: Vec::new(),
            clauses: vec![Clause {
                raw: Vec::new(),
                norm,
            }],
        });
        // `@Idempotent(keyExpression = ..)`: a SpEL key (rules::time_in_key), Java and Kotlin.
        // It is a sink only with a clock read in an argument, whose method name is a token
        // (`has_spel_clock_key`: `T(..).now(`, `currentTimeMillis(`, `nanoTime(`; spaces
        // removed): "idempotent" alone is mostly prose (`/** idempotent: .. */`,
        // `onClosedIdempotent()`).
        // The rule reads any annotation whose name holds `idempot` (`@Idempotent`,
        // `@Idempotency`, `@IdempotOp`).
        let spel = b.norm("idempot");
        let clock = b.raw_clause(
            &crate::rules::time_in_key::SPEL_CLOCK_METHODS.map(String::from),
            WordKind::Token,
        );
        sinks.push(Condition {
            langs: vec![Language::Java, Language::Kotlin],
            clauses: vec![
                Clause {
                    raw: Vec::new(),
                    norm: vec![spel],
                },
                clock,
            ],
        });
        for c in &cat.call_sinks {
            let clauses = b.call_clauses(&c.call);
            sinks.push(Condition {
                langs: langs_of(&c.call),
                clauses,
            });
        }
        // A library call that mints its own key is a sink and an origin at once.
        for c in &cat.minting_calls {
            let mut clauses = b.call_clauses(&c.call);
            // The file must name one of the entry's packages
            // ([`crate::catalogue::MintingCall::packages`]).
            if !c.packages.is_empty() {
                clauses.push(b.raw_clause(&c.packages, WordKind::Substring));
            }
            sinks.push(Condition {
                langs: langs_of(&c.call),
                clauses,
            });
        }
        let mut shedlock = Vec::new();
        for a in &cat.shedlock.enable_annotations {
            if !a.is_empty() {
                let w = b.raw(a, WordKind::Token);
                shedlock.push(Condition {
                    langs: Vec::new(),
                    clauses: vec![Clause {
                        raw: vec![w],
                        norm: Vec::new(),
                    }],
                });
            }
        }
        if !cat.shedlock.provider_suffix.is_empty() {
            let w = b.raw(&cat.shedlock.provider_suffix, WordKind::Substring);
            shedlock.push(Condition {
                langs: Vec::new(),
                clauses: vec![Clause {
                    raw: vec![w],
                    norm: Vec::new(),
                }],
            });
        }
        // Only the words of the clauses kept are scanned for (and `idempotency`).
        let mut used_raw = vec![false; b.raw_words.len()];
        let mut used_norm = vec![false; b.norm_words.len()];
        used_norm[idempotency] = true;
        for c in sources.iter().chain(&sinks).chain(&shedlock) {
            for cl in &c.clauses {
                cl.raw.iter().for_each(|w| used_raw[*w] = true);
                cl.norm.iter().for_each(|w| used_norm[*w] = true);
            }
        }
        // Token words are looked up by a file's tokens. The rest, and the normalised words,
        // are found in the normalised view, by one Aho-Corasick pattern per distinct
        // normalised word.
        let mut token_words: HashMap<Box<[u8]>, Vec<usize>, foldhash::fast::FixedState> =
            HashMap::with_hasher(foldhash::fast::FixedState::with_seed(0));
        let mut token_shapes = Box::new([0u64; 256]);
        let mut patterns: Vec<String> = Vec::new();
        let mut view_patterns: Vec<Vec<ViewWord>> = Vec::new();
        let mut raw_everywhere = Vec::new();
        let mut add =
            |pattern: String, w: ViewWord| match patterns.iter().position(|p| *p == pattern) {
                Some(p) => view_patterns[p].push(w),
                None => {
                    patterns.push(pattern);
                    view_patterns.push(vec![w]);
                }
            };
        for (i, (w, kind)) in b.raw_words.iter().enumerate() {
            if !used_raw[i] {
                continue;
            }
            if *kind == WordKind::Token && !w.is_empty() && w.bytes().all(is_ident_byte) {
                token_shapes[usize::from(w.as_bytes()[0])] |= length_bit(w.len());
                token_words.entry(w.as_bytes().into()).or_default().push(i);
                continue;
            }
            let mut view = Vec::new();
            normalized_view(w, false, &mut view);
            match String::from_utf8(view) {
                Ok(v) if !v.is_empty() => add(v, ViewWord::Raw(i)),
                _ => raw_everywhere.push(i),
            }
        }
        for (i, w) in b.norm_words.iter().enumerate() {
            if used_norm[i] {
                add(w.clone(), ViewWord::Norm(i));
            }
        }
        add("idemlint".to_string(), ViewWord::Mention);
        Prefilter {
            view: ViewSearch::new(&patterns),
            view_patterns,
            raw_everywhere,
            token_words,
            token_shapes,
            raw_words: b.raw_words,
            norm_words: b.norm_words,
            sources,
            source_paths,
            sinks,
            idempotency,
            shedlock,
        }
    }

    /// Scans one file's text: its tokens are looked up among the token words, and one
    /// Aho-Corasick pass over its normalised view finds the other words. `scratch` holds
    /// reusable buffers, and afterwards the file's [`TokenSig`] ([`ScanScratch::signature`]).
    pub fn scan(&self, language: Language, text: &str, scratch: &mut ScanScratch) -> FileWords {
        let decoded = java_decoded(language, text);
        let text = decoded.as_deref().unwrap_or(text);
        let bytes = text.as_bytes();
        let mut raw_hit = vec![false; self.raw_words.len()];
        for w in &self.raw_everywhere {
            raw_hit[*w] = true;
        }
        scratch.sig.start(bytes.len());
        for_each_token(bytes, |t| {
            scratch.sig.insert(token_hash(t));
            if self.token_shapes[usize::from(t[0])] & length_bit(t.len()) != 0
                && let Some(ws) = self.token_words.get(t)
            {
                ws.iter().for_each(|w| raw_hit[*w] = true);
            }
        });
        let mut norm_hit = vec![false; self.norm_words.len()];
        let mut mention = false;
        let mut hit = |w: &ViewWord| match *w {
            ViewWord::Norm(i) => norm_hit[i] = true,
            ViewWord::Raw(i) => raw_hit[i] = true,
            ViewWord::Mention => mention = true,
        };
        match &self.view {
            Some(ac) => {
                let mut views = vec![false];
                if language == Language::Rust && memchr::memchr(b'\\', bytes).is_some() {
                    views.push(true);
                }
                for decode in views {
                    normalized_view(text, decode, &mut scratch.view);
                    ac.each_match(scratch.view.as_slice(), |p| {
                        self.view_patterns[p].iter().for_each(&mut hit)
                    });
                }
            }
            None if self.view_patterns.is_empty() => {}
            None => self.view_patterns.iter().flatten().for_each(&mut hit),
        }
        let holds_one = |c: &Condition| {
            (c.langs.is_empty() || c.langs.contains(&language))
                && c.clauses.iter().all(|cl| {
                    cl.raw.iter().any(|w| raw_hit[*w]) || cl.norm.iter().any(|w| norm_hit[*w])
                })
        };
        let holds = |conds: &[Condition]| conds.iter().any(holds_one);
        let source = self
            .sources
            .iter()
            .zip(&self.source_paths)
            .any(|(c, path)| {
                holds_one(c)
                    && match path {
                        Some((receivers, callees)) if language == Language::Rust => {
                            rust_path_call(bytes, receivers, callees)
                        }
                        _ => true,
                    }
            });
        FileWords {
            source,
            sink: holds(&self.sinks)
                || norm_hit[self.idempotency] && may_name_header_constant(language, text),
            shedlock: holds(&self.shedlock),
            suppression: mention,
        }
    }
}

/// Whether `text` (with Java's unicode escapes decoded) may hold an identifier that
/// [`crate::classify::names_key_header`] reads as a key-header constant for holding
/// `idempotency` (normalised, [`crate::catalogue::normalize_name`]): one with no
/// lower-case character (`IDEMPOTENCY_HEADER`, `Headers.IDEMPOTENCY`), whose letters are
/// then the ASCII capitals `IDEMPOTENCY` with nothing but `_` or `-` between them (no
/// other character lower-cases to them), or one whose ASCII lower case holds `header`
/// (`idempotencyHeader`), found within a run of identifier characters and anything not
/// ASCII (a superset of the identifier). A Kotlin file with a backtick (an identifier
/// may hold spaces there) is a yes. Prose and lower-case names
/// (`set_default_idempotency`, "for idempotency") are a no.
fn may_name_header_constant(language: Language, text: &str) -> bool {
    if language == Language::Kotlin && text.contains('`') {
        return true;
    }
    let letters: Vec<u8> = text.bytes().filter(|b| *b != b'_' && *b != b'-').collect();
    if memchr::memmem::find(&letters, b"IDEMPOTENCY").is_some() {
        return true;
    }
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || !c.is_ascii()))
        .any(|t| {
            t.len() >= "idempotency".len() + "header".len()
                && t.to_ascii_lowercase().contains("header")
                && crate::catalogue::normalize_name(t).contains("idempotency")
        })
}

/// Whether the Rust text `bytes` may call one of `callees` through a path or receiver whose
/// last segment is one of `receivers` (what [`CallMatch::matches_by_text`] asks of a Rust
/// call: the path before the name, after the frontend undoes `use .. as` aliases, or a
/// method call's receiver text). No is answered only where every occurrence of a callee
/// that follows `::` or `.` (across spaces on one line; `r#name` too) has an identifier
/// right before that is not one of `receivers`, and no receiver is renamed (`Uuid as U`).
/// Anything else before the separator (`)`, `>`, a comment, a line break) is a yes: a
/// call receiver, generic arguments or a qualified self type may end there.
fn rust_path_call(bytes: &[u8], receivers: &[String], callees: &[String]) -> bool {
    // `use chrono::Utc as U` (comments and any whitespace between, as the Rust lexer
    // reads them): the frontend records `U::now()` as `Utc::now()`, and a renamed callee
    // likewise.
    let renamed = receivers.iter().chain(callees).any(|w| {
        memchr::memmem::find_iter(bytes, w.as_bytes()).any(|start| {
            let end = start + w.len();
            at_boundaries(bytes, start, end) && {
                let i = skip_trivia(bytes, end);
                bytes[i..].starts_with(b"as") && at_boundaries(bytes, i, i + 2)
            }
        })
    });
    if renamed {
        return true;
    }
    // Back over spaces and tabs on one line; `None` at a line break (a line comment may
    // end the line before).
    let back_space = |mut i: usize| -> Option<usize> {
        while i > 0 && (is_space(bytes[i - 1]) || bytes[i - 1] >= 0x80) {
            if matches!(bytes[i - 1], b'\n' | b'\r') {
                return None;
            }
            i -= 1;
        }
        Some(i)
    };
    for c in callees {
        for start in memchr::memmem::find_iter(bytes, c.as_bytes()) {
            if !at_boundaries(bytes, start, start + c.len()) {
                continue;
            }
            let mut i = start;
            if i >= 2 && &bytes[i - 2..i] == b"r#" {
                i -= 2;
            }
            let Some(j) = back_space(i) else {
                return true;
            };
            i = j;
            if i >= 2 && &bytes[i - 2..i] == b"::" {
                i -= 2;
            } else if i >= 1 && bytes[i - 1] == b'.' {
                i -= 1;
            } else {
                // Not a path or method call (a free call cannot match an entry with
                // receivers), unless a comment or line break hides what is before.
                if i >= 1 && bytes[i - 1] == b'/' {
                    return true;
                }
                continue;
            }
            let Some(j) = back_space(i) else {
                return true;
            };
            i = j;
            if i == 0 || !is_ident_byte(bytes[i - 1]) {
                return true;
            }
            let end_ident = i;
            while i > 0 && is_ident_byte(bytes[i - 1]) {
                i -= 1;
            }
            if receivers
                .iter()
                .any(|r| r.as_bytes() == &bytes[i..end_ident])
            {
                return true;
            }
        }
    }
    false
}

/// The position of the first byte at or after `i` that is not Rust whitespace (any
/// non-ASCII byte counts as such) or inside a comment (block comments nest).
fn skip_trivia(bytes: &[u8], mut i: usize) -> usize {
    loop {
        while i < bytes.len() && (is_space(bytes[i]) || bytes[i] >= 0x80) {
            i += 1;
        }
        if bytes[i..].starts_with(b"//") {
            i = memchr::memchr(b'\n', &bytes[i..]).map_or(bytes.len(), |n| i + n);
        } else if bytes[i..].starts_with(b"/*") {
            i = crate::lang::rust::block_comment_end(bytes, i).unwrap_or(bytes.len());
        } else {
            return i;
        }
    }
}

/// A Java file's text with its unicode escapes decoded, as the Java frontend lowers it
/// ([`crate::lang::java::unicode_decoded`]); `None` for other languages or without an
/// escape. Every word the scans look for is then a substring of what the model holds.
fn java_decoded(language: Language, text: &str) -> Option<String> {
    if language != Language::Java || memchr::memmem::find(text.as_bytes(), b"\\u").is_none() {
        return None;
    }
    crate::lang::java::unicode_decoded(text)
}

/// True when `text` contains `idemlint` in any ASCII case: every suppression comment
/// (`// idemlint: allow(..)`) and annotation (`"idemlint:RULE"`) does. Such a file must be
/// parsed and checked whatever else it contains, since a suppression that suppresses
/// nothing is itself a finding (`unused-suppression`).
pub fn mentions_idemlint(text: &str) -> bool {
    static AC: std::sync::OnceLock<Option<AhoCorasick>> = std::sync::OnceLock::new();
    match AC.get_or_init(|| build_ac(&["idemlint".to_string()], true)) {
        Some(ac) => ac.is_match(text.as_bytes()),
        None => true,
    }
}

/// A token scan for names found by pass 1 (step 2 of the module docs).
pub struct NameScan {
    /// The words wanted alone (names, then declarations), then the words of the pairs.
    words: Vec<String>,
    /// `words[..alone]` are wanted alone.
    alone: usize,
    /// Per word: in a Rust file it counts only where a function of that name is declared
    /// ([`declared_after_fn`]).
    decl: Vec<bool>,
    /// Per word: the kinds of code ([`crate::index::caller_kind`] bits) in which any
    /// mention counts; elsewhere only a declaration does, as for `decl`
    /// ([`NameScan::with_reach`]).
    reach: Vec<u8>,
    /// Pairs of word indices wanted together.
    pairs: Vec<(usize, usize)>,
    ac: Option<AhoCorasick>,
    /// Languages whose every file matches (a synthetic callee is among the names).
    all_of: Vec<Language>,
    /// A declared word (index into `words`) wanted in a file that may declare a type named
    /// for a receiver ([`Demand::named_for`]).
    named_for: Vec<(usize, String)>,
    /// Per word, the hashes of its identifier tokens ([`for_each_token`]): every one is
    /// in the [`TokenSig`] of a file the word is found in.
    token_hashes: Vec<Vec<u64>>,
}

fn token_hashes_of(words: &[String]) -> Vec<Vec<u64>> {
    words
        .iter()
        .map(|w| {
            let mut hs = Vec::new();
            for_each_token(w.as_bytes(), |t| hs.push(token_hash(t)));
            hs
        })
        .collect()
}

/// True when the token at `start` may be the name of a Rust function declaration: `fn`
/// before it, across whitespace and `r#`; or a comment before it (`fn /* … */ name`, or a
/// line comment on an earlier line), which is taken as a yes.
fn declared_after_fn(bytes: &[u8], start: usize) -> bool {
    let mut i = start;
    if i >= 2 && &bytes[i - 2..i] == b"r#" {
        i -= 2;
    }
    let mut newline = false;
    // Rust whitespace includes U+000B and non-ASCII Pattern_White_Space (U+0085, U+200E,
    // U+2028, ...): any non-ASCII byte is skipped as if it were one (a yes is safe).
    while i > 0 && (is_space(bytes[i - 1]) || bytes[i - 1] >= 0x80) {
        newline |= bytes[i - 1] == b'\n';
        i -= 1;
    }
    if i >= 2 && &bytes[i - 2..i] == b"fn" && (i == 2 || !is_ident_byte(bytes[i - 3])) {
        return true;
    }
    if i > 0 && bytes[i - 1] == b'/' {
        return true;
    }
    if newline {
        let line_start = memchr::memrchr(b'\n', &bytes[..i]).map_or(0, |n| n + 1);
        return memchr::memmem::find(&bytes[line_start..i], b"//").is_some();
    }
    false
}

/// ASCII whitespace as the languages' lexers read it: `is_ascii_whitespace` and the
/// vertical tab (U+000B), which it leaves out.
fn is_space(b: u8) -> bool {
    b.is_ascii_whitespace() || b == 0x0b
}

/// True when the token at `start..end` of a Java or Kotlin file may be the name of a
/// declaration (a method, a Kotlin function or property, a class whose constructor it
/// names). Conservative: anything unclear is a yes, so only a token that is surely a use
/// is a no (after `.` outside a Kotlin extension's header, after `=`, `(`, `,`, `!`, an
/// operator, or a keyword such as `return` or `new`, or not followed by `(`).
/// `text_block` caches whether `bytes` holds a text block (`"""`) across the tokens of
/// one text (a fresh `OnceCell` per text). In a Kotlin file (`kotlin`), a name is declared
/// only after a keyword (`fun`, `val`, `class`, ..), type parameters (`fun <T> name`) or a
/// receiver (`fun Recv.name`): a Java-style `Type name(` is a use there
/// (`assertThat(x).isFalse` then `assertThat(y)` on the next line).
fn declared_jvm(
    bytes: &[u8],
    start: usize,
    end: usize,
    text_block: &std::cell::OnceCell<bool>,
    kotlin: bool,
) -> bool {
    // Block comments right before the token (a Javadoc above `String getName();`) are no
    // context: what comes before them is. A few at most, then unclear.
    let mut start = start;
    for _ in 0..8 {
        let mut i = start;
        while i > 0 && is_space(bytes[i - 1]) {
            i -= 1;
        }
        if !(i >= 2 && bytes[i - 1] == b'/' && bytes[i - 2] == b'*') {
            break;
        }
        match block_comment_start(bytes, i - 2, text_block) {
            Some(p) => start = p,
            None => return true,
        }
    }
    declared_jvm_after(bytes, start, end, text_block, kotlin)
}

/// Where the block comment whose `*/` starts at `close` begins: the nearest `/*` before
/// it, when that is surely the comment's start. `None` (unclear) when the comment's text
/// holds another `*/` (a nested Kotlin comment), when an earlier `/*` is not closed before
/// it (a Java comment holding `/*`), when the line before the `/*` holds a line comment, a
/// quote or a backtick (the `/*` may be inside a comment or a literal), or
/// when the file has a text block (`"""`, which may hold `/*` and `*/` on lines of their
/// own).
fn block_comment_start(
    bytes: &[u8],
    close: usize,
    text_block: &std::cell::OnceCell<bool>,
) -> Option<usize> {
    let p = memchr::memmem::rfind(&bytes[..close], b"/*")?;
    if memchr::memmem::find(&bytes[p + 2..close], b"*/").is_some()
        || text_block_of(bytes, text_block)
    {
        return None;
    }
    let line_start = memchr::memrchr(b'\n', &bytes[..p]).map_or(0, |n| n + 1);
    let prefix = &bytes[line_start..p];
    // A `/*` before it with no `*/` after that may be where the comment starts (a Java
    // comment does not nest: `/* ( /* */`, on one line or several).
    if let Some(open) = memchr::memmem::rfind(&bytes[..p], b"/*")
        && memchr::memmem::rfind(&bytes[..p], b"*/").is_none_or(|c| c < open)
    {
        return None;
    }
    if memchr::memmem::find(prefix, b"//").is_some()
        || prefix.iter().any(|b| matches!(b, b'"' | b'\'' | b'`'))
    {
        return None;
    }
    Some(p)
}

/// Whether the file `bytes` holds a text block or raw string (`"""`), whose lines may hold
/// anything; computed once per file in `cell`.
fn text_block_of(bytes: &[u8], cell: &std::cell::OnceCell<bool>) -> bool {
    *cell.get_or_init(|| memchr::memmem::find(bytes, b"\"\"\"").is_some())
}

/// Whether the Java or Kotlin `line` (without its line break) may end in a line comment:
/// it holds `//` outside the string literals a scan from its start finds. Conservative:
/// yes whenever the line may not start outside a literal or comment (the file has a
/// text block, `text_block`), or holds what that scan does not follow: a block comment's
/// delimiter, a character literal's quote (`'"'`), a Kotlin template (`"${"//"}"`) or
/// backticked name (`` `q"q` ``), a CR, or a literal left open.
fn may_hold_line_comment(line: &[u8], text_block: bool) -> bool {
    if memchr::memmem::find(line, b"//").is_none() {
        return false;
    }
    if text_block
        || memchr::memmem::find(line, b"/*").is_some()
        || memchr::memmem::find(line, b"*/").is_some()
        || memchr::memmem::find(line, b"${").is_some()
        || line.iter().any(|b| matches!(b, b'\'' | b'`' | b'\r'))
    {
        return true;
    }
    let mut in_string = false;
    let mut k = 0;
    while k < line.len() {
        match (in_string, line[k]) {
            (true, b'\\') => k += 1,
            (_, b'"') => in_string = !in_string,
            (false, b'/') if line.get(k + 1) == Some(&b'/') => return true,
            _ => {}
        }
        k += 1;
    }
    in_string
}

/// [`declared_jvm`] once the block comments before the token are skipped.
fn declared_jvm_after(
    bytes: &[u8],
    start: usize,
    end: usize,
    text_block: &std::cell::OnceCell<bool>,
    kotlin: bool,
) -> bool {
    // The word before, across whitespace and across whole lines that hold only a line
    // comment (`// known endpoint` above `assertThat(`): such a line is no context. Only
    // a line that surely is one comment is skipped: one holding `*/` or `"""` may end
    // a block comment or a text block and go on with code (`// old */ static String`),
    // and a lone CR ends a Java line inside it (JLS 3.4). A line with code before its
    // comment stays unclear (below).
    let mut i = start;
    loop {
        while i > 0 && is_space(bytes[i - 1]) {
            i -= 1;
        }
        if !bytes[i..start].contains(&b'\n') {
            break;
        }
        let line_start = memchr::memrchr(b'\n', &bytes[..i]).map_or(0, |n| n + 1);
        let line = bytes[line_start..i].trim_ascii_start();
        if !line.starts_with(b"//")
            || memchr::memmem::find(line, b"*/").is_some()
            || memchr::memmem::find(line, b"\"\"\"").is_some()
            || line.contains(&b'\r')
        {
            break;
        }
        i = line_start;
    }
    let before = if i > 0 { bytes[i - 1] } else { b'\n' };
    let mut w = i;
    while w > 0 && is_ident_byte(bytes[w - 1]) {
        w -= 1;
    }
    let word = &bytes[w..i];
    const DECLARING: &[&[u8]] = &[
        b"fun",
        b"val",
        b"var",
        b"class",
        b"object",
        b"interface",
        b"record",
        b"enum",
        b"typealias",
    ];
    if DECLARING.contains(&word) {
        return true;
    }
    // A line comment ends the line before: what it ends with says nothing (`static
    // String // a key *` then `mint() {`), so unclear. A `//` inside a string literal
    // (`.isEqualTo("https://example.com")`) is none.
    if bytes[i..start].contains(&b'\n') {
        let line_start = memchr::memrchr(b'\n', &bytes[..i]).map_or(0, |n| n + 1);
        if may_hold_line_comment(&bytes[line_start..i], text_block_of(bytes, text_block)) {
            return true;
        }
    }
    match before {
        // Backticks, a comment's end, or the start of the text: unclear.
        b'`' | b'/' | b'\n' => return true,
        // A block comment's inner line (` * text`), or an operand of `*` (times, a
        // Kotlin spread): never a declaration's name.
        b'*' => return false,
        // A lambda's arrow (`forEach { (a, b) ->` then `check(a)`): a body starts.
        b'>' if i >= 2 && bytes[i - 2] == b'-' => return false,
        // `fun Recv.name`, `val Recv.name`: a Kotlin extension's header, whose receiver
        // type may span lines and hold generics (`fun<T>\n  List<T>.name`).
        b'.' => return extension_header_before(bytes, i - 1),
        _ => {}
    }
    // `Type name(`, `List<T> name(`, `String[] name(`: a type before, `(` after. Java
    // and Kotlin identifiers may hold `$` and any Unicode letter (UTF-8 bytes >= 0x80).
    // Kotlin declares no name after a type: only `fun <T> name` is left of the forms.
    // A character that is not ASCII is unclear (tree-sitter-kotlin reads a name after
    // `fun <T>` and a no-break space as the function's).
    let typed_before = if kotlin {
        before == b'>' || before >= 0x80
    } else {
        is_ident_byte(before) || before >= 0x80 || matches!(before, b'$' | b'>' | b']' | b'?')
    };
    const USES: &[&[u8]] = &[
        b"return", b"new", b"throw", b"else", b"case", b"yield", b"assert", b"in", b"is", b"as",
        b"if", b"when", b"while", b"do", b"try", b"not", b"and", b"or", b"to",
    ];
    if !typed_before || (!word.is_empty() && USES.contains(&word)) {
        return false;
    }
    let mut j = end;
    while j < bytes.len() && is_space(bytes[j]) {
        j += 1;
    }
    j >= bytes.len() || bytes[j] >= 0x80 || matches!(bytes[j], b'(' | b'/')
}

/// True when the `.` at `dot` may end a Kotlin extension's receiver: going back from it
/// within 1 KiB there is the token `fun`, `val` or `var`, before any `;`, `{`, `}` or `=`
/// outside parentheses, brackets and string literals (a receiver may carry annotations
/// with arguments, `fun @receiver:A(v = 1) String.name`, or be parenthesised) and
/// outside a line comment. Conservative: a use (`x = a.name`, `{ a.name`) is stopped by
/// its `=` or brace; a header always reaches its keyword; anything unclear (a block
/// comment, which may nest; a literal with an escape) is a yes.
fn extension_header_before(bytes: &[u8], dot: usize) -> bool {
    // An import or package directive names no declaration.
    let line_start = memchr::memrchr(b'\n', &bytes[..dot]).map_or(0, |n| n + 1);
    let line = bytes[line_start..dot].trim_ascii_start();
    if line.starts_with(b"import") || line.starts_with(b"package") {
        return false;
    }
    let start = dot.saturating_sub(1024);
    let mut depth = 0usize;
    let mut j = dot;
    while j > start {
        let b = bytes[j - 1];
        match b {
            // The end of a block comment (they nest in Kotlin): unclear, so a yes.
            b'/' if j >= 2 && bytes[j - 2] == b'*' => return true,
            // A line ends: a line comment on the line before is skipped.
            b'\n' => {
                let line_start = memchr::memrchr(b'\n', &bytes[..j - 1]).map_or(0, |n| n + 1);
                if let Some(k) = memchr::memmem::find(&bytes[line_start..j - 1], b"//") {
                    j = line_start + k;
                    continue;
                }
            }
            // A quote: skip the literal (or backticked name) to its opening quote on the
            // line; none there (a raw string across lines) is unclear, so a yes.
            b'"' | b'\'' | b'`' => {
                let line_start = memchr::memrchr(b'\n', &bytes[..j - 1]).map_or(0, |n| n + 1);
                match memchr::memrchr(b, &bytes[line_start.max(start)..j - 1]) {
                    // An escape inside may pair the quotes wrongly: unclear, so a yes.
                    Some(k) if !bytes[line_start.max(start) + k..j].contains(&b'\\') => {
                        j = line_start.max(start) + k
                    }
                    _ => return true,
                }
                continue;
            }
            b')' | b']' => depth += 1,
            b'(' | b'[' => depth = depth.saturating_sub(1),
            b';' | b'{' | b'}' | b'=' if depth == 0 => return false,
            _ => {}
        }
        if j >= 3 + start
            && matches!(&bytes[j - 3..j], b"fun" | b"val" | b"var")
            && (j == 3 || !is_ident_byte(bytes[j - 4]))
            && (j >= bytes.len() || !is_ident_byte(bytes[j]))
        {
            return true;
        }
        j -= 1;
    }
    // Out of reach: unclear, so a yes.
    start > 0
}

impl NameScan {
    /// Compiles `names`; empty and synthetic names make every file of their language match.
    pub fn new(names: &BTreeSet<String>) -> NameScan {
        NameScan::of(names, &BTreeSet::new(), &BTreeSet::new())
    }

    /// Compiles a [`Demand`]'s parts: `names` (mentions), `decls` (declarations, see
    /// [`Demand::decls`]) and `pairs` (both in one file; the first a declaration).
    pub fn of(
        names: &BTreeSet<String>,
        decls: &BTreeSet<String>,
        pairs: &BTreeSet<(String, String)>,
    ) -> NameScan {
        let mut all_of = Vec::new();
        for (n, l) in SYNTHETIC_CALLEES {
            if (names.contains(*n) || decls.contains(*n)) && !all_of.contains(l) {
                all_of.push(*l);
            }
        }
        let mut words: Vec<String> = names.iter().filter(|n| !n.is_empty()).cloned().collect();
        let mut decl = vec![false; words.len()];
        for d in decls.iter().filter(|n| !n.is_empty()) {
            words.push(d.clone());
            decl.push(true);
        }
        let alone = words.len();
        let mut index_of = |w: &str, is_decl: bool, words: &mut Vec<String>| -> usize {
            let found = (alone..words.len()).find(|&i| words[i] == w && decl[i] == is_decl);
            match found {
                Some(i) => i,
                None => {
                    words.push(w.to_string());
                    decl.push(is_decl);
                    words.len() - 1
                }
            }
        };
        let mut pair_ids = Vec::new();
        for (a, b) in pairs {
            if a.is_empty() || b.is_empty() {
                continue;
            }
            let x = index_of(a, true, &mut words);
            let y = index_of(b, false, &mut words);
            pair_ids.push((x, y));
        }
        NameScan {
            ac: build_ac(&words, false),
            token_hashes: token_hashes_of(&words),
            reach: vec![crate::index::CALLERS_ALL; words.len()],
            words,
            alone,
            decl,
            pairs: pair_ids,
            all_of,
            named_for: Vec::new(),
        }
    }

    /// Narrows the names wanted alone to [`Demand::reach`]: in a file whose kind of code
    /// ([`crate::index::caller_kind`]) is not among a name's bits, only a declaration of
    /// it counts, as for a name in `decls`.
    pub fn with_reach(mut self, reach: &BTreeMap<String, u8>) -> NameScan {
        for w in 0..self.alone {
            if !self.decl[w]
                && let Some(r) = reach.get(&self.words[w])
            {
                self.reach[w] = *r;
            }
        }
        self
    }

    /// Whether word `w`, found at byte range `m` (start, end) of `bytes`, a file of
    /// `language` whose kind of code is `kind`, counts: a mention of a name in reach, or
    /// a declaration.
    fn counts(
        &self,
        w: usize,
        language: Language,
        kind: u8,
        bytes: &[u8],
        m: (usize, usize),
        text_block: &std::cell::OnceCell<bool>,
    ) -> bool {
        if !self.decl[w] && self.reach[w] & kind != 0 {
            return true;
        }
        if language == Language::Rust {
            declared_after_fn(bytes, m.0)
        } else {
            declared_jvm(bytes, m.0, m.1, text_block, language == Language::Kotlin)
        }
    }

    /// Adds [`Demand::named_for`]: a declaration of the first name in a file with an
    /// identifier normalising to the second.
    pub fn with_named_for(mut self, named_for: &BTreeSet<(String, String)>) -> NameScan {
        let wanted: Vec<&(String, String)> = named_for
            .iter()
            .filter(|(c, n)| !c.is_empty() && !n.is_empty())
            .collect();
        if wanted.is_empty() {
            return self;
        }
        for (c, n) in wanted {
            let found =
                (self.alone..self.words.len()).find(|&i| self.words[i] == *c && self.decl[i]);
            let i = match found {
                Some(i) => i,
                None => {
                    self.words.push(c.clone());
                    self.decl.push(true);
                    self.reach.push(crate::index::CALLERS_ALL);
                    self.words.len() - 1
                }
            };
            self.named_for.push((i, n.clone()));
        }
        self.ac = build_ac(&self.words, false);
        self.token_hashes = token_hashes_of(&self.words);
        self
    }

    /// False when a file whose tokens are `sig` cannot match: [`NameScan::matching`] finds
    /// a word only at identifier boundaries, where each of the word's tokens is a token of
    /// the text. A whole language, a word with no such token, or a scan that could not be
    /// compiled is a yes.
    pub fn may_match(&self, language: Language, sig: &TokenSig) -> bool {
        if self.all_of.contains(&language) {
            return true;
        }
        if self.ac.is_none() {
            return !self.words.is_empty();
        }
        let has = |w: usize| self.token_hashes[w].iter().all(|h| sig.may_contain(*h));
        (0..self.alone).any(has)
            || self.pairs.iter().any(|(a, b)| has(*a) && has(*b))
            || self.named_for.iter().any(|(a, _)| has(*a))
    }

    /// True when there is nothing to look for.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.all_of.is_empty()
    }

    /// Whether `text` (a file of `language`) may declare a type whose name satisfies
    /// `spec` ([`Demand::named_for`]: `=n`, the name normalises to `n`; `~n`, either
    /// normalised name contains the other, as `crate::index::receiver_names_norm`).
    /// A method's type is the name a Java `class`, `interface`, `enum` or `record`, or a
    /// Kotlin `class`, `interface` or `object` declares (`Companion` for an unnamed
    /// companion), or the self type of a Rust `impl` (the tokens after its first `for`
    /// when it has one, before any `where`) or a Rust `trait`'s name. Conservative: a
    /// comment or backtick where a name is read, or a comment in an `impl` header, is a
    /// yes.
    fn may_declare_type_named(language: Language, text: &[u8], spec: &str) -> bool {
        let (exact, norm) = match spec.split_at(1) {
            ("=", n) => (true, n),
            (_, n) => (false, n),
        };
        let Ok(text) = std::str::from_utf8(text) else {
            return true;
        };
        let fits = |token: &str| -> bool {
            let t = crate::catalogue::normalize_name(token.strip_prefix("r#").unwrap_or(token));
            if exact {
                t == norm
            } else {
                crate::index::receiver_names_norm(norm, &t)
            }
        };
        if language == Language::Kotlin && fits("Companion") && text.contains("companion") {
            return true;
        }
        // Identifier tokens (Unicode letters and digits, `_`, `$`; Rust's `r#` kept on
        // the token), as byte ranges: any other character, Unicode whitespace and a
        // byte-order mark included, separates them.
        let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
        let mut all: Vec<(usize, usize)> = Vec::new();
        let mut start: Option<usize> = None;
        for (i, c) in text.char_indices() {
            match (ident(c), start) {
                (true, None) => start = Some(i),
                (false, Some(a)) => {
                    let raw = c == '#' && &text[a..i] == "r" && language == Language::Rust;
                    if !raw {
                        all.push((a, i));
                        start = None;
                    }
                }
                _ => {}
            }
        }
        if let Some(a) = start {
            all.push((a, text.len()));
        }
        let keywords: &[&str] = match language {
            Language::Rust => &["trait"],
            Language::Java => &["class", "interface", "enum", "record"],
            Language::Kotlin => &["class", "interface", "object"],
        };
        let bytes = text.as_bytes();
        for (k, &(a, b)) in all.iter().enumerate() {
            let word = &text[a..b];
            if keywords.contains(&word) {
                // The next token, with nothing but ASCII whitespace before it; a comment
                // or any other character there that is not ASCII is unclear.
                let Some(&(c, d)) = all.get(k + 1) else {
                    continue;
                };
                let gap = &text[b..c];
                // What comes first after the keyword: a comment, a backticked Kotlin name
                // (`` class `Foo Bar` ``) or a character that is not ASCII is unclear;
                // any other character (`companion object {`, `object : T`) means no name
                // follows the keyword (a `/` or backtick further on, in KDoc's `code`,
                // names no type).
                match gap.bytes().find(|b| !is_space(*b)) {
                    Some(b'/' | b'`') => return true,
                    Some(b) if !b.is_ascii() => return true,
                    Some(_) => continue,
                    None => {}
                }
                if fits(&text[c..d]) {
                    return true;
                }
            } else if language == Language::Rust && word == "impl" {
                // The header runs to the first `{` outside `<..>`, `(..)` and `[..]`
                // (a const generic's block is inside them); its self type is after the
                // first `for` outside them, if any, and before any `where`.
                let mut depth = 0i32;
                let mut end = bytes.len();
                let mut j = b;
                while j < bytes.len() {
                    match bytes[j] {
                        b'<' | b'(' | b'[' => depth += 1,
                        b'>' if j > 0 && matches!(bytes[j - 1], b'-' | b'=') => {}
                        b'>' | b')' | b']' => depth -= 1,
                        b'{' if depth <= 0 => {
                            end = j;
                            break;
                        }
                        _ => {}
                    }
                    j += 1;
                }
                let header = &text[b..end];
                if header.contains("//") || header.contains("/*") {
                    return true;
                }
                // Each header token with its depth inside `<..>`, `(..)` and `[..]`.
                let depth_at = |x: usize| -> i32 {
                    let mut d = 0;
                    for j in b..x {
                        match bytes[j] {
                            b'<' | b'(' | b'[' => d += 1,
                            b'>' if matches!(bytes[j - 1], b'-' | b'=') => {}
                            b'>' | b')' | b']' => d -= 1,
                            _ => {}
                        }
                    }
                    d
                };
                let hs: Vec<(usize, usize, i32)> = all[k + 1..]
                    .iter()
                    .take_while(|(x, _)| *x < end)
                    .map(|&(x, y)| (x, y, depth_at(x)))
                    .collect();
                let cut = hs
                    .iter()
                    .position(|&(x, y, d)| d <= 0 && &text[x..y] == "where")
                    .unwrap_or(hs.len());
                let hs = &hs[..cut];
                let from = hs
                    .iter()
                    .position(|&(x, y, d)| d <= 0 && &text[x..y] == "for")
                    .map_or(0, |f| f + 1);
                if hs[from..].iter().any(|&(x, y, _)| fits(&text[x..y])) {
                    return true;
                }
            }
        }
        false
    }

    /// The words wanted alone that `text` holds as a token (a declared one, for a
    /// declaration), as indices into the names and declarations [`NameScan::of`] was
    /// given (names first, in order). For sampling declarations ([`Demand::sampled`]).
    pub fn all_matching(&self, language: Language, kind: u8, text: &str) -> Vec<usize> {
        let decoded = java_decoded(language, text);
        let text = decoded.as_deref().unwrap_or(text);
        let bytes = text.as_bytes();
        let Some(ac) = &self.ac else {
            return Vec::new();
        };
        let mut out: Vec<usize> = Vec::new();
        let text_block = std::cell::OnceCell::new();
        for m in ac.find_overlapping_iter(bytes) {
            let w = m.pattern().as_usize();
            if w >= self.alone || out.contains(&w) || !at_boundaries(bytes, m.start(), m.end()) {
                continue;
            }
            if !self.counts(w, language, kind, bytes, (m.start(), m.end()), &text_block) {
                continue;
            }
            out.push(w);
        }
        out
    }

    /// True when `text` contains one of the names as a token (a declared one, for a
    /// declaration in a Rust file), or both words of a pair.
    pub fn matches(&self, language: Language, kind: u8, text: &str) -> bool {
        self.matching(language, kind, text).is_some()
    }

    /// What [`NameScan::matches`] found: the word (or `"a+b"` for a pair; `"*"` for a
    /// whole language), or `None`. For tracing the demand (`IDEMLINT_TRACE_DEMAND`).
    pub fn matching(&self, language: Language, kind: u8, text: &str) -> Option<String> {
        if self.all_of.contains(&language) {
            return Some("*".into());
        }
        let decoded = java_decoded(language, text);
        let text = decoded.as_deref().unwrap_or(text);
        let bytes = text.as_bytes();
        let Some(ac) = &self.ac else {
            return (!self.words.is_empty()).then(|| "*".into());
        };
        let mut hit = vec![false; self.words.len()];
        let text_block = std::cell::OnceCell::new();
        for m in ac.find_overlapping_iter(bytes) {
            if !at_boundaries(bytes, m.start(), m.end()) {
                continue;
            }
            let w = m.pattern().as_usize();
            if !self.counts(w, language, kind, bytes, (m.start(), m.end()), &text_block) {
                continue;
            }
            if w < self.alone {
                return Some(self.words[w].clone());
            }
            hit[w] = true;
        }
        if let Some((a, b)) = self.pairs.iter().find(|(a, b)| hit[*a] && hit[*b]) {
            return Some(format!("{}+{}", self.words[*a], self.words[*b]));
        }
        self.named_for
            .iter()
            .find(|(a, n)| hit[*a] && Self::may_declare_type_named(language, bytes, n))
            .map(|(a, n)| format!("{}+type{n}", self.words[*a]))
    }
}

/// A lambda argument of a call: its 0-based position and, for a Kotlin named argument,
/// its name ([`crate::index::lambda_param`]).
pub type LambdaArg = (usize, Option<Name>);

/// What pass 1 keeps of a parsed file besides its [`FileSummary`]: the names later rounds
/// may look for, and the facts [`needs_check`] decides on. Small: names, not models.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct FileDemand {
    /// Interceptor types declared here whose registrations matter if this file can have a
    /// finding.
    pub interceptor_types: ThinVec<String>,
    /// Apache Camel `Processor` types declared here (a `process` method of one parameter):
    /// the routes that run them and the boundaries that send to those routes matter if
    /// this file can have a finding ([`crate::index::CamelRoute`]).
    pub camel_processors: ThinVec<String>,
    /// Types registered here (whether they retry matters next to a demanded one).
    pub registered_types: ThinVec<String>,
    /// An interceptor boundary is here (the first `call.clone()` site may be quoted).
    pub interceptor: bool,
    /// The client libraries whose call-level retry evidence an interceptor here reads
    /// ([`crate::index::HTTP_OKHTTP`] for OkHttp application interceptors,
    /// [`crate::index::HTTP_SPRING`] for Spring `ClientHttpRequestInterceptor`s,
    /// [`crate::index::HTTP_WEBCLIENT`] for WebClient `ExchangeFilterFunction`s,
    /// [`crate::index::HTTP_FEIGN`] for Feign `RequestInterceptor`s).
    pub evidence_needed: u8,
    /// The file has a catalogue sink.
    pub has_sinks: bool,
    /// `(type, field)` of every field with a declared default (Kotlin primary-constructor
    /// defaults, Java field initialisers): a sink when a web handler sends that field of
    /// a request-bound object as a key ([`crate::index::BoundKeyField`]).
    pub default_fields: ThinVec<(Name, Name)>,
    /// Of those, the ones whose default's flow passes through calls, each with those calls
    /// (as [`FileDemand::asks`] holds them): when a web handler sends the field as a key,
    /// a fresh helper among them is an origin (`requestRef = Seeds.now()`), so its
    /// declarations are wanted and the file is checked.
    #[serde(default)]
    pub default_asks: ThinVec<(String, String, Vec<SharedCall>)>,
    /// Parameter types of web handlers whose fields reach a key here: their declarations
    /// are wanted ([`crate::index::BoundKeyField`]).
    pub bound_types: ThinVec<String>,
    /// Writes under a name another file may declare a key
    /// ([`crate::classify::NamedWrite`]): name, qualifier and kind.
    pub named_writes: ThinVec<(String, Option<String>, crate::classify::SlotKind)>,
    /// The file has a catalogue source, or a retry loop / `repeat` whose counter can be one,
    /// or a catalogue retry lambda with parameters.
    pub has_sources: bool,
    /// Of those, the origins [`needs_check`] does not narrow by the flows of pass 1 (attempt
    /// counters, retry lambdas' parameters, a SpEL key expression with a clock): taken as
    /// reaching a sink whenever the file has one.
    pub origin_without_flow: bool,
    /// Callees of calls given a lambda with parameters: when one is an inferred retry
    /// combinator, the parameters are passed in per attempt (an origin).
    pub param_lambda_callees: ThinVec<Name>,
    /// The file calls a library function that mints its own key (`[[minting_call]]`).
    pub library_mints: bool,
    /// The file has an attempt boundary.
    pub has_boundary: bool,
    /// Every callee name, sorted and deduplicated.
    pub callees: ThinVec<Name>,
    /// The file's display path: the asked calls are resolved from it.
    pub path: String,
    /// Calls whose result the value flows of this file's sinks pass through (the calls a
    /// key can come from), sorted and deduplicated: whether they return a fresh value
    /// decides findings here. Each is kept as [`ProjectIndex::candidates`] reads it (the
    /// receiver as [`resolution_receiver`] shortens it).
    pub asks: ThinVec<SharedCall>,
    /// Of `asks`, the calls of a key generator the catalogue knows by its name only (a
    /// `by_name` source, `idempotencyKeyGenerator.generate()`): pass 2 takes one for the
    /// project's own code when another file declares it
    /// ([`ProjectIndex::declared_for`]), so their declarations are wanted whether or not
    /// any of them is fresh (the fresh closure, [`FreshScope`], does not spare them).
    pub by_name_asks: ThinVec<SharedCall>,
    /// Per callee: the calls the flows of its arguments pass through. They
    /// matter when the callee has a key parameter (its arguments are then sinks). Sorted
    /// by callee, each callee once with its calls sorted, each once, as one interned list
    /// (the same calls in the arguments of the same callee recur across files: a
    /// logger's `info(.., x.getId())`).
    pub arg_asks: ThinVec<(Name, crate::index::SharedCalls)>,
    /// A flow query ran out of budget while `asks` was computed: every callee counts as
    /// asked.
    pub asks_everything: bool,
    /// The flow from some sink or named write reaches an origin of its own (a catalogue
    /// source, a time bucket, an attempt counter) with no helper's help. Pass 2's flows
    /// explore no further (a fresh helper only ends a path), so a catalogue source that
    /// reaches no sink here reaches none in pass 2 either.
    pub sink_origin: bool,
    /// Callees with an argument (positional or named) whose flow reaches such an origin, sorted: a
    /// sink when the callee has a key parameter.
    pub origin_arg_callees: ThinVec<Name>,
    /// Callees that may be project retry combinators: calls given a lambda that no
    /// catalogue entry classified, and calls a function passes one of its parameters to
    /// (wrappers), minus [`crate::index::NOT_COMBINATORS`]. Their declarations decide
    /// whether the lambda is a retry scope.
    pub combinator_callees: ThinVec<Name>,
    /// Of those, the calls given such a lambda (or a local bound to one), as
    /// [`ProjectIndex::candidates`] reads them, each with those arguments (sorted by
    /// position): pass 2 asks [`ProjectIndex::retried_arg`] about exactly these.
    pub lambda_calls: ThinVec<(CallRef, Vec<LambdaArg>)>,
    /// Of those, the callees of `super` calls in scheduled methods (template methods).
    pub super_callees: ThinVec<Name>,
    /// The supertypes of the JVM types declared here, sorted: a type declared in another
    /// file with an annotation that makes its implementing methods boundaries
    /// ([`crate::index::TypeBoundary`]) makes this file's implementing methods boundaries.
    #[serde(default)]
    pub implemented: ThinVec<Name>,
}

/// A call's record as [`ProjectIndex::candidates`] resolves it: callee, argument count,
/// the receiver (what resolution reads of it, [`resolution_receiver`]) and the receiver's
/// declared type. The demand's flows record the calls they ask about with it.
fn resolution_ref(call: &Call) -> CallRef {
    CallRef {
        callee: Name::from(call.callee.as_str()),
        arity: call.args.len(),
        receiver: resolution_receiver(call).map(Name::from),
        receiver_type: call.receiver_type.as_deref().map(Name::from),
    }
}

/// The part of a call's receiver text that [`ProjectIndex::candidates_of`] reads: `this`,
/// `self`, `super` and `Self` as they are, otherwise its last segment (after a `.` when
/// that segment is itself one of those words, as in `Outer.this`, so that it still reads
/// as a receiver naming something). Small, since every file's demand keeps its asks.
fn resolution_receiver(call: &Call) -> Option<String> {
    let r = crate::catalogue::receiver_text(call)?;
    let t = r.trim();
    let special = |x: &str| matches!(x, "this" | "self" | "super" | "Self");
    if special(t) {
        return Some(t.to_string());
    }
    let last = crate::catalogue::last_segment(t);
    Some(if special(last) {
        format!(".{last}")
    } else if t.ends_with(')') {
        // A call (`fastRunner()`): pass 2 resolves it by the getter's name alone
        // (`ProjectIndex::candidates_of`), and so must the prefilter.
        format!("{last}()")
    } else {
        last.to_string()
    })
}

/// Types of a JVM file that implement Camel's `Processor` (see
/// [`FileDemand::camel_processors`]).
fn camel_processors(model: &FileModel) -> ThinVec<String> {
    sorted(
        crate::index::camel_process_methods(model)
            .into_iter()
            .map(|(_, t)| t.name.clone())
            .collect(),
    )
}

/// [`FileDemand::implemented`]: the supertypes of the file's JVM types, when an
/// `on_interface` boundary entry may apply to its language (empty otherwise).
fn implemented(model: &FileModel, cat: &Catalogue) -> ThinVec<Name> {
    let lang = model.language;
    let applies = lang != Language::Rust
        && cat.boundaries.iter().any(|e| {
            e.on_interface
                && (e.call.langs.is_empty() || e.call.langs.iter().any(|l| l == lang.name()))
        });
    if !applies {
        return ThinVec::new();
    }
    sorted(
        model
            .scopes
            .iter()
            .filter_map(|s| match &s.kind {
                ScopeKind::Type(t) | ScopeKind::Object(t) => Some(&t.supertypes),
                _ => None,
            })
            .flatten()
            .filter(|t| !t.is_empty())
            .map(|t| Name::from(t.as_str()))
            .collect(),
    )
}

fn sorted<T: Ord>(mut v: Vec<T>) -> ThinVec<T> {
    v.sort();
    v.dedup();
    v.into()
}

/// Whether one of `values` has an origin, the calls the flows from them ask about recorded
/// in `rec`: in one walk ([`crate::flow::Flow::any_origin`]), or, when that runs out of
/// budget, one walk per value (each with its own budget, as a single query has).
fn any_origin_of(
    flow: &crate::flow::Flow,
    values: &[crate::model::ValueId],
    rec: &crate::flow::Recorder,
    refs: &crate::flow::CallRefCache,
) -> bool {
    let together = crate::flow::Recorder::cached_with(refs, resolution_ref);
    match flow.any_origin(values, &together) {
        Some(found) => {
            rec.asked.borrow_mut().extend(together.asked.into_inner());
            found
        }
        None => {
            let mut found = false;
            for v in values {
                found |= !flow.origins(*v, rec).is_empty();
            }
            found
        }
    }
}

impl FileDemand {
    /// [`FileDemand::arg_asks`]: each callee once, with the calls its arguments ask about.
    pub fn arg_asks_by_callee(&self) -> impl Iterator<Item = (Name, &[SharedCall])> {
        self.arg_asks.iter().map(|(c, calls)| (*c, &**calls))
    }

    /// Extracts the demand of one analysed file.
    pub fn of(
        path: &str,
        model: &FileModel,
        facts: &FileFacts,
        summary: &FileSummary,
        cat: &Catalogue,
    ) -> FileDemand {
        let mut interceptor_types: Vec<String> = Vec::new();
        let mut interceptor = false;
        let mut evidence_needed = 0;
        for b in facts.boundaries.iter().flatten() {
            if b.kind == crate::catalogue::BoundaryKind::Interceptor {
                interceptor = true;
                evidence_needed |= match b.flavor.as_str() {
                    "okhttp-application" | "okhttp-class" => crate::index::HTTP_OKHTTP,
                    // A Feign interceptor that mints only when the template has no key is per
                    // attempt only under a call-level retry of a Feign client.
                    "feign" => crate::index::HTTP_FEIGN,
                    "spring-client-interceptor" => crate::index::HTTP_SPRING,
                    "webclient-filter" => crate::index::HTTP_WEBCLIENT,
                    _ => 0,
                };
                if let Some(t) = &b.type_name
                    && !t.is_empty()
                {
                    interceptor_types.push(t.clone());
                }
            }
        }
        let registered_types = summary
            .registrations
            .iter()
            .filter_map(|r| r.type_name.clone())
            .collect();
        let mut combinator_callees: Vec<Name> = Vec::new();
        // Inherited methods a scheduled method calls (`super.run()`): their declarations
        // decide which overrides run per tick (`index::apply_template_hooks`).
        for (i, b) in facts.boundaries.iter().enumerate() {
            if b.as_ref()
                .is_some_and(|b| b.kind == crate::catalogue::BoundaryKind::Scheduler)
            {
                for call in model.calls.iter().filter(|c| model.is_within(c.scope, i)) {
                    if crate::catalogue::receiver_text(call).as_deref() == Some("super") {
                        combinator_callees.push(Name::from(call.callee.as_str()));
                    }
                }
            }
        }
        let super_callees = sorted(combinator_callees.clone());
        for f in &summary.functions {
            for pp in f.passes_params.iter().filter(|pp| pp.callable) {
                combinator_callees.push(pp.call.callee);
            }
        }
        // The lambdas `index::apply_inferred_boundaries` may mark: given to the call, or a
        // local bound to one, not classified already.
        // Only a name some local is bound to a lambda (or object) under can be one
        // (`lambda_bound_to` reads the latest such binding): found once, in linear time.
        let lambda_spans: foldhash::HashSet<crate::model::Span> = model
            .scopes
            .iter()
            .filter(|s| {
                matches!(
                    s.kind,
                    crate::model::ScopeKind::Lambda(_) | crate::model::ScopeKind::Object(_)
                )
            })
            .map(|s| s.span)
            .collect();
        let lambda_names: foldhash::HashSet<&str> = model
            .bindings
            .iter()
            .filter(|b| {
                b.kind == crate::model::BindingKind::Local
                    && b.value
                        .is_some_and(|v| lambda_spans.contains(&model.values[v].span))
            })
            .map(|b| b.name.as_str())
            .collect();
        let mut lambda_calls: BTreeMap<CallRef, BTreeSet<LambdaArg>> = BTreeMap::new();
        for call in &model.calls {
            let lambda_args: BTreeSet<LambdaArg> = call
                .args
                .iter()
                .enumerate()
                .filter(|(_, a)| {
                    let lambda = a.lambda.or_else(|| {
                        model.values[a.value]
                            .ident
                            .as_deref()
                            .filter(|n| lambda_names.contains(n))
                            .and_then(|n| crate::classify::lambda_bound_to(model, n, a.span.start))
                    });
                    // Unclassified, or found by the helper's name alone: the declaration may
                    // refine it (see `apply_inferred_boundaries`).
                    lambda.is_some_and(|l| {
                        facts.boundaries[l].as_ref().is_none_or(|b| {
                            b.kind == crate::catalogue::BoundaryKind::Retry
                                && cat
                                    .boundaries
                                    .iter()
                                    .any(|e| e.id == b.entry && e.matches_by_name_only())
                        })
                    })
                })
                .map(|(i, a)| (i, a.name.as_deref().map(Name::from)))
                .collect();
            if !lambda_args.is_empty()
                && !crate::index::NOT_COMBINATORS.contains(&call.callee.as_str())
            {
                combinator_callees.push(Name::from(call.callee.as_str()));
                lambda_calls
                    .entry(CallRef {
                        callee: Name::from(call.callee.as_str()),
                        arity: call.args.len(),
                        receiver: resolution_receiver(call).map(Name::from),
                        receiver_type: call.receiver_type.as_deref().map(Name::from),
                    })
                    .or_default()
                    .extend(lambda_args);
            }
        }
        // The calls the flows from each sink (and from each argument, a sink
        // when its callee has a key parameter) ask about. With no answer from the oracle
        // a flow explores at least as far as with any answers (a fresh call ends a path),
        // so these cover what pass 2 asks, unless the step budget ran out.
        // Time buckets are kept as origins (as pass 2 keeps them): an origin found here is
        // one pass 2 can find (`sink_origin`, `origin_arg_callees`).
        let flow = crate::flow::Flow::new(model, cat).keeping_windows();
        let refs = crate::flow::CallRefCache::default();
        let was_exhausted = crate::flow::budget_exhausted();
        crate::flow::reset_budget();
        let rec = crate::flow::Recorder::cached_with(&refs, resolution_ref);
        // A named write is a sink once the index knows its name. All in one walk.
        let sink_values: Vec<crate::model::ValueId> = facts
            .sinks
            .iter()
            .map(|s| s.value)
            .chain(facts.named_writes.iter().map(|w| w.value))
            .collect();
        let sink_origin = any_origin_of(&flow, &sink_values, &rec, &refs);
        let mut asked: BTreeSet<CallRef> = rec.asked.into_inner().into_iter().collect();
        // A key generator recognised by its name stops being a source in pass 2 when the
        // project declares it in another file (`crate::classify::classify_in_project`):
        // its declarations are wanted, as a helper's are.
        let by_name: foldhash::HashSet<crate::model::Span> = model
            .sources
            .iter()
            .filter(|s| s.by_name)
            .map(|s| s.span)
            .collect();
        let by_name_asks: BTreeSet<CallRef> = model
            .calls
            .iter()
            .filter(|c| by_name.contains(&c.span))
            .map(resolution_ref)
            .collect();
        asked.extend(by_name_asks.iter().cloned());
        let asks: Vec<SharedCall> = asked.iter().map(SharedCall::new).collect();
        let mut by_callee: std::collections::BTreeMap<&str, BTreeSet<CallRef>> = Default::default();
        let mut origin_arg_callees: BTreeSet<&str> = BTreeSet::new();
        // Both are kept per callee name, so the arguments of every call of one name are
        // walked together ([`crate::flow::Flow::any_origin`]): a value or a lambda body
        // several of them reach is walked once, not once per argument.
        let mut walked: std::collections::BTreeMap<&str, Vec<crate::model::ValueId>> =
            Default::default();
        for call in &model.calls {
            // Named arguments too: a Kotlin `charge(token = k)` binds a key parameter by
            // name ([`crate::index::ProjectIndex::key_args`]).
            for arg in &call.args {
                let v = &model.values[arg.value];
                if v.atoms
                    .iter()
                    .any(|a| !matches!(a, crate::model::Atom::Source(_)))
                {
                    walked
                        .entry(call.callee.as_str())
                        .or_default()
                        .push(arg.value);
                } else if !v.atoms.is_empty() {
                    // Only catalogue sources: each is an origin (no flow needed).
                    origin_arg_callees.insert(call.callee.as_str());
                }
            }
        }
        for (callee, mut values) in walked {
            values.sort_unstable();
            values.dedup();
            let rec = crate::flow::Recorder::cached_with(&refs, resolution_ref);
            if any_origin_of(&flow, &values, &rec, &refs) {
                origin_arg_callees.insert(callee);
            }
            let asked = rec.asked.into_inner();
            if !asked.is_empty() {
                by_callee.entry(callee).or_default().extend(asked);
            }
        }
        // Sized exactly: every parsed file's demand is held until pass 2.
        let mut arg_asks = ThinVec::with_capacity(by_callee.len());
        for (c, a) in by_callee {
            let calls: crate::index::SharedCalls =
                a.into_iter().map(|r| SharedCall::new(&r)).collect();
            arg_asks.push((Name::from(c), calls));
        }
        // Field defaults: a sink once the index knows a web handler sends the field.
        let default_asks: Vec<(String, String, Vec<SharedCall>)> = field_defaults(model)
            .filter_map(|(t, f, v)| {
                let rec = crate::flow::Recorder::cached_with(&refs, resolution_ref);
                flow.origins(v, &rec);
                let asked: BTreeSet<CallRef> = rec.asked.into_inner().into_iter().collect();
                (!asked.is_empty()).then(|| {
                    (
                        t.clone(),
                        f.clone(),
                        asked.iter().map(SharedCall::new).collect(),
                    )
                })
            })
            .collect();
        let asks_everything = crate::flow::budget_exhausted();
        // `@Idempotent(keyExpression = ".. T(java.time.LocalDateTime).now()")`.
        let spel_clock_key = crate::rules::time_in_key::has_spel_clock_key(model);
        // An attempt counter (`for attempt in 1..=3` in a retry loop, `repeat(n) {
        // attempt -> .. }`) is an origin without a catalogue source.
        let origin_without_flow = spel_clock_key
            || model.scopes.iter().any(|s| match &s.kind {
                crate::model::ScopeKind::Loop(l) => l.is_retry(),
                _ => false,
            })
            || model.calls.iter().any(|c| c.callee == "repeat")
            // A parameter of a lambda a retry construct runs per attempt (known for
            // inferred combinators only once the index is built: see `needs_check`).
            || !crate::classify::attempt_lambdas(model, facts).is_empty();
        if was_exhausted {
            // Leave the thread's flag as pass 1 found it.
            crate::flow::mark_exhausted();
        }
        FileDemand {
            path: path.to_string(),
            asks: asks.into(),
            by_name_asks: by_name_asks.iter().map(SharedCall::new).collect(),
            arg_asks,
            asks_everything,
            sink_origin,
            origin_arg_callees: origin_arg_callees.into_iter().map(Name::from).collect(),
            combinator_callees: sorted(combinator_callees),
            lambda_calls: lambda_calls
                .into_iter()
                .map(|(c, args)| (c, args.into_iter().collect()))
                .collect(),
            super_callees,
            implemented: implemented(model, cat),
            interceptor_types: sorted(interceptor_types),
            camel_processors: camel_processors(model),
            registered_types: sorted(registered_types),
            interceptor,
            evidence_needed,
            has_sinks: !facts.sinks.is_empty() || spel_clock_key,
            default_fields: {
                let mut d: Vec<(Name, Name)> = field_defaults(model)
                    .map(|(t, f, _)| (Name::from(t.as_str()), Name::from(f.as_str())))
                    .collect();
                d.sort();
                d.dedup();
                d.into()
            },
            default_asks: default_asks.into(),
            bound_types: sorted(
                summary
                    .bound_key_fields
                    .iter()
                    .map(|b| b.type_name.clone())
                    .chain(
                        summary
                            .bound_arg_candidates
                            .iter()
                            .map(|c| c.type_name.to_string()),
                    )
                    .collect(),
            ),
            named_writes: {
                let mut w: Vec<_> = facts
                    .named_writes
                    .iter()
                    .map(|w| (w.name.clone(), w.qualifier.clone(), w.slot))
                    .collect();
                w.sort();
                w.dedup();
                w.into()
            },
            // An attempt counter (`for attempt in 1..=3` in a retry loop, `repeat(n) {
            // attempt -> .. }`) is an origin without a catalogue source.
            has_sources: !model.sources.is_empty() || origin_without_flow,
            origin_without_flow,
            param_lambda_callees: sorted(
                model
                    .scopes
                    .iter()
                    .filter_map(|s| match &s.kind {
                        crate::model::ScopeKind::Lambda(l) if !l.params.is_empty() => l
                            .owner_call
                            .map(|c| Name::from(model.calls[c].callee.as_str())),
                        _ => None,
                    })
                    .collect(),
            ),
            library_mints: !facts.library_mints.is_empty(),
            has_boundary: facts.boundaries.iter().any(Option::is_some)
                || !facts.reattempts.is_empty(),
            // Collected from a set, so the vector is as long as the distinct names (an
            // in-place collect from one `String` per call kept that capacity).
            callees: model
                .calls
                .iter()
                .map(|c| c.callee.as_str())
                .collect::<BTreeSet<&str>>()
                .into_iter()
                .map(Name::from)
                .collect(),
        }
    }

    /// A field here has a default that a web handler sends as a key
    /// ([`crate::index::BoundKeyField`]): a sink pass 1 could not see.
    fn bound_defaults(&self, index: &ProjectIndex) -> bool {
        !index.bound_key_fields.is_empty()
            && self
                .default_fields
                .iter()
                .any(|(t, f)| is_bound_default(index, t, f))
    }

    /// The calls the flows of such defaults pass through ([`FileDemand::default_asks`]).
    fn bound_default_asks<'a>(
        &'a self,
        index: &'a ProjectIndex,
    ) -> impl Iterator<Item = &'a CallRef> + 'a {
        self.default_asks
            .iter()
            .filter(move |(t, f, _)| {
                !index.bound_key_fields.is_empty() && is_bound_default(index, t, f)
            })
            .flat_map(|(_, _, asked)| asked.iter().map(|c| &**c))
    }

    /// A catalogue source (or another origin) here can reach a key: some flow from a sink,
    /// a named write or a positional argument of a function with a key parameter reaches
    /// it in pass 1 (whose flows explore at least as far as pass 2's), or it is an origin
    /// pass 1 does not narrow, or a field default is a sink, or a flow ran out of budget.
    fn sourced(&self, index: &ProjectIndex) -> bool {
        self.has_sources
            && (self.asks_everything
                || self.origin_without_flow
                || self.sink_origin
                || self
                    .origin_arg_callees
                    .iter()
                    .any(|c| index.has_key_params(c))
                || self.bound_defaults(index))
    }

    /// A sink here, or a call of a function with a key parameter: key flows can start here.
    fn keyed(&self, index: &ProjectIndex) -> bool {
        self.has_sinks
            || self.bound_defaults(index)
            || self.callees.iter().any(|c| index.has_key_params(c))
            || self.named_writes.iter().any(|(n, q, k)| {
                let jvm =
                    Language::from_path(std::path::Path::new(&self.path)) != Some(Language::Rust);
                index
                    .named_key(n, q.as_deref(), *k, jvm, &self.path)
                    .is_some()
            })
    }
}

/// `(type, field, default value)` of every field with a declared default: Kotlin
/// primary-constructor defaults, then Java/Kotlin field initialisers in a type's body.
fn field_defaults(
    model: &FileModel,
) -> impl Iterator<Item = (&String, &String, crate::model::ValueId)> + '_ {
    model
        .ctor_defaults
        .iter()
        .map(|c| (&c.type_name, &c.name, c.value))
        .chain(model.bindings.iter().filter_map(|b| {
            let v = b.value?;
            if b.kind != BindingKind::Field {
                return None;
            }
            match &model.scopes[b.scope].kind {
                ScopeKind::Type(t) => Some((&t.name, &b.name, v)),
                _ => None,
            }
        }))
}

/// Field `f` of type `t` (or the whole object) is sent as a key by a web handler.
fn is_bound_default(index: &ProjectIndex, t: &str, f: &str) -> bool {
    index.bound_key_field(t, f).is_some() || index.bound_key_field(t, "*").is_some()
}

/// What the files outside P are scanned for (step 2 of the module docs): names wanted as
/// tokens anywhere, and (callee, type) pairs wanted together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Demand {
    /// Wanted wherever they are mentioned (callers matter too).
    pub names: BTreeSet<String>,
    /// Wanted for their declarations only: in a Rust file, a function of that name is
    /// declared `fn NAME`; in a Java or Kotlin file, the name may be declared there
    /// ([`declared_jvm`], conservative). [`NameScan`] checks both.
    pub decls: BTreeSet<String>,
    /// A call through a receiver of a declared type resolves to declarations in that type
    /// or in a type that lists it as a supertype: such a file has both tokens.
    pub typed: BTreeSet<(String, String)>,
    /// A call whose candidates are the declarations in types named for its receiver, and
    /// only those ([`named_for_of`]): a file that declares the callee and may declare
    /// such a type ([`NameScan`]). The second string is `=n` (a receiver that is a call,
    /// `UUID.randomUUID().toString()`: a type whose normalised name is `n`,
    /// `crate::index::getter_names_type`) or `~n` (a named receiver: a type whose
    /// normalised name contains `n` or is contained in it,
    /// `crate::index::receiver_names_norm`).
    pub named_for: BTreeSet<(String, String)>,
    /// Some name was held back this round (see [`demanded_names`]): another round is
    /// needed once the names in `names` and `decls` are scanned for, even if that scan
    /// parses no file.
    pub deferred: bool,
    /// Followed by name for the fixpoint's unanimity only (a call a candidate returns):
    /// one declaration that can never be fresh settles the name ([`settled_of`]), so a
    /// few of its declarations are parsed first and more only while none settles it
    /// (`check` doubles the sample each round until every declaration is parsed).
    pub sampled: BTreeSet<String>,
    /// Of `names`, those whose mentions matter only in some kinds of code
    /// ([`ProjectIndex::mention_reach`]: a key fixture's `build()` is called from test
    /// code only): the [`crate::index::caller_kind`] bits whose files are scanned for
    /// every mention. Every other file is scanned for the name's declarations
    /// ([`NameScan::with_reach`]), so the name is still complete once scanned for. A
    /// name not here is wanted in every file.
    pub reach: BTreeMap<String, u8>,
    /// Every file not parsed yet that has a catalogue source word
    /// ([`FileWords::source`]) is wanted: the fresh closure ([`FreshScope`]) starts there.
    pub sources: bool,
    /// The fresh closure ran and is complete: no freshness question was held back for it.
    pub closure_complete: bool,
}

/// The fresh closure, when `check` runs it (`None`: every name may be fresh, as before).
///
/// A declaration is fresh in the index's fixpoint only when it has a fresh value of its
/// own, from a catalogue source in its body (so its file has a source word), or when a
/// call it returns the result of ([`FnDecl::fresh_via`], its own name aside) has a fresh
/// declaration, whose name the declaration's text then holds as a token. So once every
/// file with a source word is parsed, and every file mentioning a name of
/// [`may_fresh_names`] (computed from the parsed files) is parsed, a name outside that set
/// has no fresh declaration anywhere in the project: every call of it is answered "not
/// fresh" ([`ProjectIndex::fresh_from`] and the fixpoint read a name with no fresh
/// declaration so, whatever its declarations), and its declarations need not be parsed
/// for the freshness of a call. Until the closure is complete, such names are held back
/// ([`Demand::deferred`]); the closure's names are wanted in every file
/// ([`Demand::names`]) and the source files in the next round ([`Demand::sources`]).
pub struct FreshScope<'a> {
    /// No file with a source word is left unparsed.
    pub sources_parsed: bool,
    /// The name was scanned for in every file (every file mentioning it is parsed).
    pub mentioned: &'a dyn Fn(&str) -> bool,
}

/// The names some parsed declaration may make fresh: a declaration with a fresh value of
/// its own, and, transitively, one returning the result of a call of such a name (an
/// over-approximation of the fixpoint's fresh names: arity, receiver and unanimity are
/// ignored).
pub fn may_fresh_names(index: &ProjectIndex) -> foldhash::HashSet<&str> {
    let mut returned_by: foldhash::HashMap<&str, Vec<&str>> = Default::default();
    let mut out: foldhash::HashSet<&str> = Default::default();
    let mut work: Vec<&str> = Vec::new();
    for (n, ds) in &index.functions {
        let n = n.as_str();
        for d in ds {
            if d.fresh().is_some() && out.insert(n) {
                work.push(n);
            }
            for r in d.fresh_via.iter().filter(|r| *r.callee != *n) {
                returned_by.entry(&*r.callee).or_default().push(n);
            }
        }
    }
    while let Some(m) = work.pop() {
        for &n in returned_by.get(m).into_iter().flatten() {
            if out.insert(n) {
                work.push(n);
            }
        }
    }
    out
}

/// What the fresh closure says of a name a freshness question is about.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FreshGate {
    /// It may be fresh (or no closure runs): followed as before.
    Follow,
    /// No declaration of it is fresh anywhere: nothing is needed.
    Never,
    /// Not in the closure so far, which is not complete: held back.
    Wait,
}

/// Declarations whose fresh-value state is "not fresh" in the fixpoint of every project
/// that contains the files parsed so far, per name (parallel to
/// [`ProjectIndex::functions`]): no fresh value of their own, and every callee they return
/// the result of ([`FnDecl::fresh_via`], the declaration's own name aside, as
/// [`ProjectIndex`]'s fixpoint skips it) has such a declaration fitting the call
/// ([`settled_name`]), and [`narrowed_settled`] for a call whose receiver narrows its
/// candidates. The fixpoint decides a callee's freshness by unanimity over its
/// fitting declarations (or over the call's candidates), so one settled declaration keeps the name from ever being fresh
/// there, whatever other declarations of it unparsed files hold (by induction over the
/// order declarations are settled in here).
type Settled<'a> = foldhash::HashMap<&'a str, Vec<bool>>;

fn settled_of<'a>(
    index: &'a ProjectIndex,
    complete: &dyn Fn(&str) -> bool,
    named_for_done: &dyn Fn(&str, &str) -> bool,
    never_fresh: &dyn Fn(&str) -> bool,
) -> Settled<'a> {
    let mut s: Settled = index
        .functions
        .iter()
        .map(|(n, ds)| (n.as_str(), vec![false; ds.len()]))
        .collect();
    // What each recorded call narrows to does not change between rounds of the fixpoint.
    let mut narrowings: foldhash::HashMap<(&CallRef, &str), Narrowing> = Default::default();
    // A least fixpoint (states only turn settled, each reading the states of the callees
    // the declaration returns): a declaration is evaluated again only when one of those
    // names changed ([`crate::index::Worklist`]).
    let mut names: Vec<&str> = index.functions.keys().map(|n| n.as_str()).collect();
    names.sort_unstable();
    let mut work = crate::index::Worklist::new(
        &names,
        |n| &index.functions[n],
        |d| d.fresh_via.iter().map(|r| &*r.callee).collect(),
    );
    loop {
        let mut changed = false;
        for (k, &n) in names.iter().enumerate() {
            if !work.pending(k) {
                continue;
            }
            for (i, d) in index.functions[n].iter().enumerate() {
                if !work.take(k, i) || s[n][i] || d.fresh().is_some() {
                    continue;
                }
                let ok = d.fresh_via.iter().filter(|r| *r.callee != *n).all(|r| {
                    never_fresh(&r.callee)
                        || never_a_candidate(index, named_for_done, r, &d.path)
                        || none_fit(index, complete, &r.callee, r.arity, d.jvm())
                        || settled_name(index, &s, &r.callee, r.arity, d.jvm(), &d.path)
                            && narrowings
                                .entry((r, &*d.path))
                                .or_insert_with(|| narrowing(index, r, &d.path))
                                .settled(&s, &r.callee)
                });
                if ok {
                    if let Some(v) = s.get_mut(n) {
                        v[i] = true;
                    }
                    work.touch(k);
                    changed = true;
                }
            }
        }
        if !changed {
            return s;
        }
    }
}

/// Whether the candidates a recorded call `r` (made from `path`) resolves to by its
/// receiver can never all be fresh, whatever files are added: always, when the receiver
/// does not narrow them ([`crate::index::narrowable`]); otherwise when the narrowing can
/// only grow (a declared receiver type, or a receiver already naming a declared type) and
/// holds a settled declaration with a body.
fn narrowed_settled(index: &ProjectIndex, s: &Settled, r: &CallRef, path: &str) -> bool {
    narrowing(index, r, path).settled(s, &r.callee)
}

/// What [`narrowed_settled`] reads of the index for one recorded call, which the settled
/// states do not change.
enum Narrowing {
    /// The receiver does not narrow the candidates: settled by the name alone.
    Name,
    /// The narrowing may still change as files are added: never settled by it.
    Open,
    /// The candidates with a body (positions in [`ProjectIndex::functions`] of the callee).
    Candidates(Vec<usize>),
}

impl Narrowing {
    fn settled(&self, s: &Settled, callee: &str) -> bool {
        match self {
            Narrowing::Name => true,
            Narrowing::Open => false,
            Narrowing::Candidates(js) => {
                let st = s.get(callee);
                js.iter()
                    .any(|j| st.is_some_and(|v| v.get(*j).copied().unwrap_or(false)))
            }
        }
    }
}

fn narrowing(index: &ProjectIndex, r: &CallRef, path: &str) -> Narrowing {
    if !crate::index::narrowable(r) {
        return Narrowing::Name;
    }
    let jvm = Language::from_path(std::path::Path::new(path)) != Some(Language::Rust);
    let decls = index.functions.get(&*r.callee);
    let test = crate::index::is_test_source(path);
    // As `ProjectIndex::candidates_of` ties the receiver to a type: only declarations
    // the call can reach (the caller's arity rule, language family, test sources only
    // for a test), and a called receiver by the getter's name exactly. Without one, the
    // index falls back to other declarations, which files not parsed yet may add to.
    let typed = r.receiver_type.is_some()
        || r.receiver.as_deref().is_some_and(|x| {
            let x = x.trim();
            let last = crate::catalogue::last_segment(x);
            let last_norm = crate::catalogue::normalize_name(last);
            let is_call = x.ends_with(')');
            decls.into_iter().flatten().any(|d| {
                d.jvm() == jvm
                    && crate::index::arity_ok_from(d, r.arity, path)
                    && (test || !d.test_source())
                    && !d.type_name().is_empty()
                    && if is_call {
                        crate::index::getter_names_type(last, &d.type_name())
                    } else {
                        crate::index::receiver_names_decl(last, &last_norm, d)
                    }
            })
        });
    if !typed {
        return Narrowing::Open;
    }
    Narrowing::Candidates(
        index
            .candidates_of_ref(r, path)
            .iter()
            .filter(|(_, c)| !c.bodiless)
            .map(|(j, _)| *j)
            .collect(),
    )
}

/// Every declaration of `name` is parsed (`complete`: the files not parsed yet were
/// scanned for it) and none fits a call with `args` arguments from a `jvm` declaration
/// (same language family, [`crate::index::arity_ok`], which admits at least what the
/// fixpoint's unanimity and a receiver's candidates do): such a call is never fresh.
fn none_fit(
    index: &ProjectIndex,
    complete: &dyn Fn(&str) -> bool,
    name: &str,
    args: usize,
    jvm: bool,
) -> bool {
    complete(name)
        && !index
            .functions
            .get(name)
            .into_iter()
            .flatten()
            .any(|d| d.jvm() == jvm && crate::index::arity_ok(d, args))
}

/// Some settled declaration of `name` fits a call with `args` arguments made from a `jvm`
/// declaration in the file `from_path`, as the fixpoint's unanimity reads fitness
/// (`ProjectIndex::unanimous`: Kotlin default arguments only for a Kotlin caller, test
/// sources' declarations only for a test caller): the fixpoint's name-level answer for such
/// a call is "not fresh" for good.
fn settled_name(
    index: &ProjectIndex,
    s: &Settled,
    name: &str,
    args: usize,
    jvm: bool,
    from_path: &str,
) -> bool {
    let test = crate::index::is_test_source(from_path);
    match (index.functions.get(name), s.get(name)) {
        (Some(ds), Some(st)) => ds.iter().zip(st).any(|(d, ok)| {
            *ok && d.jvm() == jvm
                && (test || !d.test_source())
                && crate::index::arity_ok_from(d, args, from_path)
        }),
        _ => false,
    }
}

/// Whether passing a parameter on as `pp` (from a `jvm` declaration) can never make the
/// declaration retry it, whatever files are added: the index's wrapper fixpoint needs
/// every fitting declaration of the callee to retry the argument (or, when they disagree
/// and the receiver names a type, every fitting one on such a type). A fitting declaration
/// that neither retries nor passes on the parameter the argument binds never retries it
/// ([`crate::index::never_retries`]), so it decides "no" for good unless the receiver
/// could still pick other declarations than it.
fn comb_settled(index: &ProjectIndex, pp: &crate::index::PassedParam, jvm: bool) -> bool {
    let receiver = pp
        .call
        .receiver
        .as_deref()
        .map(|r| crate::catalogue::normalize_name(crate::catalogue::last_segment(r)));
    index
        .functions
        .get(&*pp.call.callee)
        .into_iter()
        .flatten()
        .any(|c| {
            c.jvm() == jvm
                && crate::index::arity_ok(c, pp.call.arity)
                && crate::index::never_retries(c, pp.position_in(c))
                && match &receiver {
                    None => true,
                    Some(r) => {
                        let t = crate::catalogue::normalize_name(&c.type_name());
                        r.len() < 3 || (!t.is_empty() && (t.contains(r.as_str()) || r.contains(&t)))
                    }
                }
        })
}

/// A callee whose freshness is asked: by name (`args`/`jvm` unknown when every callee of a
/// file counts as asked), or for one arity and language family.
/// With the recorded call it comes from and the caller's path, when there is one: a call
/// whose receiver narrows its candidates is decided by them too
/// (`ProjectIndex::narrowed_fresh`).
type Follow<'a> = (
    &'a str,
    Option<usize>,
    Option<bool>,
    Option<(&'a CallRef, &'a str)>,
);

/// The calls whose result declaration `f` returns (its `fresh_via`), other than calls to
/// `name` itself (recursion adds nothing), each as a [`Follow`] for `f`'s language family
/// with the call and `f`'s path, so a receiver can narrow its candidates.
fn fresh_via_follows<'a: 'n, 'n>(
    f: &'a FnDecl,
    name: &'n str,
) -> impl Iterator<Item = Follow<'a>> + 'n {
    f.fresh_via
        .iter()
        .filter(move |x| *x.callee != *name)
        .map(move |x| {
            (
                &*x.callee,
                Some(x.arity),
                Some(f.jvm()),
                Some((&**x, &*f.path)),
            )
        })
}

/// Queues the calls whose result the parsed candidates of call `r` (made from `path`)
/// return, other than `name` itself: a declaration that is not fresh on its own is fresh
/// when one of them is (`ProjectIndex::resolve` reads `fresh_via` only when `fresh` is
/// empty), so their freshness is asked too.
fn push_candidates_fresh_via<'a>(
    index: &'a ProjectIndex,
    name: &str,
    r: &CallRef,
    path: &str,
    fresh: &mut Vec<Follow<'a>>,
) {
    for (_, f) in index.candidates_of_ref(r, path) {
        if f.fresh().is_some() {
            continue;
        }
        fresh.extend(fresh_via_follows(f, name));
    }
}

/// One call made from `path` (whose freshness, or whether it retries a lambda, pass 2
/// asks), resolved as [`ProjectIndex::candidates`] resolves it once every file is parsed.
/// Adds to `out` what the files not parsed yet must be scanned for to hold every
/// candidate declaration, and returns the candidates parsed so far, whose own calls the
/// answer depends on. Nothing is needed when the call resolves to nothing whatever is
/// declared, or when a candidate that no file can take out of the candidate set (it has a
/// body, and the case of resolution cannot change) is `settled`: every candidate must
/// agree, so the answer is then "no" for good.
fn resolve_call<'a>(
    index: &'a ProjectIndex,
    c: &'a CallRef,
    path: &str,
    out: &mut Demand,
    settled: impl Fn(usize, &FnDecl) -> bool,
) -> Vec<(usize, &'a FnDecl)> {
    enum Want {
        Nothing,
        Name,
        Typed(String),
        NamedFor(String),
    }
    let jvm = Language::from_path(std::path::Path::new(path)) != Some(Language::Rust);
    let decls: &[FnDecl] = index
        .functions
        .get(&*c.callee)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    // As `ProjectIndex::candidates_of` filters them: the caller's arity rule (only Kotlin
    // leaves out defaulted arguments), language family, and test sources only for a test.
    let test = crate::index::is_test_source(path);
    let fits = |d: &FnDecl| {
        crate::index::arity_ok_from(d, c.arity, path)
            && d.jvm() == jvm
            && (test || !d.test_source())
    };
    // `stable`: a candidate parsed now is a candidate in the whole project.
    let (want, stable) = if let Some(t) = &c.receiver_type {
        // Declarations in `t` or in a type listing it as a supertype: both names are
        // tokens of such a file (`Builder` of `HttpRequest.Builder`).
        let t = t.rsplit('.').next().unwrap_or(t).to_string();
        if !t.is_empty() && t.bytes().all(is_ident_byte) {
            (Want::Typed(t.clone()), true)
        } else {
            (Want::Name, true)
        }
    } else {
        match c.receiver.as_deref().map(str::trim) {
            None | Some("this") | Some("self") | Some("super") | Some("Self") => {
                // Declarations in the caller's file (parsed: all known), else top-level
                // functions anywhere or methods inherited through the file's types'
                // supertypes, whose declarations (and theirs, round by round) tell the
                // index the chain (`ProjectIndex::inherited_levels`).
                // Supertypes are merged by simple name over every type of that name
                // (`ProjectIndex::type_supers`): the files declaring the file's own type
                // names are demanded too. Only needed when no declaration of the caller's
                // file fits and some known one is a JVM type's method (the candidates an
                // inheritance chain can add): every declaration of the name is demanded,
                // so once one exists it is known, and the chain follows round by round.
                if decls.iter().any(|d| fits(d) && *d.path == *path) {
                    (Want::Nothing, true)
                } else {
                    if jvm && decls.iter().any(|d| d.jvm() && !d.type_name().is_empty()) {
                        out.decls.extend(
                            index
                                .file_supertypes(path)
                                .into_iter()
                                .chain(index.file_type_names(path))
                                .filter(|t| !t.is_empty() && t.bytes().all(is_ident_byte))
                                .map(str::to_string),
                        );
                    }
                    (Want::Name, true)
                }
            }
            Some(r) => {
                let last = crate::catalogue::last_segment(r);
                let untyped_none = crate::index::COMMON_NAMES.contains(&&*c.callee)
                    || last.starts_with(|ch: char| ch.is_uppercase());
                // A receiver that is a call (`settings().getPaymentSettings()`) may resolve
                // by the type its declarations return, or a Kotlin property's type read
                // through its getter (`ProjectIndex::candidates_of`): those declarations
                // name the method, or the property.
                // (The recorded receiver is its last segment, the call's parentheses
                // dropped: a getter's name is what says it is a call.)
                let getter = last
                    .strip_prefix("get")
                    .is_some_and(|rest| rest.starts_with(|ch: char| ch.is_uppercase()));
                if r.trim_end().ends_with(')') || getter {
                    let name = last.split('(').next().unwrap_or(last).trim();
                    let typed_by_name = decls.iter().any(|d| {
                        fits(d)
                            && !d.type_name().is_empty()
                            && crate::catalogue::normalize_name(
                                name.strip_prefix("get").unwrap_or(name),
                            ) == crate::catalogue::normalize_name(&d.type_name())
                    });
                    // Their declarations: the getter's (its return type), or the
                    // Kotlin property's (`val paymentSettings`).
                    if !name.is_empty() && !typed_by_name {
                        out.decls.insert(name.to_string());
                        if let Some(rest) = name.strip_prefix("get")
                            && let Some(first) = rest.chars().next()
                        {
                            out.decls.insert(format!(
                                "{}{}",
                                first.to_lowercase(),
                                &rest[first.len_utf8()..]
                            ));
                        }
                    }
                }
                let last_norm = crate::catalogue::normalize_name(last);
                // As `ProjectIndex::candidates_of` ties a receiver to a type: a call by
                // the getter's name exactly, a variable by either name containing the other.
                let is_call = r.trim_end().ends_with(')');
                let names_type = |d: &FnDecl| {
                    if is_call {
                        crate::index::getter_names_type(last, &d.type_name())
                    } else {
                        crate::index::receiver_names_decl(last, &last_norm, d)
                    }
                };
                if !is_call && last_norm.len() < 3 {
                    // Only a type of exactly this name can match a capitalised receiver
                    // (`Q.mid { .. }`), none a lowercase one: every declaration of the
                    // name is wanted for the first.
                    if untyped_none && !last.starts_with(|ch: char| ch.is_uppercase()) {
                        return Vec::new();
                    }
                    (Want::Name, true)
                } else if let Some(spec) = named_for_of(c) {
                    // Only declarations in a type named for the receiver are candidates
                    // (no fallback to every declaration of the name): the files that
                    // declare the callee and may declare such a type.
                    (Want::NamedFor(spec), true)
                } else if decls
                    .iter()
                    .any(|d| fits(d) && !d.type_name().is_empty() && names_type(d))
                {
                    (Want::Name, true)
                } else {
                    // Every declaration now (or none), but a type matching the receiver
                    // may be declared in a file not parsed yet.
                    (Want::Name, false)
                }
            }
        }
    };
    let cands = index.candidates_of(
        &c.callee,
        c.arity,
        c.receiver.as_deref(),
        c.receiver_type.as_deref(),
        path,
    );
    if stable && cands.iter().any(|(j, d)| !d.bodiless && settled(*j, d)) {
        return Vec::new();
    }
    match want {
        Want::Nothing => {}
        Want::Name => {
            out.decls.insert(c.callee.to_string());
        }
        Want::Typed(t) => {
            out.typed.insert((c.callee.to_string(), t));
        }
        Want::NamedFor(t) => {
            out.named_for.insert((c.callee.to_string(), t));
        }
    }
    cands
}

/// [`resolve_call`] for a call whose freshness is asked: the candidates' callees whose
/// result they return are followed.
fn resolve_ask<'a>(
    index: &'a ProjectIndex,
    c: &'a CallRef,
    path: &str,
    out: &mut Demand,
    follow: &mut Vec<Follow<'a>>,
) {
    // Every candidate counts (one fresh candidate among others is reported as an
    // ambiguous finding, `ProjectIndex::fresh_from`): no settled candidate ends the search.
    let cands = resolve_call(index, c, path, out, |_, _| false);
    for (_, d) in cands {
        if d.fresh().is_some() {
            continue;
        }
        follow.extend(
            d.fresh_via
                .iter()
                .filter(|r| *r.callee != *d.name)
                .map(|r| {
                    (
                        &*r.callee,
                        Some(r.arity),
                        Some(d.jvm()),
                        Some((&**r, &*d.path)),
                    )
                }),
        );
    }
}

/// What the files outside P are scanned for (step 2 of the module docs), from the parsed
/// files' demands and the index built from them:
/// - key-minting, key-parameter and key-header-reading functions (callers may have
///   findings or mint; every declaration of such a name must be seen);
/// - the calls a key can come from: those the flows of the parsed files' sinks pass
///   through ([`FileDemand::asks`], and [`FileDemand::arg_asks`] of calls of key-parameter
///   functions), each resolved as the index resolves it ([`resolve_ask`]: the files that
///   may declare a candidate); then, transitively by name (as the index's fixpoint decides
///   freshness), the callees whose results those candidates return
///   ([`crate::index::FnDecl::fresh_via`]), and those the sinks inside functions pass
///   through (which decide whether a function mints). Every declaration of such a name
///   must be seen, fresh or not (one that is not keeps the name from being fresh), unless
///   a settled one is seen already ([`settled_of`]);
/// - in files where an inferred retry scope can matter (a key flow, or a minting call),
///   the callees that may be retry combinators, and transitively the callees their
///   declarations pass a parameter on to;
/// - in files that can have a key flow (a sink, or a call of a key-parameter function) and
///   an interceptor boundary: the interceptor types (their registrations matter), the
///   types registered there and beside those types elsewhere (whether they retry), and
///   `clone` (the first `call.clone()` site is quoted).
///
/// A name that only some unrelated declaration returns a fresh value from is not
/// demanded: no call a key can come from reaches it.
pub fn demanded_names<'a>(
    index: &ProjectIndex,
    demands: impl Iterator<Item = &'a FileDemand> + Clone,
    complete: &dyn Fn(&str) -> bool,
    named_for_done: &dyn Fn(&str, &str) -> bool,
    fresh_scope: Option<&FreshScope>,
) -> Demand {
    let mut out = Demand::default();
    for n in index.key_names() {
        let reach = index.mention_reach(n);
        if reach != crate::index::CALLERS_ALL {
            out.reach.insert(n.to_string(), reach);
        }
        out.names.insert(n.to_string());
    }
    let trace = std::env::var_os("IDEMLINT_TRACE_DEMAND").is_some();
    // The fresh closure: its names and whether it is complete.
    let may_fresh = fresh_scope.map(|_| may_fresh_names(index));
    let closure_complete = match (fresh_scope, &may_fresh) {
        (Some(f), Some(m)) => f.sources_parsed && m.iter().all(|n| (f.mentioned)(n)),
        _ => false,
    };
    out.closure_complete = closure_complete;
    if let (Some(f), Some(m)) = (fresh_scope, &may_fresh) {
        out.sources = !f.sources_parsed;
        for n in m.iter().filter(|n| !(f.mentioned)(n)) {
            out.names.insert(n.to_string());
        }
        if trace {
            let mut v: Vec<&&str> = m.iter().collect();
            v.sort();
            eprintln!(
                "demand: fresh closure ({}): {v:?}",
                if closure_complete {
                    "complete"
                } else {
                    "growing"
                }
            );
        }
    }
    let gate = |n: &str| match &may_fresh {
        Some(m) if !m.contains(n) && closure_complete => FreshGate::Never,
        Some(m) if !m.contains(n) => FreshGate::Wait,
        _ => FreshGate::Follow,
    };
    let never_fresh = |n: &str| gate(n) == FreshGate::Never;
    let mut waits = false;
    let settled = settled_of(index, complete, named_for_done, &never_fresh);
    let mut types: BTreeSet<&str> = BTreeSet::new();
    let mut fresh: Vec<Follow> = Vec::new();
    // A possible combinator: by name (every declaration), or as a parameter is passed on
    // to it (its fitting declarations, see `comb_settled`).
    let mut combinators: Vec<(&str, Option<&crate::index::PassedParam>, bool)> = Vec::new();
    // Whether a retrying interceptor's case can matter: then every declaration of a
    // possible combinator is seen (the call-level retry sites quoted count them all).
    let interceptors = demands.clone().any(|d| d.interceptor && d.keyed(index));
    if trace && let Some(d) = demands.clone().find(|d| d.interceptor && d.keyed(index)) {
        eprintln!("demand: keyed interceptor in {}", d.path);
    }
    for d in demands.clone() {
        let before = trace.then_some((out.decls.len(), out.typed.len(), combinators.len()));
        let decls_before = if trace {
            out.decls.clone()
        } else {
            BTreeSet::new()
        };
        for c in d.by_name_asks.iter() {
            resolve_ask(index, c, &d.path, &mut out, &mut fresh);
        }
        if d.asks_everything {
            fresh.extend(d.callees.iter().map(|c| (&**c, None, None, None)));
        } else {
            let asked = d
                .asks
                .iter()
                .map(|c| &**c)
                .chain(d.bound_default_asks(index))
                .chain(
                    d.arg_asks_by_callee()
                        .filter(|(callee, _)| index.has_key_params(callee))
                        .flat_map(|(_, asked)| asked.iter().map(|c| &**c)),
                );
            for c in asked {
                match gate(&c.callee) {
                    FreshGate::Follow => resolve_ask(index, c, &d.path, &mut out, &mut fresh),
                    FreshGate::Never => {}
                    FreshGate::Wait => waits = true,
                }
            }
        }
        let keyed = d.keyed(index);
        if keyed
            || d.library_mints
            || d.callees
                .iter()
                .any(|c| index.is_mint_name_from(c, &d.path))
        {
            if interceptors {
                combinators.extend(
                    d.combinator_callees
                        .iter()
                        .map(|c| (c.as_str(), None, false)),
                );
            } else {
                combinators.extend(d.super_callees.iter().map(|c| (c.as_str(), None, false)));
                // A call retries its lambda when every candidate retries that parameter;
                // a candidate that neither retries nor passes on a parameter never does.
                // Only the parameters the lambdas bind matter (`ProjectIndex::retried_arg`
                // asks about those; a parameter's state depends on the calls it is passed
                // on to alone).
                for (c, args) in &d.lambda_calls {
                    let params = |f: &FnDecl| {
                        args.iter()
                            .map(|(a, n)| crate::index::lambda_param(f, *a, c.arity, n.as_deref()))
                            .collect::<Vec<_>>()
                    };
                    let cands = resolve_call(index, c, &d.path, &mut out, |_, f| {
                        params(f)
                            .into_iter()
                            .all(|p| crate::index::never_retries(f, p))
                    });
                    for (_, f) in cands {
                        let ps = params(f);
                        combinators.extend(
                            f.passes_params
                                .iter()
                                .filter(|pp| pp.callable && ps.contains(&Some(pp.param())))
                                .map(|pp| (&*pp.call.callee, Some(pp), f.jvm())),
                        );
                    }
                }
            }
        }
        // The types this file's types implement, when it can have a finding: one declared
        // elsewhere with an `on_interface` entry's annotation makes the implementing
        // methods boundaries (`crate::index::TypeBoundary`), so its declarations are
        // wanted.
        if !d.implemented.is_empty()
            && (keyed
                || d.library_mints
                || d.callees
                    .iter()
                    .any(|c| index.is_mint_name_from(c, &d.path)))
        {
            out.decls
                .extend(d.implemented.iter().map(|t| t.to_string()));
        }
        // A Camel processor's route and the sends to it: route builders name the type (or
        // extend `RouteBuilder`), senders hold a `ProducerTemplate`.
        if keyed && !d.camel_processors.is_empty() {
            types.extend(d.camel_processors.iter().map(String::as_str));
            types.extend(["RouteBuilder", "ProducerTemplate", "FluentProducerTemplate"]);
        }
        // The request types whose defaults a handler here sends as a key: only the files
        // declaring them hold those defaults (`FileDemand::default_fields` names a field
        // by the type whose declaration holds it), so their declarations are wanted, not
        // their mentions (a handler's `String` or `BigDecimal` parameter is mentioned in
        // most files of a project).
        out.decls.extend(d.bound_types.iter().cloned());
        if d.interceptor && keyed {
            out.names.insert("clone".to_string());
            // The Retrofit services tell which client each endpoint runs on.
            if d.evidence_needed & crate::index::HTTP_OKHTTP != 0 {
                out.names.insert("Retrofit".to_string());
            }
            types.extend(d.interceptor_types.iter().map(String::as_str));
            types.extend(d.registered_types.iter().map(String::as_str));
        }
        if let Some((a, b, c)) = before
            && (out.decls.len(), out.typed.len(), combinators.len()) != (a, b, c)
        {
            eprintln!(
                "demand: {} asks: decls {} -> {} (new: {:?}), typed {} -> {}, combinators {} -> {}",
                d.path,
                a,
                out.decls.len(),
                out.decls.difference(&decls_before).collect::<Vec<_>>(),
                b,
                out.typed.len(),
                c,
                combinators.len()
            );
        }
    }
    // Whether a function mints through a helper (`mint_via_fresh`) needs that helper's
    // declarations, wherever the function is.
    for decls in index.functions.values() {
        for f in decls {
            fresh.extend(f.rare().mint_via_fresh.iter().map(|r| {
                (
                    &*r.callee,
                    Some(r.arity),
                    Some(f.jvm()),
                    Some((&**r, &*f.path)),
                )
            }));
        }
    }
    // Transitively, by name: what the fitting declarations of a demanded name return.
    if trace {
        for n in index.key_names() {
            let decls = index
                .functions
                .get(n)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let why = |pick: &dyn Fn(&crate::index::FnDecl) -> bool| {
                decls.iter().find(|f| pick(f)).map(|f| f.location())
            };
            eprintln!(
                "demand: key name {n}: mints {:?}, key params {:?}, reads header {:?}",
                (0..decls.len()).find_map(|i| index.mints_at(n, i).map(|m| (
                    decls[i].location(),
                    &m.source,
                    &m.location,
                    m.kind
                ))),
                why(&|f| !f.key_params().is_empty()),
                why(&|f| f.reads_key_header),
            );
        }
    }
    let mut seen: foldhash::HashSet<Follow> = Default::default();
    let mut expanded: foldhash::HashSet<(&str, Option<usize>, Option<bool>)> = Default::default();
    // Held back: a call whose candidates are parsed and wait only on callees not scanned
    // for yet (`pending`). Once those are scanned, the candidates may settle the name
    // without every declaration of it (a generated `fn deser_default() -> Self` in each of
    // 1,431 files, say). A held-back call whose pending callees are not demanded after all
    // is followed by name as usual (`no_defer`), so no demand is lost.
    let mut held: Vec<(Follow, Vec<&str>)> = Vec::new();
    let mut no_defer: foldhash::HashSet<Follow> = Default::default();
    let pending_of = |n: &str, r: &CallRef, p: &str| -> Vec<&str> {
        let mut v: Vec<&str> = Vec::new();
        for (_, f) in index.candidates_of_ref(r, p) {
            if f.fresh().is_some() {
                continue;
            }
            for x in f.fresh_via.iter().filter(|x| *x.callee != *n) {
                if !complete(&x.callee)
                    && !never_fresh(&x.callee)
                    && !settled_name(index, &settled, &x.callee, x.arity, f.jvm(), &f.path)
                {
                    v.push(&*x.callee);
                }
            }
        }
        v
    };
    loop {
        while let Some(item) = fresh.pop() {
            if !seen.insert(item) {
                continue;
            }
            let (n, args, jvm, via) = item;
            match gate(n) {
                FreshGate::Follow => {}
                FreshGate::Never => continue,
                FreshGate::Wait => {
                    waits = true;
                    continue;
                }
            }
            // A name common on library types called through a receiver that is a call
            // (`UUID.randomUUID().toString()`): the index answers it only when some
            // declaration lies in a type named for the receiver's method
            // (`ProjectIndex::ref_fresh` wants a candidate), so the name's other
            // declarations matter only once such a one is seen: the files that may
            // declare one are scanned for first ([`Demand::named_for`]).
            if let Some((r, p)) = via
                && !complete(n)
                && crate::index::COMMON_NAMES.contains(&n)
                && let Some(norm) = named_for_of(r)
            {
                if !named_for_done(n, &norm) {
                    out.named_for.insert((n.to_string(), norm));
                    continue;
                }
                if index.candidates_of_ref(r, p).is_empty() {
                    continue;
                }
            }
            if let (Some(a), Some(j), Some(_)) = (args, jvm, via)
                && none_fit(index, complete, n, a, j)
            {
                continue;
            }
            if let (Some(a), Some(j), Some((r, p))) = (args, jvm, via)
                && !no_defer.contains(&item)
                && !settled_name(index, &settled, n, a, j, p)
            {
                let pending = pending_of(n, r, p);
                if !pending.is_empty() {
                    push_candidates_fresh_via(index, n, r, p, &mut fresh);
                    held.push((item, pending));
                    continue;
                }
            }
            if let (Some(a), Some(j), Some((r, p))) = (args, jvm, via)
                && settled_name(index, &settled, n, a, j, p)
            {
                // The name is not fresh for good; only the candidates the call's receiver
                // narrows it to can still make it fresh (`ProjectIndex::narrowed_fresh`).
                if narrowed_settled(index, &settled, r, p) {
                    continue;
                }
                let t = r
                    .receiver_type
                    .as_deref()
                    .map(|t| t.rsplit('.').next().unwrap_or(t))
                    .filter(|t| !t.is_empty() && t.bytes().all(is_ident_byte));
                match (t, named_for_of(r)) {
                    (Some(t), _) => out.typed.insert((n.to_string(), t.to_string())),
                    (None, Some(spec)) if !complete(n) => {
                        out.named_for.insert((n.to_string(), spec))
                    }
                    _ => out.decls.insert(n.to_string()),
                };
                push_candidates_fresh_via(index, n, r, p, &mut fresh);
                continue;
            }
            if !expanded.insert((n, args, jvm)) {
                continue;
            }
            if trace && !out.decls.contains(n) {
                eprintln!("demand: follow {n}/{args:?} from {:?}", via.map(|v| v.1));
            }
            // A synthetic callee matches every file of its language: wanted in full.
            if via.is_some() && !complete(n) && !SYNTHETIC_CALLEES.iter().any(|(s, _)| *s == n) {
                out.sampled.insert(n.to_string());
            } else {
                out.decls.insert(n.to_string());
            }
            for f in index.functions.get(n).into_iter().flatten() {
                if args.is_some_and(|a| !crate::index::arity_ok(f, a))
                    || jvm.is_some_and(|j| f.jvm() != j)
                    || f.fresh().is_some()
                {
                    continue;
                }
                fresh.extend(fresh_via_follows(f, n));
            }
        }
        // A held-back call stays held only while one of its pending callees is scanned for
        // in full (in `names` or `decls`, which makes it complete next round) or sampled
        // (each sample is larger, so it is settled or complete within a few rounds).
        let mut again = false;
        for (item, pending) in std::mem::take(&mut held) {
            if pending.iter().any(|x| {
                out.decls.contains(*x)
                    || out.names.contains(*x)
                    || out.sampled.contains(*x)
                    || out.named_for.iter().any(|(c, _)| c == x)
            }) {
                out.deferred = true;
            } else {
                no_defer.insert(item);
                seen.remove(&item);
                fresh.push(item);
                again = true;
            }
        }
        if !again {
            break;
        }
    }
    let mut seen_comb: BTreeSet<&str> = BTreeSet::new();
    let mut seen_pp: foldhash::HashSet<*const crate::index::PassedParam> = Default::default();
    while let Some((n, pp, jvm)) = combinators.pop() {
        match pp.filter(|_| !interceptors) {
            None => {
                if !seen_comb.insert(n) {
                    continue;
                }
                if trace {
                    eprintln!("demand: combinator {n} (by name)");
                }
                for f in index.functions.get(n).into_iter().flatten() {
                    combinators.extend(
                        f.passes_params
                            .iter()
                            .filter(|pp| pp.callable)
                            .map(|pp| (&*pp.call.callee, Some(pp), f.jvm())),
                    );
                }
            }
            Some(pp) => {
                if !seen_pp.insert(pp as *const _) || comb_settled(index, pp, jvm) {
                    continue;
                }
                if seen_comb.insert(n) && trace {
                    eprintln!(
                        "demand: combinator {n}/{} (a parameter passed on at line {}, receiver {:?} type {:?})",
                        pp.call.arity, pp.line, pp.call.receiver, pp.call.receiver_type
                    );
                }
                // Of each fitting declaration, what the parameter the argument binds is
                // passed on to.
                for f in index.functions.get(n).into_iter().flatten() {
                    if f.jvm() == jvm && crate::index::arity_ok(f, pp.call.arity) {
                        let Some(q) = pp.position_in(f) else { continue };
                        combinators.extend(
                            f.passes_params
                                .iter()
                                .filter(|p| p.param() == q && p.callable)
                                .map(|p| (&*p.call.callee, Some(p), f.jvm())),
                        );
                    }
                }
            }
        }
    }
    // Files registering a demanded interceptor type: what else they register matters.
    for d in demands {
        if d.registered_types
            .iter()
            .any(|t| types.contains(t.as_str()))
        {
            types.extend(d.registered_types.iter().map(String::as_str));
        }
    }
    out.decls.extend(seen_comb.into_iter().map(str::to_string));
    // Wanted in every file for a reason of their own: an interceptor's `clone` and
    // `Retrofit`, the types above.
    out.reach
        .retain(|n, _| n != "clone" && n != "Retrofit" && !types.contains(n.as_str()));
    out.names.extend(types.into_iter().map(str::to_string));
    // Nameless functions are not indexed: the empty callee (`(f)()`) never resolves.
    out.names.remove("");
    out.decls.remove("");
    out.typed.retain(|(c, _)| !c.is_empty());
    out.named_for.retain(|(c, _)| !c.is_empty());
    // A synthetic callee matches files without its token: wanted by name instead.
    for set in [&mut out.typed, &mut out.named_for] {
        let synthetic: Vec<(String, String)> = set
            .iter()
            .filter(|(c, _)| SYNTHETIC_CALLEES.iter().any(|(n, _)| n == c))
            .cloned()
            .collect();
        for p in synthetic {
            set.remove(&p);
            out.decls.insert(p.0);
        }
    }
    let names = &out.names;
    out.decls.retain(|n| !names.contains(n));
    let decls = &out.decls;
    out.typed
        .retain(|(c, _)| !names.contains(c) && !decls.contains(c));
    out.named_for
        .retain(|(c, _)| !names.contains(c) && !decls.contains(c));
    out.sampled.remove("");
    out.sampled
        .retain(|n| !names.contains(n) && !decls.contains(n));
    // The closure's names are wanted in every kind of code (every declaration returning
    // one may be fresh), and a question held back keeps the rounds going.
    if let Some(m) = &may_fresh {
        out.reach.retain(|n, _| !m.contains(n.as_str()));
    }
    out.deferred |= waits;
    out
}

/// The method name of a recorded call receiver (`randomUUID()` → `randomUUID`).
fn name_of_call(last: &str) -> &str {
    last.split('(').next().unwrap_or(last).trim()
}

/// Whether the recorded call `r` (made from `path`) of a common name through a receiver
/// of [`named_for_of`]'s kind can never be fresh, whatever files are added: the files
/// that may declare a type named for the receiver were scanned for, and no candidate
/// is parsed (`ProjectIndex::ref_fresh` answers such a call only from a candidate).
fn never_a_candidate(
    index: &ProjectIndex,
    named_for_done: &dyn Fn(&str, &str) -> bool,
    r: &CallRef,
    path: &str,
) -> bool {
    crate::index::COMMON_NAMES.contains(&&*r.callee)
        && named_for_of(r).is_some_and(|spec| named_for_done(&r.callee, &spec))
        && index.candidates_of_ref(r, path).is_empty()
}

/// When the index resolves the recorded call `r` to the declarations in types named
/// for its receiver and to nothing else (`ProjectIndex::candidates_of`: a receiver with
/// no declared type, not `this`/`self`, that is not a getter, under a name that never
/// resolves by name alone or a capitalised receiver), what such a type's name must be,
/// as [`Demand::named_for`] spells it: `=n` for a receiver that is a call, `~n` for a
/// named one. `None` for any other call.
fn named_for_of(r: &CallRef) -> Option<String> {
    if r.receiver_type.is_some() {
        return None;
    }
    let recv = r.receiver.as_deref()?.trim();
    if matches!(recv, "this" | "self" | "super" | "Self") || recv.starts_with('.') {
        return None;
    }
    let last = crate::catalogue::last_segment(recv);
    let untyped_none = crate::index::COMMON_NAMES.contains(&&*r.callee)
        || last.starts_with(|ch: char| ch.is_uppercase());
    let getter = last
        .strip_prefix("get")
        .is_some_and(|rest| rest.starts_with(|ch: char| ch.is_uppercase()));
    if !untyped_none || getter {
        return None;
    }
    let norm = crate::catalogue::normalize_name(name_of_call(last));
    if recv.ends_with(')') {
        (!norm.is_empty()).then(|| format!("={norm}"))
    } else {
        (norm.len() >= 3).then(|| format!("~{norm}"))
    }
}

/// Whether an interceptor's case still depends on files not parsed yet: a file that can
/// have a key flow holds an interceptor boundary whose case reads call-level retry
/// evidence of its client library, and no parsed file shows it (for OkHttp a retry
/// reaching an OkHttp call or a `call.clone()` site, for Spring a retry reaching a Spring
/// exchange), which the rules count over the whole project (a hand-written retry loop
/// needs no catalogue word). The pipeline then parses further files until the evidence
/// every such interceptor reads is found, or none is left.
pub fn needs_retry_evidence<'a>(
    index: &ProjectIndex,
    demands: impl Iterator<Item = &'a FileDemand>,
) -> bool {
    debug_assert!(
        index.sites_resolved(),
        "ProjectIndex::resolve_sites not called"
    );
    let mut missing = 0;
    // OkHttp evidence is per client when the services' clients are known: missing while
    // some registered client has none.
    // (`call.clone()` sites count per client too: `ProjectIndex::clone_sites_for`.)
    let okhttp_missing = if index.client_retry_sites.is_empty() {
        index.clone_sites.is_empty() && index.okhttp_retry_sites.is_empty()
    } else {
        index.okhttp_retry_sites.is_empty() && index.clone_sites.is_empty()
            || index
                .client_retry_sites
                .iter()
                .any(|(h, v)| v.is_empty() && index.clone_sites_for(Some(h)).is_empty())
    };
    if okhttp_missing {
        missing |= crate::index::HTTP_OKHTTP;
    }
    if index.spring_retry_sites.is_empty() {
        missing |= crate::index::HTTP_SPRING;
    }
    if index.reactive_retry_sites.is_empty() {
        missing |= crate::index::HTTP_WEBCLIENT;
    }
    if index.feign_retry_sites.is_empty() {
        missing |= crate::index::HTTP_FEIGN;
    }
    if missing == 0 {
        return false;
    }
    let mut needed = 0;
    for d in demands {
        if d.interceptor && d.evidence_needed & missing & !needed != 0 && d.keyed(index) {
            needed |= d.evidence_needed & missing;
            if needed == missing {
                break;
            }
        }
    }
    needed != 0
}

/// Step 3: whether a parsed file can have a finding under `index` — a sink (catalogue, or
/// a call of a key-parameter function) and an origin (a source, or a call of a fresh
/// helper), or a boundary with a call of a key-minting function.
pub fn needs_check(d: &FileDemand, index: &ProjectIndex) -> bool {
    let inferred = d
        .combinator_callees
        .iter()
        .any(|c| index.is_combinator_name(c));
    // A fresh helper is an origin only where a flow from a sink asks about its call
    // (`asks`, and the arguments of key-parameter calls), resolved as pass 2 resolves it.
    let fresh_ask = d
        .asks
        .iter()
        .map(|c| &**c)
        .chain(d.bound_default_asks(index))
        .chain(
            d.arg_asks_by_callee()
                .filter(|(callee, _)| index.has_key_params(callee))
                .flat_map(|(_, asked)| asked.iter().map(|c| &**c)),
        )
        .find(|c| index.is_fresh_ref(c, &d.path));
    let fresh_call = if d.asks_everything {
        d.callees.iter().any(|c| index.is_fresh_name(c))
    } else {
        fresh_ask.is_some()
    };
    let origin = d.sourced(index)
        || fresh_call
        || d.param_lambda_callees
            .iter()
            .any(|c| index.is_combinator_name(c));
    // A method implementing a type another file annotates (Temporal's
    // `@ActivityInterface`) is a boundary once that file is merged.
    let implements = d.implemented.iter().any(|t| index.has_type_boundary(t));
    let mint = (d.has_boundary || inferred || implements)
        && (d.library_mints
            || d.callees
                .iter()
                .any(|c| index.is_mint_name_from(c, &d.path)));
    if std::env::var_os("IDEMLINT_TRACE_CHECK").is_some() {
        let keyed = d.keyed(index);
        if (keyed && origin) || mint {
            let fresh_ask = fresh_ask.map(|c| &*c.callee);
            eprintln!(
                "check: {} keyed {keyed} sources {} sourced {} fresh {fresh_call} {fresh_ask:?} boundary {} inferred {:?} mints {:?}",
                d.path,
                d.has_sources,
                d.sourced(index),
                d.has_boundary,
                d.combinator_callees
                    .iter()
                    .find(|c| index.is_combinator_name(c)),
                d.callees
                    .iter()
                    .find(|c| index.is_mint_name_from(c, &d.path))
            );
        }
    }
    (d.keyed(index) && origin) || mint
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two-step view search reports the patterns a plain overlapping search does, on
    /// texts made of the patterns' pieces, overlapping and nested (prefixes, suffixes and
    /// words inside words, as `idempotency` in `idempotencykey`).
    #[test]
    fn view_search_finds_what_an_overlapping_search_finds() {
        let patterns: Vec<String> = [
            "idempotencykey",
            "dempotency",
            "idempotency",
            "uuid",
            "random",
            "randomstringutils",
            "rng",
            "keyid",
            "ab",
            "bab",
            "abab",
        ]
        .iter()
        .map(|p| p.to_string())
        .collect();
        let v = ViewSearch::new(&patterns).unwrap();
        let pieces = [
            "idem",
            "potency",
            "key",
            "id",
            "uu",
            "random",
            "stringutils",
            "r",
            "ng",
            "a",
            "b",
            " ",
            "x",
            ".",
            "ab",
        ];
        // A fixed pseudo-random sequence (xorshift), so the test is the same every run.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..3000 {
            let mut text = String::new();
            for _ in 0..(state % 12 + 1) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.push_str(pieces[(state % pieces.len() as u64) as usize]);
            }
            let mut want = vec![false; patterns.len()];
            for m in v.all.find_overlapping_iter(text.as_bytes()) {
                want[m.pattern().as_usize()] = true;
            }
            let mut got = vec![false; patterns.len()];
            v.each_match(text.as_bytes(), |p| got[p] = true);
            assert_eq!(got, want, "{text}");
        }
    }

    /// A long self-overlapping name from the scanned tree (`Keys.kkk…k()`) made the
    /// automaton's construction quadratic (64 KiB: 155 s); past a few KiB of patterns an
    /// NFA is built, and what it finds is the same.
    #[test]
    fn long_name_patterns_get_an_automaton_built_in_linear_time() {
        let long = vec!["k".repeat(64 * 1024), "charge".to_string()];
        let ac = build_ac(&long, false).unwrap();
        assert_eq!(ac.kind(), aho_corasick::AhoCorasickKind::ContiguousNFA);
        let text = format!("x.{}(); charge()", "k".repeat(64 * 1024));
        assert_eq!(ac.find_iter(&text).count(), 2);
        let short = build_ac(&["charge".to_string()], false).unwrap();
        assert_ne!(short.kind(), aho_corasick::AhoCorasickKind::ContiguousNFA);
    }

    fn scan(lang: Language, text: &str) -> FileWords {
        let p = Prefilter::new(&Catalogue::builtin());
        p.scan(lang, text, &mut ScanScratch::default())
    }

    /// A Rust clock or UUID source word needs its receiver right before the name, as the
    /// catalogue matches a Rust call: generated code with a `Timestamp` type and a `now`
    /// variant or comment elsewhere (async-stripe) has none. Anything unclear is a yes.
    #[test]
    fn rust_source_words_need_the_receiver_before_the_name() {
        let rs = |t: &str| scan(Language::Rust, t).source;
        for yes in [
            "fn f() { let t = Utc::now(); }",
            "fn f() { let t = chrono::Utc :: now(); }",
            "fn f() { let t = Utc::\n    now(); }",
            "fn f() { let t = Utc::<X>::now(); }",
            "fn f() { let t = Utc.now(); }",
            "fn f() { let t = Utc::/* why */now(); }",
            "fn f() { let t = Foo::<fn() -> Utc>::now(); }",
            "fn f() { let id = uuid::Uuid::new_v4(); }",
            "fn f() { let r = rand::thread_rng().gen::<u64>(); }",
        ] {
            assert!(rs(yes), "{yes}");
        }
        // Found by a break-it helper: the frontend undoes aliases and `r#`, a line
        // comment can sit between, and a called or qualified receiver ends in `)` or `>`.
        for yes in [
            "use uuid::Uuid as U;\nfn f() { let id = U::new_v4(); }",
            "use chrono::{Utc as Clock};\nfn f() { let t = Clock::now(); }",
            "fn f() { let id = uuid::Uuid::r#new_v4(); }",
            "fn f() { let id = uuid::Uuid // c\n    ::new_v4(); }",
            "fn f() { let t = Utc:: // c\n    now(); }",
            "fn f() { let t = clock::Instant().now(); }",
            "fn f() { let id = <crate::Stub as uuid::Uuid>::new_v4(); }",
            "use chrono::Utc/**/as U;\nfn f() { let t = U::now(); }",
            "use chrono::Utc // the clock\n    as U;\nfn f() { let t = U::now(); }",
            "use chrono::Utc\u{a0}as U;\nfn f() { let t = U::now(); }",
            "use chrono::Utc;\nuse clock::now as stamp;\nfn f() { let t = Utc::stamp(); }",
        ] {
            assert!(rs(yes), "{yes}");
        }
        for no in [
            "pub struct Timestamp(i64);\n/// Charged now.\nfn now() {}",
            "fn f() { let t = UtcX::now(); let u = Utc; }",
            "fn f() { let t = Instant::elapsed(); let now = 1; }",
            "pub struct Timestamp(i64);\nfn f() { let s = Schedule::now(); let a = Timestamp::as_u64(); }",
        ] {
            assert!(!rs(no), "{no}");
        }
        // Java keeps every other clause only: a static import names the owner elsewhere.
        assert!(
            scan(
                Language::Java,
                "import static java.time.Instant.*;\nclass A { Object t = now(); }"
            )
            .source
        );
    }

    /// A deterministic pseudo-random source (xorshift64): each call gives a number below
    /// its argument.
    fn xorshift(mut state: u64) -> impl FnMut(usize) -> usize {
        move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        }
    }

    /// The signature stage 0 keeps of `text`.
    fn sig_of(lang: Language, text: &str) -> TokenSig {
        thread_local! {
            static P: Prefilter = Prefilter::new(&Catalogue::builtin());
        }
        let mut scratch = ScanScratch::default();
        P.with(|p| p.scan(lang, text, &mut scratch));
        scratch.signature()
    }

    #[test]
    fn a_token_signature_never_rules_out_a_file_the_name_scan_matches() {
        // Deterministic pseudo-random texts over a small vocabulary, so names, pairs and
        // declarations are found in some and not in others.
        let vocab = [
            "getId",
            "Payout",
            "newKey",
            "fun",
            "fn",
            "class",
            "impl",
            "for",
            "String",
            "k",
            "x_1",
            "é",
            "\\u0067etId",
            "r#newKey",
            "(",
            ")",
            ".",
            " ",
            "\n",
            "{",
            "}",
            "// c\n",
            "=",
            "newKeys",
            "renewKey",
            "`getId`",
            "ïd",
        ];
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let set = |xs: &[&str]| -> BTreeSet<String> { xs.iter().map(|x| x.to_string()).collect() };
        let scans = [
            NameScan::new(&set(&["getId", "newKey"])),
            NameScan::of(&set(&[]), &set(&["Payout", "getId"]), &BTreeSet::new()),
            NameScan::of(
                &set(&[]),
                &set(&[]),
                &[("getId".to_string(), "Payout".to_string())]
                    .into_iter()
                    .collect(),
            ),
            NameScan::of(&set(&[]), &set(&[]), &BTreeSet::new()).with_named_for(
                &[("getId".to_string(), "~payout".to_string())]
                    .into_iter()
                    .collect(),
            ),
            // Words that are not single identifier tokens.
            NameScan::new(&set(&["x_1.k", "ïd", "é"])),
            // A name in reach of test code only.
            NameScan::new(&set(&["newKey", "getId"])).with_reach(
                &[(
                    "newKey".to_string(),
                    crate::index::caller_kind("src/test/A.java"),
                )]
                .into(),
            ),
        ];
        let (mut matched, mut ruled_out) = (0, 0);
        for _ in 0..4000 {
            let text: String = (0..next(40)).map(|_| vocab[next(vocab.len())]).collect();
            for lang in [Language::Java, Language::Kotlin, Language::Rust] {
                let sig = sig_of(lang, &text);
                for s in &scans {
                    if s.matches(lang, crate::index::caller_kind("src/main/A.java"), &text) {
                        matched += 1;
                        assert!(s.may_match(lang, &sig), "{lang:?} {text:?}");
                    } else if !s.may_match(lang, &sig) {
                        ruled_out += 1;
                    }
                }
            }
        }
        // Both kinds of file occur, and most files without the names are ruled out.
        assert!(matched > 1000 && ruled_out > 1000, "{matched} {ruled_out}");
    }

    #[test]
    fn a_token_signature_tells_present_tokens_from_absent_ones() {
        let text =
            "class PaymentService { String newKey() { return UUID.randomUUID().toString(); } }";
        let sig = sig_of(Language::Java, text);
        for t in [
            "PaymentService",
            "newKey",
            "UUID",
            "randomUUID",
            "toString",
            "class",
        ] {
            assert!(sig.may_contain(token_hash(t.as_bytes())), "{t}");
        }
        // Substrings and neighbours of tokens are not tokens.
        let absent = [
            "Payment",
            "Key",
            "random",
            "newKeys",
            "String newKey",
            "getId",
            "Refund",
        ];
        let found = absent
            .iter()
            .filter(|t| sig.may_contain(token_hash(t.as_bytes())))
            .count();
        assert!(found <= 1, "{found} of {absent:?} reported present");
        // A Java unicode escape is read decoded, as the frontend lowers it.
        let sig = sig_of(Language::Java, "String \\u0067etId() { }");
        assert!(sig.may_contain(token_hash(b"getId")));
    }

    #[test]
    fn token_words_are_found_at_identifier_boundaries_only() {
        // `Ulid` is a catalogue source word of kind Token, looked up by token.
        assert!(scan(Language::Rust, "let k = Ulid::new();").source);
        assert!(
            !scan(
                Language::Rust,
                "let k = MyUlid::new(); let u = Ulidx::new();"
            )
            .source
        );
    }

    #[test]
    fn jvm_declarations_are_told_from_uses_conservatively() {
        let decl_in = |text: &str, name: &str, kotlin: bool| {
            let start = text.find(name).unwrap();
            declared_jvm(
                text.as_bytes(),
                start,
                start + name.len(),
                &Default::default(),
                kotlin,
            )
        };
        let decl = |text: &str, name: &str| decl_in(text, name, false);
        let kt = |text: &str, name: &str| decl_in(text, name, true);
        // Kotlin: a keyword, type parameters or a receiver before the name declare it;
        // a value or type before it (Java's `Type name(`) does not.
        assert!(kt("override fun getId(): String", "getId"));
        assert!(kt("fun <T> retryIt(block: () -> T)", "retryIt"));
        assert!(kt("fun <T>\n  mint(x: T) = x", "mint"));
        assert!(kt("fun String.toKey() = this", "toKey"));
        assert!(kt("private val paymentSettings: Repo", "paymentSettings"));
        assert!(kt("data class Payout(val a: Int)", "Payout"));
        assert!(kt("fun /* c */ mint() = 1", "mint"));
        assert!(kt("fun `getId`()", "getId"));
        assert!(!kt("assertThat(v.isValid()).isFalse\n  check(e)", "check"));
        assert!(!kt("val a = b ?: c\n  check(x)", "check"));
        assert!(!kt("x.first()[0]\n  check(x)", "check"));
        // Unclear in Kotlin too: a character that is not ASCII before the name
        // (`fun <T>` and a no-break space), a backtick on the line before.
        assert!(kt(
            "suspend fun <T>\u{a0}resilient(b: () -> T): T",
            "resilient"
        ));
        assert!(kt(
            "val `q\"q` = 1; fun <T> // \"\nresilient(b: () -> T)",
            "resilient"
        ));
        // A Java comment does not nest: an earlier unclosed `/*` may start it.
        assert!(decl("public String /* ( /* */ keyFor(String id)", "keyFor"));
        assert!(decl("/* (\n /* */ String keyFor(String id)", "keyFor"));
        assert!(decl("assertThat(v.isValid()).isFalse\n  check(e)", "check"));
        // `//` in a string literal on the line before ends no comment; in a character
        // literal, after a block comment's delimiter, or in a Kotlin template it is
        // unclear, as it is in any file with a text block.
        assert!(!decl("  f(\"https://example.com\");\n  check(x)", "check"));
        assert!(!decl("  f(\"a\\\"//\");\n  check(x)", "check"));
        assert!(decl("  f(\"a\") // b\n  check(x)", "check"));
        assert!(decl("  String s = \"a\\\\\" // b\n  check(x)", "check"));
        assert!(decl("  f('\"') // \"\n  check(x)", "check"));
        assert!(decl("  f(\"${\"//\"}\")\n  check(x)", "check"));
        assert!(decl("  f(\"//\") /* x */\n  check(x)", "check"));
        assert!(decl("  f(\"//\n  check(x)", "check"));
        assert!(decl(
            "  s = \"\"\"\n x\"\"\";\n  f(\"https://example.com\");\n  check(x)",
            "check"
        ));
        // Declarations (and what cannot be told from one) are a yes.
        assert!(decl("public String getId() {", "getId"));
        assert!(decl("List<String> getIds(int n);", "getIds"));
        assert!(decl("String[] names(", "names"));
        assert!(decl("override fun getId(): String", "getId"));
        assert!(decl("fun <T> retryIt(block: () -> T)", "retryIt"));
        assert!(decl("fun String.toKey() = this", "toKey"));
        assert!(decl("val paymentSettings: Repo", "paymentSettings"));
        assert!(decl("class Payout {\n constructor(x: Int)", "Payout"));
        assert!(decl("data class Payout(val a: Int)", "Payout"));
        assert!(decl("String /* id */ getId(", "getId"));
        assert!(decl("String /** id */ /* x */ getId(", "getId"));
        assert!(decl(
            "class A {\n  /** The id. */\n  String getId();",
            "getId"
        ));
        // What comes before a Javadoc decides: a type's name after one is no declaration
        // of that name (`String` here), unless the comment cannot surely be told.
        assert!(!decl(
            "class A {\n  /** The id. */\n  String getId();",
            "String"
        ));
        assert!(!decl("int a;\n/* a */ /** b */\nString getId();", "String"));
        assert!(decl("x = \"/*\"; /* a */\nString getId();", "String"));
        assert!(decl("// see /* here\n */ String getId();", "String"));
        assert!(decl("/* a /* nested */ b */ String x(", "String"));
        assert!(decl("/** a */ String x(", "x"));
        assert!(decl("fun `getId`()", "getId"));
        // Uses are a no.
        assert!(!decl("return getId();", "getId"));
        assert!(!decl("x = order.getId();", "getId"));
        assert!(!decl("foo(getId())", "getId"));
        assert!(!decl("Foo f = new Foo(1);", "Foo("));
        assert!(!decl("int n = getId;", "getId"));
        assert!(!decl("if (a) b else getId()", "getId"));
        // A block comment's inner line, or an operand of `*`, declares nothing (a licence
        // header's ` * with the License` made every file match `with`).
        assert!(!decl("/*\n * with the License.\n */", "with"));
        assert!(!decl("val n = 2 *\n  with(x)", "with"));
        assert!(!decl("f(*with(x))", "with"));
        // A line comment's last character before the name's line is no context.
        assert!(decl("static String // a key *\nmint() {", "mint"));
        assert!(decl("static String // a key per call.\nmint() {", "mint"));
        assert!(decl(
            "fun // retried *\nresilient(block: () -> T): T",
            "resilient"
        ));
        // A lambda's arrow starts a body, not a declaration; generics still may.
        assert!(!decl(
            "xs.forEach { (a, b) ->\n  assertThat(a)",
            "assertThat"
        ));
        assert!(!decl("Runnable r = () -> mint();", "mint"));
        assert!(decl("fun <T>\n  mint(x: T) = x", "mint"));
        // A line that holds only a comment is skipped: what comes before it decides.
        assert!(!decl(
            "  )\n  // a known endpoint\n  assertThat(x)",
            "assertThat"
        ));
        assert!(!decl("  f(a)\n  // one\n\n  // two\n  check(x)", "check"));
        assert!(decl("  static String\n  // one\n  mint() {", "mint"));
        assert!(decl("fun\n// one\nmint() = 1", "mint"));
        assert!(decl("// the first line\nmint() {", "mint"));
        // A comment line that may close a block comment or a text block, or that a lone
        // CR ends, is not skipped (what follows on it may be code).
        assert!(decl(
            "  /* helpers (\n  // legacy */ static String\n  mint() {",
            "mint"
        ));
        assert!(decl("/* a (\n// b */ fun\nmint() = 1", "mint"));
        assert!(decl(
            "  s = \"\"\"\n  call(\n  // x \"\"\"; static String\n  mint() {",
            "mint"
        ));
        assert!(decl("  f(\n  // note\r  static String\n  mint() {", "mint"));
    }

    #[test]
    fn types_named_for_a_receiver_are_found_where_declared() {
        use Language::{Java, Kotlin, Rust};
        let cases: &[(Language, &str, &str, bool)] = &[
            // Exact (a receiver that is a call): the declared type's normalised name.
            (Java, "public final class RandomUuid {", "=randomuuid", true),
            (Java, "@interface Random_UUID {}", "=randomuuid", true),
            (
                Java,
                "class Charge { String toString() { return randomUuid; } }",
                "=randomuuid",
                false,
            ),
            // Either name containing the other (a named receiver).
            (
                Kotlin,
                "data class Value(val v: Int)",
                "~fromvalueopt",
                true,
            ),
            (Kotlin, "object FromValueOptions {", "~fromvalueopt", true),
            (Kotlin, "object : Value {", "~fromvalueopt", false),
            (
                Kotlin,
                "companion object {\n  /** The value. */\n  fun of() = 1",
                "=randomuuid",
                false,
            ),
            (Kotlin, "class /* a */ Charge", "=randomuuid", true),
            (Java, "class\u{a0}Charge", "=randomuuid", true),
            // An unnamed Kotlin companion is `Companion`.
            (Kotlin, "companion object {", "~companionkeys", true),
            // A backticked Kotlin type name is unclear; backticks elsewhere (KDoc) are
            // nothing.
            (Kotlin, "class `Random Uuid` {", "=randomuuid", true),
            (
                Kotlin,
                "/** Returns `randomUuid`. */\nclass Charge {",
                "=randomuuid",
                false,
            ),
            // Rust: the self type of an `impl` (after its `for`), or a trait.
            (
                Rust,
                "impl FromValueOpt for Charge {",
                "~fromvalueopt",
                false,
            ),
            (
                Rust,
                "impl<T> FromValueOpt for Option<T> {",
                "~optional",
                true,
            ),
            (Rust, "impl FromValueOpt {", "~fromvalueopt", true),
            (
                Rust,
                "pub trait FromValueOpt: Sized {",
                "~fromvalueopt",
                true,
            ),
            (
                Rust,
                "impl<F: for<'a> Fn(&'a str)> Tr for FromValueOpt {",
                "~fromvalueopt",
                true,
            ),
            (
                Rust,
                "impl Charge where T: for<'a> FromValueOpt<'a> {",
                "~fromvalueopt",
                false,
            ),
            // What cannot be read is a yes: a comment where the name is, a backticked name.
            (Java, "class /* x */ RandomUuid {", "=randomuuid", true),
            (
                Rust,
                "impl Tr /* for */ for Charge {",
                "~fromvalueopt",
                true,
            ),
            (Kotlin, "class `Random Uuid` {", "=randomuuid", true),
            // Found by a break-it run: a const generic's block, a higher-ranked type in the
            // self type, a raw name, Unicode whitespace and a byte-order mark.
            (
                Rust,
                "impl Tr<{ 1 + 1 }> for KeyFactory {",
                "~keyfactory",
                true,
            ),
            (
                Rust,
                "impl KeyFactory<for<'z> fn(&'z u8)> {",
                "~keyfactory",
                true,
            ),
            (Rust, "pub trait r#IdGen {", "~idgen", true),
            (Rust, "impl\u{2028}KeyFactory {", "~keyfactory", true),
            (Kotlin, "\u{feff}object KeyFactory {", "~keyfactory", true),
            (Java, "public class\u{a0}KeyFactory {", "~keyfactory", true),
        ];
        for (lang, text, spec, want) in cases {
            let got = NameScan::may_declare_type_named(*lang, text.as_bytes(), spec);
            assert_eq!(got, *want, "{lang:?} {text:?} {spec}");
        }
    }

    #[test]
    fn only_receivers_that_decide_the_candidates_are_named_for() {
        let r = |callee: &str, receiver: Option<&str>, ty: Option<&str>| CallRef {
            callee: Name::from(callee),
            arity: 0,
            receiver: receiver.map(Name::from),
            receiver_type: ty.map(Name::from),
        };
        assert_eq!(
            named_for_of(&r("toString", Some("randomUUID()"), None)).as_deref(),
            Some("=randomuuid")
        );
        assert_eq!(
            named_for_of(&r("from_value", Some("FromValueOpt"), None)).as_deref(),
            Some("~fromvalueopt")
        );
        // A name that resolves by name, a getter, `this`, a declared type, a short name.
        assert_eq!(named_for_of(&r("charge", Some("client"), None)), None);
        assert_eq!(
            named_for_of(&r("toString", Some("getClient()"), None)),
            None
        );
        assert_eq!(named_for_of(&r("toString", Some("this"), None)), None);
        assert_eq!(named_for_of(&r("toString", Some("key"), Some("Key"))), None);
        assert_eq!(named_for_of(&r("toString", Some("id"), None)), None);
    }

    #[test]
    fn sources_need_their_most_selective_clause() {
        assert!(scan(Language::Java, "x = UUID.randomUUID();").source);
        // `Ulid::new()` is scanned for `Ulid`, not for the common `new`.
        assert!(scan(Language::Rust, "let x = Ulid::new();").source);
        assert!(!scan(Language::Rust, "let x = Vec::new();").source);
        // Not a token, and no other source's word.
        assert!(!scan(Language::Java, "x = UUID.nameUUIDFromBytes(b);").source);
        assert!(!scan(Language::Java, "x = y.fromUUIDs();").source);
        // Wrong language: `new_v4` is a Rust source.
        assert!(!scan(Language::Java, "Uuid.new_v4()").source);
        assert!(scan(Language::Rust, "let k = Uuid::new_v4();").source);
        // `receiver_contains` is case-insensitive.
        assert!(scan(Language::Rust, "let n = THREAD_RNG.gen();").source);
        assert!(scan(Language::Rust, "let n = rng.r#gen();").source);
        assert!(!scan(Language::Rust, "let n = generic.gen();").source);
    }

    #[test]
    fn sinks_survive_case_separators_and_escapes() {
        for text in [
            "val idempotencyKey = k",
            "let IDEMPOTENCY_KEY = k;",
            "h.header(\"Idempotency-Key\", k)",
            "h.header(\"X-IDEMPOTENCY-KEY\", k)",
            "let idem_potency_key = k;",
        ] {
            assert!(scan(Language::Kotlin, text).sink, "{text}");
        }
        // The decoded value of a Rust literal is a key header.
        assert!(scan(Language::Rust, r#"h.insert("x-\x69dempotency-key", v);"#).sink);
        assert!(scan(Language::Rust, r#"h.insert("x-\u{69}dempotency-key", v);"#).sink);
        // Kelvin sign lower-cases to `k`.
        assert!(scan(Language::Kotlin, "val idempotency\u{212A}ey = k").sink);
        assert!(scan(Language::Rust, "RequestStrategy::Idempotent(k)").sink);
        assert!(!scan(Language::Rust, "Idempotent(k)").sink);
        // A transaction-id path variable of a `@PUT` (Retrofit), in Java and Kotlin.
        let txn =
            "@PUT(\"rooms/{roomId}/send/{type}/{txnId}\") fun send(@Path(\"txnId\") t: String)";
        assert!(scan(Language::Kotlin, txn).sink);
        assert!(!scan(Language::Kotlin, &txn.replace("@PUT", "@POST")).sink);
        assert!(!scan(Language::Rust, "let txn_id = connector_txn_id(&req);").sink);
        // `idempotency` in a name read as a header-name constant (classify's
        // `names_key_header`), not in prose or other names.
        for (lang, text) in [
            (Language::Java, "r.header(Headers.IDEMPOTENCY, k);"),
            (Language::Rust, "h.insert(IDEM_POTENCY_HEADER, v);"),
            (Language::Kotlin, "r.header(idempotencyHeaderName, k)"),
            (Language::Kotlin, "r.header(`idempotency header`, k)"),
            (Language::Java, "r.header(Idempot\\u0065ncyHeader, k);"),
            (Language::Java, "r.header(idempotenceName, k);"),
        ] {
            assert!(scan(lang, text).sink, "{text}");
        }
        for (lang, text) in [
            (
                Language::Rust,
                "let o = set_default_idempotency(options, true);",
            ),
            (Language::Rust, "/// Retried for idempotency.\nfn f() {}"),
            (Language::Java, "b.withIdempotency(true).header(name, v);"),
            (Language::Kotlin, "val idempotency = 1 // the header"),
        ] {
            assert!(!scan(lang, text).sink, "{text}");
        }
        // A SpEL key expression of `@Idempotent` that reads a clock (rules::time_in_key),
        // however it is spaced; not one without a clock, nor the word in prose.
        for text in [
            "@Idempotent(keyExpression = \"#id + T(java.time.Instant).now()\")",
            "@Idempotent(key = \"#id + T(System). currentTimeMillis ()\")",
            "@Idempotent(\"T(System).nanoTime()\")",
        ] {
            assert!(scan(Language::Java, text).sink, "{text}");
            assert!(scan(Language::Kotlin, text).sink, "{text}");
        }
        assert!(!scan(Language::Java, "@Idempotent(keyExpression = \"#id\")").sink);
        // Any annotation whose name holds `idempot`, as the rule reads it.
        for name in ["Idempotency", "IdempotOp"] {
            let text = format!("@{name}(key = \"#id + T(System).currentTimeMillis()\")");
            assert!(scan(Language::Java, &text).sink, "{text}");
        }
        assert!(
            !scan(
                Language::Kotlin,
                "/** Idempotent. */ fun close() { onClosedIdempotent(); val t = 1 }"
            )
            .sink
        );
        assert!(!scan(Language::Java, "String requestId = UUID.randomUUID();").sink);
    }

    /// The view (without escape decoding) character by character, as the
    /// word-at-a-time path must give it.
    fn view_by_chars(text: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for c in text.chars() {
            if c == '_' || c == '-' || c == '`' {
                continue;
            }
            for l in c.to_lowercase() {
                let mut b = [0u8; 4];
                out.extend_from_slice(l.encode_utf8(&mut b).as_bytes());
            }
        }
        out
    }

    #[test]
    fn normalised_view_word_at_a_time_equals_byte_at_a_time() {
        let alphabet = [
            "A",
            "Z",
            "a",
            "z",
            "@",
            "[",
            "`",
            "{",
            "_",
            "-",
            "0",
            "9",
            " ",
            "\n",
            "Idempotency",
            "KEY",
            "é",
            "İ",
            "ẞ",
            "\u{7f}",
            "~",
            "PaymentIntents()",
        ];
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut out = Vec::new();
        for _ in 0..3000 {
            let text: String = (0..next(60))
                .map(|_| alphabet[next(alphabet.len())])
                .collect();
            normalized_view(&text, false, &mut out);
            assert_eq!(out, view_by_chars(&text), "{text:?}");
        }
        for b in 0u8..0x80 {
            let w = u64::from_le_bytes([b; 8]);
            assert_eq!(
                ascii_lowercase_word(w),
                u64::from_le_bytes([b.to_ascii_lowercase(); 8])
            );
            assert!(has_byte(w, b) && !has_byte(w, b ^ 1));
        }
    }

    #[test]
    fn normalised_view_decodes_rust_escapes() {
        let mut out = Vec::new();
        normalized_view("A_b-C\\x41\\u{42}\\\n   d", true, &mut out);
        assert_eq!(String::from_utf8(out.clone()).unwrap(), "abcabd");
        normalized_view("A_b-C\\x41", false, &mut out);
        assert_eq!(String::from_utf8(out.clone()).unwrap(), "abc\\x41");
        // Kotlin backticks go, as the frontend drops them from names.
        normalized_view("stripe.v1().`refunds`().create(p)", false, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "stripe.v1().refunds().create(p)"
        );
    }

    #[test]
    fn a_backticked_kotlin_receiver_is_found_as_the_frontend_reads_it() {
        // `receiver_contains = "refunds()"` (rules/stripe.toml): the Kotlin frontend reads
        // `` `refunds`() `` as `refunds()`, so the scan must find it too.
        let text = "class R(val stripe: com.stripe.StripeClient, val retry: Retry) {\n\
                    fun refund(p: P) = retry.executeSupplier { stripe.v1().`refunds`().create(p) }\n}\n";
        assert!(scan(Language::Kotlin, text).sink, "{text}");
    }

    #[test]
    fn names_are_tokens_and_synthetic_names_match_everything() {
        let names: BTreeSet<String> = ["newKey".to_string()].into();
        let s = NameScan::new(&names);
        assert!(s.matches(
            Language::Java,
            crate::index::CALLERS_ALL,
            "String k = newKey();"
        ));
        assert!(!s.matches(
            Language::Java,
            crate::index::CALLERS_ALL,
            "String k = renewKey();"
        ));
        assert!(!s.matches(
            Language::Java,
            crate::index::CALLERS_ALL,
            "String k = newKeys();"
        ));
        let names: BTreeSet<String> = ["invoke".to_string()].into();
        let s = NameScan::new(&names);
        assert!(s.matches(Language::Kotlin, crate::index::CALLERS_ALL, "val k = f()()"));
        assert!(!s.matches(Language::Java, crate::index::CALLERS_ALL, "f();"));
    }

    #[test]
    fn a_name_in_reach_of_test_code_counts_elsewhere_only_where_declared() {
        use crate::index::caller_kind;
        let names: BTreeSet<String> = ["build".to_string(), "charge".to_string()].into();
        let test_only = caller_kind("src/test/java/Fixtures.java");
        let s = NameScan::new(&names).with_reach(&[("build".to_string(), test_only)].into());
        let call = "class Job { void run(B b) { b.build(); } }";
        let decl = "class B { Charge build() { return null; } }";
        let main_java = caller_kind("src/main/java/Job.java");
        let test_kt = caller_kind("src/test/kotlin/JobTest.kt");
        // Main code's call of a test fixture's name cannot reach it: not wanted.
        assert!(!s.matches(Language::Java, main_java, call));
        // Its declarations are wanted everywhere (the name is complete once scanned).
        assert!(s.matches(Language::Java, main_java, decl));
        assert_eq!(s.all_matching(Language::Java, main_java, decl), vec![0]);
        assert!(s.all_matching(Language::Java, main_java, call).is_empty());
        // Test code's call is wanted; so is any mention of a name without a reach.
        assert!(s.matches(Language::Java, test_only, call));
        assert!(s.matches(Language::Kotlin, test_kt, "fun t(b: B) = b.build()"));
        assert!(s.matches(Language::Java, main_java, "void run(P p) { p.charge(); }"));
        // A Rust file outside the reach: only `fn build` counts.
        let rust_main = caller_kind("src/lib.rs");
        assert!(!s.matches(Language::Rust, rust_main, "fn f(b: B) { b.build(); }"));
        assert!(s.matches(Language::Rust, rust_main, "impl B { fn build(&self) {} }"));
    }
}
