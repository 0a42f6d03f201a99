//! Reporting a subset of a project (`--only`, `--files-from`, `--changed-since`,
//! `--new-since`): the whole tree is indexed, so a retry helper in an unchanged file still
//! makes the finding in the named one; git is asked read-only and nothing the repository
//! configures (filters, textconv, external diff, fsmonitor) is run.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

mod common;

fn idemlint() -> Command {
    Command::cargo_bin("idemlint").unwrap()
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A retry combinator inferred from its body (not a catalogue name): only the whole
/// project knows that `keepTrying` retries its block.
const RETRY: &str = "package shop\n\nfun <T> keepTrying(times: Int, block: () -> T): T {\n    var last: Exception? = null\n    repeat(times) {\n        try {\n            return block()\n        } catch (e: Exception) {\n            last = e\n        }\n    }\n    throw last!!\n}\n";
const BILLING: &str = "package shop\n\nimport java.util.UUID\n\nfun charge(api: Api) = keepTrying(3) { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }\n";
const REFUND_LINE: &str = "fun refund(api: Api) = keepTrying(3) { api.createRefund(idempotencyKey = UUID.randomUUID().toString()) }\n";

fn project(name: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/Retry.kt"), RETRY).unwrap();
    std::fs::write(dir.join("src/Billing.kt"), BILLING).unwrap();
    dir
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=idemlint-test",
            "-c",
            "user.email=idemlint-test@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn repo(name: &str) -> PathBuf {
    let dir = project(name);
    git(&dir, &["init", "--quiet"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "--quiet", "--no-verify", "-m", "init"]);
    dir
}

/// `(path, line, rule)` of the JSON report's findings, the exit code and standard error.
fn check(
    dir: &Path,
    args: &[&str],
    stdin: Option<&[u8]>,
) -> (Vec<(String, u64, String)>, i32, String) {
    let mut cmd = idemlint();
    cmd.current_dir(dir)
        .args(["check", "--format", "json"])
        .args(args);
    if let Some(s) = stdin {
        cmd.write_stdin(s);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let code = out.status.code().unwrap_or(-1);
    let v: serde_json::Value = match serde_json::from_slice(&out.stdout) {
        Ok(v) => v,
        Err(_) => return (Vec::new(), code, stderr),
    };
    (common::findings_of(&v), code, stderr)
}

fn billing(line: u64) -> (String, u64, String) {
    ("src/Billing.kt".into(), line, "key-in-retry-scope".into())
}

#[test]
fn only_indexes_the_whole_tree_and_reports_the_named_files() {
    let dir = project("only_whole_tree");
    // Alone, Billing.kt does not know that keepTrying retries.
    let (alone, code, _) = check(&dir, &["src/Billing.kt"], None);
    assert!(alone.is_empty() && code == 0, "{alone:?}");
    let (f, code, err) = check(&dir, &[".", "--only", "src/Billing.kt"], None);
    assert_eq!((f, code), (vec![billing(5)], 1), "{err}");
    assert!(err.contains("in 1 file checked"), "{err}");
    // Only the helper: nothing to report in it.
    let (f, code, _) = check(&dir, &[".", "--only", "src/Retry.kt"], None);
    assert_eq!((f.len(), code), (0, 0));
    // A directory names every file under it; `--only -- FILE` too.
    let (f, _, _) = check(&dir, &[".", "--only", "src"], None);
    assert_eq!(f, vec![billing(5)]);
    let (f, _, _) = check(&dir, &["--only", "--", "src/Billing.kt"], None);
    assert_eq!(f, vec![billing(5)]);
    // A named file outside the walked PATH is an error that says so (PATH is the project).
    let (_, code, err) = check(&dir, &["src/Retry.kt", "--only", "src/Billing.kt"], None);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("not under the checked path src/Retry.kt"),
        "{err}"
    );
    // A named file that does not exist is a tool error; other file types are ignored.
    let (_, code, err) = check(&dir, &[".", "--only", "src/Nope.kt"], None);
    assert_eq!(code, 2);
    assert!(err.contains("path not found: src/Nope.kt"), "{err}");
    std::fs::write(dir.join("README.md"), "# x\n").unwrap();
    let (f, code, err) = check(&dir, &[".", "--only", "README.md"], None);
    assert_eq!((f.len(), code), (0, 0), "{err}");
    assert!(err.contains("in 0 files checked"), "{err}");
    // `--only` cannot be combined with standard input.
    let (_, code, err) = check(
        &dir,
        &["--stdin-filename", "A.kt", "-", "--only", "src/Billing.kt"],
        Some(b"fun a() = 1\n"),
    );
    assert_eq!(code, 2, "{err}");
}

#[test]
fn files_from_reads_lines_nul_separated_lists_and_standard_input() {
    let dir = project("files_from");
    std::fs::write(dir.join("list.txt"), "src/Billing.kt\r\n\nsrc/Retry.kt\n").unwrap();
    std::fs::write(dir.join("list0"), b"src/Retry.kt\0src/Billing.kt\0").unwrap();
    for list in ["list.txt", "list0"] {
        let (f, code, err) = check(&dir, &[".", "--files-from", list], None);
        assert_eq!((f, code), (vec![billing(5)], 1), "{list}: {err}");
        assert!(err.contains("in 2 files checked"), "{err}");
    }
    let (f, _, err) = check(&dir, &[".", "--files-from", "-"], Some(b"src/Billing.kt\n"));
    assert_eq!(f, vec![billing(5)], "{err}");
    // An empty list reports nothing (the project is still read).
    let (f, code, err) = check(&dir, &[".", "--files-from", "-"], Some(b""));
    assert_eq!((f.len(), code), (0, 0), "{err}");
    let (_, code, err) = check(&dir, &[".", "--files-from", "missing.txt"], None);
    assert_eq!(code, 2);
    assert!(err.contains("--files-from missing.txt"), "{err}");
}

#[test]
fn changed_since_reports_files_changed_or_untracked_since_a_commit() {
    let dir = repo("changed_since");
    // Nothing changed: nothing reported, although the tree has a finding.
    let (f, code, err) = check(&dir, &[".", "--changed-since", "HEAD"], None);
    assert_eq!((f.len(), code), (0, 0), "{err}");
    // The helper changes: only it is reported on (it has no finding).
    std::fs::write(dir.join("src/Retry.kt"), format!("{RETRY}// tuned\n")).unwrap();
    let (f, _, err) = check(&dir, &[".", "--changed-since", "HEAD"], None);
    assert!(f.is_empty(), "{f:?}");
    assert!(err.contains("in 1 file checked"), "{err}");
    // A new, untracked file that uses the unchanged helper.
    std::fs::write(
        dir.join("src/Refund.kt"),
        format!("package shop\n\nimport java.util.UUID\n\n{REFUND_LINE}"),
    )
    .unwrap();
    let (f, _, err) = check(&dir, &[".", "--changed-since", "HEAD"], None);
    assert_eq!(
        f,
        vec![("src/Refund.kt".into(), 5, "key-in-retry-scope".into())],
        "{err}"
    );
    // Billing.kt changed since the first commit.
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "--quiet", "--no-verify", "-m", "more"]);
    std::fs::write(dir.join("src/Billing.kt"), format!("{BILLING}// note\n")).unwrap();
    let (f, _, err) = check(&dir, &[".", "--changed-since", "HEAD"], None);
    assert_eq!(f, vec![billing(5)], "{err}");
    // A deleted file is not an error.
    std::fs::remove_file(dir.join("src/Refund.kt")).unwrap();
    let (f, code, err) = check(&dir, &[".", "--changed-since", "HEAD~1"], None);
    assert_eq!((f, code), (vec![billing(5)], 1), "{err}");
    // Bad revisions and directories outside a repository are tool errors.
    for bad in ["no-such-rev", "--output=x", ""] {
        let arg = format!("--changed-since={bad}");
        let (_, code, err) = check(&dir, &[".", &arg], None);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("--changed-since"), "{err}");
    }
    assert!(!dir.join("x").exists());
    // Outside a work tree (git may not look above the scratch directory).
    let outside = project("changed_since_no_repo");
    let out = idemlint()
        .current_dir(&outside)
        .env("GIT_CEILING_DIRECTORIES", outside.parent().unwrap())
        .args(["check", ".", "--changed-since", "HEAD"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--changed-since: not a git repository: no `.git` in `.`"),
        "{err}"
    );
}

