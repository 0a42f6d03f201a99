//! Java frontend: lowers a tree-sitter-java (0.23.5) syntax tree into the language-neutral
//! [`FileModel`].
//!
//! One recursive pass over the tree (bounded at [`MAX_DEPTH`] levels) builds the scope tree and
//! records calls, values, bindings, assignments, returns, string literals and annotations. A
//! separate iterative walk collects ERROR / MISSING nodes. Node kinds are resolved once per file
//! into a small enum table indexed by kind id, so the walk never compares kind strings on the hot
//! path.

use crate::model::*;
use tree_sitter::{Node, Parser, TreeCursor};

/// A field of the Java grammar that the frontend reads ([`FieldOf::field`]).
#[derive(Clone, Copy, Debug)]
enum F {
    Alternative,
    Arguments,
    Array,
    Body,
    Condition,
    Consequence,
    Constructor,
    Element,
    Field,
    Left,
    Name,
    Object,
    Parameters,
    Pattern,
    Right,
    Type,
    Value,
}

/// The grammar's names of [`F`]'s fields, in its order.
const FIELD_NAMES: [&str; 17] = [
    "alternative",
    "arguments",
    "array",
    "body",
    "condition",
    "consequence",
    "constructor",
    "element",
    "field",
    "left",
    "name",
    "object",
    "parameters",
    "pattern",
    "right",
    "type",
    "value",
];

/// The grammar's id of each of [`F`]'s fields (0 when the grammar has no such field),
/// looked up once: `Node::child_by_field_name` looks a name up by comparing it with every
/// field name of the grammar on each call, about 1 % of a keyed run's CPU.
fn field_ids() -> &'static [u16; 17] {
    static IDS: std::sync::OnceLock<[u16; 17]> = std::sync::OnceLock::new();
    IDS.get_or_init(|| {
        let language: tree_sitter::Language = tree_sitter_java::LANGUAGE.into();
        FIELD_NAMES.map(|n| language.field_id_for_name(n).map_or(0, |id| id.get()))
    })
}

/// [`Node::child_by_field_name`] by a field id looked up once.
trait FieldOf<'t> {
    fn field(&self, f: F) -> Option<Node<'t>>;
}

impl<'t> FieldOf<'t> for Node<'t> {
    fn field(&self, f: F) -> Option<Node<'t>> {
        match field_ids()[f as usize] {
            0 => None,
            id => self.child_by_field_id(id),
        }
    }
}

/// Deepest syntax-tree nesting the walker descends into.
const MAX_DEPTH: u32 = 1000;
const DEPTH_MESSAGE: &str =
    "nesting deeper than 1000 levels; the rest of this construct is not analysed";

/// Parses `text` and lowers it into the language-neutral model.
pub fn lower(text: &str) -> FileModel {
    // Java decodes `\uXXXX` escapes before it tokenises (JLS §3.3), so
    // `UUID.\u0072andomUUID()` is `UUID.randomUUID()`: lower the decoded text and map every
    // offset back to the file as read.
    if let Some((decoded, map)) = decode_unicode_escapes(text) {
        let mut m = lower_decoded(&decoded);
        let last = map.len() - 1;
        m.remap_offsets(|o| map[o.min(last)]);
        m.scopes[0].span = Span::new(0, text.len());
        return m;
    }
    lower_decoded(text)
}

/// The text as the Java compiler reads it, unicode escapes decoded (JLS §3.3), when it
/// has any; the prefilter scans this text so a word written with an escape
/// (`"\u0049dempotency-Key"`) is seen as the frontend sees it.
pub fn unicode_decoded(text: &str) -> Option<String> {
    decode_unicode_escapes(text).map(|(decoded, _)| decoded)
}

/// The text with Java unicode escapes decoded, and for every byte offset of it (and its
/// end) the offset in `text`; `None` when there is no escape. A backslash preceded by an
/// odd number of backslashes does not start one; `\uuu0041` is one escape; an escape that
/// decodes to a surrogate or is malformed is left as written, and `\u0000` (with any
/// number of `u`s) is written as `\u0000`: javac takes it (`"a\u0000b"` is a string
/// holding a NUL), but tree-sitter reads a NUL byte as the end of its input and reports
/// the rest of the file as a syntax error, while `\u0000` is a string escape it parses, of
/// the same meaning inside a literal.
fn decode_unicode_escapes(text: &str) -> Option<(String, Vec<usize>)> {
    if !text.contains("\\u") {
        return None;
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut map = Vec::with_capacity(text.len() + 1);
    let mut i = 0;
    let mut backslashes = 0usize;
    let mut any = false;
    while i < b.len() {
        if b[i] == b'\\' && backslashes.is_multiple_of(2) && b.get(i + 1) == Some(&b'u') {
            let mut j = i + 1;
            while b.get(j) == Some(&b'u') {
                j += 1;
            }
            let hex = text
                .get(j..j + 4)
                .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()));
            let c = hex
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .and_then(char::from_u32);
            if let Some(c) = c {
                // A NUL is written back as the one-`u` escape tree-sitter's string rule
                // accepts (`\uu0000` is none). Every byte maps to the escape's start.
                let mut buf = [0u8; 4];
                let decoded: &str = if c == '\0' {
                    "\\u0000"
                } else {
                    c.encode_utf8(&mut buf)
                };
                map.extend(std::iter::repeat_n(i, decoded.len()));
                out.push_str(decoded);
                any = true;
                i = j + 4;
                backslashes = 0;
                continue;
            }
        }
        backslashes = if b[i] == b'\\' { backslashes + 1 } else { 0 };
        let c = text[i..].chars().next().unwrap_or('\0');
        for k in 0..c.len_utf8() {
            map.push(i + k);
        }
        out.push(c);
        i += c.len_utf8();
    }
    map.push(text.len());
    any.then_some((out, map))
}

fn lower_decoded(text: &str) -> FileModel {
    let mut model = FileModel::new(Language::Java, text.len());
    // A byte-order mark is replaced by three spaces so every offset stays the same.
    let owned;
    let src: &str = match text.strip_prefix('\u{feff}') {
        Some(rest) => {
            owned = format!("   {rest}");
            &owned
        }
        None => text,
    };
    let language: tree_sitter::Language = tree_sitter_java::LANGUAGE.into();
    let mut parser = Parser::new();
    if parser.set_language(&language).is_err() {
        model.errors.push(ParseError {
            message: "the Java grammar could not be loaded".to_string(),
            span: Span::new(0, text.len()),
        });
        return model;
    }
    let Some(tree) = super::parse_within(&mut parser, src, super::parse_budget(src.len())) else {
        model.errors.push(ParseError {
            message: super::gave_up_message("Java", src.len()),
            span: Span::new(0, text.len()),
        });
        return model;
    };
    let root = tree.root_node();
    let (errors, damage) = super::syntax_errors(root);
    model.errors.extend(errors);
    model.damage = Some(damage);
    let mut lowerer = Lower {
        text: src,
        kinds: kind_table(&language),
        m: model,
        buf: Vec::new(),
        collecting: 0,
        brk: Vec::new(),
        catch_depth: 0,
        loop_catch: Vec::new(),
        pending_owner: None,
        depth_error: false,
        cursors: Vec::new(),
    };
    lowerer.visit(root, Ctx { scope: 0, func: 0 }, 0);
    lowerer.m
}

/// The node kinds the walker distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum K {
    /// Walk the named children.
    Generic,
    /// Nothing of interest inside (types, imports, literals, `continue`).
    Skip,
    TypeDecl,
    EnumConstant,
    Method,
    FieldDecl,
    LocalDecl,
    Lambda,
    Invoke,
    New,
    CtorCall,
    MethodRef,
    FieldAccess,
    Ident,
    This,
    Str,
    Assign,
    Return,
    Break,
    Throw,
    For,
    EnhancedFor,
    While,
    Do,
    Labeled,
    Switch,
    Catch,
    Resource,
    InstanceOf,
    TypePattern,
    RecordPattern,
    RecordComponent,
    Annotation,
    Paren,
    Cast,
}

fn kind_of(name: &str) -> K {
    match name {
        "class_declaration"
        | "interface_declaration"
        | "enum_declaration"
        | "record_declaration"
        | "annotation_type_declaration" => K::TypeDecl,
        "enum_constant" => K::EnumConstant,
        "method_declaration" | "constructor_declaration" | "compact_constructor_declaration" => {
            K::Method
        }
        "field_declaration" | "constant_declaration" => K::FieldDecl,
        "local_variable_declaration" => K::LocalDecl,
        "lambda_expression" => K::Lambda,
        "method_invocation" => K::Invoke,
        "object_creation_expression" => K::New,
        "explicit_constructor_invocation" => K::CtorCall,
        "method_reference" => K::MethodRef,
        "field_access" => K::FieldAccess,
        "identifier" => K::Ident,
        "this" | "super" => K::This,
        "string_literal" => K::Str,
        "assignment_expression" => K::Assign,
        "return_statement" => K::Return,
        "break_statement" => K::Break,
        "throw_statement" => K::Throw,
        "for_statement" => K::For,
        "enhanced_for_statement" => K::EnhancedFor,
        "while_statement" => K::While,
        "do_statement" => K::Do,
        "labeled_statement" => K::Labeled,
        "switch_expression" => K::Switch,
        "catch_clause" => K::Catch,
        "resource" => K::Resource,
        "instanceof_expression" => K::InstanceOf,
        "type_pattern" => K::TypePattern,
        "record_pattern" => K::RecordPattern,
        "record_pattern_component" => K::RecordComponent,
        "annotation" | "marker_annotation" => K::Annotation,
        "parenthesized_expression" => K::Paren,
        "cast_expression" => K::Cast,
        "line_comment"
        | "block_comment"
        | "continue_statement"
        | "import_declaration"
        | "package_declaration"
        | "module_declaration"
        | "type_identifier"
        | "generic_type"
        | "scoped_type_identifier"
        | "array_type"
        | "integral_type"
        | "floating_point_type"
        | "boolean_type"
        | "void_type"
        | "type_arguments"
        | "type_parameters"
        | "type_parameter"
        | "type_bound"
        | "wildcard"
        | "annotated_type"
        | "dimensions"
        | "type_list"
        | "superclass"
        | "super_interfaces"
        | "extends_interfaces"
        | "permits"
        | "throws"
        | "catch_type"
        | "class_literal"
        | "scoped_identifier"
        | "receiver_parameter"
        | "formal_parameters"
        | "inferred_parameters"
        | "decimal_integer_literal"
        | "hex_integer_literal"
        | "octal_integer_literal"
        | "binary_integer_literal"
        | "decimal_floating_point_literal"
        | "hex_floating_point_literal"
        | "character_literal"
        | "true"
        | "false"
        | "null_literal"
        | "underscore_pattern"
        | "string_fragment"
        | "multiline_string_fragment"
        | "escape_sequence" => K::Skip,
        _ => K::Generic,
    }
}

