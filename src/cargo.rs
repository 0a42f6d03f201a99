//! Cargo workspace facts for `cargo idemlint`, `--manifest-path`, `--workspace` and
//! `--exclude`, read from the `Cargo.toml` files themselves. No `cargo` process is run:
//! cargo would honour the checked-out tree's `rust-toolchain.toml` (which can name a binary
//! in the tree, or make rustup download a toolchain) and its `.cargo/config.toml`.
//!
//! The workspace root of a manifest is the manifest itself when it has a `[workspace]`
//! table, the directory `package.workspace` names, or else the nearest ancestor directory
//! whose `Cargo.toml` has a `[workspace]` that lists it as a member (as cargo does). The
//! members are the root's `[workspace] members` globs (directories holding a
//! `Cargo.toml` with a `[package]`) minus its `exclude` entries, plus the root package.
//! Manifests are read only when they are regular files of bounded size.
//!
//! Unlike cargo, every member must lie inside the workspace root once symbolic links are
//! resolved: a checked-out tree can list `members = ["vendor"]` with `vendor` a committed
//! link to `../other-project`, or `"../other-project"` itself, and `--workspace --fix`
//! must not read or rewrite that. Such a member is left out and reported
//! ([`Workspace::outside`]); a `package.workspace` naming a directory that does not
//! contain the manifest is an error.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;

/// One workspace member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    /// The directory holding its `Cargo.toml`.
    pub dir: PathBuf,
}

/// A `members` entry that resolves outside the workspace root (through `..` or a symbolic
/// link): not a member for idemlint, reported instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outside {
    /// The entry as written in `members`.
    pub listed: String,
    /// The directory it names, before symbolic links are resolved (absolute).
    pub dir: PathBuf,
}

/// A cargo workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workspace {
    /// Canonical (symbolic links resolved).
    pub root: PathBuf,
    /// Each member's directory is canonical and inside `root`.
    pub members: Vec<Member>,
    /// `members` entries outside `root`, left out.
    pub outside: Vec<Outside>,
}

/// The member directories of a `[workspace]` table: canonical and inside the root, and the
/// entries that are not.
#[derive(Debug, Default)]
struct MemberDirs {
    dirs: Vec<PathBuf>,
    outside: Vec<Outside>,
}

/// How deep a `members` glob with `**` is expanded.
const MAX_GLOB_DEPTH: usize = 32;
/// Most members a workspace may have.
const MAX_MEMBERS: usize = 10_000;

fn shown(p: &Path) -> String {
    crate::text::escape_controls(&p.display().to_string())
}

/// Reads and parses a manifest (a regular file, not a symbolic link).
fn manifest(path: &Path) -> Result<toml::Table, String> {
    let text = crate::fsio::read_regular_text(path, crate::fsio::MAX_CONFIG_BYTES, false)
        .map_err(|e| format!("cannot read `{}`: {e}", shown(path)))?;
    text.parse::<toml::Table>().map_err(|e| {
        format!(
            "`{}` is not a valid manifest: {}",
            shown(path),
            crate::text::escape_controls(e.message())
        )
    })
}

fn is_manifest_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
}

fn strings<'a>(t: &'a toml::Table, key: &str) -> Vec<&'a str> {
    t.get(key)
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|v| v.as_str()).collect())
        .unwrap_or_default()
}