#[test]
fn new_since_reports_only_findings_on_changed_lines() {
    let dir = repo("new_since");
    let (f, code, err) = check(&dir, &[".", "--new-since", "HEAD"], None);
    assert_eq!((f.len(), code), (0, 0), "{err}");
    // A new defect below the old one in the same file: only the new line is reported.
    std::fs::write(
        dir.join("src/Billing.kt"),
        format!("{BILLING}\n{REFUND_LINE}"),
    )
    .unwrap();
    let (f, code, err) = check(&dir, &[".", "--new-since", "HEAD"], None);
    assert_eq!((f, code), (vec![billing(7)], 1), "{err}");
    // The whole run still has both.
    let (f, _, _) = check(&dir, &["."], None);
    assert_eq!(f, vec![billing(5), billing(7)]);
    // A modified line counts as changed.
    std::fs::write(
        dir.join("src/Billing.kt"),
        BILLING.replace("fun charge(api: Api)", "fun charge(api: Api, n: Int)"),
    )
    .unwrap();
    let (f, _, err) = check(&dir, &[".", "--new-since", "HEAD"], None);
    assert_eq!(f, vec![billing(5)], "{err}");
    // With --only, the named files and their changed lines.
    let (f, _, _) = check(
        &dir,
        &[".", "--new-since", "HEAD", "--only", "src/Retry.kt"],
        None,
    );
    assert!(f.is_empty());
    let (_, code, err) = check(
        &dir,
        &[".", "--new-since", "HEAD", "--changed-since", "HEAD"],
        None,
    );
    assert_eq!(code, 2, "{err}");
}

