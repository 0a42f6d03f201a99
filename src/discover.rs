//! Finding the files to analyse: walks the given paths with the `ignore` crate, so
//! `.gitignore`, `.ignore` and hidden-file rules apply as in ripgrep, and keeps `.rs`,
//! `.java`, `.kt` and `.kts` files.

use std::path::{Path, PathBuf};

use crate::finding::FileError;
use crate::model::Language;

/// One file to analyse.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Candidate {
    /// The path as displayed: relative when the user gave a relative path, without a
    /// leading `./`.
    pub display: String,
    pub path: PathBuf,
    pub language: Language,
}

/// A path the user named does not exist (a tool error, exit code 2).
#[derive(Debug)]
pub struct MissingPath(pub PathBuf);

fn display_of(p: &Path) -> String {
    let s = p.to_string_lossy();
    let s = s.strip_prefix("./").unwrap_or(&s);
    s.to_string()
}

/// Walks `paths`. Files named explicitly are kept whatever their extension says as long as
/// it is a supported one; an unsupported explicit file is reported in `errors`. Walk
/// problems (permission denied, symlink loops, paths vanishing) are reported in `errors`
/// and the walk goes on. The result is sorted by display path and deduplicated.
pub fn discover(paths: &[PathBuf]) -> Result<(Vec<Candidate>, Vec<FileError>), MissingPath> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for root in paths {
        let meta = match std::fs::metadata(root) {
            Ok(m) => m,
            Err(_) => return Err(MissingPath(root.clone())),
        };
        if meta.is_file() {
            match Language::from_path(root) {
                Some(language) => files.push(Candidate {
                    display: display_of(root),
                    path: root.clone(),
                    language,
                }),
                None => errors.push(FileError {
                    path: display_of(root),
                    line: None,
                    column: None,
                    message: "not a Rust, Java or Kotlin file (.rs, .java, .kt, .kts); skipped"
                        .into(),
                }),
            }
            continue;
        }
        let walker = ignore::WalkBuilder::new(root)
            .require_git(false)
            .follow_links(false)
            .build();
        for entry in walker {
            match entry {
                Ok(e) => {
                    if !e.file_type().is_some_and(|t| t.is_file()) {
                        continue;
                    }
                    if let Some(language) = Language::from_path(e.path()) {
                        files.push(Candidate {
                            display: display_of(e.path()),
                            path: e.path().to_path_buf(),
                            language,
                        });
                    }
                }
                Err(err) => {
                    let path = match &err {
                        ignore::Error::WithPath { path, .. } => display_of(path),
                        _ => display_of(root),
                    };
                    errors.push(FileError {
                        path,
                        line: None,
                        column: None,
                        message: format!("could not walk: {err}"),
                    });
                }
            }
        }
    }
    // The same file named twice (`. /abs/same/dir`, a symlinked directory) is analysed
    // once, under the first name it was found by.
    let mut seen = std::collections::HashSet::new();
    files
        .retain(|c| seen.insert(std::fs::canonicalize(&c.path).unwrap_or_else(|_| c.path.clone())));
    files.sort();
    Ok((files, errors))
}
