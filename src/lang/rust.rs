//! Rust frontend: `syn` (full) with `proc-macro2` span locations, lowered into the model.
//!
//! Spans: `syn::parse_file` strips a leading BOM and a `#!` shebang line before lexing, so
//! every span is relative to the stripped text (and a piece of a large file is parsed from
//! its own offset); [`lower`] maps a span's line and column to a byte offset of the
//! original text ([`SpanLines`]) so model spans index it. syn has no error recovery: a file
//! that does not parse yields one [`ParseError`] and an otherwise empty model.
//! After lowering, the thread's span table is released
//! (`proc_macro2::extra::invalidate_current_thread_spans`), so long runs do not grow.

use proc_macro2::Span as PmSpan;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Item, Pat, Stmt};

use crate::model::*;

/// Deepest expression / item nesting the walker follows; deeper code is skipped with a
/// [`ParseError`] (the parse itself runs on a large-stack thread, see `check`).
pub const MAX_DEPTH: usize = 1000;

/// Parses `text` and lowers it. Never panics on any input.
pub fn lower(text: &str) -> FileModel {
    lower_pieces(text, PIECEWISE_MIN_BYTES, PIECE_BYTES)
}

/// [`lower`], parsing a text of at least `min` bytes (after the stripped prefix) in pieces
/// of whole items of about `piece` bytes each ([`top_level_pieces`]).
fn lower_pieces(text: &str, min: usize, piece: usize) -> FileModel {
    let mut model = FileModel::new(Language::Rust, text.len());
    // syn recurses once per nesting level and per prefix operator; past a few thousand
    // levels it would exhaust even a large stack, which aborts the process. Refuse first.
    if let Some(at) = too_deeply_nested(text, PARSE_DEPTH_LIMIT) {
        model.errors.push(ParseError {
            message: format!(
                "nesting deeper than {PARSE_DEPTH_LIMIT} levels (brackets or prefix operators); the file is not parsed"
            ),
            span: Span::new(at, at),
        });
        return model;
    }
    // A method chain or operator chain nests one level per call or operator; the walker
    // stops at MAX_DEPTH anyway, and getting there costs time quadratic in the chain's
    // length (spans of the nested expressions), so a longer chain is refused up front.
    if let Some(at) = chain_too_long(text, MAX_DEPTH) {
        model.errors.push(ParseError {
            message: format!(
                "an expression nests more than {MAX_DEPTH} levels (a chain of method calls, field accesses, binary operators or closures); the file is not parsed"
            ),
            span: Span::new(at, at),
        });
        return model;
    }
    let prefix = stripped_prefix(text);
    let lines = SpanLines::new(text);
    let lowerer = |model: FileModel| Lowerer {
        m: model,
        text,
        prefix,
        lines: &lines,
        line0: lines.line_of(prefix),
        scope: 0,
        depth: 0,
        too_deep: false,
        macro_too_deep: false,
        macro_nesting: 0,
    };
    // Large files are parsed in pieces of whole top-level items (a whole file's syntax tree
    // and token buffer are about 30 times its text: 70 MiB for a generated 2.2 MB file).
    // When a piece does not parse, the whole file is parsed again below, so the error
    // reported is the one a whole-file parse gives.
    let content = &text[prefix..];
    if content.len() >= min
        && let Some(pieces) = top_level_pieces(content, piece)
    {
        let mut l = lowerer(model);
        let mut ok = true;
        for (n, piece) in pieces.iter().enumerate() {
            l.prefix = prefix + piece.start;
            l.line0 = lines.line_of(l.prefix);
            let r = syn::parse::Parser::parse_str(
                |input: syn::parse::ParseStream| l.parse_items(input, n == 0),
                &content[piece.clone()],
            );
            proc_macro2::extra::invalidate_current_thread_spans();
            if r.is_err() {
                ok = false;
                break;
            }
        }
        if ok {
            return l.m;
        }
        model = FileModel::new(Language::Rust, text.len());
    }
    let mut l = lowerer(model);
    // As `syn::parse_file` parses a `syn::File` (inner attributes, then items to the end),
    // but each item is lowered and dropped as soon as it is parsed, so the file's whole
    // syntax tree never exists at once.
    let parsed = |input: syn::parse::ParseStream| l.parse_items(input, true);
    match syn::parse::Parser::parse_str(parsed, &text[prefix..]) {
        Ok(()) => model = l.m,
        Err(err) => {
            // No error recovery: a file that does not parse has an otherwise empty model.
            model = FileModel::new(Language::Rust, text.len());
            for e in err.into_iter().take(1) {
                let r = e.span().byte_range();
                let mut start = (r.start + prefix).min(text.len());
                let mut end = (r.end + prefix).min(text.len());
                let mut message = e.to_string();
                if message == LEX_ERROR {
                    let (at, m) = lex_error(&text[prefix..], r.start);
                    start = (at + prefix).min(text.len());
                    end = start;
                    message = m;
                }
                if r.start == 0 && r.end == 0 && message.contains("end of input") {
                    start = text.len();
                    end = text.len();
                }
                if start > end {
                    start = end;
                }
                model.errors.push(ParseError {
                    message,
                    span: Span::new(start, end),
                });
            }
        }
    }
    proc_macro2::extra::invalidate_current_thread_spans();
    model
}

/// Where each line of a file's text starts, to turn a `proc-macro2` position (1-based
/// line, 0-based column in chars, relative to the text `syn` parses) into a byte offset of
/// the file. `Span::byte_range` answers the same but records every answer in a per-thread
/// ordered map (it counts chars from the nearest recorded offset): that was 9 % of the
/// time on google-cloud-rust. A line and column are a binary search away, and in an ASCII
/// text the column is the byte count.
struct SpanLines {
    /// Byte offset of the start of each line (`starts[0]` is 0; a line ends at `\n`, as
    /// `proc-macro2` counts lines).
    starts: Vec<usize>,
    /// Per line, whether it holds a non-ASCII character (empty when the whole text is
    /// ASCII): on an ASCII line a column (chars) is a byte count.
    non_ascii: Vec<bool>,
    /// The byte offset (from the line's start) of each character of the non-ASCII lines
    /// asked about so far, by line: a line is walked once, not once per token on it (a
    /// 4 KB line of `("é", "ü")` tuples made that quadratic).
    chars: std::cell::RefCell<std::collections::HashMap<usize, Box<[u32]>>>,
}

/// Longest line (bytes) whose non-ASCII characters [`SpanLines::byte`] counts itself;
/// past it the caller asks `Span::byte_range`, which remembers what it counted.
const SPAN_LINE_WALK_BYTES: usize = 4096;

impl SpanLines {
    fn new(text: &str) -> SpanLines {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        let non_ascii = if text.is_ascii() {
            Vec::new()
        } else {
            (0..starts.len())
                .map(|i| {
                    let end = starts.get(i + 1).copied().unwrap_or(text.len());
                    !text.as_bytes()[starts[i]..end].is_ascii()
                })
                .collect()
        };
        SpanLines {
            starts,
            non_ascii,
            chars: Default::default(),
        }
    }

    /// 0-based index of the line holding byte `at`.
    fn line_of(&self, at: usize) -> usize {
        self.starts.partition_point(|&s| s <= at).saturating_sub(1)
    }

    /// The byte offset in `text` of `line` (1-based) and `column` (chars) of the text
    /// parsed from byte `prefix` on, whose line 1 is line `line0` (0-based) of `text`.
    /// `None` when the line is past the text or a long non-ASCII line would have to be
    /// walked ([`SPAN_LINE_WALK_BYTES`]).
    fn byte(
        &self,
        text: &str,
        prefix: usize,
        line0: usize,
        line: usize,
        column: usize,
    ) -> Option<usize> {
        let idx = line0 + line.saturating_sub(1);
        let start = if line <= 1 {
            prefix
        } else {
            *self.starts.get(idx)?
        };
        if !self.non_ascii.get(idx).copied().unwrap_or(false) {
            return Some(start + column);
        }
        let line_start = self.starts[idx];
        let end = self.starts.get(idx + 1).copied().unwrap_or(text.len());
        let whole = text.get(line_start..end)?;
        if whole.len() > SPAN_LINE_WALK_BYTES || start < line_start {
            return None;
        }
        let mut chars = self.chars.borrow_mut();
        let offsets = chars
            .entry(idx)
            .or_insert_with(|| whole.char_indices().map(|(i, _)| i as u32).collect());
        // Line 1 of a piece may start inside the line: its columns count from there.
        let skip = offsets.partition_point(|&o| (o as usize) < start - line_start);
        Some(match offsets.get(skip + column) {
            Some(&o) => line_start + o as usize,
            None => end,
        })
    }
}

/// How `proc-macro2` words every lexer failure (an unbalanced delimiter, an unterminated
/// literal, a character that starts no token), with no detail.
const LEX_ERROR: &str = "cannot parse string into token stream";

/// Most re-lexes [`lex_error`] runs to find the outermost unclosed delimiter, and the
/// largest text it re-lexes at all (each lex keeps a copy of the text in the thread's span
/// table until [`lower`] releases it); past either, the innermost found so far is named.
const MAX_RELEX: usize = 16;
const MAX_RELEX_BYTES: usize = 1 << 20;

/// What a lexer failure at byte `at` of `src` (the text `syn` lexed) is, and where it is
/// best shown: the lexer stops at an unclosed delimiter's opening (at the end of the text),
/// at a closing delimiter that matches no opening, or at the start of a token it cannot
/// read. Unclosed delimiters are found by lexing again with a closer appended, so the
/// outermost one is named (in `fn f( {` it is the `(`) and the lexer's own rules decide.
fn lex_error(src: &str, at: usize) -> (usize, String) {
    use std::str::FromStr;
    let lex =
        |s: &str| proc_macro2::TokenStream::from_str(s).map_err(|e| e.span().byte_range().start);
    let Some(c) = src.get(at..).and_then(|r| r.chars().next()) else {
        return (at.min(src.len()), "unexpected end of file".into());
    };
    let closer = |c: char| match c {
        '(' => Some(')'),
        '[' => Some(']'),
        '{' => Some('}'),
        _ => None,
    };
    if let Some(close) = closer(c) {
        // Close the innermost with whitespace-separated closers until the lexer accepts it
        // or stops elsewhere; the last opening it stopped at is the outermost unclosed.
        let mut fixed = format!("{src}\n{close}");
        let (mut outer, mut open, mut count) = (at, c, 1);
        let budget = if src.len() <= MAX_RELEX_BYTES {
            MAX_RELEX
        } else {
            0
        };
        for _ in 0..budget {
            match lex(&fixed) {
                Err(next) if next < outer => match fixed[next..]
                    .chars()
                    .next()
                    .and_then(|o| closer(o).map(|cl| (o, cl)))
                {
                    Some((o, cl)) => {
                        outer = next;
                        open = o;
                        count += 1;
                        fixed.push(cl);
                    }
                    None => break,
                },
                _ => break,
            }
        }
        let inside = match count {
            1 => String::new(),
            n => format!(" (and {} more inside it)", n - 1),
        };
        return (outer, format!("unclosed delimiter `{open}`{inside}"));
    }
    if matches!(c, ')' | ']' | '}') {
        // The text before it lexes when this closer matches no opening at all.
        return match lex(&src[..at]) {
            Ok(_) => (at, format!("unexpected closing delimiter `{c}`")),
            Err(open_at) => {
                let open = src[open_at..].chars().next().unwrap_or('(');
                let p = crate::text::LineIndex::new(src).position(src, open_at);
                (
                    at,
                    format!(
                        "mismatched closing delimiter `{c}` (the open delimiter is `{open}` at line {})",
                        p.line
                    ),
                )
            }
        };
    }
    let rest = &src[at..];
    let message = if rest.starts_with("/*") {
        "unterminated block comment".to_string()
    } else if c == '"'
        || ["r\"", "r#", "b\"", "br\"", "br#", "c\"", "cr\"", "cr#"]
            .iter()
            .any(|p| rest.starts_with(p))
    {
        "unterminated or invalid string literal".to_string()
    } else if c == '\'' || rest.starts_with("b'") {
        "invalid character literal or lifetime".to_string()
    } else if c.is_ascii_digit() {
        "invalid number literal".to_string()
    } else {
        format!("unexpected character `{}`", c.escape_debug())
    };
    (at, message)
}

/// Deepest brace nesting inside one macro's tokens that is lowered (`json!` objects in
/// objects); each level parses the tokens below it again, so deeper ones are reported.
pub const MAX_MACRO_BRACES: u32 = 6;

/// Deepest nesting of macro invocations inside macro invocations that is lowered. A
/// macro's tokens are parsed when it is lowered, and that parse covers every macro nested
/// inside it, so unbounded nesting cost time quadratic in the depth (1,600 levels took
/// seconds); deeper ones are reported.
pub const MAX_MACRO_NESTING: u32 = 16;

/// Macros that expand to a newly generated value, lowered as a call of their name
/// ([`crate::catalogue`] sources match them): `nanoid!()` of the nanoid crate.
const VALUE_MACROS: &[&str] = &["nanoid"];

/// Deepest bracket nesting or longest run of prefix operators `lower` lets syn parse.
pub const PARSE_DEPTH_LIMIT: usize = 5_000;

/// At a `//` or `/*` comment or a `"` string starting at `i`: the offset after it and
/// whether it was a string; `None` elsewhere. Approximate (raw strings are plain strings),
/// shared by the pre-scans below.
fn skip_comment_or_string(b: &[u8], mut i: usize) -> Option<(usize, bool)> {
    match (b.get(i), b.get(i + 1)) {
        (Some(b'/'), Some(b'/')) => {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            Some((i, false))
        }
        (Some(b'/'), Some(b'*')) => {
            i += 2;
            while i < b.len() && !b[i..].starts_with(b"*/") {
                i += 1;
            }
            Some((i + 2, false))
        }
        (Some(b'"'), _) => {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            Some((i + 1, true))
        }
        _ => None,
    }
}

/// A byte offset where `(`/`[`/`{` nesting, `<` nesting within one statement, or a run of prefix operators (`-`, `!`,
/// `*`, `&`), first exceeds `limit`; `None` when the text stays within it. Comments and
/// string literals are skipped approximately (raw strings are treated as plain strings),
/// which can only make the count larger, never hide real nesting.
fn too_deeply_nested(text: &str, limit: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut depth = 0usize;
    let mut angles = 0usize;
    let mut run = 0usize;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'/' | b'"' if skip_comment_or_string(b, i).is_some() => {
                let (next, string) = skip_comment_or_string(b, i).unwrap_or((i + 1, false));
                i = next;
                if string {
                    run = 0;
                }
                continue;
            }
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Some(i);
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        // Generic nesting (`Vec<Vec<…>>`) never crosses `;`, `{` or `}`, so comparisons
        // (`a < b`) cannot add up across statements.
        match c {
            b'<' => {
                angles += 1;
                if angles > limit {
                    return Some(i);
                }
            }
            b'>' => angles = angles.saturating_sub(1),
            b';' | b'{' | b'}' => angles = 0,
            _ => {}
        }
        if matches!(c, b'-' | b'!' | b'*' | b'&') {
            run += 1;
            if run > limit {
                return Some(i);
            }
        } else if !c.is_ascii_whitespace() && c != b'(' {
            run = 0;
        }
        i += 1;
    }
    None
}

