//! Fixes: text edits computed from a finding's spans and the file's model, and their
//! application (`--fix`, `--diff`).
//!
//! Only `key-in-retry-scope` gets an automatic edit, for boundaries that are a lambda /
//! closure passed to a retrying call or a retry loop: the ephemeral expression (or the local
//! declaration that holds it) moves into a local declared immediately before the statement
//! that contains the boundary, and the expression inside is replaced by that local.
//! Interceptor, scheduler, callback and time-based findings get no automatic edit: the fix
//! belongs in the caller or needs a lock (see each rule's docs).
//!
//! A fix is offered only when it is mechanical: the statement containing the boundary
//! starts on its own line, the hoisted expression reads no name declared inside the
//! boundary, and the new name collides with nothing in the enclosing function. Rust fixes
//! clone the key inside the boundary (`idempotency_key.clone()`); inside a `move` closure a
//! clone is not enough for `FnMut` retries, so those fixes are `unsafe`.

pub mod apply;
pub mod level;
pub mod verify;

use crate::catalogue::BoundaryKind;
use crate::classify::FileFacts;
use crate::finding::{Applicability, Edit, Finding, Fix};
use crate::model::*;
use crate::text::LineIndex;

/// Everything needed to compute fixes for one file.
pub struct FixCtx<'a> {
    pub text: &'a str,
    pub lines: &'a LineIndex,
    pub model: &'a FileModel,
    pub facts: &'a FileFacts,
    /// The file's path (for the Java level read from the nearest build file).
    pub path: &'a std::path::Path,
    /// `java-version` from the file's configuration.
    pub java_version: Option<u32>,
}

/// Attaches a fix to every finding that can get one.
pub fn attach(ctx: &FixCtx, findings: &mut [Finding]) {
    for f in findings.iter_mut() {
        // Findings at a helper call that mints and sends ("the key `f()` mints") are the whole
        // operation: hoisting the call would send once; those get no edit.
        if f.fix.is_some() {
            continue;
        }
        let r = match f.rule {
            "key-in-retry-scope" if f.sink.starts_with("the key `") => {
                let helper = f
                    .sink
                    .strip_prefix("the key `")
                    .and_then(|s| s.strip_suffix("` mints"))
                    .unwrap_or("the helper");
                // A constructor (`ChargeRequest()`) builds the request; it sends nothing.
                let constructor = helper
                    .trim_start_matches("new ")
                    .starts_with(|c: char| c.is_uppercase());
                Err(if constructor {
                    format!(
                        "`{helper}` draws the key when it builds the request: the key comes from a default value or the constructor's body, and moving the construction out of the retry would change which request every attempt sends; pass a key made once before the retry to `{helper}` instead"
                    )
                } else {
                    format!(
                        "`{helper}` mints the key inside its own body: moving its call out of the retry would also move whatever else it does per attempt (a request it sends would go once, before the retry; a signature or timestamp it computes would go stale); make `{helper}` take the key as a parameter, made once before the retry"
                    )
                })
            }
            "key-in-retry-scope"
                if f.boundary.as_ref().is_some_and(|b| b.flavor == "reattempt") =>
            {
                Err("the retry is a second call in a failure handler (a `catch` clause or a recovery lambda), not a scope that runs again: no key declared before it is in reach of both calls without moving the first; compute the key once before the first call and pass the same value to both".into())
            }
            "key-in-retry-scope" => hoist(ctx, f),
            "key-in-callback-retry" => clone_call(ctx, f).ok_or_else(|| {
                "the callback does not resend the original request unchanged (the same call with the same arguments), so replacing its new call with `call.clone()` could change what is sent; reuse the original request's key by hand".into()
            }),
            "key-in-interceptor" => Err(
                "interceptor: it runs again for every attempt and cannot tell the retries of one operation apart, so no edit inside it keeps one key; the key belongs in the caller, created once per operation, and the interceptor should only copy it".into(),
            ),
            // Runs once per call (the finding says so); the call's own retries keep the
            // key, but a retry the caller makes is a new call.
            "interceptor-mints-key" => Err(
                "interceptor: it sees each call alone and cannot tell that a call is the caller's retry of an earlier one, so no edit inside it keeps one key across those; the key belongs in the caller, created once per operation, and the interceptor should only copy it".into(),
            ),
            "unlocked-scheduled-job" => Err(
                "scheduler: the job runs on every replica at every tick, so no edit inside it makes the replicas agree on one key; it needs a lock (ShedLock, a lease) or a key derived from the scheduled run".into(),
            ),
            "time-in-key" => Err(
                "time-based key: a clock reading differs on every call and every machine, so moving it would still give a retried operation a new key; derive the key from the operation's identity instead".into(),
            ),
            rule => Err(format!(
                "idemlint has no automatic edit for {rule} (`idemlint explain {rule}` says what to do)"
            )),
        };
        match r {
            Ok(fix) => f.fix = Some(fix),
            Err(reason) => f.no_fix = Some(reason),
        }
    }
}

