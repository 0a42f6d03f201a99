//! Kotlin frontend: lowers a `tree-sitter-kotlin-sg` parse tree into the language-neutral
//! [`FileModel`] (see `model.rs` for the contract).
//!
//! One recursive pass over the tree, bounded to [`MAX_DEPTH`] levels, records scopes, calls,
//! values (with their atoms), bindings, assignments, returns, string literals and
//! annotations. A second, iterative pass that only descends into subtrees containing errors
//! records ERROR / MISSING nodes. The frontend never decides what is a finding.
//!
//! Stack discipline: the functions that recurse (`visit`, the `h_*` handlers and the few
//! helpers between them) keep almost no locals; everything bulky (parsing a declaration's
//! parts, building `Call`/`Arg`/scope records) happens in non-recursive `*_head` / `*_finish`
//! helpers whose frames are gone before the walk descends. Dispatch goes through a table of
//! handler pointers indexed by node kind id, so `visit` itself has a tiny frame.

use crate::model::*;
use tree_sitter::{Node, Parser};

/// Recursion bound of the walker; deeper constructs are skipped with one [`ParseError`].
const MAX_DEPTH: usize = 1000;

/// String literals nested deeper than this (through `${ .. }` templates) are refused before
/// parsing: the grammar's external scanner aborts the process at about 510 levels.
const MAX_STRING_NESTING: usize = 200;

/// A node handler of the walk.
type Handler<'a> = for<'t> fn(&mut Lowerer<'a>, Node<'t>) -> Option<CallId>;

/// Parses `text` and lowers it into the language-neutral model.
pub fn lower(text: &str) -> FileModel {
    let mut model = FileModel::new(Language::Kotlin, text.len());
    let language: tree_sitter::Language = tree_sitter_kotlin_sg::LANGUAGE.into();
    let mut parser = Parser::new();
    if parser.set_language(&language).is_err() {
        model.errors.push(ParseError {
            message: "cannot load the Kotlin grammar".to_string(),
            span: Span::new(0, 0),
        });
        return model;
    }
    if string_nesting_exceeds(text, MAX_STRING_NESTING) {
        model.errors.push(ParseError {
            message: format!(
                "string templates nested deeper than {MAX_STRING_NESTING} levels; the file is not analysed"
            ),
            span: Span::new(0, text.len()),
        });
        return model;
    }
    // A byte-order mark is blanked with three spaces (same byte length), so every offset
    // still refers to `text` while the grammar does not choke on it.
    let blanked;
    let src: &str = match text.strip_prefix('\u{feff}') {
        Some(rest) => {
            blanked = format!("   {rest}");
            &blanked
        }
        None => text,
    };
    let Some(tree) = super::parse_within(&mut parser, src, super::parse_budget(src.len())) else {
        model.errors.push(ParseError {
            message: super::gave_up_message("Kotlin", src.len()),
            span: Span::new(0, text.len()),
        });
        return model;
    };
    let mut lw = Lowerer {
        text: src,
        m: model,
        table: Lowerer::build_table(&language),
        scope: 0,
        in_code: false,
        atoms: Vec::new(),
        vstack: Vec::new(),
        frames: Vec::new(),
        catch_depth: 0,
        depth: 0,
        depth_reported: false,
        pending_label: None,
        file_annotations: Vec::new(),
    };
    let root = tree.root_node();
    let (errors, damage) = super::syntax_errors(root);
    lw.m.errors.extend(errors);
    lw.m.damage = Some(damage);
    lw.visit(root);
    lw.m
}

/// True when string literals nest (through `${ .. }`) more than `limit` deep, by a light
/// scan that follows strings, templates, braces, character literals and comments. Files with
/// at most `limit` double quotes cannot nest that deep and are not scanned.
fn string_nesting_exceeds(text: &str, limit: usize) -> bool {
    let b = text.as_bytes();
    if b.iter().filter(|&&c| c == b'"').count() <= limit {
        return false;
    }
    // A string (raw or not) or code (with its open braces).
    #[derive(Clone, Copy)]
    enum Ctx {
        Code(usize),
        Str(bool),
    }
    let mut stack = vec![Ctx::Code(0)];
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        let top = stack.last().copied().unwrap_or(Ctx::Code(0));
        match top {
            Ctx::Str(raw) => {
                if !raw && b[i] == b'\\' {
                    i += 2;
                } else if b[i] == b'"' && (!raw || b[i..].starts_with(b"\"\"\"")) {
                    stack.pop();
                    depth = depth.saturating_sub(1);
                    i += if raw { 3 } else { 1 };
                } else if b[i] == b'$' && b.get(i + 1) == Some(&b'{') {
                    stack.push(Ctx::Code(0));
                    i += 2;
                } else {
                    i += 1;
                }
            }
            Ctx::Code(braces) => match b[i] {
                b'"' => {
                    let raw = b[i..].starts_with(b"\"\"\"");
                    stack.push(Ctx::Str(raw));
                    depth += 1;
                    if depth > limit {
                        return true;
                    }
                    i += if raw { 3 } else { 1 };
                }
                b'{' => {
                    if let Some(Ctx::Code(n)) = stack.last_mut() {
                        *n += 1;
                    }
                    i += 1;
                }
                b'}' => {
                    if braces == 0 {
                        if stack.len() > 1 {
                            stack.pop();
                        }
                    } else if let Some(Ctx::Code(n)) = stack.last_mut() {
                        *n -= 1;
                    }
                    i += 1;
                }
                b'\'' => {
                    // A char literal is short ('a', '\n', '\u0041'); a lone quote (inside a
                    // backticked name, say) must not hide the rest of the line.
                    let mut j = i + 1;
                    while j < b.len() && j < i + 10 && b[j] != b'\'' && b[j] != b'\n' {
                        j += if b[j] == b'\\' { 2 } else { 1 };
                    }
                    i = if b.get(j) == Some(&b'\'') {
                        j + 1
                    } else {
                        i + 1
                    };
                }
                b'`' => {
                    // A backticked identifier: skip to its closing backtick on this line.
                    let mut j = i + 1;
                    while j < b.len() && b[j] != b'`' && b[j] != b'\n' {
                        j += 1;
                    }
                    i = j + 1;
                }
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    while i < b.len() && b[i] != b'\n' {
                        i += 1;
                    }
                }
                b'/' if b.get(i + 1) == Some(&b'*') => {
                    i += 2;
                    while i < b.len() && !b[i..].starts_with(b"*/") {
                        i += 1;
                    }
                    i += 2;
                }
                _ => i += 1,
            },
        }
    }
    false
}

/// A construct on the walker's stack that `return` / `break` / `try` look through.
enum Frame<'a> {
    Loop {
        label: Option<&'a str>,
        handles_error: bool,
        has_exit: bool,
        /// The walker's `catch_depth` when the loop started: a jump out of it from a deeper
        /// `catch` leaves after a failure, which is no exit on success.
        catches: usize,
    },
    /// A lambda literal; `label` is an explicit `label@{ }`.
    Lambda {
        scope: ScopeId,
        label: Option<&'a str>,
    },
    /// A named function, constructor, accessor or anonymous function: the target of an
    /// unlabelled `return`.
    Func { scope: ScopeId },
    /// A class / object body: nothing crosses it.
    Type,
}

/// State saved when entering a scope that is a barrier for value atoms.
struct Saved {
    scope: ScopeId,
    in_code: bool,
    vstack: Vec<usize>,
}

/// What a non-call `navigation_expression` contributes.
enum NavAction<'t> {
    Name(Node<'t>),
    Visit(Node<'t>),
    Nothing,
}

struct TypeHead<'t> {
    scope: ScopeId,
    ctor: Option<Node<'t>>,
    specs: Vec<Node<'t>>,
    body: Option<Node<'t>>,
}

struct FnHead<'t> {
    scope: ScopeId,
    defaults: Vec<Node<'t>>,
    deleg: Option<Node<'t>>,
    body: Option<Node<'t>>,
    expr_body: Option<Node<'t>>,
    accessor: bool,
    direct: Vec<Node<'t>>,
}

struct PropHead<'t> {
    kind: BindingKind,
    single: Option<Node<'t>>,
    multi: Option<Node<'t>>,
    init: Option<Node<'t>>,
    accessors: Vec<Node<'t>>,
}

struct LoopHead<'a, 't> {
    label: Option<&'a str>,
    vars: Option<Node<'t>>,
    iterable: Option<Node<'t>>,
    cond: Option<Node<'t>>,
    body: Option<Node<'t>>,
    header: (usize, usize),
}

struct CallHead<'t> {
    id: CallId,
    recv: Option<Node<'t>>,
    suffix: Option<Node<'t>>,
}

struct ArgPrep<'a, 't> {
    name: Option<&'a str>,
    expr: Option<Node<'t>>,
    inner: Option<Node<'t>>,
    label: Option<&'a str>,
}

struct AssignParts<'a, 't> {
    name: Option<&'a str>,
    visits: Vec<Node<'t>>,
    rhs: Option<Node<'t>>,
    /// `recv[i, ..] = rhs`: the receiver and the `indexing_suffix`. Kotlin reads it as the
    /// call `recv.set(i, .., rhs)` (operator convention, kotlinlang.org "Indexed access
    /// operator"), so `headers["Idempotency-Key"] = v` sets a header as `set(..)` does.
    index: Option<(Vec<Node<'t>>, Node<'t>)>,
}

struct Lowerer<'a> {
    text: &'a str,
    m: FileModel,
    /// Handler per node kind id.
    table: Vec<Handler<'a>>,
    /// Innermost scope.
    scope: ScopeId,
    /// Inside a function / lambda / initializer body (properties are locals there).
    in_code: bool,
    /// Atoms of the values being collected (flat; `vstack` holds each value's start).
    atoms: Vec<Atom>,
    vstack: Vec<usize>,
    frames: Vec<Frame<'a>>,
    /// Number of `catch` bodies being visited.
    catch_depth: usize,
    depth: usize,
    depth_reported: bool,
    /// `name@` just seen, with the byte offset where it ends.
    pending_label: Option<(&'a str, usize)>,
    /// `@file:` annotations, folded into the top-level types.
    file_annotations: Vec<Annotation>,
}

fn span(n: Node) -> Span {
    Span::new(n.start_byte(), n.end_byte())
}

fn is_comment(n: Node) -> bool {
    matches!(n.kind(), "line_comment" | "multiline_comment")
}

/// Named children that are not comments, in order.
fn named_kids<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|k| !is_comment(*k))
        .collect()
}

/// All children (tokens included), in order.
fn all_kids<'t>(n: Node<'t>) -> Vec<Node<'t>> {
    let mut c = n.walk();
    n.children(&mut c).collect()
}

fn first_of_kind<'t>(n: Node<'t>, kind: &str) -> Option<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c).find(|k| k.kind() == kind)
}

fn last_named<'t>(n: Node<'t>) -> Option<Node<'t>> {
    let mut c = n.walk();
    n.named_children(&mut c).filter(|k| !is_comment(*k)).last()
}

/// A label's name without `@`.
fn label_name(s: &str) -> &str {
    s.trim().trim_end_matches('@').trim()
}

/// Strips the quotes (and a multi-dollar prefix) of a string literal's text.
fn unquote(s: &str) -> &str {
    let s = s.trim_start_matches('$');
    if let Some(r) = s.strip_prefix("\"\"\"") {
        return r.strip_suffix("\"\"\"").unwrap_or(r);
    }
    if let Some(r) = s.strip_prefix('"') {
        return r.strip_suffix('"').unwrap_or(r);
    }
    s
}

/// Collapses whitespace runs to one space and drops whitespace next to `.` (and before
/// `?.`), trimming both ends.
fn collapse(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut pending_ws = false;
    for (i, ch) in s.char_indices() {
        if ch.is_whitespace() {
            pending_ws = true;
            continue;
        }
        if pending_ws {
            let next_is_dot = ch == '.' || s[i..].starts_with("?.");
            if !out.is_empty() && !out.ends_with('.') && !next_is_dot {
                out.push(' ');
            }
            pending_ws = false;
        }
        out.push(ch);
    }
    out
}

/// Strips parentheses and `!!` around an expression.
fn unwrap_expr(mut n: Node) -> Node {
    loop {
        match n.kind() {
            "parenthesized_expression" => match last_named(n) {
                Some(inner) => n = inner,
                None => return n,
            },
            "postfix_expression" => {
                let bang = n
                    .child(n.child_count().saturating_sub(1))
                    .is_some_and(|t| t.kind() == "!!");
                match (bang, n.named_child(0)) {
                    (true, Some(inner)) => n = inner,
                    _ => return n,
                }
            }
            _ => return n,
        }
    }
}

/// Statement kinds that are not expressions (a lambda's last statement of any other kind
/// is its result).
fn is_expression_stmt(kind: &str) -> bool {
    !matches!(
        kind,
        "property_declaration"
            | "assignment"
            | "for_statement"
            | "while_statement"
            | "do_while_statement"
            | "function_declaration"
            | "class_declaration"
            | "object_declaration"
            | "type_alias"
            | "jump_expression"
            | "label"
            | "getter"
            | "setter"
            | "ERROR"
    )
}

/// The operator token and the member name of a `navigation_suffix`.
fn suffix_parts<'t>(suffix: Node<'t>) -> (&'static str, Option<Node<'t>>) {
    let mut op = "";
    let mut ident = None;
    let mut c = suffix.walk();
    for k in suffix.children(&mut c) {
        match k.kind() {
            "." => op = ".",
            "?." => op = "?.",
            "::" => op = "::",
            "simple_identifier" => ident = Some(k),
            _ => {}
        }
    }
    (op, ident)
}

/// Receiver and `navigation_suffix` of a `navigation_expression` or a
/// `directly_assignable_expression`.
fn nav_parts<'t>(n: Node<'t>) -> (Option<Node<'t>>, Option<Node<'t>>) {
    let mut recv = None;
    let mut suffix = None;
    let mut c = n.walk();
    for k in n.named_children(&mut c) {
        if is_comment(k) {
            continue;
        }
        if k.kind() == "navigation_suffix" {
            suffix = Some(k);
        } else if recv.is_none() {
            recv = Some(k);
        }
    }
    (recv, suffix)
}