/// A byte offset where one expression first has more than `limit` postfix `.` or binary
/// operators at one bracket level between `;`, `,` and `=` (each nests the expression one
/// level deeper); `None` when none does. Comments and strings are skipped approximately,
/// which can only make counts larger. Linear in the text.
fn chain_too_long(text: &str, limit: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut counts: Vec<usize> = vec![0];
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'/' | b'"' if skip_comment_or_string(b, i).is_some() => {
                i = skip_comment_or_string(b, i).map_or(i + 1, |(next, _)| next);
                continue;
            }
            b'(' | b'[' | b'{' => counts.push(0),
            b')' | b']' | b'}' if counts.len() > 1 => {
                counts.pop();
            }
            b';' | b',' | b'=' => {
                if let Some(n) = counts.last_mut() {
                    *n = 0;
                }
            }
            b'.' | b'+' | b'-' | b'*' | b'/' | b'%' | b'^' | b'|' | b'&' => {
                // `..` and `::` are not chain links; `->` is not an operator.
                let next = b.get(i + 1).copied();
                let link = !matches!((c, next), (b'.', Some(b'.')) | (b'-', Some(b'>')));
                if link && let Some(n) = counts.last_mut() {
                    *n += 1;
                    if *n > limit {
                        return Some(i);
                    }
                }
                if c == b'.' && b.get(i + 1) == Some(&b'.') {
                    i += 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// Bytes syn skips before lexing: a UTF-8 BOM and a shebang line (not `#![`).
fn stripped_prefix(text: &str) -> usize {
    let mut prefix = 0;
    let mut content = text;
    if let Some(rest) = content.strip_prefix('\u{feff}') {
        prefix += 3;
        content = rest;
    }
    // `#!` starts a shebang line unless `[` follows it after whitespace and plain (not
    // doc) comments: then it is an inner attribute. This is rustc's rule, and syn's.
    if let Some(after) = content.strip_prefix("#!")
        && !skip_space_and_plain_comments(after).starts_with('[')
    {
        prefix += content.find('\n').unwrap_or(content.len());
    }
    prefix
}

/// Whether `c` is whitespace to the Rust lexer: Unicode `White_Space` and the left-to-right
/// and right-to-left marks.
fn rust_whitespace(c: char) -> bool {
    c.is_whitespace() || c == '\u{200e}' || c == '\u{200f}'
}

/// `s` after its leading whitespace ([`rust_whitespace`]) and plain comments: `//` and
/// `/* */` (nested) comments that are not doc comments (`///`, `//!`, `/**`, `/*!`;
/// `////` and `/***` are plain). An unterminated block comment is left in place.
fn skip_space_and_plain_comments(mut s: &str) -> &str {
    loop {
        let t = s.trim_start_matches(rust_whitespace);
        let plain_line = t.starts_with("//")
            && !t.starts_with("//!")
            && (!t.starts_with("///") || t.starts_with("////"));
        let plain_block = t.starts_with("/**/")
            || (t.starts_with("/*")
                && !t.starts_with("/*!")
                && (!t.starts_with("/**") || t.starts_with("/***")));
        if plain_line {
            s = t.find('\n').map_or("", |i| &t[i + 1..]);
        } else if plain_block {
            let b = t.as_bytes();
            let (mut open, mut i) = (0usize, 0usize);
            let end = loop {
                if i + 1 >= b.len() {
                    break None;
                }
                if b[i] == b'/' && b[i + 1] == b'*' {
                    open += 1;
                    i += 2;
                } else if b[i] == b'*' && b[i + 1] == b'/' {
                    open -= 1;
                    i += 2;
                    if open == 0 {
                        break Some(i);
                    }
                } else {
                    i += 1;
                }
            };
            match end {
                Some(i) => s = &t[i..],
                None => return t,
            }
        } else {
            return t;
        }
    }
}

/// The length in bytes of the character at byte `i` of `src` when it is non-ASCII
/// whitespace to the Rust lexer ([`rust_whitespace`]); `None` otherwise, or when `i` is
/// not a character boundary.
fn non_ascii_space(src: &str, i: usize) -> Option<usize> {
    let c = src.get(i..)?.chars().next()?;
    (!c.is_ascii() && rust_whitespace(c)).then(|| c.len_utf8())
}

/// Files at least this long (bytes after the stripped prefix) are parsed piecewise.
const PIECEWISE_MIN_BYTES: usize = 64 * 1024;
/// About how long (bytes) each piece of a piecewise parse is: whole items are added to a
/// piece until it is at least this long.
const PIECE_BYTES: usize = 32 * 1024;

/// Words that start a top-level item (`#` of an outer attribute aside). After a top-level
/// `}` or `;`, one of them can only start the next item.
const ITEM_WORDS: &[&str] = &[
    "pub",
    "fn",
    "impl",
    "struct",
    "enum",
    "mod",
    "use",
    "const",
    "static",
    "trait",
    "type",
    "extern",
    "unsafe",
    "async",
    "macro_rules",
];

/// Splits `src` (a file's text after the stripped prefix) into byte ranges of whole
/// top-level items, each at least `piece` bytes long but the last, covering `src` in
/// order. A piece ends after a top-level `}` or `;` that is followed by `#` or an
/// [`ITEM_WORDS`] word, and begins with the comments and whitespace before that item (so
/// doc comments stay with their item). `None` when the text does not lex as Rust with
/// balanced delimiters (an unterminated literal or comment, an unmatched delimiter): the
/// caller then parses the whole file. A lexer of its own, not syn's: it sees comments,
/// (raw, byte, C) strings, character literals and lifetimes, and nothing else.
fn top_level_pieces(src: &str, piece: usize) -> Option<Vec<std::ops::Range<usize>>> {
    let b = src.as_bytes();
    let ident_start = |c: u8| c == b'_' || c.is_ascii_alphabetic() || c >= 0x80;
    let ident_cont = |c: u8| c == b'_' || c.is_ascii_alphanumeric() || c >= 0x80;
    let mut pieces = Vec::new();
    let (mut start, mut depth, mut i) = (0usize, 0usize, 0usize);
    // Right after a top-level `}` or `;`: the offset after it.
    let mut item_end: Option<usize> = None;
    // Skips a quoted string body from `i` (just after the opening `"`) with escapes.
    let string = |mut i: usize, escapes: bool| -> Option<usize> {
        while i < b.len() {
            match b[i] {
                b'\\' if escapes => i += 2,
                b'"' => return Some(i + 1),
                _ => i += 1,
            }
        }
        None
    };
    // An identifier byte: ASCII letters, digits and `_`, and any non-ASCII character but
    // the Unicode whitespace the lexer skips (U+00A0, U+2028, ...).
    let word_at = |i: usize| ident_cont(b[i]) && (b[i] < 0x80 || non_ascii_space(src, i).is_none());
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if let Some(n) = non_ascii_space(src, i) {
            i += n;
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i = block_comment_end(b, i)?;
            continue;
        }
        let at = i;
        let mut starts_item = false;
        let mut ends_item = false;
        if ident_start(c) {
            while i < b.len() && word_at(i) {
                i += 1;
            }
            let word = &src[at..i];
            let next = b.get(i).copied();
            match (word, next) {
                ("r", Some(b'#')) if b.get(i + 1).is_some_and(|&c| ident_start(c)) => {
                    // A raw identifier `r#name`.
                    i += 1;
                    while i < b.len() && word_at(i) {
                        i += 1;
                    }
                }
                ("b" | "c", Some(b'"')) => i = string(i + 1, true)?,
                ("r" | "br" | "cr", Some(b'"' | b'#')) => {
                    let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
                    i += hashes;
                    if b.get(i) != Some(&b'"') {
                        return None;
                    }
                    i += 1;
                    let mut close = vec![b'"'];
                    close.extend(std::iter::repeat_n(b'#', hashes));
                    let end = b[i..]
                        .windows(close.len())
                        .position(|w| w == close.as_slice())?;
                    i += end + close.len();
                }
                ("b", Some(b'\'')) => i = char_literal(b, i)?,
                _ => starts_item = ITEM_WORDS.contains(&word),
            }
        } else if c == b'"' {
            i = string(i + 1, true)?;
        } else if c == b'\'' {
            match char_literal(b, i) {
                Some(end) => i = end,
                None => {
                    // A lifetime or label.
                    i += 1;
                    while i < b.len() && word_at(i) {
                        i += 1;
                    }
                }
            }
        } else if c.is_ascii_digit() {
            while i < b.len() && word_at(i) {
                i += 1;
            }
        } else {
            i += 1;
            match c {
                b'{' | b'(' | b'[' => depth += 1,
                b'}' | b')' | b']' => {
                    depth = depth.checked_sub(1)?;
                    ends_item = depth == 0 && c == b'}';
                }
                b';' => ends_item = depth == 0,
                b'#' => starts_item = true,
                _ => {}
            }
        }
        if let Some(end) = item_end
            && starts_item
            && depth == 0
            && end - start >= piece
        {
            pieces.push(start..end);
            start = end;
        }
        item_end = ends_item.then_some(i);
    }
    if depth != 0 {
        return None;
    }
    pieces.push(start..b.len());
    Some(pieces)
}

/// At a `'` at `i`: the offset after the character literal that starts there (`'x'`,
/// `'\n'`, `'\u{1F600}'`, `'\''`), or `None` when it is not one (a lifetime or label).
fn char_literal(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    if b.get(j) == Some(&b'\\') {
        j += 2;
        while j < b.len() && b[j] != b'\'' && b[j] != b'\n' {
            j += 1;
        }
        return (b.get(j) == Some(&b'\'')).then_some(j + 1);
    }
    // One character, however many bytes it takes in UTF-8.
    let first = *b.get(j)?;
    let len = match first {
        0..0x80 => 1,
        0xC0..0xE0 => 2,
        0xE0..0xF0 => 3,
        _ => 4,
    };
    j += len;
    (first != b'\'' && b.get(j) == Some(&b'\'')).then_some(j + 1)
}

/// What an expression turned out to be, for the caller that needs it.
#[derive(Default, Clone, Copy)]
struct ExprInfo {
    call: Option<CallId>,
    lambda: Option<ScopeId>,
}

struct Lowerer<'a> {
    m: FileModel,
    text: &'a str,
    /// Byte offset in [`Self::text`] of the text `syn` is parsing (the stripped prefix,
    /// plus the piece's start when a large file is parsed in pieces).
    prefix: usize,
    /// Where the lines of [`Self::text`] start ([`SpanLines`]).
    lines: &'a SpanLines,
    /// 0-based index in [`Self::lines`] of the line holding [`Self::prefix`]: line 1 of the
    /// parsed text.
    line0: usize,
    scope: ScopeId,
    depth: usize,
    too_deep: bool,
    /// A macro body nested past [`MAX_MACRO_BRACES`] was reported.
    macro_too_deep: bool,
    /// Macro invocations inside the macro being lowered (see [`MAX_MACRO_NESTING`]).
    macro_nesting: u32,
}

impl Lowerer<'_> {
    /// Parses and lowers what `syn::File` holds: the inner attributes (when `inner`, the
    /// file's first piece) and then items to the end of `input`, one at a time.
    fn parse_items(&mut self, input: syn::parse::ParseStream, inner: bool) -> syn::Result<()> {
        if inner {
            for attr in &input.call(syn::Attribute::parse_inner)? {
                let a = self.annotation(attr);
                self.m.annotations.push(a);
            }
        }
        while !input.is_empty() {
            let item: Item = input.parse()?;
            self.item(&item);
        }
        Ok(())
    }
}

fn peel(mut e: &Expr) -> &Expr {
    loop {
        e = match e {
            Expr::Paren(p) => &p.expr,
            Expr::Group(g) => &g.expr,
            Expr::Await(a) => &a.base,
            Expr::Try(t) => &t.expr,
            Expr::Reference(r) => &r.expr,
            _ => return e,
        }
    }
}

fn path_segments(p: &syn::Path) -> Vec<String> {
    p.segments.iter().map(|s| s.ident.to_string()).collect()
}

fn is_capitalised(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
}

fn pat_names(p: &Pat, out: &mut Vec<(String, PmSpan)>) {
    match p {
        Pat::Ident(i) => {
            out.push((i.ident.to_string(), i.ident.span()));
            if let Some((_, sub)) = &i.subpat {
                pat_names(sub, out);
            }
        }
        Pat::Type(t) => pat_names(&t.pat, out),
        Pat::Reference(r) => pat_names(&r.pat, out),
        Pat::Tuple(t) => t.elems.iter().for_each(|e| pat_names(e, out)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|e| pat_names(e, out)),
        Pat::Struct(s) => s.fields.iter().for_each(|f| pat_names(&f.pat, out)),
        Pat::Slice(s) => s.elems.iter().for_each(|e| pat_names(e, out)),
        Pat::Or(o) => o.cases.iter().for_each(|e| pat_names(e, out)),
        Pat::Paren(p) => pat_names(&p.pat, out),
        _ => {}
    }
}

/// `use a::B as C;` (also inside groups): records `(C, B)`.
fn use_aliases(tree: &syn::UseTree, out: &mut Vec<(String, String)>) {
    match tree {
        syn::UseTree::Path(p) => use_aliases(&p.tree, out),
        syn::UseTree::Rename(r) => {
            use syn::ext::IdentExt;
            out.push((r.rename.unraw().to_string(), r.ident.unraw().to_string()))
        }
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_aliases(t, out)),
        _ => {}
    }
}

/// Syntactic facts about a loop body, not descending into closures or nested items.
/// A loop nested inside is its own: its `break` leaves it, not this loop, and a failure it
/// handles and then leaves on its own (an inner retry loop) is dealt with there, so a batch
/// loop around a retry loop is not a retry loop. What leaves this loop from inside a nested
/// one still counts (`return`, `?`, `break 'label` naming this loop or one around it), and
/// a failure handled in a nested loop that does not leave on its own (a failover loop over
/// endpoints inside an attempt loop) goes round this loop again.
#[derive(Default)]
struct LoopScan {
    handles_error: bool,
    has_exit: bool,
    awaits_tick: bool,
    /// The loops inside this one that the visit is in, innermost last.
    inner: Vec<InnerLoop>,
    /// Labels of the labelled blocks (`'a: { .. }`) inside this loop the visit is in.
    blocks: Vec<String>,
    /// How many failure branches (`Err(..) =>` arms, `if let Err(..) = ..` and
    /// `if x.is_err()` blocks) the visit is in: a `break` or `return` there gives up after a
    /// failure, it is no exit on success.
    in_failure: usize,
    /// How many `continue`s of this loop the visit met inside failure branches: going
    /// round again after a failure.
    failure_continues: usize,
    /// Where this loop's body leaves it (`break`, `return`), as (line, column).
    exits: Vec<(usize, usize)>,
    /// Where the first construct that handles a failure in this loop's body starts (the
    /// `match` with an `Err` arm, the `if let Err`, the `.is_err()` call): an exit before it
    /// (a shutdown flag checked at the top of a periodic cycle) does not follow the
    /// operation's success.
    guard: Option<(usize, usize)>,
}

/// (line, column) of where `node` starts, for ordering within one file.
fn pos<T: Spanned>(node: &T) -> (usize, usize) {
    let lc = node.span().start();
    (lc.line, lc.column)
}

struct InnerLoop {
    label: Option<String>,
    handles_error: bool,
    has_exit: bool,
}

impl LoopScan {
    fn nested_loop(&mut self, label: Option<&syn::Label>, visit: impl FnOnce(&mut Self)) {
        self.inner.push(InnerLoop {
            label: label.map(|l| l.name.ident.to_string()),
            handles_error: false,
            has_exit: false,
        });
        visit(self);
        let done = self.inner.pop().expect("pushed above");
        if done.handles_error && !done.has_exit {
            self.handled();
        }
    }

    /// A construct that handles a failure starts at `at`: the earliest one in this loop's
    /// own body (not in a nested loop) is its guard.
    fn guard_at(&mut self, at: (usize, usize)) {
        if self.inner.is_empty() && self.guard.is_none_or(|g| at < g) {
            self.guard = Some(at);
        }
    }