/// The help's closing "at least …" advice for `key-in-retry-scope`, as the rule writes it.
const HOIST_ADVICE: &str = "; at least hoist it — add `";
const MOVE_ADVICE: &str = "; at least move the declaration of `";

/// Makes each `key-in-retry-scope` help agree with its fix (run after the fixes are
/// verified): a hoist the help suggests is the declaration `--fix` would write (its type,
/// its name when `idempotencyKey` is taken); when there is no fix, or only an unsafe one,
/// the help says so and why, and a Java declaration it suggests uses no `var` below
/// Java 10.
pub fn align_help(ctx: &FixCtx, findings: &mut [Finding]) {
    let lang = ctx.model.language;
    for f in findings.iter_mut() {
        if f.rule != "key-in-retry-scope" {
            continue;
        }
        let Some(at) = f
            .help
            .find(HOIST_ADVICE)
            .or_else(|| f.help.find(MOVE_ADVICE))
        else {
            continue;
        };
        let mut help = f.help[..at].to_string();
        // The advice this finding's own help ends with, and the help of findings folded
        // into it (`; for `time-in-key`: …`), which stays last: what `--fix` does or why
        // it does not is said of the advice, right after it.
        let (advice, folded) = f.help[at..]
            .find(crate::report::merge::FOLDED_HELP)
            .map_or((&f.help[at..], ""), |i| f.help[at..].split_at(i));
        let folded = folded.to_string();
        match (&f.fix, &f.no_fix) {
            (Some(fix), _) => {
                // A hoist's edits: the declaration inserted, then the use replacing the
                // expression (a moved declaration's second edit deletes it instead). The
                // help's advice becomes the hoist even where it said to move a
                // declaration that holds more than the key.
                let decl = fix
                    .edits
                    .first()
                    .filter(|e| e.start == e.end)
                    .filter(|_| fix.edits.get(1).is_some_and(|e| !e.content.is_empty()))
                    .map(|e| e.content.trim())
                    .map(|d| match lang {
                        Language::Kotlin => d.trim_end_matches(';').trim_end(),
                        _ => d,
                    });
                let used = fix.edits.get(1).map(|e| {
                    e.content
                        .strip_suffix(".clone()")
                        .unwrap_or(&e.content)
                        .to_string()
                });
                match (decl, used) {
                    (Some(decl), Some(used)) if !decl.contains('\n') => help.push_str(&format!(
                        "{HOIST_ADVICE}{decl}` there and use `{used}` inside"
                    )),
                    _ => help.push_str(advice),
                }
                if fix.applicability == Applicability::Unsafe {
                    help.push_str(&format!(
                        " (`--fix --unsafe-fixes` does this, but review it: {})",
                        fix.reason.as_deref().unwrap_or("it needs review")
                    ));
                }
            }
            // The key reads a value of the attempt (`attempt`, a local of the lambda): no
            // hoist exists, so the help does not offer one; it says what to drop instead.
            (None, Some(reason)) if reason.contains(ATTEMPT_LOCAL) => {
                help.push_str(&format!(
                    "; it cannot simply be hoisted: {reason}; build the key only from values \
                     that exist before the retry (drop the part that changes per attempt)"
                ));
            }
            (None, Some(reason)) => {
                let var = format!("{HOIST_ADVICE}final var ");
                let level = level::java_level(ctx.java_version, ctx.path);
                match advice.strip_prefix(var.as_str()) {
                    // Below Java 10 a `var` declaration does not compile: the type
                    // instead, when it is known, else a declaration in words.
                    Some(rest) if lang == Language::Java && level < 10 => {
                        let (name, expr) = rest
                            .split_once(" = ")
                            .map(|(n, e)| (n, e.split("` there").next().unwrap_or(e)))
                            .unwrap_or(("idempotencyKey", ""));
                        let expr = expr.trim_end_matches(';');
                        let span = ctx
                            .model
                            .calls
                            .iter()
                            .map(|c| c.span)
                            .find(|s| ctx.text.get(s.start..s.end) == Some(expr));
                        let ty = span
                            .and_then(|s| java_type(ctx.model, s, expr, level).ok())
                            .or_else(|| java_type(ctx.model, Span::new(0, 0), expr, level).ok());
                        match ty {
                            Some(ty) => help.push_str(&format!(
                                "{HOIST_ADVICE}final {ty} {name} = {expr};` there and use `{name}` inside"
                            )),
                            None if reason.starts_with(UNKNOWN_TYPE) => {
                                help.push_str(&format!(
                                    "; at least hoist it — declare `{name}` there, with the type of `{expr}` (Java {level} has no `var`), and use it inside (not done by `--fix`, which does not know that type; with `java-version` 10 or later it declares the key with `var`)"
                                ));
                                help.push_str(&folded);
                                f.help = help;
                                continue;
                            }
                            None => help.push_str(&format!(
                                "; at least hoist it — declare `{name}` there, with the type of `{expr}` (Java {level} has no `var`), and use it inside"
                            )),
                        }
                    }
                    _ => help.push_str(advice),
                }
                help.push_str(&format!(" (not done by `--fix`: {reason})"));
            }
            (None, None) => continue,
        }
        help.push_str(&folded);
        f.help = help;
    }
    crate::identity::say_where_helpers_come_from(lang, findings);
}