/// The member directories the root's `[workspace]` table lists (canonical, inside `root`),
/// and the entries that resolve outside it. `exclude` applies to a member as written and
/// as resolved.
fn member_dirs(root: &Path, ws: &toml::Table) -> Result<MemberDirs, String> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let root = root.as_path();
    // (as listed in `members`, the directory before links are resolved)
    let mut dirs: Vec<(&str, PathBuf)> = Vec::new();
    for pattern in strings(ws, "members") {
        if !pattern.contains(['*', '?', '[', '{']) {
            dirs.push((pattern, crate::fsio::lexical_normal(&root.join(pattern))));
            continue;
        }
        let glob = GlobBuilder::new(pattern.trim_start_matches("./"))
            .literal_separator(true)
            .build()
            .map_err(|e| {
                format!(
                    "invalid workspace member glob `{}`: {e}",
                    crate::text::escape_controls(pattern)
                )
            })?
            .compile_matcher();
        let depth = if pattern.contains("**") {
            MAX_GLOB_DEPTH
        } else {
            Path::new(pattern).components().count()
        };
        let mut found = Vec::new();
        walk_dirs(root, Path::new(""), depth, &mut |rel| {
            if glob.is_match(rel) && is_manifest_file(&root.join(rel).join("Cargo.toml")) {
                found.push(root.join(rel));
            }
        });
        found.sort();
        dirs.extend(found.into_iter().map(|d| (pattern, d)));
        if dirs.len() > MAX_MEMBERS {
            return Err(format!("the workspace has more than {MAX_MEMBERS} members"));
        }
    }
    // (as written, resolved when it exists, glob)
    type Excluded = (PathBuf, Option<PathBuf>, Option<globset::GlobMatcher>);
    let excluded: Vec<Excluded> = strings(ws, "exclude")
        .into_iter()
        .map(|e| {
            let g = GlobBuilder::new(e.trim_start_matches("./"))
                .literal_separator(true)
                .build()
                .ok()
                .map(|g| g.compile_matcher());
            let p = crate::fsio::lexical_normal(&root.join(e));
            let resolved = p.canonicalize().ok();
            (p, resolved, g)
        })
        .collect();
    let is_excluded = |d: &Path, resolved: Option<&Path>| {
        excluded.iter().any(|(p, rp, g)| {
            let matches = |d: &Path| {
                let rel = d.strip_prefix(root).unwrap_or(d);
                d.starts_with(p)
                    || rp.as_ref().is_some_and(|rp| d.starts_with(rp))
                    || g.as_ref().is_some_and(|g| g.is_match(rel))
            };
            matches(d) || resolved.is_some_and(matches)
        })
    };
    let mut out = MemberDirs::default();
    for (listed, d) in dirs {
        let resolved = d.canonicalize().ok();
        if is_excluded(&d, resolved.as_deref()) {
            continue;
        }
        match resolved {
            Some(r) if r.starts_with(root) => out.dirs.push(r),
            Some(_) => out.outside.push(Outside {
                listed: listed.to_string(),
                dir: d,
            }),
            // Lexically outside and not there: nothing to read, but still not a member.
            None if !d.starts_with(root) => out.outside.push(Outside {
                listed: listed.to_string(),
                dir: d,
            }),
            // Missing: reading its manifest reports it.
            None => out.dirs.push(d),
        }
    }
    out.dirs.sort();
    out.dirs.dedup();
    out.outside.sort_by(|a, b| a.dir.cmp(&b.dir));
    out.outside.dedup();
    Ok(out)
}

/// Calls `f` with every directory below `root` (relative paths), `depth` levels down at
/// most, skipping hidden directories and `target`. A symbolic link to a directory is
/// passed to `f` (as cargo's globs match it; [`member_dirs`] then checks where it leads)
/// but not walked into.
fn walk_dirs(root: &Path, rel: &Path, depth: usize, f: &mut dyn FnMut(&Path)) {
    if depth == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(root.join(rel)) else {
        return;
    };
    let mut names: Vec<_> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let t = e.file_type().ok()?;
            let link = t.is_symlink() && e.path().is_dir();
            (t.is_dir() || link).then(|| (e.file_name(), link))
        })
        .filter(|(n, _)| !n.to_string_lossy().starts_with('.') && n != "target")
        .collect();
    names.sort();
    for (n, link) in names {
        let child = rel.join(&n);
        f(&child);
        if !link {
            walk_dirs(root, &child, depth - 1, f);
        }
    }
}