    /// Whether the loop leaves on the success of what it handles: some exit at or after
    /// its guard (any exit when no construct was seen).
    fn exits_on_success(&self) -> bool {
        self.has_exit
            && self
                .guard
                .is_none_or(|g| self.exits.is_empty() || self.exits.iter().any(|e| *e >= g))
    }

    /// A failure handled at the current position: in the innermost loop around it.
    fn handled(&mut self) {
        match self.inner.last_mut() {
            Some(l) => l.handles_error = true,
            None => self.handles_error = true,
        }
    }
}

/// An expression that always leaves the loop: `break`, `return`, or a block ending in one.
fn always_exits(e: &Expr) -> bool {
    match e {
        Expr::Break(_) | Expr::Return(_) => true,
        Expr::Block(b) => b.block.stmts.last().is_some_and(|s| match s {
            syn::Stmt::Expr(e, _) => always_exits(e),
            _ => false,
        }),
        _ => false,
    }
}

/// The simple name of the type a value of type `t` calls methods on: the last path segment,
/// through references, `Arc`/`Rc`/`Box` and `dyn`; `None` for tuples, arrays and the like.
fn held_type(t: &syn::Type) -> Option<String> {
    match t {
        syn::Type::Reference(r) => held_type(&r.elem),
        syn::Type::Paren(p) => held_type(&p.elem),
        syn::Type::TraitObject(o) => o.bounds.iter().find_map(|b| match b {
            syn::TypeParamBound::Trait(t) => t.path.segments.last().map(|s| s.ident.to_string()),
            _ => None,
        }),
        syn::Type::Path(p) => {
            let last = p.path.segments.last()?;
            let name = last.ident.to_string();
            if matches!(name.as_str(), "Arc" | "Rc" | "Box")
                && let syn::PathArguments::AngleBracketed(a) = &last.arguments
                && let Some(syn::GenericArgument::Type(inner)) = a.args.first()
            {
                return held_type(inner);
            }
            Some(name)
        }
        _ => None,
    }
}

/// A block whose last statement always leaves the loop ([`always_exits`]).
fn block_exits(b: &syn::Block) -> bool {
    b.stmts.last().is_some_and(|s| match s {
        syn::Stmt::Expr(e, _) => always_exits(e),
        _ => false,
    })
}

/// A condition that is true on failure: `x.is_err()`, `!x.is_ok()`, `!x.is_success()`.
fn failure_test(e: &Expr) -> bool {
    match e {
        Expr::MethodCall(m) => m.method == "is_err",
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Not(_)) => {
            matches!(&*u.expr, Expr::MethodCall(m) if m.method == "is_ok" || m.method == "is_success")
        }
        Expr::Paren(p) => failure_test(&p.expr),
        _ => false,
    }
}

fn is_err_pat(p: &Pat) -> bool {
    match p {
        Pat::TupleStruct(t) => t.path.segments.last().is_some_and(|s| s.ident == "Err"),
        Pat::Or(o) => o.cases.iter().any(is_err_pat),
        _ => false,
    }
}

/// A comparison of a response's status with a success or a retryable failure status
/// (`resp.status() == StatusCode::TOO_MANY_REQUESTS`, `r.status().as_u16() >= 500`,
/// `status != 200`; [`crate::model::names_outcome_status`]), possibly joined with `&&` or
/// `||` to other tests. A pending status (`202`, `ACCEPTED`) is what a polling loop waits
/// out, so it is not one.
fn status_comparison(e: &Expr) -> bool {
    use syn::BinOp;
    match e {
        Expr::Paren(p) => status_comparison(&p.expr),
        Expr::Binary(b) if matches!(b.op, BinOp::And(_) | BinOp::Or(_)) => {
            status_comparison(&b.left) || status_comparison(&b.right)
        }
        Expr::Binary(b)
            if matches!(
                b.op,
                BinOp::Eq(_)
                    | BinOp::Ne(_)
                    | BinOp::Lt(_)
                    | BinOp::Le(_)
                    | BinOp::Gt(_)
                    | BinOp::Ge(_)
            ) =>
        {
            let outcome = |e: &Expr| {
                let code = match e {
                    Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                    Expr::Lit(l) => match &l.lit {
                        syn::Lit::Int(i) => Some(i.base10_digits().to_string()),
                        _ => None,
                    },
                    _ => None,
                };
                code.is_some_and(|c| crate::model::names_outcome_status(&c))
            };
            (names_status(&b.left) && outcome(&b.right))
                || (names_status(&b.right) && outcome(&b.left))
        }
        _ => false,
    }
}

/// An expression that reads a response's status: a `status()` / `status_code()` / `code()`
/// call or such a field, a local named so, through `.as_u16()`, a cast, a reference or
/// parentheses. A counter that merely has `status` in its name (`sent_status_updates`) is
/// not one.
fn names_status(e: &Expr) -> bool {
    const NAMES: [&str; 3] = ["status", "status_code", "code"];
    match e {
        Expr::MethodCall(m) if NAMES.contains(&m.method.to_string().as_str()) => true,
        Expr::MethodCall(m) if m.method == "as_u16" => names_status(&m.receiver),
        Expr::Field(f) => {
            matches!(&f.member, syn::Member::Named(n) if NAMES.contains(&n.to_string().as_str()))
        }
        Expr::Path(p) => p
            .path
            .get_ident()
            .is_some_and(|i| NAMES.contains(&i.to_string().as_str())),
        Expr::Paren(p) => names_status(&p.expr),
        Expr::Reference(r) => names_status(&r.expr),
        Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => names_status(&u.expr),
        Expr::Cast(c) => names_status(&c.expr),
        _ => false,
    }
}

/// A block whose last statement is `continue` (possibly after a wait): it goes round again.
fn block_continues(b: &syn::Block) -> bool {
    b.stmts
        .last()
        .is_some_and(|s| matches!(s, syn::Stmt::Expr(Expr::Continue(_), _)))
}

/// `Ok(..)`: a pattern that matches the success of a `Result` only.
fn is_ok_pat(p: &Pat) -> bool {
    match p {
        Pat::TupleStruct(t) => t.path.segments.last().is_some_and(|s| s.ident == "Ok"),
        _ => false,
    }
}

impl<'ast> Visit<'ast> for LoopScan {
    fn visit_arm(&mut self, arm: &'ast syn::Arm) {
        // `Err(_) => break` leaves the loop on failure (a drain loop over `try_recv`, a
        // loop that gives up): the failure is handled, but nothing is tried again.
        if is_err_pat(&arm.pat) && always_exits(&arm.body) {
            if let Some((_, g)) = &arm.guard {
                self.visit_expr(g);
            }
            self.in_failure += 1;
            self.visit_expr(&arm.body);
            self.in_failure -= 1;
            return;
        }
        if is_err_pat(&arm.pat) {
            self.visit_pat(&arm.pat);
            if let Some((_, g)) = &arm.guard {
                self.visit_expr(g);
            }
            self.in_failure += 1;
            self.visit_expr(&arm.body);
            self.in_failure -= 1;
            return;
        }
        syn::visit::visit_arm(self, arm);
    }
    fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
        // `if send().is_err() { break }` gives up on the first failure (a batch that stops
        // at an error), like an `Err(_) => break` arm: handled, but nothing is tried again.
        let gives_up = failure_test(&i.cond)
            && i.then_branch.stmts.last().is_some_and(|s| match s {
                syn::Stmt::Expr(e, _) => always_exits(e),
                _ => false,
            });
        if gives_up {
            let saved = (
                self.handles_error,
                self.inner.last().map(|l| l.handles_error),
            );
            self.visit_expr(&i.cond);
            self.handles_error = saved.0;
            if let (Some(l), Some(h)) = (self.inner.last_mut(), saved.1) {
                l.handles_error = h;
            }
            self.visit_block(&i.then_branch);
            if let Some((_, e)) = &i.else_branch {
                self.visit_expr(e);
            }
            return;
        }
        // `if let Ok(r) = send() { return r }`: the loop leaves on the success, and a failure
        // falls through to the next turn (handled, by being ignored), unless an `else` gives
        // up on it. A success branch that stays in the loop (`if let Ok(a) = s.parse() {
        // .. }` in a worker loop, a consumer that logs a failed send) retries nothing.
        if matches!(&*i.cond, Expr::Let(l) if is_ok_pat(&l.pat))
            && block_exits(&i.then_branch)
            && !i.else_branch.as_ref().is_some_and(|(_, e)| always_exits(e))
        {
            self.guard_at(pos(i));
            self.handled();
        }
        // `if resp.status() != StatusCode::TOO_MANY_REQUESTS { return Ok(resp) }`, `if
        // status.as_u16() == 503 { sleep(..).await; continue }`: a branch on the response's
        // status that leaves the loop or goes round again tells a failed attempt from a good
        // one. A status only logged (`if r.status() != OK { warn!(..) }`) decides nothing.
        if status_comparison(&i.cond)
            && (block_exits(&i.then_branch) || block_continues(&i.then_branch))
        {
            self.guard_at(pos(i));
            self.handled();
        }
        let on_failure =
            failure_test(&i.cond) || matches!(&*i.cond, Expr::Let(l) if is_err_pat(&l.pat));
        if on_failure {
            self.guard_at(pos(i));
            self.visit_expr(&i.cond);
            self.in_failure += 1;
            self.visit_block(&i.then_branch);
            self.in_failure -= 1;
            if let Some((_, e)) = &i.else_branch {
                self.visit_expr(e);
            }
            return;
        }
        syn::visit::visit_expr_if(self, i);
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast Item) {}
    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        self.visit_expr(&f.expr);
        self.nested_loop(f.label.as_ref(), |s| s.visit_block(&f.body));
    }
    fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
        self.nested_loop(w.label.as_ref(), |s| {
            s.visit_expr(&w.cond);
            // `while send().is_err() { .. }` is a retry loop of its own: it leaves once
            // the call succeeds.
            if let Some(l) = s.inner.last_mut()
                && l.handles_error
            {
                l.has_exit = true;
            }
            s.visit_block(&w.body);
        });
    }
    fn visit_expr_block(&mut self, b: &'ast syn::ExprBlock) {
        match &b.label {
            Some(l) => {
                self.blocks.push(l.name.ident.to_string());
                self.visit_block(&b.block);
                self.blocks.pop();
            }
            None => self.visit_block(&b.block),
        }
    }
    fn visit_expr_loop(&mut self, l: &'ast syn::ExprLoop) {
        self.nested_loop(l.label.as_ref(), |s| s.visit_block(&l.body));
    }
    fn visit_expr_match(&mut self, m: &'ast syn::ExprMatch) {
        if m.arms.iter().any(|a| is_err_pat(&a.pat)) {
            self.guard_at(pos(m));
        }
        syn::visit::visit_expr_match(self, m);
    }
    fn visit_pat_tuple_struct(&mut self, p: &'ast syn::PatTupleStruct) {
        if p.path.segments.last().is_some_and(|s| s.ident == "Err") {
            self.guard_at(pos(p));
            self.handled();
        }
        syn::visit::visit_pat_tuple_struct(self, p);
    }
    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let name = m.method.to_string();
        match name.as_str() {
            "is_err" | "is_ok" | "is_success" | "is_server_error" | "is_client_error"
            | "error_for_status" => {
                self.guard_at(pos(m));
                self.handled();
            }
            "tick" => self.awaits_tick = true,
            _ => {}
        }
        syn::visit::visit_expr_method_call(self, m);
    }
    fn visit_expr_break(&mut self, b: &'ast syn::ExprBreak) {
        // Giving up after a failure is no exit on success.
        if self.in_failure > 0 {
            syn::visit::visit_expr_break(self, b);
            return;
        }
        // An unlabelled `break` leaves the innermost loop; `break 'l` the loop or block
        // labelled `'l`, and this loop too unless that is inside it.
        match &b.label {
            None => match self.inner.last_mut() {
                Some(l) => l.has_exit = true,
                None => {
                    self.has_exit = true;
                    self.exits.push(pos(b));
                }
            },
            Some(l) => {
                let name = l.ident.to_string();
                if let Some(at) = self
                    .inner
                    .iter()
                    .rposition(|i| i.label.as_deref() == Some(name.as_str()))
                {
                    self.inner[at].has_exit = true;
                } else if !self.blocks.contains(&name) {
                    self.has_exit = true;
                    self.exits.push(pos(b));
                }
            }
        }
        syn::visit::visit_expr_break(self, b);
    }
    fn visit_expr_return(&mut self, r: &'ast syn::ExprReturn) {
        if self.in_failure > 0 {
            syn::visit::visit_expr_return(self, r);
            return;
        }
        self.has_exit = true;
        let slot = self.exits.len();
        self.exits.push(pos(r));
        let continues = self.failure_continues;
        syn::visit::visit_expr_return(self, r);
        // `return match strategy.test(..) { .. Err(e) => { ..; continue } .. }`: the value
        // holds the attempt, and a failure inside it goes round again, so the loop is left
        // once the value is computed, after that failure handling: its place is where the
        // value ends. (A `return` whose value only gives up on a failure, or goes on to the
        // next item on success, keeps its place at its start.)
        if self.failure_continues > continues
            && let Some(e) = r.expr.as_deref()
        {
            let end = expr_last(e).unwrap_or_else(|| e.span()).end();
            self.exits[slot] = (end.line, end.column);
        }
    }
    fn visit_expr_continue(&mut self, c: &'ast syn::ExprContinue) {
        // An unlabelled `continue` outside nested loops, or one naming no inner loop, goes
        // round this loop.
        let this_loop = match &c.label {
            None => self.inner.is_empty(),
            Some(l) => {
                let name = l.ident.to_string();
                !self
                    .inner
                    .iter()
                    .any(|i| i.label.as_deref() == Some(name.as_str()))
            }
        };
        if self.in_failure > 0 && this_loop {
            self.failure_continues += 1;
        }
        syn::visit::visit_expr_continue(self, c);
    }
    fn visit_expr_try(&mut self, t: &'ast syn::ExprTry) {
        // `?` leaves the loop on error: it gives up after a failure, no exit on success.
        syn::visit::visit_expr_try(self, t);
    }
}

impl<'a> Lowerer<'a> {
    /// A `proc-macro2` span as bytes of [`Self::text`] ([`SpanLines::byte`]).
    fn span(&self, s: PmSpan) -> Span {
        let len = self.text.len();
        let at = |lc: proc_macro2::LineColumn| {
            self.lines
                .byte(self.text, self.prefix, self.line0, lc.line, lc.column)
        };
        let (start, end) = match (at(s.start()), at(s.end())) {
            (Some(a), Some(b)) => (a, b),
            _ => {
                let r = s.byte_range();
                (r.start + self.prefix, r.end + self.prefix)
            }
        };
        let start = start.min(len);
        Span::new(start, end.min(len).max(start))
    }

