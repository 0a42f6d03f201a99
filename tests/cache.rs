//! The pass-1 cache directory (`check --cache-dir DIR`): a second run reads every
//! unchanged file's summary from DIR and reports exactly what a run without the cache
//! reports; an edited file (here: the retry helper another file's finding depends on) is
//! parsed again; a damaged entry, or one planted where idemlint would write, is never
//! trusted.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

mod common;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A retry combinator inferred from its body: the finding in `Billing.kt` needs it.
const RETRY: &str = "package shop\n\nfun <T> keepTrying(times: Int, block: () -> T): T {\n    var last: Exception? = null\n    repeat(times) {\n        try {\n            return block()\n        } catch (e: Exception) {\n            last = e\n        }\n    }\n    throw last!!\n}\n";
/// The same helper, now calling its block once.
const ONCE: &str =
    "package shop\n\nfun <T> keepTrying(times: Int, block: () -> T): T {\n    return block()\n}\n";
const BILLING: &str = "package shop\n\nimport java.util.UUID\n\nfun charge(api: Api) = keepTrying(3) { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }\n";

/// Runs `check . --timings` (with `--cache-dir cache` when asked): the findings as
/// `(path, line, rule)` and the cache line of the statistics.
fn run(dir: &Path, cache: Option<&Path>) -> (Vec<(String, u64, String)>, String) {
    let mut cmd = Command::cargo_bin("idemlint").unwrap();
    cmd.current_dir(dir).args([
        "check",
        "src",
        "--format",
        "json",
        "--exit-zero",
        "--timings",
    ]);
    if let Some(c) = cache {
        cmd.arg("--cache-dir").arg(c);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut got = common::findings_of(&v);
    got.sort();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let cache_line = stderr
        .lines()
        .find(|l| l.contains("stats: cache:"))
        .unwrap_or_default()
        .to_string();
    (got, cache_line)
}

fn entries(cache: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for v in std::fs::read_dir(cache).unwrap().flatten() {
        if !v.path().is_dir() {
            continue;
        }
        for sub in std::fs::read_dir(v.path()).unwrap().flatten() {
            for e in std::fs::read_dir(sub.path()).unwrap().flatten() {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_second_run_reads_unchanged_files_from_the_cache_and_reports_the_same() {
    let dir = scratch("cache_second_run");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/Retry.kt"), RETRY).unwrap();
    std::fs::write(dir.join("src/Billing.kt"), BILLING).unwrap();
    let cache = dir.join("cache");

    let (uncached, line) = run(&dir, None);
    assert_eq!(
        uncached,
        vec![(
            "src/Billing.kt".to_string(),
            5,
            "key-in-retry-scope".to_string()
        )]
    );
    assert_eq!(line, "", "no cache line without a cache directory");

    let (first, line) = run(&dir, Some(&cache));
    assert_eq!(first, uncached);
    assert!(
        line.contains("0 file(s) from the cache directory, 2 written"),
        "{line}"
    );
    assert!(cache.join("CACHEDIR.TAG").is_file());
    assert_eq!(entries(&cache).len(), 2);

    let (second, line) = run(&dir, Some(&cache));
    assert_eq!(second, uncached);
    assert!(
        line.contains("2 file(s) from the cache directory, 0 written"),
        "{line}"
    );

    // The helper no longer retries: its summary is parsed again and the finding goes.
    std::fs::write(dir.join("src/Retry.kt"), ONCE).unwrap();
    let (third, line) = run(&dir, Some(&cache));
    assert_eq!(third, Vec::<(String, u64, String)>::new());
    assert!(
        line.contains("1 file(s) from the cache directory, 1 written"),
        "{line}"
    );
    assert_eq!(run(&dir, None).0, third);
}

#[test]
fn damaged_or_planted_cache_entries_are_never_trusted() {
    let dir = scratch("cache_damaged");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/Retry.kt"), RETRY).unwrap();
    std::fs::write(dir.join("src/Billing.kt"), BILLING).unwrap();
    let cache = dir.join("cache");
    let (expected, _) = run(&dir, Some(&cache));
    assert_eq!(expected.len(), 1);

    // Damaged entries (truncated JSON, another shape) are misses, parsed again.
    let files = entries(&cache);
    std::fs::write(&files[0], b"{\"summary\": ").unwrap();
    std::fs::write(&files[1], b"[1, 2, 3]").unwrap();
    let (got, line) = run(&dir, Some(&cache));
    assert_eq!(got, expected);
    assert!(
        line.contains("0 file(s) from the cache directory, 2 written"),
        "{line}"
    );

    // An entry replaced by a symbolic link to another entry is not followed.
    #[cfg(unix)]
    {
        let files = entries(&cache);
        std::fs::remove_file(&files[0]).unwrap();
        std::os::unix::fs::symlink(&files[1], &files[0]).unwrap();
        let (got, line) = run(&dir, Some(&cache));
        assert_eq!(got, expected);
        assert!(
            line.contains("1 file(s) from the cache directory"),
            "{line}"
        );
    }

    // A subdirectory planted as a symbolic link elsewhere is not written through.
    #[cfg(unix)]
    {
        let outside = dir.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let fresh = dir.join("cache2");
        let _ = run(&dir, Some(&fresh));
        let version = std::fs::read_dir(&fresh)
            .unwrap()
            .flatten()
            .find(|e| e.path().is_dir())
            .unwrap()
            .path();
        for sub in std::fs::read_dir(&version).unwrap().flatten() {
            std::fs::remove_dir_all(sub.path()).unwrap();
            std::os::unix::fs::symlink(&outside, sub.path()).unwrap();
        }
        let (got, line) = run(&dir, Some(&fresh));
        assert_eq!(got, expected);
        assert!(line.contains("0 written, 2 not written"), "{line}");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    }
}

#[test]
fn a_cache_directory_that_cannot_be_made_is_a_tool_error() {
    let dir = scratch("cache_unusable");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/Billing.kt"), BILLING).unwrap();
    std::fs::write(dir.join("not-a-dir"), "x").unwrap();
    let out = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["check", "src", "--cache-dir", "not-a-dir"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cannot use the cache directory not-a-dir"),
        "{stderr}"
    );
}
