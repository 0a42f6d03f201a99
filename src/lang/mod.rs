//! Frontends: one per language, each lowering its syntax tree into [`crate::model`].
//! Adding a language means adding a file here, a [`Language`] variant and catalogue entries.

pub mod java;
pub mod kotlin;
pub mod rust;

use crate::model::{FileModel, Language};

/// At most this many syntax errors are reported per file (Java and Kotlin).
pub(crate) const MAX_ERRORS: usize = 20;

/// The syntax errors of a tree-sitter tree, in source order, at most [`MAX_ERRORS`]:
/// every MISSING node (`missing \`;\``), and every ERROR node that holds no other error.
/// tree-sitter can wrap a long stretch that it could not fit, up to the whole file, in
/// one ERROR node around the ERROR nodes of the tokens it rejected (a `\"` outside a
/// string on line 139 made the whole file one ERROR from 1:1); the rejected tokens are
/// what a reader needs, so the innermost errors are reported. Spans are byte offsets
/// into the parsed text. Also how broken the tree is
/// ([`crate::model::FileModel::damage`]): the number of such errors with no cap, and the
/// bytes covered by the outermost ERROR nodes. Iterative: only subtrees that contain an
/// error are entered.
pub(crate) fn syntax_errors(
    root: tree_sitter::Node,
) -> (Vec<crate::model::ParseError>, (usize, usize)) {
    use crate::model::{ParseError, Span};
    let mut shown = Vec::new();
    let (mut count, mut bytes) = (0usize, 0usize);
    // (node, inside an ERROR already)
    let mut stack = vec![(root, false)];
    while let Some((n, inside)) = stack.pop() {
        if !n.has_error() {
            continue;
        }
        let span = Span::new(n.start_byte(), n.end_byte());
        let mut report = |message: String| {
            count += 1;
            if shown.len() < MAX_ERRORS {
                shown.push(ParseError { message, span });
            }
        };
        if n.is_missing() {
            report(format!("missing `{}`", n.kind()));
            continue;
        }
        if n.is_error() && !inside {
            bytes += span.end - span.start;
        }
        let mut c = n.walk();
        let kids: Vec<tree_sitter::Node> = n.children(&mut c).filter(|k| k.has_error()).collect();
        if n.is_error() && kids.is_empty() {
            report("syntax error".to_string());
            continue;
        }
        let inside = inside || n.is_error();
        stack.extend(kids.into_iter().rev().map(|k| (k, inside)));
    }
    (shown, (count, bytes))
}

/// The time a tree-sitter parse may take before it is given up: this much, plus
/// [`PARSE_PER_MIB`] per MiB of text. Real files parse in well under a second per MiB
/// (orb-java's 2.7 MB generated Kotlin files: about 0.4 s per MB), but a grammar's
/// external scanner can be quadratic: tree-sitter-kotlin's automatic-semicolon scanner
/// skips every following comment again at each comment, so a declaration followed by
/// 30,000 line comments (1.1 MB) ran for more than 10 minutes. A file that idemlint runs
/// on may come from an untrusted pull request, so such a file is reported instead.
pub const PARSE_BASE: std::time::Duration = std::time::Duration::from_secs(5);

/// See [`PARSE_BASE`].
pub const PARSE_PER_MIB: std::time::Duration = std::time::Duration::from_secs(10);

/// The budget of [`parse_within`] for `len` bytes of text.
pub fn parse_budget(len: usize) -> std::time::Duration {
    PARSE_BASE + PARSE_PER_MIB.mul_f64(len as f64 / (1u64 << 20) as f64)
}

