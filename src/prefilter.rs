//! Which files need a parse: a literal prefilter over each file's bytes.
//!
//! Parsing is most of idemlint's cost, and in most code bases almost no file can matter:
//! a finding needs an idempotency-key *sink* and an ephemeral *origin* in one file. This
//! module decides, from the bytes alone, which files [`crate::check`] parses. It is a
//! separate, replaceable step: `check` asks it three questions and `--no-prefilter`
//! replaces every answer by "yes".
//!
//! 1. [`Prefilter::scan`] (every file, once): does the file contain a catalogue *source*
//!    word, a *sink* word, or a ShedLock word? One Aho-Corasick pass over the raw bytes
//!    (ASCII case-insensitive, overlapping, each hit then checked for case and identifier
//!    boundaries as its word requires) and one over the file's *normalised view*
//!    ([`normalized_view`]: lower-cased, `_` and `-` removed, Rust string escapes decoded).
//! 2. [`NameScan`] (later rounds, files not parsed yet): does the file contain, as a token,
//!    one of the names pass 1 found ([`demanded_names`]): functions that mint a key, take a
//!    key parameter or read a key header; the callees a key can come from (those the value
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
//! Kotlin's `invoke` for `f()()` and the empty callee of Rust's `(f)()`
//! ([`SYNTHETIC_CALLEES`]; nameless functions are not indexed); `tests/prefilter.rs` checks
//! this on every fixture. Rust string literal values have their escapes decoded, which the
//! normalised view also does. Given that:
//!
//! - A *source* needs a call whose callee is one of its entry's `callee` names, whose
//!   receiver's last segment is one of `receiver` (unless `free`), and whose lower-cased
//!   receiver contains one of `receiver_contains`: each is a token or an ASCII
//!   case-insensitive substring of the file, so each of the entry's word clauses hits (the
//!   scan checks only the most selective one, a weaker condition). A `callee_glob` is
//!   checked through its longest literal part, which every matching callee contains.
//! - A *sink* needs a name whose normalised form contains a `[keys] normalized_names`
//!   entry (bindings, assignments, fields, named arguments, key-named setters, key
//!   parameters), a header literal equal (ASCII case-insensitively) to a `header_names`
//!   entry (or a dashed header literal whose normalised form contains a key name), a
//!   path-variable literal naming a `[header_param] path_names` entry, an identifier whose
//!   normalised form contains `idempotency` (a header-name constant), a type of a `[keys]
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
//!   what it explores with any answers (a fresh call ends a path), so the callees pass 1
//!   records ([`FileDemand::asks`], [`FileDemand::arg_asks`]; every callee when the step
//!   budget ran out) cover pass 2's questions; they are in N, so every declaration of them
//!   is in P, and so is every declaration of a name those declarations return a call of
//!   (the fixpoint decides freshness by name), by induction over its iterations (each
//!   declaration's state depends only on its own file and on the
//!   declarations of the names it calls). The index answers a call from the declarations
//!   it may refer to (by receiver, file, type and language); for a special name every
//!   declaration is parsed, so that choice is the same too. Registrations, retrying interceptors and `call.clone()` sites are
//!   only read for a file with an interceptor boundary and a key flow: such a file has a
//!   sink word or calls a key-parameter function, so it is in P and its interceptor types,
//!   the types registered beside them and `clone` are in N; a file outside P therefore
//!   registers none of them, declares none of them and has no `clone`. Whether the project
//!   retries calls anywhere (any retry boundary, even a hand-written loop) is settled by
//!   parsing further files until one does, when such an interceptor exists and no parsed
//!   file says so ([`needs_retry_evidence`]). Functions that read a key header have key
//!   words, and their names are in N like the other special names. ShedLock's
//!   enabling annotation and `LockProvider` suffix are seed words. An inferred retry scope
//!   (a lambda given to a project retry combinator) changes findings only in a file with a
//!   key flow or a minting call, which is in P; its possible combinator callees are in N,
//!   and so are the callees their declarations pass a parameter on to, transitively, so
//!   every declaration deciding whether a combinator retries is in P. Finally a file
//!   outside P has no finding: that needs a sink (word or key-parameter call, in N), or a
//!   call of a minting function (in N).
//!
//! - Suppressions: a file that mentions `idemlint` is parsed and checked in any case
//!   ([`mentions_idemlint`]), since an unused suppression is reported on its own.
//!
//! `tests/prefilter.rs` runs every fixture and a generated project both ways and compares
//! the findings; the CLI offers `--no-prefilter`. Parse errors are reported only for files
//! that are parsed, so a broken file that cannot matter is not reported unless
//! `--no-prefilter` is given; files that cannot be read or are not UTF-8 are always
//! reported (every file is read).

