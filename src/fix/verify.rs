//! Checks on the model of a fixed text, run on every fix (`check::verify_fixes`): a fix
//! that fails one is downgraded to `unsafe` with the reason.

use crate::catalogue::BoundaryKind;
use crate::classify::FileFacts;
use crate::model::*;

/// Names read before their local declaration is in effect: a use whose function declares
/// locals of that name, none of them declared earlier in a scope around the use, and no
/// parameter or field of that name anywhere in the file. One entry per such use.
pub fn used_before_declared(m: &FileModel) -> Vec<String> {
    let mut out = Vec::new();
    let point = |o: usize| Span::new(o, o);
    for v in &m.values {
        for a in &v.atoms {
            let Atom::Name { name, offset } = a else {
                continue;
            };
            if m.bindings
                .iter()
                .any(|b| b.name == *name && b.kind != BindingKind::Local)
            {
                continue;
            }
            let locals: Vec<&Binding> = m
                .bindings
                .iter()
                .filter(|b| b.name == *name && b.kind == BindingKind::Local)
                .collect();
            if locals.is_empty() {
                continue;
            }
            let func = |s: ScopeId| m.enclosing_function(s);
            let use_fn = m
                .scopes
                .iter()
                .enumerate()
                .filter(|(_, s)| {
                    matches!(s.kind, ScopeKind::Function(_)) && s.span.contains(point(*offset))
                })
                .min_by_key(|(_, s)| s.span.end - s.span.start)
                .map(|(i, _)| i);
            let same_fn: Vec<&&Binding> =
                locals.iter().filter(|b| func(b.scope) == use_fn).collect();
            if same_fn.is_empty() {
                continue;
            }
            let ok = same_fn.iter().any(|b| {
                b.name_span.start < *offset && m.scopes[b.scope].span.contains(point(*offset))
            });
            if !ok {
                out.push(name.clone());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Calls that run their lambda at most once, where it is written: Kotlin's scope
/// functions and `runCatching`/`use`/`synchronized`, coroutine scopes, and Rust's
/// `Option`/`Result` combinators. A lambda passed to one of them does not repeat the key
/// per item.
const RUNS_ONCE: &[&str] = &[
    "let",
    "also",
    "apply",
    "run",
    "with",
    "takeIf",
    "takeUnless",
    "use",
    "synchronized",
    "runCatching",
    "withContext",
    "coroutineScope",
    "supervisorScope",
    "and_then",
    "map_err",
    "unwrap_or_else",
    "or_else",
    "map_or_else",
];

/// How many loops and lambdas that are not retry boundaries (loops over items, per-item
/// lambdas, any other scope that runs more than once) enclose `offset`: the key is
/// evaluated once per iteration of each, so a fix must not change this number. Lambdas
/// given to a call that runs them once ([`RUNS_ONCE`]: `runCatching { … }`, `let { … }`)
/// are not counted.
pub fn item_scopes(m: &FileModel, facts: &FileFacts, offset: usize) -> usize {
    m.scopes
        .iter()
        .enumerate()
        .filter(|(i, s)| {
            let once = match &s.kind {
                ScopeKind::Lambda(l) => l
                    .owner_call
                    .is_some_and(|c| RUNS_ONCE.contains(&m.calls[c].callee.as_str())),
                _ => false,
            };
            !once
                && matches!(s.kind, ScopeKind::Loop(_) | ScopeKind::Lambda(_))
                && s.span.start < offset
                && offset < s.span.end
                && facts
                    .boundaries
                    .get(*i)
                    .and_then(|b| b.as_ref())
                    .is_none_or(|b| b.kind != BoundaryKind::Retry)
        })
        .count()
}
