//! Baselines: adopt idemlint on a code base with known findings, then only report new ones.
//!
//! A baseline file records findings by [`Finding::fingerprint`] (`idemlint/v1`: rule, path,
//! enclosing declarations, boundary and source expression; no line numbers) with a count
//! per fingerprint, so moving code up or down keeps it matched, while a second copy of a
//! baselined bug in the same place raises the count beyond the recorded one and is
//! reported. Entries whose findings are gone (fewer than recorded) are *stale*: they are
//! reported so the baseline can be rewritten smaller; it never grows by itself. Nothing
//! here reads git or touches the analysed files.
//!
//! Format (JSON, version 1), entries sorted by path, rule and fingerprint:
//!
//! ```json
//! { "version": 1, "fingerprint": "idemlint/v1",
//!   "entries": [ { "fingerprint": "3f0c…", "count": 2, "rule": "key-in-retry-scope",
//!                  "path": "src/Billing.kt", "source": "UUID.randomUUID()" } ] }
//! ```
//!
//! Only `fingerprint` and `count` are used for matching; `rule`, `path` and `source` make the
//! file reviewable.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::finding::Finding;

/// Version of the baseline file format.
pub const VERSION: u32 = 1;
/// The fingerprint scheme the entries use.
pub const FINGERPRINT_SCHEME: &str = "idemlint/v1";

/// One recorded fingerprint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub fingerprint: String,
    /// How many findings had this fingerprint when the baseline was written (at least 1).
    pub count: usize,
    pub rule: String,
    pub path: String,
    /// The source expression of the first such finding, as written.
    pub source: String,
}

/// A baseline file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Baseline {
    pub version: u32,
    /// [`FINGERPRINT_SCHEME`].
    pub fingerprint: String,
    pub entries: Vec<Entry>,
}

/// Longest text of a baseline entry that a stale report repeats (bytes); a baseline the
/// checked tree committed could otherwise make every run print megabytes per entry.
const STALE_TEXT_MAX: usize = 240;

fn clip(s: &str) -> String {
    if s.len() <= STALE_TEXT_MAX {
        return s.to_string();
    }
    let mut end = STALE_TEXT_MAX;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &s[..end], s.len())
}

/// A baseline entry that matches fewer findings than it records.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Stale {
    pub fingerprint: String,
    pub rule: String,
    pub path: String,
    pub source: String,
    /// The count in the baseline.
    pub recorded: usize,
    /// Findings with this fingerprint now (less than `recorded`).
    pub found: usize,
}

/// What applying a baseline did, for the report (`baseline` in the JSON output).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The baseline file as given on the command line.
    pub file: String,
    /// Findings hidden because the baseline records them.
    pub matched: usize,
    pub stale: Vec<Stale>,
}

impl Baseline {
    /// Records `findings` (every finding counts once).
    pub fn from_findings(findings: &[Finding]) -> Baseline {
        let mut by_fp: BTreeMap<&str, Entry> = BTreeMap::new();
        for f in findings {
            by_fp
                .entry(&f.fingerprint)
                .and_modify(|e| e.count += 1)
                .or_insert_with(|| Entry {
                    fingerprint: f.fingerprint.clone(),
                    count: 1,
                    rule: f.rule.to_string(),
                    path: f.path.clone(),
                    source: f.source.clone(),
                });
        }
        Baseline::new(by_fp.into_values().collect())
    }

    fn new(mut entries: Vec<Entry>) -> Baseline {
        entries.sort_by(|a, b| {
            (&a.path, &a.rule, &a.fingerprint).cmp(&(&b.path, &b.rule, &b.fingerprint))
        });
        Baseline {
            version: VERSION,
            fingerprint: FINGERPRINT_SCHEME.to_string(),
            entries,
        }
    }

    /// This baseline with every count lowered to what `findings` still has (entries that
    /// match nothing dropped). New findings are not added: rewriting a baseline this way
    /// can only shrink it.
    pub fn pruned(&self, findings: &[Finding], scope: &Scope) -> Baseline {
        let counts = counts(findings);
        Baseline::new(
            self.entries
                .iter()
                .filter_map(|e| {
                    if !scope.covers(&e.path) {
                        return Some(e.clone());
                    }
                    let found = counts.get(e.fingerprint.as_str()).copied().unwrap_or(0);
                    (found > 0).then(|| Entry {
                        count: e.count.min(found),
                        ..e.clone()
                    })
                })
                .collect(),
        )
    }