/// Parses `src` with `parser` (its language set), giving up once the parse has taken
/// longer than `budget` of wall time (checked by tree-sitter's progress callback, which
/// the parser calls between its steps). `None` when it gave up (the parser is then reset,
/// so its next parse starts afresh); what else makes tree-sitter return no tree gives
/// `None` too.
pub fn parse_within(
    parser: &mut tree_sitter::Parser,
    src: &str,
    budget: std::time::Duration,
) -> Option<tree_sitter::Tree> {
    let bytes = src.as_bytes();
    let start = std::time::Instant::now();
    let mut over = |_: &tree_sitter::ParseState| {
        if start.elapsed() > budget {
            std::ops::ControlFlow::Break(())
        } else {
            std::ops::ControlFlow::Continue(())
        }
    };
    let tree = parser.parse_with_options(
        &mut |offset, _| bytes.get(offset..).unwrap_or_default(),
        None,
        Some(tree_sitter::ParseOptions::new().progress_callback(&mut over)),
    );
    if tree.is_none() {
        // A halted parse resumes on the parser's next call unless reset.
        parser.reset();
    }
    tree
}

/// The message of a file whose parse was given up ([`parse_within`]) by `parser` (the
/// grammar's name), for a text of `len` bytes.
pub fn gave_up_message(parser: &str, len: usize) -> String {
    format!(
        "the {parser} parser gave up on this file: it took longer than {:.0} s ({} s, plus {} s \
         per MiB); the file is not analysed",
        parse_budget(len).as_secs_f64(),
        PARSE_BASE.as_secs(),
        PARSE_PER_MIB.as_secs(),
    )
}

/// Parses and lowers one file's text. Never panics on any input (callers still guard
/// against panics, see `check`).
pub fn lower(language: Language, text: &str) -> FileModel {
    // A raw NUL byte is valid in a Java or Kotlin string literal or comment (generated
    // code has them), but the tree-sitter grammars reject it: read as a space, the same
    // length, so every span stays the text's.
    let spaced;
    let text = if language != Language::Rust && text.contains('\0') {
        spaced = text.replace('\0', " ");
        spaced.as_str()
    } else {
        text
    };
    let mut m = match language {
        Language::Rust => rust::lower(text),
        Language::Java => java::lower(text),
        Language::Kotlin => kotlin::lower(text),
    };
    if language == Language::Kotlin {
        m.aliases.extend(kotlin_import_aliases(text));
    }
    let members = member_imports(language, text);
    if language != Language::Rust {
        status_checked_loops(&mut m, text);
        drain_loops(&mut m, text);
    }
    flag_exits(&mut m, language, text);
    normalize_identifiers(&mut m);
    qualify_member_imports(&mut m, &members);
    receiver_types(&mut m, text);
    m
}

/// Members imported by name from a type, `(member, type)` (simple names): Java
/// `import static java.util.UUID.randomUUID;` and Kotlin `import java.util.UUID.randomUUID`
/// (a lowercase name after a capitalised segment; JLS 7.5.3, Kotlin "Packages and
/// imports"). Wildcards (`import static a.B.*`) name no member and are left out.
fn member_imports(language: Language, text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if language == Language::Rust {
        return out;
    }
    for line in text.lines() {
        let l = line.trim_start();
        let path = match language {
            Language::Java => l.strip_prefix("import static "),
            _ => l.strip_prefix("import "),
        };
        let Some(path) = path else { continue };
        let path = path
            .split(|c: char| c == ';' || c.is_whitespace())
            .next()
            .unwrap_or("")
            .replace('`', "");
        let mut segs = path.rsplit('.');
        let (Some(member), Some(owner)) = (segs.next(), segs.next()) else {
            continue;
        };
        let starts = |s: &str, upper: bool| {
            s.chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() && c.is_uppercase() == upper)
        };
        if member.chars().all(is_ident_char)
            && owner.chars().all(is_ident_char)
            && starts(owner, true)
            && (language == Language::Java || starts(member, false))
        {
            out.push((member.to_string(), owner.to_string()));
        }
    }
    out
}

