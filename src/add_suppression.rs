//! `idemlint check --add-suppression REASON` (ruff's `--add-noqa`): a suppression comment
//! for every current finding, so a legacy code base can adopt idemlint with the
//! exceptions visible in the code.
//!
//! For each line where findings start, one comment goes on a line of its own just above it,
//! with the line's indentation, naming every rule reported there (the rules merged into a
//! finding, `Finding::also`, too): `// idemlint: allow(rule-a, rule-b) -- REASON` (no
//! ` -- ` part when REASON is empty). A comment on a line of its own covers the next line
//! that is not itself a `//` comment, so this works after code, next to other suppression
//! comments and in all three languages. `unused-suppression` and
//! `suppression-without-reason` findings are not suppressed (fix or remove those
//! suppressions instead).
//!
//! Each file's new text is analysed again (alone, under its configuration) before
//! anything is written: when it has more syntax errors than before, or a targeted finding
//! is still reported (the line starts inside a multi-line string, say; a rule suppressed
//! on that line and reported there again), the file is left unchanged and reported. Files are written like `--fix` writes them: only analysed files,
//! each through a temporary file renamed over it ([`crate::check::write_fixed`]).

use std::collections::{BTreeMap, BTreeSet};

use crate::catalogue::Catalogue;
use crate::check::{FixedFile, Options, Report, check_text_with};
use crate::config::Resolver;
use crate::finding::FileError;
use crate::model::Language;

/// Rules that are about suppressions themselves; never suppressed by this.
const NOT_SUPPRESSED: &[&str] = &["unused-suppression", "suppression-without-reason"];

/// The comment line that suppresses `rules` (sorted, deduplicated) with `reason`.
pub fn comment(rules: &[&str], reason: &str) -> String {
    let reason = reason.trim();
    let mut c = format!("// idemlint: allow({})", rules.join(", "));
    if !reason.is_empty() {
        // One line: a reason with a line break would end the comment.
        let one_line: String = reason
            .chars()
            .map(|ch| if ch.is_control() { ' ' } else { ch })
            .collect();
        c.push_str(" -- ");
        c.push_str(&one_line);
    }
    c
}

/// `text` with a suppression comment above each line of `lines` (1-based line → rules),
/// indented like that line; line ends follow the file's (`\r\n` when it has one).
pub fn insert_comments(
    text: &str,
    lines: &BTreeMap<usize, BTreeSet<&str>>,
    reason: &str,
) -> String {
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out = String::with_capacity(text.len() + lines.len() * 64);
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if let Some(rules) = lines.get(&(i + 1)) {
            let indent: String = line
                .chars()
                .take_while(|c| *c == ' ' || *c == '\t')
                .collect();
            let rules: Vec<&str> = rules.iter().copied().collect();
            out.push_str(&indent);
            out.push_str(&comment(&rules, reason));
            out.push_str(nl);
        }
        out.push_str(line);
    }
    out
}

/// The new text of every file of `report` with a finding to suppress (see the module
/// documentation), and the files left unchanged with why. Nothing is written.
pub fn compute(
    report: &Report,
    reason: &str,
    opts: &Options,
    cat: &Catalogue,
) -> (Vec<FixedFile>, Vec<FileError>) {
    let mut errors = Vec::new();
    let mut resolver = match Resolver::new(cat, opts.config_file.as_deref(), opts.selection.clone())
    {
        Ok(r) => r,
        Err(e) => {
            errors.push(FileError {
                path: e.file.clone(),
                line: None,
                column: None,
                message: e.to_string(),
            });
            return (Vec::new(), errors);
        }
    };
    let mut by_file: BTreeMap<&str, BTreeMap<usize, BTreeSet<&'static str>>> = BTreeMap::new();
    for f in &report.findings {
        if NOT_SUPPRESSED.contains(&f.rule) {
            continue;
        }
        // The rules merged into it too: suppressing only the one shown would uncover them.
        by_file
            .entry(&f.path)
            .or_default()
            .entry(f.line)
            .or_default()
            .extend(std::iter::once(f.rule).chain(f.also.iter().map(|a| a.rule)));
    }
    let mut out = Vec::new();
    for (display, lines) in by_file {
        let (Some(original), Some(real)) = (report.texts.get(display), report.paths.get(display))
        else {
            continue;
        };
        let Some(language) = Language::from_path(real) else {
            continue;
        };
        let new = insert_comments(original, &lines, reason);
        let fail = |why: String| FileError {
            path: display.to_string(),
            line: None,
            column: None,
            message: format!("suppressions not added: {why}"),
        };
        let before = crate::lang::lower(language, original).errors.len();
        if crate::lang::lower(language, &new).errors.len() > before {
            errors.push(fail("the file would not parse as before".into()));
            continue;
        }
        let config = match resolver.for_path(real) {
            Ok(c) => c,
            Err(e) => {
                errors.push(fail(e.to_string()));
                continue;
            }
        };
        // Where each targeted line is after the insertions above it.
        let mut shift = 0;
        let mut moved: BTreeMap<usize, usize> = BTreeMap::new();
        for line in lines.keys() {
            shift += 1;
            moved.insert(line + shift, *line);
        }
        // A targeted rule still reported on its line means the comment does not take
        // effect there. Another rule on that line is no such sign: alone, without the
        // project's other files, a finding may come under another rule
        // (`interceptor-mints-key` for what the project reports as `key-in-interceptor`).
        if let Some((after, _)) = check_text_with(display, &new, &config)
            && let Some((rule, line)) = after
                .iter()
                .filter(|f| !NOT_SUPPRESSED.contains(&f.rule))
                .find_map(|f| {
                    let l = *moved.get(&f.line)?;
                    lines
                        .get(&l)
                        .is_some_and(|rules| rules.contains(f.rule))
                        .then_some((f.rule, l))
                })
        {
            errors.push(fail(format!(
                "the `{rule}` finding on line {line} would still be reported (does the line start inside a multi-line string or comment?)"
            )));
            continue;
        }
        out.push(FixedFile {
            display: display.to_string(),
            path: real.clone(),
            old: original.to_string(),
            new,
            rules: lines.values().flatten().copied().collect(),
        });
    }
    (out, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_go_above_with_the_lines_indentation() {
        let text = "fun f() {\n    val k = a()\n\tval j = b()\n}\n";
        let mut lines: BTreeMap<usize, BTreeSet<&str>> = BTreeMap::new();
        lines.entry(2).or_default().insert("time-in-key");
        lines.entry(2).or_default().insert("key-in-retry-scope");
        lines.entry(3).or_default().insert("time-in-key");
        assert_eq!(
            insert_comments(text, &lines, "legacy, see PAY-12"),
            "fun f() {\n    // idemlint: allow(key-in-retry-scope, time-in-key) -- legacy, see PAY-12\n    val k = a()\n\t// idemlint: allow(time-in-key) -- legacy, see PAY-12\n\tval j = b()\n}\n"
        );
        assert_eq!(
            insert_comments(
                "a\r\nb\r\n",
                &BTreeMap::from([(2, BTreeSet::from(["time-in-key"]))]),
                ""
            ),
            "a\r\n// idemlint: allow(time-in-key)\r\nb\r\n"
        );
        assert_eq!(
            comment(&["x"], "two\nlines"),
            "// idemlint: allow(x) -- two lines"
        );
    }
}
