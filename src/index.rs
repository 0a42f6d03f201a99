//! The project index: facts that cross files. Pass 1 summarises each file on its own
//! ([`summarize`]); [`ProjectIndex::build`] merges the summaries and runs a small fixpoint so
//! that helpers calling helpers are understood; pass 2 analyses each file against it.
//!
//! Functions are matched by simple name and a compatible argument count. A name counts as
//! a fresh-value helper (or a key-minting function) only when *every* declaration of that
//! name in the project is one, so a common name (`get`, `create`) declared many times does
//! not turn every call into a finding.

use std::collections::{HashMap, HashSet};

use crate::catalogue::Catalogue;
use crate::classify::FileFacts;
use crate::flow::{Flow, HelperInfo, HelperOracle, Recorder};
use crate::model::*;
use crate::text::LineIndex;

/// A function that mints an idempotency key from an ephemeral value and puts it somewhere.
#[derive(Clone, Debug, PartialEq, Eq)]
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
#[derive(Clone, Debug, Default)]
pub struct FnDecl {
    pub name: String,
    pub arity: usize,
    /// Kotlin functions may have default arguments, so fewer arguments can match.
    pub defaults_possible: bool,
    /// 0-based positions and names of parameters that carry an idempotency key (by name
    /// or by a `@Header("Idempotency-Key")` annotation).
    pub key_params: Vec<(usize, String)>,
    /// `path:line` of the declaration.
    pub location: String,
    /// The return value derives from an ephemeral source evaluated in the body.
    pub fresh: Option<HelperInfo>,
    /// Calls whose result flows into the return value (may be fresh helpers).
    pub fresh_via: Vec<(String, usize)>,
    /// The body puts an ephemeral value into a key sink.
    pub mints: Option<MintInfo>,
    /// Calls whose result flows into a key sink in the body.
    pub mint_via_fresh: Vec<(String, usize)>,
    /// Positional arguments that carry an ephemeral value: (callee, arity, index, info).
    pub keyed_arg_candidates: Vec<(String, usize, usize, MintInfo)>,
    /// Every call made in the body: (callee, arity).
    pub calls: Vec<(String, usize)>,
    /// The body takes a distributed lock (see `rules/locks.toml`).
    pub has_lock: bool,
}

/// A registration of an interceptor / middleware on a client builder.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// `path:line` of the registering call.
    pub location: String,
    /// The registered thing retries what comes after it (calls `proceed` more than once,
    /// or is a catalogue `retrying_types` entry such as `RetryTransientMiddleware`).
    pub retrying: bool,
}

/// Pass 1 output for one file.
#[derive(Clone, Debug, Default)]
pub struct FileSummary {
    pub functions: Vec<FnDecl>,
    pub registrations: Vec<Registration>,
    pub shedlock_enabled: bool,
    /// Interceptor types that call `proceed` more than once (they retry).
    pub retrying_types: Vec<String>,
    /// `path:line` of `call.clone()` sites (call-level retries).
    pub clone_sites: Vec<String>,
}

fn location(path: &str, lines: &LineIndex, text: &str, offset: usize) -> String {
    format!("{path}:{}", lines.position(text, offset).line)
}