/// The `[workspace]` root for the manifest at `start` (absolute): see the module docs.
fn find_root(start: &Path, table: &toml::Table) -> Result<PathBuf, String> {
    if table.get("workspace").is_some_and(|w| w.is_table()) {
        return Ok(start.to_path_buf());
    }
    let parent = start.parent().unwrap_or(Path::new("/"));
    let dir = &parent
        .canonicalize()
        .unwrap_or_else(|_| parent.to_path_buf());
    if let Some(ws) = table
        .get("package")
        .and_then(|p| p.get("workspace"))
        .and_then(|w| w.as_str())
    {
        let named = crate::fsio::lexical_normal(&dir.join(ws));
        let root = named.canonicalize().unwrap_or(named).join("Cargo.toml");
        if !is_manifest_file(&root) {
            return Err(format!(
                "`{}` names the workspace `{}`, which has no Cargo.toml",
                shown(start),
                crate::text::escape_controls(ws)
            ));
        }
        // Its members must be inside it, this one too.
        if !root.parent().is_some_and(|r| dir.starts_with(r)) {
            return Err(format!(
                "`{}` names the workspace `{}`, which does not contain it (once `..` and \
                 symbolic links are resolved); idemlint checks only workspaces that contain \
                 their members",
                shown(start),
                crate::text::escape_controls(ws)
            ));
        }
        return Ok(root);
    }
    for up in dir.ancestors().skip(1) {
        let candidate = up.join("Cargo.toml");
        if !is_manifest_file(&candidate) {
            continue;
        }
        let t = manifest(&candidate)?;
        if let Some(ws) = t.get("workspace").and_then(|w| w.as_table())
            && member_dirs(up, ws)?.dirs.iter().any(|m| m == dir)
        {
            return Ok(candidate);
        }
    }
    Ok(start.to_path_buf())
}

/// The workspace of `manifest_path`, or of the nearest `Cargo.toml` at or above the
/// current directory. Errors are sentences naming the file.
pub fn workspace(manifest_path: Option<&Path>) -> Result<Workspace, String> {
    let cwd = std::env::current_dir()
        .and_then(|c| c.canonicalize())
        .map_err(|e| format!("cannot read the current directory: {e}"))?;
    let start = match manifest_path {
        Some(p) => {
            let p = if p.is_dir() {
                p.join("Cargo.toml")
            } else {
                p.to_path_buf()
            };
            if p.file_name().is_none_or(|n| n != "Cargo.toml") {
                return Err(format!(
                    "the manifest path `{}` must be a path to a Cargo.toml file",
                    shown(&p)
                ));
            }
            let abs = crate::fsio::lexical_normal(&cwd.join(&p));
            // Only the directories are resolved: the manifest itself must not be a link.
            let dir = abs
                .parent()
                .and_then(|d| d.canonicalize().ok())
                .ok_or_else(|| format!("manifest path `{}` does not exist", shown(&p)))?;
            let abs = dir.join("Cargo.toml");
            if !abs.exists() && std::fs::symlink_metadata(&abs).is_err() {
                return Err(format!("manifest path `{}` does not exist", shown(&p)));
            }
            abs
        }
        None => cwd
            .ancestors()
            .map(|d| d.join("Cargo.toml"))
            .find(|m| is_manifest_file(m))
            .ok_or_else(|| {
                "could not find `Cargo.toml` in the current directory or any parent directory"
                    .to_string()
            })?,
    };
    let table = manifest(&start)?;
    let root_manifest = find_root(&start, &table)?;
    let root_table = if root_manifest == start {
        table
    } else {
        manifest(&root_manifest)?
    };
    let root = root_manifest.parent().unwrap_or(Path::new("/"));
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let MemberDirs { mut dirs, outside } =
        match root_table.get("workspace").and_then(|w| w.as_table()) {
            Some(ws) => member_dirs(&root, ws)?,
            None => MemberDirs::default(),
        };
    if root_table.get("package").is_some_and(|p| p.is_table()) {
        dirs.push(root.clone());
    }
    dirs.sort();
    dirs.dedup();
    let mut members = Vec::new();
    for dir in dirs {
        let m = dir.join("Cargo.toml");
        let t = if dir == root {
            root_table.clone()
        } else {
            manifest(&m)?
        };
        let Some(pkg) = t.get("package").and_then(|p| p.as_table()) else {
            // A virtual manifest listed as a member: nothing to check of its own.
            continue;
        };
        let name = pkg
            .get("name")
            .and_then(|n| n.as_str())
            .ok_or_else(|| format!("`{}` has no `package.name`", shown(&m)))?;
        members.push(Member {
            name: name.to_string(),
            dir,
        });
    }
    members.sort_by(|a, b| a.dir.cmp(&b.dir));
    Ok(Workspace {
        root,
        members,
        outside,
    })
}