/// Filters, text conversions, external diff drivers and a file-system monitor configured
/// for the repository are programs git would run; none of them runs.
#[cfg(unix)]
#[test]
fn git_runs_no_filter_textconv_external_diff_or_fsmonitor() {
    use std::os::unix::fs::PermissionsExt;
    let dir = repo("git_no_programs");
    let marker = dir.join("ran");
    let script = dir.join("evil.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = script.display().to_string();
    for (k, v) in [
        ("filter.evil.clean", s.as_str()),
        ("filter.evil.smudge", s.as_str()),
        ("filter.evil.process", s.as_str()),
        ("diff.evil.textconv", s.as_str()),
        ("diff.evil.command", s.as_str()),
        ("diff.external", s.as_str()),
        ("core.fsmonitor", s.as_str()),
        ("core.pager", s.as_str()),
    ] {
        git(&dir, &["config", k, v]);
    }
    // The tree's attributes ask for the filter and the diff driver.
    std::fs::write(dir.join(".gitattributes"), "*.kt filter=evil diff=evil\n").unwrap();
    std::fs::remove_file(&marker).ok();
    // Stat-dirty, changed and untracked files: every way git could read a file.
    std::fs::write(
        dir.join("src/Billing.kt"),
        format!("{BILLING}\n{REFUND_LINE}"),
    )
    .unwrap();
    std::fs::write(dir.join("src/Other.kt"), "package shop\n").unwrap();
    let (f, _, err) = check(&dir, &[".", "--changed-since", "HEAD"], None);
    assert_eq!(f, vec![billing(5), billing(7)], "{err}");
    let (f, _, err) = check(&dir, &[".", "--new-since", "HEAD"], None);
    assert_eq!(f, vec![billing(7)], "{err}");
    assert!(
        !marker.exists(),
        "git ran a configured program: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    // The configuration is live: plain `git diff` runs the programs.
    let _ = std::process::Command::new("git")
        .current_dir(&dir)
        .args(["diff", "HEAD"])
        .output();
    assert!(
        marker.exists(),
        "the test's configuration does not run anything"
    );
}

/// A directory of the checked tree made to look like a git directory (`HEAD`, `objects/`,
/// `refs/`, a `config` with `core.worktree` and a clean filter, `info/attributes` asking for
/// it, all committed as plain files): git's own discovery from `svc/billing` would take it
/// for a bare repository and run the filter. idemlint asks the checkout's repository, and
/// outside a checkout refuses.
#[cfg(unix)]
#[test]
fn a_git_directory_committed_in_the_tree_is_never_used() {
    let dir = scratch("embedded_git_dir");
    let marker = dir.parent().unwrap().join("embedded_git_dir_ran");
    let _ = std::fs::remove_file(&marker);
    let g = dir.join("svc/billing");
    // Run git the way idemlint did before: its discovery takes the planted directory.
    let discovered = |from: &Path| {
        let out = std::process::Command::new("git")
            .current_dir(from)
            .args(["rev-parse", "--absolute-git-dir"])
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_DIR")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let plant = |g: &Path| {
        git(
            g.parent().unwrap(),
            &["init", "--quiet", "--bare", "billing"],
        );
        let _ = std::fs::remove_dir_all(g.join("hooks"));
        std::fs::create_dir_all(g.join("wt")).unwrap();
        let gd = format!("--git-dir={}", g.display());
        let filter = format!("sh -c 'id > {}; cat'", marker.display());
        for (k, v) in [
            ("core.bare", "false"),
            ("core.worktree", "wt"),
            ("filter.x.clean", filter.as_str()),
        ] {
            git(g, &[&gd, "config", k, v]);
        }
        std::fs::write(g.join("info/attributes"), "* filter=x\n").unwrap();
        std::fs::write(g.join("wt/Retry.kt"), RETRY).unwrap();
        std::fs::write(g.join("wt/Billing.kt"), BILLING).unwrap();
        let wt = format!("--work-tree={}", g.join("wt").display());
        git(g, &[&gd, &wt, "add", "-A"]);
        git(
            g,
            &[
                &gd,
                &wt,
                "commit",
                "--quiet",
                "--no-verify",
                "-m",
                "embedded",
            ],
        );
        // The filter is live: `add` and `commit` above ran it.
        assert!(marker.exists(), "the planted filter does not run");
        std::fs::remove_file(&marker).unwrap();
    };
    std::fs::create_dir_all(dir.join("svc")).unwrap();
    plant(&g);
    // The pull request commits it all as files of the checkout.
    git(&dir, &["init", "--quiet"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "--quiet", "--no-verify", "-m", "pr"]);
    assert!(g.join("HEAD").is_file() && g.join("objects").is_dir());
    assert_eq!(
        Path::new(&discovered(&g)).canonicalize().unwrap(),
        g.canonicalize().unwrap(),
        "plain git discovery does not find the planted directory"
    );
    // A change after the checkout's commit: reported against the checkout's repository.
    std::fs::write(g.join("wt/Billing.kt"), format!("{BILLING}\n{REFUND_LINE}")).unwrap();
    let file = "svc/billing/wt/Billing.kt".to_string();
    for args in [
        &["svc/billing", "--new-since", "HEAD"][..],
        &["svc/billing/wt", "--new-since", "HEAD"],
        &["svc/billing", "--changed-since", "HEAD"],
    ] {
        let (f, code, err) = check(&dir, args, None);
        let lines: Vec<u64> = f.iter().map(|(_, l, _)| *l).collect();
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(f.iter().all(|(p, _, _)| *p == file), "{args:?}: {f:?}");
        let want: &[u64] = if args[1] == "--new-since" {
            &[7]
        } else {
            &[5, 7]
        };
        assert_eq!(lines, want, "{args:?}: {err}");
        assert!(!marker.exists(), "{args:?}: the tree's filter ran");
    }
    // The same tree without a checkout around it (an unpacked archive): no repository.
    let bare = scratch("embedded_git_dir_no_checkout");
    std::fs::create_dir_all(bare.join("svc")).unwrap();
    plant(&bare.join("svc/billing"));
    for (path, flag) in [
        ("svc/billing", "--new-since"),
        ("svc/billing/wt", "--changed-since"),
    ] {
        let out = idemlint()
            .current_dir(&bare)
            .env("GIT_CEILING_DIRECTORIES", bare.parent().unwrap())
            .args(["check", path, flag, "HEAD"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!(
                "{flag}: not a git repository: no `.git` in `{path}`"
            )),
            "{err}"
        );
        assert!(!marker.exists(), "{path}: the tree's filter ran");
    }
}

/// The patch of `--new-since` is read by its structure: an added line `++ b/...` (printed
/// `+++ b/...` in the patch) or `-- a/...` is content, not a file header that would replace
/// the file's changed lines; names with spaces, quotes and newlines are read back.
#[test]
fn new_since_reads_header_like_lines_as_content() {
    let dir = repo("new_since_header_lines");
    let tail =
        "/*\n++ b/src/Billing.kt\n-- a/src/Billing.kt\n++ \"b/src/Retry.kt\"\n@@ -1 +1 @@\n*/\n";
    std::fs::write(
        dir.join("src/Billing.kt"),
        format!("{BILLING}\n{REFUND_LINE}{tail}"),
    )
    .unwrap();
    let (f, code, err) = check(&dir, &[".", "--new-since", "HEAD"], None);
    assert_eq!((f, code), (vec![billing(7)], 1), "{err}");
    // Odd names, tracked and changed since the commit.
    let mut names = vec!["src/Bill ing \"q\" \\ é.kt"];
    if cfg!(unix) {
        names.push("src/new\nline\t.kt");
    }
    for n in &names {
        std::fs::write(dir.join(n), BILLING).unwrap();
    }
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "--quiet", "--no-verify", "-m", "names"]);
    for n in &names {
        std::fs::write(dir.join(n), format!("{BILLING}\n{REFUND_LINE}{tail}")).unwrap();
    }
    let (f, code, err) = check(&dir, &[".", "--new-since", "HEAD"], None);
    let lines: Vec<u64> = f.iter().map(|(_, l, _)| *l).collect();
    assert_eq!(code, 1, "{err}");
    assert_eq!(lines, vec![7; names.len()], "{f:?} {err}");
}