/// The one-line `object : T { .. }` misparse: `call_expression(object_literal without body,
/// call_suffix(annotated_lambda(lambda_literal)))`. Returns the object node and the
/// statements standing for its body.
fn misparsed_object<'t>(call: Node<'t>) -> Option<(Node<'t>, Option<Node<'t>>)> {
    if call.named_child(0)?.kind() != "object_literal" {
        return None;
    }
    let kids = named_kids(call);
    let [obj, suffix] = kids.as_slice() else {
        return None;
    };
    if obj.kind() != "object_literal"
        || suffix.kind() != "call_suffix"
        || first_of_kind(*obj, "class_body").is_some()
    {
        return None;
    }
    let sk = named_kids(*suffix);
    let [al] = sk.as_slice() else { return None };
    if al.kind() != "annotated_lambda" {
        return None;
    }
    let ak = named_kids(*al);
    let [lit] = ak.as_slice() else { return None };
    if lit.kind() != "lambda_literal" || first_of_kind(*lit, "lambda_parameters").is_some() {
        return None;
    }
    Some((*obj, first_of_kind(*lit, "statements")))
}

/// The one-line `object Name { .. }` misparse: `infix_expression(object_literal("object"),
/// simple_identifier, lambda_literal)`. Returns the name and the body statements.
fn misparsed_object_decl<'t>(n: Node<'t>) -> Option<(Node<'t>, Option<Node<'t>>)> {
    if n.named_child(0)?.kind() != "object_literal" {
        return None;
    }
    let kids = named_kids(n);
    let [obj, name, lit] = kids.as_slice() else {
        return None;
    };
    let ok = obj.kind() == "object_literal"
        && obj.named_child_count() == 0
        && name.kind() == "simple_identifier"
        && lit.kind() == "lambda_literal"
        && first_of_kind(*lit, "lambda_parameters").is_none();
    ok.then(|| (*name, first_of_kind(*lit, "statements")))
}

