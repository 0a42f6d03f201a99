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

/// The closest candidate within edit distance 3 (Levenshtein over chars), for "did you
/// mean …" hints on rule ids, configuration keys and catalogue keys. Ties go to the
/// candidate that sorts first.
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (levenshtein(word, c), *c))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, c)| c)
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