/// A free call of a member imported by name (see [`member_imports`]) is a call on its
/// type: `randomUUID()` after `import static java.util.UUID.randomUUID` reads as
/// `UUID.randomUUID()`, so the catalogue and the index see the type. The type's name is a
/// token of the import line, which the prefilter relies on. A function of the same name
/// declared in the file wins (it shadows the import).
fn qualify_member_imports(m: &mut FileModel, members: &[(String, String)]) {
    if members.is_empty() {
        return;
    }
    let declared: foldhash::HashSet<&str> = m
        .scopes
        .iter()
        .filter_map(|s| match &s.kind {
            crate::model::ScopeKind::Function(f) => Some(f.name.as_str()),
            _ => None,
        })
        .collect();
    let mut quals = Vec::new();
    for (i, c) in m.calls.iter().enumerate() {
        if c.receiver.is_none()
            && c.path.is_empty()
            && !c.is_new
            && !declared.contains(c.callee.as_str())
            && let Some((_, owner)) = members.iter().find(|(n, _)| *n == c.callee)
        {
            quals.push((i, owner.clone()));
        }
    }
    for (i, owner) in quals {
        m.calls[i].path = vec![owner.clone()];
        m.calls[i].receiver = Some(owner);
    }
}

/// The declared type written with a binding's declaration, as a simple name: Kotlin and
/// Rust `name: Type`, Java `Type name`; empty when none is written (`var`, `val x = ..`,
/// `let x = ..`) or it is a primitive.
pub(crate) fn declared_type(language: Language, text: &str, b: &crate::model::Binding) -> String {
    let simple = |t: &str| -> String {
        let mut t = t
            .trim()
            .trim_start_matches('&')
            .trim_start_matches("mut ")
            .trim();
        // Rust smart pointers call through to what they hold: `Arc<Client>` is a `Client`
        // receiver, `Box<dyn Broker>` a `Broker` one.
        if language == Language::Rust {
            loop {
                let inner = ["Arc<", "Rc<", "Box<", "std::sync::Arc<", "std::rc::Rc<"]
                    .iter()
                    .find_map(|p| t.strip_prefix(p));
                match inner {
                    Some(rest) => t = rest.trim_start(),
                    None => break,
                }
            }
        }
        let t = t.trim_start_matches("dyn ").trim_start_matches("impl ");
        let head = t
            .split(['<', '>', '?', '[', ' ', '(', ',', '=', ')', '{', ';'])
            .next()
            .unwrap_or("");
        let mut segs = head.rsplit(['.', ':']);
        let last = segs.next().unwrap_or("").trim_matches('`');
        let typed = |x: &str| {
            x.chars().next().is_some_and(char::is_uppercase) && x.chars().all(is_ident_char)
        };
        if !typed(last) {
            return String::new();
        }
        // A nested JVM type keeps its enclosing type (`HttpRequest.Builder`), which
        // `ProjectIndex::candidates_of` compares with a project type's.
        match segs.next().map(|x| x.trim_matches('`')) {
            Some(outer) if language != Language::Rust && typed(outer) && head.contains('.') => {
                format!("{outer}.{last}")
            }
            _ => last.to_string(),
        }
    };
    match language {
        Language::Kotlin | Language::Rust => {
            let end = b.span.end.min(text.len());
            let Some(after) = text.get(b.name_span.end.min(end)..end) else {
                return String::new();
            };
            let after = after.trim_start();
            match after.strip_prefix(':') {
                Some(t) if !t.starts_with(':') => simple(t),
                _ => String::new(),
            }
        }
        Language::Java => {
            let Some(before) = text.get(b.span.start.min(b.name_span.start)..b.name_span.start)
            else {
                return String::new();
            };
            let before = before.trim_end();
            // Drop trailing generic arguments and array brackets: `Map<String, Key> x`.
            let mut depth = 0i32;
            let mut cut = before.len();
            for (i, c) in before.char_indices().rev() {
                match c {
                    '>' | ']' => depth += 1,
                    '<' | '[' => depth -= 1,
                    _ if depth == 0 => {
                        cut = i + c.len_utf8();
                        break;
                    }
                    _ => {}
                }
            }
            let head = &before[..cut];
            let word = head
                .rsplit(|c: char| !(is_ident_char(c) || c == '.'))
                .next()
                .unwrap_or("");
            simple(word)
        }
    }
}

