//! XML text for the JUnit and Checkstyle formats.

/// `s` escaped for an XML 1.0 attribute value or text node: `& < > " '` as entities,
/// characters XML 1.0 cannot carry (C0 controls other than tab, LF, CR; U+FFFE, U+FFFF;
/// lone surrogates cannot occur in Rust strings) as `\u{…}`, and line ends kept as
/// character references (`&#10;`, `&#13;`, `&#9;`), so attribute values keep them too.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_markup_and_controls() {
        assert_eq!(
            super::escape("a<b>&\"c' \u{1}\n"),
            "a&lt;b&gt;&amp;&quot;c&apos; \\u{1}&#10;"
        );
    }
}
