//! Sets `IDEMLINT_VERSION` for `--version`: the package version and, when built from a git
//! checkout, the commit, read from `.git` as text (no `git` process). A source tarball (no
//! `.git`) gets the bare version.
//!
//! Sets `IDEMLINT_ANALYSIS_HASH`: 16 hex digits of a 64-bit FNV-1a hash over the package
//! version, `Cargo.lock` and every file under `src/` and `rules/` (paths and contents, in
//! sorted order). The pass-1 cache (`check --cache-dir`) keys its entries by it, so an
//! entry written by another build of the analysis is never read.

use std::fs;
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let version = env!("CARGO_PKG_VERSION");
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let full = match commit(&root) {
        Some(c) => format!("{version} ({c})"),
        None => version.to_string(),
    };
    println!("cargo:rustc-env=IDEMLINT_VERSION={full}");
    println!(
        "cargo:rustc-env=IDEMLINT_ANALYSIS_HASH={}",
        analysis_hash(&root, version)
    );
}

/// FNV-1a (64-bit) over the version, `Cargo.lock` and the files under `src/` and `rules/`.
fn analysis_hash(root: &Path, version: &str) -> String {
    fn eat(h: &mut u64, bytes: &[u8]) {
        for b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            *h ^= u64::from(*b);
            *h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => walk(&p, out),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    let mut files = Vec::new();
    for d in ["src", "rules"] {
        println!("cargo:rerun-if-changed={d}");
        walk(&root.join(d), &mut files);
    }
    println!("cargo:rerun-if-changed=Cargo.lock");
    files.push(root.join("Cargo.lock"));
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    eat(&mut h, version.as_bytes());
    for f in &files {
        let rel = f.strip_prefix(root).unwrap_or(f);
        eat(&mut h, rel.to_string_lossy().as_bytes());
        eat(&mut h, &fs::read(f).unwrap_or_default());
    }
    format!("{h:016x}")
}

/// The first 12 hex digits of HEAD's commit, or `None`.
fn commit(root: &Path) -> Option<String> {
    let dot_git = root.join(".git");
    // A worktree or submodule has a `.git` file: `gitdir: PATH`.
    let git_dir = if dot_git.is_file() {
        let text = fs::read_to_string(&dot_git).ok()?;
        let p = PathBuf::from(text.strip_prefix("gitdir:")?.trim());
        if p.is_absolute() { p } else { root.join(p) }
    } else if dot_git.is_dir() {
        dot_git
    } else {
        return None;
    };
    // Shared refs of a worktree live in the common directory.
    let common = fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .map(|c| git_dir.join(c.trim()))
        .unwrap_or_else(|| git_dir.clone());
    let head_file = git_dir.join("HEAD");
    println!("cargo:rerun-if-changed={}", head_file.display());
    let head = fs::read_to_string(&head_file).ok()?;
    let head = head.trim();
    let hash = match head.strip_prefix("ref:") {
        None => head.to_string(),
        Some(r) => {
            let r = r.trim();
            let loose = [git_dir.join(r), common.join(r)];
            let found = loose.iter().find_map(|p| {
                let h = fs::read_to_string(p).ok()?;
                println!("cargo:rerun-if-changed={}", p.display());
                Some(h.trim().to_string())
            });
            match found {
                Some(h) => h,
                None => {
                    let packed = common.join("packed-refs");
                    println!("cargo:rerun-if-changed={}", packed.display());
                    fs::read_to_string(packed).ok()?.lines().find_map(|l| {
                        let (h, name) = l.split_once(' ')?;
                        (name == r).then(|| h.to_string())
                    })?
                }
            }
        }
    };
    (hash.len() >= 12 && hash.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| hash[..12].to_string())
}