/// Fills [`crate::model::Call::receiver_type`]: for a receiver that is a plain name (or
/// `this.x` / `self.x`), the declared type of the innermost binding of that name whose
/// scope encloses the call (a field of an enclosing type included).
fn receiver_types(m: &mut FileModel, text: &str) {
    use foldhash::{HashMap, HashMapExt};
    // Bindings by (name, scope), in declaration order: a call looks only at the scopes
    // that enclose it (linear in calls × nesting depth, not calls × bindings of a name).
    let mut by_name: HashMap<(&str, usize), Vec<usize>> = HashMap::new();
    for (i, b) in m.bindings.iter().enumerate() {
        by_name
            .entry((b.name.as_str(), b.scope))
            .or_default()
            .push(i);
    }
    let mut types: HashMap<usize, String> = HashMap::new();
    let mut out: Vec<(usize, String)> = Vec::new();
    for (ci, c) in m.calls.iter().enumerate() {
        let Some(r) = c.receiver.as_deref() else {
            continue;
        };
        let r = r
            .strip_prefix("this.")
            .or_else(|| r.strip_prefix("self."))
            .unwrap_or(r);
        if r.is_empty() || !r.chars().all(is_ident_char) {
            continue;
        }
        // Innermost enclosing scope wins; among bindings of one scope, the last declared
        // before the call (a field anywhere in its type).
        let mut best: Option<((), usize)> = None; // ((), binding)
        for scope in m.ancestors(c.scope) {
            let Some(cands) = by_name.get(&(r, scope)) else {
                continue;
            };
            best = cands
                .iter()
                .rev()
                .find(|&&bi| {
                    let b = &m.bindings[bi];
                    b.kind == crate::model::BindingKind::Field || b.name_span.start <= c.span.start
                })
                .map(|&bi| ((), bi));
            if best.is_some() {
                break;
            }
        }
        let Some((_, bi)) = best else {
            // Rust `self.field`: the field's type in the struct the `impl` block is for.
            if m.language == Language::Rust
                && c.receiver
                    .as_deref()
                    .is_some_and(|x| x.starts_with("self."))
                && let Some(ty) = m
                    .ancestors(c.scope)
                    .find_map(|s| match &m.scopes[s].kind {
                        crate::model::ScopeKind::Type(t) => Some(t.name.as_str()),
                        _ => None,
                    })
                    .and_then(|owner| {
                        m.field_types
                            .iter()
                            .find(|(o, f, _)| o == owner && f == r)
                            .map(|(_, _, t)| t.clone())
                    })
            {
                out.push((ci, ty));
            }
            continue;
        };
        let ty = types
            .entry(bi)
            .or_insert_with(|| declared_type(m.language, text, &m.bindings[bi]))
            .clone();
        if !ty.is_empty() {
            out.push((ci, ty));
        }
    }
    for (ci, ty) in out {
        m.calls[ci].receiver_type = Some(ty);
    }
}