use std::collections::BTreeSet;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

use crate::catalogue::{CallMatch, Catalogue};
use crate::classify::FileFacts;
use crate::index::{FileSummary, ProjectIndex};
use crate::model::{FileModel, Language};

/// Callee names a frontend records without the name appearing in the text, per language:
/// Kotlin names the call of a non-identifier callee (`f()()`, `(g)()`) `invoke`; Rust
/// records the empty name for `(f)()`. A name in this list matches every file of the
/// language.
pub const SYNTHETIC_CALLEES: &[(&str, Language)] = &[
    ("invoke", Language::Kotlin),
    ("", Language::Rust),
    ("", Language::Kotlin),
    ("", Language::Java),
];

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
    /// Pattern `i` of `raw` stands for these raw words.
    raw_patterns: Vec<Vec<usize>>,
    raw: Option<AhoCorasick>,
    norm_words: Vec<String>,
    /// Pattern `i` of `norm` is normalised word `norm_patterns[i]`.
    norm_patterns: Vec<usize>,
    norm: Option<AhoCorasick>,
    sources: Vec<Condition>,
    sinks: Vec<Condition>,
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
            let raw = m
                .receiver
                .iter()
                .map(|r| self.raw(r, WordKind::Token))
                .collect();
            clauses.push(Clause {
                raw,
                norm: Vec::new(),
            });
        }
        if !m.receiver_contains.is_empty() && m.receiver_contains.iter().all(|r| !r.is_empty()) {
            let raw = m
                .receiver_contains
                .iter()
                .map(|r| self.raw(r, WordKind::CaseInsensitive))
                .collect();
            clauses.push(Clause {
                raw,
                norm: Vec::new(),
            });
        }
        clauses
    }
}

/// The longest `*`-free part of a glob: every callee the glob matches contains it.
fn longest_literal(glob: &str) -> &str {
    glob.split('*').max_by_key(|p| p.len()).unwrap_or("")
}