/// `Options::cancel` (the language server's superseded analyses) stops a run early and
/// says so; a cancel that never answers yes changes nothing.
#[test]
fn a_cancelled_run_stops_and_says_so() {
    use idemlint::check::{Cancel, Options, run};
    let dir = project("cancelled_run");
    let opts = |cancel: Option<Cancel>| Options {
        paths: vec![dir.clone()],
        cancel,
        ..Options::default()
    };
    let cat = idemlint::catalogue::Catalogue::builtin();
    let plain = run(&opts(None), &cat).unwrap();
    assert_eq!(plain.findings.len(), 1);
    assert!(!plain.cancelled);
    let never = run(&opts(Some(Cancel(std::sync::Arc::new(|| false)))), &cat).unwrap();
    assert_eq!(never.findings.len(), 1);
    assert!(!never.cancelled);
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = asked.clone();
    let stop = Cancel(std::sync::Arc::new(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        true
    }));
    let r = run(&opts(Some(stop)), &cat).unwrap();
    assert!(r.cancelled);
    assert!(r.findings.is_empty());
    assert_eq!(
        asked.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "stopped at the first check"
    );
}

/// `--new-since REV --fix` fixes only the findings on changed lines, and reports against
/// the lines as they are after the fix.
#[test]
fn new_since_with_fix_fixes_only_the_new_findings() {
    let old = "import java.util.UUID\n\nsuspend fun charge(api: Api): Charge {\n    return retryOnTransient { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }\n}\n";
    let dir = scratch("new_since_fix");
    std::fs::write(dir.join("Billing.kt"), old).unwrap();
    git(&dir, &["init", "--quiet"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "--quiet", "--no-verify", "-m", "init"]);
    let new_fn = "suspend fun refund(api: Api): Charge {\n    return retryOnTransient { api.createRefund(idempotencyKey = UUID.randomUUID().toString()) }\n}\n\n";
    let text = old.replacen(
        "suspend fun charge",
        &format!("{new_fn}suspend fun charge"),
        1,
    );
    std::fs::write(dir.join("Billing.kt"), &text).unwrap();
    let (f, code, _) = check(&dir, &[".", "--new-since", "HEAD"], None);
    assert_eq!(
        (f, code),
        (
            vec![("Billing.kt".into(), 4, "key-in-retry-scope".into())],
            1
        )
    );
    let (f, code, err) = check(&dir, &[".", "--new-since", "HEAD", "--fix"], None);
    assert_eq!((f.len(), code), (0, 0), "{err}");
    let fixed = std::fs::read_to_string(dir.join("Billing.kt")).unwrap();
    assert!(fixed.contains("val idempotencyKey = UUID.randomUUID().toString()\n    return retryOnTransient { api.createRefund(idempotencyKey = idempotencyKey) }"), "{fixed}");
    assert!(
        fixed.contains("api.createCharge(idempotencyKey = UUID.randomUUID().toString())"),
        "the old finding is left alone: {fixed}"
    );
    // The whole run still has the old one, on its moved line.
    let (f, _, _) = check(&dir, &["."], None);
    assert_eq!(
        f,
        vec![("Billing.kt".into(), 9, "key-in-retry-scope".into())]
    );
}