    /// Reads a baseline file. Errors (as a sentence naming the file): unreadable, not JSON
    /// of this shape (with line and column), another version or fingerprint scheme.
    pub fn read(path: &Path) -> Result<Baseline, String> {
        let name = shown(path);
        let text = crate::fsio::read_regular_text(path, crate::fsio::MAX_BASELINE_BYTES, true)
            .map_err(|e| format!("baseline {name}: cannot read: {e}"))?;
        if text.starts_with('\u{feff}') {
            return Err(format!(
                "baseline {name}: starts with a byte-order mark (U+FEFF); baseline files are UTF-8 JSON without one (remove it, or write the file again with --write-baseline)"
            ));
        }
        let b: Baseline = serde_json::from_str(&text).map_err(|e| {
            format!(
                "baseline {name}: not a baseline file (line {}, column {}): {e}",
                e.line(),
                e.column()
            )
        })?;
        if b.version != VERSION {
            return Err(format!(
                "baseline {name}: version {} is not supported; this idemlint reads version {VERSION} (write a new one with --write-baseline)",
                b.version
            ));
        }
        if b.fingerprint != FINGERPRINT_SCHEME {
            return Err(format!(
                "baseline {name}: fingerprints `{}` are not supported; this idemlint uses `{FINGERPRINT_SCHEME}` (write a new one with --write-baseline)",
                b.fingerprint
            ));
        }
        Baseline::checked(b).map_err(|e| format!("baseline {name}: {e}"))
    }

    /// Validates entries read from a file: every count at least 1; entries with the same
    /// fingerprint merged (counts added, without overflow).
    fn checked(b: Baseline) -> Result<Baseline, String> {
        let mut by_fp: BTreeMap<String, Entry> = BTreeMap::new();
        for (i, e) in b.entries.into_iter().enumerate() {
            if e.count == 0 {
                return Err(format!(
                    "entry {} (`{}`) has count 0; counts are at least 1 (remove the entry)",
                    i + 1,
                    crate::text::escape_controls(&e.fingerprint)
                ));
            }
            match by_fp.get_mut(&e.fingerprint) {
                Some(prev) => {
                    prev.count = prev.count.checked_add(e.count).ok_or_else(|| {
                        format!(
                            "the counts of fingerprint `{}` add up to more than {}",
                            crate::text::escape_controls(&e.fingerprint),
                            usize::MAX
                        )
                    })?;
                }
                None => {
                    by_fp.insert(e.fingerprint.clone(), e);
                }
            }
        }
        let b = Baseline::new(by_fp.into_values().collect());
        b.entries
            .iter()
            .try_fold(0usize, |sum, e| sum.checked_add(e.count))
            .ok_or_else(|| format!("the counts add up to more than {}", usize::MAX))?;
        Ok(b)
    }

    /// Writes the baseline as pretty-printed JSON with a trailing newline.
    pub fn write(&self, path: &Path) -> Result<(), String> {
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| format!("baseline {}: {e}", path.display()))?;
        text.push('\n');
        crate::fsio::write_atomic(path, text.as_bytes(), crate::fsio::WriteTarget::Named, None)
            .map_err(|e| format!("baseline {}: cannot write: {e}", shown(path)))
    }

    /// Total findings recorded.
    pub fn total(&self) -> usize {
        self.entries
            .iter()
            .fold(0usize, |sum, e| sum.saturating_add(e.count))
    }

    /// Splits `findings` (in output order) into the ones beyond the recorded counts, which
    /// are returned, and the ones the baseline covers; for each fingerprint the first
    /// `count` findings are covered, later copies are reported. `file` names the baseline
    /// in the outcome.
    pub fn apply(
        &self,
        findings: Vec<Finding>,
        file: &str,
        scope: &Scope,
    ) -> (Vec<Finding>, Outcome) {
        let found = counts(&findings);
        let mut left: BTreeMap<&str, usize> = self
            .entries
            .iter()
            .map(|e| (e.fingerprint.as_str(), e.count))
            .collect();
        let mut matched = 0;
        let mut kept = Vec::new();
        for f in findings {
            match left.get_mut(f.fingerprint.as_str()) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    matched += 1;
                }
                _ => kept.push(f),
            }
        }
        let stale = self
            .entries
            .iter()
            .filter(|e| scope.covers(&e.path))
            .filter_map(|e| {
                let now = found.get(e.fingerprint.as_str()).copied().unwrap_or(0);
                (now < e.count).then(|| Stale {
                    fingerprint: clip(&e.fingerprint),
                    rule: clip(&e.rule),
                    path: clip(&e.path),
                    source: clip(&e.source),
                    recorded: e.count,
                    found: now,
                })
            })
            .collect();
        (
            kept,
            Outcome {
                file: file.to_string(),
                matched,
                stale,
            },
        )
    }
}