    fn sp<T: Spanned + 'static>(&self, node: &T) -> Span {
        let any = node as &dyn std::any::Any;
        let e = any
            .downcast_ref::<Expr>()
            .or_else(|| any.downcast_ref::<Box<Expr>>().map(|b| &**b));
        let ends = match e {
            Some(e) => expr_ends(e),
            None => node_ends(any),
        };
        if let Some((first, last)) = ends {
            let (a, b) = (self.span(first), self.span(last));
            return Span::new(a.start, b.end.max(a.start));
        }
        self.span(node.span())
    }

    /// Source text of a span, whitespace-collapsed, at most 256 bytes (the tail).
    fn text_of(&self, s: Span) -> String {
        let raw = receiver_tail(self.text.get(s.start..s.end).unwrap_or(""));
        let mut out = String::with_capacity(raw.len().min(256));
        let mut last_ws = false;
        for c in raw.chars() {
            if c.is_whitespace() {
                last_ws = true;
                continue;
            }
            if last_ws && !out.is_empty() && !out.ends_with('.') && c != '.' {
                out.push(' ');
            }
            last_ws = false;
            out.push(c);
        }
        if out.len() > 256 {
            let mut cut = out.len() - 256;
            while !out.is_char_boundary(cut) {
                cut += 1;
            }
            out = out[cut..].to_string();
        }
        out
    }

    /// One level deeper; `false` (and nothing entered) past MAX_DEPTH, when the first
    /// refusal is reported at `at()`, the construct that is not analysed.
    fn enter(&mut self, at: impl FnOnce(&Self) -> Span) -> bool {
        if self.depth >= MAX_DEPTH {
            if !self.too_deep {
                self.too_deep = true;
                let span = at(self);
                self.m.errors.push(ParseError {
                    message: format!(
                        "nesting deeper than {MAX_DEPTH} levels; this construct (and any other nested as deep) is not analysed, the rest of the file is"
                    ),
                    span,
                });
            }
            return false;
        }
        self.depth += 1;
        true
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn annotation(&self, attr: &syn::Attribute) -> Annotation {
        let path = attr.path();
        Annotation {
            name: path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default(),
            args: Vec::new(),
            span: self.sp(attr),
            target: self.sp(attr),
        }
    }

    fn annotations(&mut self, attrs: &[syn::Attribute]) -> Vec<Annotation> {
        let v: Vec<Annotation> = attrs.iter().map(|a| self.annotation(a)).collect();
        self.m.annotations.extend(v.iter().cloned());
        v
    }

    fn item(&mut self, item: &Item) {
        if !self.enter(|l| l.sp(item)) {
            return;
        }
        match item {
            Item::Use(u) => use_aliases(&u.tree, &mut self.m.aliases),
            Item::Fn(f) => self.function(&f.attrs, &f.sig, &f.block, self.sp(item)),
            Item::Impl(i) => {
                let name = match &*i.self_ty {
                    syn::Type::Path(p) => p
                        .path
                        .segments
                        .last()
                        .map(|s| s.ident.to_string())
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                let supertypes = i
                    .trait_
                    .as_ref()
                    .and_then(|(_, p, _)| p.segments.last().map(|s| s.ident.to_string()))
                    .into_iter()
                    .collect();
                let annotations = self.annotations(&i.attrs);
                let s = self.m.add_scope(
                    ScopeKind::Type(TypeInfo {
                        name,
                        supertypes,
                        annotations,
                        companion: false,
                    }),
                    self.scope,
                    self.sp(item),
                );
                let saved = std::mem::replace(&mut self.scope, s);
                for ii in &i.items {
                    match ii {
                        syn::ImplItem::Fn(f) => {
                            self.function(&f.attrs, &f.sig, &f.block, self.sp(ii))
                        }
                        syn::ImplItem::Const(c) => self.field(&c.ident, Some(&c.expr), self.sp(ii)),
                        _ => {}
                    }
                }
                self.scope = saved;
            }
            Item::Trait(t) => {
                let annotations = self.annotations(&t.attrs);
                let s = self.m.add_scope(
                    ScopeKind::Type(TypeInfo {
                        name: t.ident.to_string(),
                        supertypes: Vec::new(),
                        annotations,
                        companion: false,
                    }),
                    self.scope,
                    self.sp(item),
                );
                let saved = std::mem::replace(&mut self.scope, s);
                for ti in &t.items {
                    if let syn::TraitItem::Fn(f) = ti
                        && let Some(block) = &f.default
                    {
                        self.function(&f.attrs, &f.sig, block, self.sp(ti));
                    }
                }
                self.scope = saved;
            }
            Item::Mod(m) => {
                self.annotations(&m.attrs);
                if let Some((_, items)) = &m.content {
                    for i in items {
                        self.item(i);
                    }
                }
            }
            Item::Const(c) => self.field(&c.ident, Some(&c.expr), self.sp(item)),
            Item::Static(s) => self.field(&s.ident, Some(&s.expr), self.sp(item)),
            Item::Struct(s) => {
                self.annotations(&s.attrs);
                if let syn::Fields::Named(fields) = &s.fields {
                    for f in &fields.named {
                        if let (Some(name), Some(ty)) = (&f.ident, held_type(&f.ty)) {
                            self.m
                                .field_types
                                .push((s.ident.to_string(), name.to_string(), ty));
                        }
                    }
                }
            }
            Item::Enum(e) => {
                self.annotations(&e.attrs);
            }
            Item::Macro(m) => {
                let mut atoms = Vec::new();
                self.mac(&m.mac, &mut atoms);
            }
            _ => {}
        }
        self.leave();
    }

    fn field(&mut self, ident: &syn::Ident, expr: Option<&Expr>, span: Span) {
        let value = expr.map(|e| self.value(e));
        self.m.bindings.push(Binding {
            name: ident.to_string(),
            kind: BindingKind::Field,
            value,
            scope: self.scope,
            name_span: self.sp(ident),
            span,
        });
    }

    fn function(
        &mut self,
        attrs: &[syn::Attribute],
        sig: &syn::Signature,
        block: &syn::Block,
        span: Span,
    ) {
        let annotations = self.annotations(attrs);
        let mut params = Vec::new();
        // A parameter's binding spans `name: Type` when the type names one
        // (`store: &Cache`), so that calls on it resolve by that type
        // (`crate::lang::declared_type`), as a typed `let` does; not when it is one of
        // the function's type parameters (`client: &C`) or `Self`, which name no
        // declaration.
        let generic: Vec<String> = sig
            .generics
            .type_params()
            .map(|t| t.ident.to_string())
            .chain(std::iter::once("Self".to_string()))
            .collect();
        let mut typed_params = Vec::new();
        for input in &sig.inputs {
            if let syn::FnArg::Typed(t) = input {
                let mut names = Vec::new();
                pat_names(&t.pat, &mut names);
                let ty_span = self.sp(&*t.ty);
                let ty = self.text_of(ty_span);
                let names_a_type = names.len() == 1
                    && matches!(&*t.pat, Pat::Ident(_))
                    && !type_heads(&t.ty).iter().any(|h| generic.contains(h));
                for (n, s) in names {
                    let span = self.span(s);
                    typed_params.push(if names_a_type {
                        Span::new(span.start, ty_span.end.max(span.end))
                    } else {
                        span
                    });
                    params.push(Param {
                        name: n,
                        ty: ty.clone(),
                        annotations: Vec::new(),
                        span,
                    });
                }
            }
        }
        let return_type = match &sig.output {
            syn::ReturnType::Default => String::new(),
            syn::ReturnType::Type(_, t) => {
                let s = self.sp(&**t);
                self.text_of(s)
            }
        };
        let info = FunctionInfo {
            name: sig.ident.to_string(),
            params: params.clone(),
            annotations,
            return_type,
            name_span: self.sp(&sig.ident),
            expression_body: false,
            extends: String::new(),
        };
        let s = self
            .m
            .add_scope(ScopeKind::Function(info), self.scope, span);
        let saved = std::mem::replace(&mut self.scope, s);
        for (p, span) in params.into_iter().zip(typed_params) {
            self.m.bindings.push(Binding {
                name: p.name,
                kind: BindingKind::Param,
                value: None,
                scope: s,
                name_span: p.span,
                span,
            });
        }
        self.block_with_tail(block, true);
        self.scope = saved;
    }

    /// Walks a block; when `tail_returns`, its trailing expression is a [`Return`] of the
    /// current scope.
    fn block_with_tail(&mut self, block: &syn::Block, tail_returns: bool) {
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            let is_tail = i + 1 == n;
            match stmt {
                Stmt::Expr(e, None) if is_tail && tail_returns => {
                    let v = self.value(e);
                    if !is_err_value(e) {
                        self.m.returns.push(Return {
                            value: v,
                            scope: self.scope,
                            span: self.sp(e),
                        });
                    }
                }
                _ => self.stmt(stmt),
            }
        }
    }

    fn stmt(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Local(local) => {
                let value = local.init.as_ref().map(|init| {
                    let v = self.value(&init.expr);
                    if let Some((_, diverge)) = &init.diverge {
                        let mut atoms = Vec::new();
                        self.expr(diverge, &mut atoms);
                    }
                    v
                });
                let mut names = Vec::new();
                pat_names(&local.pat, &mut names);
                let span = self.sp(local);
                for (n, s) in names {
                    let name_span = self.span(s);
                    self.m.bindings.push(Binding {
                        name: n,
                        kind: BindingKind::Local,
                        value,
                        scope: self.scope,
                        name_span,
                        span,
                    });
                }
            }
            Stmt::Item(item) => self.item(item),
            Stmt::Expr(e, _) => {
                let mut atoms = Vec::new();
                self.expr(e, &mut atoms);
            }
            Stmt::Macro(m) => {
                let mut atoms = Vec::new();
                self.mac(&m.mac, &mut atoms);
            }
        }
    }

    /// Lowers `e` as a value of its own.
    fn value(&mut self, e: &Expr) -> ValueId {
        let mut atoms = Vec::new();
        self.expr(e, &mut atoms);
        let peeled = peel(e);
        let literal = match peeled {
            Expr::Lit(l) => match &l.lit {
                syn::Lit::Str(s) => Some(s.value()),
                _ => None,
            },
            _ => None,
        };
        let ident = match peeled {
            Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            Expr::Field(f) => match &f.member {
                syn::Member::Named(n) => Some(n.to_string()),
                _ => None,
            },
            _ => None,
        };
        self.m.add_value(Value {
            atoms,
            span: self.sp(e),
            literal,
            ident,
        })
    }

    fn string_lit(&mut self, s: &syn::LitStr) {
        self.m.strings.push(StringLit {
            text: s.value(),
            span: self.sp(s),
            scope: self.scope,
        });
    }

    /// Walks an expression, appending its atoms; returns what it is.
    fn expr(&mut self, e: &Expr, atoms: &mut Vec<Atom>) -> ExprInfo {
        if !self.enter(|l| l.sp(e)) {
            return ExprInfo::default();
        }
        let info = self.expr_inner(e, atoms);
        self.leave();
        info
    }

    fn expr_inner(&mut self, e: &Expr, atoms: &mut Vec<Atom>) -> ExprInfo {
        match e {
            Expr::Call(c) => {
                let id = self.reserve_call();
                let (callee, path, name_span) = match peel(&c.func) {
                    Expr::Path(p) => {
                        let mut segs = path_segments(&p.path);
                        let name = segs.pop().unwrap_or_default();
                        let ns = p
                            .path
                            .segments
                            .last()
                            .map(|s| self.sp(&s.ident))
                            .unwrap_or_default();
                        (name, segs, ns)
                    }
                    other => {
                        self.expr(other, atoms);
                        (String::new(), Vec::new(), self.sp(&*c.func))
                    }
                };
                atoms.push(Atom::Call(id));
                let args = self.args(c.args.iter(), id, atoms);
                let is_new = path.last().is_some_and(|s| is_capitalised(s))
                    && (callee == "new" || callee.starts_with("new_"));
                self.m.calls[id] = Call {
                    callee,
                    path,
                    receiver: None,
                    receiver_call: None,
                    args,
                    is_new,
                    span: self.sp(e),
                    name_span,
                    scope: self.scope,
                    receiver_lambda: None,
                    receiver_type: None,
                };
                ExprInfo {
                    call: Some(id),
                    lambda: None,
                }
            }
            Expr::MethodCall(mc) => {
                let rinfo = self.expr(&mc.receiver, atoms);
                let id = self.reserve_call();
                atoms.push(Atom::Call(id));
                let args = self.args(mc.args.iter(), id, atoms);
                let receiver_span = self.sp(&*mc.receiver);
                if let Some(l) = rinfo.lambda
                    && let ScopeKind::Lambda(info) = &mut self.m.scopes[l].kind
                {
                    info.owner_call = Some(id);
                    info.arg_index = usize::MAX;
                }
                self.m.calls[id] = Call {
                    callee: mc.method.to_string(),
                    path: Vec::new(),
                    receiver: Some(self.text_of(receiver_span)),
                    receiver_call: rinfo.call,
                    args,
                    is_new: false,
                    span: self.sp(e),
                    name_span: self.sp(&mc.method),
                    scope: self.scope,
                    receiver_lambda: rinfo.lambda,
                    receiver_type: None,
                };
                ExprInfo {
                    call: Some(id),
                    lambda: None,
                }
            }
            Expr::Closure(c) => {
                let s = self.closure(c);
                ExprInfo {
                    call: None,
                    lambda: Some(s),
                }
            }
            Expr::Paren(p) => self.expr(&p.expr, atoms),
            Expr::Group(g) => self.expr(&g.expr, atoms),
            Expr::Await(a) => self.expr(&a.base, atoms),
            Expr::Try(t) => self.expr(&t.expr, atoms),
            Expr::Reference(r) => self.expr(&r.expr, atoms),
            Expr::Path(p) => {
                if p.qself.is_none()
                    && let Some(seg) = p.path.segments.last()
                {
                    let name = seg.ident.to_string();
                    if name != "self" && name != "None" {
                        atoms.push(Atom::Name {
                            name,
                            offset: self.sp(&seg.ident).start,
                        });
                    }
                }
                ExprInfo::default()
            }
            Expr::Field(f) => {
                let base = peel(&f.base);
                let is_self = matches!(base, Expr::Path(p) if p.path.is_ident("self"));
                if is_self {
                    if let syn::Member::Named(n) = &f.member {
                        atoms.push(Atom::Name {
                            name: n.to_string(),
                            offset: self.sp(n).start,
                        });
                    }
                } else {
                    if let (Expr::Path(p), syn::Member::Named(n)) = (base, &f.member)
                        && let Some(id) = p.path.get_ident()
                    {
                        self.m.field_reads.push((self.sp(id).start, n.to_string()));
                    }
                    self.expr(&f.base, atoms);
                }
                ExprInfo::default()
            }
            Expr::Lit(l) => {
                if let syn::Lit::Str(s) = &l.lit {
                    self.string_lit(s);
                }
                ExprInfo::default()
            }
            Expr::Macro(m) => {
                // A macro that expands to a generated value (`nanoid!()`, `nanoid!(10)`) is
                // a call of that name, so the catalogue's sources can match it; its tokens
                // are lowered as for any macro.
                let name = m.mac.path.segments.last().map(|s| s.ident.to_string());
                if let Some(name) = name.filter(|n| VALUE_MACROS.contains(&n.as_str())) {
                    let id = self.reserve_call();
                    atoms.push(Atom::Call(id));
                    let mut inner = Vec::new();
                    self.mac(&m.mac, &mut inner);
                    let mut path = path_segments(&m.mac.path);
                    path.pop();
                    let name_span = m
                        .mac
                        .path
                        .segments
                        .last()
                        .map(|s| self.sp(&s.ident))
                        .unwrap_or_default();
                    self.m.calls[id] = Call {
                        callee: name,
                        path,
                        receiver: None,
                        receiver_call: None,
                        args: Vec::new(),
                        is_new: false,
                        span: self.sp(e),
                        name_span,
                        scope: self.scope,
                        receiver_lambda: None,
                        receiver_type: None,
                    };
                    return ExprInfo {
                        call: Some(id),
                        lambda: None,
                    };
                }
                self.mac(&m.mac, atoms);
                ExprInfo::default()
            }
            Expr::Assign(a) => {
                self.assign(&a.left, &a.right, self.sp(e));
                ExprInfo::default()
            }
            Expr::Binary(b) => {
                use syn::BinOp::*;
                if matches!(
                    b.op,
                    AddAssign(_)
                        | SubAssign(_)
                        | MulAssign(_)
                        | DivAssign(_)
                        | RemAssign(_)
                        | BitXorAssign(_)
                        | BitAndAssign(_)
                        | BitOrAssign(_)
                        | ShlAssign(_)
                        | ShrAssign(_)
                ) {
                    self.assign(&b.left, &b.right, self.sp(e));
                } else {
                    self.expr(&b.left, atoms);
                    self.expr(&b.right, atoms);
                }
                ExprInfo::default()
            }
            Expr::Unary(u) => self.expr(&u.expr, atoms),
            Expr::Cast(c) => self.expr(&c.expr, atoms),
            Expr::Index(i) => {
                self.expr(&i.expr, atoms);
                self.expr(&i.index, atoms);
                ExprInfo::default()
            }
            Expr::Tuple(t) => {
                if t.elems.len() == 2 {
                    // A name/value pair: both halves are values of their own, and their
                    // atoms still flow into the enclosing expression.
                    let key = self.value(&t.elems[0]);
                    let value = self.value(&t.elems[1]);
                    atoms.extend(self.m.values[key].atoms.iter().cloned());
                    atoms.extend(self.m.values[value].atoms.iter().cloned());
                    let span = self.sp(t);
                    self.m.pairs.push(Pair {
                        key,
                        value,
                        scope: self.scope,
                        span,
                    });
                } else {
                    for el in &t.elems {
                        self.expr(el, atoms);
                    }
                }
                ExprInfo::default()
            }
            Expr::Array(a) => {
                for el in &a.elems {
                    self.expr(el, atoms);
                }
                ExprInfo::default()
            }
            Expr::Repeat(r) => {
                self.expr(&r.expr, atoms);
                ExprInfo::default()
            }
            Expr::Range(r) => {
                if let Some(s) = &r.start {
                    self.expr(s, atoms);
                }
                if let Some(s) = &r.end {
                    self.expr(s, atoms);
                }
                ExprInfo::default()
            }
            Expr::Struct(s) => {
                let ty = s.path.segments.last().map(|x| x.ident.to_string());
                for f in &s.fields {
                    let mut field_atoms = Vec::new();
                    self.expr(&f.expr, &mut field_atoms);
                    if let syn::Member::Named(n) = &f.member {
                        let peeled = peel(&f.expr);
                        let ident = match peeled {
                            Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                            _ => None,
                        };
                        let v = self.m.add_value(Value {
                            atoms: field_atoms.clone(),
                            span: self.sp(&f.expr),
                            literal: None,
                            ident,
                        });
                        self.m.field_inits.push(FieldInit {
                            name: n.to_string(),
                            ty: ty.clone(),
                            value: v,
                            scope: self.scope,
                            span: self.sp(f),
                        });
                    }
                    atoms.extend(field_atoms);
                }
                if let Some(rest) = &s.rest {
                    let first = self.m.calls.len();
                    self.expr(rest, atoms);
                    if first < self.m.calls.len() {
                        let set = s
                            .fields
                            .iter()
                            .filter_map(|f| match &f.member {
                                syn::Member::Named(n) => Some(n.to_string()),
                                _ => None,
                            })
                            .collect();
                        self.m.struct_bases.push((first, set));
                    }
                    // `..Default::default()` is `T::default()` for the literal's type `T`
                    // (the base expression has the struct's type, Rust Reference "Struct
                    // expressions"), so it resolves to the project's `impl Default for T`.
                    if let Some(t) = ty.as_deref().filter(|t| *t != "Self")
                        && let Some(c) = self.m.calls.get_mut(first)
                        && c.callee == "default"
                        && c.receiver.is_none()
                        && c.path.iter().map(String::as_str).eq(["Default"])
                    {
                        c.path = vec![t.to_string()];
                    }
                }
                ExprInfo::default()
            }
            Expr::Block(b) => {
                self.block_inline(&b.block, atoms);
                ExprInfo::default()
            }
            Expr::Unsafe(b) => {
                self.block_inline(&b.block, atoms);
                ExprInfo::default()
            }
            Expr::Async(b) => {
                self.block_inline(&b.block, atoms);
                ExprInfo::default()
            }
            Expr::TryBlock(b) => {
                self.block_inline(&b.block, atoms);
                ExprInfo::default()
            }
            Expr::Const(b) => {
                self.block_inline(&b.block, atoms);
                ExprInfo::default()
            }
            Expr::If(i) => {
                self.expr(&i.cond, atoms);
                let cond = self.sp(&*i.cond);
                let then = self.sp(&i.then_branch);
                self.m.guards.push((cond, then, GuardKind::IfTrue));
                if let Some((_, els)) = &i.else_branch {
                    let els = self.sp(&**els);
                    self.m.guards.push((cond, els, GuardKind::IfFalse));
                }
                if block_exits(&i.then_branch) {
                    let s = self.sp(&i.then_branch);
                    self.m.exit_blocks.push(s);
                }
                self.block_inline(&i.then_branch, atoms);
                if let Some((_, els)) = &i.else_branch {
                    if always_exits(els) {
                        let s = self.sp(&**els);
                        self.m.exit_blocks.push(s);
                    }
                    self.expr(els, atoms);
                }
                ExprInfo::default()
            }
            Expr::Let(l) => {
                self.expr(&l.expr, atoms);
                ExprInfo::default()
            }
            Expr::Match(m) => {
                self.expr(&m.expr, atoms);
                for arm in &m.arms {
                    if let Some((_, g)) = &arm.guard {
                        let mut ga = Vec::new();
                        self.expr(g, &mut ga);
                    }
                    if always_exits(&arm.body) {
                        let s = self.sp(&*arm.body);
                        self.m.exit_blocks.push(s);
                    }
                    self.expr(&arm.body, atoms);
                }
                ExprInfo::default()
            }
            Expr::Loop(l) => {
                self.loop_scope("loop", String::new(), &l.body, None, self.sp(e));
                ExprInfo::default()
            }
            Expr::While(w) => {
                let hs = self.sp(&*w.cond);
                let header = self.text_of(hs);
                let mut ca = Vec::new();
                self.expr(&w.cond, &mut ca);
                self.loop_scope("while", header, &w.body, None, self.sp(e));
                ExprInfo::default()
            }
            Expr::ForLoop(f) => {
                let mut ia = Vec::new();
                self.expr(&f.expr, &mut ia);
                let header = format!(
                    "{} in {}",
                    self.text_of(self.sp(&*f.pat)),
                    self.text_of(self.sp(&*f.expr))
                );
                self.loop_scope("for", header, &f.body, Some(&f.pat), self.sp(e));
                ExprInfo::default()
            }
            Expr::Return(r) => {
                if let Some(v) = &r.expr {
                    let value = self.value(v);
                    let scope = self
                        .m
                        .ancestors(self.scope)
                        .find(|s| {
                            matches!(
                                self.m.scopes[*s].kind,
                                ScopeKind::Function(_) | ScopeKind::Lambda(_)
                            )
                        })
                        .unwrap_or(self.scope);
                    if !is_err_value(v) {
                        self.m.returns.push(Return {
                            value,
                            scope,
                            span: self.sp(e),
                        });
                    }
                }
                ExprInfo::default()
            }
            Expr::Break(b) => {
                if let Some(v) = &b.expr {
                    self.expr(v, atoms);
                }
                ExprInfo::default()
            }
            Expr::Yield(y) => {
                if let Some(v) = &y.expr {
                    self.expr(v, atoms);
                }
                ExprInfo::default()
            }
            _ => ExprInfo::default(),
        }
    }

    fn block_inline(&mut self, block: &syn::Block, atoms: &mut Vec<Atom>) {
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            match stmt {
                Stmt::Expr(e, None) if i + 1 == n => {
                    self.expr(e, atoms);
                }
                _ => self.stmt(stmt),
            }
        }
    }

    fn reserve_call(&mut self) -> CallId {
        self.m.calls.push(Call::default());
        self.m.calls.len() - 1
    }

    fn args<'e>(
        &mut self,
        args: impl Iterator<Item = &'e Expr>,
        call: CallId,
        atoms: &mut Vec<Atom>,
    ) -> Vec<Arg> {
        let mut out = Vec::new();
        for (i, a) in args.enumerate() {
            let mut arg_atoms = Vec::new();
            let info = self.expr(a, &mut arg_atoms);
            if let Some(l) = info.lambda
                && let ScopeKind::Lambda(li) = &mut self.m.scopes[l].kind
            {
                li.owner_call = Some(call);
                li.arg_index = i;
            }
            let peeled = peel(a);
            let (type_hint, fn_ref) = match peeled {
                Expr::Call(c) => match peel(&c.func) {
                    Expr::Path(p) => {
                        let segs = path_segments(&p.path);
                        let th = if segs.len() >= 2 && is_capitalised(&segs[segs.len() - 2]) {
                            Some(segs[segs.len() - 2].clone())
                        } else {
                            segs.last().filter(|s| is_capitalised(s)).cloned()
                        };
                        (th, None)
                    }
                    _ => (None, None),
                },
                Expr::Struct(s) => (s.path.segments.last().map(|x| x.ident.to_string()), None),
                Expr::Path(p) => {
                    let last = p
                        .path
                        .segments
                        .last()
                        .map(|s| s.ident.to_string())
                        .unwrap_or_default();
                    if is_capitalised(&last) {
                        (Some(last), None)
                    } else if !last.is_empty() && last != "self" {
                        (None, Some(last))
                    } else {
                        (None, None)
                    }
                }
                _ => (None, None),
            };
            let literal = match peeled {
                Expr::Lit(l) => match &l.lit {
                    syn::Lit::Str(s) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            };
            // A field read (`&req.idempotency_key`) names its field, as in `value`.
            let ident = match peeled {
                Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                Expr::Field(f) => match &f.member {
                    syn::Member::Named(n) => Some(n.to_string()),
                    _ => None,
                },
                _ => None,
            };
            let v = self.m.add_value(Value {
                atoms: arg_atoms.clone(),
                span: self.sp(a),
                literal,
                ident,
            });
            atoms.extend(arg_atoms);
            out.push(Arg {
                name: None,
                value: v,
                lambda: info.lambda,
                type_hint,
                fn_ref,
                span: self.sp(a),
            });
        }
        out
    }

    fn closure(&mut self, c: &syn::ExprClosure) -> ScopeId {
        let mut params = Vec::new();
        for input in &c.inputs {
            let mut names = Vec::new();
            pat_names(input, &mut names);
            for (n, s) in names {
                params.push(Param {
                    name: n,
                    ty: String::new(),
                    annotations: Vec::new(),
                    span: self.span(s),
                });
            }
        }
        let body = peel_closure_body(&c.body);
        let is_move =
            c.capture.is_some() || matches!(&*c.body, Expr::Async(a) if a.capture.is_some());
        let s = self.m.add_scope(
            ScopeKind::Lambda(LambdaInfo {
                owner_call: None,
                arg_index: 0,
                params: params.clone(),
                is_move,
            }),
            self.scope,
            self.sp(c),
        );
        let saved = std::mem::replace(&mut self.scope, s);
        for p in params {
            self.m.bindings.push(Binding {
                name: p.name,
                kind: BindingKind::Param,
                value: None,
                scope: s,
                name_span: p.span,
                span: p.span,
            });
        }
        match body {
            ClosureBody::Block(b) => self.block_with_tail(b, true),
            ClosureBody::Expr(e) => {
                let v = self.value(e);
                if !is_err_value(e) {
                    self.m.returns.push(Return {
                        value: v,
                        scope: s,
                        span: self.sp(e),
                    });
                }
            }
        }
        self.scope = saved;
        s
    }

    fn loop_scope(
        &mut self,
        keyword: &str,
        header: String,
        body: &syn::Block,
        pat: Option<&Pat>,
        span: Span,
    ) {
        let mut scan = LoopScan::default();
        scan.visit_block(body);
        let s = self.m.add_scope(
            ScopeKind::Loop(LoopInfo {
                keyword: keyword.to_string(),
                header,
                handles_error: scan.handles_error,
                has_exit: scan.exits_on_success(),
                awaits_tick: scan.awaits_tick,
                drains: false,
            }),
            self.scope,
            span,
        );
        let saved = std::mem::replace(&mut self.scope, s);
        if let Some(p) = pat {
            let mut names = Vec::new();
            pat_names(p, &mut names);
            for (n, sp) in names {
                let ns = self.span(sp);
                self.m.bindings.push(Binding {
                    name: n,
                    kind: BindingKind::Param,
                    value: None,
                    scope: s,
                    name_span: ns,
                    span: ns,
                });
            }
        }
        let mut atoms = Vec::new();
        self.block_inline(body, &mut atoms);
        self.scope = saved;
    }

    fn assign(&mut self, left: &Expr, right: &Expr, span: Span) {
        let name = match peel(left) {
            Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
            Expr::Field(f) => match &f.member {
                syn::Member::Named(n) => Some(n.to_string()),
                _ => None,
            },
            Expr::Unary(u) => match peel(&u.expr) {
                Expr::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
                _ => None,
            },
            _ => None,
        };
        let value = self.value(right);
        if let Some(name) = name {
            self.m.assigns.push(Assign {
                name,
                value,
                scope: self.scope,
                span,
            });
        }
    }

    /// Macros: arguments of `format!`-like and other expression-list macros are parsed as
    /// comma-separated expressions; `{name}` captures in a format string become names.
    fn mac(&mut self, mac: &syn::Macro, atoms: &mut Vec<Atom>) {
        if self.macro_nesting >= MAX_MACRO_NESTING {
            if !self.macro_too_deep {
                self.macro_too_deep = true;
                let at = self.sp(mac);
                self.m.errors.push(ParseError {
                    message: format!(
                        "macro invocations nested deeper than {MAX_MACRO_NESTING} levels (`vec![vec![..]]`); what is inside is not analysed, the rest of the file is"
                    ),
                    span: Span::new(at.start, at.start),
                });
            }
            return;
        }
        self.macro_nesting += 1;
        self.mac_tokens(mac, atoms);
        self.macro_nesting -= 1;
    }

    fn mac_tokens(&mut self, mac: &syn::Macro, atoms: &mut Vec<Atom>) {
        use syn::parse::Parser;
        let parser = syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated;
        let Ok(exprs) = parser.parse2(mac.tokens.clone()) else {
            self.macro_body(mac.tokens.clone(), atoms, 0);
            return;
        };
        for (i, e) in exprs.iter().enumerate() {
            if i == 0
                && let Expr::Lit(l) = e
                && let syn::Lit::Str(s) = &l.lit
            {
                let base = self.sp(s).start;
                for (name, off) in format_captures(&s.value()) {
                    atoms.push(Atom::Name {
                        name,
                        offset: base + off,
                    });
                }
            }
            self.expr(e, atoms);
        }
    }
}