/// Lower-cases (Unicode, as [`crate::catalogue::normalize_name`] does) and drops `_` and
/// `-`, appending to `out`. With `decode_escapes` (Rust), `\x41`, `\u{41}`, `\n`-style
/// escapes and `\`-newline continuations are decoded first, as `syn` does for string
/// literal values; doing so over the whole text keeps every literal's decoded value a
/// substring, because no escape can start outside a literal and end inside it.
pub fn normalized_view(text: &str, decode_escapes: bool, out: &mut Vec<u8>) {
    let bytes = text.as_bytes();
    // Written in place: ASCII bytes shrink or stay; a non-ASCII character may grow when
    // lower-cased, and then the buffer is grown first.
    out.clear();
    out.resize(bytes.len() + 8, 0);
    let mut j = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii() && !(decode_escapes && b == b'\\') {
            out[j] = b.to_ascii_lowercase();
            j += usize::from(b != b'_' && b != b'-');
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
        if c == '_' || c == '-' {
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

fn build_ac(patterns: &[String], ascii_ci: bool) -> Option<AhoCorasick> {
    if patterns.is_empty() {
        return None;
    }
    // Patterns are short literals from the catalogue; building cannot fail short of an
    // absurd size, in which case scanning falls back to "everything matches".
    AhoCorasickBuilder::new()
        .match_kind(MatchKind::Standard)
        .ascii_case_insensitive(ascii_ci)
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
        for s in &cat.sources {
            let clauses = b.call_clauses(&s.call);
            sources.push(Condition {
                langs: langs_of(&s.call),
                clauses,
            });
        }
        let mut sinks = Vec::new();
        // Key names, the hard-coded `idempotency` of header-name constants, header names.
        let mut norm = Vec::new();
        for k in &cat.keys.normalized_names {
            if !k.is_empty() {
                norm.push(b.norm(k));
            }
        }
        norm.push(b.norm("idempotency"));
        // Typed key fields are sinks only on their types: a file must name one.
        for t in cat.keys.typed_fields.iter().flat_map(|t| &t.types) {
            norm.push(b.norm(&crate::catalogue::normalize_name(t)));
        }
        // Transaction-id path variables (`@Path("txnId")` of a `@PUT`) are key parameters.
        for h in cat
            .keys
            .header_names
            .iter()
            .chain(&cat.header_param.path_names)
        {
            let n = crate::catalogue::normalize_name(h.trim());
            if !n.is_empty() {
                norm.push(b.norm(&n));
            }
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
        for c in &cat.call_sinks {
            let clauses = b.call_clauses(&c.call);
            sinks.push(Condition {
                langs: langs_of(&c.call),
                clauses,
            });
        }
        // A library call that mints its own key is a sink and an origin at once.
        for c in &cat.minting_calls {
            let clauses = b.call_clauses(&c.call);
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
        // Only the words of the clauses kept are scanned for.
        let mut used_raw = vec![false; b.raw_words.len()];
        let mut used_norm = vec![false; b.norm_words.len()];
        for c in sources.iter().chain(&sinks).chain(&shedlock) {
            for cl in &c.clauses {
                cl.raw.iter().for_each(|w| used_raw[*w] = true);
                cl.norm.iter().for_each(|w| used_norm[*w] = true);
            }
        }
        // One Aho-Corasick pattern per distinct lower-cased word.
        let mut patterns: Vec<String> = Vec::new();
        let mut raw_patterns: Vec<Vec<usize>> = Vec::new();
        for (i, (w, _)) in b.raw_words.iter().enumerate() {
            if !used_raw[i] {
                continue;
            }
            let lw = w.to_ascii_lowercase();
            match patterns.iter().position(|p| *p == lw) {
                Some(p) => raw_patterns[p].push(i),
                None => {
                    patterns.push(lw);
                    raw_patterns.push(vec![i]);
                }
            }
        }
        let norm_patterns: Vec<usize> = (0..b.norm_words.len()).filter(|i| used_norm[*i]).collect();
        let norm_texts: Vec<String> = norm_patterns
            .iter()
            .map(|i| b.norm_words[*i].clone())
            .collect();
        Prefilter {
            raw: build_ac(&patterns, true),
            raw_patterns,
            raw_words: b.raw_words,
            norm: build_ac(&norm_texts, false),
            norm_patterns,
            norm_words: b.norm_words,
            sources,
            sinks,
            shedlock,
        }
    }

    /// Scans one file's text. `scratch` is a reusable buffer for the normalised view.
    pub fn scan(&self, language: Language, text: &str, scratch: &mut Vec<u8>) -> FileWords {
        let bytes = text.as_bytes();
        let mut raw_hit = vec![false; self.raw_words.len()];
        match &self.raw {
            Some(ac) => {
                for m in ac.find_overlapping_iter(bytes) {
                    let (s, e) = (m.start(), m.end());
                    for &w in &self.raw_patterns[m.pattern().as_usize()] {
                        if raw_hit[w] {
                            continue;
                        }
                        let (word, kind) = &self.raw_words[w];
                        raw_hit[w] = match kind {
                            WordKind::CaseInsensitive => true,
                            WordKind::Substring => &bytes[s..e] == word.as_bytes(),
                            WordKind::Token => {
                                &bytes[s..e] == word.as_bytes() && at_boundaries(bytes, s, e)
                            }
                        };
                    }
                }
            }
            None => raw_hit.iter_mut().for_each(|h| *h = true),
        }

        let mut norm_hit = vec![false; self.norm_words.len()];
        match &self.norm {
            Some(ac) => {
                let mut views = vec![false];
                if language == Language::Rust && memchr::memchr(b'\\', bytes).is_some() {
                    views.push(true);
                }
                for decode in views {
                    normalized_view(text, decode, scratch);
                    for m in ac.find_overlapping_iter(scratch.as_slice()) {
                        norm_hit[self.norm_patterns[m.pattern().as_usize()]] = true;
                    }
                }
            }
            None => norm_hit.iter_mut().for_each(|h| *h = true),
        }
        let holds = |conds: &[Condition]| {
            conds.iter().any(|c| {
                (c.langs.is_empty() || c.langs.contains(&language))
                    && c.clauses.iter().all(|cl| {
                        cl.raw.iter().any(|w| raw_hit[*w]) || cl.norm.iter().any(|w| norm_hit[*w])
                    })
            })
        };
        FileWords {
            source: holds(&self.sources),
            sink: holds(&self.sinks),
            shedlock: holds(&self.shedlock),
            suppression: mentions_idemlint(text),
        }
    }
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
    names: Vec<String>,
    ac: Option<AhoCorasick>,
    /// Languages whose every file matches (a synthetic callee is among the names).
    all_of: Vec<Language>,
}

impl NameScan {
    /// Compiles `names`; empty and synthetic names make every file of their language match.
    pub fn new(names: &BTreeSet<String>) -> NameScan {
        let mut all_of = Vec::new();
        for (n, l) in SYNTHETIC_CALLEES {
            if names.contains(*n) && !all_of.contains(l) {
                all_of.push(*l);
            }
        }
        let names: Vec<String> = names.iter().filter(|n| !n.is_empty()).cloned().collect();
        NameScan {
            ac: build_ac(&names, false),
            names,
            all_of,
        }
    }

    /// True when there is nothing to look for.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.all_of.is_empty()
    }

    /// True when `text` contains one of the names as a token.
    pub fn matches(&self, language: Language, text: &str) -> bool {
        if self.all_of.contains(&language) {
            return true;
        }
        let bytes = text.as_bytes();
        match &self.ac {
            Some(ac) => ac
                .find_overlapping_iter(bytes)
                .any(|m| at_boundaries(bytes, m.start(), m.end())),
            None => !self.names.is_empty(),
        }
    }
}

/// What pass 1 keeps of a parsed file besides its [`FileSummary`]: the names later rounds
/// may look for, and the facts [`needs_check`] decides on. Small: names, not models.
#[derive(Clone, Debug, Default)]
pub struct FileDemand {
    /// Interceptor types declared here whose registrations matter if this file can have a
    /// finding.
    pub interceptor_types: Vec<String>,
    /// Types registered here (whether they retry matters next to a demanded one).
    pub registered_types: Vec<String>,
    /// An interceptor boundary is here (the first `call.clone()` site may be quoted).
    pub interceptor: bool,
    /// The file has a catalogue sink.
    pub has_sinks: bool,
    /// The file has a catalogue source, or a retry loop / `repeat` whose counter can be one.
    pub has_sources: bool,
    /// The file calls a library function that mints its own key (`[[minting_call]]`).
    pub library_mints: bool,
    /// The file has an attempt boundary.
    pub has_boundary: bool,
    /// Every callee name, sorted and deduplicated.
    pub callees: Vec<String>,
    /// Callees whose result the value flows of this file's sinks pass through (the calls
    /// a key can come from), sorted and deduplicated: whether they return a fresh value
    /// decides findings here.
    pub asks: Vec<String>,
    /// Per callee: the callees the flows of its positional arguments pass through. They
    /// matter when the callee has a key parameter (its arguments are then sinks).
    pub arg_asks: Vec<(String, Vec<String>)>,
    /// A flow query ran out of budget while `asks` was computed: every callee counts as
    /// asked.
    pub asks_everything: bool,
    /// Callees that may be project retry combinators: calls given a lambda that no
    /// catalogue entry classified, and calls a function passes one of its parameters to
    /// (wrappers), minus [`crate::index::NOT_COMBINATORS`]. Their declarations decide
    /// whether the lambda is a retry scope.
    pub combinator_callees: Vec<String>,
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v.dedup();
    v
}

impl FileDemand {
    /// Extracts the demand of one analysed file.
    pub fn of(
        model: &FileModel,
        facts: &FileFacts,
        summary: &FileSummary,
        cat: &Catalogue,
    ) -> FileDemand {
        let mut interceptor_types: Vec<String> = Vec::new();
        let mut interceptor = false;
        for b in facts.boundaries.iter().flatten() {
            if b.kind == crate::catalogue::BoundaryKind::Interceptor {
                interceptor = true;
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
        let mut combinator_callees: Vec<String> = Vec::new();
        // Inherited methods a scheduled method calls (`super.run()`): their declarations
        // decide which overrides run per tick (`index::apply_template_hooks`).
        for (i, b) in facts.boundaries.iter().enumerate() {
            if b.as_ref()
                .is_some_and(|b| b.kind == crate::catalogue::BoundaryKind::Scheduler)
            {
                for call in model.calls.iter().filter(|c| model.is_within(c.scope, i)) {
                    if crate::catalogue::receiver_text(call).as_deref() == Some("super") {
                        combinator_callees.push(call.callee.clone());
                    }
                }
            }
        }
        for call in &model.calls {
            let takes_lambda = call.args.iter().any(|a| {
                a.lambda.is_some_and(|l| facts.boundaries[l].is_none())
                    || (a.lambda.is_none() && model.values[a.value].ident.is_some())
            });
            if takes_lambda && !crate::index::NOT_COMBINATORS.contains(&call.callee.as_str()) {
                combinator_callees.push(call.callee.clone());
            }
        }
        for f in &summary.functions {
            for pp in &f.passes_params {
                combinator_callees.push(pp.callee.clone());
            }
        }
        // The calls the flows from each sink (and from each positional argument, a sink
        // when its callee has a key parameter) ask about. With no answer from the oracle
        // a flow explores at least as far as with any answers (a fresh call ends a path),
        // so these cover what pass 2 asks, unless the step budget ran out.
        let flow = crate::flow::Flow::new(model, cat);
        let was_exhausted = crate::flow::budget_exhausted();
        crate::flow::reset_budget();
        let rec = crate::flow::Recorder::default();
        for sink in &facts.sinks {
            flow.origins(sink.value, &rec);
        }
        let asks = sorted(rec.asked.into_inner().into_iter().map(|(c, _)| c).collect());
        let mut by_callee: std::collections::BTreeMap<&str, BTreeSet<String>> = Default::default();
        for call in &model.calls {
            let rec = crate::flow::Recorder::default();
            for arg in call.args.iter().filter(|a| a.name.is_none()) {
                let v = &model.values[arg.value];
                if v.atoms
                    .iter()
                    .any(|a| !matches!(a, crate::model::Atom::Source(_)))
                {
                    flow.origins(arg.value, &rec);
                }
            }
            let asked = rec.asked.into_inner();
            if !asked.is_empty() {
                by_callee
                    .entry(call.callee.as_str())
                    .or_default()
                    .extend(asked.into_iter().map(|(c, _)| c));
            }
        }
        let arg_asks = by_callee
            .into_iter()
            .map(|(c, a)| (c.to_string(), a.into_iter().collect()))
            .collect();
        let asks_everything = crate::flow::budget_exhausted();
        if was_exhausted {
            // Leave the thread's flag as pass 1 found it.
            crate::flow::mark_exhausted();
        }
        FileDemand {
            asks,
            arg_asks,
            asks_everything,
            combinator_callees: sorted(combinator_callees),
            interceptor_types: sorted(interceptor_types),
            registered_types: sorted(registered_types),
            interceptor,
            has_sinks: !facts.sinks.is_empty(),
            // An attempt counter (`for attempt in 1..=3` in a retry loop, `repeat(n) {
            // attempt -> .. }`) is an origin without a catalogue source.
            has_sources: !model.sources.is_empty()
                || model.scopes.iter().any(|s| match &s.kind {
                    crate::model::ScopeKind::Loop(l) => l.is_retry(),
                    _ => false,
                })
                || model.calls.iter().any(|c| c.callee == "repeat"),
            library_mints: !facts.library_mints.is_empty(),
            has_boundary: facts.boundaries.iter().any(Option::is_some),
            callees: sorted(model.calls.iter().map(|c| c.callee.clone()).collect()),
        }
    }

    /// A sink here, or a call of a function with a key parameter: key flows can start here.
    fn keyed(&self, index: &ProjectIndex) -> bool {
        self.has_sinks || self.callees.iter().any(|c| index.has_key_params(c))
    }
}

/// The names files outside P are scanned for (step 2 of the module docs), from the parsed
/// files' demands and the index built from them:
/// - key-minting, key-parameter and key-header-reading functions (callers may have
///   findings or mint; every declaration of such a name must be seen);
/// - the callees a key can come from: those the flows of the parsed files' sinks pass
///   through ([`FileDemand::asks`], and [`FileDemand::arg_asks`] of calls of key-parameter
///   functions), those the sinks inside functions pass through (which decide whether a
///   function mints), and, transitively, the callees whose results the declarations of
///   those names return ([`crate::index::FnDecl::fresh_via`]); every declaration of such a
///   name must be seen, fresh or not (one that is not keeps the name from being fresh);
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
) -> BTreeSet<String> {
    let mut out: BTreeSet<String> = index.key_names().map(str::to_string).collect();
    let mut types: BTreeSet<&str> = BTreeSet::new();
    let mut fresh: Vec<&str> = Vec::new();
    let mut combinators: Vec<&str> = Vec::new();
    for d in demands.clone() {
        if d.asks_everything {
            fresh.extend(d.callees.iter().map(String::as_str));
        } else {
            fresh.extend(d.asks.iter().map(String::as_str));
            for (c, asked) in &d.arg_asks {
                if index.has_key_params(c) {
                    fresh.extend(asked.iter().map(String::as_str));
                }
            }
        }
        let keyed = d.keyed(index);
        if keyed || d.library_mints || d.callees.iter().any(|c| index.is_mint_name(c)) {
            combinators.extend(d.combinator_callees.iter().map(String::as_str));
        }
        if d.interceptor && keyed {
            out.insert("clone".to_string());
            types.extend(d.interceptor_types.iter().map(String::as_str));
            types.extend(d.registered_types.iter().map(String::as_str));
        }
    }
    // Whether a function mints through a helper (`mint_via_fresh`) needs that helper's
    // declarations, wherever the function is.
    for decls in index.functions.values() {
        for f in decls {
            fresh.extend(f.mint_via_fresh.iter().map(|(c, _)| c.as_str()));
        }
    }
    // Transitively: what the declarations of a demanded name return / pass on.
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    while let Some(n) = fresh.pop() {
        if !seen.insert(n) {
            continue;
        }
        for f in index.functions.get(n).into_iter().flatten() {
            fresh.extend(f.fresh_via.iter().map(|(c, _)| c.as_str()));
        }
    }
    let mut seen_comb: BTreeSet<&str> = BTreeSet::new();
    while let Some(n) = combinators.pop() {
        if !seen_comb.insert(n) {
            continue;
        }
        for f in index.functions.get(n).into_iter().flatten() {
            combinators.extend(f.passes_params.iter().map(|pp| pp.callee.as_str()));
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
    out.extend(seen.into_iter().map(str::to_string));
    out.extend(seen_comb.into_iter().map(str::to_string));
    out.extend(types.into_iter().map(str::to_string));
    // Nameless functions are not indexed: the empty callee (`(f)()`) never resolves.
    out.remove("");
    out
}

/// Whether an interceptor's case still depends on files not parsed yet: a file that can
/// have a key flow holds an interceptor boundary, and no parsed file shows call-level
/// retries (a retry boundary or a `call.clone()` site), which the rules count over the
/// whole project (a hand-written retry loop needs no catalogue word). The pipeline then
/// parses further files until one shows them, or none is left.
pub fn needs_retry_evidence<'a>(
    index: &ProjectIndex,
    mut demands: impl Iterator<Item = &'a FileDemand>,
) -> bool {
    index.http_retry_sites.is_empty()
        && index.clone_sites.is_empty()
        && demands.any(|d| d.interceptor && d.keyed(index))
}

/// Step 3: whether a parsed file can have a finding under `index` — a sink (catalogue, or
/// a call of a key-parameter function) and an origin (a source, or a call of a fresh
/// helper), or a boundary with a call of a key-minting function.
pub fn needs_check(d: &FileDemand, index: &ProjectIndex) -> bool {
    let origin = d.has_sources || d.callees.iter().any(|c| index.is_fresh_name(c));
    let inferred = d
        .combinator_callees
        .iter()
        .any(|c| index.is_combinator_name(c));
    let mint = (d.has_boundary || inferred)
        && (d.library_mints || d.callees.iter().any(|c| index.is_mint_name(c)));
    (d.keyed(index) && origin) || mint
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(lang: Language, text: &str) -> FileWords {
        let p = Prefilter::new(&Catalogue::builtin());
        p.scan(lang, text, &mut Vec::new())
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
        assert!(!scan(Language::Java, "String requestId = UUID.randomUUID();").sink);
    }

    #[test]
    fn normalised_view_decodes_rust_escapes() {
        let mut out = Vec::new();
        normalized_view("A_b-C\\x41\\u{42}\\\n   d", true, &mut out);
        assert_eq!(String::from_utf8(out.clone()).unwrap(), "abcabd");
        normalized_view("A_b-C\\x41", false, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "abc\\x41");
    }

    #[test]
    fn names_are_tokens_and_synthetic_names_match_everything() {
        let names: BTreeSet<String> = ["newKey".to_string()].into();
        let s = NameScan::new(&names);
        assert!(s.matches(Language::Java, "String k = newKey();"));
        assert!(!s.matches(Language::Java, "String k = renewKey();"));
        assert!(!s.matches(Language::Java, "String k = newKeys();"));
        let names: BTreeSet<String> = ["invoke".to_string()].into();
        let s = NameScan::new(&names);
        assert!(s.matches(Language::Kotlin, "val k = f()()"));
        assert!(!s.matches(Language::Java, "f();"));
    }
}