/// `kinds[kind_id]` for every named kind of the grammar.
fn kind_table(language: &tree_sitter::Language) -> Vec<K> {
    (0..language.node_kind_count())
        .map(|id| {
            let id = id as u16;
            match language.node_kind_for_id(id) {
                Some(name) if language.node_kind_is_named(id) => kind_of(name),
                _ => K::Skip,
            }
        })
        .collect()
}

/// The construct an annotation belongs to: the declaration owning its `modifiers`, or its
/// parent node otherwise.
fn annotated_target(annotation: Node) -> Span {
    match annotation.parent() {
        Some(p) if p.kind() == "modifiers" => span(p.parent().unwrap_or(p)),
        Some(p) => span(p),
        None => span(annotation),
    }
}

fn span(node: Node) -> Span {
    Span::new(node.start_byte(), node.end_byte())
}

/// Collapses runs of whitespace (and comments) to one space, drops whitespace next to `.`,
/// trims the ends. String and character literals are copied unchanged.
fn collapse(s: &str) -> String {
    let b = s.as_bytes();
    if !b.iter().any(|&c| c.is_ascii_whitespace() || c == b'/') {
        return s.to_string();
    }
    fn space(out: &mut String, pending: &mut bool, next: u8) {
        if *pending && next != b'.' && !out.ends_with('.') {
            out.push(' ');
        }
        *pending = false;
    }
    let mut out = String::with_capacity(s.len());
    let mut pending = false;
    let mut i = 0;
    // Every slice boundary below sits next to an ASCII byte, hence on a char boundary.
    while i < b.len() {
        let c = b[i];
        if c == b'"' || c == b'\'' {
            let start = i;
            i += 1;
            while i < b.len() {
                if b[i] == b'\\' {
                    i += if b.get(i + 1).is_some_and(u8::is_ascii) {
                        2
                    } else {
                        1
                    };
                } else if b[i] == c {
                    i += 1;
                    break;
                } else {
                    i += 1;
                }
            }
            let end = i.min(b.len());
            space(&mut out, &mut pending, c);
            out.push_str(s.get(start..end).unwrap_or(""));
            i = end;
        } else if c == b'/' && b.get(i + 1) == Some(&b'/') {
            i = b[i..]
                .iter()
                .position(|&x| x == b'\n')
                .map_or(b.len(), |p| i + p + 1);
            pending = !out.is_empty();
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = s[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
            pending = !out.is_empty();
        } else if c.is_ascii_whitespace() {
            pending = !out.is_empty();
            i += 1;
        } else {
            let start = i;
            i += 1;
            while i < b.len() && !matches!(b[i], b'"' | b'\'' | b'/') && !b[i].is_ascii_whitespace()
            {
                i += 1;
            }
            space(&mut out, &mut pending, c);
            out.push_str(s.get(start..i).unwrap_or(""));
        }
    }
    out
}

/// The raw content of a string literal or text block, without its delimiters.
fn unquote(s: &str) -> &str {
    if s.len() >= 6 && s.starts_with("\"\"\"") && s.ends_with("\"\"\"") {
        &s[3..s.len() - 3]
    } else if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        &s[1..s.len() - 1]
    } else {
        s.trim_start_matches('"')
    }
}

/// Simple name from a type's text: generics, qualification and annotations dropped.
fn simple_name_of_text(s: &str) -> &str {
    let s = s.split('<').next().unwrap_or("");
    let s = s.rsplit(['.', ' ']).next().unwrap_or("");
    s.trim()
}

/// Where the walk is: the innermost scope, and the scope a `return` belongs to.
#[derive(Clone, Copy, Debug)]
struct Ctx {
    scope: ScopeId,
    /// Innermost function or lambda (a type scope in initializers).
    func: ScopeId,
}

/// What an expression turned out to be, for its parent.
#[derive(Clone, Copy, Debug, Default)]
struct Ret {
    /// The expression (parentheses stripped) is a call.
    call: Option<CallId>,
    /// The expression (parentheses and casts stripped) is a lambda or anonymous object.
    scope: Option<ScopeId>,
}

/// An entry of the stack of constructs a `break` can leave, within one function body.
#[derive(Clone, Copy, Debug)]
enum Brk<'a> {
    Loop(ScopeId),
    Switch,
    Label(&'a str),
}

/// A handler for one node kind.
type Handler<'a> = fn(&mut Lower<'a>, Node<'a>, Ctx, u32) -> Ret;

struct Lower<'a> {
    text: &'a str,
    kinds: Vec<K>,
    m: FileModel,
    /// Atoms of the values being built; a value is a suffix of this buffer.
    buf: Vec<Atom>,
    /// Number of values being built (0 outside expressions: no atoms are recorded).
    collecting: u32,
    brk: Vec<Brk<'a>>,
    /// Number of `catch` bodies being visited.
    catch_depth: usize,
    /// Each open loop with the `catch` depth at its start: a `break` / `return` at a greater
    /// depth leaves the loop from a failure handler, which is no exit on success.
    loop_catch: Vec<(ScopeId, usize)>,
    /// `(call, arg index, lambda node id)`: the lambda about to be visited is that argument.
    pending_owner: Option<(CallId, usize, usize)>,
    depth_error: bool,
    cursors: Vec<TreeCursor<'a>>,
}

impl<'a> Lower<'a> {
    // ----- small helpers -------------------------------------------------------------------

    fn k(&self, node: Node) -> K {
        if node.is_error() {
            return K::Generic;
        }
        self.kinds
            .get(node.kind_id() as usize)
            .copied()
            .unwrap_or(K::Generic)
    }