fn edit(ctx: &FixCtx, start: usize, end: usize, content: String) -> Edit {
    let s = ctx.lines.position(ctx.text, start);
    let e = ctx.lines.position(ctx.text, end);
    Edit {
        start,
        end,
        start_line: s.line,
        start_column: s.column,
        end_line: e.line,
        end_column: e.column,
        content,
    }
}

/// The boundary scope a finding refers to (by its anchor).
fn boundary_scope(ctx: &FixCtx, f: &Finding) -> Option<ScopeId> {
    let b = f.boundary.as_ref()?;
    ctx.facts
        .boundaries
        .iter()
        .enumerate()
        .find(|(s, bd)| {
            bd.as_ref()
                .is_some_and(|bd| bd.anchor == b.span && ctx.model.scopes[*s].span.contains(f.span))
        })
        .map(|(s, _)| s)
}

/// The no-fix reason for a retry that is the body of a Kotlin expression-bodied function.
const EXPRESSION_BODY: &str = "the function is expression-bodied (`fun f() = retry { … }`): its body is one expression, with no statement before the retry to declare the key in; give it a block body first";

/// Whether boundary scope `b` sits directly in the expression body of function `func`
/// (`fun f() = retry { … }`): `func` is expression-bodied and no lambda, loop or other
/// scope lies between them, so the retry call is part of the body expression itself.
fn is_expression_body(m: &crate::model::FileModel, b: ScopeId, func: ScopeId) -> bool {
    let ScopeKind::Function(fi) = &m.scopes[func].kind else {
        return false;
    };
    if !fi.expression_body {
        return false;
    }
    m.scopes[b].parent == Some(func)
}

fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map(|i| i + 1).unwrap_or(0)
}

fn line_end(text: &str, offset: usize) -> usize {
    text[offset..]
        .find('\n')
        .map(|i| offset + i)
        .unwrap_or(text.len())
}