/// A pass-1 cache (kept by the language server between analyses) gives the same findings
/// as a run without it, and a second run parses nothing that did not change.
#[test]
fn the_pass1_cache_changes_no_finding_and_reparses_only_changed_files() {
    use idemlint::check::{Options, Pass1Cache, run};
    let dir = project("pass1_cache");
    for i in 0..6 {
        std::fs::write(
            dir.join(format!("src/Job{i}.kt")),
            format!("package shop\n\nimport java.util.UUID\n\nfun job{i}(api: Api) = keepTrying(2) {{ api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }}\n"),
        )
        .unwrap();
    }
    let cat = idemlint::catalogue::Catalogue::builtin();
    let cache = Pass1Cache::default();
    let opts = |cache: Option<Pass1Cache>| Options {
        paths: vec![dir.clone()],
        pass1_cache: cache,
        ..Options::default()
    };
    let json = |r: &idemlint::check::Report| -> Vec<String> {
        r.findings
            .iter()
            .map(|f| serde_json::to_string(f).unwrap())
            .collect()
    };
    let plain = run(&opts(None), &cat).unwrap();
    assert_eq!(plain.findings.len(), 7);
    let first = run(&opts(Some(cache.clone())), &cat).unwrap();
    assert_eq!(json(&first), json(&plain));
    let (files, hits, misses) = cache.counts();
    assert_eq!((files, hits, misses), (first.parsed, 0, first.parsed));
    let second = run(&opts(Some(cache.clone())), &cat).unwrap();
    assert_eq!(json(&second), json(&plain));
    let (_, hits, misses) = cache.counts();
    assert_eq!(
        (hits, misses),
        (second.parsed, first.parsed),
        "nothing parsed again"
    );
    // The helper stops retrying: one file parsed again, and the findings follow.
    std::fs::write(
        dir.join("src/Retry.kt"),
        "package shop\n\nfun <T> keepTrying(times: Int, block: () -> T): T = block()\n",
    )
    .unwrap();
    let third = run(&opts(Some(cache.clone())), &cat).unwrap();
    let (_, _, misses_after) = cache.counts();
    assert_eq!(misses_after, misses + 1);
    assert!(third.findings.is_empty());
    assert_eq!(json(&third), json(&run(&opts(None), &cat).unwrap()));
    // A configuration change invalidates the files it governs.
    std::fs::write(dir.join("idemlint.toml"), "# no settings\n").unwrap();
    let before = cache.counts().2;
    let fourth = run(&opts(Some(cache.clone())), &cat).unwrap();
    assert_eq!(cache.counts().2, before + fourth.parsed);
}