impl<'a> Lowerer<'a> {
    /// The tokens of a macro that are not an expression list (`some_macro! { fn .. }`,
    /// `impl` blocks generated from a token list, `cfg_if!`, `tokio::select!` branches,
    /// `json!({ "k": v })`): lowered as items when they parse as items, else as statements,
    /// else each brace group is tried the same way, and `"name": value` / `"name" => value`
    /// entries become name/value [`Pair`]s. The tokens keep their spans in the file, so
    /// every fact points at the text as written. Nesting is bounded.
    fn macro_body(&mut self, tokens: proc_macro2::TokenStream, atoms: &mut Vec<Atom>, depth: u32) {
        use syn::parse::Parser;
        if tokens.is_empty() {
            return;
        }
        if depth > MAX_MACRO_BRACES {
            if !self.macro_too_deep {
                self.macro_too_deep = true;
                let start = tokens
                    .clone()
                    .into_iter()
                    .next()
                    .map(|t| self.span(t.span()))
                    .unwrap_or_default();
                self.m.errors.push(ParseError {
                    message: format!(
                        "macro tokens nested deeper than {MAX_MACRO_BRACES} brace levels (`json!({{..{{..}}}})`); what is inside is not analysed, the rest of the file is"
                    ),
                    span: start,
                });
            }
            return;
        }
        if let Ok(file) = syn::parse2::<syn::File>(tokens.clone())
            && !file.items.is_empty()
        {
            for item in &file.items {
                self.item(item);
            }
            return;
        }
        if let Ok(stmts) = syn::Block::parse_within.parse2(tokens.clone())
            && !stmts.is_empty()
        {
            for st in &stmts {
                self.stmt(st);
            }
            return;
        }
        // Entries of a map-like macro, split on top-level commas.
        let mut segment: Vec<proc_macro2::TokenTree> = Vec::new();
        let flush =
            |this: &mut Self, seg: &mut Vec<proc_macro2::TokenTree>, atoms: &mut Vec<Atom>| {
                let parts = std::mem::take(seg);
                if parts.len() < 3 {
                    return;
                }
                // A `select!` branch, `pat = future => handler`: the future and a handler
                // that is not a block (blocks were tried as groups) are expressions.
                if let Some((eq, arrow)) = select_branch(&parts) {
                    for range in [eq + 1..arrow, arrow + 2..parts.len()] {
                        // Brace groups were lowered as groups already (`async { .. }`).
                        let braced = parts[range.clone()].iter().any(|t| {
                            matches!(t, proc_macro2::TokenTree::Group(g)
                                if g.delimiter() == proc_macro2::Delimiter::Brace)
                        });
                        if braced {
                            continue;
                        }
                        let toks: proc_macro2::TokenStream = parts[range].iter().cloned().collect();
                        if let Ok(e) = syn::parse2::<Expr>(toks) {
                            this.expr(&e, atoms);
                        }
                    }
                    return;
                }
                let proc_macro2::TokenTree::Literal(lit) = &parts[0] else {
                    return;
                };
                let rest_at = match (&parts[1], parts.get(2)) {
                    (proc_macro2::TokenTree::Punct(p), _) if p.as_char() == ':' => 2,
                    (proc_macro2::TokenTree::Punct(p), Some(proc_macro2::TokenTree::Punct(q)))
                        if p.as_char() == '=' && q.as_char() == '>' =>
                    {
                        3
                    }
                    _ => return,
                };
                let Ok(key) = syn::parse2::<Expr>(proc_macro2::TokenStream::from(
                    proc_macro2::TokenTree::Literal(lit.clone()),
                )) else {
                    return;
                };
                let rest: proc_macro2::TokenStream = parts[rest_at..].iter().cloned().collect();
                let Ok(value) = syn::parse2::<Expr>(rest) else {
                    return;
                };
                let k = this.value(&key);
                let v = this.value(&value);
                atoms.extend(this.m.values[v].atoms.iter().cloned());
                let span = Span::new(this.m.values[k].span.start, this.m.values[v].span.end);
                this.m.pairs.push(Pair {
                    key: k,
                    value: v,
                    scope: this.scope,
                    span,
                });
            };
        for tt in tokens {
            match &tt {
                proc_macro2::TokenTree::Punct(p) if p.as_char() == ',' => {
                    flush(self, &mut segment, atoms);
                }
                proc_macro2::TokenTree::Group(g)
                    if g.delimiter() == proc_macro2::Delimiter::Brace && segment.is_empty() =>
                {
                    self.macro_body(g.stream(), atoms, depth + 1);
                }
                proc_macro2::TokenTree::Group(g) if segment.len() < 2 => {
                    // `cfg_if! { if #[cfg(..)] { items } else { items } }`, `select!`
                    // branches `pat = fut => { block }`: try every brace group.
                    if g.delimiter() == proc_macro2::Delimiter::Brace {
                        self.macro_body(g.stream(), atoms, depth + 1);
                    } else {
                        segment.push(tt.clone());
                    }
                }
                proc_macro2::TokenTree::Group(g) => {
                    if g.delimiter() == proc_macro2::Delimiter::Brace {
                        self.macro_body(g.stream(), atoms, depth + 1);
                    }
                    segment.push(tt.clone());
                }
                _ => segment.push(tt.clone()),
            }
        }
        flush(self, &mut segment, atoms);
    }
}