impl<'a> Lowerer<'a> {
    fn t(&self, n: Node) -> &'a str {
        self.text.get(n.byte_range()).unwrap_or("")
    }

    // ----- dispatch -----------------------------------------------------------------------

    fn build_table(language: &tree_sitter::Language) -> Vec<Handler<'a>> {
        (0..language.node_kind_count())
            .map(|i| match u16::try_from(i) {
                Ok(id) if language.node_kind_is_named(id) => {
                    Self::handler(language.node_kind_for_id(id).unwrap_or(""))
                }
                _ => Self::h_skip as Handler<'a>,
            })
            .collect()
    }

    fn handler(kind: &str) -> Handler<'a> {
        match kind {
            "call_expression" => Self::h_call,
            "constructor_invocation" => Self::h_ctor_invocation,
            "simple_identifier" | "interpolated_identifier" => Self::h_name,
            "navigation_expression" => Self::h_navigation,
            "string_literal" => Self::h_string,
            "class_declaration" | "object_declaration" | "companion_object" => Self::h_type_decl,
            "object_literal" => Self::h_object_literal,
            "function_declaration" | "secondary_constructor" | "getter" | "setter" => {
                Self::h_function
            }
            "anonymous_function" => Self::h_anon_function,
            "lambda_literal" => Self::h_lambda,
            "annotated_lambda" => Self::h_annotated_lambda,
            "anonymous_initializer" => Self::h_init,
            "property_declaration" => Self::h_property,
            "for_statement" | "while_statement" | "do_while_statement" => Self::h_loop,
            "jump_expression" => Self::h_jump,
            "assignment" => Self::h_assignment,
            "try_expression" => Self::h_try,
            "catch_block" => Self::h_catch,
            "when_subject" => Self::h_when_subject,
            "if_expression" => Self::h_if,
            "when_entry" | "elvis_expression" => Self::h_conditional,
            "label" => Self::h_label,
            "infix_expression" => Self::h_infix,
            "value_argument" => Self::h_value_argument,
            "annotation" => Self::h_annotation,
            "file_annotation" => Self::h_file_annotation,
            "enum_entry" => Self::h_enum_entry,
            "user_type"
            | "nullable_type"
            | "function_type"
            | "type_arguments"
            | "type_parameters"
            | "type_constraints"
            | "parenthesized_type"
            | "parenthesized_user_type"
            | "not_nullable_type"
            | "type_identifier"
            | "type_modifiers"
            | "type_projection"
            | "type_test"
            | "receiver_type"
            | "modifiers"
            | "parameter_modifiers"
            | "binding_pattern_kind"
            | "import_list"
            | "import_header"
            | "package_header"
            | "shebang_line"
            | "line_comment"
            | "multiline_comment"
            | "use_site_target"
            | "type_alias"
            | "callable_reference"
            | "this_expression"
            | "super_expression"
            | "navigation_suffix"
            | "lambda_parameters"
            | "variable_declaration"
            | "multi_variable_declaration"
            | "parameter"
            | "string_content"
            | "interpolation_identifier_start"
            | "interpolation_expression_start"
            | "interpolation_expression_end"
            | "integer_literal"
            | "long_literal"
            | "real_literal"
            | "hex_literal"
            | "bin_literal"
            | "unsigned_literal"
            | "boolean_literal"
            | "null_literal"
            | "character_literal" => Self::h_skip,
            _ => Self::h_children,
        }
    }

    fn visit(&mut self, n: Node) -> Option<CallId> {
        if self.depth >= MAX_DEPTH {
            self.too_deep(n);
            return None;
        }
        let h = self
            .table
            .get(usize::from(n.kind_id()))
            .copied()
            .unwrap_or(Self::h_children as Handler<'a>);
        self.depth += 1;
        let r = h(self, n);
        self.depth -= 1;
        r
    }

    #[cold]
    #[inline(never)]
    fn too_deep(&mut self, n: Node) {
        if !self.depth_reported {
            self.depth_reported = true;
            self.m.errors.push(ParseError {
                message: format!(
                    "nesting deeper than {MAX_DEPTH} levels; the rest of this construct is not analysed"
                ),
                span: span(n),
            });
        }
    }

    fn children(&mut self, n: Node) {
        let mut c = n.walk();
        if !c.goto_first_child() {
            return;
        }
        loop {
            let k = c.node();
            if k.is_named() {
                self.visit(k);
            }
            if !c.goto_next_sibling() {
                break;
            }
        }
    }

    fn h_skip(&mut self, _n: Node) -> Option<CallId> {
        None
    }

    fn h_children(&mut self, n: Node) -> Option<CallId> {
        self.children(n);
        None
    }

    /// `if (..) a else b`: records the two arms ([`FileModel::branches`]).
    fn h_if(&mut self, n: Node) -> Option<CallId> {
        let arms: Vec<Node> = named_kids(n)
            .into_iter()
            .filter(|k| k.kind() == "control_structure_body")
            .collect();
        if let [a, b] = arms.as_slice() {
            self.m.branches.push((
                Span::new(a.start_byte(), a.end_byte()),
                Span::new(b.start_byte(), b.end_byte()),
            ));
        }
        self.m
            .conditional
            .extend(arms.iter().map(|a| Span::new(a.start_byte(), a.end_byte())));
        // The condition: the first named child that is no arm.
        if let Some(c) = named_kids(n)
            .into_iter()
            .find(|k| k.kind() != "control_structure_body")
        {
            let cs = Span::new(c.start_byte(), c.end_byte());
            for (i, a) in arms.iter().enumerate() {
                let kind = if i == 0 {
                    GuardKind::IfTrue
                } else {
                    GuardKind::IfFalse
                };
                self.m
                    .guards
                    .push((cs, Span::new(a.start_byte(), a.end_byte()), kind));
            }
        }
        self.h_children(n)
    }

    /// `when` entries and the right side of `?:`: code that runs only under a condition.
    fn h_conditional(&mut self, n: Node) -> Option<CallId> {
        let part = match n.kind() {
            "when_entry" => Some(n),
            // `a ?: b`: `b` runs only when `a` is null.
            _ => {
                let kids = named_kids(n);
                if let (Some(l), Some(r)) = (kids.first(), kids.last())
                    && kids.len() >= 2
                {
                    self.m.guards.push((
                        Span::new(l.start_byte(), l.end_byte()),
                        Span::new(r.start_byte(), r.end_byte()),
                        GuardKind::Elvis,
                    ));
                }
                kids.last().copied()
            }
        };
        if let Some(p) = part {
            self.m
                .conditional
                .push(Span::new(p.start_byte(), p.end_byte()));
        }
        self.h_children(n)
    }

    // ----- errors -------------------------------------------------------------------------

    // ----- values -------------------------------------------------------------------------

    fn emit(&mut self, atom: Atom) {
        if !self.vstack.is_empty() {
            self.atoms.push(atom);
        }
    }

    fn begin_value(&mut self) -> usize {
        let start = self.atoms.len();
        self.vstack.push(start);
        start
    }

    fn end_value(&mut self, start: usize, expr: Node) -> ValueId {
        self.vstack.pop();
        let atoms = self
            .atoms
            .get(start..)
            .map(<[Atom]>::to_vec)
            .unwrap_or_default();
        if self.vstack.is_empty() {
            self.atoms.truncate(start);
        }
        let inner = unwrap_expr(expr);
        let literal = (inner.kind() == "string_literal" && Self::is_plain_string(inner))
            .then(|| unquote(self.t(inner)).to_string());
        let ident = self.plain_ident(inner).map(str::to_string);
        self.m.add_value(Value {
            atoms,
            span: span(expr),
            literal,
            ident,
        })
    }

    /// Lowers `expr` as a value: its atoms are collected (and also flow into any enclosing
    /// value).
    fn value_of(&mut self, expr: Node) -> ValueId {
        let start = self.begin_value();
        self.visit(expr);
        self.end_value(start, expr)
    }

    /// `expr` is the result of `scope` (a `Return` spanning the expression).
    fn result_of(&mut self, expr: Node, scope: ScopeId) {
        let value = self.value_of(expr);
        self.m.returns.push(Return {
            value,
            scope,
            span: span(expr),
        });
    }

    fn is_plain_string(n: Node) -> bool {
        let mut c = n.walk();
        n.named_children(&mut c).all(|k| {
            !matches!(
                k.kind(),
                "interpolated_identifier"
                    | "interpolated_expression"
                    | "interpolation_identifier_start"
                    | "interpolation_expression_start"
            )
        })
    }

    /// Last segment when `n` is a plain identifier, a dotted name or `this.x`.
    fn plain_ident(&self, n: Node) -> Option<&'a str> {
        match n.kind() {
            "simple_identifier" => Some(self.t(n)),
            "navigation_expression" => {
                let (recv, suffix) = nav_parts(n);
                let (op, ident) = suffix_parts(suffix?);
                let recv = recv?;
                if op != "." {
                    return None;
                }
                let ok = recv.kind() == "this_expression" || self.dotted_segments(recv).is_some();
                if ok { ident.map(|i| self.t(i)) } else { None }
            }
            _ => None,
        }
    }

    /// Segments of a plain dotted name (`java.util.UUID`), iteratively.
    fn dotted_segments(&self, n: Node) -> Option<Vec<&'a str>> {
        let mut segs = Vec::new();
        let mut cur = n;
        loop {
            match cur.kind() {
                "simple_identifier" => {
                    segs.push(self.t(cur));
                    break;
                }
                "navigation_expression" => {
                    let (recv, suffix) = nav_parts(cur);
                    let (op, ident) = suffix_parts(suffix?);
                    if op != "." {
                        return None;
                    }
                    segs.push(self.t(ident?));
                    cur = recv?;
                }
                _ => return None,
            }
        }
        segs.reverse();
        Some(segs)
    }

    /// Receiver text, whitespace-collapsed, comments dropped.
    fn receiver_text(&self, n: Node) -> String {
        let raw = self.t(n);
        if raw.len() > RECEIVER_MAX_BYTES {
            // Long chains: only the tail matters (the last segments), and copying the whole
            // prefix for every call of a chain would be quadratic.
            return collapse(receiver_tail(raw));
        }
        if !raw.contains("//") && !raw.contains("/*") {
            return collapse(raw);
        }
        let mut comments = Vec::new();
        let mut stack = vec![n];
        while let Some(k) = stack.pop() {
            if is_comment(k) {
                comments.push(k.byte_range());
                continue;
            }
            let mut c = k.walk();
            stack.extend(k.children(&mut c));
        }
        comments.sort_by_key(|r| r.start);
        let mut s = String::with_capacity(raw.len());
        let mut pos = n.start_byte();
        for r in comments {
            if r.start >= pos {
                s.push_str(self.text.get(pos..r.start).unwrap_or(""));
                s.push(' ');
                pos = r.end;
            }
        }
        s.push_str(self.text.get(pos..n.end_byte()).unwrap_or(""));
        collapse(&s)
    }

    // ----- scopes and bindings ------------------------------------------------------------

    fn enter(&mut self, scope: ScopeId, in_code: bool) -> Saved {
        Saved {
            scope: std::mem::replace(&mut self.scope, scope),
            in_code: std::mem::replace(&mut self.in_code, in_code),
            vstack: std::mem::take(&mut self.vstack),
        }
    }

    fn leave(&mut self, saved: Saved) {
        self.scope = saved.scope;
        self.in_code = saved.in_code;
        self.vstack = saved.vstack;
    }

    fn bind_in(
        &mut self,
        scope: ScopeId,
        name: &str,
        kind: BindingKind,
        value: Option<ValueId>,
        name_span: Span,
        decl: Span,
    ) {
        self.m.bindings.push(Binding {
            name: name.to_string(),
            kind,
            value,
            scope,
            name_span,
            span: decl,
        });
    }

    /// Binds the `simple_identifier` of `decl_name` (if any) in the current scope.
    fn bind_ident(
        &mut self,
        ident: Option<Node>,
        kind: BindingKind,
        value: Option<ValueId>,
        decl: Span,
    ) {
        if let Some(nm) = ident {
            let text = self.t(nm);
            self.bind_in(self.scope, text, kind, value, span(nm), decl);
        }
    }

    // ----- simple expressions -------------------------------------------------------------

    fn h_name(&mut self, n: Node) -> Option<CallId> {
        if self.vstack.is_empty() || n.is_missing() {
            return None;
        }
        let name = self.t(n).to_string();
        self.atoms.push(Atom::Name {
            name,
            offset: n.start_byte(),
        });
        None
    }

    fn h_label(&mut self, n: Node) -> Option<CallId> {
        self.pending_label = Some((label_name(self.t(n)), n.end_byte()));
        None
    }

    /// The pending `name@` if it directly precedes `n`.
    fn take_label(&mut self, n: Node) -> Option<&'a str> {
        let (name, end) = self.pending_label.take()?;
        let gap = self.text.get(end..n.start_byte())?;
        gap.trim().is_empty().then_some(name)
    }

    fn nav_action<'t>(n: Node<'t>) -> NavAction<'t> {
        let (recv, suffix) = nav_parts(n);
        let Some(recv) = recv else {
            return NavAction::Nothing;
        };
        match recv.kind() {
            "this_expression" => match suffix.map(suffix_parts) {
                Some((op, Some(i))) if op != "::" => NavAction::Name(i),
                _ => NavAction::Nothing,
            },
            "super_expression" => NavAction::Nothing,
            _ => NavAction::Visit(recv),
        }
    }

    fn h_navigation(&mut self, n: Node) -> Option<CallId> {
        match Self::nav_action(n) {
            NavAction::Name(i) => self.h_name(i),
            NavAction::Visit(r) => {
                if r.kind() == "simple_identifier"
                    && let (_, Some(suffix)) = nav_parts(n)
                    && let (op, Some(field)) = suffix_parts(suffix)
                    && op != "::"
                {
                    self.m
                        .field_reads
                        .push((r.start_byte(), self.t(field).to_string()));
                }
                self.visit(r)
            }
            NavAction::Nothing => None,
        };
        None
    }

    fn record_string(&mut self, n: Node) {
        let text = unquote(self.t(n)).to_string();
        self.m.strings.push(StringLit {
            text,
            span: span(n),
            scope: self.scope,
        });
    }

    fn h_string(&mut self, n: Node) -> Option<CallId> {
        self.record_string(n);
        let mut c = n.walk();
        if !c.goto_first_child() {
            return None;
        }
        loop {
            let k = c.node();
            match k.kind() {
                "interpolated_identifier" => {
                    self.h_name(k);
                }
                "interpolated_expression" => self.children(k),
                _ => {}
            }
            if !c.goto_next_sibling() {
                break;
            }
        }
        None
    }

    fn h_infix(&mut self, n: Node) -> Option<CallId> {
        if self.try_misparsed_object_decl(n) {
            return None;
        }
        // [lhs, function name, rhs]: the middle identifier is not a value.
        let skip_middle = n.named_child_count() == 3;
        if skip_middle {
            let kids = named_kids(n);
            if kids[1].kind() == "simple_identifier" && self.t(kids[1]) == "to" {
                // `"Idempotency-Key" to key`: a name/value pair.
                let key = self.value_of(kids[0]);
                let value = self.value_of(kids[2]);
                self.m.pairs.push(Pair {
                    key,
                    value,
                    scope: self.scope,
                    span: span(n),
                });
                return None;
            }
        }
        let mut c = n.walk();
        if !c.goto_first_child() {
            return None;
        }
        let mut i = 0;
        loop {
            let k = c.node();
            if k.is_named() {
                if !(skip_middle && i == 1 && k.kind() == "simple_identifier") {
                    self.visit(k);
                }
                i += 1;
            }
            if !c.goto_next_sibling() {
                break;
            }
        }
        None
    }

    fn h_value_argument(&mut self, n: Node) -> Option<CallId> {
        if let Some(e) = self.arg_parts(n).1 {
            self.visit(e);
        }
        None
    }

    fn h_annotation(&mut self, n: Node) -> Option<CallId> {
        self.scan_strings(n);
        None
    }

    /// Records string literals inside an annotation (no values, no calls).
    fn scan_strings(&mut self, n: Node) {
        let mut stack = vec![n];
        let mut found = Vec::new();
        while let Some(k) = stack.pop() {
            if k.kind() == "string_literal" {
                found.push(k);
                continue;
            }
            let mut c = k.walk();
            stack.extend(k.named_children(&mut c));
        }
        found.sort_by_key(|k| k.start_byte());
        for k in found {
            self.record_string(k);
        }
    }

    // ----- annotations --------------------------------------------------------------------

    /// Simple name of a `user_type` (last segment, generics dropped).
    fn type_name(&self, user_type: Node) -> Option<&'a str> {
        let mut c = user_type.walk();
        let last = user_type
            .named_children(&mut c)
            .filter(|k| k.kind() == "type_identifier")
            .last();
        last.map(|k| self.t(k))
    }

    /// Annotations in a `modifiers` / `parameter_modifiers` / `annotation` node; each is
    /// also appended to `model.annotations`.
    fn annotations_in(&mut self, n: Node) -> Vec<Annotation> {
        let mut out = Vec::new();
        if n.kind() == "annotation" || n.kind() == "file_annotation" {
            self.annotation(n, &mut out);
        } else {
            for a in named_kids(n) {
                if a.kind() == "annotation" {
                    self.annotation(a, &mut out);
                }
            }
        }
        out
    }

    fn annotation(&mut self, a: Node, out: &mut Vec<Annotation>) {
        self.scan_strings(a);
        for k in named_kids(a) {
            let (ty, args) = match k.kind() {
                "user_type" => (Some(k), None),
                "constructor_invocation" => (
                    first_of_kind(k, "user_type"),
                    first_of_kind(k, "value_arguments"),
                ),
                _ => continue,
            };
            let name = ty.and_then(|t| self.type_name(t)).unwrap_or("").to_string();
            let mut list = Vec::new();
            for va in args.map(named_kids).unwrap_or_default() {
                if va.kind() != "value_argument" {
                    continue;
                }
                if let Some(e) = self.arg_parts(va).1 {
                    let txt = self.t(e);
                    list.push(if e.kind() == "string_literal" {
                        unquote(txt).to_string()
                    } else {
                        txt.trim().to_string()
                    });
                }
            }
            let ann = Annotation {
                name,
                args: list,
                span: span(a),
                target: self.annotated_target(a),
            };
            self.m.annotations.push(ann.clone());
            out.push(ann);
        }
    }

    /// The construct an annotation belongs to: the whole file for `@file:`, the
    /// declaration owning its `modifiers` / `parameter_modifiers`, or its parent node.
    fn annotated_target(&self, a: Node) -> Span {
        if a.kind() == "file_annotation" {
            return Span::new(0, self.m.scopes[0].span.end);
        }
        match a.parent() {
            Some(p) if matches!(p.kind(), "modifiers" | "parameter_modifiers") => {
                span(p.parent().unwrap_or(p))
            }
            Some(p) => span(p),
            None => span(a),
        }
    }

    fn h_file_annotation(&mut self, n: Node) -> Option<CallId> {
        let anns = self.annotations_in(n);
        self.file_annotations.extend(anns);
        None
    }

    // ----- types --------------------------------------------------------------------------

    fn supertype(&self, spec: Node) -> Option<&'a str> {
        let k = named_kids(spec).into_iter().next()?;
        match k.kind() {
            "user_type" => self.type_name(k),
            "constructor_invocation" | "explicit_delegation" => {
                self.type_name(first_of_kind(k, "user_type")?)
            }
            _ => None,
        }
    }

    fn type_head<'t>(&mut self, n: Node<'t>) -> TypeHead<'t> {
        let mut info = TypeInfo::default();
        let mut head = TypeHead {
            scope: 0,
            ctor: None,
            specs: Vec::new(),
            body: None,
        };
        for k in named_kids(n) {
            match k.kind() {
                "modifiers" => info.annotations.extend(self.annotations_in(k)),
                "type_identifier" if info.name.is_empty() => info.name = self.t(k).to_string(),
                "delegation_specifier" => {
                    if let Some(s) = self.supertype(k) {
                        info.supertypes.push(s.to_string());
                    }
                    head.specs.push(k);
                }
                "primary_constructor" => head.ctor = Some(k),
                "class_body" | "enum_class_body" => head.body = Some(k),
                _ => {}
            }
        }
        if n.kind() == "companion_object" {
            info.companion = true;
            if info.name.is_empty() {
                info.name = "Companion".to_string();
            }
        }
        head.scope = self.add_type_scope(info, span(n));
        head
    }

    /// Adds a `Type` scope under the current one (top-level types get the `@file:`
    /// annotations first).
    fn add_type_scope(&mut self, mut info: TypeInfo, whole: Span) -> ScopeId {
        if self.scope == 0 && !self.file_annotations.is_empty() {
            let mut anns = self.file_annotations.clone();
            anns.append(&mut info.annotations);
            info.annotations = anns;
        }
        self.m.add_scope(ScopeKind::Type(info), self.scope, whole)
    }

    fn h_type_decl(&mut self, n: Node) -> Option<CallId> {
        let head = self.type_head(n);
        let saved = self.enter(head.scope, false);
        self.frames.push(Frame::Type);
        if let Some(c) = head.ctor {
            let name = self.m.type_info(head.scope).map(|t| t.name.clone());
            self.primary_constructor(c, name.as_deref());
        }
        for s in &head.specs {
            self.delegation(*s);
        }
        if let Some(b) = head.body {
            self.children(b);
        }
        self.frames.pop();
        self.leave(saved);
        None
    }

    /// Lowers `body` (a class body, or statements standing for one) inside `scope`.
    fn type_body(&mut self, scope: ScopeId, body: Option<Node>) {
        let saved = self.enter(scope, false);
        self.frames.push(Frame::Type);
        if let Some(b) = body {
            self.children(b);
        }
        self.frames.pop();
        self.leave(saved);
    }

    fn try_misparsed_object_decl(&mut self, n: Node) -> bool {
        let Some((name, stmts)) = misparsed_object_decl(n) else {
            return false;
        };
        let info = TypeInfo {
            name: self.t(name).to_string(),
            ..TypeInfo::default()
        };
        let scope = self.add_type_scope(info, span(n));
        self.type_body(scope, stmts);
        true
    }

    /// `Base(x)` calls and `by expr` delegates of a supertype list.
    fn delegation(&mut self, spec: Node) {
        for k in named_kids(spec) {
            match k.kind() {
                "constructor_invocation" => {
                    self.h_ctor_invocation(k);
                }
                "explicit_delegation" => {
                    for e in named_kids(k) {
                        if e.kind() != "user_type" {
                            self.visit(e);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Binds one `class_parameter`; returns its default-value expression and whether it
    /// declares a property (`val`/`var`).
    fn class_param<'t>(&mut self, p: Node<'t>) -> (Option<Node<'t>>, bool, Option<String>) {
        let mut is_prop = false;
        let mut name = None;
        let mut default = None;
        let mut after_eq = false;
        for k in all_kids(p) {
            match k.kind() {
                "modifiers" => {
                    self.annotations_in(k);
                }
                "binding_pattern_kind" => is_prop = true,
                "simple_identifier" if name.is_none() => name = Some(k),
                "=" => after_eq = true,
                _ if after_eq && k.is_named() && !is_comment(k) => default = Some(k),
                _ => {}
            }
        }
        let kind = if is_prop {
            BindingKind::Field
        } else {
            BindingKind::Param
        };
        self.bind_ident(name, kind, None, span(p));
        (default, is_prop, name.map(|n| self.t(n).to_string()))
    }

    /// Binds the constructor's parameters; a property's default value is kept as a
    /// [`CtorDefault`] of `type_name`.
    fn primary_constructor(&mut self, ctor: Node, type_name: Option<&str>) {
        let mut index = 0;
        let mut components = Vec::new();
        for p in named_kids(ctor) {
            match p.kind() {
                "class_parameter" => {
                    let (default, is_prop, name) = self.class_param(p);
                    components.push(if is_prop {
                        name.clone().unwrap_or_default()
                    } else {
                        String::new()
                    });
                    if let Some(d) = default {
                        match (type_name, name) {
                            (Some(t), Some(name)) if is_prop && !t.is_empty() => {
                                let value = self.value_of(d);
                                self.m.ctor_defaults.push(CtorDefault {
                                    type_name: t.to_string(),
                                    index,
                                    name,
                                    value,
                                    span: span(p),
                                });
                            }
                            _ => {
                                self.visit(d);
                            }
                        }
                    }
                    index += 1;
                }
                "modifiers" => {
                    self.annotations_in(p);
                }
                _ => {}
            }
        }
        if let Some(t) = type_name.filter(|t| !t.is_empty())
            && components.iter().any(|c| !c.is_empty())
        {
            self.m
                .components
                .push((t.to_string(), components, self.scope));
        }
    }

    fn h_enum_entry(&mut self, n: Node) -> Option<CallId> {
        for k in named_kids(n) {
            match k.kind() {
                "simple_identifier" => self.bind_ident(Some(k), BindingKind::Field, None, span(n)),
                "modifiers" => {
                    self.annotations_in(k);
                }
                _ => {
                    self.visit(k);
                }
            }
        }
        None
    }

    fn h_object_literal(&mut self, n: Node) -> Option<CallId> {
        self.object_literal(n, None);
        None
    }

    /// Supertypes, specifiers and body of an `object_literal`.
    fn object_head<'t>(&self, n: Node<'t>) -> (TypeInfo, Vec<Node<'t>>, Option<Node<'t>>) {
        let mut info = TypeInfo::default();
        let mut specs = Vec::new();
        let mut body = None;
        for k in named_kids(n) {
            match k.kind() {
                "delegation_specifier" => {
                    if let Some(s) = self.supertype(k) {
                        info.supertypes.push(s.to_string());
                    }
                    specs.push(k);
                }
                "class_body" => body = Some(k),
                _ => {}
            }
        }
        (info, specs, body)
    }

    /// `object : T { body }`; `body_override` is the statements of a misparsed body and the
    /// whole construct's span.
    fn object_literal(&mut self, n: Node, body_override: Option<(Option<Node>, Span)>) -> ScopeId {
        let (info, specs, body) = self.object_head(n);
        // Superclass constructor arguments are evaluated where the object is created.
        for s in specs {
            self.delegation(s);
        }
        let (body, whole) = body_override.unwrap_or((body, span(n)));
        let scope = self.m.add_scope(ScopeKind::Object(info), self.scope, whole);
        self.type_body(scope, body);
        scope
    }

    fn try_misparsed_object(&mut self, call: Node) -> Option<ScopeId> {
        let (obj, stmts) = misparsed_object(call)?;
        Some(self.object_literal(obj, Some((stmts, span(call)))))
    }

    // ----- functions ----------------------------------------------------------------------

    /// Type text after the `:` of a declaration node, up to a `=` or `by`.
    fn type_after_colon(&self, n: Node) -> String {
        let mut start = None;
        let mut end = 0;
        let mut after = false;
        for k in all_kids(n) {
            match k.kind() {
                ":" => after = true,
                "=" | "by" | "property_delegate" | "getter" | "setter" => break,
                _ if after && k.is_named() && !is_comment(k) => {
                    start.get_or_insert(k.start_byte());
                    end = k.end_byte();
                }
                _ => {}
            }
        }
        start
            .and_then(|s| self.text.get(s..end))
            .unwrap_or("")
            .trim()
            .to_string()
    }

    fn param_of(
        &self,
        p: Node,
        annotations: Vec<Annotation>,
        start: usize,
    ) -> Option<(Param, Span)> {
        let nm = first_of_kind(p, "simple_identifier")?;
        Some((
            Param {
                name: self.t(nm).to_string(),
                ty: self.type_after_colon(p),
                annotations,
                span: Span::new(start.min(p.start_byte()), p.end_byte()),
            },
            span(nm),
        ))
    }

    /// Parameters of a `function_value_parameters` node (with their name spans) and the
    /// default-value expressions.
    fn value_params<'t>(&mut self, fvp: Node<'t>) -> (Vec<(Param, Span)>, Vec<Node<'t>>) {
        let mut params = Vec::new();
        let mut defaults = Vec::new();
        let mut pending: Option<(Vec<Annotation>, usize)> = None;
        let mut after_eq = false;
        for k in all_kids(fvp) {
            match k.kind() {
                "parameter_modifiers" => {
                    let anns = self.annotations_in(k);
                    pending = Some((anns, k.start_byte()));
                }
                "parameter" | "parameter_with_optional_type" => {
                    after_eq = false;
                    let (anns, start) = pending.take().unwrap_or((Vec::new(), k.start_byte()));
                    params.extend(self.param_of(k, anns, start));
                }
                "=" => after_eq = true,
                "," => after_eq = false,
                _ if after_eq && k.is_named() && !is_comment(k) => {
                    defaults.push(k);
                    after_eq = false;
                }
                _ => {}
            }
        }
        (params, defaults)
    }

    fn bind_params(&mut self, scope: ScopeId, params: &[(Param, Span)]) {
        for (p, ns) in params {
            self.bind_in(scope, &p.name, BindingKind::Param, None, *ns, p.span);
        }
    }

    /// The expression of an `= expr` function body.
    fn expression_body<'t>(body: Option<Node<'t>>) -> Option<Node<'t>> {
        let b = body?;
        let eq = all_kids(b).into_iter().any(|k| k.kind() == "=");
        if eq { last_named(b) } else { None }
    }

    fn function_head<'t>(&mut self, n: Node<'t>) -> FnHead<'t> {
        let kind = n.kind();
        let mut info = FunctionInfo {
            name: match kind {
                "getter" => "get",
                "setter" => "set",
                // A secondary constructor is called by its class's name, as in Java.
                "secondary_constructor" => self
                    .m
                    .enclosing_type(self.scope)
                    .and_then(|t| self.m.type_info(t))
                    .map_or("constructor", |t| t.name.as_str()),
                _ => "",
            }
            .to_string(),
            ..FunctionInfo::default()
        };
        let mut head = FnHead {
            scope: 0,
            defaults: Vec::new(),
            deleg: None,
            body: None,
            expr_body: None,
            accessor: matches!(kind, "getter" | "setter"),
            direct: Vec::new(),
        };
        let mut params = Vec::new();
        let mut seen_params = false;
        let mut after_colon = false;
        let mut ret: Option<(usize, usize)> = None;
        for k in all_kids(n) {
            match k.kind() {
                "modifiers" => info.annotations.extend(self.annotations_in(k)),
                "simple_identifier" if kind == "function_declaration" && info.name.is_empty() => {
                    info.name = self.t(k).to_string();
                    info.name_span = span(k);
                }
                "constructor" | "get" | "set" if !k.is_named() => info.name_span = span(k),
                "receiver_type" if kind == "function_declaration" => {
                    // `fun String.toKey()`: the last type identifier, without generics.
                    let t = self.t(k);
                    let t = t
                        .split('<')
                        .next()
                        .unwrap_or(t)
                        .trim()
                        .trim_end_matches('?');
                    info.extends = t.rsplit('.').next().unwrap_or(t).to_string();
                }
                "function_value_parameters" => {
                    (params, head.defaults) = self.value_params(k);
                    seen_params = true;
                }
                "parameter_with_optional_type" => {
                    params.extend(self.param_of(k, Vec::new(), k.start_byte()));
                    seen_params = true;
                }
                ":" if seen_params && kind != "secondary_constructor" => after_colon = true,
                "function_body" => {
                    head.body = Some(k);
                    after_colon = false;
                }
                "type_constraints" => after_colon = false,
                "constructor_delegation_call" => head.deleg = Some(k),
                "statements" => head.direct.push(k),
                _ if after_colon && k.is_named() && !is_comment(k) => {
                    let start = ret.map_or(k.start_byte(), |r| r.0);
                    ret = Some((start, k.end_byte()));
                }
                _ => {}
            }
        }
        if let Some((s, e)) = ret {
            info.return_type = self.text.get(s..e).unwrap_or("").trim().to_string();
        }
        head.expr_body = Self::expression_body(head.body);
        info.expression_body = head.expr_body.is_some() && !head.accessor;
        info.params = params.iter().map(|(p, _)| p.clone()).collect();
        head.scope = self
            .m
            .add_scope(ScopeKind::Function(info), self.scope, span(n));
        self.bind_params(head.scope, &params);
        head
    }

    fn h_function(&mut self, n: Node) -> Option<CallId> {
        let head = self.function_head(n);
        let saved = self.enter(head.scope, true);
        self.frames.push(Frame::Func { scope: head.scope });
        for d in &head.defaults {
            self.visit(*d);
        }
        if let Some(d) = head.deleg {
            self.delegation_call(d);
        }
        match (head.expr_body, head.body) {
            // A getter's expression body is what every read of the property evaluates
            // (`val key get() = UUID.randomUUID()`): recorded as the getter's return, as
            // a block body's `return` is.
            (Some(e), _) => self.result_of(e, head.scope),
            (None, Some(b)) => self.children(b),
            (None, None) => {}
        }
        for b in &head.direct {
            self.children(*b);
        }
        self.frames.pop();
        self.leave(saved);
        None
    }

    /// `: this(a, b)` / `: super(a)` of a secondary constructor: a call named `this` or
    /// `super` (as Java's explicit constructor invocation), so its positional arguments
    /// reach the primary constructor's properties (see [`FileModel::components_written`]).
    fn delegation_call(&mut self, d: Node) {
        let kw = all_kids(d)
            .into_iter()
            .find(|k| matches!(k.kind(), "this" | "super"));
        let Some(kw) = kw else {
            self.children(d);
            return;
        };
        let id = self.m.calls.len();
        self.m.calls.push(Call {
            callee: kw.kind().to_string(),
            span: span(d),
            name_span: span(kw),
            scope: self.scope,
            ..Call::default()
        });
        if let Some(vas) = first_of_kind(d, "value_arguments") {
            self.call_value_args(id, vas);
        }
    }

    fn h_init(&mut self, n: Node) -> Option<CallId> {
        let saved_code = std::mem::replace(&mut self.in_code, true);
        self.children(n);
        self.in_code = saved_code;
        None
    }

    // ----- properties and other declarations ---------------------------------------------

    fn property_head<'t>(&mut self, n: Node<'t>) -> PropHead<'t> {
        let mut head = PropHead {
            kind: if self.in_code {
                BindingKind::Local
            } else {
                BindingKind::Field
            },
            single: None,
            multi: None,
            init: None,
            accessors: Vec::new(),
        };
        let mut after_eq = false;
        for k in all_kids(n) {
            match k.kind() {
                "modifiers" => {
                    self.annotations_in(k);
                }
                "variable_declaration" if head.single.is_none() && head.multi.is_none() => {
                    head.single = first_of_kind(k, "simple_identifier");
                }
                "multi_variable_declaration" => head.multi = Some(k),
                "=" => after_eq = true,
                // `by lazy { .. }`: the delegate stands for the initializer.
                "property_delegate" => head.init = last_named(k),
                "getter" | "setter" => head.accessors.push(k),
                _ if after_eq && k.is_named() && !is_comment(k) && head.init.is_none() => {
                    head.init = Some(k);
                }
                _ => {}
            }
        }
        head
    }

    fn bind_multi(&mut self, mv: Node, kind: BindingKind, decl: Span) {
        for vd in named_kids(mv) {
            self.bind_ident(first_of_kind(vd, "simple_identifier"), kind, None, decl);
        }
    }

    fn h_property(&mut self, n: Node) -> Option<CallId> {
        let head = self.property_head(n);
        match head.multi {
            Some(mv) => {
                if let Some(e) = head.init {
                    self.visit(e);
                }
                self.bind_multi(mv, head.kind, span(n));
            }
            None => {
                let value = head.init.map(|e| self.value_of(e));
                self.bind_ident(head.single, head.kind, value, span(n));
            }
        }
        for a in &head.accessors {
            self.visit(*a);
        }
        None
    }

    /// `when (val r = f())`: the binding's name and initializer.
    fn when_subject_head<'t>(n: Node<'t>) -> Option<(Option<Node<'t>>, Option<Node<'t>>)> {
        let vd = first_of_kind(n, "variable_declaration")?;
        let mut after_eq = false;
        let mut init = None;
        for k in all_kids(n) {
            match k.kind() {
                "=" => after_eq = true,
                _ if after_eq && k.is_named() && !is_comment(k) => init = Some(k),
                _ => {}
            }
        }
        Some((first_of_kind(vd, "simple_identifier"), init))
    }

    fn h_when_subject(&mut self, n: Node) -> Option<CallId> {
        match Self::when_subject_head(n) {
            Some((name, init)) => {
                let value = init.map(|e| self.value_of(e));
                self.bind_ident(name, BindingKind::Local, value, span(n));
            }
            None => self.children(n),
        }
        None
    }

    /// Binds a catch parameter; returns the catch body.
    fn catch_head<'t>(&mut self, n: Node<'t>) -> Option<Node<'t>> {
        let mut name = None;
        let mut decl_end = n.end_byte();
        let mut body = None;
        for k in all_kids(n) {
            match k.kind() {
                "simple_identifier" if name.is_none() => name = Some(k),
                ")" => decl_end = k.start_byte(),
                "statements" => body = Some(k),
                _ => {}
            }
        }
        if let Some(nm) = name {
            let end = decl_end.max(nm.end_byte());
            let decl = Span::new(nm.start_byte(), end);
            self.bind_ident(Some(nm), BindingKind::Param, None, decl);
        }
        body
    }

    fn h_catch(&mut self, n: Node) -> Option<CallId> {
        self.m.catches.push(Span::new(n.start_byte(), n.end_byte()));
        if let Some(b) = self.catch_head(n) {
            self.catch_depth += 1;
            self.children(b);
            self.catch_depth -= 1;
        }
        None
    }

    // ----- lambdas ------------------------------------------------------------------------

    /// Lambda parameters (`x`, `x: T`, `(a, b)`) with their name spans.
    fn lambda_params(&self, lp: Node, out: &mut Vec<(Param, Span)>) {
        for k in named_kids(lp) {
            match k.kind() {
                "variable_declaration" => out.extend(self.param_of(k, Vec::new(), k.start_byte())),
                "multi_variable_declaration" => self.lambda_params(k, out),
                _ => {}
            }
        }
    }

    /// Creates a lambda scope with its parameters bound; returns it and its statements.
    fn lambda_head<'t>(
        &mut self,
        n: Node<'t>,
        owner: Option<(CallId, usize)>,
    ) -> (ScopeId, Option<Node<'t>>) {
        let mut params = Vec::new();
        let mut stmts = None;
        for k in named_kids(n) {
            match k.kind() {
                "lambda_parameters" => self.lambda_params(k, &mut params),
                "statements" => stmts = Some(k),
                _ => {}
            }
        }
        let info = LambdaInfo {
            owner_call: owner.map(|o| o.0),
            arg_index: owner.map_or(0, |o| o.1),
            params: params.iter().map(|(p, _)| p.clone()).collect(),
            is_move: false,
        };
        let scope = self
            .m
            .add_scope(ScopeKind::Lambda(info), self.scope, span(n));
        self.bind_params(scope, &params);
        (scope, stmts)
    }

    fn lambda(
        &mut self,
        n: Node,
        owner: Option<(CallId, usize)>,
        label: Option<&'a str>,
    ) -> ScopeId {
        let (scope, stmts) = self.lambda_head(n, owner);
        let saved = self.enter(scope, true);
        self.frames.push(Frame::Lambda { scope, label });
        if let Some(s) = stmts {
            self.block_with_result(s, scope);
        }
        self.frames.pop();
        self.leave(saved);
        scope
    }

    fn h_lambda(&mut self, n: Node) -> Option<CallId> {
        self.lambda(n, None, None);
        None
    }

    /// Visits a lambda's statements; the last one, if an expression, is its result.
    fn block_with_result(&mut self, stmts: Node, scope: ScopeId) {
        let mut c = stmts.walk();
        if !c.goto_first_child() {
            return;
        }
        let mut prev: Option<Node> = None;
        loop {
            let k = c.node();
            if k.is_named()
                && !is_comment(k)
                && let Some(p) = prev.replace(k)
            {
                self.visit(p);
            }
            if !c.goto_next_sibling() {
                break;
            }
        }
        match prev {
            Some(last) if is_expression_stmt(last.kind()) => self.result_of(last, scope),
            Some(last) => {
                self.visit(last);
            }
            None => {}
        }
    }

    /// Label and literal of an `annotated_lambda` (annotation strings recorded).
    fn annotated_parts<'t>(&mut self, n: Node<'t>) -> (Option<&'a str>, Option<Node<'t>>) {
        let mut label = None;
        let mut lit = None;
        for k in named_kids(n) {
            match k.kind() {
                "label" => label = Some(label_name(self.t(k))),
                "annotation" => self.scan_strings(k),
                "lambda_literal" => lit = Some(k),
                _ => {}
            }
        }
        (label, lit)
    }

    fn annotated_lambda(&mut self, n: Node, owner: Option<(CallId, usize)>) -> Option<ScopeId> {
        let (label, lit) = self.annotated_parts(n);
        Some(self.lambda(lit?, owner, label))
    }

    fn h_annotated_lambda(&mut self, n: Node) -> Option<CallId> {
        self.annotated_lambda(n, None);
        None
    }

    fn anon_head<'t>(
        &mut self,
        n: Node<'t>,
        owner: Option<(CallId, usize)>,
    ) -> (ScopeId, Vec<Node<'t>>, Option<Node<'t>>) {
        let mut params = Vec::new();
        let mut defaults = Vec::new();
        let mut body = None;
        for k in named_kids(n) {
            match k.kind() {
                "function_value_parameters" => (params, defaults) = self.value_params(k),
                "function_body" => body = Some(k),
                _ => {}
            }
        }
        let info = LambdaInfo {
            owner_call: owner.map(|o| o.0),
            arg_index: owner.map_or(0, |o| o.1),
            params: params.iter().map(|(p, _)| p.clone()).collect(),
            is_move: false,
        };
        let scope = self
            .m
            .add_scope(ScopeKind::Lambda(info), self.scope, span(n));
        self.bind_params(scope, &params);
        (scope, defaults, body)
    }

    /// `fun(x: Int) { .. }`: a lambda scope that is also the target of a plain `return`.
    fn anon_function(&mut self, n: Node, owner: Option<(CallId, usize)>) -> ScopeId {
        let (scope, defaults, body) = self.anon_head(n, owner);
        let saved = self.enter(scope, true);
        self.frames.push(Frame::Func { scope });
        for d in &defaults {
            self.visit(*d);
        }
        match (Self::expression_body(body), body) {
            (Some(e), _) => self.result_of(e, scope),
            (None, Some(b)) => self.children(b),
            (None, None) => {}
        }
        self.frames.pop();
        self.leave(saved);
        scope
    }

    fn h_anon_function(&mut self, n: Node) -> Option<CallId> {
        self.anon_function(n, None);
        None
    }

    // ----- calls --------------------------------------------------------------------------

    /// Records the call (callee, receiver text, path); non-recursive.
    fn call_head<'t>(&mut self, n: Node<'t>) -> Option<CallHead<'t>> {
        let mut callee_node = None;
        let mut suffix = None;
        for k in named_kids(n) {
            if k.kind() == "call_suffix" {
                suffix = Some(k);
            } else if callee_node.is_none() {
                callee_node = Some(k);
            }
        }
        let callee_node = callee_node?;
        let (callee, name_span, recv) = match callee_node.kind() {
            "simple_identifier" => (self.t(callee_node), span(callee_node), None),
            "navigation_expression" => {
                let (recv, sfx) = nav_parts(callee_node);
                match (recv, sfx.and_then(|s| suffix_parts(s).1)) {
                    (Some(r), Some(i)) => (self.t(i), span(i), Some(r)),
                    _ => ("invoke", span(callee_node), Some(callee_node)),
                }
            }
            _ => ("invoke", span(callee_node), Some(callee_node)),
        };
        let id = self.m.calls.len();
        self.m.calls.push(Call {
            callee: callee.to_string(),
            path: recv
                .and_then(|r| self.dotted_segments(r))
                .map(|s| s.into_iter().map(str::to_string).collect())
                .unwrap_or_default(),
            receiver: recv.map(|r| self.receiver_text(r)),
            is_new: callee.chars().next().is_some_and(char::is_uppercase),
            span: span(n),
            name_span,
            scope: self.scope,
            ..Call::default()
        });
        self.emit(Atom::Call(id));
        Some(CallHead { id, recv, suffix })
    }

    fn h_call(&mut self, n: Node) -> Option<CallId> {
        if self.try_misparsed_object(n).is_some() {
            return None;
        }
        let Some(head) = self.call_head(n) else {
            self.children(n);
            return None;
        };
        if let Some(r) = head.recv {
            self.call_receiver(head.id, r);
        }
        if let Some(s) = head.suffix {
            self.call_args(head.id, s);
        }
        Some(head.id)
    }

    fn call_receiver(&mut self, id: CallId, r: Node) {
        let inner = unwrap_expr(r);
        if inner.kind() == "call_expression" {
            let rc = self.visit(inner);
            self.m.calls[id].receiver_call = rc;
        } else {
            self.visit(r);
        }
    }

    fn call_args(&mut self, id: CallId, suffix: Node) {
        let mut c = suffix.walk();
        if !c.goto_first_child() {
            return;
        }
        loop {
            let k = c.node();
            match k.kind() {
                "value_arguments" => self.call_value_args(id, k),
                "annotated_lambda" => self.arg_lambda(k, id),
                _ => {}
            }
            if !c.goto_next_sibling() {
                break;
            }
        }
    }

    fn call_value_args(&mut self, id: CallId, list: Node) {
        let mut c = list.walk();
        if !c.goto_first_child() {
            return;
        }
        loop {
            let k = c.node();
            if k.kind() == "value_argument" {
                self.arg(k, id);
            }
            if !c.goto_next_sibling() {
                break;
            }
        }
    }

    /// Records `Base(x)` (supertype list); non-recursive part.
    fn ctor_head(&mut self, n: Node) -> Option<CallId> {
        let ty = first_of_kind(n, "user_type")?;
        let idents: Vec<Node> = named_kids(ty)
            .into_iter()
            .filter(|k| k.kind() == "type_identifier")
            .collect();
        let (last, quals) = idents.split_last()?;
        let id = self.m.calls.len();
        let path: Vec<String> = quals.iter().map(|q| self.t(*q).to_string()).collect();
        self.m.calls.push(Call {
            callee: self.t(*last).to_string(),
            receiver: (!path.is_empty()).then(|| path.join(".")),
            path,
            is_new: true,
            span: span(n),
            name_span: span(*last),
            scope: self.scope,
            ..Call::default()
        });
        self.emit(Atom::Call(id));
        Some(id)
    }

    fn h_ctor_invocation(&mut self, n: Node) -> Option<CallId> {
        let id = self.ctor_head(n)?;
        if let Some(vas) = first_of_kind(n, "value_arguments") {
            self.call_value_args(id, vas);
        }
        Some(id)
    }

    /// The name (`name = ..`) and expression of a `value_argument`.
    fn arg_parts<'t>(&self, va: Node<'t>) -> (Option<&'a str>, Option<Node<'t>>) {
        let mut name = None;
        let mut last: Option<Node> = None;
        let mut c = va.walk();
        for k in va.children(&mut c) {
            if !k.is_named() {
                if k.kind() == "=" {
                    // A backticked name (`` `key` = .. ``) binds the parameter `key`.
                    name = last.filter(|l| l.kind() == "simple_identifier").map(|l| {
                        let t = self.t(l);
                        t.strip_prefix('`')
                            .and_then(|x| x.strip_suffix('`'))
                            .unwrap_or(t)
                    });
                    last = None;
                }
                continue;
            }
            if is_comment(k) || k.kind() == "annotation" {
                continue;
            }
            last = Some(k);
        }
        (name, last)
    }

    fn arg_prep<'t>(&mut self, va: Node<'t>) -> ArgPrep<'a, 't> {
        let (name, expr) = self.arg_parts(va);
        for a in named_kids(va) {
            if a.kind() == "annotation" {
                self.scan_strings(a);
            }
        }
        // Strip parentheses and a `label@` prefix to find a lambda / object.
        let mut inner = expr;
        let mut label = None;
        while let Some(i) = inner {
            match i.kind() {
                "parenthesized_expression" => inner = last_named(i),
                "prefix_expression" => match named_kids(i).as_slice() {
                    [l, e] if l.kind() == "label" => {
                        label = Some(label_name(self.t(*l)));
                        inner = Some(*e);
                    }
                    _ => break,
                },
                _ => break,
            }
        }
        ArgPrep {
            name,
            expr,
            inner: inner.or(expr),
            label,
        }
    }

    fn arg(&mut self, va: Node, owner: CallId) {
        let prep = self.arg_prep(va);
        let idx = self.m.calls.get(owner).map_or(0, |c| c.args.len());
        let start = self.begin_value();
        let (lambda, call) = match (prep.expr, prep.inner) {
            (Some(e), Some(i)) => self.arg_visit(e, i, prep.label, (owner, idx)),
            _ => (None, None),
        };
        self.arg_finish(va, &prep, start, (lambda, call), owner);
    }

    fn arg_visit(
        &mut self,
        expr: Node,
        inner: Node,
        label: Option<&'a str>,
        owner: (CallId, usize),
    ) -> (Option<ScopeId>, Option<CallId>) {
        match inner.kind() {
            "lambda_literal" => (Some(self.lambda(inner, Some(owner), label)), None),
            "annotated_lambda" => (self.annotated_lambda(inner, Some(owner)), None),
            "anonymous_function" => (Some(self.anon_function(inner, Some(owner))), None),
            "object_literal" => (Some(self.object_literal(inner, None)), None),
            "call_expression" => match self.try_misparsed_object(inner) {
                Some(s) => (Some(s), None),
                None => (None, self.visit(inner)),
            },
            _ => (None, self.visit(expr)),
        }
    }

    /// Builds the `Arg` (value, type hint, function reference) and appends it; non-recursive.
    fn arg_finish(
        &mut self,
        va: Node,
        prep: &ArgPrep,
        start: usize,
        (lambda, call): (Option<ScopeId>, Option<CallId>),
        owner: CallId,
    ) {
        let value = self.end_value(start, prep.expr.unwrap_or(va));
        let mut type_hint = call
            .and_then(|c| self.m.calls.get(c))
            .filter(|c| c.is_new)
            .map(|c| c.callee.clone());
        let mut fn_ref = None;
        if let Some(inner) = prep.inner {
            match inner.kind() {
                "simple_identifier" => {
                    let s = self.t(inner);
                    let upper = s.chars().next().is_some_and(char::is_uppercase);
                    if upper && s.chars().any(char::is_lowercase) {
                        type_hint = Some(s.to_string());
                    }
                }
                "callable_reference" => {
                    fn_ref = last_named(inner)
                        .filter(|k| k.kind() == "simple_identifier")
                        .map(|k| self.t(k).to_string());
                }
                "navigation_expression" => {
                    if let Some((op, Some(i))) = nav_parts(inner).1.map(suffix_parts)
                        && op == "::"
                    {
                        fn_ref = Some(self.t(i).to_string());
                    }
                }
                _ => {}
            }
        }
        let arg = Arg {
            name: prep.name.map(str::to_string),
            value,
            lambda,
            type_hint,
            fn_ref,
            span: span(va),
        };
        if let Some(c) = self.m.calls.get_mut(owner) {
            c.args.push(arg);
        }
    }

    /// A trailing lambda: the last argument.
    fn arg_lambda(&mut self, al: Node, owner: CallId) {
        let idx = self.m.calls.get(owner).map_or(0, |c| c.args.len());
        let start = self.begin_value();
        let lambda = self.annotated_lambda(al, Some((owner, idx)));
        self.arg_lambda_finish(al, start, lambda, owner);
    }

    fn arg_lambda_finish(
        &mut self,
        al: Node,
        start: usize,
        lambda: Option<ScopeId>,
        owner: CallId,
    ) {
        let expr = first_of_kind(al, "lambda_literal").unwrap_or(al);
        let value = self.end_value(start, expr);
        if let Some(c) = self.m.calls.get_mut(owner) {
            c.args.push(Arg {
                name: None,
                value,
                lambda,
                type_hint: None,
                fn_ref: None,
                span: span(al),
            });
        }
    }

    // ----- statements ---------------------------------------------------------------------

    fn assign_parts<'t>(&self, n: Node<'t>) -> AssignParts<'a, 't> {
        let kids = named_kids(n);
        let mut parts = AssignParts {
            name: None,
            visits: Vec::new(),
            rhs: None,
            index: None,
        };
        let (Some(target), Some(rhs)) = (kids.first().copied(), kids.last().copied()) else {
            return parts;
        };
        if kids.len() < 2 {
            parts.visits = kids;
            return parts;
        }
        parts.rhs = Some(rhs);
        if target.kind() != "directly_assignable_expression" {
            parts.visits.push(target);
            return parts;
        }
        let tk = named_kids(target);
        match tk.as_slice() {
            [id] if id.kind() == "simple_identifier" => parts.name = Some(self.t(*id)),
            [recv, sfx] if sfx.kind() == "navigation_suffix" => {
                parts.name = suffix_parts(*sfx).1.map(|i| self.t(i));
                if recv.kind() != "this_expression" {
                    parts.visits.push(*recv);
                }
            }
            // Only a plain `=`: `a[i] += b` is `a.set(i, a.get(i) + b)` or `a.get(i)
            // .plusAssign(b)`.
            [recv @ .., sfx]
                if !recv.is_empty() && sfx.kind() == "indexing_suffix" && plain_assignment(n) =>
            {
                parts.index = Some((recv.to_vec(), *sfx));
            }
            _ => parts.visits = tk,
        }
        parts
    }

    /// `recv[i, ..] = rhs` as the call `recv.set(i, .., rhs)` (see [`AssignParts::index`]):
    /// recorded like a call written so, its receiver visited first, then its arguments.
    /// The grammar gives the receiver as a flat list (`request`, `.headers`): a dotted name
    /// is the call's path, and the text before `[` its receiver.
    fn indexed_set(&mut self, n: Node, recv: &[Node], sfx: Node, rhs: Node) -> CallId {
        let id = self.m.calls.len();
        let mut path = Vec::new();
        for (i, k) in recv.iter().enumerate() {
            let seg = match (i, k.kind()) {
                (0, "simple_identifier") => Some(self.t(*k)),
                (_, "navigation_suffix") => match suffix_parts(*k) {
                    (".", Some(ident)) => Some(self.t(ident)),
                    _ => None,
                },
                _ => None,
            };
            match seg {
                Some(seg) => path.push(seg.to_string()),
                None => {
                    path.clear();
                    break;
                }
            }
        }
        let receiver = match recv {
            [one] => self.receiver_text(*one),
            _ => collapse(&self.text[recv[0].start_byte()..sfx.start_byte()]),
        };
        self.m.calls.push(Call {
            callee: "set".to_string(),
            path,
            receiver: Some(receiver),
            span: span(n),
            name_span: span(sfx),
            scope: self.scope,
            ..Call::default()
        });
        self.emit(Atom::Call(id));
        match recv {
            [one] => self.call_receiver(id, *one),
            _ => {
                for k in recv {
                    self.visit(*k);
                }
            }
        }
        let indices: Vec<Node> = named_kids(sfx)
            .into_iter()
            .filter(|k| !is_comment(*k))
            .collect();
        for e in indices.into_iter().chain([rhs]) {
            let value = self.value_of(e);
            self.m.calls[id].args.push(Arg {
                value,
                span: span(e),
                ..Arg::default()
            });
        }
        id
    }

    fn h_assignment(&mut self, n: Node) -> Option<CallId> {
        let parts = self.assign_parts(n);
        for v in &parts.visits {
            self.visit(*v);
        }
        let rhs = parts.rhs?;
        if let Some((recv, sfx)) = parts.index {
            self.indexed_set(n, &recv, sfx, rhs);
            return None;
        }
        let value = self.value_of(rhs);
        if let Some(name) = parts.name {
            self.m.assigns.push(Assign {
                name: name.to_string(),
                value,
                scope: self.scope,
                span: span(n),
            });
        }
        None
    }

    /// Keyword token, label and operand of a `jump_expression`.
    fn jump_parts<'t>(&self, n: Node<'t>) -> (&'t str, Option<&'a str>, Option<Node<'t>>) {
        let mut kw = "";
        let mut label = None;
        let mut expr = None;
        let mut c = n.walk();
        for k in n.children(&mut c) {
            if !k.is_named() {
                if kw.is_empty() {
                    kw = k.kind();
                }
                continue;
            }
            if is_comment(k) {
                continue;
            }
            if k.kind() == "label" && expr.is_none() {
                label = Some(label_name(self.t(k)));
            } else {
                expr = Some(k);
            }
        }
        (kw, label, expr)
    }

    fn h_jump(&mut self, n: Node) -> Option<CallId> {
        let (kw, label, expr) = self.jump_parts(n);
        match kw {
            "return" | "return@" => {
                let target = match label {
                    Some(l) if kw == "return@" => self.labelled_return_target(l),
                    _ => self.unlabelled_return_target(),
                };
                // A bare `return` is recorded too (with an empty value): it still shows
                // where control leaves, e.g. a non-local return out of `repeat { }`.
                let value = match expr {
                    Some(e) => self.value_of(e),
                    None => self.m.add_value(Value {
                        span: span(n),
                        ..Value::default()
                    }),
                };
                self.m.returns.push(Return {
                    value,
                    scope: target,
                    span: span(n),
                });
            }
            "break" => self.mark_break(None),
            "break@" => self.mark_break(Some(label.unwrap_or(""))),
            _ => {
                if let Some(e) = expr {
                    self.visit(e);
                }
            }
        }
        None
    }

    /// `break` leaves the innermost loop; `break@l` the loop labelled `l`.
    fn mark_break(&mut self, label: Option<&str>) {
        let depth = self.catch_depth;
        for f in self.frames.iter_mut().rev() {
            match (f, label) {
                (
                    Frame::Loop {
                        has_exit, catches, ..
                    },
                    None,
                ) => {
                    *has_exit |= depth == *catches;
                    return;
                }
                (
                    Frame::Loop {
                        label: Some(ll),
                        has_exit,
                        catches,
                        ..
                    },
                    Some(l),
                ) if *ll == l => {
                    *has_exit |= depth == *catches;
                    return;
                }
                (Frame::Loop { .. } | Frame::Lambda { .. }, Some(_)) => {}
                _ => return,
            }
        }
    }

    /// Kotlin `return` leaves the innermost named / anonymous function (non-local from
    /// lambdas), so it also leaves every loop on the way.
    fn unlabelled_return_target(&mut self) -> ScopeId {
        let depth = self.catch_depth;
        for f in self.frames.iter_mut().rev() {
            match f {
                Frame::Loop {
                    has_exit, catches, ..
                } => *has_exit |= depth == *catches,
                Frame::Lambda { .. } => {}
                Frame::Func { scope } => return *scope,
                Frame::Type => break,
            }
        }
        self.scope
    }

    /// `return@l` leaves the lambda labelled `l` (explicitly or by its call's name), or the
    /// innermost lambda when no label matches.
    /// Loops between the jump and the target are left too (their `has_exit` is set).
    fn labelled_return_target(&mut self, label: &str) -> ScopeId {
        let mut innermost: Option<(ScopeId, usize)> = None;
        let mut found: Option<(ScopeId, usize)> = None;
        for (at, f) in self.frames.iter().enumerate().rev() {
            let (scope, explicit, stop) = match f {
                Frame::Loop { .. } => continue,
                Frame::Lambda { scope, label } => (*scope, *label, false),
                Frame::Func { scope } => (*scope, None, true),
                Frame::Type => break,
            };
            innermost.get_or_insert((scope, at));
            if explicit == Some(label) || self.scope_named(scope, label) {
                found = Some((scope, at));
                break;
            }
            if stop {
                break;
            }
        }
        let Some((scope, at)) = found.or(innermost) else {
            return self.scope;
        };
        let depth = self.catch_depth;
        for f in &mut self.frames[at + 1..] {
            if let Frame::Loop {
                has_exit, catches, ..
            } = f
            {
                *has_exit |= depth == *catches;
            }
        }
        scope
    }

    fn scope_named(&self, scope: ScopeId, label: &str) -> bool {
        match &self.m.scopes[scope].kind {
            ScopeKind::Lambda(li) => li
                .owner_call
                .and_then(|c| self.m.calls.get(c))
                .is_some_and(|c| c.callee == label),
            ScopeKind::Function(fi) => fi.name == label,
            _ => false,
        }
    }

    fn h_try(&mut self, n: Node) -> Option<CallId> {
        self.record_handled_try(n);
        if Self::try_goes_on(n) {
            for f in self.frames.iter_mut().rev() {
                match f {
                    Frame::Loop { handles_error, .. } => *handles_error = true,
                    _ => break,
                }
            }
        }
        self.children(n);
        None
    }

    /// Records the `try` block in [`FileModel::handled`] when the expression has a catch
    /// and no catch block throws.
    fn record_handled_try(&mut self, n: Node) {
        let kids = named_kids(n);
        let catches: Vec<Node> = kids
            .iter()
            .copied()
            .filter(|k| k.kind() == "catch_block")
            .collect();
        if catches.is_empty() {
            return;
        }
        let throws = catches.iter().any(|k| {
            super::ts_any_below(*k, super::HANDLED_SCAN_BUDGET, |j| {
                j.kind() == "jump_expression" && j.child(0).is_some_and(|t| t.kind() == "throw")
            })
            .unwrap_or(true)
        });
        if throws {
            return;
        }
        if let Some(body) = kids
            .iter()
            .find(|k| k.kind() == "block" || k.kind() == "statements")
        {
            self.m
                .handled
                .push(Span::new(body.start_byte(), body.end_byte()));
            // The catch's header is its text up to the block (a type has no brace).
            let all = catches.iter().any(|k| {
                let t = self.t(*k);
                super::catches_everything(t.split('{').next().unwrap_or(t))
            });
            if all {
                self.m
                    .catch_all
                    .push(Span::new(body.start_byte(), body.end_byte()));
            }
        }
    }

    /// Some catch block's last statement is not a throw / return / break.
    fn try_goes_on(n: Node) -> bool {
        named_kids(n)
            .into_iter()
            .filter(|k| k.kind() == "catch_block")
            .any(|cb| {
                let last = first_of_kind(cb, "statements").and_then(last_named);
                match last {
                    Some(j) if j.kind() == "jump_expression" => {
                        let kw = j.child(0).map(|k| k.kind()).unwrap_or("");
                        !matches!(kw, "throw" | "return" | "return@" | "break" | "break@")
                    }
                    _ => true,
                }
            })
    }

    fn loop_head<'t>(&mut self, n: Node<'t>) -> LoopHead<'a, 't> {
        let kind = n.kind();
        let mut head = LoopHead {
            label: self.take_label(n),
            vars: None,
            iterable: None,
            cond: None,
            body: None,
            header: (0, 0),
        };
        // Header: between the `(` and `)` (for do-while: the ones after `while`).
        let mut open = None;
        let mut close = None;
        let mut seen_while = kind != "do_while_statement";
        let mut after_in = false;
        for k in all_kids(n) {
            match k.kind() {
                "while" => seen_while = true,
                "(" if seen_while && open.is_none() => open = Some(k.end_byte()),
                ")" if open.is_some() && close.is_none() => close = Some(k.start_byte()),
                "in" => after_in = true,
                "variable_declaration" | "multi_variable_declaration"
                    if kind == "for_statement" =>
                {
                    head.vars = Some(k);
                }
                "control_structure_body" => head.body = Some(k),
                _ if k.is_named() && !is_comment(k) && open.is_some() && close.is_none() => {
                    if kind != "for_statement" {
                        head.cond = Some(k);
                    } else if after_in {
                        head.iterable = Some(k);
                    }
                }
                _ => {}
            }
        }
        if let (Some(o), Some(c)) = (open, close) {
            head.header = (o, c);
        }
        head
    }

    /// Creates the loop scope and binds the loop variables in it.
    fn loop_scope(&mut self, n: Node, head: &LoopHead) -> ScopeId {
        let keyword = match n.kind() {
            "for_statement" => "for",
            "while_statement" => "while",
            _ => "do",
        };
        let (o, c) = head.header;
        let info = LoopInfo {
            keyword: keyword.to_string(),
            header: collapse(self.text.get(o..c).unwrap_or("")),
            ..LoopInfo::default()
        };
        let scope = self.m.add_scope(ScopeKind::Loop(info), self.scope, span(n));
        if let Some(v) = head.vars {
            let decls = if v.kind() == "multi_variable_declaration" {
                named_kids(v)
            } else {
                vec![v]
            };
            for d in decls {
                if let Some(nm) = first_of_kind(d, "simple_identifier") {
                    let text = self.t(nm);
                    self.bind_in(scope, text, BindingKind::Param, None, span(nm), span(d));
                }
            }
        }
        scope
    }

    fn finish_loop(&mut self, scope: ScopeId) {
        if let Some(Frame::Loop {
            handles_error,
            has_exit,
            ..
        }) = self.frames.pop()
            && let ScopeKind::Loop(li) = &mut self.m.scopes[scope].kind
        {
            li.handles_error = handles_error;
            li.has_exit = has_exit;
        }
    }

    fn h_loop(&mut self, n: Node) -> Option<CallId> {
        let head = self.loop_head(n);
        // The iterable is evaluated once, outside the loop.
        if let Some(it) = head.iterable {
            self.visit(it);
        }
        let scope = self.loop_scope(n, &head);
        let saved_scope = std::mem::replace(&mut self.scope, scope);
        self.frames.push(Frame::Loop {
            label: head.label,
            handles_error: false,
            has_exit: false,
            catches: self.catch_depth,
        });
        let (first, second) = if n.kind() == "do_while_statement" {
            (head.body, head.cond)
        } else {
            (head.cond, head.body)
        };
        if let Some(x) = first {
            self.visit(x);
        }
        if let Some(x) = second {
            self.visit(x);
        }
        self.finish_loop(scope);
        self.scope = saved_scope;
        None
    }
}