/// The package a manifest declares, as cargo names it in a package id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    pub version: String,
}

/// The `[package]` name and version of the manifest at `path` (absolute). A version
/// inherited from the workspace (`version.workspace = true`) is read from the
/// `[workspace.package]` table of the workspace root manifest; a package without a
/// `version` is `0.0.0`, as cargo has it. `None` for a manifest that cannot be read, has no
/// `[package]` (a virtual manifest) or no name.
pub fn package(path: &Path) -> Option<Package> {
    let table = manifest(path).ok()?;
    let pkg = table.get("package")?.as_table()?;
    let name = pkg.get("name")?.as_str()?.to_string();
    let version = match pkg.get("version") {
        None => "0.0.0".to_string(),
        Some(toml::Value::String(v)) => v.clone(),
        Some(toml::Value::Table(t))
            if t.get("workspace").and_then(|w| w.as_bool()) == Some(true) =>
        {
            let root = find_root(path, &table).ok()?;
            let root_table = if root == path {
                table.clone()
            } else {
                manifest(&root).ok()?
            };
            root_table
                .get("workspace")?
                .get("package")?
                .get("version")?
                .as_str()?
                .to_string()
        }
        Some(_) => return None,
    };
    Some(Package { name, version })
}

/// `dir` as shown to the user: relative to the current directory (`.` for the directory
/// itself, `../other` for a sibling), so every member's files are shown relative to it
/// as with `cargo idemlint` without `--workspace`.
pub fn display_dir(dir: &Path) -> PathBuf {
    let Ok(cwd) = std::env::current_dir().and_then(|c| c.canonicalize()) else {
        return dir.to_path_buf();
    };
    let dir_abs = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    crate::discover::relative_from(&dir_abs, &cwd)
}

/// What to walk, for [`crate::check::Options`]: `paths`, `skip_dirs` and `problems`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckPaths {
    pub paths: Vec<PathBuf>,
    pub skip_dirs: Vec<PathBuf>,
    /// `--workspace`: the members left out because they are outside the workspace root,
    /// reported with the files that could not be analysed.
    pub problems: Vec<crate::finding::FileError>,
}

/// The report line of a member outside the workspace root.
fn outside_problem(ws: &Workspace, o: &Outside) -> crate::finding::FileError {
    let shown_dir = |d: &Path| match std::env::current_dir().and_then(|c| c.canonicalize()) {
        Ok(cwd) => crate::discover::display_of(&crate::discover::relative_from(d, &cwd)),
        Err(_) => crate::discover::display_of(d),
    };
    crate::finding::FileError {
        path: shown_dir(&o.dir),
        line: None,
        column: None,
        message: format!(
            "workspace member `{}` (in `members` of {}) is outside the workspace root, \
             through `..` or a symbolic link; not checked or fixed",
            crate::text::escape_controls(&o.listed),
            shown_dir(&ws.root.join("Cargo.toml")),
        ),
    }
}

