//! Position conversion. The model stores byte offsets; every output converts them here.

/// Maps byte offsets of one text to lines and columns.
#[derive(Clone, Debug)]
pub struct LineIndex {
    /// Byte offset of the start of each line; `starts[0] == 0`.
    starts: Vec<usize>,
    len: usize,
}

/// A position: `line` is 1-based; `column` is 1-based and counted in Unicode scalar values
/// (chars) from the start of the line; `byte_column` is 1-based in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub line: usize,
    pub column: usize,
    pub byte_column: usize,
}

impl LineIndex {
    /// Indexes `text`; `\n`, `\r\n` and a lone `\r` (old Mac line endings, which Java and
    /// Kotlin accept) each end a line.
    pub fn new(text: &str) -> LineIndex {
        let b = text.as_bytes();
        let mut starts = vec![0];
        starts.extend(
            b.iter()
                .enumerate()
                .filter(|(i, c)| **c == b'\n' || (**c == b'\r' && b.get(i + 1) != Some(&b'\n')))
                .map(|(i, _)| i + 1),
        );
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    /// The position of byte `offset` (clamped to the text) in `text`, which must be the
    /// text this index was built from.
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let offset = offset.min(self.len);
        let line0 = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.starts[line0];
        let mut end = offset;
        while end > start && !text.is_char_boundary(end) {
            end -= 1;
        }
        let mut chars = text.get(start..end).map(|s| s.chars().count()).unwrap_or(0);
        // A byte-order mark is not a character an editor shows: columns on the first line
        // count from after it.
        if line0 == 0 && end >= 3 && text.starts_with('\u{feff}') {
            chars -= 1;
        }
        Position {
            line: line0 + 1,
            column: chars + 1,
            byte_column: offset - start + 1,
        }
    }

    /// Byte offset of the start of 1-based `line`, if it exists.
    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line.checked_sub(1)?).copied()
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }
}

/// The candidate `word` most likely meant, for "did you mean …" hints on rule ids,
/// configuration keys and catalogue keys: the closest within edit distance 3 (Levenshtein
/// over chars); failing that, a candidate that `word` (at least 3 chars) is a plain prefix
/// of (`key-in-retry` → `key-in-retry-scope`), the shortest such. Ties go to the candidate
/// that sorts first. `None` when nothing is close.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    did_you_mean_within(word, candidates, 3)
}

/// [`did_you_mean`] with another edit-distance limit (`max_distance`), for short words
/// such as subcommand names, where 3 edits turn any word into any other.
pub fn did_you_mean_within<'a>(
    word: &str,
    candidates: &[&'a str],
    max_distance: usize,
) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (levenshtein(word, c), *c))
        .filter(|(d, _)| *d <= max_distance)
        .min()
        .map(|(_, c)| c)
        .or_else(|| {
            candidates
                .iter()
                .filter(|c| word.chars().count() >= 3 && c.starts_with(word))
                .min_by_key(|c| (c.len(), **c))
                .copied()
        })
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_takes_close_words_and_plain_prefixes() {
        let ids = [
            "key-in-callback-retry",
            "key-in-interceptor",
            "key-in-retry-scope",
            "time-in-key",
        ];
        assert_eq!(
            did_you_mean("key-in-retry-scop", &ids),
            Some("key-in-retry-scope")
        );
        // Too far for the edit distance, but a prefix.
        assert_eq!(
            did_you_mean("key-in-retry", &ids),
            Some("key-in-retry-scope")
        );
        assert_eq!(did_you_mean("time", &ids), Some("time-in-key"));
        assert_eq!(
            did_you_mean("key-in-inter", &ids),
            Some("key-in-interceptor")
        );
        // Two characters are not enough to guess from; nothing close at all.
        assert_eq!(
            did_you_mean("ti", &["time-in-key", "unused-suppression"]),
            None
        );
        assert_eq!(did_you_mean("zzzzzz", &ids), None);
    }

    #[test]
    fn positions_are_one_based_and_char_counted() {
        let text = "ab\nüx = 1\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.position(text, 0).line, 1);
        let x = text.find('x').unwrap();
        let p = idx.position(text, x);
        assert_eq!((p.line, p.column, p.byte_column), (2, 2, 3));
        assert_eq!(idx.position(text, text.len()).line, 3);
        let cr = "a\rb\r\nc";
        let idx = LineIndex::new(cr);
        assert_eq!(idx.position(cr, 2).line, 2);
        assert_eq!(idx.position(cr, 5).line, 3);
    }
}