/// Java and Kotlin loops that test a response status and go round again on a bad one
/// (`if (resp.statusCode() >= 500) continue;`, `if (!response.isSuccessful) { delay(..) }`)
/// handle a failure as much as a `catch` does: [`crate::model::LoopInfo::handles_error`]
/// is set when the loop's text reads a status and either says `continue` or leaves the
/// loop on success. (The Rust frontend sees `.status()` / `is_success()` calls itself.)
fn status_checked_loops(m: &mut FileModel, text: &str) {
    const STATUS: &[&str] = &[
        ".statusCode",
        "getStatusCode()",
        ".status.",
        ".status ",
        ".status)",
        ".status()",
        ".code()",
        ".code ",
        "getCode()",
        "isSuccessful",
        "isSuccess",
        "is2xxSuccessful",
        "is5xxServerError",
        "isError",
        // A predicate over the result named for retrying it (`isCaptureRetryable(result)`,
        // `shouldRetry(response)`).
        "Retryable(",
        "Retriable(",
        "shouldRetry(",
    ];
    for s in &mut m.scopes {
        let crate::model::ScopeKind::Loop(li) = &mut s.kind else {
            continue;
        };
        if li.handles_error {
            continue;
        }
        let Some(body) = text.get(s.span.start..s.span.end) else {
            continue;
        };
        if body.len() > 64 * 1024 {
            continue;
        }
        let reads_status = STATUS.iter().any(|w| body.contains(w));
        if reads_status && (li.has_exit || body.contains("continue")) {
            li.handles_error = true;
        }
    }
}

/// Sets [`crate::model::LoopInfo::has_exit`] for a `while` / `do` loop whose condition
/// reads a local that the body assigns outside its `catch` clauses: `while (!done) { try {
/// charge(); done = true; } catch (e: IOException) { .. } }` ends on success through the
/// flag instead of a `break`. In Rust, which has no `catch` to tell a
/// failure handler by, only a flag set to a success test counts: `done = res.is_ok();`,
/// `done = resp.status().is_success();`, or `done = true;` (as in an `Ok(_) =>` arm).
fn flag_exits(m: &mut FileModel, language: Language, text: &str) {
    let mut exits = Vec::new();
    for (i, s) in m.scopes.iter().enumerate() {
        let crate::model::ScopeKind::Loop(li) = &s.kind else {
            continue;
        };
        if li.has_exit || !matches!(li.keyword.as_str(), "while" | "do") {
            continue;
        }
        let names: Vec<&str> = li
            .header
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| {
                !w.is_empty()
                    && !w.starts_with(|c: char| c.is_ascii_digit())
                    && !matches!(*w, "true" | "false" | "null" | "this")
            })
            .collect();
        let success_test = |a: &crate::model::Assign| {
            let v = m.values[a.value].span;
            let v = text.get(v.start..v.end).unwrap_or("").trim();
            language != Language::Rust
                || v == "true"
                || v.ends_with(".is_ok()")
                || v.ends_with(".is_success()")
        };
        let flagged = m.assigns.iter().any(|a| {
            names.contains(&a.name.as_str())
                && s.span.contains(a.span)
                && success_test(a)
                && !m
                    .catches
                    .iter()
                    .any(|c| s.span.contains(*c) && c.contains(a.span))
        });
        if flagged {
            exits.push(i);
        }
    }
    for i in exits {
        if let crate::model::ScopeKind::Loop(li) = &mut m.scopes[i].kind {
            li.has_exit = true;
        }
    }
}