/// What to walk for `cargo idemlint` and `--manifest-path`/`--workspace`/`--exclude`.
///
/// - `--workspace`: the directory of every member except `exclude`d ones, whose
///   directories become `skip_dirs` (so a member nested in another is left out as well);
/// - `--manifest-path` alone: the workspace root of that manifest;
/// - otherwise `None`: the caller keeps its own default.
///
/// An `exclude`d name that is not a member is a warning on stderr, as with cargo.
pub fn check_paths(
    manifest_path: Option<&Path>,
    all_members: bool,
    exclude: &[String],
) -> Result<Option<CheckPaths>, String> {
    if manifest_path.is_none() && !all_members {
        return Ok(None);
    }
    let ws = workspace(manifest_path)?;
    if !all_members {
        return Ok(Some(CheckPaths {
            paths: vec![display_dir(&ws.root)],
            skip_dirs: Vec::new(),
            problems: Vec::new(),
        }));
    }
    let names: Vec<&str> = ws.members.iter().map(|m| m.name.as_str()).collect();
    for x in exclude {
        if !names.contains(&x.as_str()) {
            eprintln!(
                "warning: excluded package `{x}` is not a member of the workspace{}",
                crate::text::did_you_mean(x, &names)
                    .map(|s| format!(" (did you mean `{s}`?)"))
                    .unwrap_or_default()
            );
        }
    }
    let (skipped, kept): (Vec<&Member>, Vec<&Member>) =
        ws.members.iter().partition(|m| exclude.contains(&m.name));
    Ok(Some(CheckPaths {
        paths: kept.iter().map(|m| display_dir(&m.dir)).collect(),
        skip_dirs: skipped.iter().map(|m| m.dir.clone()).collect(),
        problems: ws.outside.iter().map(|o| outside_problem(&ws, o)).collect(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_from_manifests() {
        let dir = std::env::temp_dir().join(format!("idemlint-cargo-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let w = |p: &str, t: &str| {
            let p = dir.join(p);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        };
        w(
            "Cargo.toml",
            "[package]\nname = \"app\"\n[workspace]\nmembers = [\"crates/*\", \"tools/x\"]\nexclude = [\"crates/skip\"]\n",
        );
        w("crates/gen/Cargo.toml", "[package]\nname = \"gen\"\n");
        w("crates/skip/Cargo.toml", "[package]\nname = \"skip\"\n");
        w("crates/empty/README", "");
        w("tools/x/Cargo.toml", "[package]\nname = \"x\"\n");
        let root = dir.canonicalize().unwrap();
        let ws = workspace(Some(&dir.join("crates/gen/Cargo.toml"))).unwrap();
        assert_eq!(ws.root, root);
        let names: Vec<&str> = ws.members.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["app", "gen", "x"]);
        assert_eq!(ws.members[1].dir, root.join("crates/gen"));
        // A member not listed by the workspace above it is its own root.
        let skip = workspace(Some(&dir.join("crates/skip/Cargo.toml"))).unwrap();
        assert_eq!(skip.root, root.join("crates/skip"));
        assert!(workspace(Some(&dir.join("nope/Cargo.toml"))).is_err());
        // Package ids: the declared version, the workspace's for an inherited one.
        w(
            "tools/x/Cargo.toml",
            "[package]\nname = \"x\"\nversion = \"1.2.3\"\n",
        );
        assert_eq!(
            package(&root.join("tools/x/Cargo.toml")),
            Some(Package {
                name: "x".into(),
                version: "1.2.3".into()
            })
        );
        w(
            "Cargo.toml",
            "[package]\nname = \"app\"\n[workspace]\nmembers = [\"crates/*\", \"tools/x\"]\n[workspace.package]\nversion = \"4.5.6\"\n",
        );
        w(
            "crates/gen/Cargo.toml",
            "[package]\nname = \"gen\"\nversion.workspace = true\n",
        );
        assert_eq!(
            package(&root.join("crates/gen/Cargo.toml")).map(|p| p.version),
            Some("4.5.6".into())
        );
        assert_eq!(
            package(&root.join("Cargo.toml")).map(|p| p.version),
            Some("0.0.0".into())
        );
        assert_eq!(package(&root.join("crates/empty/Cargo.toml")), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