/// In the tokens of one `select!` branch (`biased; () = sleep(d) => {}`), the positions of
/// the `=` that binds the pattern and of the `=` of `=>`.
fn select_branch(parts: &[proc_macro2::TokenTree]) -> Option<(usize, usize)> {
    use proc_macro2::{Spacing, TokenTree};
    let punct =
        |i: usize, c: char| matches!(parts.get(i), Some(TokenTree::Punct(p)) if p.as_char() == c);
    let arrow = (0..parts.len()).find(|&i| punct(i, '=') && punct(i + 1, '>'))?;
    let eq = (0..arrow).rev().find(|&i| {
        matches!(&parts[i], TokenTree::Punct(p) if p.as_char() == '=' && p.spacing() == Spacing::Alone)
            && !punct(i.wrapping_sub(1), '=')
            && !punct(i.wrapping_sub(1), '!')
            && !punct(i.wrapping_sub(1), '<')
            && !punct(i.wrapping_sub(1), '>')
    })?;
    Some((eq, arrow))
}

enum ClosureBody<'e> {
    Block(&'e syn::Block),
    Expr(&'e Expr),
}

fn peel_closure_body(e: &Expr) -> ClosureBody<'_> {
    match e {
        Expr::Block(b) => ClosureBody::Block(&b.block),
        Expr::Async(a) => ClosureBody::Block(&a.block),
        Expr::Paren(p) => peel_closure_body(&p.expr),
        other => ClosureBody::Expr(other),
    }
}