    fn t(&self, node: Node) -> &'a str {
        self.text
            .get(node.start_byte()..node.end_byte())
            .unwrap_or("")
    }

    fn cursor(&mut self, node: Node<'a>) -> TreeCursor<'a> {
        match self.cursors.pop() {
            Some(mut c) => {
                c.reset(node);
                c
            }
            None => node.walk(),
        }
    }

    /// Calls `f` on every named, non-comment child of `node`.
    fn each_named(&mut self, node: Node<'a>, mut f: impl FnMut(&mut Self, Node<'a>)) {
        if node.child_count() == 0 {
            return;
        }
        let mut c = self.cursor(node);
        if c.goto_first_child() {
            loop {
                let ch = c.node();
                // Comments are extras; so are some ERROR nodes, which are still walked.
                if ch.is_named() && (!ch.is_extra() || ch.is_error()) {
                    f(self, ch);
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        self.cursors.push(c);
    }

    /// First named, non-comment child of `node` of the given kind (any kind when `None`).
    fn find_child(&mut self, node: Node<'a>, kind: Option<&str>) -> Option<Node<'a>> {
        if node.child_count() == 0 {
            return None;
        }
        let mut found = None;
        let mut c = self.cursor(node);
        if c.goto_first_child() {
            loop {
                let ch = c.node();
                if ch.is_named() && !ch.is_extra() && kind.is_none_or(|k| ch.kind() == k) {
                    found = Some(ch);
                    break;
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        self.cursors.push(c);
        found
    }

    /// Last named, non-comment child of `node`.
    fn last_child(&mut self, node: Node<'a>) -> Option<Node<'a>> {
        let mut last = None;
        self.each_named(node, |_, ch| last = Some(ch));
        last
    }

    fn push_atom(&mut self, atom: Atom) {
        if self.collecting > 0 {
            self.buf.push(atom);
        }
    }

    fn push_name(&mut self, node: Node<'a>) {
        if self.collecting > 0 {
            let name = self.t(node).to_string();
            self.buf.push(Atom::Name {
                name,
                offset: node.start_byte(),
            });
        }
    }

    fn too_deep(&mut self, node: Node) {
        if !self.depth_error {
            self.depth_error = true;
            self.m.errors.push(ParseError {
                message: DEPTH_MESSAGE.to_string(),
                span: span(node),
            });
        }
    }

    /// Strips parentheses and casts.
    fn strip(&mut self, mut node: Node<'a>) -> Node<'a> {
        loop {
            match self.k(node) {
                K::Paren => match self.find_child(node, None) {
                    Some(inner) => node = inner,
                    None => return node,
                },
                K::Cast => match node.field(F::Value) {
                    Some(inner) => node = inner,
                    None => return node,
                },
                _ => return node,
            }
        }
    }

    /// Last segment when `node` is a plain identifier or dotted name (`this.x` included).
    fn ident_of(&self, node: Node<'a>) -> Option<&'a str> {
        match self.k(node) {
            K::Ident => Some(self.t(node)),
            K::FieldAccess => {
                let mut cur = node;
                loop {
                    match self.k(cur) {
                        K::FieldAccess => cur = cur.field(F::Object)?,
                        K::Ident | K::This => break,
                        _ => return None,
                    }
                }
                node.field(F::Field).map(|f| self.t(f))
            }
            _ => None,
        }
    }

    /// Segments of a plain dotted name (`java.util.UUID`); empty otherwise.
    fn dotted_path(&self, node: Node<'a>) -> Vec<String> {
        let mut segs: Vec<&str> = Vec::new();
        let mut cur = node;
        loop {
            match self.k(cur) {
                K::Ident => {
                    segs.push(self.t(cur));
                    break;
                }
                K::FieldAccess => match (cur.field(F::Field), cur.field(F::Object)) {
                    (Some(f), Some(o)) => {
                        segs.push(self.t(f));
                        cur = o;
                    }
                    _ => return Vec::new(),
                },
                _ => return Vec::new(),
            }
        }
        segs.iter().rev().map(|s| s.to_string()).collect()
    }

    /// Simple name of a type node and the span of that name.
    fn simple_type(&mut self, node: Node<'a>) -> (&'a str, Span) {
        let mut cur = node;
        loop {
            let next = match cur.kind() {
                "type_identifier" | "identifier" => return (self.t(cur), span(cur)),
                "generic_type" => self.find_child(cur, None),
                "scoped_type_identifier" | "annotated_type" => self.last_child(cur),
                "array_type" => cur.field(F::Element),
                _ => None,
            };
            match next {
                Some(n) => cur = n,
                None => return (simple_name_of_text(self.t(cur)), span(cur)),
            }
        }
    }

    fn mark_loop(&mut self, id: ScopeId, exit: bool) {
        // Leaving the loop from a `catch` inside it ends the loop after a failure, not on
        // success: `catch (InterruptedException e) { break; }` of a polling loop.
        if exit
            && self
                .loop_catch
                .iter()
                .rev()
                .find(|(l, _)| *l == id)
                .is_some_and(|(_, d)| self.catch_depth > *d)
        {
            return;
        }
        if let Some(scope) = self.m.scopes.get_mut(id)
            && let ScopeKind::Loop(info) = &mut scope.kind
        {
            if exit {
                info.has_exit = true;
            } else {
                info.handles_error = true;
            }
        }
    }

    fn mark_all_loops(&mut self, exit: bool) {
        for i in 0..self.brk.len() {
            if let Brk::Loop(id) = self.brk[i] {
                self.mark_loop(id, exit);
            }
        }
    }

    // ----- values --------------------------------------------------------------------------

    /// Records the value of expression `node` (visiting it).
    fn value(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> (ValueId, Ret) {
        let start = self.buf.len();
        self.collecting += 1;
        let ret = self.visit(node, cx, depth);
        self.collecting -= 1;
        (self.finish_value(node, start), ret)
    }

    #[inline(never)]
    fn finish_value(&mut self, node: Node<'a>, start: usize) -> ValueId {
        let atoms = self
            .buf
            .get(start..)
            .map(<[Atom]>::to_vec)
            .unwrap_or_default();
        if self.collecting == 0 {
            self.buf.truncate(start);
        }
        let literal = match self.k(node) {
            K::Str => Some(unquote(self.t(node)).to_string()),
            _ => None,
        };
        let ident = self.ident_of(node).map(str::to_string);
        self.m.add_value(Value {
            atoms,
            span: span(node),
            literal,
            ident,
        })
    }

    // ----- the walk ------------------------------------------------------------------------
    //
    // Every function on the recursive path keeps its frame small (debug builds give every
    // local its own stack slot): heavy, non-recursive work lives in separate functions, and
    // `visit` dispatches through one function pointer.

    fn visit(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        if depth > MAX_DEPTH {
            self.too_deep(node);
            return Ret::default();
        }
        if !node.is_named() || node.is_missing() {
            return Ret::default();
        }
        let handler: Handler<'a> = match self.k(node) {
            K::Skip | K::This => return Ret::default(),
            K::Ident => {
                self.push_name(node);
                return Ret::default();
            }
            K::Generic if matches!(node.kind(), "if_statement" | "ternary_expression") => {
                let (a, b) = (node.field(F::Consequence), node.field(F::Alternative));
                if let (Some(a), Some(b)) = (a, b) {
                    self.m.branches.push((span(a), span(b)));
                }
                self.m
                    .conditional
                    .extend(a.iter().chain(b.iter()).map(|n| span(*n)));
                if let Some(c) = node.field(F::Condition) {
                    if let Some(a) = a {
                        self.m.guards.push((span(c), span(a), GuardKind::IfTrue));
                    }
                    if let Some(b) = b {
                        self.m.guards.push((span(c), span(b), GuardKind::IfFalse));
                    }
                }
                Self::children
            }
            K::Generic | K::Throw => Self::children,
            K::TypeDecl => Self::type_decl,
            K::EnumConstant => Self::enum_constant,
            K::Method => Self::method,
            K::FieldDecl => Self::field_decl,
            K::LocalDecl => Self::local_decl,
            K::Lambda => Self::lambda,
            K::Invoke => Self::invoke,
            K::New => Self::new_object,
            K::CtorCall => Self::ctor_call,
            K::MethodRef => Self::method_ref,
            K::FieldAccess => Self::field_access,
            K::Str => Self::string,
            K::Assign => Self::assign,
            K::Return => Self::return_stmt,
            K::Break => Self::break_stmt,
            K::For | K::EnhancedFor | K::While | K::Do => Self::loop_stmt,
            K::Labeled => Self::labeled,
            K::Switch => Self::switch,
            K::Catch => Self::catch_clause,
            K::Resource => Self::resource,
            K::InstanceOf => Self::instance_of,
            K::TypePattern | K::RecordComponent => Self::pattern_binding,
            K::RecordPattern => Self::record_pattern,
            K::Annotation => Self::annotation_node,
            K::Paren => Self::paren,
            K::Cast => Self::cast,
        };
        handler(self, node, cx, depth)
    }

    /// Visits every named child (comments skipped, ERROR nodes included).
    fn children(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        if node.child_count() == 0 {
            return Ret::default();
        }
        let mut c = self.cursor(node);
        if c.goto_first_child() {
            loop {
                let ch = c.node();
                if ch.is_named() && (!ch.is_extra() || ch.is_error()) {
                    self.visit(ch, cx, depth + 1);
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        self.cursors.push(c);
        Ret::default()
    }

    /// Visits a body that starts a new function-like region: no atoms flow out of it and
    /// `break`/`return` inside do not leave the enclosing loops.
    fn enter_body(&mut self, body: Node<'a>, cx: Ctx, depth: u32) {
        let collecting = std::mem::replace(&mut self.collecting, 0);
        let brk = std::mem::take(&mut self.brk);
        self.visit(body, cx, depth + 1);
        self.brk = brk;
        self.collecting = collecting;
    }

    fn paren(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        match self.find_child(node, None) {
            Some(inner) => self.visit(inner, cx, depth + 1),
            None => Ret::default(),
        }
    }

    fn cast(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        match node.field(F::Value) {
            Some(inner) => Ret {
                call: None,
                scope: self.visit(inner, cx, depth + 1).scope,
            },
            None => Ret::default(),
        }
    }

    fn switch(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        if let Some(body) = node.field(F::Body) {
            self.m.conditional.push(span(body));
        }
        self.brk.push(Brk::Switch);
        self.children(node, cx, depth);
        self.brk.pop();
        Ret::default()
    }

    // ----- declarations --------------------------------------------------------------------

    /// Parses one annotation, records it in `model.annotations` and returns it.
    fn annotation(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Annotation {
        let name = node
            .field(F::Name)
            .map(|n| simple_name_of_text(self.t(n)).to_string())
            .unwrap_or_default();
        let mut args = Vec::new();
        if let Some(list) = node.field(F::Arguments) {
            self.each_named(list, |s, ch| {
                let v = if ch.kind() == "element_value_pair" {
                    ch.field(F::Value)
                } else {
                    Some(ch)
                };
                if let Some(v) = v {
                    let text = s.t(v);
                    args.push(if s.k(v) == K::Str {
                        unquote(text).to_string()
                    } else {
                        collapse(text)
                    });
                }
            });
            // String literals inside annotations are string facts too.
            self.visit(list, cx, depth + 1);
        }
        let annotation = Annotation {
            name,
            args,
            span: span(node),
            target: annotated_target(node),
        };
        self.m.annotations.push(annotation.clone());
        annotation
    }

    fn annotation_node(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        self.annotation(node, cx, depth);
        Ret::default()
    }

    /// The annotations of a declaration's `modifiers` child.
    fn modifier_annotations(&mut self, decl: Node<'a>, cx: Ctx, depth: u32) -> Vec<Annotation> {
        let mut out = Vec::new();
        if let Some(mods) = self.find_child(decl, Some("modifiers")) {
            self.each_named(mods, |s, ch| {
                if s.k(ch) == K::Annotation {
                    out.push(s.annotation(ch, cx, depth + 2));
                }
            });
        }
        out
    }

    fn type_decl(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        let (id, body) = self.type_scope(node, cx, depth);
        if let Some(body) = body {
            self.enter_body(
                body,
                Ctx {
                    scope: id,
                    func: id,
                },
                depth,
            );
        }
        Ret::default()
    }

    #[inline(never)]
    fn type_scope(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> (ScopeId, Option<Node<'a>>) {
        let name = node
            .field(F::Name)
            .map(|n| self.t(n).to_string())
            .unwrap_or_default();
        let annotations = self.modifier_annotations(node, cx, depth);
        let mut supertypes = Vec::new();
        let mut body = None;
        let mut record_params = None;
        self.each_named(node, |s, ch| match ch.kind() {
            "superclass" | "super_interfaces" | "extends_interfaces" => {
                s.each_named(ch, |s, ty| {
                    if ty.kind() == "type_list" {
                        s.each_named(ty, |s, ty| {
                            supertypes.push(s.simple_type(ty).0.to_string());
                        });
                    } else {
                        supertypes.push(s.simple_type(ty).0.to_string());
                    }
                });
            }
            "class_body" | "interface_body" | "enum_body" | "annotation_type_body" => {
                body = Some(ch)
            }
            "formal_parameters" => record_params = Some(ch),
            _ => {}
        });
        supertypes.retain(|s| !s.is_empty());
        let id = self.m.add_scope(
            ScopeKind::Type(TypeInfo {
                name,
                supertypes,
                annotations,
                companion: false,
            }),
            cx.scope,
            span(node),
        );
        if let Some(list) = record_params {
            // Record components are fields.
            let params = self.params(list, cx, depth);
            let type_name = match &self.m.scopes[id].kind {
                ScopeKind::Type(t) => t.name.clone(),
                _ => String::new(),
            };
            if !type_name.is_empty() {
                let names = params.iter().map(|(p, _)| p.name.clone()).collect();
                self.m.components.push((type_name, names, id));
            }
            for (param, name_span) in params {
                self.m.bindings.push(Binding {
                    name: param.name,
                    kind: BindingKind::Field,
                    value: None,
                    scope: id,
                    name_span,
                    span: param.span,
                });
            }
        }
        (id, body)
    }

    fn enum_constant(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        self.enum_constant_binding(node, cx, depth);
        if let Some(args) = node.field(F::Arguments) {
            self.children(args, cx, depth + 1);
        }
        if let Some(body) = node.field(F::Body) {
            let id = self.enum_constant_scope(node, cx);
            self.enter_body(
                body,
                Ctx {
                    scope: id,
                    func: id,
                },
                depth,
            );
        }
        Ret::default()
    }

    #[inline(never)]
    fn enum_constant_binding(&mut self, node: Node<'a>, cx: Ctx, depth: u32) {
        self.modifier_annotations(node, cx, depth);
        if let Some(name) = node.field(F::Name) {
            self.m.bindings.push(Binding {
                name: self.t(name).to_string(),
                kind: BindingKind::Field,
                value: None,
                scope: cx.scope,
                name_span: span(name),
                span: span(node),
            });
        }
    }

    /// An enum constant with a body is an anonymous subclass of the enum.
    #[inline(never)]
    fn enum_constant_scope(&mut self, node: Node<'a>, cx: Ctx) -> ScopeId {
        let supertypes = match self.m.type_info(cx.scope) {
            Some(t) if !t.name.is_empty() => vec![t.name.clone()],
            _ => Vec::new(),
        };
        self.m.add_scope(
            ScopeKind::Object(TypeInfo {
                name: String::new(),
                supertypes,
                annotations: Vec::new(),
                companion: false,
            }),
            cx.scope,
            span(node),
        )
    }

    /// Parameters of a `formal_parameters` list, with the span of each name.
    fn params(&mut self, list: Node<'a>, cx: Ctx, depth: u32) -> Vec<(Param, Span)> {
        let mut out = Vec::new();
        self.each_named(list, |s, p| {
            let (ty, name) = match p.kind() {
                "formal_parameter" => (
                    p.field(F::Type).map(|t| s.t(t).to_string()),
                    p.field(F::Name),
                ),
                "spread_parameter" => {
                    let mut ty = None;
                    let mut name = None;
                    s.each_named(p, |s, ch| match ch.kind() {
                        "modifiers" => {}
                        "variable_declarator" => name = ch.field(F::Name),
                        _ if ty.is_none() => ty = Some(format!("{}...", s.t(ch))),
                        _ => {}
                    });
                    (ty, name)
                }
                _ => return,
            };
            let Some(name) = name else { return };
            let annotations = s.modifier_annotations(p, cx, depth + 1);
            out.push((
                Param {
                    name: s.t(name).to_string(),
                    ty: ty.unwrap_or_default(),
                    annotations,
                    span: span(p),
                },
                span(name),
            ));
        });
        out
    }

    fn push_params(&mut self, params: Vec<(Param, Span)>, scope: ScopeId) {
        for (param, name_span) in params {
            self.m.bindings.push(Binding {
                name: param.name,
                kind: BindingKind::Param,
                value: None,
                scope,
                name_span,
                span: param.span,
            });
        }
    }

    fn method(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        let id = self.function_scope(node, cx, depth);
        if let Some(body) = node.field(F::Body) {
            self.enter_body(
                body,
                Ctx {
                    scope: id,
                    func: id,
                },
                depth,
            );
        }
        Ret::default()
    }

    #[inline(never)]
    fn function_scope(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> ScopeId {
        let annotations = self.modifier_annotations(node, cx, depth);
        let name = node.field(F::Name);
        let params = match node.field(F::Parameters) {
            Some(list) => self.params(list, cx, depth),
            None => Vec::new(),
        };
        let info = FunctionInfo {
            name: name.map(|n| self.t(n).to_string()).unwrap_or_default(),
            params: params.iter().map(|(p, _)| p.clone()).collect(),
            annotations,
            return_type: node
                .field(F::Type)
                .map(|t| collapse(self.t(t)))
                .unwrap_or_default(),
            name_span: name.map(span).unwrap_or_else(|| span(node)),
            expression_body: false,
            extends: String::new(),
        };
        let id = self
            .m
            .add_scope(ScopeKind::Function(info), cx.scope, span(node));
        self.push_params(params, id);
        id
    }

    fn field_decl(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        self.var_decl(node, cx, depth, BindingKind::Field)
    }

    fn local_decl(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        self.var_decl(node, cx, depth, BindingKind::Local)
    }

    fn var_decl(&mut self, node: Node<'a>, cx: Ctx, depth: u32, kind: BindingKind) -> Ret {
        self.modifier_annotations(node, cx, depth);
        let mut c = self.cursor(node);
        if c.goto_first_child() {
            loop {
                let d = c.node();
                if d.kind() == "variable_declarator" {
                    self.declarator(d, node, cx, depth + 1, kind);
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        self.cursors.push(c);
        Ret::default()
    }

    fn declarator(&mut self, d: Node<'a>, decl: Node<'a>, cx: Ctx, depth: u32, kind: BindingKind) {
        let Some(name) = d.field(F::Name) else {
            return;
        };
        let value = d.field(F::Value).map(|v| self.value(v, cx, depth + 1).0);
        self.push_binding(name, kind, value, span(decl), cx.scope);
    }

    #[inline(never)]
    fn push_binding(
        &mut self,
        name: Node<'a>,
        kind: BindingKind,
        value: Option<ValueId>,
        decl: Span,
        scope: ScopeId,
    ) {
        self.m.bindings.push(Binding {
            name: self.t(name).to_string(),
            kind,
            value,
            scope,
            name_span: span(name),
            span: decl,
        });
    }

    fn lambda(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        let id = self.lambda_scope(node, cx, depth);
        if let Some(body) = node.field(F::Body) {
            let inner = Ctx {
                scope: id,
                func: id,
            };
            if body.kind() == "block" {
                self.enter_body(body, inner, depth);
            } else {
                self.lambda_expression_body(body, inner, depth);
            }
        }
        Ret {
            call: None,
            scope: Some(id),
        }
    }

    /// A lambda's expression body is the lambda's [`Return`].
    fn lambda_expression_body(&mut self, body: Node<'a>, inner: Ctx, depth: u32) {
        let collecting = std::mem::replace(&mut self.collecting, 0);
        let brk = std::mem::take(&mut self.brk);
        let (value, _) = self.value(body, inner, depth + 1);
        self.m.returns.push(Return {
            value,
            scope: inner.scope,
            span: span(body),
        });
        self.brk = brk;
        self.collecting = collecting;
    }

    #[inline(never)]
    fn lambda_scope(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> ScopeId {
        let owner = match self.pending_owner {
            Some((call, index, id)) if id == node.id() => Some((call, index)),
            _ => None,
        };
        let simple = |s: &Self, p: Node<'a>| {
            (
                Param {
                    name: s.t(p).to_string(),
                    ty: String::new(),
                    annotations: Vec::new(),
                    span: span(p),
                },
                span(p),
            )
        };
        let params: Vec<(Param, Span)> = match node.field(F::Parameters) {
            Some(p) if p.kind() == "identifier" => vec![simple(self, p)],
            Some(p) if p.kind() == "formal_parameters" => self.params(p, cx, depth),
            Some(p) => {
                let mut out = Vec::new();
                self.each_named(p, |s, ch| {
                    if ch.kind() == "identifier" {
                        out.push(simple(s, ch));
                    }
                });
                out
            }
            None => Vec::new(),
        };
        let info = LambdaInfo {
            owner_call: owner.map(|o| o.0),
            arg_index: owner.map_or(0, |o| o.1),
            params: params.iter().map(|(p, _)| p.clone()).collect(),
            is_move: false,
        };
        let id = self
            .m
            .add_scope(ScopeKind::Lambda(info), cx.scope, span(node));
        self.push_params(params, id);
        id
    }

    // ----- calls ---------------------------------------------------------------------------

    fn new_call(&mut self, node: Node<'a>, cx: Ctx) -> CallId {
        let id = self.m.calls.len();
        self.m.calls.push(Call {
            span: span(node),
            name_span: span(node),
            scope: cx.scope,
            ..Call::default()
        });
        self.push_atom(Atom::Call(id));
        id
    }

    /// Visits the receiver (its atoms and calls come first), then records the call.
    fn call_head(
        &mut self,
        node: Node<'a>,
        object: Option<Node<'a>>,
        cx: Ctx,
        depth: u32,
    ) -> CallId {
        let receiver_call = object.and_then(|o| self.visit(o, cx, depth + 1).call);
        let id = self.new_call(node, cx);
        if let Some(object) = object {
            self.receiver_text(id, object);
            self.m.calls[id].receiver_call = receiver_call;
        }
        id
    }

    #[inline(never)]
    fn receiver_text(&mut self, id: CallId, object: Node<'a>) {
        // Long chains: only the tail matters, and copying the whole prefix for every call
        // of a chain would be quadratic.
        let text = collapse(receiver_tail(self.t(object)));
        let path = self.dotted_path(object);
        let call = &mut self.m.calls[id];
        call.receiver = Some(text);
        call.path = path;
    }

    #[inline(never)]
    fn set_callee(&mut self, id: CallId, name: Node<'a>) {
        let callee = self.t(name).to_string();
        let call = &mut self.m.calls[id];
        call.callee = callee;
        call.name_span = span(name);
    }

    fn args(&mut self, list: Node<'a>, call: CallId, cx: Ctx, depth: u32) {
        let mut c = self.cursor(list);
        if c.goto_first_child() {
            loop {
                let ch = c.node();
                if ch.is_error() {
                    self.visit(ch, cx, depth + 1);
                } else if ch.is_named() && !ch.is_extra() {
                    self.arg(ch, call, cx, depth + 1);
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        self.cursors.push(c);
    }

    fn arg(&mut self, arg: Node<'a>, call: CallId, cx: Ctx, depth: u32) {
        let stripped = self.strip(arg);
        let kind = self.k(stripped);
        if kind == K::Lambda {
            let index = self.m.calls[call].args.len();
            self.pending_owner = Some((call, index, stripped.id()));
        }
        let (value, ret) = self.value(arg, cx, depth);
        self.push_arg(arg, stripped, kind, call, value, ret);
    }

    #[inline(never)]
    fn push_arg(
        &mut self,
        arg: Node<'a>,
        stripped: Node<'a>,
        kind: K,
        call: CallId,
        value: ValueId,
        ret: Ret,
    ) {
        let lambda = match kind {
            K::Lambda | K::New => ret.scope,
            _ => None,
        };
        let mut type_hint = None;
        let mut fn_ref = None;
        match kind {
            K::New => {
                type_hint = stripped
                    .field(F::Type)
                    .map(|t| self.simple_type(t).0.to_string());
            }
            K::MethodRef => {
                let (qualifier, name) = self.method_ref_parts(stripped);
                if name == "new" {
                    type_hint = qualifier.map(|q| self.simple_type(q).0.to_string());
                }
                fn_ref = Some(name.to_string());
            }
            _ => {}
        }
        self.m.calls[call].args.push(Arg {
            name: None,
            value,
            lambda,
            type_hint,
            fn_ref,
            span: span(arg),
        });
    }

    fn invoke(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        let id = self.call_head(node, node.field(F::Object), cx, depth);
        if let Some(name) = node.field(F::Name) {
            self.set_callee(id, name);
        }
        if let Some(list) = node.field(F::Arguments) {
            self.args(list, id, cx, depth);
        }
        Ret {
            call: Some(id),
            scope: None,
        }
    }

    fn new_object(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        let (object, body) = self.new_object_parts(node);
        let id = self.call_head(node, object, cx, depth);
        self.set_new_callee(id, node);
        if let Some(list) = node.field(F::Arguments) {
            self.args(list, id, cx, depth);
        }
        let mut scope = None;
        if let Some(body) = body {
            let obj = self.object_scope(id, node, cx);
            self.enter_body(
                body,
                Ctx {
                    scope: obj,
                    func: obj,
                },
                depth,
            );
            scope = Some(obj);
        }
        Ret {
            call: Some(id),
            scope,
        }
    }

    /// The `outer` of `outer.new T()` and the body of an anonymous class.
    #[inline(never)]
    fn new_object_parts(&mut self, node: Node<'a>) -> (Option<Node<'a>>, Option<Node<'a>>) {
        let mut object = None;
        let mut body = None;
        let mut before_new = true;
        let mut c = self.cursor(node);
        if c.goto_first_child() {
            loop {
                let ch = c.node();
                if !ch.is_named() {
                    if ch.kind() == "new" {
                        before_new = false;
                    }
                } else if ch.is_extra() {
                } else if before_new {
                    object = Some(ch);
                } else if ch.kind() == "class_body" {
                    body = Some(ch);
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        self.cursors.push(c);
        (object, body)
    }

    /// `new T(..)`: callee `T` (simple name), `is_new`.
    #[inline(never)]
    fn set_new_callee(&mut self, id: CallId, node: Node<'a>) {
        self.m.calls[id].is_new = true;
        if let Some(ty) = node.field(F::Type) {
            let (name, name_span) = self.simple_type(ty);
            // `new Outer.Inner(..)`: the qualifier is the call's path, as for a static
            // call on a type (`CreatePaymentRequest` of `new CreatePaymentRequest
            // .Builder(sourceId, key)`), unless an `outer.new` gave a receiver.
            let ty_text = self.t(ty);
            let qualifier: Vec<String> = ty_text
                .split('<')
                .next()
                .unwrap_or("")
                .rsplit_once('.')
                .map(|(q, _)| {
                    q.split('.')
                        .map(|seg| seg.trim().to_string())
                        .filter(|seg| !seg.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            let call = &mut self.m.calls[id];
            call.callee = name.to_string();
            call.name_span = name_span;
            if call.receiver.is_none()
                && call.path.is_empty()
                && qualifier.iter().all(|seg| {
                    seg.chars()
                        .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
                })
            {
                call.path = qualifier;
            }
        }
    }

    #[inline(never)]
    fn object_scope(&mut self, id: CallId, node: Node<'a>, cx: Ctx) -> ScopeId {
        let callee = &self.m.calls[id].callee;
        let supertypes = if callee.is_empty() {
            Vec::new()
        } else {
            vec![callee.clone()]
        };
        self.m.add_scope(
            ScopeKind::Object(TypeInfo {
                name: String::new(),
                supertypes,
                annotations: Vec::new(),
                companion: false,
            }),
            cx.scope,
            span(node),
        )
    }

    /// `this(..)` / `super(..)` / `outer.super(..)` in a constructor.
    fn ctor_call(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        let id = self.call_head(node, node.field(F::Object), cx, depth);
        if let Some(ctor) = node.field(F::Constructor) {
            self.set_callee(id, ctor);
        }
        if let Some(list) = node.field(F::Arguments) {
            // The statement's `;` is not part of the call.
            self.m.calls[id].span.end = list.end_byte();
            self.args(list, id, cx, depth);
        }
        Ret {
            call: Some(id),
            scope: None,
        }
    }

    /// The qualifier before `::` and the name after it (`new` for constructor references).
    fn method_ref_parts(&mut self, node: Node<'a>) -> (Option<Node<'a>>, &'a str) {
        let mut qualifier = None;
        let mut name = "";
        let mut after = false;
        let mut c = self.cursor(node);
        if c.goto_first_child() {
            loop {
                let ch = c.node();
                if !ch.is_extra() {
                    match ch.kind() {
                        "::" => after = true,
                        "identifier" | "new" if after => name = self.t(ch),
                        _ if !after && ch.is_named() && qualifier.is_none() => qualifier = Some(ch),
                        _ => {}
                    }
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        self.cursors.push(c);
        (qualifier, name)
    }

    fn method_ref(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        // The qualifier is evaluated where the reference is created (`client::post`).
        if let (Some(q), _) = self.method_ref_parts(node) {
            self.visit(q, cx, depth + 1);
        }
        Ret::default()
    }

    // ----- expressions ---------------------------------------------------------------------

    fn field_access(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        if let Some(object) = node.field(F::Object) {
            if self.k(object) == K::This {
                // `this.x` / `super.x` → `x`; `a.b.c` → `a` only.
                if let Some(field) = node.field(F::Field) {
                    self.push_name(field);
                }
            } else {
                if self.k(object) == K::Ident
                    && let Some(field) = node.field(F::Field)
                {
                    self.m
                        .field_reads
                        .push((object.start_byte(), self.t(field).to_string()));
                }
                self.visit(object, cx, depth + 1);
            }
        }
        Ret::default()
    }

    fn string(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        let raw = unquote(self.t(node));
        self.m.strings.push(StringLit {
            text: raw.to_string(),
            span: span(node),
            scope: cx.scope,
        });
        // String templates (`STR."a \{b}"`) evaluate their embedded expressions.
        if raw.contains("\\{") {
            self.each_named(node, |s, ch| {
                if ch.kind() == "string_interpolation" {
                    s.children(ch, cx, depth + 1);
                }
            });
        }
        Ret::default()
    }

    fn assign(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        let mut name = None;
        if let Some(left) = node.field(F::Left) {
            let (n, walk) = self.assigned_place(left);
            name = n;
            if let Some(walk) = walk {
                self.visit(walk, cx, depth + 2);
            }
        }
        if let Some(right) = node.field(F::Right) {
            let (value, _) = self.value(right, cx, depth + 1);
            if let Some(name) = name {
                self.m.assigns.push(Assign {
                    name: name.to_string(),
                    value,
                    scope: cx.scope,
                    span: span(node),
                });
            }
        }
        Ret::default()
    }

    /// The assigned name (last segment) and the part of the place that is evaluated.
    #[inline(never)]
    fn assigned_place(&self, left: Node<'a>) -> (Option<&'a str>, Option<Node<'a>>) {
        match self.k(left) {
            K::Ident => (Some(self.t(left)), None),
            K::FieldAccess => {
                let name = left.field(F::Field).map(|f| self.t(f));
                let object = left.field(F::Object).filter(|o| self.k(*o) != K::This);
                (name, object)
            }
            _ if left.kind() == "array_access" => (
                left.field(F::Array).and_then(|a| self.ident_of(a)),
                Some(left),
            ),
            _ => (None, Some(left)),
        }
    }

    // ----- statements ----------------------------------------------------------------------

    fn return_stmt(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        self.mark_all_loops(true);
        if let Some(expr) = self.find_child(node, None) {
            let (value, _) = self.value(expr, cx, depth + 1);
            self.m.returns.push(Return {
                value,
                scope: cx.func,
                span: span(node),
            });
        }
        Ret::default()
    }

    fn break_stmt(&mut self, node: Node<'a>, _: Ctx, _: u32) -> Ret {
        let label = self.find_child(node, Some("identifier")).map(|l| self.t(l));
        for i in (0..self.brk.len()).rev() {
            match (self.brk[i], label) {
                (Brk::Loop(id), None) => {
                    self.mark_loop(id, true);
                    break;
                }
                (Brk::Switch, None) => break,
                (Brk::Loop(id), Some(_)) => self.mark_loop(id, true),
                (Brk::Label(l), Some(target)) if l == target => break,
                _ => {}
            }
        }
        Ret::default()
    }

    fn labeled(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        let label = self.find_child(node, Some("identifier"));
        self.brk
            .push(Brk::Label(label.map(|l| self.t(l)).unwrap_or("")));
        let mut c = self.cursor(node);
        if c.goto_first_child() {
            loop {
                let ch = c.node();
                if ch.is_named() && Some(ch) != label {
                    self.visit(ch, cx, depth + 1);
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        self.cursors.push(c);
        self.brk.pop();
        Ret::default()
    }

    #[inline(never)]
    fn loop_header(&mut self, node: Node<'a>) -> String {
        if let Some(cond) = node.field(F::Condition)
            && matches!(node.kind(), "while_statement" | "do_statement")
        {
            let text = self.t(cond).trim();
            let text = text.strip_prefix('(').unwrap_or(text);
            let text = text.strip_suffix(')').unwrap_or(text);
            return collapse(text);
        }
        let body_start = node
            .field(F::Body)
            .map_or(node.end_byte(), |b| b.start_byte());
        let mut open = None;
        let mut close = None;
        let mut c = self.cursor(node);
        if c.goto_first_child() {
            loop {
                let ch = c.node();
                if ch.start_byte() >= body_start {
                    break;
                }
                match ch.kind() {
                    "(" if open.is_none() && !ch.is_named() => open = Some(ch.end_byte()),
                    ")" if !ch.is_named() => close = Some(ch.start_byte()),
                    _ => {}
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        self.cursors.push(c);
        match (open, close) {
            (Some(a), Some(b)) if a <= b => collapse(self.text.get(a..b).unwrap_or("")),
            _ => String::new(),
        }
    }

    /// Creates the loop scope (and the enhanced-for variable); returns the scope and the node
    /// of that variable's name.
    #[inline(never)]
    fn loop_scope(&mut self, node: Node<'a>, cx: Ctx) -> (ScopeId, Option<Node<'a>>) {
        let keyword = match node.kind() {
            "while_statement" => "while",
            "do_statement" => "do",
            _ => "for",
        };
        let header = self.loop_header(node);
        let id = self.m.add_scope(
            ScopeKind::Loop(LoopInfo {
                keyword: keyword.to_string(),
                header,
                ..LoopInfo::default()
            }),
            cx.scope,
            span(node),
        );
        let mut var = None;
        if node.kind() == "enhanced_for_statement"
            && let Some(name) = node.field(F::Name)
        {
            let start = node
                .field(F::Type)
                .map_or(name.start_byte(), |t| t.start_byte());
            self.push_binding(
                name,
                BindingKind::Param,
                None,
                Span::new(start, name.end_byte()),
                id,
            );
            var = Some(name);
        }
        (id, var)
    }

    fn loop_stmt(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        let (id, var) = self.loop_scope(node, cx);
        let inner = Ctx {
            scope: id,
            func: cx.func,
        };
        self.brk.push(Brk::Loop(id));
        self.loop_catch.push((id, self.catch_depth));
        let mut c = self.cursor(node);
        if c.goto_first_child() {
            loop {
                let ch = c.node();
                // The enhanced-for variable is a binding, not a use.
                if ch.is_named() && (!ch.is_extra() || ch.is_error()) && Some(ch) != var {
                    self.visit(ch, inner, depth + 1);
                }
                if !c.goto_next_sibling() {
                    break;
                }
            }
        }
        self.cursors.push(c);
        self.brk.pop();
        self.loop_catch.pop();
        Ret::default()
    }

    fn catch_clause(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        if let Some(body) = self.catch_facts(node, cx, depth) {
            self.catch_depth += 1;
            self.visit(body, cx, depth + 1);
            self.catch_depth -= 1;
        }
        Ret::default()
    }

    /// Binds the catch parameter and marks the enclosing loops as handling errors unless the
    /// catch block ends by leaving; returns the block.
    #[inline(never)]
    fn catch_facts(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Option<Node<'a>> {
        if let Some(param) = self.find_child(node, Some("catch_formal_parameter")) {
            self.modifier_annotations(param, cx, depth + 1);
            if let Some(name) = param.field(F::Name) {
                self.push_binding(name, BindingKind::Param, None, span(param), cx.scope);
            }
        }
        self.record_handled_try(node);
        self.m.catches.push(span(node));
        let body = node.field(F::Body)?;
        let leaves = self
            .last_child(body)
            .is_some_and(|last| matches!(self.k(last), K::Throw | K::Return | K::Break));
        if !leaves {
            self.mark_all_loops(false);
        }
        Some(body)
    }

    /// At the first `catch` of a `try`: records the `try` block in [`FileModel::handled`]
    /// when no `catch` of it throws (a rethrow, or a throw of a wrapping exception).
    fn record_handled_try(&mut self, catch: Node<'a>) {
        let Some(tr) = catch.parent() else { return };
        if !matches!(tr.kind(), "try_statement" | "try_with_resources_statement") {
            return;
        }
        let mut c = tr.walk();
        let catches: Vec<Node> = tr
            .children(&mut c)
            .filter(|k| k.kind() == "catch_clause")
            .collect();
        if catches.first() != Some(&catch) {
            return;
        }
        let throws = catches.iter().any(|k| {
            super::ts_any_below(*k, super::HANDLED_SCAN_BUDGET, |n| {
                n.kind() == "throw_statement"
            })
            .unwrap_or(true)
        });
        if throws {
            return;
        }
        if let Some(body) = tr.field(F::Body) {
            self.m.handled.push(span(body));
            let all = catches.iter().any(|k| {
                let end = k.field(F::Body).map_or(k.end_byte(), |b| b.start_byte());
                self.text
                    .get(k.start_byte()..end)
                    .is_some_and(super::catches_everything)
            });
            if all {
                self.m.catch_all.push(span(body));
            }
        }
    }

    fn resource(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        let Some(name) = node.field(F::Name) else {
            return self.children(node, cx, depth);
        };
        self.modifier_annotations(node, cx, depth);
        let value = node.field(F::Value).map(|v| self.value(v, cx, depth + 1).0);
        self.push_binding(name, BindingKind::Local, value, span(node), cx.scope);
        Ret::default()
    }

    fn instance_of(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        if let Some(left) = node.field(F::Left) {
            self.visit(left, cx, depth + 1);
        }
        if let Some(name) = node.field(F::Name) {
            self.push_binding(name, BindingKind::Param, None, span(node), cx.scope);
        }
        if let Some(pattern) = node.field(F::Pattern) {
            self.visit(pattern, cx, depth + 1);
        }
        Ret::default()
    }

    /// `Foo f` in a switch pattern, or a record-pattern component.
    fn pattern_binding(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        self.each_named(node, |s, ch| match s.k(ch) {
            K::Ident => s.push_binding(ch, BindingKind::Param, None, span(node), cx.scope),
            K::RecordPattern => {
                s.visit(ch, cx, depth + 1);
            }
            _ => {}
        });
        Ret::default()
    }

    /// `Point(int x, var y)`: the type name is not a use; the components bind.
    fn record_pattern(&mut self, node: Node<'a>, cx: Ctx, depth: u32) -> Ret {
        if let Some(body) = self.find_child(node, Some("record_pattern_body")) {
            self.children(body, cx, depth + 1);
        }
        Ret::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_the_frontend_reads_is_in_the_grammar() {
        let ids = field_ids();
        for (name, id) in FIELD_NAMES.iter().zip(ids) {
            assert_ne!(*id, 0, "no field `{name}` in tree-sitter-java");
        }
        // Each id reads the field by its name.
        let text = "class A { int f(int x) { return g(x); } }";
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_java::LANGUAGE.into())
            .unwrap();
        let tree = parser.parse(text, None).unwrap();
        let class = tree.root_node().named_child(0).unwrap();
        let by_name = class.child_by_field_name("name").unwrap();
        assert_eq!(class.field(F::Name), Some(by_name));
        assert_eq!(&text[by_name.byte_range()], "A");
        assert_eq!(class.field(F::Body), class.child_by_field_name("body"));
        assert_eq!(class.field(F::Condition), None);
    }

    fn slice(text: &str, s: Span) -> &str {
        &text[s.start..s.end]
    }

    fn call<'m>(m: &'m FileModel, callee: &str) -> (CallId, &'m Call) {
        m.calls
            .iter()
            .enumerate()
            .find(|(_, c)| c.callee == callee)
            .unwrap_or_else(|| panic!("no call {callee}"))
    }

    fn scopes_where(m: &FileModel, f: impl Fn(&ScopeKind) -> bool) -> Vec<ScopeId> {
        (0..m.scopes.len())
            .filter(|&i| f(&m.scopes[i].kind))
            .collect()
    }

    fn function(m: &FileModel, name: &str) -> ScopeId {
        scopes_where(m, |k| matches!(k, ScopeKind::Function(f) if f.name == name))[0]
    }

    fn loop_info(m: &FileModel, id: ScopeId) -> &LoopInfo {
        match &m.scopes[id].kind {
            ScopeKind::Loop(l) => l,
            other => panic!("not a loop: {other:?}"),
        }
    }

    /// Names and call callees of a value, in order.
    fn atoms(m: &FileModel, v: ValueId) -> Vec<String> {
        m.values[v]
            .atoms
            .iter()
            .map(|a| match a {
                Atom::Name { name, .. } => name.clone(),
                Atom::Call(c) => format!("{}()", m.calls[*c].callee),
                Atom::Source(s) => format!("source{s}"),
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
        assert!(m.scopes[0].parent.is_none());
        for (i, s) in m.scopes.iter().enumerate().skip(1) {
            assert!(s.parent.is_some_and(|p| p < i), "scope {i} parent");
        }
        let mut spans: Vec<Span> = m.scopes.iter().map(|s| s.span).collect();
        spans.extend(m.calls.iter().flat_map(|c| [c.span, c.name_span]));
        spans.extend(m.calls.iter().flat_map(|c| c.args.iter().map(|a| a.span)));
        spans.extend(m.values.iter().map(|v| v.span));
        spans.extend(m.bindings.iter().flat_map(|b| [b.span, b.name_span]));
        spans.extend(m.strings.iter().map(|s| s.span));
        spans.extend(m.errors.iter().map(|e| e.span));
        for s in spans {
            assert!(s.start <= s.end && s.end <= text.len(), "span {s:?}");
            assert!(
                text.get(s.start..s.end).is_some(),
                "span {s:?} not on a char boundary"
            );
        }
        for v in &m.values {
            for a in &v.atoms {
                if let Atom::Name { name, offset } = a {
                    assert_eq!(text.get(*offset..offset + name.len()), Some(name.as_str()));
                }
            }
        }
    }

    #[test]
    fn collapse_whitespace_and_comments() {
        assert_eq!(
            collapse("a  .\n b( \"x  y\" ) // c\n  .d"),
            "a.b( \"x  y\" ).d"
        );
        assert_eq!(collapse("x /* a.b */ . y"), "x.y");
        assert_eq!(collapse(" a\t b "), "a b");
        assert_eq!(
            collapse("f('\\'', \"\\\" //\") / 2"),
            "f('\\'', \"\\\" //\") / 2"
        );
        assert_eq!(collapse("s(\"é\\é\")\n.x"), "s(\"é\\é\").x");
        assert_eq!(collapse("plain.chain()"), "plain.chain()");
        assert_eq!(collapse("\"unterminated"), "\"unterminated");
    }

    #[test]
    fn anonymous_callback_is_object_scope_and_lambda_arg() {
        let text = r#"class C {
  void go() {
    client.newCall(req).enqueue(new Callback<Charge>() {
      @Override public void onFailure(Call call, IOException e) { retry(); }
      @Override public void onResponse(Call call, Response r) { }
    });
  }
}"#;
        let m = lower(text);
        check_invariants(text, &m);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let (new_id, new_call) = call(&m, "Callback");
        assert!(new_call.is_new);
        assert_eq!(slice(text, new_call.name_span), "Callback");
        assert!(slice(text, new_call.span).starts_with("new Callback<Charge>() {"));
        let objects = scopes_where(&m, |k| matches!(k, ScopeKind::Object(_)));
        assert_eq!(objects.len(), 1);
        let obj = objects[0];
        assert_eq!(m.type_info(obj).unwrap().supertypes, vec!["Callback"]);
        assert_eq!(m.scopes[obj].parent, Some(function(&m, "go")));
        for name in ["onFailure", "onResponse"] {
            let f = function(&m, name);
            assert_eq!(m.scopes[f].parent, Some(obj));
            assert_eq!(m.enclosing_type(f), Some(obj));
            assert_eq!(m.function_info(f).unwrap().annotations[0].name, "Override");
        }
        let (_, enqueue) = call(&m, "enqueue");
        assert_eq!(enqueue.receiver.as_deref(), Some("client.newCall(req)"));
        assert_eq!(enqueue.receiver_call, Some(call(&m, "newCall").0));
        assert_eq!(enqueue.args.len(), 1);
        assert_eq!(enqueue.args[0].lambda, Some(obj));
        assert_eq!(enqueue.args[0].type_hint.as_deref(), Some("Callback"));
        // The arg value holds the constructor call but nothing from the body.
        assert_eq!(
            m.values[enqueue.args[0].value].atoms,
            vec![Atom::Call(new_id)]
        );
        let (_, retry) = call(&m, "retry");
        assert_eq!(retry.scope, function(&m, "onFailure"));
    }

    #[test]
    fn type_supertypes_and_annotations() {
        let text = r#"@Component
@SchedulerLock(name = "sweep", lockAtMostFor = "PT5M")
public final class Sweeper extends java.util.TimerTask implements okhttp3.Interceptor, Job<String> {
  interface Api extends Base<T>, Other {}
  enum Mode implements HasName { A, B }
  record Key(@Header("K") String value) implements Comparable<Key> {}
}"#;
        let m = lower(text);
        check_invariants(text, &m);
        let types: Vec<&TypeInfo> = m
            .scopes
            .iter()
            .filter_map(|s| match &s.kind {
                ScopeKind::Type(t) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(types[0].name, "Sweeper");
        assert_eq!(types[0].supertypes, vec!["TimerTask", "Interceptor", "Job"]);
        assert_eq!(types[0].annotations[0].name, "Component");
        assert_eq!(types[0].annotations[1].name, "SchedulerLock");
        assert_eq!(types[0].annotations[1].args, vec!["sweep", "PT5M"]);
        assert_eq!(types[1].name, "Api");
        assert_eq!(types[1].supertypes, vec!["Base", "Other"]);
        assert_eq!(types[2].supertypes, vec!["HasName"]);
        assert_eq!(types[3].supertypes, vec!["Comparable"]);
        // Enum constants and record components are fields.
        assert_eq!(binding(&m, "A").kind, BindingKind::Field);
        assert_eq!(binding(&m, "value").kind, BindingKind::Field);
        let names: Vec<&str> = m.annotations.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, vec!["Component", "SchedulerLock", "Header"]);
        assert_eq!(slice(text, m.annotations[2].span), "@Header(\"K\")");
        let sweeper = m
            .scopes
            .iter()
            .position(|s| matches!(&s.kind, ScopeKind::Type(t) if t.name == "Sweeper"))
            .unwrap();
        assert_eq!(m.scopes[sweeper].span, Span::new(0, text.len()));
    }

    #[test]
    fn method_info_params_and_annotations() {
        let text = r#"class S {
  @Retryable
  @Scheduled(cron = "0 0 * * * *")
  public Mono<Charge> charge(@Header("Idempotency-Key") final String key, int... amounts) throws IOException {
    return null;
  }
  S(Client c) { super(c); }
}"#;
        let m = lower(text);
        check_invariants(text, &m);
        let f = function(&m, "charge");
        let info = m.function_info(f).unwrap();
        assert_eq!(slice(text, info.name_span), "charge");
        assert_eq!(info.return_type, "Mono<Charge>");
        let ann: Vec<(&str, Vec<String>)> = info
            .annotations
            .iter()
            .map(|a| (a.name.as_str(), a.args.clone()))
            .collect();
        assert_eq!(
            ann,
            vec![
                ("Retryable", vec![]),
                ("Scheduled", vec!["0 0 * * * *".to_string()])
            ]
        );
        assert_eq!(info.params.len(), 2);
        assert_eq!(info.params[0].name, "key");
        assert_eq!(info.params[0].ty, "String");
        assert_eq!(info.params[0].annotations[0].name, "Header");
        assert_eq!(info.params[0].annotations[0].args, vec!["Idempotency-Key"]);
        assert_eq!(info.params[1].name, "amounts");
        assert_eq!(info.params[1].ty, "int...");
        let key = binding(&m, "key");
        assert_eq!((key.kind, key.scope), (BindingKind::Param, f));
        assert_eq!(slice(text, key.name_span), "key");
        assert!(slice(text, m.scopes[f].span).starts_with("@Retryable"));
        assert!(slice(text, m.scopes[f].span).ends_with("return null;\n  }"));
        let ctor = function(&m, "S");
        assert_eq!(m.function_info(ctor).unwrap().return_type, "");
        let (_, sup) = call(&m, "super");
        assert_eq!(sup.scope, ctor);
        assert_eq!(m.annotations.len(), 3);
    }

    #[test]
    fn call_receiver_path_and_spans() {
        let text = r#"class A { void f() {
  String k = java.util.UUID.randomUUID().toString();
  Request r = chain.request()
      .newBuilder() // builder
      /* hdr */ .header(Headers.IDEMPOTENCY_KEY, k)
      .build();
  Retry.decorateSupplier(retry, supplier);
  run();
} }"#;
        let m = lower(text);
        check_invariants(text, &m);
        let (rid, random) = call(&m, "randomUUID");
        assert_eq!(random.receiver.as_deref(), Some("java.util.UUID"));
        assert_eq!(random.path, vec!["java", "util", "UUID"]);
        assert_eq!(slice(text, random.span), "java.util.UUID.randomUUID()");
        assert_eq!(slice(text, random.name_span), "randomUUID");
        let (_, to_string) = call(&m, "toString");
        assert_eq!(to_string.receiver_call, Some(rid));
        assert!(to_string.path.is_empty());
        let (_, header) = call(&m, "header");
        assert_eq!(
            header.receiver.as_deref(),
            Some("chain.request().newBuilder()")
        );
        assert_eq!(header.receiver_call, Some(call(&m, "newBuilder").0));
        assert_eq!(
            m.values[header.args[0].value].ident.as_deref(),
            Some("IDEMPOTENCY_KEY")
        );
        assert_eq!(m.values[header.args[1].value].ident.as_deref(), Some("k"));
        assert_eq!(slice(text, header.args[0].span), "Headers.IDEMPOTENCY_KEY");
        let (_, build) = call(&m, "build");
        assert_eq!(
            build.receiver.as_deref(),
            Some("chain.request().newBuilder().header(Headers.IDEMPOTENCY_KEY, k)")
        );
        let (_, decorate) = call(&m, "decorateSupplier");
        assert_eq!(decorate.path, vec!["Retry"]);
        let (_, run) = call(&m, "run");
        assert_eq!(run.receiver, None);
        assert!(run.path.is_empty());
        assert_eq!(run.scope, function(&m, "f"));
    }

    #[test]
    fn lambdas_owner_params_and_returns() {
        let text = r#"class A { void f(Client c) {
  c.executeWithRetry(3, () -> c.post(key()));
  retryTemplate.execute((RetryContext ctx) -> { return c.post("k"); });
  list.forEach(x -> log(x));
  Runnable r = () -> go();
  exec.submit((Runnable) () -> go());
} }"#;
        let m = lower(text);
        check_invariants(text, &m);
        let lambdas = scopes_where(&m, |k| matches!(k, ScopeKind::Lambda(_)));
        assert_eq!(lambdas.len(), 5);
        let info = |id: ScopeId| match &m.scopes[id].kind {
            ScopeKind::Lambda(l) => l.clone(),
            _ => unreachable!(),
        };
        let (with_retry_id, with_retry) = call(&m, "executeWithRetry");
        assert_eq!(info(lambdas[0]).owner_call, Some(with_retry_id));
        assert_eq!(info(lambdas[0]).arg_index, 1);
        assert_eq!(with_retry.args[1].lambda, Some(lambdas[0]));
        assert_eq!(
            slice(text, m.scopes[lambdas[0]].span),
            "() -> c.post(key())"
        );
        // Expression body → Return of the lambda.
        let ret = m.returns.iter().find(|r| r.scope == lambdas[0]).unwrap();
        assert_eq!(atoms(&m, ret.value), vec!["c", "post()", "key()"]);
        assert_eq!(slice(text, ret.span), "c.post(key())");
        // Typed parameter, block body.
        let l1 = info(lambdas[1]);
        assert_eq!(l1.params[0].name, "ctx");
        assert_eq!(l1.params[0].ty, "RetryContext");
        assert_eq!(binding(&m, "ctx").scope, lambdas[1]);
        let ret = m.returns.iter().find(|r| r.scope == lambdas[1]).unwrap();
        assert_eq!(slice(text, ret.span), "return c.post(\"k\");");
        assert_eq!(info(lambdas[2]).params[0].name, "x");
        assert_eq!(info(lambdas[3]).owner_call, None);
        // A cast lambda argument is still the argument's lambda.
        let (submit_id, submit) = call(&m, "submit");
        assert_eq!(info(lambdas[4]).owner_call, Some(submit_id));
        assert_eq!(submit.args[0].lambda, Some(lambdas[4]));
        // Calls inside a lambda belong to it.
        let posts: Vec<ScopeId> = m
            .calls
            .iter()
            .filter(|c| c.callee == "post")
            .map(|c| c.scope)
            .collect();
        assert_eq!(posts, vec![lambdas[0], lambdas[1]]);
    }

    #[test]
    fn method_references_are_fn_refs() {
        let text = r#"class A { void f() {
  scheduler.scheduleAtFixedRate(this::runBilling, 0, 30, TimeUnit.DAYS);
  exec.submit(Billing::run);
  supply(ArrayList::new);
} }"#;
        let m = lower(text);
        check_invariants(text, &m);
        let (_, sched) = call(&m, "scheduleAtFixedRate");
        assert_eq!(sched.args.len(), 4);
        assert_eq!(sched.args[0].fn_ref.as_deref(), Some("runBilling"));
        assert_eq!(sched.args[0].lambda, None);
        assert_eq!(m.values[sched.args[3].value].ident.as_deref(), Some("DAYS"));
        assert_eq!(atoms(&m, sched.args[3].value), vec!["TimeUnit"]);
        assert_eq!(call(&m, "submit").1.args[0].fn_ref.as_deref(), Some("run"));
        let supply = call(&m, "supply").1;
        assert_eq!(supply.args[0].fn_ref.as_deref(), Some("new"));
        assert_eq!(supply.args[0].type_hint.as_deref(), Some("ArrayList"));
    }

    #[test]
    fn value_atoms_through_concat_format_and_this() {
        let text = r#"class A { String k; void f(String id) {
  String a = "ch-" + id + "-" + UUID.randomUUID();
  String b = String.format("%s:%d", this.k, System.currentTimeMillis());
  String c = cond ? x.y.z : (w);
  String d = "Idempotency-Key";
  String e = """
      text block""";
  String g = STR."key-\{id}";
  Supplier<String> s = () -> fresh(id);
  String h = wrap(() -> fresh(id), new Object() { String v = make(); });
} }"#;
        let m = lower(text);
        check_invariants(text, &m);
        let v = |n: &str| binding(&m, n).value.unwrap();
        assert_eq!(atoms(&m, v("a")), vec!["id", "UUID", "randomUUID()"]);
        assert_eq!(
            atoms(&m, v("b")),
            vec!["String", "format()", "k", "System", "currentTimeMillis()"]
        );
        assert_eq!(atoms(&m, v("c")), vec!["cond", "x", "w"]);
        assert_eq!(m.values[v("d")].literal.as_deref(), Some("Idempotency-Key"));
        assert!(atoms(&m, v("d")).is_empty());
        assert_eq!(
            m.values[v("e")].literal.as_deref(),
            Some("\n      text block")
        );
        assert_eq!(atoms(&m, v("g")), vec!["STR", "id"]);
        // Lambda and anonymous-object bodies are not walked into.
        assert!(atoms(&m, v("s")).is_empty());
        assert_eq!(atoms(&m, v("h")), vec!["wrap()", "Object()"]);
        assert_eq!(
            slice(text, m.values[v("b")].span),
            "String.format(\"%s:%d\", this.k, System.currentTimeMillis())"
        );
        let k_atom = m.values[v("b")].atoms[2].clone();
        match k_atom {
            Atom::Name { name, offset } => assert_eq!(&text[offset..offset + name.len()], name),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bindings_of_all_kinds() {
        let text = r#"class A {
  private static final String HEADER = "Idempotency-Key", OTHER;
  void f(List<Item> items) {
    var key = newKey();
    for (final Item item : items) { }
    for (int i = 0, j = 1; i < 3; i++) { }
    try (Response resp = client.execute()) {
    } catch (IOException | TimeoutException e) { }
    if (o instanceof Charge ch) { }
  }
}"#;
        let m = lower(text);
        check_invariants(text, &m);
        let ty = scopes_where(&m, |k| matches!(k, ScopeKind::Type(_)))[0];
        let f = function(&m, "f");
        let header = binding(&m, "HEADER");
        assert_eq!((header.kind, header.scope), (BindingKind::Field, ty));
        assert_eq!(
            m.values[header.value.unwrap()].literal.as_deref(),
            Some("Idempotency-Key")
        );
        assert_eq!(slice(text, header.name_span), "HEADER");
        assert!(slice(text, header.span).starts_with("private static final"));
        assert_eq!(binding(&m, "OTHER").value, None);
        assert_eq!(binding(&m, "items").kind, BindingKind::Param);
        let key = binding(&m, "key");
        assert_eq!((key.kind, key.scope), (BindingKind::Local, f));
        assert_eq!(atoms(&m, key.value.unwrap()), vec!["newKey()"]);
        let loops = scopes_where(&m, |k| matches!(k, ScopeKind::Loop(_)));
        let item = binding(&m, "item");
        assert_eq!((item.kind, item.scope), (BindingKind::Param, loops[0]));
        assert_eq!(slice(text, item.span), "Item item");
        assert_eq!(loop_info(&m, loops[0]).header, "final Item item : items");
        assert_eq!(binding(&m, "i").scope, loops[1]);
        assert_eq!(binding(&m, "j").kind, BindingKind::Local);
        assert_eq!(
            loop_info(&m, loops[1]).header,
            "int i = 0, j = 1; i < 3; i++"
        );
        let resp = binding(&m, "resp");
        assert_eq!(resp.kind, BindingKind::Local);
        assert_eq!(atoms(&m, resp.value.unwrap()), vec!["client", "execute()"]);
        assert_eq!(binding(&m, "e").kind, BindingKind::Param);
        assert_eq!(binding(&m, "ch").kind, BindingKind::Param);
    }

    #[test]
    fn assignments() {
        let text = r#"class A { void f() {
  key = UUID.randomUUID();
  count += step;
  this.idempotencyKey = k;
  request.key = other;
  keys[i] = fresh();
} }"#;
        let m = lower(text);
        check_invariants(text, &m);
        let got: Vec<(&str, Vec<String>, &str)> = m
            .assigns
            .iter()
            .map(|a| (a.name.as_str(), atoms(&m, a.value), slice(text, a.span)))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "key",
                    vec!["UUID".to_string(), "randomUUID()".to_string()],
                    "key = UUID.randomUUID()"
                ),
                ("count", vec!["step".to_string()], "count += step"),
                (
                    "idempotencyKey",
                    vec!["k".to_string()],
                    "this.idempotencyKey = k"
                ),
                ("key", vec!["other".to_string()], "request.key = other"),
                ("keys", vec!["fresh()".to_string()], "keys[i] = fresh()"),
            ]
        );
        assert!(m.assigns.iter().all(|a| a.scope == function(&m, "f")));
    }

    #[test]
    fn returns_belong_to_function_or_lambda() {
        let text = r#"class A { String f() {
  while (true) { if (ok) { return "a" + b; } }
  run(() -> { return x; });
  return null;
} }"#;
        let m = lower(text);
        check_invariants(text, &m);
        let f = function(&m, "f");
        let lambda = scopes_where(&m, |k| matches!(k, ScopeKind::Lambda(_)))[0];
        let scopes: Vec<ScopeId> = m.returns.iter().map(|r| r.scope).collect();
        assert_eq!(scopes, vec![f, lambda, f]);
        assert_eq!(atoms(&m, m.returns[0].value), vec!["b"]);
        assert_eq!(slice(text, m.returns[0].span), "return \"a\" + b;");
    }

    #[test]
    fn loop_error_handling_and_exits() {
        let text = r#"class A { void f() {
  while (true) { try { send(); break; } catch (IOException e) { sleep(); } }
  for (int i = 0; i < 3; i++) { try { send(); } catch (IOException e) { throw e; } }
  do { try { send(); } catch (Exception e) { if (x) throw e; } } while (again);
  for (Item it : items) { switch (it.kind()) { case A: break; default: go(); } }
  outer: while (true) { for (;;) { break outer; } }
  while (x) { run(() -> { return; }); new Thread() { public void run() { return; } }; }
  while (y) { try { a(); } catch (E e) { continue; } finally { b(); } return; }
} }"#;
        let m = lower(text);
        check_invariants(text, &m);
        let loops: Vec<(String, String, bool, bool)> =
            scopes_where(&m, |k| matches!(k, ScopeKind::Loop(_)))
                .into_iter()
                .map(|id| {
                    let l = loop_info(&m, id);
                    (
                        l.keyword.clone(),
                        l.header.clone(),
                        l.handles_error,
                        l.has_exit,
                    )
                })
                .collect();
        let s = |a: &str, b: &str, c: bool, d: bool| (a.to_string(), b.to_string(), c, d);
        assert_eq!(
            loops,
            vec![
                s("while", "true", true, true),
                s("for", "int i = 0; i < 3; i++", false, false),
                s("do", "again", true, false),
                s("for", "Item it : items", false, false),
                s("while", "true", false, true),
                s("for", ";;", false, true),
                s("while", "x", false, false),
                s("while", "y", true, true),
            ]
        );
        let first = scopes_where(&m, |k| matches!(k, ScopeKind::Loop(_)))[0];
        assert_eq!(
            slice(text, m.scopes[first].span),
            "while (true) { try { send(); break; } catch (IOException e) { sleep(); } }"
        );
        assert_eq!(call(&m, "send").1.scope, first);
    }

    #[test]
    fn strings_are_recorded_unquoted() {
        let text = "class A {\n  @Header(value = \"X-Key\") String s = \"SELECT pg_try_advisory_lock(?)\";\n  String t = \"\"\"\n    multi \"q\"\n    \"\"\";\n  String u = \"a\\\"b\";\n}";
        let m = lower(text);
        check_invariants(text, &m);
        let texts: Vec<&str> = m.strings.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(
            texts,
            vec![
                "X-Key",
                "SELECT pg_try_advisory_lock(?)",
                "\n    multi \"q\"\n    ",
                "a\\\"b"
            ]
        );
        assert_eq!(m.annotations[0].args, vec!["X-Key"]);
        assert_eq!(
            slice(text, m.strings[1].span),
            "\"SELECT pg_try_advisory_lock(?)\""
        );
        assert!(m.strings.iter().all(|s| s.scope == 1));
    }

    #[test]
    fn parse_errors_are_reported_and_rest_is_lowered() {
        let text = "class A { void f() { int x = ; g(1 } void h() { k(); } }";
        let m = lower(text);
        check_invariants(text, &m);
        assert!(m.errors.iter().any(|e| e.message == "missing `)`"));
        assert_eq!(call(&m, "h").1.scope, function(&m, "f"));
        let text = "class A { void f() { int x = ; } void h() { k(); } }";
        let m = lower(text);
        check_invariants(text, &m);
        assert!(!m.errors.is_empty());
        assert!(
            m.errors
                .iter()
                .all(|e| e.message == "syntax error" || e.message.starts_with("missing `"))
        );
        assert_eq!(call(&m, "k").1.scope, function(&m, "h"));
        // A missing token.
        let m = lower("class A { void f() { int x = 1 } }");
        assert!(
            m.errors.iter().any(|e| e.message == "missing `;`"),
            "{:?}",
            m.errors
        );
        // At most 20.
        let junk = "class A { void f() { ".to_string() + &"int = ; ) ".repeat(200) + "} }";
        let m = lower(&junk);
        assert!(!m.errors.is_empty() && m.errors.len() <= crate::lang::MAX_ERRORS);
        // Clean file, no errors.
        assert!(lower("class A {}").errors.is_empty());
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let handle = std::thread::Builder::new()
            .stack_size(8 * 1024 * 1024)
            .spawn(|| {
                let n = 5000;
                let shapes = [
                    format!("class A {{ int x = {}1{}; }}", "(".repeat(n), ")".repeat(n)),
                    format!(
                        "class A {{ void f() {{ {}1{}; }} }}",
                        "g(".repeat(n),
                        ")".repeat(n)
                    ),
                    format!("class A {{ void f() {} {} }}", "{".repeat(n), "}".repeat(n)),
                    format!("class A {{ Object o = {}x{}; }}", "() -> ".repeat(n), ""),
                    format!("{}{}", "class A { ".repeat(n), "}".repeat(n)),
                    format!(
                        "class A {{ void f() {{ {}; }} }}",
                        "a.b()".to_string() + &".c()".repeat(n)
                    ),
                    format!("class A {{ String s = {}; }}", vec!["\"a\""; n].join(" + ")),
                    format!(
                        "class A {{ void f() {{ {} }} }}",
                        "while (x) ".repeat(n) + "go();"
                    ),
                ];
                for text in &shapes {
                    let m = lower(text);
                    check_invariants(text, &m);
                    let deep = m
                        .errors
                        .iter()
                        .filter(|e| e.message == DEPTH_MESSAGE)
                        .count();
                    assert_eq!(deep, 1, "{}", &text[..40]);
                }
                // Moderate nesting is analysed fully.
                let text = format!(
                    "class A {{ int x = {}1{}; }}",
                    "(".repeat(300),
                    ")".repeat(300)
                );
                assert!(lower(&text).errors.is_empty());
            })
            .unwrap();
        handle.join().unwrap();
    }

    #[test]
    fn robustness_on_odd_input() {
        for text in [
            "",
            "}}}}",
            "class",
            "@",
            "new",
            "class A { void f() { new } }",
            "class A { void f() { x = } }",
            "class A { void f() { a.(); b::; -> ; } }",
            "class A { Object o = new () {}; }",
            "\"unterminated",
            "\u{feff}class A { String s = \"é€\"; void f() { g(\"ü\"); } }",
            "class A { void f() { for (;;) break; } }",
            "enum E { A { }, B() { void m() { return; } } }",
            "class A { void f() { switch (x) { case Foo f when f.ok() -> {} case Bar(int a, var b) -> {} default -> {} } } }",
            "module m { requires x; }",
        ] {
            let m = lower(text);
            check_invariants(text, &m);
            assert_eq!(m.scopes[0].span, Span::new(0, text.len()));
        }
        let text = "\u{feff}class A { void f() { g(\"ü\"); } }";
        let m = lower(text);
        assert!(m.errors.is_empty());
        let (_, g) = call(&m, "g");
        assert_eq!(slice(text, g.span), "g(\"ü\")");
        assert_eq!(m.strings[0].text, "ü");
    }

    #[test]
    fn switch_patterns_and_enum_constant_bodies() {
        let text = r#"enum Job implements Runnable {
  NIGHTLY { public void run() { bill(UUID.randomUUID()); } };
  void f(Object o) {
    switch (o) { case Charge c when c.ok() -> use(c); case Point(int x, var y) -> use(x); default -> {} }
  }
}"#;
        let m = lower(text);
        check_invariants(text, &m);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let obj = scopes_where(&m, |k| matches!(k, ScopeKind::Object(_)))[0];
        assert_eq!(m.type_info(obj).unwrap().supertypes, vec!["Job"]);
        assert_eq!(m.scopes[function(&m, "run")].parent, Some(obj));
        for name in ["c", "x", "y"] {
            assert_eq!(binding(&m, name).kind, BindingKind::Param);
        }
        assert_eq!(binding(&m, "NIGHTLY").kind, BindingKind::Field);
    }

    /// Lowers every `.java` file under `$IDEMLINT_JAVA_DIR` (default: the crate's
    /// `fixtures/java`) and prints counts and parse errors.
    #[test]
    #[ignore]
    fn lower_directory() {
        fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            entries.sort();
            for path in entries {
                if path.is_dir() {
                    walk(&path, out);
                } else if path.extension().is_some_and(|e| e == "java") {
                    out.push(path);
                }
            }
        }
        let dir = std::env::var("IDEMLINT_JAVA_DIR")
            .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/java").to_string());
        let mut files = Vec::new();
        walk(std::path::Path::new(&dir), &mut files);
        let mut errors = 0;
        for path in &files {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            let m = lower(&text);
            check_invariants(&text, &m);
            println!(
                "{}: scopes={} calls={} values={} bindings={} assigns={} returns={} strings={} annotations={} errors={}",
                path.display(),
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
                errors += 1;
                println!("    {} at {:?}", e.message, e.span);
            }
        }
        println!("{} files, {errors} parse errors", files.len());
    }
}