/// A path for messages, control characters escaped.
fn shown(p: &Path) -> String {
    crate::text::escape_controls(&p.display().to_string())
}

fn counts(findings: &[Finding]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for f in findings {
        *m.entry(f.fingerprint.clone()).or_insert(0) += 1;
    }
    m
}

/// The files a run reports on, as a baseline sees them: an entry of a file outside the
/// scope says nothing about this run, so it is never stale and a rewrite keeps it as it
/// is. `--only`, `--files-from`, `--changed-since` and `--shard` report on part of the
/// files (a pre-commit hook's run over the staged files, one shard of a CI matrix): were
/// every other file's entries stale, `--baseline F --write-baseline F` in such a run would
/// drop them, and the next full run would fail on findings the baseline had accepted.
#[derive(Debug, Default)]
pub struct Scope {
    /// Display paths reported on; `None`: every file of the run.
    files: Option<std::collections::HashSet<String>>,
}

impl Scope {
    /// Every file of the run.
    pub fn all() -> Scope {
        Scope { files: None }
    }

    /// Only the files displayed as `files` (see [`crate::check::Report::scope`]).
    pub fn of(files: Option<&std::collections::HashSet<String>>) -> Scope {
        Scope {
            files: files.cloned(),
        }
    }

    /// Whether an entry of the file displayed as `path` is about this run.
    pub fn covers(&self, path: &str) -> bool {
        self.files.as_ref().is_none_or(|f| f.contains(path))
    }

    /// Whether the run reports on part of the files.
    pub fn partial(&self) -> bool {
        self.files.is_some()
    }
}

/// What `--baseline` / `--write-baseline` did.
#[derive(Debug)]
pub struct Adopted {
    /// The findings to report.
    pub findings: Vec<Finding>,
    pub outcome: Option<Outcome>,
    /// `(file, entries, findings, dropped)` when a baseline was written; `dropped` counts
    /// the recorded findings a pruned rewrite left out.
    pub written: Option<(String, usize, usize, usize)>,
}