/// Whether the `assignment` node `n` assigns with a plain `=` (not `+=` and the like).
fn plain_assignment(n: Node) -> bool {
    let mut c = n.walk();
    n.children(&mut c).any(|k| !k.is_named() && k.kind() == "=")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(text: &str, s: Span) -> &str {
        &text[s.start..s.end]
    }

    fn calls<'m>(m: &'m FileModel, callee: &str) -> Vec<&'m Call> {
        m.calls.iter().filter(|c| c.callee == callee).collect()
    }

    fn call<'m>(m: &'m FileModel, callee: &str) -> &'m Call {
        calls(m, callee)
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("no call {callee}"))
    }

    fn names(m: &FileModel, v: ValueId) -> Vec<String> {
        m.values[v]
            .atoms
            .iter()
            .map(|a| match a {
                Atom::Name { name, .. } => name.clone(),
                Atom::Call(c) => format!("{}()", m.calls[*c].callee),
                Atom::Source(_) => "source".to_string(),
            })
            .collect()
    }

    fn binding<'m>(m: &'m FileModel, name: &str) -> &'m Binding {
        m.bindings
            .iter()
            .find(|b| b.name == name)
            .unwrap_or_else(|| panic!("no binding {name}"))
    }

    fn check_invariants(text: &str, m: &FileModel) {
        for (i, s) in m.scopes.iter().enumerate().skip(1) {
            assert!(s.parent.is_some_and(|p| p < i));
            assert!(s.span.start <= s.span.end && s.span.end <= text.len());
        }
        for c in &m.calls {
            assert!(c.span.end <= text.len() && c.scope < m.scopes.len());
            for a in &c.args {
                assert!(a.value < m.values.len());
            }
        }
        for v in &m.values {
            assert!(v.span.end <= text.len());
        }
    }

    const INTERCEPTOR: &str = r#"import okhttp3.Interceptor