/// Pass 1: summarises one classified file.
pub fn summarize(
    path: &str,
    text: &str,
    lines: &LineIndex,
    model: &FileModel,
    facts: &FileFacts,
    cat: &Catalogue,
) -> FileSummary {
    let flow = Flow::new(model, cat);
    let mut out = FileSummary::default();
    let lang = model.language;

    // Which scopes belong to which function (innermost function ancestor).
    let owner_fn: Vec<Option<ScopeId>> = (0..model.scopes.len())
        .map(|s| model.enclosing_function(s))
        .collect();

    let mut decls: HashMap<ScopeId, FnDecl> = HashMap::new();
    for (i, s) in model.scopes.iter().enumerate() {
        let ScopeKind::Function(f) = &s.kind else {
            continue;
        };
        let key_params = f
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| {
                cat.is_key_name(&p.name)
                    || p.annotations.iter().any(|a| {
                        cat.header_param.annotations.contains(&a.name)
                            && a.args.first().is_some_and(|h| cat.is_key_header(h))
                    })
            })
            .map(|(i, p)| (i, p.name.clone()))
            .collect();
        let mut d = FnDecl {
            name: f.name.clone(),
            arity: f.params.len(),
            defaults_possible: lang == Language::Kotlin,
            key_params,
            location: location(path, lines, text, f.name_span.start),
            ..FnDecl::default()
        };
        // Fresh return values.
        let rec = Recorder::default();
        for v in flow.returns_of(i) {
            for o in flow.origins(v, &rec) {
                if d.fresh.is_none() {
                    d.fresh = Some(HelperInfo {
                        kind: o.kind,
                        source: o.display.clone(),
                        location: location(path, lines, text, o.span.start),
                    });
                }
            }
        }
        d.fresh_via = rec.asked.into_inner();
        decls.insert(i, d);
    }

    // Sinks inside functions: direct mints and mints through helpers.
    for sink in &facts.sinks {
        let Some(f) = owner_fn[sink.scope] else {
            continue;
        };
        let rec = Recorder::default();
        let origins = flow.origins(sink.value, &rec);
        let Some(d) = decls.get_mut(&f) else { continue };
        if d.mints.is_none()
            && let Some(o) = origins.first()
        {
            d.mints = Some(MintInfo {
                source: o.display.clone(),
                kind: o.kind,
                location: location(path, lines, text, o.span.start),
                function: d.name.clone(),
            });
        }
        d.mint_via_fresh.extend(rec.asked.into_inner());
    }

    // Calls made by each function, and positional arguments carrying ephemeral values.
    for call in &model.calls {
        let Some(f) = owner_fn[call.scope] else {
            continue;
        };
        let mut candidates = Vec::new();
        for (i, arg) in call.args.iter().enumerate() {
            if arg.name.is_some() || arg.lambda.is_some() {
                continue;
            }
            let has_source = model.values[arg.value]
                .atoms
                .iter()
                .any(|a| matches!(a, Atom::Source(_) | Atom::Name { .. }));
            if !has_source {
                continue;
            }
            let rec = Recorder::default();
            if let Some(o) = flow.origins(arg.value, &rec).first() {
                candidates.push((
                    call.callee.clone(),
                    call.args.len(),
                    i,
                    MintInfo {
                        source: o.display.clone(),
                        kind: o.kind,
                        location: location(path, lines, text, o.span.start),
                        function: String::new(),
                    },
                ));
            }
        }
        if let Some(d) = decls.get_mut(&f) {
            d.calls.push((call.callee.clone(), call.args.len()));
            for mut c in candidates {
                c.3.function = d.name.clone();
                d.keyed_arg_candidates.push(c);
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
    let mut fns: Vec<(ScopeId, FnDecl)> = decls.into_iter().collect();
    fns.sort_by_key(|(s, _)| *s);
    out.functions = fns.into_iter().map(|(_, d)| d).collect();

    // ShedLock enabled here?
    out.shedlock_enabled = model
        .annotations
        .iter()
        .any(|a| cat.shedlock.enable_annotations.contains(&a.name))
        || (!cat.shedlock.provider_suffix.is_empty()
            && (model
                .calls
                .iter()
                .any(|c| c.is_new && c.callee.ends_with(&cat.shedlock.provider_suffix))
                || model.scopes.iter().any(|s| {
                    matches!(&s.kind, ScopeKind::Function(f)
                        if f.return_type.ends_with(&cat.shedlock.provider_suffix))
                })));

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

    // Registrations.
    for (cid, call) in model.calls.iter().enumerate() {
        let Some(entry) = cat
            .registrations
            .iter()
            .find(|r| r.call.matches(lang, call))
        else {
            continue;
        };
        let chain = chain_key(path, model, cid);
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
                location: location(path, lines, text, call.span.start),
                retrying,
            });
        }
    }

    for c in &model.calls {
        if c.callee == "clone"
            && c.args.is_empty()
            && c.receiver
                .as_deref()
                .is_some_and(|r| r.to_ascii_lowercase().contains("call"))
        {
            out.clone_sites
                .push(location(path, lines, text, c.name_span.start));
        }
    }
    out
}

/// Identifies the builder a registering call is made on: the root of its receiver chain.
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

/// The merged project index with helper facts resolved.
#[derive(Clone, Debug, Default)]
pub struct ProjectIndex {
    pub functions: HashMap<String, Vec<FnDecl>>,
    fresh: HashMap<String, HelperInfo>,
    mints: HashMap<String, MintInfo>,
    pub registrations: Vec<Registration>,
    pub shedlock_enabled: bool,
    pub retrying_types: HashSet<String>,
    pub clone_sites: Vec<String>,
}