/// The CLI's baseline step over the findings of a run (after configuration and
/// suppressions). `write` alone records every finding and then applies the new file (so
/// nothing is reported); `read` alone reports findings beyond it and the stale entries;
/// both rewrite `write` as `read` pruned to what still exists (never adding the new
/// findings, which are reported) and apply it. Errors: a sentence naming the file.
pub fn adopt(
    findings: Vec<Finding>,
    read: Option<&Path>,
    write: Option<&Path>,
    scope: &Scope,
) -> Result<Adopted, String> {
    let old = read.map(Baseline::read).transpose()?;
    let mut written = None;
    let effective = match (write, old) {
        (Some(path), old) => {
            let new = match &old {
                Some(old) => old.pruned(&findings, scope),
                None => Baseline::from_findings(&findings),
            };
            new.write(path)?;
            let dropped = old
                .as_ref()
                .map_or(0, |o| o.total().saturating_sub(new.total()));
            written = Some((shown(path), new.entries.len(), new.total(), dropped));
            Some((path, new))
        }
        (None, Some(old)) => read.map(|p| (p, old)),
        (None, None) => None,
    };
    Ok(match effective {
        Some((path, b)) => {
            let (findings, outcome) = b.apply(findings, &shown(path), scope);
            Adopted {
                findings,
                outcome: Some(outcome),
                written,
            }
        }
        None => Adopted {
            findings,
            outcome: None,
            written,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::Severity;
    use crate::model::Span;

    fn finding(fp: &str, line: usize) -> Finding {
        Finding {
            rule: "key-in-retry-scope",
            severity: Severity::Error,
            path: "a.kt".into(),
            line,
            column: 1,
            end_line: line,
            end_column: 2,
            message: String::new(),
            help: String::new(),
            boundary: None,
            source: "UUID.randomUUID()".into(),
            span: Span::default(),
            sink: String::new(),
            fingerprint: fp.into(),
            fix: None,
            no_fix: None,
            also: Vec::new(),
            ambiguous: false,
        }
    }

    #[test]
    fn counts_copies_and_reports_stale_entries() {
        let b = Baseline::from_findings(&[finding("a", 3), finding("a", 9), finding("b", 5)]);
        assert_eq!(b.entries.len(), 2);
        assert_eq!(b.total(), 3);
        // Same findings on other lines: all covered, nothing stale.
        let (kept, out) = b.apply(
            vec![finding("a", 4), finding("a", 10), finding("b", 6)],
            "f",
            &Scope::all(),
        );
        assert!(kept.is_empty());
        assert_eq!(out.matched, 3);
        assert!(out.stale.is_empty());
        // A third copy of `a` is reported; `b` is gone and stale.
        let (kept, out) = b.apply(
            vec![finding("a", 3), finding("a", 9), finding("a", 20)],
            "f",
            &Scope::all(),
        );
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].line, 20);
        assert_eq!(out.stale.len(), 1);
        assert_eq!((out.stale[0].recorded, out.stale[0].found), (1, 0));
        // Pruning lowers counts and drops stale entries, never adds.
        let p = b.pruned(&[finding("a", 3), finding("c", 1)], &Scope::all());
        assert_eq!(p.entries.len(), 1);
        assert_eq!(p.entries[0].count, 1);
    }

    /// A run over part of the files (`--only`, `--shard`) says nothing about the others:
    /// their entries are not stale, and pruning keeps them as they are.
    #[test]
    fn entries_outside_a_partial_run_are_neither_stale_nor_pruned() {
        let mut other = finding("b", 5);
        other.path = "b.kt".into();
        let b = Baseline::from_findings(&[finding("a", 3), finding("a", 9), other]);
        let only_a = Scope::of(Some(&["a.kt".to_string()].into_iter().collect()));
        assert!(only_a.partial() && only_a.covers("a.kt") && !only_a.covers("b.kt"));
        // `a.kt` has one of its two findings left; `b.kt` was not reported on.
        let (kept, out) = b.apply(vec![finding("a", 3)], "f", &only_a);
        assert!(kept.is_empty());
        assert_eq!(out.stale.len(), 1, "{:?}", out.stale);
        assert_eq!(out.stale[0].path, "a.kt");
        let p = b.pruned(&[finding("a", 3)], &only_a);
        let by_path: Vec<(&str, usize)> = p
            .entries
            .iter()
            .map(|e| (e.path.as_str(), e.count))
            .collect();
        assert_eq!(by_path, [("a.kt", 1), ("b.kt", 1)]);
        // The whole run: `b.kt`'s entry is stale and pruned.
        let (_, out) = b.apply(vec![finding("a", 3)], "f", &Scope::all());
        assert_eq!(out.stale.len(), 2);
        assert_eq!(b.pruned(&[finding("a", 3)], &Scope::all()).entries.len(), 1);
    }

    #[test]
    fn round_trip_and_version_check() {
        let dir = std::env::temp_dir().join(format!("idemlint-baseline-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("b.json");
        let b = Baseline::from_findings(&[finding("a", 3)]);
        b.write(&path).unwrap();
        assert_eq!(Baseline::read(&path).unwrap(), b);
        std::fs::write(
            &path,
            "{\"version\": 2, \"fingerprint\": \"idemlint/v1\", \"entries\": []}",
        )
        .unwrap();
        assert!(Baseline::read(&path).unwrap_err().contains("version 2"));
        std::fs::write(&path, "[").unwrap();
        assert!(Baseline::read(&path).unwrap_err().contains("line 1"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