class StripeIdempotencyInterceptor : Interceptor {
    override fun intercept(chain: Interceptor.Chain): Response {
        val original = chain.request()
        val idempotencyKey = UUID.randomUUID().toString()
        val modified = original.newBuilder()
            .header("Idempotency-Key", idempotencyKey)
            .build()
        return chain.proceed(modified)
    }
}
"#;

    #[test]
    fn indexed_assignment_is_a_set_call() {
        let src = "fun f(request: Req, m: MutableMap<String, String>, k: String) {\n    request.headers[\"Idempotency-Key\"] = k.trim()\n    m[k] = \"v\"\n    m[k] += \"w\"\n    x.y = 1\n}\n";
        let m = lower(src);
        let sets = calls(&m, "set");
        assert_eq!(sets.len(), 2, "{sets:?}");
        let s = sets[0];
        assert_eq!(s.receiver.as_deref(), Some("request.headers"));
        assert_eq!(s.path, ["request", "headers"]);
        let args: Vec<&str> = s.args.iter().map(|a| slice(src, a.span)).collect();
        assert_eq!(args, ["\"Idempotency-Key\"", "k.trim()"]);
        assert_eq!(names(&m, s.args[1].value), ["trim()", "k"]);
        assert_eq!(
            slice(src, s.span),
            "request.headers[\"Idempotency-Key\"] = k.trim()"
        );
        assert_eq!(sets[1].receiver.as_deref(), Some("m"));
        // `+=` is no `set(..)` of the right-hand side; a property assignment stays one.
        assert!(m.assigns.iter().any(|a| a.name == "y"));
    }

    #[test]
    fn interceptor_class_function_and_chain() {
        let m = lower(INTERCEPTOR);
        check_invariants(INTERCEPTOR, &m);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let ty = m.type_info(1).expect("type scope");
        assert_eq!(ty.name, "StripeIdempotencyInterceptor");
        assert_eq!(ty.supertypes, vec!["Interceptor"]);
        let f = m.function_info(2).expect("function scope");
        assert_eq!(f.name, "intercept");
        assert_eq!(slice(INTERCEPTOR, f.name_span), "intercept");
        assert_eq!(f.params[0].name, "chain");
        assert_eq!(f.params[0].ty, "Interceptor.Chain");
        assert_eq!(f.return_type, "Response");
        assert_eq!(m.scopes[2].parent, Some(1));
        assert!(slice(INTERCEPTOR, m.scopes[2].span).starts_with("override fun intercept"));

        let header = call(&m, "header");
        assert_eq!(header.receiver.as_deref(), Some("original.newBuilder()"));
        assert_eq!(header.scope, 2);
        let nb = header.receiver_call.expect("receiver call");
        assert_eq!(m.calls[nb].callee, "newBuilder");
        assert_eq!(m.calls[nb].path, vec!["original"]);
        assert_eq!(
            m.values[header.args[0].value].literal.as_deref(),
            Some("Idempotency-Key")
        );
        assert_eq!(
            m.values[header.args[1].value].ident.as_deref(),
            Some("idempotencyKey")
        );
        let build = call(&m, "build");
        assert_eq!(
            build.receiver.as_deref(),
            Some(r#"original.newBuilder().header("Idempotency-Key", idempotencyKey)"#)
        );
        let ru = call(&m, "randomUUID");
        assert_eq!(ru.path, vec!["UUID"]);
        assert_eq!(slice(INTERCEPTOR, ru.span), "UUID.randomUUID()");
        assert_eq!(slice(INTERCEPTOR, ru.name_span), "randomUUID");
        let key = binding(&m, "idempotencyKey");
        assert_eq!(key.kind, BindingKind::Local);
        assert_eq!(key.scope, 2);
        assert_eq!(
            names(&m, key.value.expect("init")),
            vec!["toString()", "randomUUID()", "UUID"]
        );
        let ret = &m.returns[0];
        assert_eq!(ret.scope, 2);
        assert_eq!(names(&m, ret.value), vec!["proceed()", "chain", "modified"]);
        assert!(m.strings.iter().any(|s| s.text == "Idempotency-Key"));
    }

    #[test]
    fn trailing_lambda_and_named_args() {
        let src = r#"suspend fun chargeWithRetry(body: ChargeRequest): Charge {
    return retryOnTransient {
        stripeService.createCharge(
            idempotencyKey = UUID.randomUUID().toString(),
            body = body
        )
    }
}
"#;
        let m = lower(src);
        check_invariants(src, &m);
        let retry = call(&m, "retryOnTransient");
        assert_eq!(retry.receiver, None);
        assert_eq!(retry.args.len(), 1);
        let lam = retry.args[0].lambda.expect("lambda");
        let ScopeKind::Lambda(li) = &m.scopes[lam].kind else {
            panic!("not a lambda")
        };
        let rid = m.calls.iter().position(|c| c.callee == "retryOnTransient");
        assert_eq!(li.owner_call, rid);
        assert_eq!(li.arg_index, 0);
        assert_eq!(m.values[retry.args[0].value].atoms, vec![]);
        let cc = call(&m, "createCharge");
        assert_eq!(cc.scope, lam);
        assert_eq!(cc.args[0].name.as_deref(), Some("idempotencyKey"));
        assert_eq!(cc.args[1].name.as_deref(), Some("body"));
        // A backticked name binds the same parameter.
        let quoted = lower("fun f() { api.createCharge(`idempotencyKey` = k, `body` = b) }");
        let qc = call(&quoted, "createCharge");
        assert_eq!(qc.args[0].name.as_deref(), Some("idempotencyKey"));
        assert_eq!(qc.args[1].name.as_deref(), Some("body"));
        assert_eq!(
            names(&m, cc.args[0].value),
            vec!["toString()", "randomUUID()", "UUID"]
        );
        assert_eq!(
            slice(src, m.values[cc.args[0].value].span),
            "UUID.randomUUID().toString()"
        );
        let ts = call(&m, "toString");
        assert_eq!(ts.receiver.as_deref(), Some("UUID.randomUUID()"));
        assert_eq!(ts.path, Vec::<String>::new());
        assert_eq!(m.calls[ts.receiver_call.expect("rc")].callee, "randomUUID");
        // The lambda's last expression is its result; the function returns the call.
        let lam_ret: Vec<_> = m.returns.iter().filter(|r| r.scope == lam).collect();
        assert_eq!(lam_ret.len(), 1);
        assert_eq!(names(&m, lam_ret[0].value)[0], "createCharge()");
        let fn_ret: Vec<_> = m.returns.iter().filter(|r| r.scope == 1).collect();
        assert_eq!(fn_ret.len(), 1);
        // Atoms do not descend into the lambda body.
        assert_eq!(names(&m, fn_ret[0].value), vec!["retryOnTransient()"]);
    }

    #[test]
    fn fixed_rate_timer_three_args() {
        let src = r#"fun main() {
    fixedRateTimer(name = "monthly-billing", period = 30L * 24 * 60 * 60 * 1000) {
        runBilling(currentBillingPeriod())
    }
}"#;
        let m = lower(src);
        let t = call(&m, "fixedRateTimer");
        assert_eq!(t.args.len(), 3);
        assert_eq!(t.args[0].name.as_deref(), Some("name"));
        assert_eq!(
            m.values[t.args[0].value].literal.as_deref(),
            Some("monthly-billing")
        );
        assert_eq!(t.args[1].name.as_deref(), Some("period"));
        assert_eq!(t.args[2].name, None);
        let lam = t.args[2].lambda.expect("lambda");
        let ScopeKind::Lambda(li) = &m.scopes[lam].kind else {
            panic!()
        };
        assert_eq!(li.arg_index, 2);
        assert_eq!(call(&m, "runBilling").scope, lam);
        assert!(!t.is_new);
    }

    #[test]
    fn anonymous_object_argument() {
        let src = r#"fun chargeCustomerAsync(body: ChargeRequest) {
    stripeService.createCharge(UUID.randomUUID().toString(), body)
        .enqueue(object : Callback<Charge> {
            override fun onResponse(call: Call<Charge>, response: Response<Charge>) {
                stripeService.createCharge(UUID.randomUUID().toString(), body).enqueue(this)
            }
            override fun onFailure(call: Call<Charge>, t: Throwable) {}
        })
}"#;
        let m = lower(src);
        check_invariants(src, &m);
        assert!(m.errors.is_empty());
        let enq = call(&m, "enqueue");
        assert_eq!(enq.scope, 1);
        let obj = enq.args[0].lambda.expect("object");
        let ScopeKind::Object(ti) = &m.scopes[obj].kind else {
            panic!("not an object")
        };
        assert_eq!(ti.supertypes, vec!["Callback"]);
        let fns: Vec<_> = (0..m.scopes.len())
            .filter(|s| m.scopes[*s].parent == Some(obj))
            .filter_map(|s| m.function_info(s).map(|f| f.name.clone()))
            .collect();
        assert_eq!(fns, vec!["onResponse", "onFailure"]);
        let inner = &calls(&m, "createCharge")[1];
        assert_eq!(
            m.function_info(inner.scope).map(|f| f.name.as_str()),
            Some("onResponse")
        );
        assert_eq!(
            enq.receiver.as_deref(),
            Some("stripeService.createCharge(UUID.randomUUID().toString(), body)")
        );

        // One-line form: the grammar misreads the body as a trailing lambda.
        let one = "fun f() { x.enqueue(object : Callback<Charge> { override fun onFailure(c: Call) { g() } }) }";
        let m = lower(one);
        let enq = call(&m, "enqueue");
        let obj = enq.args[0].lambda.expect("object");
        assert!(
            matches!(&m.scopes[obj].kind, ScopeKind::Object(t) if t.supertypes == ["Callback"])
        );
        assert!(slice(one, m.scopes[obj].span).starts_with("object : Callback<Charge>"));
        assert_eq!(
            m.function_info(call(&m, "g").scope)
                .map(|f| f.name.as_str()),
            Some("onFailure")
        );
        assert!(calls(&m, "Callback").is_empty());
    }

    #[test]
    fn class_supertypes_fields_companion_annotations() {
        let src = r#"@file:JvmName("Billing")
@Configuration
class B(private val x: Y, z: Int = 3) : Base(), Iface {
    companion object { const val K = "k" }
    val y by lazy { compute() }
    private var count: Int = 0
    init { this.count = 2; count += z }
    fun set(v: Int) { obj.count = v }
}
interface StripeService {
    @POST("v1/charges")
    fun createCharge(
        @Header("Idempotency-Key") idempotencyKey: String,
        @Body body: ChargeRequest
    ): Call<Charge>
}
"#;
        let m = lower(src);
        check_invariants(src, &m);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let b = m.type_info(1).expect("B");
        assert_eq!(b.name, "B");
        assert_eq!(b.supertypes, vec!["Base", "Iface"]);
        let ann: Vec<_> = b.annotations.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(ann, vec!["JvmName", "Configuration"]);
        assert_eq!(binding(&m, "x").kind, BindingKind::Field);
        assert_eq!(binding(&m, "x").value, None);
        assert_eq!(binding(&m, "z").kind, BindingKind::Param);
        let comp = m.type_info(2).expect("companion");
        assert_eq!(comp.name, "Companion");
        assert!(comp.companion);
        assert!(!m.type_info(1).expect("class").companion);
        assert_eq!(binding(&m, "K").scope, 2);
        assert_eq!(binding(&m, "K").kind, BindingKind::Field);
        let y = binding(&m, "y");
        assert_eq!(y.kind, BindingKind::Field);
        assert_eq!(names(&m, y.value.expect("delegate")), vec!["lazy()"]);
        let lazy = call(&m, "lazy");
        assert!(lazy.args[0].lambda.is_some());
        assert!(call(&m, "Base").is_new);
        let assigns: Vec<_> = m.assigns.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(assigns, vec!["count", "count", "count"]);
        assert_eq!(names(&m, m.assigns[1].value), vec!["z"]);
        assert_eq!(slice(src, m.assigns[0].span), "this.count = 2");

        let svc = (0..m.scopes.len())
            .find(|s| {
                m.function_info(*s)
                    .is_some_and(|f| f.name == "createCharge")
            })
            .expect("createCharge");
        let f = m.function_info(svc).expect("fn");
        assert_eq!(f.annotations[0].name, "POST");
        assert_eq!(f.annotations[0].args, vec!["v1/charges"]);
        assert_eq!(f.params[0].annotations[0].name, "Header");
        assert_eq!(f.params[0].annotations[0].args, vec!["Idempotency-Key"]);
        assert_eq!(f.params[0].ty, "String");
        assert_eq!(f.params[1].annotations[0].name, "Body");
        assert_eq!(f.return_type, "Call<Charge>");
        let all: Vec<_> = m.annotations.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(
            all,
            vec!["JvmName", "Configuration", "POST", "Header", "Body"]
        );
        assert!(m.strings.iter().any(|s| s.text == "Idempotency-Key"));
    }

    #[test]
    fn templates_concat_elvis_atoms() {
        let src = r#"fun f(a: String, b: B, req: Request): String {
    val s = "$a:${b.c}" + suffix()
    val plain = "Idempotency-Key"
    val k = req.header("Idempotency-Key") ?: this.fallback ?: throw IllegalStateException("missing " + a)
    val h = Headers.IDEMPOTENCY_KEY
    return """raw $s"""
}"#;
        let m = lower(src);
        check_invariants(src, &m);
        let s = binding(&m, "s");
        assert_eq!(names(&m, s.value.expect("v")), vec!["a", "b", "suffix()"]);
        let lit = &m.values[binding(&m, "plain").value.expect("v")];
        assert_eq!(lit.literal.as_deref(), Some("Idempotency-Key"));
        assert_eq!(m.values[s.value.expect("v")].literal, None);
        let k = binding(&m, "k");
        assert_eq!(
            names(&m, k.value.expect("v")),
            vec![
                "header()",
                "req",
                "fallback",
                "IllegalStateException()",
                "a"
            ]
        );
        assert!(call(&m, "IllegalStateException").is_new);
        let h = &m.values[binding(&m, "h").value.expect("v")];
        assert_eq!(h.ident.as_deref(), Some("IDEMPOTENCY_KEY"));
        assert_eq!(
            names(&m, binding(&m, "h").value.expect("v")),
            vec!["Headers"]
        );
        let texts: Vec<_> = m.strings.iter().map(|s| s.text.as_str()).collect();
        assert!(texts.contains(&"$a:${b.c}"));
        assert!(texts.contains(&"raw $s"));
        let ret = &m.returns[0];
        assert_eq!(names(&m, ret.value), vec!["s"]);
        let offs: Vec<usize> = m.values[s.value.expect("v")]
            .atoms
            .iter()
            .filter_map(|a| match a {
                Atom::Name { offset, .. } => Some(*offset),
                _ => None,
            })
            .collect();
        assert_eq!(&src[offs[0]..offs[0] + 1], "a");
        assert_eq!(&src[offs[1]..offs[1] + 1], "b");
    }

    #[test]
    fn repeat_lambda_params_and_non_local_return() {
        let src = r#"suspend fun <T> retryOnTransient(maxAttempts: Int = 3, block: suspend () -> T): T {
    var lastException: Throwable? = null
    repeat(maxAttempts) { attempt ->
        try {
            return block()
        } catch (e: IOException) {
            lastException = e
            delay(500L * (attempt + 1))
        }
    }
    throw lastException!!
}"#;
        let m = lower(src);
        check_invariants(src, &m);
        assert!(m.errors.is_empty());
        let f = m.function_info(1).expect("fn");
        assert_eq!(f.params[1].name, "block");
        assert_eq!(f.params[1].ty, "suspend () -> T");
        assert_eq!(f.return_type, "T");
        let rep = call(&m, "repeat");
        assert_eq!(rep.args.len(), 2);
        let lam = rep.args[1].lambda.expect("lambda");
        let ScopeKind::Lambda(li) = &m.scopes[lam].kind else {
            panic!()
        };
        assert_eq!(li.params.len(), 1);
        assert_eq!(li.params[0].name, "attempt");
        assert_eq!(li.arg_index, 1);
        assert_eq!(binding(&m, "attempt").kind, BindingKind::Param);
        assert_eq!(binding(&m, "attempt").scope, lam);
        assert_eq!(binding(&m, "e").kind, BindingKind::Param);
        assert_eq!(binding(&m, "lastException").kind, BindingKind::Local);
        // Non-local return: attributed to the function.
        let r: Vec<_> = m
            .returns
            .iter()
            .filter(|r| names(&m, r.value) == ["block()"])
            .collect();
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].scope, 1);
        assert_eq!(slice(src, r[0].span), "return block()");
        assert_eq!(call(&m, "block").scope, lam);
        assert_eq!(m.assigns[0].name, "lastException");
    }

    #[test]
    fn labelled_returns_and_expression_bodies() {
        let src = r#"fun key(id: String): String = "k-$id"
val answer: Int
    get() = compute()
fun g(xs: List<Int>) {
    xs.forEach { x -> if (x > 0) return@forEach }
    client.retry(3) inner@{ attempt -> list.map { return@inner attempt } }
    val f = fun(y: Int): Int { return y * 2 }
    run { return }
}"#;
        let m = lower(src);
        check_invariants(src, &m);
        let f = m.function_info(1).expect("key");
        assert!(f.expression_body);
        assert_eq!(m.returns[0].scope, 1);
        assert_eq!(names(&m, m.returns[0].value), vec!["id"]);
        let getter = (0..m.scopes.len())
            .find(|s| m.function_info(*s).is_some_and(|f| f.name == "get"))
            .expect("getter");
        let got: Vec<&crate::model::Return> =
            m.returns.iter().filter(|r| r.scope == getter).collect();
        assert_eq!(got.len(), 1, "the getter's expression body is its return");
        assert_eq!(&src[got[0].span.start..got[0].span.end], "compute()");
        assert_eq!(call(&m, "compute").scope, getter);
        let retry = call(&m, "retry");
        let inner = retry.args[1].lambda.expect("labelled lambda");
        let ret_attempt = m
            .returns
            .iter()
            .find(|r| {
                names(&m, r.value) == ["attempt"] && slice(src, r.span).starts_with("return@")
            })
            .expect("return@inner");
        assert_eq!(ret_attempt.scope, inner);
        let anon = (0..m.scopes.len())
            .find(|s| {
                matches!(&m.scopes[*s].kind, ScopeKind::Lambda(li) if li.params.first().is_some_and(|p| p.name == "y"))
            })
            .expect("anonymous function");
        assert!(
            m.returns
                .iter()
                .any(|r| r.scope == anon && names(&m, r.value) == ["y"])
        );
        assert!(m.scopes[anon].parent.is_some());
    }

    #[test]
    fn receiver_calls_paths_fn_refs_type_hints() {
        let src = r#"fun f() {
    Mono.defer { api.charge() }.retryWhen(spec)
    java.util.UUID.randomUUID()
    scheduler.scheduleAtFixedRate(::runBilling, this::runBilling, Billing::run)
    client.addInterceptor(StripeIdempotencyInterceptor())
    OkHttpClient.Builder()
        // comment .x()
        .build()
    val r = (a ?: b).go()
    f()()
}"#;
        let m = lower(src);
        check_invariants(src, &m);
        let rw = call(&m, "retryWhen");
        let d = rw.receiver_call.expect("defer");
        assert_eq!(m.calls[d].callee, "defer");
        assert_eq!(m.calls[d].path, vec!["Mono"]);
        assert_eq!(rw.receiver.as_deref(), Some("Mono.defer { api.charge() }"));
        assert_eq!(rw.path, Vec::<String>::new());
        let ru = call(&m, "randomUUID");
        assert_eq!(ru.path, vec!["java", "util", "UUID"]);
        assert_eq!(ru.receiver.as_deref(), Some("java.util.UUID"));
        let s = call(&m, "scheduleAtFixedRate");
        let refs: Vec<_> = s.args.iter().map(|a| a.fn_ref.as_deref()).collect();
        assert_eq!(
            refs,
            vec![Some("runBilling"), Some("runBilling"), Some("run")]
        );
        let ai = call(&m, "addInterceptor");
        assert_eq!(
            ai.args[0].type_hint.as_deref(),
            Some("StripeIdempotencyInterceptor")
        );
        assert!(call(&m, "StripeIdempotencyInterceptor").is_new);
        let b = call(&m, "build");
        assert_eq!(b.receiver.as_deref(), Some("OkHttpClient.Builder()"));
        assert!(call(&m, "Builder").is_new);
        assert_eq!(call(&m, "Builder").path, vec!["OkHttpClient"]);
        let go = call(&m, "go");
        assert_eq!(go.receiver.as_deref(), Some("(a ?: b)"));
        assert_eq!(go.receiver_call, None);
        let inv = call(&m, "invoke");
        assert_eq!(m.calls[inv.receiver_call.expect("f()")].callee, "f");
    }

    #[test]
    fn loops_handles_error_and_exit() {
        let src = r#"fun f(customers: List<C>) {
    for (customer in customers) {
        val key = UUID.randomUUID().toString()
        stripe.charge(key)
    }
    while (true) {
        try { api.post(); break } catch (e: IOException) { log(e) }
    }
    outer@ while (attempt < 3) {
        for (x in xs) { if (x) break@outer }
        try { api.post() } catch (e: IOException) { throw e }
    }
    do { n++ ; if (n > 3) break } while (retry(n))
    for ((k, v) in map) { for (y in ys) { break } }
    while (true) { run { return } }
}"#;
        let m = lower(src);
        check_invariants(src, &m);
        let loops: Vec<(ScopeId, &LoopInfo)> = m
            .scopes
            .iter()
            .enumerate()
            .filter_map(|(i, s)| match &s.kind {
                ScopeKind::Loop(l) => Some((i, l)),
                _ => None,
            })
            .collect();
        let info: Vec<_> = loops
            .iter()
            .map(|(_, l)| {
                (
                    l.keyword.as_str(),
                    l.header.as_str(),
                    l.handles_error,
                    l.has_exit,
                )
            })
            .collect();
        assert_eq!(
            info,
            vec![
                ("for", "customer in customers", false, false),
                ("while", "true", true, true),
                ("while", "attempt < 3", false, true),
                ("for", "x in xs", false, false),
                ("do", "retry(n)", false, true),
                ("for", "(k, v) in map", false, false),
                ("for", "y in ys", false, true),
                ("while", "true", false, true),
            ]
        );
        let (l0, _) = loops[0];
        assert_eq!(binding(&m, "customer").scope, l0);
        assert_eq!(binding(&m, "customer").kind, BindingKind::Param);
        assert_eq!(call(&m, "randomUUID").scope, l0);
        assert_eq!(binding(&m, "k").scope, loops[5].0);
        assert_eq!(call(&m, "retry").scope, loops[4].0);
        assert!(slice(src, m.scopes[l0].span).starts_with("for (customer"));
    }

    #[test]
    fn parse_errors_are_reported_and_rest_is_lowered() {
        let src = "class A {\n  fun ok() { good(1) }\n  fun bad( { \n}\nfun after() { fine() }\n";
        let m = lower(src);
        check_invariants(src, &m);
        assert!(!m.errors.is_empty());
        assert!(m.errors.len() <= crate::lang::MAX_ERRORS);
        for e in &m.errors {
            assert!(e.span.end <= src.len());
            assert!(
                e.message == "syntax error" || e.message.starts_with("missing `"),
                "{}",
                e.message
            );
        }
        assert!(!calls(&m, "good").is_empty());

        let m = lower("fun f() { g(1, }");
        assert!(!m.errors.is_empty());
        let m = lower("");
        assert!(m.errors.is_empty());
        assert_eq!(m.scopes.len(), 1);
        // A BOM keeps offsets.
        let bom = "\u{feff}fun f() { g() }";
        let m = lower(bom);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        assert_eq!(slice(bom, call(&m, "g").span), "g()");
        // Garbage never panics.
        for junk in [
            "}}}{{{",
            "fun",
            "\"$",
            "object : {",
            "val x = \"\"\"",
            "@",
            "fun f() = ",
            "a?.b!!.c(::)",
        ] {
            let m = lower(junk);
            check_invariants(junk, &m);
        }
    }

    fn on_big_stack(f: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(8 * 1024 * 1024)
            .spawn(f)
            .expect("spawn")
            .join()
            .expect("no panic");
    }

    #[test]
    fn deep_nesting_does_not_crash() {
        on_big_stack(|| {
            let n = 5000;
            let parens = format!("val x = {}1{}", "(".repeat(n), ")".repeat(n));
            let lambdas = format!("fun f() {{ {} }}", "run { ".repeat(n) + &"}".repeat(n));
            let calls = format!("val y = {}x{}", "f(".repeat(n), ")".repeat(n));
            let classes = format!("{}{}", "class A { ".repeat(n), "}".repeat(n));
            let ifs = format!("fun g() {{ {} }}", "if (a) { ".repeat(n) + &"}".repeat(n));
            let chain = format!("val z = a{}", ".b()".repeat(n));
            let strings = format!("val s = {}", "\"${".repeat(n) + "x" + &"}\"".repeat(n));
            let objects = format!(
                "val o = {}",
                "object : A {\n fun f() {\n val o = ".repeat(n)
            );
            let funs = "fun f() {\n".repeat(n);
            let loops = format!(
                "fun f() {{ {} }}",
                "while (a) { ".repeat(n) + &"}".repeat(n)
            );
            let args = format!("val y = {}x{}", "f(a = g { ".repeat(n), " })".repeat(n));
            let mixed = format!("val y = {}", "a.b(c) { x -> (if (x) y else z".repeat(n));
            let sources = [
                parens, lambdas, calls, classes, ifs, chain, strings, objects, funs, loops, args,
                mixed,
            ];
            for src in sources {
                let m = lower(&src);
                check_invariants(&src, &m);
                let deep = m
                    .errors
                    .iter()
                    .filter(|e| e.message.starts_with("nesting deeper"))
                    .count();
                assert!(deep <= 1);
            }
        });
    }

    #[test]
    fn locals_fields_destructuring_when() {
        let src = r#"val top = loadConfig()
object Registry { val client = OkHttpClient() }
fun f() {
    val (a, b) = pair()
    when (val r = fetch()) { is Ok -> use(r) }
    listOf(1).forEach { (x, y) -> x }
}"#;
        let m = lower(src);
        check_invariants(src, &m);
        assert_eq!(binding(&m, "top").kind, BindingKind::Field);
        assert_eq!(binding(&m, "top").scope, 0);
        let reg = m
            .type_info(binding(&m, "client").scope)
            .expect("object decl");
        assert_eq!(reg.name, "Registry");
        assert_eq!(binding(&m, "a").kind, BindingKind::Local);
        assert_eq!(binding(&m, "a").value, None);
        assert_eq!(binding(&m, "b").kind, BindingKind::Local);
        assert!(!calls(&m, "pair").is_empty());
        let r = binding(&m, "r");
        assert_eq!(names(&m, r.value.expect("v")), vec!["fetch()"]);
        assert_eq!(slice(src, binding(&m, "top").name_span), "top");
        assert_eq!(
            slice(src, binding(&m, "top").span),
            "val top = loadConfig()"
        );
        assert_eq!(binding(&m, "x").kind, BindingKind::Param);
        assert_eq!(binding(&m, "y").kind, BindingKind::Param);
    }

    #[test]
    fn peers_fixture_shapes() {
        let src = r#"class Pos {
  suspend fun a(c: Client) {
    retry(3) { c.post(UUID.randomUUID().toString()) }
    c.retryWhen { cause, attempt -> c.post("k" + System.currentTimeMillis()); true }
    flow.retry(3, { c.post(UUID.randomUUID().toString()) })
  }
}"#;
        let m = lower(src);
        check_invariants(src, &m);
        let rw = call(&m, "retryWhen");
        let lam = rw.args[0].lambda.expect("lambda");
        let ScopeKind::Lambda(li) = &m.scopes[lam].kind else {
            panic!()
        };
        let ps: Vec<_> = li.params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(ps, vec!["cause", "attempt"]);
        let posts = calls(&m, "post");
        assert_eq!(
            names(&m, posts[1].args[0].value),
            vec!["currentTimeMillis()", "System"]
        );
        assert_eq!(posts[1].scope, lam);
        let fr = calls(&m, "retry");
        assert_eq!(fr[1].receiver.as_deref(), Some("flow"));
        assert_eq!(fr[1].args.len(), 2);
        let l2 = fr[1].args[1].lambda.expect("lambda in parens");
        assert_eq!(posts[2].scope, l2);
        // The lambda result is `true` in the second lambda.
        assert!(
            m.returns
                .iter()
                .any(|r| r.scope == lam && slice(src, r.span) == "true")
        );
    }

    #[test]
    fn nested_string_templates_never_abort() {
        on_big_stack(|| {
            let nest = |n: usize| format!("val s = {}", "\"${".repeat(n) + "x" + &"}\"".repeat(n));
            let m = lower(&nest(100));
            assert!(m.errors.is_empty(), "{:?}", m.errors);
            assert_eq!(m.strings.len(), 100);
            for n in [300, 600, 5000] {
                let m = lower(&nest(n));
                assert_eq!(m.errors.len(), 1);
                assert!(
                    m.errors[0]
                        .message
                        .starts_with("string templates nested deeper")
                );
            }
            // Many quotes but no nesting: parsed normally.
            let flat =
                "fun f() {\n".to_string() + &"  g(\"a\", \"${b}\", '\"')\n".repeat(400) + "}\n";
            let m = lower(&flat);
            assert!(m.errors.is_empty(), "{:?}", m.errors);
            assert_eq!(m.calls.len(), 400);
            // Unterminated strings and stray quotes in comments never abort either.
            let junk = "// \"\n".repeat(300) + &"\"${".repeat(300);
            let m = lower(&junk);
            check_invariants(&junk, &m);
        });
    }

    #[test]
    fn annotations_use_site_arrays_and_local_delegates() {
        let src = r#"class Cfg(@field:Value("${'$'}{stripe.key}") val key: String) {
    @Retryable(value = [IOException::class], maxAttempts = 3)
    @SchedulerLock(name = "billing", lockAtMostFor = "10m")
    fun run() {
        val client by lazy { build() }
        client.go()
    }
}"#;
        let m = lower(src);
        check_invariants(src, &m);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let names: Vec<_> = m.annotations.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, vec!["Value", "Retryable", "SchedulerLock"]);
        assert_eq!(m.annotations[1].args, vec!["[IOException::class]", "3"]);
        assert_eq!(m.annotations[2].args, vec!["billing", "10m"]);
        assert_eq!(
            slice(src, m.annotations[2].span),
            r#"@SchedulerLock(name = "billing", lockAtMostFor = "10m")"#
        );
        let run = m.function_info(2).expect("run");
        assert_eq!(run.annotations.len(), 2);
        assert_eq!(binding(&m, "key").kind, BindingKind::Field);
        let client = binding(&m, "client");
        assert_eq!(client.kind, BindingKind::Local);
        assert_eq!(names_of(&m, client.value), vec!["lazy()"]);
        assert_eq!(call(&m, "go").receiver.as_deref(), Some("client"));
    }

    fn names_of(m: &FileModel, v: Option<ValueId>) -> Vec<String> {
        v.map(|v| names(m, v)).unwrap_or_default()
    }

    /// Lowers every `.kt`/`.kts` file of `$KT_DIR` (default: the fixtures) and prints
    /// counts and parse errors. `cargo test -- --ignored --nocapture lower_dir`.
    #[test]
    #[ignore]
    fn lower_dir() {
        let dir = std::env::var("KT_DIR").unwrap_or_else(|_| "fixtures/kotlin".to_string());
        let mut paths = Vec::new();
        let mut stack = vec![std::path::PathBuf::from(&dir)];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "kt" || x == "kts") {
                    paths.push(p);
                }
            }
        }
        paths.sort();
        let (mut files, mut errs) = (0, 0);
        for p in paths {
            let Ok(text) = std::fs::read_to_string(&p) else {
                continue;
            };
            let m = lower(&text);
            check_invariants(&text, &m);
            files += 1;
            errs += m.errors.len();
            println!(
                "{}: scopes={} calls={} values={} bindings={} assigns={} returns={} strings={} annotations={} errors={}",
                p.display(),
                m.scopes.len(),
                m.calls.len(),
                m.values.len(),
                m.bindings.len(),
                m.assigns.len(),
                m.returns.len(),
                m.strings.len(),
                m.annotations.len(),
                m.errors.len()
            );
            for e in &m.errors {
                let line = text[..e.span.start].matches('\n').count() + 1;
                println!(
                    "    line {line}: {} {:?}",
                    e.message,
                    &text[e.span.start..e.span.end.min(e.span.start + 60)]
                );
            }
        }
        println!("{files} files, {errs} errors");
    }
}
