//! Runs every file under `fixtures/` through the library, alone, and checks the
//! `ruleid:` / `ok:` annotations in both directions: every `ruleid: <id>` line has a
//! finding of that rule, no `ok: <id>` line has one, and no finding appears on a line that
//! does not expect it. A finding counts for its rule and for the rules merged into it
//! (`Finding::also`). Failures are listed together as a readable diff.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use idemlint::catalogue::Catalogue;
use idemlint::check::{Options, run};
use idemlint::rules::RULES;

#[derive(Default)]
struct Expectations {
    /// (line, rule) that must be reported.
    expected: BTreeSet<(usize, String)>,
    /// (line, rule) that must not be reported.
    forbidden: BTreeSet<(usize, String)>,
    annotations: usize,
}

fn parse_ids(rest: &str) -> Vec<String> {
    rest.split(|c: char| c == ',' || c.is_whitespace())
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Annotations apply to the next line that is not itself an annotation comment.
fn expectations(text: &str) -> Expectations {
    let mut e = Expectations::default();
    let mut pending: Vec<(bool, Vec<String>)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let annotation = t.strip_prefix("//").map(str::trim_start).and_then(|c| {
            c.strip_prefix("ruleid:")
                .map(|r| (true, r))
                .or_else(|| c.strip_prefix("ok:").map(|r| (false, r)))
        });
        match annotation {
            Some((positive, rest)) => {
                let ids = parse_ids(rest);
                for id in &ids {
                    assert!(
                        RULES.iter().any(|r| r.id == id),
                        "unknown rule id `{id}` in an annotation on line {}",
                        i + 1
                    );
                }
                e.annotations += 1;
                pending.push((positive, ids));
            }
            None => {
                for (positive, ids) in pending.drain(..) {
                    for id in ids {
                        if positive {
                            e.expected.insert((i + 1, id));
                        } else {
                            e.forbidden.insert((i + 1, id));
                        }
                    }
                }
            }
        }
    }
    e
}

fn fixture_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            fixture_files(&p, out);
        } else if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("rs" | "java" | "kt" | "kts")
        ) {
            out.push(p);
        }
    }
}

#[test]
fn fixtures_match_their_annotations() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut files = Vec::new();
    fixture_files(&root, &mut files);
    assert!(
        files.len() >= 30,
        "expected the fixture corpus, found {} files",
        files.len()
    );
    let catalogue = Catalogue::builtin();
    let mut failures = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let exp = expectations(&text);
        let rel = file.strip_prefix(&root).unwrap().display().to_string();
        if exp.annotations == 0 {
            failures.push(format!(
                "{rel}: has no ruleid:/ok: annotation, so it tests nothing"
            ));
            continue;
        }
        let report = run(
            &Options {
                paths: vec![file.clone()],
                ..Options::default()
            },
            &catalogue,
        )
        .expect("run");
        for e in &report.errors {
            failures.push(format!(
                "{rel}:{}: parse error: {}",
                e.line.unwrap_or(0),
                e.message
            ));
        }
        // A finding stands for its own rule and for the rules merged into it (`also`: one
        // bug, one finding), so `ruleid: key-in-retry-scope, time-in-key` on a clock inside
        // a retry expects one finding that gives both reasons.
        let actual: BTreeSet<(usize, String)> = report
            .findings
            .iter()
            .flat_map(|f| {
                std::iter::once(f.rule)
                    .chain(f.also.iter().map(|a| a.rule))
                    .map(|r| (f.line, r.to_string()))
            })
            .collect();
        let lines: Vec<&str> = text.lines().collect();
        let show = |l: usize| lines.get(l - 1).map(|s| s.trim()).unwrap_or("");
        for (line, rule) in exp.expected.difference(&actual) {
            failures.push(format!("{rel}:{line}: missing {rule}\n    {}", show(*line)));
        }
        for (line, rule) in actual.difference(&exp.expected) {
            let f = report
                .findings
                .iter()
                .find(|f| {
                    f.line == *line && (f.rule == rule || f.also.iter().any(|a| a.rule == rule))
                })
                .unwrap();
            let why = if exp.forbidden.contains(&(*line, rule.clone())) {
                "reported on an `ok:` line"
            } else {
                "unexpected"
            };
            failures.push(format!(
                "{rel}:{line}: {why} {rule}\n    {}\n    message: {}",
                show(*line),
                f.message
            ));
        }
        checked += exp.expected.len() + exp.forbidden.len();
    }
    assert!(checked > 100, "only {checked} annotated expectations");
    if !failures.is_empty() {
        panic!(
            "{} fixture mismatch(es) in {} files:\n{}",
            failures.len(),
            files.len(),
            failures.join("\n")
        );
    }
}

#[test]
fn annotation_parser_reads_both_directions() {
    let e = expectations(
        "a\n// ruleid: key-in-retry-scope, time-in-key\n// ok: key-in-interceptor\nx\n// ok: time-in-key\ny\n",
    );
    assert!(e.expected.contains(&(4, "key-in-retry-scope".to_string())));
    assert!(e.expected.contains(&(4, "time-in-key".to_string())));
    assert!(e.forbidden.contains(&(4, "key-in-interceptor".to_string())));
    assert!(e.forbidden.contains(&(6, "time-in-key".to_string())));
    assert_eq!(e.annotations, 3);
}