/// True for characters that must not reach a terminal raw: C0 and C1 controls (except tab
/// and line breaks, which callers handle), DEL, and the Unicode bidirectional overrides
/// and isolates (which reorder what a reader sees).
fn is_dangerous(c: char) -> bool {
    (c.is_control() && !matches!(c, '\t' | '\n' | '\r'))
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with each character `escape` selects replaced by what `write` appends for it.
fn escape_where(
    s: &str,
    escape: impl Fn(char) -> bool,
    write: impl Fn(&mut String, char),
) -> String {
    if !s.chars().any(&escape) {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if escape(c) {
            write(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out
}

/// `s` with every control character (including line breaks and tab), DEL and bidi override
/// escaped Rust-style (`\u{1b}`, `\n`), for one-line output of text that came from input
/// (file names, messages quoting source, configuration values).
pub fn escape_controls(s: &str) -> String {
    escape_where(
        s,
        |c| c.is_control() || is_dangerous(c),
        |o, c| o.extend(c.escape_default()),
    )
}

/// [`escape_controls_multiline`] for TOML text shown to a reader (`idemlint catalogue`):
/// each dangerous character becomes the TOML escape `\uXXXX` (they can only stand inside
/// strings there, where the escape reads back as the same character).
pub fn escape_controls_toml(s: &str) -> String {
    escape_where(s, is_dangerous, |o, c| {
        o.push_str(&format!("\\u{:04X}", c as u32))
    })
}

/// [`escape_controls`] for multi-line text: line breaks and tabs are kept, every other
/// control character is escaped.
pub fn escape_controls_multiline(s: &str) -> String {
    escape_where(s, is_dangerous, |o, c| o.extend(c.escape_default()))
}

/// `text` for rendering as a source snippet: the same length in bytes and in chars (so
/// spans and columns still fit), with each dangerous character (see [`escape_controls`])
/// replaced by printable characters of the same UTF-8 length: `?` for one byte, `¿` for
/// two, U+FFFD for three. A lone `\r` becomes `\n`: it ends a line in Java and Kotlin
/// (JLS 3.4) as in every format's line numbers (1-based, `\n`, `\r\n` or a lone `\r`),
/// and the snippet's lines must be those lines (a renderer that breaks lines at `\n`
/// only would draw the whole file as line 1).
pub fn sanitize_snippet(text: &str) -> std::borrow::Cow<'_, str> {
    let b = text.as_bytes();
    let lone_cr = |i: usize| b[i] == b'\r' && b.get(i + 1) != Some(&b'\n');
    if !text
        .char_indices()
        .any(|(i, c)| is_dangerous(c) || (c == '\r' && lone_cr(i)))
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if c == '\r' && lone_cr(i) {
            out.push('\n');
        } else if is_dangerous(c) {
            out.push(match c.len_utf8() {
                1 => '?',
                2 => '¿',
                _ => '\u{fffd}',
            });
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod escape_tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_snippets_keep_their_length() {
        assert_eq!(
            escape_controls("a\u{1b}]0;x\u{7}b\n"),
            "a\\u{1b}]0;x\\u{7}b\\n"
        );
        assert_eq!(escape_controls_multiline("a\u{1b}\nb"), "a\\u{1b}\nb");
        let s = "x\u{1b}[31m\u{9b}\u{202e}y\r\nz\rw";
        let t = sanitize_snippet(s);
        assert_eq!(t.len(), s.len());
        assert_eq!(t.chars().count(), s.chars().count());
        assert!(!t.chars().any(is_dangerous));
        assert!(t.contains("\r\n") && t.contains("z\nw"));
        // A file with lone `\r` line breaks keeps its lines.
        assert_eq!(sanitize_snippet("a\rb\r\nc\r").lines().count(), 3);
    }
}

/// Whether `word` occurs in `text` as a whole identifier: not preceded or followed by an
/// identifier character (`attempt` in `attempt: attempt as u32`, not in `attempts`).
pub fn has_word(text: &str, word: &str) -> bool {
    if word.is_empty() {
        return false;
    }
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(ident)
            && !text[i + word.len()..].chars().next().is_some_and(ident)
    })
}

#[cfg(test)]
mod word_tests {
    #[test]
    fn whole_identifiers_only() {
        assert!(super::has_word("(x, attempt as u32)", "attempt"));
        assert!(!super::has_word("(attempts, retry_attempt)", "attempt"));
        assert!(!super::has_word("", "attempt"));
    }
}

/// The column miette gives for a span at byte `offset` of `text` (`byte_column`: bytes
/// from the line's start to the span's, 0-based), counted in characters instead, as every
/// report counts columns (docs/json.md); `byte_column` itself when that slice is not on
/// character boundaries.
pub fn char_column(text: &str, offset: usize, byte_column: usize) -> usize {
    text.get(offset.saturating_sub(byte_column)..offset)
        .map_or(byte_column, |head| head.chars().count())
}

/// `text` with the insides of comments (`// ..`, `/* .. */`) and of string and character
/// literals (`".."` with `\` escapes, `'x'`) replaced by spaces, line breaks kept, so
/// byte offsets and lines stay where they were. A lexical approximation shared by Rust,
/// Java and Kotlin, for searches that must not see code words inside comments or strings;
/// a `'` that starts no one-character literal (a Rust lifetime) is left alone, and Kotlin
/// string templates are blanked with their string.
pub fn blank_comments_and_strings(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for x in &mut out[from..to] {
            if *x != b'\n' {
                *x = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let end = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                blank(&mut out, i, end);
                i = end;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
                blank(&mut out, i, end);
                i = end;
            }
            b'"' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != b'"' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                let end = (j + 1).min(b.len());
                blank(&mut out, i + 1, end.saturating_sub(1).max(i + 1));
                i = end;
            }
            b'\'' => {
                // `'x'` or `'\n'`: a character literal; anything else (a lifetime) is code.
                let len = if b.get(i + 1) == Some(&b'\\') {
                    b[i + 2..]
                        .iter()
                        .take(12)
                        .position(|&c| c == b'\'')
                        .map(|p| p + 3)
                } else {
                    let ch = text[i + 1..].chars().next().map_or(0, char::len_utf8);
                    (ch > 0 && b.get(i + 1 + ch) == Some(&b'\'')).then_some(ch + 2)
                };
                match len {
                    Some(n) => {
                        blank(&mut out, i + 1, i + n - 1);
                        i += n;
                    }
                    None => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    // Only ASCII bytes were replaced, each whole character inside a literal or comment
    // (UTF-8 continuation bytes included), so the result is UTF-8; a cut through a
    // character at a malformed end is repaired rather than trusted.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod blank_tests {
    use super::blank_comments_and_strings as blank;

    #[test]
    fn comments_and_literals_are_blanked_in_place() {
        let t = "a(x) // no_ack: true\nb(\"no_ack: true\", 'c', '\\n') /* RECEIVE */ c<'a>(é)";
        let out = blank(t);
        assert_eq!(out.len(), t.len());
        assert_eq!(out.lines().count(), t.lines().count());
        assert!(!out.contains("no_ack") && !out.contains("RECEIVE"), "{out}");
        assert!(out.contains("a(x)") && out.contains("c<'a>(é)"), "{out}");
        assert!(out.contains("\"  ") && out.contains("b("), "{out}");
    }
}