fn newline(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

/// True when a statement can start at `offset` (the start of a line): the code before it
/// ends a statement or opens a block. Comment-only lines are skipped.
fn statement_boundary_before(text: &str, lang: Language, offset: usize) -> bool {
    let mut end = offset;
    loop {
        let before = text[..end].trim_end();
        if before.is_empty() {
            return true;
        }
        let ls = line_start(text, before.len());
        let line = &text[ls..before.len()];
        if line.trim_start().starts_with("//") {
            end = ls;
            continue;
        }
        let last = before.chars().last().unwrap_or(';');
        return match lang {
            // `{ order ->` ends a lambda's parameter list; a `when` branch's `x ->` does not.
            Language::Kotlin if before.ends_with("->") => {
                let l = &text[line_start(text, before.len())..before.len()];
                l.contains('{') && !l.contains("when")
            }
            // A braceless `if (..)`, `for (..)`, `while (..)`, `else` or `do` makes the
            // next line its body: a declaration put there would become the body alone.
            Language::Kotlin if braceless_header(line) => false,
            Language::Kotlin => !"=(,.+-*/|&?:<[!".contains(last),
            _ => matches!(last, ';' | '{' | '}'),
        };
    }
}

/// Whether a line ends a control-flow header whose body, without braces, is the next line:
/// `if (..)`, `else if (..)`, `for (..)`, `while (..)`, or a line ending with `else`/`do`.
fn braceless_header(line: &str) -> bool {
    let t = line.trim();
    let t = t.strip_prefix('}').unwrap_or(t).trim_start();
    let word_end = |w: &str| {
        t.strip_suffix(w)
            .is_some_and(|r| r.is_empty() || r.ends_with(|c: char| c.is_whitespace() || c == '}'))
    };
    if word_end("else") || word_end("do") {
        return true;
    }
    let keyword = ["if", "else if", "for", "while"].iter().any(|k| {
        t.strip_prefix(k)
            .is_some_and(|r| r.trim_start().starts_with('('))
    });
    keyword && t.ends_with(')')
}

/// Names of all bindings declared in the function (or file) enclosing `scope`.
fn names_in_function(m: &FileModel, scope: ScopeId) -> Vec<&str> {
    let f = m.enclosing_function(scope).unwrap_or(0);
    m.bindings
        .iter()
        .filter(|b| m.is_within(b.scope, f))
        .map(|b| b.name.as_str())
        .collect()
}

/// The first name the value's atoms read that is declared inside `boundary` (a lambda
/// parameter, a local of the attempt), which a hoist would move out of reach.
/// A call's callee or receiver counts as read too: `mk()` of a closure declared in the
/// attempt, `keys.get()` of a local `Supplier`.
fn reads_boundary_locals(m: &FileModel, span: Span, boundary: ScopeId) -> Option<String> {
    let declared_inside = |name: &str, offset: usize| {
        m.bindings
            .iter()
            .any(|b| b.name == name && m.is_within(b.scope, boundary) && b.name_span.start < offset)
    };
    let read = m
        .values
        .iter()
        .filter(|v| span.contains(v.span))
        .flat_map(|v| v.atoms.iter())
        .find_map(|a| match a {
            Atom::Name { name, offset }
                if span.contains(Span::new(*offset, *offset)) && declared_inside(name, *offset) =>
            {
                Some(name.clone())
            }
            _ => None,
        });
    read.or_else(|| {
        m.calls
            .iter()
            .filter(|c| span.contains(c.span))
            .find_map(|c| {
                let name = c.receiver.as_deref().unwrap_or(&c.callee);
                declared_inside(name, c.span.start).then(|| name.to_string())
            })
    })
}

/// The words of [`reads_attempt_local`] that [`align_help`] recognises.
const ATTEMPT_LOCAL: &str = "which is declared inside the retry";

/// Why a hoist that reads `name` (declared inside the retry) is not offered.
fn reads_attempt_local(name: &str) -> String {
    format!(
        "the key is computed from `{name}`, {ATTEMPT_LOCAL} (a lambda parameter or a local of the attempt), so it cannot be computed before the retry starts"
    )
}

/// `after` follows a name that is a Kotlin named-argument label (`name = value`).
fn is_named_label(lang: Language, after: &str) -> bool {
    let a = after.trim_start();
    lang == Language::Kotlin && a.starts_with('=') && !a.starts_with("==")
}

/// The Java type a hoisted `expr` (at `span`) is declared with: `String` for a string,
/// `UUID` for a bare `UUID.randomUUID()`, else `var` when the level has it, else the
/// declared return type of the method of this file that `expr` calls (`newKey()` after
/// `static String newKey()`; every overload of that name and arity returning one type).
fn java_type(m: &FileModel, span: Span, expr: &str, level: u32) -> Result<String, String> {
    let e = expr.trim();
    if e.ends_with(".toString()")
        || e.starts_with('"')
        || e.ends_with('"')
        || e.starts_with("String.")
    {
        Ok("String".into())
    } else if e == "UUID.randomUUID()" {
        Ok("UUID".into())
    } else if e == "java.util.UUID.randomUUID()" {
        Ok("java.util.UUID".into())
    } else if level >= 10 {
        Ok("var".into())
    } else if let Some(ty) = declared_return_type(m, span) {
        Ok(ty)
    } else {
        Err(format!(
            "{UNKNOWN_TYPE} `{e}` for the hoisted declaration (it is not a method declared in this file), and Java {level} has no `var`: set `java-version` to 10 or later, or declare the key by hand with its type"
        ))
    }
}

/// How the no-fix reason for a Java key of unknown type below Java 10 starts.
const UNKNOWN_TYPE: &str = "idemlint does not know the type of";

/// The return type written on the method of this file that the call at `span` names
/// (unqualified, or on `this` / the declaring type): one type over every declaration of
/// that name and arity, not `void`.
fn declared_return_type(m: &FileModel, span: Span) -> Option<String> {
    let call = m.calls.iter().find(|c| c.span == span)?;
    let mut types = m.scopes.iter().filter_map(|s| match &s.kind {
        ScopeKind::Function(fi) if fi.name == call.callee && fi.params.len() == call.args.len() => {
            Some(fi.return_type.trim())
        }
        _ => None,
    });
    let receiver_ok = match call.receiver.as_deref() {
        None | Some("this") => true,
        Some(r) => m
            .scopes
            .iter()
            .any(|s| matches!(&s.kind, ScopeKind::Type(t) if t.name == r)),
    };
    let first = types.next()?;
    (receiver_ok
        && !first.is_empty()
        && first != "void"
        && !first.contains(['\n', '@'])
        // A type parameter (`<T> T newKey()`) is no type at the call site.
        && !(first.len() == 1 && first.starts_with(|c: char| c.is_ascii_uppercase()))
        && types.all(|t| t == first))
    .then(|| first.to_string())
}

/// Where the key's declaration goes: the start of the statement that contains the
/// boundary (and any local the retried lambda is stored in first), on its own line, or —
/// when a loop over items / per-item lambda opens on that line — inline, just inside it.
/// Returns `(offset, inline)`.
fn insertion_point(
    ctx: &FixCtx,
    b: ScopeId,
    bd_owner: Option<CallId>,
    reactive: bool,
) -> Result<(usize, bool), String> {
    let m = ctx.model;
    let text = ctx.text;
    let mut stmt_start = match (&m.scopes[b].kind, bd_owner) {
        (ScopeKind::Loop(_), _) => m.scopes[b].span.start,
        (ScopeKind::Lambda(_), Some(c)) if !reactive => m.calls[c].span.start,
        (ScopeKind::Function(_), _) => return Err("the whole method is retried (`@Retryable` or the like): every attempt runs its whole body, so the key must come from the caller, as a parameter created once per operation".into()),
        (ScopeKind::Lambda(_), Some(_)) => return Err("the retried code is part of a reactive pipeline that is subscribed to again on retry: a key declared before it is fixed when the pipeline is built, which is one key per operation only if each operation builds its own pipeline; move it by hand where that holds".into()),
        _ => return Err("the retried code is not a lambda passed to the retrying call, nor a loop, so there is no statement right before the retry to declare the key in".into()),
    };
    if let ScopeKind::Lambda(_) = m.scopes[b].kind {
        let ls = m.scopes[b].span;
        // The retried lambda stored in a local (or field) first: declare the key before it.
        if let Some(holder) = m
            .bindings
            .iter()
            .filter(|bi| bi.value.is_some_and(|v| m.values[v].span.contains(ls)))
            .min_by_key(|bi| bi.span.end - bi.span.start)
        {
            if holder.kind != BindingKind::Local {
                return Err(format!(
                    "the retried lambda is kept in the field `{}` and may run for many operations: a key declared beside it would be shared by all of them; declare the key where each operation starts",
                    holder.name
                ));
            }
            stmt_start = stmt_start.min(holder.span.start);
        }
    }
    let func = m
        .enclosing_function(b)
        .ok_or("the retry is not inside a function, so there is no statement before it to declare the key in")?;
    if stmt_start <= m.scopes[func].span.start {
        return Err("nothing in the function comes before the retry, so there is no statement to declare the key in front of".into());
    }
    // `fun post() = retry { … }`, on the declaration's line or the next: the body is an
    // expression, not a block, so there is no statement to declare the key before.
    if is_expression_body(m, b, func) {
        return Err(EXPRESSION_BODY.into());
    }
    let ls = line_start(text, stmt_start);
    if ls <= m.scopes[func].span.start {
        return Err(match &m.scopes[func].kind {
            ScopeKind::Function(fi) if fi.expression_body => EXPRESSION_BODY.into(),
            _ => "the retry starts on the function's declaration line, so a declaration inserted before it would land outside the function's body; put the retry on a line of its own".into(),
        });
    }
    let at = Span::new(stmt_start, stmt_start);
    let crossed = m.scopes.iter().any(|s| {
        matches!(s.kind, ScopeKind::Loop(_) | ScopeKind::Lambda(_))
            && s.span.start >= ls
            && s.span.start < stmt_start
            && s.span.contains(at)
    });
    if !crossed {
        if !statement_boundary_before(text, m.language, ls) {
            return Err("the retry's statement continues the code before it (on the same line, or as the body of a braceless `if`, `for`, `while` or `else`), so a declaration inserted before it would split that code or become that body alone".into());
        }
        return Ok((ls, false));
    }
    // A statement prefix (`let _ = `, `return `, `val x = `) moves the point to its start.
    let seg_start = text[ls..stmt_start]
        .rfind(['{', ';', '>'])
        .map(|i| ls + i + 1)
        .unwrap_or(ls);
    let seg = &text[seg_start..stmt_start];
    if seg
        .chars()
        .all(|c| c.is_alphanumeric() || " _=:\t".contains(c))
        && !seg.contains("==")
    {
        stmt_start = seg_start + (seg.len() - seg.trim_start().len());
    }
    let before = text[..stmt_start].trim_end();
    let opens = before.ends_with('{')
        || before.ends_with(';')
        || (m.language == Language::Kotlin && before.ends_with("->"));
    if !opens {
        return Err("the retry sits in a loop over items, or a per-item lambda, on the same line: hoisting the key out of that loop would give every item the same key, and there is no block on that line to declare one key per item in".into());
    }
    Ok((stmt_start, true))
}

fn hoist(ctx: &FixCtx, f: &Finding) -> Result<Fix, String> {
    let m = ctx.model;
    let text = ctx.text;
    const LOST: &str = "idemlint could not find the retry again in this file's model (please report it), so it cannot place the key";
    let b = boundary_scope(ctx, f).ok_or(LOST)?;
    let bd = ctx.facts.boundaries[b].as_ref().ok_or(LOST)?;
    if bd.kind != BoundaryKind::Retry {
        return Err(format!(
            "{} is not a retry, so declaring the key before it would not make attempts share it",
            bd.label
        ));
    }
    // A handler run again for each delivery (a redelivered listener, a workflow engine's
    // job handler) also runs once per message or job: a key declared before it would be
    // shared by every message or job it ever handles.
    if bd.flavor == "redelivery" {
        return Err(format!(
            "{} runs once for every message or job it is handed, and again when one is redelivered: a key declared before it would be shared by all of them; derive the key from the message or job instead (its business id, or the broker's or engine's id for it)",
            bd.label
        ));
    }
    // `Callable.call()` declares `throws Exception`: out of the attempt's `try`, a method
    // that does not declare it no longer compiles.
    if m.language == Language::Java
        && text
            .get(f.span.start..f.span.end)
            .is_some_and(|t| t.trim_end().ends_with(".call()"))
    {
        return Err("`Callable.call()` declares `throws Exception`: moved before the retry, out of the attempt's `try`, it would not compile unless the method declares it too".to_string());
    }
    // A new key assigned inside the retry to the variable that held the operation's key
    // before it (`key = UUID..` in a `catch`): a second key declared before the retry
    // would still replace the first one on the later attempts. Removing the assignment is
    // the fix, and it is a change of intent a person makes.
    if let Some(a) = m.assigns.iter().find(|a| {
        m.values[a.value].span.contains(f.span)
            && m.is_within(a.scope, b)
            && text
                .get(a.span.start..a.span.end)
                .and_then(|t| t.split_once('='))
                .is_some_and(|(place, _)| {
                    let place = place.trim();
                    place == a.name || place.strip_prefix("this.") == Some(a.name.as_str())
                })
            // Declared in a scope around the retry (a local before it, a field) with a
            // value (not `null`, `None` or empty: a memo that starts empty is hoisted).
            && m.bindings.iter().any(|o| {
                o.name == a.name
                    && o.scope != b
                    && m.is_within(b, o.scope)
                    && {
                        let holds = |v: crate::model::ValueId| {
                            let t = text
                                .get(m.values[v].span.start..m.values[v].span.end)
                                .unwrap_or("")
                                .trim();
                            !matches!(t, "null" | "None" | "\"\"" | "nil")
                        };
                        // Its initialiser, or an assignment before the retry
                        // (`String key; key = callerKey;`).
                        o.value.is_some_and(holds)
                            || m.assigns.iter().any(|x| {
                                x.name == a.name
                                    && x.span.end <= m.scopes[b].span.start
                                    && holds(x.value)
                            })
                    }
            })
    }) {
        return Err(format!(
            "`{}` holds a key from before the retry and is given a new one inside it: a key declared before the retry would still replace the first on later attempts; remove the assignment so every attempt sends the first key",
            a.name
        ));
    }
    let (insert_at, inline) = insertion_point(ctx, b, bd.owner_call, bd.flavor == "reactive")?;
    let indent: String = if inline {
        String::new()
    } else {
        text[line_start(text, insert_at)..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect()
    };
    let nl = newline(text);
    // The key used inside a `move` closure / `async move` block (the boundary or one in it):
    // a clone moved into it is not enough for a closure called again, or a block created
    // per attempt.
    let is_move = m.scopes.iter().enumerate().any(|(i, sc)| {
        matches!(&sc.kind, ScopeKind::Lambda(l) if l.is_move
            || text.get(sc.span.start..).is_some_and(|t| t.starts_with("async move") || t.starts_with("move")))
            && m.is_within(i, b)
            && sc.span.contains(f.span)
    }) || (m.language == Language::Rust && {
        // An `async move` block is not always a scope of the model: look at the text.
        let t = text.get(m.scopes[b].span.start..f.span.start).unwrap_or("");
        t.contains("async move") || t.contains("move |") || t.contains("move||")
    });
    let rust = m.language == Language::Rust;

    // Case 1: the source sits in a local declared inside the boundary: move the declaration.
    // Only a declaration that holds the key itself (the source, maybe converted:
    // `UUID.randomUUID().toString()`) moves; a request built around it stays put.
    // A call around the source counts only as a conversion of it (`.toString()`,
    // `.to_string()`: the source is in its receiver), never as a container the key is an
    // argument of (`Map.of("Idempotency-Key", k)`, `vec![("Idempotency-Key", k)]`).
    let holds_only_key = |v: &Value| {
        !text[v.span.start..v.span.end].contains('\n')
            && !m.field_inits.iter().any(|fi| v.span.contains(fi.span))
            && !m.pairs.iter().any(|p| v.span.contains(p.span))
            && v.atoms.iter().all(|a| match a {
                Atom::Call(c) => {
                    let call = &m.calls[*c];
                    let cs = call.span;
                    (cs.contains(f.span) && f.span.end <= call.name_span.start)
                        || f.span.contains(cs)
                }
                _ => true,
            })
    };
    if let Some(binding) = m.bindings.iter().find(|bi| {
        bi.kind == BindingKind::Local
            && m.is_within(bi.scope, b)
            && bi
                .value
                .is_some_and(|v| m.values[v].span.contains(f.span) && holds_only_key(&m.values[v]))
    }) {
        let value = &m.values[binding.value.ok_or("no value")?];
        let decl_start = line_start(text, binding.span.start);
        let decl_end_line = line_end(text, binding.span.end.min(text.len()));
        if !text[decl_start..binding.span.start].trim().is_empty() {
            return Err("the key's declaration shares its line with code before it, so moving the declaration would move that code out of the retry too".into());
        }
        let after = text[binding.span.end..decl_end_line].trim();
        if !(after.is_empty() || after == ";") {
            return Err("the key's declaration shares its line with code after it, so moving the declaration would move that code out of the retry too".into());
        }
        if let Some(name) = reads_boundary_locals(m, value.span, b) {
            return Err(reads_attempt_local(&name));
        }
        // Reassigned inside the attempt: moving it changes behaviour.
        if m.assigns
            .iter()
            .any(|a| a.name == binding.name && m.is_within(a.scope, b))
        {
            return Err(format!(
                "`{}` is assigned again inside the retry, so attempts would still get new keys after its declaration moved",
                binding.name
            ));
        }
        // Another binding of that name outside the boundary in the same function would be
        // shadowed or clash.
        let f_scope = m.enclosing_function(b).unwrap_or(0);
        if m.bindings.iter().any(|o| {
            o.name == binding.name && !m.is_within(o.scope, b) && m.is_within(o.scope, f_scope)
        }) {
            return Err(format!(
                "another variable named `{}` is declared outside the retry in the same function; the moved declaration would clash with it or shadow it",
                binding.name
            ));
        }
        let decl_text = &text[binding.span.start..decl_end_line];
        let decl_text = decl_text.trim_end_matches('\r');
        let old_indent: String = text[decl_start..]
            .chars()
            .take_while(|c| *c == ' ' || *c == '\t')
            .collect();
        let moved: String = decl_text
            .split('\n')
            .enumerate()
            .map(|(i, l)| {
                if i == 0 {
                    format!("{indent}{}", l.trim_end_matches('\r'))
                } else {
                    let l = l.trim_end_matches('\r');
                    format!(
                        "{indent}{}",
                        l.strip_prefix(old_indent.as_str()).unwrap_or(l)
                    )
                }
            })
            .collect::<Vec<_>>()
            .join(nl);
        let mut delete_end = decl_end_line;
        if text[delete_end..].starts_with('\n') {
            delete_end += 1;
        }
        // In Rust an attempt that passes the key by value (`.header(NAME, key)`) would move
        // it out of the hoisted declaration: every such argument becomes `key.clone()`.
        let mut clones = Vec::new();
        if rust {
            for call in &m.calls {
                for a in &call.args {
                    let v = &m.values[a.value];
                    if a.lambda.is_none()
                        && m.scopes[b].span.contains(v.span)
                        && v.span.start > binding.span.end
                        && text.get(v.span.start..v.span.end) == Some(binding.name.as_str())
                    {
                        clones.push(edit(
                            ctx,
                            v.span.start,
                            v.span.end,
                            format!("{}.clone()", binding.name),
                        ));
                    }
                }
            }
        }
        let (applicability, reason) = if rust {
            (
                Applicability::Unsafe,
                Some(if matches!(m.scopes[b].kind, ScopeKind::Loop(_)) {
                    // A retry loop has no closure: the key now lives across iterations.
                    format!(
                        "in Rust the loop now uses `{0}` declared before it instead of creating it on every iteration: arguments that pass `{0}` by value are changed to `{0}.clone()`, but another use that moves it (a struct field, a value captured by `move`) does not compile until you clone it there too",
                        binding.name
                    )
                } else {
                    format!(
                        "in Rust the retried closure now borrows `{0}` from outside instead of creating it: arguments that pass `{0}` by value are changed to `{0}.clone()`, but where the closure needs an owned value otherwise (a `move` closure, a struct field), it does not compile until you add `.clone()` or `move`",
                        binding.name
                    )
                }),
            )
        } else {
            (Applicability::Safe, None)
        };
        let sep = if inline {
            if m.language == Language::Kotlin {
                "; "
            } else {
                " "
            }
            .to_string()
        } else {
            nl.to_string()
        };
        return Ok(Fix {
            applicability,
            reason,
            message: format!(
                "move the declaration of `{}` before {} so every attempt reuses one key",
                binding.name, bd.label
            ),
            edits: {
                let mut e = vec![
                    edit(ctx, insert_at, insert_at, format!("{moved}{sep}")),
                    edit(ctx, decl_start, delete_end, String::new()),
                ];
                e.extend(clones);
                e
            },
            declares: Some((
                binding.name.clone(),
                m.scopes[f_scope].span.start..m.scopes[f_scope].span.end,
            )),
        });
    }

    // Case 2: hoist the expression itself. Prefer the whole argument (e.g.
    // `UUID.randomUUID().toString()`) when it is the sink's value.
    let expr_span = m
        .calls
        .iter()
        .flat_map(|c| c.args.iter())
        // A lambda argument is code run later, not a value to compute once.
        .filter(|a| a.lambda.is_none())
        .map(|a| m.values[a.value].span)
        .filter(|s| !text[s.start..s.end].trim_start().starts_with('{'))
        .chain(m.field_inits.iter().map(|fi| m.values[fi.value].span))
        .chain(m.pairs.iter().map(|p| m.values[p.value].span))
        .filter(|s| s.contains(f.span) && m.scopes[b].span.contains(*s))
        .min_by_key(|s| s.end - s.start)
        .filter(|s| {
            let t = &text[s.start..s.end];
            t.len() <= 120 && !t.contains('\n')
        })
        .unwrap_or(f.span);
    if let Some(name) = reads_boundary_locals(m, expr_span, b) {
        return Err(reads_attempt_local(&name));
    }
    let base = if rust {
        "idempotency_key"
    } else {
        "idempotencyKey"
    };
    let taken = names_in_function(m, b);
    // Fields and other names used in the enclosing function count as taken too.
    let f_span = m.scopes[m.enclosing_function(b).unwrap_or(0)].span;
    let f_text = text.get(f_span.start..f_span.end).unwrap_or("");
    // A field access (`.name`) or a struct-literal field (`name: v`) does not take the name.
    let used = |n: &str| {
        f_text.match_indices(n).any(|(i, _)| {
            let after = &f_text[i + n.len()..];
            let before = f_text[..i].chars().next_back();
            !after.starts_with(|c: char| c.is_alphanumeric() || c == '_')
                && !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
                && (!after.starts_with(':') || after.starts_with("::"))
                // A Kotlin named argument label (`idempotencyKey = …`) is not a variable.
                && !is_named_label(m.language, after)
        })
    };
    let mut name = base.to_string();
    let mut n = 2;
    while (taken.contains(&name.as_str()) || used(&name)) && n < 100 {
        name = format!("{base}{n}");
        n += 1;
    }
    let expr = &text[expr_span.start..expr_span.end];
    let end = if inline { " " } else { nl };
    let decl = match m.language {
        Language::Kotlin if inline => format!("val {name} = {expr};{end}"),
        Language::Kotlin => format!("{indent}val {name} = {expr}{end}"),
        Language::Java => {
            let level = level::java_level(ctx.java_version, ctx.path);
            let ty = java_type(m, expr_span, expr, level)?;
            format!("{indent}final {ty} {name} = {expr};{end}")
        }
        Language::Rust => format!("{indent}let {name} = {expr};{end}"),
    };
    let use_text = if rust {
        format!("{name}.clone()")
    } else {
        name.clone()
    };
    let (applicability, reason) = if rust && is_move {
        (
            Applicability::Unsafe,
            Some("the key is used inside a `move` closure or `async move` block: the clone is moved into it once, and a retry that runs it again may not compile; build it, and clone inside the closure if needed".to_string()),
        )
    } else {
        (Applicability::Safe, None)
    };
    Ok(Fix {
        applicability,
        reason,
        message: format!(
            "hoist `{expr}` into `{name}` before {} so every attempt reuses one key",
            bd.label
        ),
        edits: vec![
            edit(ctx, insert_at, insert_at, decl),
            edit(ctx, expr_span.start, expr_span.end, use_text),
        ],
        declares: Some((name, f_span.start..f_span.end)),
    })
}

/// `key-in-callback-retry`: when the callback re-invokes the same service method with the
/// same argument expressions as the call it was enqueued for, replace the re-invocation
/// with `<call>.clone()` (Retrofit's `Call.clone()` resends the original request, key
/// included). `<call>` is the callback method's first parameter.
fn clone_call(ctx: &FixCtx, f: &Finding) -> Option<Fix> {
    let m = ctx.model;
    let text = ctx.text;
    let b = boundary_scope(ctx, f)?;
    let callback = m.function_info(b)?;
    let call_param = callback.params.first()?.name.clone();
    let object = m.scopes[b].parent?;
    let enqueue = m
        .calls
        .iter()
        .find(|c| c.args.iter().any(|a| a.lambda == Some(object)))?;
    let original = &m.calls[enqueue.receiver_call?];
    // The re-invocation: a call of the same method, inside the callback, containing the
    // ephemeral expression, itself the receiver of an `enqueue`/`execute`.
    let (rid, again) = m.calls.iter().enumerate().find(|(_, c)| {
        c.callee == original.callee
            && m.is_within(c.scope, b)
            && c.args.iter().any(|a| a.span.contains(f.span))
    })?;
    if !m
        .calls
        .iter()
        .any(|c| c.receiver_call == Some(rid) && (c.callee == "enqueue" || c.callee == "execute"))
    {
        return None;
    }
    let norm = |s: Span| -> String {
        text[s.start..s.end]
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect()
    };
    if again.args.len() != original.args.len()
        || again
            .args
            .iter()
            .zip(&original.args)
            .any(|(x, y)| x.name != y.name || norm(x.span) != norm(y.span))
    {
        return None;
    }
    Some(Fix {
        applicability: Applicability::Safe,
        reason: None,
        message: format!(
            "retry with `{call_param}.clone()`, which resends the original request and its key"
        ),
        edits: vec![edit(
            ctx,
            again.span.start,
            again.span.end,
            format!("{call_param}.clone()"),
        )],
        declares: None,
    })
}
