//! Cargo workspace facts for `cargo idemlint --manifest-path/--workspace/--exclude`, from
//! `cargo metadata --format-version 1 --no-deps` (run through `$CARGO`, else `cargo`).
//! `--no-deps` lists the workspace members only and needs neither the network nor a
//! lockfile.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// One workspace member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    /// The directory holding its `Cargo.toml`.
    pub dir: PathBuf,
}

/// A cargo workspace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workspace {
    pub root: PathBuf,
    pub members: Vec<Member>,
}

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<Package>,
    workspace_members: Vec<String>,
    workspace_root: PathBuf,
}

#[derive(Deserialize)]
struct Package {
    id: String,
    name: String,
    manifest_path: PathBuf,
}

/// Parses `cargo metadata --format-version 1` JSON.
pub fn parse_metadata(json: &str) -> Result<Workspace, String> {
    let m: Metadata = serde_json::from_str(json)
        .map_err(|e| format!("cannot read the output of `cargo metadata`: {e}"))?;
    let mut members: Vec<Member> = m
        .packages
        .into_iter()
        .filter(|p| m.workspace_members.contains(&p.id))
        .map(|p| Member {
            name: p.name,
            dir: p
                .manifest_path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
        })
        .collect();
    members.sort_by(|a, b| a.dir.cmp(&b.dir));
    Ok(Workspace {
        root: m.workspace_root,
        members,
    })
}

/// Runs `cargo metadata --format-version 1 --no-deps [--manifest-path PATH]` in the
/// current directory. Errors carry cargo's own message.
pub fn workspace(manifest_path: Option<&Path>) -> Result<Workspace, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = std::process::Command::new(cargo);
    cmd.args(["metadata", "--format-version", "1", "--no-deps"]);
    if let Some(p) = manifest_path {
        cmd.arg("--manifest-path").arg(p);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot run `cargo metadata`: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("`cargo metadata` failed: {}", err.trim()));
    }
    parse_metadata(&String::from_utf8_lossy(&out.stdout))
}

/// `dir` as shown to the user: relative to the current directory when it is inside it
/// (`.` for the directory itself), absolute otherwise.
pub fn display_dir(dir: &Path) -> PathBuf {
    let Ok(cwd) = std::env::current_dir().and_then(|c| c.canonicalize()) else {
        return dir.to_path_buf();
    };
    let dir_abs = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    match dir_abs.strip_prefix(&cwd) {
        Ok(rest) if rest.as_os_str().is_empty() => PathBuf::from("."),
        Ok(rest) => rest.to_path_buf(),
        Err(_) => dir_abs,
    }
}

/// What to walk, for [`crate::check::Options`]: `paths` and `skip_dirs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckPaths {
    pub paths: Vec<PathBuf>,
    pub skip_dirs: Vec<PathBuf>,
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
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_from_metadata() {
        let json = r#"{"packages":[
            {"id":"path+file:///w#app@0.1.0","name":"app","manifest_path":"/w/Cargo.toml","version":"0.1.0"},
            {"id":"path+file:///w/crates/gen#gen@0.1.0","name":"gen","manifest_path":"/w/crates/gen/Cargo.toml"}],
            "workspace_members":["path+file:///w#app@0.1.0","path+file:///w/crates/gen#gen@0.1.0"],
            "workspace_root":"/w","target_directory":"/w/target","version":1}"#;
        let w = parse_metadata(json).unwrap();
        assert_eq!(w.root, PathBuf::from("/w"));
        assert_eq!(w.members.len(), 2);
        assert_eq!(w.members[1].name, "gen");
        assert_eq!(w.members[1].dir, PathBuf::from("/w/crates/gen"));
        assert!(parse_metadata("{").is_err());
    }
}