/// Marks [`crate::model::LoopInfo::drains`]: a `while` / `do` loop (not counting attempts)
/// that takes the next item of a queue, channel or iterator (`poll()`, `dequeue()`,
/// `take()`, `next()`, `receive()`, ..) in its condition
/// (`while ((req = queue.poll()) != null)`), or first thing in its body, into a local
/// (`val (e, at) = queue.dequeue() ?: break`, `req = queue.poll()`). Each iteration then
/// works on another item, so the loop is no retry of one operation, whatever failure
/// handling it has (issue 10: drain loops are not retries). A take later in the body (a
/// failover host, a backoff delay, a parsed element) says nothing about the loop.
fn drain_loops(m: &mut FileModel, text: &str) {
    const TAKE: &[&str] = &[
        "poll",
        "pollFirst",
        "pollLast",
        "dequeue",
        "take",
        "pop",
        "removeFirst",
        "removeLast",
        "next",
        "receive",
        "tryReceive",
        "nextElement",
    ];
    let mut drains = Vec::new();
    // `while (it.hasNext())`, `while (!queue.isEmpty())`: an iteration over items.
    for (i, s) in m.scopes.iter().enumerate() {
        if let crate::model::ScopeKind::Loop(li) = &s.kind {
            let h = li.header.to_ascii_lowercase().replace(' ', "");
            if li.keyword == "while"
                && !li.counts_attempts()
                && (h.contains("hasnext()")
                    || h.contains("hasmoreelements()")
                    || h.contains("isnotempty()")
                    || (h.starts_with('!') && h.ends_with(".isempty()")))
            {
                drains.push(i);
            }
        }
    }
    for (ci, c) in m.calls.iter().enumerate() {
        if !TAKE.contains(&c.callee.as_str()) {
            continue;
        }
        let Some(l) = m.scopes.get(c.scope) else {
            continue;
        };
        let crate::model::ScopeKind::Loop(li) = &l.kind else {
            continue;
        };
        // The body starts after the header; a take in the header (`while ((r = q.poll())
        // != null)`, `for (r = q.poll(); r != null; r = q.poll())`) makes any loop a drain,
        // a take first in the body only a `while` / `do` that does not count attempts.
        let src = text.get(l.span.start..l.span.end).unwrap_or("");
        let body_start = src
            .find(li.header.as_str())
            .map_or(l.span.start, |i| l.span.start + i + li.header.len());
        let in_header = c.span.end <= body_start;
        if !in_header && (!matches!(li.keyword.as_str(), "while" | "do") || li.counts_attempts()) {
            continue;
        }
        let first = m.calls[..ci].iter().all(|o| {
            o.scope != c.scope || o.span.start < body_start || o.span.start >= c.span.start
        });
        let held = m
            .bindings
            .iter()
            .any(|b| b.scope == c.scope && b.span.contains(c.span))
            || m.assigns
                .iter()
                .any(|a| a.scope == c.scope && m.values[a.value].span.contains(c.span));
        if in_header || (first && held) {
            drains.push(c.scope);
        }
    }
    for i in drains {
        if let crate::model::ScopeKind::Loop(li) = &mut m.scopes[i].kind {
            li.drains = true;
        }
    }
}