/// Inline captures of a format string: `"{key}-{}"` → `[("key", 1)]` (offset in the
/// unquoted string, bytes; approximate in the presence of escapes).
fn format_captures(s: &str) -> Vec<(String, usize)> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'{' {
            if bytes.get(i + 1) == Some(&b'{') {
                i += 2;
                continue;
            }
            let start = i + 1;
            let mut j = start;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            if j > start && !bytes[start].is_ascii_digit() {
                out.push((s[start..j].to_string(), start));
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// `Err(..)` (also parenthesised): a returned error, which a caller's `?` propagates and
/// whose contents (a clock in an error message) never become the function's value.
fn is_err_value(e: &Expr) -> bool {
    match e {
        Expr::Paren(p) => is_err_value(&p.expr),
        Expr::Call(c) => matches!(&*c.func, Expr::Path(p)
            if p.path.segments.len() == 1 && p.path.segments[0].ident == "Err"),
        _ => false,
    }
}

/// The first and last token spans of an expression, as `Spanned::span` joins them, found
/// by walking down the leftmost and rightmost children only. `Spanned::span` prints the
/// whole expression to tokens to find them: once per nested expression, that made a long
/// method chain quadratic (40 % of the time on generated Rust transports of 1–2 MB).
/// `None` for a form not handled here (the caller asks `Spanned` then).
fn expr_ends(e: &Expr) -> Option<(PmSpan, PmSpan)> {
    Some((expr_first(e)?, expr_last(e)?))
}

fn expr_first(e: &Expr) -> Option<PmSpan> {
    let attrs: &[syn::Attribute] = match e {
        Expr::Array(x) => &x.attrs,
        Expr::Assign(x) => &x.attrs,
        Expr::Await(x) => &x.attrs,
        Expr::Binary(x) => &x.attrs,
        Expr::Block(x) => &x.attrs,
        Expr::Break(x) => &x.attrs,
        Expr::Call(x) => &x.attrs,
        Expr::Cast(x) => &x.attrs,
        Expr::Field(x) => &x.attrs,
        Expr::Index(x) => &x.attrs,
        Expr::Lit(x) => &x.attrs,
        Expr::MethodCall(x) => &x.attrs,
        Expr::Paren(x) => &x.attrs,
        Expr::Path(x) => &x.attrs,
        Expr::Reference(x) => &x.attrs,
        Expr::Return(x) => &x.attrs,
        Expr::Struct(x) => &x.attrs,
        Expr::Try(x) => &x.attrs,
        Expr::Tuple(x) => &x.attrs,
        Expr::Unary(x) => &x.attrs,
        Expr::If(x) => &x.attrs,
        Expr::Match(x) => &x.attrs,
        Expr::Closure(x) => &x.attrs,
        Expr::Macro(x) => &x.attrs,
        Expr::Let(x) => &x.attrs,
        Expr::Loop(x) => &x.attrs,
        Expr::While(x) => &x.attrs,
        Expr::ForLoop(x) => &x.attrs,
        Expr::Unsafe(x) => &x.attrs,
        Expr::Async(x) => &x.attrs,
        _ => return None,
    };
    // Inner attributes (`{ #![allow(x)] .. }`, `match x { #![a] .. }`) print inside the
    // braces: only an outer one comes first.
    if let Some(a) = first_outer(attrs) {
        return Some(a);
    }
    Some(match e {
        Expr::Array(x) => x.bracket_token.span.open(),
        Expr::Assign(x) => expr_first(&x.left)?,
        Expr::Await(x) => expr_first(&x.base)?,
        Expr::Binary(x) => expr_first(&x.left)?,
        Expr::Block(x) => match &x.label {
            Some(l) => l.name.apostrophe,
            None => x.block.brace_token.span.open(),
        },
        Expr::Break(x) => x.break_token.span,
        Expr::Call(x) => expr_first(&x.func)?,
        Expr::Cast(x) => expr_first(&x.expr)?,
        Expr::Field(x) => expr_first(&x.base)?,
        Expr::Index(x) => expr_first(&x.expr)?,
        Expr::Lit(x) => x.lit.span(),
        Expr::MethodCall(x) => expr_first(&x.receiver)?,
        Expr::Paren(x) => x.paren_token.span.open(),
        Expr::Path(x) if x.qself.is_none() => path_first(&x.path)?,
        Expr::Reference(x) => x.and_token.span,
        Expr::Return(x) => x.return_token.span,
        Expr::Struct(x) if x.qself.is_none() => path_first(&x.path)?,
        Expr::Try(x) => expr_first(&x.expr)?,
        Expr::Tuple(x) => x.paren_token.span.open(),
        Expr::Unary(x) => match x.op {
            syn::UnOp::Deref(t) => t.span,
            syn::UnOp::Not(t) => t.span,
            syn::UnOp::Neg(t) => t.span,
            _ => return None,
        },
        Expr::If(x) => x.if_token.span,
        Expr::Match(x) => x.match_token.span,
        Expr::Closure(x) => closure_first(x),
        Expr::Macro(x) => path_first(&x.mac.path)?,
        Expr::Let(x) => x.let_token.span,
        Expr::Loop(x) => label_or(&x.label, x.loop_token.span),
        Expr::While(x) => label_or(&x.label, x.while_token.span),
        Expr::ForLoop(x) => label_or(&x.label, x.for_token.span),
        Expr::Unsafe(x) => x.unsafe_token.span,
        Expr::Async(x) => x.async_token.span,
        _ => return None,
    })
}

/// [`expr_ends`] for the other nodes the lowering takes spans of (statements, blocks,
/// macros, closures, attributes, literals, identifiers), by their concrete type; `None`
/// for a type not handled here (the caller asks `Spanned`, which prints the node).
fn node_ends(any: &dyn std::any::Any) -> Option<(PmSpan, PmSpan)> {
    if let Some(i) = any.downcast_ref::<syn::Ident>() {
        return Some((i.span(), i.span()));
    }
    if let Some(l) = any.downcast_ref::<syn::LitStr>() {
        return Some((l.span(), l.span()));
    }
    if let Some(l) = any.downcast_ref::<syn::Local>() {
        return Some((local_first(l), l.semi_token.spans[0]));
    }
    if let Some(b) = any.downcast_ref::<syn::Block>() {
        return Some((b.brace_token.span.open(), b.brace_token.span.close()));
    }
    if let Some(st) = any.downcast_ref::<syn::Stmt>() {
        return stmt_ends(st);
    }
    if let Some(m) = any.downcast_ref::<syn::Macro>() {
        return Some((path_first(&m.path)?, macro_close(m)));
    }
    if let Some(c) = any.downcast_ref::<syn::ExprClosure>() {
        return Some((closure_first(c), closure_last(c)?));
    }
    if let Some(t) = any.downcast_ref::<syn::ExprTuple>() {
        return Some((
            first_outer(&t.attrs).unwrap_or(t.paren_token.span.open()),
            t.paren_token.span.close(),
        ));
    }
    if let Some(f) = any.downcast_ref::<syn::FieldValue>() {
        let member = match &f.member {
            syn::Member::Named(i) => i.span(),
            syn::Member::Unnamed(i) => i.span,
        };
        let last = match f.colon_token {
            Some(_) => expr_last(&f.expr)?,
            None => member,
        };
        return Some((first_outer(&f.attrs).unwrap_or(member), last));
    }
    if let Some(a) = any.downcast_ref::<syn::Attribute>() {
        return Some((a.pound_token.span, a.bracket_token.span.close()));
    }
    any.downcast_ref::<syn::Item>()
        .and_then(item_ends)
        .or_else(|| any.downcast_ref::<syn::ImplItem>().and_then(impl_item_ends))
        .or_else(|| {
            any.downcast_ref::<syn::TraitItem>()
                .and_then(trait_item_ends)
        })
}

fn local_first(l: &syn::Local) -> PmSpan {
    first_outer(&l.attrs).unwrap_or(l.let_token.span)
}

/// [`expr_ends`] for a statement, as `Spanned` prints it (the `;` last when there is one).
fn stmt_ends(st: &syn::Stmt) -> Option<(PmSpan, PmSpan)> {
    match st {
        syn::Stmt::Local(l) => Some((local_first(l), l.semi_token.spans[0])),
        syn::Stmt::Item(i) => item_ends(i),
        syn::Stmt::Expr(e, semi) => Some((
            expr_first(e)?,
            match semi {
                Some(t) => t.spans[0],
                None => expr_last(e)?,
            },
        )),
        syn::Stmt::Macro(m) => Some((
            first_outer(&m.attrs).or_else(|| path_first(&m.mac.path))?,
            match m.semi_token {
                Some(t) => t.spans[0],
                None => macro_close(&m.mac),
            },
        )),
    }
}

fn macro_close(m: &syn::Macro) -> PmSpan {
    match &m.delimiter {
        syn::MacroDelimiter::Paren(p) => p.span.close(),
        syn::MacroDelimiter::Brace(b) => b.span.close(),
        syn::MacroDelimiter::Bracket(b) => b.span.close(),
    }
}

fn closure_first(c: &syn::ExprClosure) -> PmSpan {
    first_outer(&c.attrs)
        .or(c.lifetimes.as_ref().map(|l| l.for_token.span))
        .or(c.constness.map(|t| t.span))
        .or(c.movability.map(|t| t.span))
        .or(c.asyncness.map(|t| t.span))
        .or(c.capture.map(|t| t.span))
        .unwrap_or(c.or1_token.span)
}

/// The closure's body's last token; `None` when `Spanned` would print braces of its own
/// around the body (a declared return type and a body that is not a plain block).
fn closure_last(c: &syn::ExprClosure) -> Option<PmSpan> {
    let plain_block = matches!(&*c.body, Expr::Block(b) if b.attrs.is_empty() && b.label.is_none());
    if !matches!(c.output, syn::ReturnType::Default) && !plain_block {
        return None;
    }
    expr_last(&c.body)
}

fn label_or(label: &Option<syn::Label>, keyword: PmSpan) -> PmSpan {
    label.as_ref().map_or(keyword, |l| l.name.apostrophe)
}

fn path_first(p: &syn::Path) -> Option<PmSpan> {
    match &p.leading_colon {
        Some(c) => Some(c.spans[0]),
        None => p.segments.first().map(|s| s.ident.span()),
    }
}

/// The last path segments a type names through references, pointers and smart pointers
/// (`&mut Arc<C>` → `C`, `Arc`): what [`crate::lang::declared_type`] may read as the
/// receiver's type.
fn type_heads(t: &syn::Type) -> Vec<String> {
    let mut out = Vec::new();
    let mut t = t;
    loop {
        match t {
            syn::Type::Reference(r) => t = &r.elem,
            syn::Type::Paren(p) => t = &p.elem,
            syn::Type::Group(g) => t = &g.elem,
            syn::Type::Path(p) => {
                let Some(last) = p.path.segments.last() else {
                    return out;
                };
                out.push(last.ident.to_string());
                if let syn::PathArguments::AngleBracketed(a) = &last.arguments
                    && let Some(syn::GenericArgument::Type(inner)) = a.args.first()
                {
                    t = inner;
                    continue;
                }
                return out;
            }
            syn::Type::TraitObject(o) => {
                out.extend(o.bounds.iter().filter_map(|b| match b {
                    syn::TypeParamBound::Trait(tb) => {
                        tb.path.segments.last().map(|s| s.ident.to_string())
                    }
                    _ => None,
                }));
                return out;
            }
            syn::Type::ImplTrait(o) => {
                out.extend(o.bounds.iter().filter_map(|b| match b {
                    syn::TypeParamBound::Trait(tb) => {
                        tb.path.segments.last().map(|s| s.ident.to_string())
                    }
                    _ => None,
                }));
                return out;
            }
            _ => return out,
        }
    }
}

/// The first outer attribute's `#`: inner ones (`#![..]`) print inside the braces.
fn first_outer(attrs: &[syn::Attribute]) -> Option<PmSpan> {
    attrs
        .iter()
        .find(|a| matches!(a.style, syn::AttrStyle::Outer))
        .map(|a| a.pound_token.span)
}

fn vis_first(v: &syn::Visibility) -> Option<PmSpan> {
    match v {
        syn::Visibility::Public(p) => Some(p.span),
        syn::Visibility::Restricted(r) => Some(r.pub_token.span),
        syn::Visibility::Inherited => None,
    }
}

fn sig_first(sig: &syn::Signature) -> PmSpan {
    sig.constness
        .map(|t| t.span)
        .or(sig.asyncness.map(|t| t.span))
        .or(sig.unsafety.map(|t| t.span))
        .or(sig.abi.as_ref().map(|a| a.extern_token.span))
        .unwrap_or(sig.fn_token.span)
}

/// [`expr_ends`] for the items that hold bodies (functions, impls, modules, traits), in
/// the order `Spanned` prints them: outer attributes, visibility, qualifiers, keyword;
/// the closing brace (or `;`). `None` for the other items.
fn item_ends(i: &syn::Item) -> Option<(PmSpan, PmSpan)> {
    Some(match i {
        syn::Item::Fn(f) => (
            first_outer(&f.attrs)
                .or(vis_first(&f.vis))
                .unwrap_or(sig_first(&f.sig)),
            f.block.brace_token.span.close(),
        ),
        syn::Item::Impl(x) => (
            first_outer(&x.attrs)
                .or(x.defaultness.map(|t| t.span))
                .or(x.unsafety.map(|t| t.span))
                .unwrap_or(x.impl_token.span),
            x.brace_token.span.close(),
        ),
        syn::Item::Mod(m) => (
            first_outer(&m.attrs)
                .or(vis_first(&m.vis))
                .or(m.unsafety.map(|t| t.span))
                .unwrap_or(m.mod_token.span),
            match (&m.content, &m.semi) {
                (Some((b, _)), _) => b.span.close(),
                (None, Some(s)) => s.spans[0],
                (None, None) => return None,
            },
        ),
        syn::Item::Trait(t) if t.restriction.is_none() => (
            first_outer(&t.attrs)
                .or(vis_first(&t.vis))
                .or(t.unsafety.map(|x| x.span))
                .or(t.auto_token.map(|x| x.span))
                .unwrap_or(t.trait_token.span),
            t.brace_token.span.close(),
        ),
        _ => return None,
    })
}

/// [`item_ends`] for a function in an `impl` block.
fn impl_item_ends(i: &syn::ImplItem) -> Option<(PmSpan, PmSpan)> {
    match i {
        syn::ImplItem::Fn(f) => Some((
            first_outer(&f.attrs)
                .or(vis_first(&f.vis))
                .or(f.defaultness.map(|t| t.span))
                .unwrap_or(sig_first(&f.sig)),
            f.block.brace_token.span.close(),
        )),
        _ => None,
    }
}

/// [`item_ends`] for a function in a trait.
fn trait_item_ends(i: &syn::TraitItem) -> Option<(PmSpan, PmSpan)> {
    match i {
        syn::TraitItem::Fn(f) => Some((
            first_outer(&f.attrs).unwrap_or(sig_first(&f.sig)),
            match (&f.default, &f.semi_token) {
                (Some(b), _) => b.brace_token.span.close(),
                (None, Some(s)) => s.spans[0],
                (None, None) => return None,
            },
        )),
        _ => None,
    }
}

fn expr_last(e: &Expr) -> Option<PmSpan> {
    Some(match e {
        Expr::Array(x) => x.bracket_token.span.close(),
        Expr::Assign(x) => expr_last(&x.right)?,
        Expr::Await(x) => x.await_token.span,
        Expr::Binary(x) => expr_last(&x.right)?,
        Expr::Block(x) => x.block.brace_token.span.close(),
        Expr::Break(x) => match (&x.expr, &x.label) {
            (Some(v), _) => expr_last(v)?,
            (None, Some(_)) => return None,
            (None, None) => x.break_token.span,
        },
        Expr::Call(x) => x.paren_token.span.close(),
        Expr::Field(x) => match &x.member {
            syn::Member::Named(i) => i.span(),
            syn::Member::Unnamed(i) => i.span,
        },
        Expr::Index(x) => x.bracket_token.span.close(),
        Expr::Lit(x) => x.lit.span(),
        Expr::MethodCall(x) => x.paren_token.span.close(),
        Expr::Paren(x) => x.paren_token.span.close(),
        Expr::Path(x) if x.qself.is_none() => path_last(&x.path)?,
        Expr::Reference(x) => expr_last(&x.expr)?,
        Expr::Return(x) => match &x.expr {
            Some(v) => expr_last(v)?,
            None => x.return_token.span,
        },
        Expr::Struct(x) => x.brace_token.span.close(),
        Expr::Try(x) => x.question_token.span,
        Expr::Tuple(x) => x.paren_token.span.close(),
        Expr::Unary(x) => expr_last(&x.expr)?,
        Expr::If(x) => match &x.else_branch {
            Some((_, v)) => expr_last(v)?,
            None => x.then_branch.brace_token.span.close(),
        },
        Expr::Match(x) => x.brace_token.span.close(),
        Expr::Closure(x) => closure_last(x)?,
        Expr::Macro(x) => macro_close(&x.mac),
        Expr::Let(x) => expr_last(&x.expr)?,
        Expr::Loop(x) => x.body.brace_token.span.close(),
        Expr::While(x) => x.body.brace_token.span.close(),
        Expr::ForLoop(x) => x.body.brace_token.span.close(),
        Expr::Unsafe(x) => x.block.brace_token.span.close(),
        Expr::Async(x) => x.block.brace_token.span.close(),
        _ => return None,
    })
}

fn path_last(p: &syn::Path) -> Option<PmSpan> {
    let seg = p.segments.last()?;
    match &seg.arguments {
        syn::PathArguments::None => Some(seg.ident.span()),
        syn::PathArguments::AngleBracketed(a) => Some(a.gt_token.span),
        syn::PathArguments::Parenthesized(_) => None,
    }
}

/// The position just after the block comment that starts at `i` (at `/*`; Rust block
/// comments nest), or `None` when the text ends inside it.
pub(crate) fn block_comment_end(b: &[u8], mut i: usize) -> Option<usize> {
    let mut open = 0usize;
    loop {
        if b[i..].starts_with(b"/*") {
            open += 1;
            i += 2;
        } else if b[i..].starts_with(b"*/") {
            open -= 1;
            i += 2;
            if open == 0 {
                return Some(i);
            }
        } else if i >= b.len() {
            return None;
        } else {
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every token's span (groups: the whole group and each delimiter), mapped by
    /// [`super::SpanLines`] from line and column, is the byte range `Span::byte_range`
    /// gives: ASCII and non-ASCII texts (multi-byte characters in strings, comments and
    /// identifiers, before and after tokens on a line), CRLF line ends, a long non-ASCII
    /// line (the fallback), and a text parsed from an offset in a larger one, as a piece
    /// of a large file is.
    #[test]
    fn span_lines_agree_with_byte_range() {
        use std::str::FromStr;
        fn walk(ts: proc_macro2::TokenStream, f: &mut dyn FnMut(proc_macro2::Span)) {
            for t in ts {
                if let proc_macro2::TokenTree::Group(g) = &t {
                    f(g.span_open());
                    f(g.span_close());
                    walk(g.stream(), f);
                }
                f(t.span());
            }
        }
        let long = format!(
            "fn big() {{ let s = \"{}\"; let é = 1; }}\n",
            "ü".repeat(3000)
        );
        let texts = [
            "fn main() {\n    let x = foo(1, \"two\");\n}\n".to_string(),
            "// ü café\nfn f() -> &'static str { \"naïve — ok\" }\nfn g(ß: u8) { h(ß, '€') }\n"
                .to_string(),
            "fn a() {\r\n\tlet v = vec![1, 2];\r\n /* ∑ */ b(v)\r\n}\r\n".to_string(),
            long,
            std::fs::read_to_string(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lang/rust.rs"),
            )
            .unwrap(),
        ];
        let mut checked = 0usize;
        for body in &texts {
            for head in ["", "use x; // é\nstruct S; fn q() {} ", "/* é中 */ "] {
                let text = format!("{head}{body}");
                let prefix = head.len();
                let lines = super::SpanLines::new(&text);
                let line0 = lines.line_of(prefix);
                let ts = proc_macro2::TokenStream::from_str(&text[prefix..]).unwrap();
                walk(ts, &mut |sp| {
                    let r = sp.byte_range();
                    for (lc, want) in [(sp.start(), r.start), (sp.end(), r.end)] {
                        if let Some(got) = lines.byte(&text, prefix, line0, lc.line, lc.column) {
                            checked += 1;
                            assert_eq!(got, want + prefix, "{:?} in {:?}", lc, &text[..40]);
                        }
                    }
                });
                proc_macro2::extra::invalidate_current_thread_spans();
            }
        }
        assert!(checked > 10_000, "{checked}");
    }

    /// Every expression of the Rust fixtures, the examples and a generated chain: where
    /// [`super::expr_ends`] answers, it gives the byte range `Spanned::span` gives.
    #[test]
    fn expression_ends_agree_with_spanned() {
        use syn::spanned::Spanned;
        use syn::visit::Visit;
        struct V(usize, usize, usize, usize);
        fn agree(
            got: (proc_macro2::Span, proc_macro2::Span),
            want: proc_macro2::Span,
            t: &dyn quote::ToTokens,
        ) {
            assert_eq!(
                got.0.byte_range().start..got.1.byte_range().end,
                want.byte_range(),
                "{}",
                t.to_token_stream()
            );
        }
        /// [`super::node_ends`] of a node of a concrete type, where it answers.
        fn node<T: quote::ToTokens + 'static>(v: &mut V, n: &T) {
            if let Some(got) = super::node_ends(n as &dyn std::any::Any) {
                v.3 += 1;
                agree(got, n.span(), n);
            }
        }
        impl<'a> Visit<'a> for V {
            fn visit_item(&mut self, i: &'a syn::Item) {
                if let Some(got) = super::item_ends(i) {
                    self.2 += 1;
                    agree(got, i.span(), i);
                }
                syn::visit::visit_item(self, i);
            }
            fn visit_impl_item(&mut self, i: &'a syn::ImplItem) {
                if let Some(got) = super::impl_item_ends(i) {
                    self.2 += 1;
                    agree(got, i.span(), i);
                }
                syn::visit::visit_impl_item(self, i);
            }
            fn visit_trait_item(&mut self, i: &'a syn::TraitItem) {
                if let Some(got) = super::trait_item_ends(i) {
                    self.2 += 1;
                    agree(got, i.span(), i);
                }
                syn::visit::visit_trait_item(self, i);
            }
            fn visit_local(&mut self, l: &'a syn::Local) {
                node(self, l);
                syn::visit::visit_local(self, l);
            }
            fn visit_block(&mut self, b: &'a syn::Block) {
                node(self, b);
                syn::visit::visit_block(self, b);
            }
            fn visit_stmt(&mut self, st: &'a syn::Stmt) {
                node(self, st);
                syn::visit::visit_stmt(self, st);
            }
            fn visit_macro(&mut self, m: &'a syn::Macro) {
                node(self, m);
                syn::visit::visit_macro(self, m);
            }
            fn visit_expr_closure(&mut self, c: &'a syn::ExprClosure) {
                node(self, c);
                syn::visit::visit_expr_closure(self, c);
            }
            fn visit_expr_tuple(&mut self, t: &'a syn::ExprTuple) {
                node(self, t);
                syn::visit::visit_expr_tuple(self, t);
            }
            fn visit_field_value(&mut self, f: &'a syn::FieldValue) {
                node(self, f);
                syn::visit::visit_field_value(self, f);
            }
            fn visit_attribute(&mut self, a: &'a syn::Attribute) {
                node(self, a);
                syn::visit::visit_attribute(self, a);
            }
            fn visit_lit_str(&mut self, l: &'a syn::LitStr) {
                node(self, l);
            }
            fn visit_ident(&mut self, i: &'a proc_macro2::Ident) {
                node(self, i);
            }
            fn visit_expr(&mut self, e: &'a syn::Expr) {
                self.0 += 1;
                if let Some((a, b)) = super::expr_ends(e) {
                    self.1 += 1;
                    let want = e.span().byte_range();
                    assert_eq!(
                        a.byte_range().start..b.byte_range().end,
                        want,
                        "{}",
                        quote::ToTokens::to_token_stream(e)
                    );
                }
                syn::visit::visit_expr(self, e);
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts: Vec<String> = Vec::new();
        let mut dirs = vec![
            root.join("fixtures"),
            root.join("examples"),
            root.join("src"),
        ];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    texts.push(std::fs::read_to_string(&p).unwrap());
                }
            }
        }
        let chain: String = (0..200)
            .map(|i| format!(".m{i}(a[{i}], &-x?, [1; 2])"))
            .collect();
        texts.push(format!(
            "fn f() {{ let v = #[a] S {{ a: 1 }}.b::<T>(){chain}.await?; return 'l: {{ if x {{ 1 }} else if y {{ (2,) }} else {{ match z {{ _ => ::p::q }} }} }}; let w = {{ #![allow(x)] 1 }} + match x {{ #![a] _ => 1 }}; }}"
        ));
        let generated = texts.last().unwrap();
        assert!(syn::parse_file(generated).is_ok(), "{generated}");
        texts.push(
            "#![allow(x)]\n/// d\npub(crate) const unsafe extern \"C\" fn f() { #![allow(y)] }\nasync fn g() {}\npub mod m;\nunsafe mod n { #![a] }\npub unsafe auto trait T { fn a(); /** d */ async fn b() {} }\n#[a] default unsafe impl<X> T for S<X> { #![b] pub(in crate::m) default fn c(&self) {} const C: u8 = 1; }\nimpl S { fn d() {} }\n".to_string(),
        );
        let items = texts.last().unwrap();
        assert!(syn::parse_file(items).is_ok(), "{items}");
        texts.push(
            "fn h() { let c = move |a: u8| a + 1; let d = async move || { 2 }; let e = || -> u8 { 3 }; let f = |x| -> u8 { x }; let t = (1, 2); let s = S { a, b: 2, #[c] d: 3 }; 'o: loop { while x { for i in y { unsafe { z!(i) } } } } let g = async { 4 }; if let Some(x) = y { vec![x]; } m! { q } #[inline] let k = 1; }\n".to_string(),
        );
        let nodes = texts.last().unwrap();
        assert!(syn::parse_file(nodes).is_ok(), "{nodes}");
        let mut v = V(0, 0, 0, 0);
        for t in &texts {
            if let Ok(file) = syn::parse_file(t) {
                v.visit_file(&file);
            }
        }
        // Most expressions take the fast way.
        assert!(v.0 > 10_000 && v.1 * 10 > v.0 * 9, "{} of {}", v.1, v.0);
        assert!(v.2 > 1_000, "{} items", v.2);
        assert!(v.3 > 50_000, "{} other nodes", v.3);
    }

    use super::*;

    /// Every `.rs` file under `dir`, recursively (symlinks not followed).
    fn rust_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                rust_files(&e.path(), out);
            } else if t.is_file() && e.path().extension().is_some_and(|x| x == "rs") {
                out.push(e.path());
            }
        }
    }

    /// Parsing in pieces of whole items lowers to the same model as parsing the file whole,
    /// with pieces as small as they come (one item each), on this project's own sources and
    /// fixtures, and on any directory named by `IDEMLINT_PIECES_DIR` (to check more code).
    #[test]
    fn piecewise_parse_lowers_as_the_whole_file() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        for d in ["src", "tests", "examples", "idemkey"] {
            rust_files(&root.join(d), &mut files);
        }
        if let Some(d) = std::env::var_os("IDEMLINT_PIECES_DIR") {
            rust_files(std::path::Path::new(&d), &mut files);
        }
        assert!(files.len() > 50, "{} files", files.len());
        let (mut split, mut differ) = (0, Vec::new());
        for f in &files {
            let Ok(text) = std::fs::read_to_string(f) else {
                continue;
            };
            let whole = lower_pieces(&text, usize::MAX, 0);
            let pieces = lower_pieces(&text, 0, 1);
            if top_level_pieces(&text[stripped_prefix(&text)..], 1).is_some_and(|p| p.len() > 1) {
                split += 1;
            }
            if format!("{whole:?}") != format!("{pieces:?}") {
                differ.push(f.display().to_string());
            }
        }
        assert!(differ.is_empty(), "{} differ: {differ:?}", differ.len());
        assert!(split * 2 > files.len(), "{split} of {} split", files.len());
    }

    /// `#!` is a shebang line unless `[` follows after whitespace and plain comments
    /// (rustc's and syn's rule): then it is an inner attribute, parsed and lowered.
    #[test]
    fn shebang_is_told_from_an_inner_attribute_as_rustc_does() {
        for attr in [
            "#![allow(x)]\n",
            "#! [allow(x)]\n",
            "#!//c\n[allow(x)]\n",
            "#!/*c /* d */ */[allow(x)]\n",
            "#!\u{200e}[allow(x)]\n",
        ] {
            assert_eq!(stripped_prefix(attr), 0, "{attr:?}");
            let m = lower(&format!("{attr}fn f() {{}}\n"));
            assert!(m.errors.is_empty(), "{attr:?}: {:?}", m.errors);
            assert_eq!(m.annotations.len(), 1, "{attr:?}");
        }
        for (shebang, len) in [
            ("#!/usr/bin/env run-cargo-script\n", 31),
            ("#!///doc\n[allow(x)]\n", 8),
            ("\u{feff}#!/bin/x\n", 11),
        ] {
            assert_eq!(stripped_prefix(shebang), len, "{shebang:?}");
        }
    }

    #[test]
    fn pieces_end_only_where_an_item_ends() {
        let src = "//! doc\n#![allow(x)]\nconst A: u8 = { 1 };\n/// doc\nfn f() { let s = \"}\"; let c = '}'; let r = r#\"}\"#; }\n/* } /* } */ */ struct S<'a>(&'a str);\nconst B: u8 = { 2 } + 1;\nimpl S<'_> { fn g(&self) -> char { b'}' as char } }\n#[test] fn t() {}\n";
        let pieces = top_level_pieces(src, 1).expect("lexes");
        let texts: Vec<&str> = pieces.iter().map(|r| src[r.clone()].trim()).collect();
        assert_eq!(
            texts,
            [
                "//! doc\n#![allow(x)]\nconst A: u8 = { 1 };",
                "/// doc\nfn f() { let s = \"}\"; let c = '}'; let r = r#\"}\"#; }",
                "/* } /* } */ */ struct S<'a>(&'a str);",
                "const B: u8 = { 2 } + 1;",
                "impl S<'_> { fn g(&self) -> char { b'}' as char } }",
                "#[test] fn t() {}",
            ]
        );
        // Unicode whitespace ends a word: `r"\"` after U+00A0 is a raw string, so the `//`
        // after it starts a comment and no piece ends inside it (a break-it helper's case:
        // the comment's text was parsed as code).
        let nbsp = "const A: &str =\u{a0}r\"\\\"; // \"; fn hidden() {}\nfn b() {}\n";
        let pieces = top_level_pieces(nbsp, 1).expect("lexes");
        assert_eq!(pieces.len(), 2, "{pieces:?}");
        assert_eq!(&nbsp[pieces[0].clone()], "const A: &str =\u{a0}r\"\\\";");
        assert!(nbsp[pieces[1].clone()].starts_with(" // \"; fn hidden() {}\n"));
        // Unbalanced or unterminated text is left to the whole-file parse.
        for bad in [
            "fn f() {",
            "fn f() }",
            "const S: &str = \"x;",
            "/* open",
            "r#\"x\"",
        ] {
            assert_eq!(top_level_pieces(bad, 1), None, "{bad}");
        }
        // A file that does not parse reports the whole-file error, piecewise or not.
        let broken = "fn a() {}\nfn b() { let = ; }\nfn c() {}\n";
        assert_eq!(
            format!("{:?}", lower_pieces(broken, 0, 1)),
            format!("{:?}", lower_pieces(broken, usize::MAX, 0))
        );
        assert_eq!(lower_pieces(broken, 0, 1).errors.len(), 1);
    }

    fn call<'m>(m: &'m FileModel, callee: &str) -> &'m Call {
        m.calls
            .iter()
            .find(|c| c.callee == callee)
            .unwrap_or_else(|| panic!("no call {callee}"))
    }

    #[test]
    fn closure_argument_of_retry_is_a_lambda_scope() {
        let src = "fn f() { backoff::future::retry(policy, || async { let k = Uuid::new_v4(); send(k).await }); }";
        let m = lower(src);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let retry = call(&m, "retry");
        assert_eq!(retry.path, vec!["backoff", "future"]);
        let lambda = retry.args[1].lambda.expect("closure arg");
        match &m.scopes[lambda].kind {
            ScopeKind::Lambda(l) => {
                assert_eq!(
                    l.owner_call,
                    m.calls.iter().position(|c| c.callee == "retry")
                );
                assert_eq!(l.arg_index, 1);
            }
            k => panic!("{k:?}"),
        }
        let new_v4 = call(&m, "new_v4");
        assert_eq!(new_v4.scope, lambda);
        assert_eq!(&src[new_v4.span.start..new_v4.span.end], "Uuid::new_v4()");
        let k = m.bindings.iter().find(|b| b.name == "k").unwrap();
        assert_eq!(k.scope, lambda);
    }

    #[test]
    fn backon_receiver_closure() {
        let src = "async fn f() { let r = (|| async { charge(Uuid::new_v4()).await }).retry(ExponentialBuilder::default()).await; }";
        let m = lower(src);
        let retry = call(&m, "retry");
        let l = retry.receiver_lambda.expect("receiver closure");
        assert!(matches!(&m.scopes[l].kind, ScopeKind::Lambda(li) if li.owner_call.is_some()));
        assert_eq!(call(&m, "new_v4").scope, l);
    }

    #[test]
    fn format_and_method_chains_flow_into_values() {
        let src = r#"fn f(id: &str) { let key = Uuid::new_v4(); let h = format!("{}-{key}", id); req.header("Idempotency-Key", h.to_string()); }"#;
        let m = lower(src);
        let h = m.bindings.iter().find(|b| b.name == "h").unwrap();
        let atoms = &m.values[h.value.unwrap()].atoms;
        let names: Vec<&str> = atoms
            .iter()
            .filter_map(|a| match a {
                Atom::Name { name, .. } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        assert!(names.contains(&"key") && names.contains(&"id"), "{names:?}");
        let header = call(&m, "header");
        assert_eq!(header.receiver.as_deref(), Some("req"));
        assert_eq!(
            m.values[header.args[0].value].literal.as_deref(),
            Some("Idempotency-Key")
        );
    }

    #[test]
    fn impl_trait_is_a_type_with_supertype() {
        let src = "#[async_trait] impl Middleware for KeyMw { async fn handle(&self, req: Request, next: Next<'_>) -> Result<Response> { next.run(req).await } }";
        let m = lower(src);
        let t = m
            .scopes
            .iter()
            .find_map(|s| match &s.kind {
                ScopeKind::Type(t) => Some(t),
                _ => None,
            })
            .unwrap();
        assert_eq!(t.name, "KeyMw");
        assert_eq!(t.supertypes, vec!["Middleware"]);
        assert!(m.scopes.iter().any(
            |s| matches!(&s.kind, ScopeKind::Function(f) if f.name == "handle" && f.params.len() == 2)
        ));
    }

    /// The loops of a file, in order.
    fn loop_infos(m: &FileModel) -> Vec<&LoopInfo> {
        m.scopes
            .iter()
            .filter_map(|s| match &s.kind {
                ScopeKind::Loop(l) => Some(l),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn retry_loop_and_tick_loop_flags() {
        let src = "async fn f() { for attempt in 0..3 { match send().await { Ok(r) => return Ok(r), Err(e) => continue } } loop { interval.tick().await; run().await; } }";
        let m = lower(src);
        let loops = loop_infos(&m);
        assert_eq!(loops.len(), 2);
        assert!(loops[0].handles_error && loops[0].has_exit);
        assert_eq!(loops[0].header, "attempt in 0..3");
        assert!(loops[1].awaits_tick && !loops[1].handles_error);
    }

    /// A `break`, `return` or `?` taken only after a failure gives up; it is no exit on
    /// success, so a periodic cycle that logs its errors and stops on a fatal one is no retry
    /// loop, while one that leaves when the call succeeds is.
    #[test]
    fn exits_after_a_failure_are_no_exit_on_success() {
        let src = "async fn f() { loop { if let Err(e) = cycle().await { if e.fatal() { break; } } sleep(d).await; } loop { prepare().await?; match send().await { Err(e) => return Err(e), _ => {} } } loop { match send().await { Ok(r) => return Ok(r), Err(e) => { sleep(d).await; } } } }";
        let m = lower(src);
        let loops = loop_infos(&m);
        assert_eq!(loops.len(), 3);
        assert!(loops[0].handles_error && !loops[0].has_exit);
        assert!(!loops[1].has_exit);
        assert!(loops[2].handles_error && loops[2].has_exit);
    }

    /// An exit before the construct that handles the failure (a shutdown flag checked at the
    /// top of a periodic cycle) does not follow the operation's success: no retry loop. An
    /// exit on the success arm of the same `match`, written before its `Err` arm, does.
    #[test]
    fn an_exit_before_the_failure_handling_is_no_exit_on_success() {
        let src = "async fn f() { loop { if *stop.read() { break; } if let Err(e) = cycle().await { log(e); } sleep(d).await; } loop { if *stop.read() { break; } match send().await { Ok(r) => return Ok(r), Err(e) => sleep(d).await, } } }";
        let m = lower(src);
        let loops = loop_infos(&m);
        assert_eq!(loops.len(), 2);
        assert!(loops[0].handles_error && !loops[0].has_exit);
        assert!(loops[1].handles_error && loops[1].has_exit);
    }

    /// `if let Ok(r) = send() { return r }` ignores a failure, and the loop goes round
    /// again: a retry loop. An `else` that gives up (`else { break }`, a drain of a queue)
    /// makes it none, and so does a success branch that stays in the loop (a consumer, a
    /// worker parsing each message's fields).
    #[test]
    fn if_let_ok_with_an_exit_is_a_retry_loop() {
        let src = "async fn f() { for _ in 0..3 { let k = key(); if let Ok(r) = send(k).await { return r; } } loop { if let Ok(c) = connect().await { break c; } sleep(d).await; } loop { if let Ok(x) = rx.try_recv() { handle(x); } else { break; } } loop { if let Ok(m) = rx.recv().await { handle(m); } } loop { let Some(msg) = q.next().await else { break }; if let Ok(a) = msg.amount.parse::<u64>() { charge(a).await; } } }";
        let m = lower(src);
        let loops = loop_infos(&m);
        assert_eq!(loops.len(), 5);
        assert!(loops[0].handles_error && loops[0].has_exit);
        assert!(loops[1].handles_error && loops[1].has_exit);
        assert!(!loops[2].handles_error);
        assert!(!loops[3].handles_error);
        assert!(!loops[4].handles_error);
        assert!(loops[0].is_retry() && loops[1].is_retry());
        assert!(!loops[2].is_retry() && !loops[3].is_retry() && !loops[4].is_retry());
    }

    #[test]
    fn bom_and_shebang_offsets_are_in_original_text() {
        let src = "\u{feff}#!/usr/bin/env run\nfn f() { let k = Uuid::new_v4(); }";
        let m = lower(src);
        assert!(m.errors.is_empty(), "{:?}", m.errors);
        let c = call(&m, "new_v4");
        assert_eq!(&src[c.span.start..c.span.end], "Uuid::new_v4()");
    }

    #[test]
    fn parse_error_has_location() {
        let src = "fn f() {\n  let x = ;\n}";
        let m = lower(src);
        assert_eq!(m.errors.len(), 1);
        assert!(m.errors[0].span.start > 8);
        let eof = lower("fn f() {");
        assert_eq!(eof.errors.len(), 1);
    }

    #[test]
    fn struct_field_init_and_assignment() {
        let src = "fn f() { let p = Params { idempotency_key: Some(Uuid::new_v4().to_string()), amount: 5 }; self.idempotency_key = x; }";
        let m = lower(src);
        assert_eq!(m.field_inits.len(), 2);
        assert_eq!(m.field_inits[0].name, "idempotency_key");
        assert!(
            m.values[m.field_inits[0].value]
                .atoms
                .iter()
                .any(|a| matches!(a, Atom::Call(c) if m.calls[*c].callee == "new_v4"))
        );
        assert_eq!(m.assigns[0].name, "idempotency_key");
    }

    #[test]
    fn pathological_nesting_is_refused_before_syn() {
        for src in [
            format!("fn f() {{ let x = {}1; }}", "-".repeat(20_000)),
            format!("fn f() {{ {}{} }}", "{".repeat(20_000), "}".repeat(20_000)),
            format!(
                "type T = {}u8{};",
                "Vec<".repeat(20_000),
                ">".repeat(20_000)
            ),
        ] {
            let m = lower(&src);
            assert!(
                m.errors[0].message.contains("nesting deeper"),
                "{:?}",
                m.errors
            );
        }
        // Ordinary code with many `<`/`>` comparisons and closures is fine.
        let ok = "fn f(a: i32) -> bool { a < 3 && a > -1 && !(a == 2) }";
        assert!(lower(ok).errors.is_empty());
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let depth = 3000;
        let src = format!(
            "fn f() {{ let x = {}1{}; }}",
            "(".repeat(depth),
            ")".repeat(depth)
        );
        let handle = std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn(move || lower(&src))
            .unwrap();
        let m = handle.join().unwrap();
        assert!(m.errors.iter().any(|e| e.message.contains("nesting")));
    }
}
