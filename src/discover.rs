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

/// How a path is shown: `.` components dropped (`.//a/./b.kt` → `a/b.kt`), and control
/// characters escaped so a file name cannot forge report lines.
fn display_of(p: &Path) -> String {
    let cleaned: PathBuf = p
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    let s = if cleaned.as_os_str().is_empty() {
        ".".to_string()
    } else {
        cleaned.to_string_lossy().into_owned()
    };
    s.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// Walks `paths`. Files named explicitly are kept whatever their extension says as long as
/// it is a supported one; an unsupported explicit file is reported in `errors`. Walk
/// problems (permission denied, symlink loops, paths vanishing) are reported in `errors`
/// and the walk goes on. The result is sorted by display path and deduplicated.
pub fn discover(paths: &[PathBuf]) -> Result<(Vec<Candidate>, Vec<FileError>), MissingPath> {
    discover_with(paths, 0)
}

/// [`discover`] with `threads` walker threads (0: the `ignore` crate's default, one per
/// core).
pub fn discover_with(
    paths: &[PathBuf],
    threads: usize,
) -> Result<(Vec<Candidate>, Vec<FileError>), MissingPath> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for root in paths {
        let meta = match std::fs::metadata(root) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // A dangling symlink is "not found" too; say what it is.
                if std::fs::symlink_metadata(root).is_ok() {
                    errors.push(FileError {
                        path: display_of(root),
                        line: None,
                        column: None,
                        message: "a symbolic link whose target does not exist; skipped".into(),
                    });
                    continue;
                }
                return Err(MissingPath(root.clone()));
            }
            Err(e) => {
                // Permission denied, a symlink loop, a name too long: reported, not fatal.
                errors.push(FileError {
                    path: display_of(root),
                    line: None,
                    column: None,
                    message: format!("could not read: {e}"),
                });
                continue;
            }
        };
        if !meta.is_file() && !meta.is_dir() {
            errors.push(FileError {
                path: display_of(root),
                line: None,
                column: None,
                message: "not a regular file or directory (a FIFO, socket or device); skipped"
                    .into(),
            });
            continue;
        }
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
        // Directories are read in parallel; the result is sorted below, so it does not
        // depend on the order.
        let found = std::sync::Mutex::new((Vec::new(), Vec::new()));
        ignore::WalkBuilder::new(root)
            .require_git(false)
            .follow_links(false)
            .threads(threads)
            .build_parallel()
            .run(|| {
                let found = &found;
                Box::new(move |entry| {
                    let mut found = found.lock().unwrap_or_else(|p| p.into_inner());
                    match entry {
                        Ok(e) => {
                            if e.file_type().is_some_and(|t| t.is_file())
                                && let Some(language) = Language::from_path(e.path())
                            {
                                found.0.push(Candidate {
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
                            found.1.push(FileError {
                                path,
                                line: None,
                                column: None,
                                message: format!("could not walk: {err}"),
                            });
                        }
                    }
                    ignore::WalkState::Continue
                })
            });
        let (f, e) = found.into_inner().unwrap_or_else(|p| p.into_inner());
        files.extend(f);
        errors.extend(e);
    }
    errors.sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    // The same file named twice (`. /abs/same/dir`, a symlinked directory) is analysed
    // once, under the first name it was found by.
    // Walks that do not follow links yield every file once per root: only roots that
    // overlap (one inside another, or the same one twice) can name a file twice, and only
    // then are 10,000s of paths resolved.
    let roots: Vec<PathBuf> = paths
        .iter()
        .map(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()))
        .collect();
    let overlap = roots.iter().enumerate().any(|(i, a)| {
        roots
            .iter()
            .enumerate()
            .any(|(j, b)| i != j && b.starts_with(a))
    });
    if overlap {
        let mut seen = std::collections::HashSet::new();
        files.retain(|c| {
            seen.insert(std::fs::canonicalize(&c.path).unwrap_or_else(|_| c.path.clone()))
        });
    }
    files.sort();
    Ok((files, errors))
}