/// `import a.b.C as D` lines of a Kotlin file: `(D, C)`.
fn kotlin_import_aliases(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("import ") else {
            continue;
        };
        let Some((path, alias)) = rest.split_once(" as ") else {
            continue;
        };
        let original = path
            .trim()
            .rsplit('.')
            .next()
            .unwrap_or("")
            .replace('`', "");
        // The alias is the first token after `as` (a comment may follow).
        let alias = alias
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_end_matches(';')
            .replace('`', "");
        if !original.is_empty() && !alias.is_empty() && alias.chars().all(is_ident_char) {
            out.push((alias, original));
        }
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// One spelling per identifier, whatever the source wrote: Kotlin backticks
/// (`` `randomUUID` ``) and Rust raw identifiers (`r#new_v4`) are removed, and import
/// aliases are replaced by the name they stand for in callees, Rust paths and the first
/// segment of receivers, so the catalogue and the index compare names by meaning. Every
/// resulting name is still a token of the text (the original of an alias appears in its
/// import), which the prefilter relies on.
fn normalize_identifiers(m: &mut FileModel) {
    fn clean(s: &mut String) {
        if s.contains('`') {
            s.retain(|c| c != '`');
        }
        if s.contains("r#") {
            *s = strip_raw(s);
        }
    }
    fn strip_raw(s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let at_start = i == 0 || !is_ident_char(s[..i].chars().next_back().unwrap_or(' '));
            if at_start && b[i] == b'r' && b.get(i + 1) == Some(&b'#') {
                i += 2;
                continue;
            }
            let c = s[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
        out
    }
    let alias = |name: &str| -> Option<String> {
        m.aliases
            .iter()
            .find(|(a, _)| a == name)
            .map(|(_, o)| o.clone())
    };
    let mut calls = std::mem::take(&mut m.calls);
    for c in &mut calls {
        clean(&mut c.callee);
        for p in &mut c.path {
            clean(p);
        }
        if let Some(r) = &mut c.receiver {
            clean(r);
        }
        if !m.aliases.is_empty() {
            if let Some(o) = alias(&c.callee) {
                c.callee = o;
            }
            if let Some(first) = c.path.first_mut()
                && let Some(o) = alias(first)
            {
                *first = o;
            }
            if let Some(r) = &mut c.receiver {
                let end = r.find(|ch: char| !is_ident_char(ch)).unwrap_or(r.len());
                if let Some(o) = alias(&r[..end]) {
                    r.replace_range(..end, &o);
                }
            }
        }
    }
    m.calls = calls;
    for b in &mut m.bindings {
        clean(&mut b.name);
    }
    for a in &mut m.assigns {
        clean(&mut a.name);
    }
    for f in &mut m.field_inits {
        clean(&mut f.name);
    }
    for v in &mut m.values {
        for a in &mut v.atoms {
            if let crate::model::Atom::Name { name, .. } = a {
                clean(name);
            }
        }
        if let Some(i) = &mut v.ident {
            clean(i);
        }
    }
    for s in &mut m.scopes {
        match &mut s.kind {
            crate::model::ScopeKind::Function(f) => {
                clean(&mut f.name);
                for p in &mut f.params {
                    clean(&mut p.name);
                }
            }
            crate::model::ScopeKind::Lambda(l) => {
                for p in &mut l.params {
                    clean(&mut p.name);
                }
            }
            _ => {}
        }
    }
}

/// Whether some node below `node` satisfies `pred`, visiting at most `budget` nodes;
/// `None` when the budget runs out first (callers then assume the worse case). Shared by
/// the tree-sitter frontends.
pub(crate) fn ts_any_below(
    node: tree_sitter::Node,
    budget: usize,
    pred: impl Fn(tree_sitter::Node) -> bool,
) -> Option<bool> {
    let mut c = node.walk();
    let mut seen = 0usize;
    if !c.goto_first_child() {
        return Some(false);
    }
    loop {
        seen += 1;
        if seen > budget {
            return None;
        }
        if pred(c.node()) {
            return Some(true);
        }
        if c.goto_first_child() {
            continue;
        }
        loop {
            if c.goto_next_sibling() {
                break;
            }
            if !c.goto_parent() || c.node() == node {
                return Some(false);
            }
        }
    }
}

/// The most nodes of `catch` bodies [`ts_any_below`] looks at for a rethrow.
pub(crate) const HANDLED_SCAN_BUDGET: usize = 20_000;

/// Whether the header of a `catch` clause (`catch (IOException | Exception e)`,
/// `catch (e: Throwable)`) names a type that catches every exception a call can throw:
/// `Exception` or `Throwable`, qualified or not (`java.lang.Exception`).
pub(crate) fn catches_everything(header: &str) -> bool {
    header
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .any(|w| w == "Exception" || w == "Throwable")
}

#[cfg(test)]
mod parse_budget_tests {
    use super::{gave_up_message, parse_within};

    /// tree-sitter-kotlin's scanner skips every following comment again at each comment:
    /// 4,000 line comments after a declaration take seconds. A budget stops the parse.
    #[test]
    fn a_parse_past_its_budget_is_given_up() {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_kotlin_sg::LANGUAGE.into())
            .unwrap();
        let slow = format!(
            "interface Api {{ fun refund(idempotencyKey: String): String }}\n{}",
            "// padding padding padding padding padding padding padding padding\n".repeat(4000)
        );
        let budget = std::time::Duration::from_millis(20);
        assert!(parse_within(&mut parser, &slow, budget).is_none());
        // The same parser, the same budget, an ordinary file: parsed.
        let tree = parse_within(&mut parser, "fun f() = 1\n", budget).expect("parsed");
        assert!(!tree.root_node().has_error());
        assert!(
            gave_up_message("Kotlin", 1 << 20)
                .contains("longer than 15 s (5 s, plus 10 s per MiB)")
        );
    }
}

#[cfg(test)]
mod syntax_error_tests {
    use super::syntax_errors;

    fn java_parser() -> tree_sitter::Parser {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&tree_sitter_java::LANGUAGE.into())
            .unwrap();
        parser
    }

    /// A `\"` outside a string literal (escaped quotes pasted from a Java string) on line
    /// 7: tree-sitter-java wraps the whole file in one ERROR node from offset 0 around the
    /// rejected tokens. The error is reported where the tokens are, not at 1:1.
    #[test]
    fn an_error_is_located_at_the_rejected_token_not_the_region_around_it() {
        let src = "package com.acme.client;\n\
                   \n\
                   public class Config {\n\
                   \x20   @Bean\n\
                   \x20   public RequestInterceptor auth() {\n\
                   \x20       return template -> {\n\
                   \x20           template.header(\\\"Authorization\\\", \\\"Bearer \\\" + token());\n\
                   \x20       };\n\
                   \x20   }\n\
                   }\n";
        let mut parser = java_parser();
        let tree = parser.parse(src, None).unwrap();
        let root = tree.root_node();
        // The shape this test is about: an error region that starts at the file's start.
        let mut c = root.walk();
        let first = root.children(&mut c).next().unwrap();
        assert!(
            root.is_error() || (first.is_error() && first.start_byte() == 0),
            "tree-sitter-java no longer wraps this file in one ERROR: {}",
            root.to_sexp()
        );
        let (errors, (count, _)) = syntax_errors(root);
        assert!(!errors.is_empty());
        assert_eq!(count, errors.len());
        let line7 = src.match_indices('\n').nth(5).unwrap().0 + 1;
        let line8 = src.match_indices('\n').nth(6).unwrap().0 + 1;
        for e in &errors {
            assert!(
                (line7..line8).contains(&e.span.start),
                "error at byte {} outside line 7 ({line7}..{line8}): {errors:?}",
                e.span.start
            );
            assert_eq!(e.message, "syntax error");
        }
    }

    /// A missing token is reported as such, and a file without errors has none.
    #[test]
    fn missing_tokens_are_named_and_clean_files_have_no_errors() {
        let mut parser = java_parser();
        let clean = parser.parse("class A { void f() { g(); } }", None).unwrap();
        assert_eq!(syntax_errors(clean.root_node()), (Vec::new(), (0, 0)));
        let missing = parser.parse("class A { int x = 1 }", None).unwrap();
        let (errors, damage) = syntax_errors(missing.root_node());
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert_eq!(
            damage,
            (1, 0),
            "a missing token is one error and covers no text"
        );
        assert_eq!(errors[0].message, "missing `;`");
    }
}

#[cfg(test)]
mod nul_tests {
    use super::*;

    /// Found by a new-user helper on gr4vy-java: raw NUL bytes inside a string literal (valid
    /// Java and Kotlin) were syntax errors, which `--strict` turns into exit 2. The model's
    /// spans still point into the text as given.
    #[test]
    fn raw_nul_bytes_in_literals_and_comments_are_no_syntax_error() {
        for (language, text) in [
            (
                Language::Java,
                "class A {\n  String s = \" PARAM \0\0 \"; // \0\n  void f() { g(); }\n}\n",
            ),
            (
                Language::Kotlin,
                "class B {\n  val s = \" PARAM \0 \" /* \0 */\n  fun f() { g() }\n}\n",
            ),
        ] {
            let m = lower(language, text);
            assert!(m.errors.is_empty(), "{language:?}: {:?}", m.errors);
            let g = m
                .calls
                .iter()
                .find(|c| c.callee == "g")
                .expect("the call of g");
            assert_eq!(&text[g.span.start..g.span.end], "g()");
        }
    }
}
