//! Byte offsets ↔ LSP positions.
//!
//! The core stores byte offsets into the document text (`Finding::span`). An LSP
//! `Position` is a 0-based line and a 0-based `character` offset within that line, counted
//! in the code units of the negotiated position encoding: UTF-16 code units by default,
//! or UTF-8 bytes / Unicode scalar values when client and server agreed on `utf-8` /
//! `utf-32` during `initialize` (LSP 3.17, `PositionEncodingKind`). Lines end at `\n`,
//! `\r\n` or a lone `\r`, as the LSP specification says.

use lsp_types::Position;

/// The unit `Position::character` is counted in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 code units (bytes).
    Utf8,
    /// UTF-16 code units (the LSP default; a character outside the BMP counts 2).
    Utf16,
    /// Unicode scalar values (Rust `char`s).
    Utf32,
}

impl Encoding {
    /// The protocol's name: `utf-8`, `utf-16`, `utf-32`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
            Encoding::Utf32 => "utf-32",
        }
    }

    /// Parses a protocol name; `None` for encodings this server does not speak.
    pub fn from_name(name: &str) -> Option<Encoding> {
        match name {
            "utf-8" => Some(Encoding::Utf8),
            "utf-16" => Some(Encoding::Utf16),
            "utf-32" => Some(Encoding::Utf32),
            _ => None,
        }
    }

    /// How many units of this encoding `c` takes.
    fn width(self, c: char) -> usize {
        match self {
            Encoding::Utf8 => c.len_utf8(),
            Encoding::Utf16 => c.len_utf16(),
            Encoding::Utf32 => 1,
        }
    }
}

/// Line starts of one text, for converting in both directions.
#[derive(Clone, Debug)]
pub struct LineMap {
    /// Byte offset where each line's content starts; `starts[0] == 0`.
    starts: Vec<usize>,
    /// Byte length of the text.
    len: usize,
}

impl LineMap {
    /// Indexes `text`. A line ends at `\n`, `\r\n` or a lone `\r`.
    pub fn new(text: &str) -> LineMap {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'\n' => starts.push(i + 1),
                b'\r' if bytes.get(i + 1) == Some(&b'\n') => {
                    starts.push(i + 2);
                    i += 1;
                }
                b'\r' => starts.push(i + 1),
                _ => {}
            }
            i += 1;
        }
        LineMap {
            starts,
            len: text.len(),
        }
    }

    /// Byte range of 0-based `line`'s content, without its line terminator; `None` past
    /// the last line.
    fn line_content(&self, text: &str, line: usize) -> Option<(usize, usize)> {
        let start = *self.starts.get(line)?;
        let mut end = self.starts.get(line + 1).copied().unwrap_or(self.len);
        let bytes = text.as_bytes();
        if end > start && bytes.get(end - 1) == Some(&b'\n') {
            end -= 1;
        }
        if end > start && bytes.get(end - 1) == Some(&b'\r') {
            end -= 1;
        }
        Some((start, end))
    }

    /// The LSP position of byte `offset` in `text` (the text this map was built from).
    /// An offset past the end is clamped to the end; one inside a multi-byte character is
    /// moved back to that character's start.
    pub fn position(&self, text: &str, offset: usize, enc: Encoding) -> Position {
        let mut offset = offset.min(self.len);
        while offset > 0 && !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.starts.get(line).copied().unwrap_or(0);
        let character = text
            .get(start..offset)
            .map(|s| s.chars().map(|c| enc.width(c)).sum::<usize>())
            .unwrap_or(0);
        Position {
            line: saturate(line),
            character: saturate(character),
        }
    }

    /// The byte offset of LSP position `pos` in `text`. As the specification asks, a
    /// `character` past the end of the line means the end of the line, and a line past the
    /// last one means the end of the text; a position inside a character (the second half
    /// of a UTF-16 surrogate pair, the middle of a UTF-8 sequence) means its start.
    pub fn offset(&self, text: &str, pos: Position, enc: Encoding) -> usize {
        let Some((start, end)) = self.line_content(text, pos.line as usize) else {
            return self.len;
        };
        let want = pos.character as usize;
        let mut units = 0;
        for (i, c) in text.get(start..end).unwrap_or("").char_indices() {
            let next = units + enc.width(c);
            if next > want {
                return start + i;
            }
            units = next;
        }
        end
    }
}

fn saturate(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn columns_in_each_encoding() {
        // ü: 2 bytes, 1 UTF-16 unit; 💳: 4 bytes, 2 UTF-16 units (a surrogate pair).
        let text = "a\n\"ü💳\"x\n";
        let map = LineMap::new(text);
        let x = text.find('x').unwrap();
        assert_eq!(map.position(text, x, Encoding::Utf8), pos(1, 8));
        assert_eq!(map.position(text, x, Encoding::Utf16), pos(1, 5));
        assert_eq!(map.position(text, x, Encoding::Utf32), pos(1, 4));
        for enc in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
            let p = map.position(text, x, enc);
            assert_eq!(map.offset(text, p, enc), x, "{enc:?}");
        }
    }

    #[test]
    fn line_terminators_crlf_and_lone_cr() {
        let text = "ab\r\ncd\ref\ngh";
        let map = LineMap::new(text);
        assert_eq!(
            map.position(text, text.find('c').unwrap(), Encoding::Utf16),
            pos(1, 0)
        );
        assert_eq!(
            map.position(text, text.find('e').unwrap(), Encoding::Utf16),
            pos(2, 0)
        );
        assert_eq!(
            map.position(text, text.find('h').unwrap(), Encoding::Utf16),
            pos(3, 1)
        );
        // Past the end of a line: the end of its content, before `\r\n`.
        assert_eq!(map.offset(text, pos(0, 99), Encoding::Utf16), 2);
        assert_eq!(map.offset(text, pos(1, 99), Encoding::Utf16), 6);
        // Past the last line: the end of the text.
        assert_eq!(map.offset(text, pos(9, 0), Encoding::Utf16), text.len());
    }

    #[test]
    fn clamps_instead_of_panicking() {
        let text = "💳x";
        let map = LineMap::new(text);
        // Inside the 4-byte character: its start.
        assert_eq!(map.position(text, 2, Encoding::Utf16), pos(0, 0));
        assert_eq!(map.position(text, 99, Encoding::Utf16), pos(0, 3));
        // Between the two halves of the surrogate pair: the character's start.
        assert_eq!(map.offset(text, pos(0, 1), Encoding::Utf16), 0);
        assert_eq!(map.offset(text, pos(0, 2), Encoding::Utf16), 4);
        let empty = LineMap::new("");
        assert_eq!(empty.position("", 5, Encoding::Utf8), pos(0, 0));
        assert_eq!(empty.offset("", pos(3, 3), Encoding::Utf8), 0);
    }

    #[test]
    fn encoding_names_round_trip() {
        for enc in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
            assert_eq!(Encoding::from_name(enc.name()), Some(enc));
        }
        assert_eq!(Encoding::from_name("utf-7"), None);
    }
}