fn arity_ok(d: &FnDecl, args: usize) -> bool {
    d.arity == args || (d.defaults_possible && args < d.arity)
}

impl ProjectIndex {
    /// Merges pass-1 summaries (in a deterministic order) and resolves helpers.
    pub fn build(summaries: Vec<FileSummary>) -> ProjectIndex {
        let mut idx = ProjectIndex::default();
        for s in summaries {
            for f in s.functions {
                idx.functions.entry(f.name.clone()).or_default().push(f);
            }
            idx.registrations.extend(s.registrations);
            idx.shedlock_enabled |= s.shedlock_enabled;
            idx.retrying_types.extend(s.retrying_types);
            idx.clone_sites.extend(s.clone_sites);
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
        idx.resolve();
        idx
    }

    fn is_fresh_call(&self, name: &str, args: usize) -> bool {
        self.fresh.contains_key(name)
            && self
                .functions
                .get(name)
                .is_some_and(|ds| ds.iter().any(|d| arity_ok(d, args)))
    }

    fn mint_of_call(&self, name: &str, args: usize) -> Option<&MintInfo> {
        let ok = self
            .functions
            .get(name)
            .is_some_and(|ds| ds.iter().any(|d| arity_ok(d, args)));
        if ok { self.mints.get(name) } else { None }
    }

    /// 0-based key parameter positions (and names) of a function called `name` with
    /// `args` arguments.
    pub fn key_params(&self, name: &str, args: usize) -> Vec<(usize, String)> {
        let mut out: Vec<(usize, String)> = self
            .functions
            .get(name)
            .into_iter()
            .flatten()
            .filter(|d| arity_ok(d, args))
            .flat_map(|d| d.key_params.iter().cloned())
            .filter(|(i, _)| *i < args)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    fn resolve(&mut self) {
        let mut names: Vec<String> = self.functions.keys().cloned().collect();
        names.sort();
        // Fresh helpers.
        loop {
            let mut changed = false;
            for n in &names {
                if self.fresh.contains_key(n) {
                    continue;
                }
                let decls = &self.functions[n];
                let mut info = None;
                let all = decls.iter().all(|d| {
                    if let Some(f) = &d.fresh {
                        info.get_or_insert_with(|| f.clone());
                        return true;
                    }
                    d.fresh_via.iter().any(|(c, a)| {
                        if self.is_fresh_call(c, *a) {
                            info.get_or_insert_with(|| self.fresh[c].clone());
                            true
                        } else {
                            false
                        }
                    })
                });
                if all && let Some(i) = info {
                    self.fresh.insert(n.clone(), i);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        // Key-minting functions.
        loop {
            let mut changed = false;
            for n in &names {
                if self.mints.contains_key(n) {
                    continue;
                }
                let decls = &self.functions[n];
                let mut info: Option<MintInfo> = None;
                let all = decls.iter().all(|d| {
                    if d.has_lock {
                        return false;
                    }
                    if let Some(m) = &d.mints {
                        info.get_or_insert_with(|| m.clone());
                        return true;
                    }
                    for (c, a) in &d.mint_via_fresh {
                        if self.is_fresh_call(c, *a) {
                            let f = &self.fresh[c];
                            info.get_or_insert_with(|| MintInfo {
                                source: format!("{c}()"),
                                kind: f.kind,
                                location: f.location.clone(),
                                function: d.name.clone(),
                            });
                            return true;
                        }
                    }
                    for (c, arity, i, m) in &d.keyed_arg_candidates {
                        if self.key_params(c, *arity).iter().any(|(p, _)| p == i) {
                            info.get_or_insert_with(|| m.clone());
                            return true;
                        }
                    }
                    for (c, a) in &d.calls {
                        if c == n {
                            continue;
                        }
                        if let Some(m) = self.mint_of_call(c, *a) {
                            info.get_or_insert_with(|| m.clone());
                            return true;
                        }
                    }
                    false
                });
                if all && let Some(i) = info {
                    self.mints.insert(n.clone(), i);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// The key a call to a project function mints, if it mints one (and takes no lock).
    pub fn mints(&self, call: &Call) -> Option<&MintInfo> {
        self.mint_of_call(&call.callee, call.args.len())
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

impl HelperOracle for ProjectIndex {
    fn fresh(&self, _lang: Language, call: &Call) -> Option<HelperInfo> {
        if self.is_fresh_call(&call.callee, call.args.len()) {
            self.fresh.get(&call.callee).cloned()
        } else {
            None
        }
    }
}
