//! Helpers shared by the CLI test files: the binary with the caller's colour and CI
//! settings removed, scratch directories under cargo's per-test temporary directory, and
//! a run's exit code and output.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The `idemlint` binary, with `NO_COLOR`, `FORCE_COLOR`, `CLICOLOR_FORCE`, `CLICOLOR` and
/// `CI` removed from its environment, so output does not depend on who runs the tests.
pub fn idemlint() -> Command {
    let mut c = Command::cargo_bin("idemlint").unwrap();
    for v in [
        "NO_COLOR",
        "FORCE_COLOR",
        "CLICOLOR_FORCE",
        "CLICOLOR",
        "CI",
    ] {
        c.env_remove(v);
    }
    c
}

/// An empty directory `CARGO_TARGET_TMPDIR/<group>/<name>` (removed first if present).
pub fn scratch(group: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `text` to `dir/rel`, creating parent directories.
pub fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Exit code and UTF-8 output of one run.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `idemlint ARGS` in `dir` with extra environment variables.
pub fn run_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut c = idemlint();
    c.current_dir(dir).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    Out {
        code: o.status.code().unwrap(),
        stdout: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
    }
}

/// Runs `idemlint ARGS` in `dir`.
pub fn run(dir: &Path, args: &[&str]) -> Out {
    run_env(dir, args, &[])
}

/// `(path, line, rule)` of every finding of a JSON report (`--format json`), in report
/// order.
pub fn findings_of(v: &serde_json::Value) -> Vec<(String, u64, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}
