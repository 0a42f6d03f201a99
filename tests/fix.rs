//! Fixes: snapshot of every fixed fixture and its `--diff`, the fix properties (idempotent,
//! the fixed sites are clean on re-analysis, no new syntax errors), compile checks of the
//! self-contained fix fixtures, the CLI flags, and the syntax-error rollback.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use idemlint::catalogue::Catalogue;
use idemlint::check::{Options, check_text, compute_fixes, run};
use idemlint::finding::{Applicability, Edit, Fix};
use idemlint::fix::apply::{Mode, apply, unified_diff};
use idemlint::model::Language;

fn fixture_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            fixture_files(&p, out);
        } else if Language::from_path(&p).is_some() {
            out.push(p);
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn parse_errors(path: &str, text: &str) -> usize {
    let lang = Language::from_path(Path::new(path)).unwrap();
    idemlint::lang::lower(lang, text).errors.len()
}

fn retry_findings_with_fix(path: &str, text: &str, cat: &Catalogue) -> usize {
    check_text(path, text, cat)
        .unwrap()
        .0
        .iter()
        .filter(|f| f.fix.is_some())
        .count()
}

#[test]
fn every_fixture_fix_is_snapshotted_and_well_behaved() {
    let cat = Catalogue::builtin();
    let mut files = Vec::new();
    fixture_files(&root(), &mut files);
    let mut fixed_count = 0;
    for file in files {
        let rel = file
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let opts = Options {
            paths: vec![file.clone()],
            ..Options::default()
        };
        let report = run(&opts, &cat).unwrap();
        let (fixed, errors) = compute_fixes(&report, Mode::All, &opts, &cat);
        assert!(errors.is_empty(), "{rel}: {errors:?}");
        let Some(f) = fixed.first() else { continue };
        fixed_count += 1;
        let name = rel.replace('/', "__");
        insta::assert_snapshot!(format!("{name}.fixed"), f.new);
        insta::assert_snapshot!(format!("{name}.diff"), unified_diff(&rel, &f.old, &f.new));
        // No new syntax errors.
        let display = &f.display;
        assert!(
            parse_errors(display, &f.new) <= parse_errors(display, &f.old),
            "{rel}: the fixed file has new syntax errors"
        );
        // The fixed sites are clean: fewer fixable findings remain, none of them new.
        let before = retry_findings_with_fix(display, &f.old, &cat);
        let after = retry_findings_with_fix(display, &f.new, &cat);
        assert_eq!(
            after, 0,
            "{rel}: fixable findings remain after --fix:\n{}",
            f.new
        );
        assert!(before >= f.rules.len(), "{rel}");
        // Idempotent: fixing the fixed text changes nothing.
        let again = check_text(display, &f.new, &cat).unwrap().0;
        let (twice, applied) = apply(&f.new, &again, Mode::All);
        assert!(
            applied.is_empty(),
            "{rel}: a second round applied {applied:?}"
        );
        assert_eq!(twice, f.new);
    }
    assert!(fixed_count >= 8, "only {fixed_count} fixtures got a fix");
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_fix_fixtures(dir: &Path) {
    for lang in ["java", "kotlin", "rust"] {
        std::fs::create_dir_all(dir.join(lang)).unwrap();
        for e in std::fs::read_dir(root().join("fix").join(lang)).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, dir.join(lang).join(p.file_name().unwrap())).unwrap();
        }
    }
}

fn has(cmd: &str) -> bool {
    std::process::Command::new(cmd)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn rustc_lib(file: &Path, out: &Path) {
    let o = std::process::Command::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()))
        .args(["--edition", "2021", "--crate-type", "lib", "-o"])
        .arg(out)
        .arg(file)
        .output()
        .expect("run rustc");
    assert!(
        o.status.success(),
        "{} does not compile:\n{}",
        file.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn javac(file: &Path, out: &Path) {
    let o = std::process::Command::new("javac")
        .arg("-d")
        .arg(out)
        .arg(file)
        .output()
        .expect("run javac");
    assert!(
        o.status.success(),
        "{} does not compile:\n{}",
        file.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn fix_flag_rewrites_files_that_still_compile() {
    let dir = scratch("fix_compile");
    copy_fix_fixtures(&dir);
    let rust = dir.join("rust/retry_fixes.rs");
    let java = dir.join("java/RetryFixes.java");
    rustc_lib(&rust, &dir.join("before.rlib"));
    let java_ok = has("javac");
    if java_ok {
        javac(&java, &dir.join("before"));
    } else {
        eprintln!("skipped the Java compile check: no javac");
    }
    let before = std::fs::read_to_string(&rust).unwrap();
    Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["check", "--fix", "--format", "json", "."])
        .assert()
        // One Kotlin finding (an expression-bodied function) has no mechanical fix.
        .code(1)
        .stderr(predicates::str::contains("applied 6 fixes in 3 files"));
    let after = std::fs::read_to_string(&rust).unwrap();
    assert_ne!(before, after);
    assert!(after.contains("let idempotency_key = Uuid::new_v4().to_string();"));
    rustc_lib(&rust, &dir.join("after.rlib"));
    if java_ok {
        javac(&java, &dir.join("after"));
    }
}

#[test]
fn diff_flag_prints_and_changes_nothing() {
    let dir = scratch("fix_diff");
    copy_fix_fixtures(&dir);
    let java = dir.join("java/RetryFixes.java");
    let before = std::fs::read_to_string(&java).unwrap();
    let out = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["check", "--diff", "java"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.starts_with("--- a/java/RetryFixes.java\n+++ b/java/RetryFixes.java\n"),
        "{out}"
    );
    assert!(out.contains("+        final String idempotencyKey = UUID.randomUUID().toString();"));
    assert_eq!(std::fs::read_to_string(&java).unwrap(), before);
    // `--fix --diff` is `--diff` (ruff's behaviour): the same diff, nothing written.
    let both = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["check", "--fix", "--diff", "java"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    assert_eq!(String::from_utf8(both).unwrap(), out);
    assert_eq!(std::fs::read_to_string(&java).unwrap(), before);
    // Nothing to fix: exit 0 and no output.
    std::fs::write(dir.join("Clean.java"), "class Clean {}\n").unwrap();
    Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["check", "--diff", "Clean.java"])
        .assert()
        .code(0)
        .stdout("");
}

#[test]
fn unsafe_fixes_need_the_flag() {
    let src = "fn f() {\n    backoff::retry(p, move || {\n        send(Charge { idempotency_key: Uuid::new_v4().to_string() })\n    });\n}\n";
    let cat = Catalogue::builtin();
    let (findings, _) = check_text("a.rs", src, &cat).unwrap();
    let fix = findings[0].fix.as_ref().expect("a fix");
    assert_eq!(fix.applicability, Applicability::Unsafe);
    assert!(apply(src, &findings, Mode::Safe).1.is_empty());
    let (fixed, rules) = apply(src, &findings, Mode::All);
    assert_eq!(rules, vec!["key-in-retry-scope"]);
    assert!(
        fixed.contains("    let idempotency_key = Uuid::new_v4().to_string();\n    backoff::retry")
    );
}

#[test]
fn a_fix_that_breaks_the_syntax_is_rolled_back() {
    let dir = scratch("fix_rollback");
    let file = dir.join("Job.java");
    let src = "class Job {\n  void run() {\n    retryTemplate.execute(c -> send(UUID.randomUUID()));\n  }\n  void send(String idempotencyKey) {}\n}\n";
    std::fs::write(&file, src).unwrap();
    let cat = Catalogue::builtin();
    let opts = Options {
        paths: vec![file.clone()],
        ..Options::default()
    };
    let mut report = run(&opts, &cat).unwrap();
    assert_eq!(report.findings.len(), 1);
    // Replace the real fix with one that deletes a brace.
    let brace = src.find("{\n  void run").unwrap();
    report.findings[0].fix = Some(Fix {
        applicability: Applicability::Safe,
        message: "broken".into(),
        reason: None,
        declares: None,
        edits: vec![Edit {
            start: brace,
            end: brace + 1,
            start_line: 1,
            start_column: 11,
            end_line: 1,
            end_column: 12,
            content: String::new(),
        }],
    });
    let (fixed, errors) = compute_fixes(&report, Mode::All, &opts, &cat);
    assert!(fixed.is_empty());
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].message.contains("key-in-retry-scope"),
        "{errors:?}"
    );
    assert!(errors[0].message.contains("syntax error"));
}

/// A key held before the retry and given a new one inside it (`key = UUID..` in a `catch`,
/// also through `this.` or after a separate first assignment) is not hoisted: a second key
/// declared before the retry would still replace the first on the later attempts. A holder
/// that starts empty is hoisted.
#[test]
fn a_key_reassigned_inside_the_retry_is_not_hoisted() {
    let cat = Catalogue::builtin();
    let api = "interface Api { void send(String idempotencyKey) throws java.io.IOException; }\n";
    let cases = [
        "    void run(Api api) throws java.io.IOException {\n        String key = UUID.randomUUID().toString();\n        for (int i = 0; ; i++) {\n            try { api.send(key); return; }\n            catch (java.io.IOException e) { key = UUID.randomUUID().toString(); if (i == 2) throw e; }\n        }\n    }\n",
        "    String key = \"first\";\n    void run(Api api) throws java.io.IOException {\n        for (int i = 0; ; i++) {\n            try { api.send(this.key); return; }\n            catch (java.io.IOException e) { this.key = UUID.randomUUID().toString(); if (i == 2) throw e; }\n        }\n    }\n",
        "    void run(Api api, String callerKey) throws java.io.IOException {\n        String key;\n        key = callerKey;\n        for (int i = 0; ; i++) {\n            try { api.send(key); return; }\n            catch (java.io.IOException e) { key = UUID.randomUUID().toString(); if (i == 2) throw e; }\n        }\n    }\n",
    ];
    for body in cases {
        let src = format!("import java.util.UUID;\nclass Job {{\n{body}}}\n{api}");
        let (findings, _) = check_text("Job.java", &src, &cat).unwrap();
        assert_eq!(findings.len(), 1, "{src}");
        assert!(findings[0].fix.is_none(), "{src}");
        let why = findings[0].no_fix.as_deref().unwrap_or_default();
        assert!(why.contains("remove the assignment"), "{why}");
    }
    // Starting empty: one key per operation once hoisted.
    let src = format!(
        "import java.util.UUID;\nclass Job {{\n    void run(Api api) throws java.io.IOException {{\n        String key = null;\n        for (int i = 0; ; i++) {{\n            try {{ key = UUID.randomUUID().toString(); api.send(key); return; }}\n            catch (java.io.IOException e) {{ if (i == 2) throw e; }}\n        }}\n    }}\n}}\n{api}"
    );
    let (findings, _) = check_text("Job.java", &src, &cat).unwrap();
    assert_eq!(findings.len(), 1, "{src}");
    assert!(findings[0].fix.is_some(), "{:?}", findings[0].no_fix);
}

/// A Kotlin retry that is the braceless body of an `if`, `for`, `while` or `else` is not
/// hoisted: the declaration would become that body alone and the retry would leave it
/// (break-it 35). The same retry in a block is hoisted.
#[test]
fn a_braceless_kotlin_body_is_not_hoisted() {
    let cat = Catalogue::builtin();
    let api = "interface Api { fun payout(idempotencyKey: String, amount: Long): String }\n";
    let heads = [
        "for (amount in amounts)",
        "if (amounts.isNotEmpty())",
        "while (amounts.size > 1)",
    ];
    for head in heads {
        let src = format!(
            "import io.github.resilience4j.retry.Retry\nimport java.util.UUID\nclass Payouts(private val retry: Retry, private val api: Api) {{\n    fun payAll(amounts: List<Long>, amount: Long) {{\n        {head}\n            retry.executeSupplier {{ api.payout(UUID.randomUUID().toString(), amount) }}\n    }}\n}}\n{api}"
        );
        let (findings, _) = check_text("Payouts.kt", &src, &cat).unwrap();
        assert_eq!(findings.len(), 1, "{src}");
        assert!(findings[0].fix.is_none(), "{src}");
        let why = findings[0].no_fix.as_deref().unwrap_or_default();
        assert!(why.contains("braceless"), "{why}");
    }
    let src = format!(
        "import io.github.resilience4j.retry.Retry\nimport java.util.UUID\nclass Payouts(private val retry: Retry, private val api: Api) {{\n    fun payAll(amounts: List<Long>) {{\n        for (amount in amounts) {{\n            retry.executeSupplier {{ api.payout(UUID.randomUUID().toString(), amount) }}\n        }}\n    }}\n}}\n{api}"
    );
    let (findings, _) = check_text("Payouts.kt", &src, &cat).unwrap();
    assert_eq!(findings.len(), 1, "{src}");
    assert!(findings[0].fix.is_some(), "{:?}", findings[0].no_fix);
}

/// Interceptor findings have no edit, and say why in the terms of their rule: one that runs
/// per attempt, and one that runs once per call but cannot see the caller's own retries.
#[test]
fn interceptor_findings_say_why_there_is_no_edit_in_their_rules_terms() {
    let cat = Catalogue::builtin();
    let cases = [
        (
            "java/key-in-interceptor/application_interceptor_under_call_retry.java",
            "key-in-interceptor",
            "runs again for every attempt",
        ),
        (
            "java/interceptor-mints-key/okhttp_fallback_when_missing.java",
            "interceptor-mints-key",
            "sees each call alone",
        ),
    ];
    for (path, rule, why) in cases {
        let text = std::fs::read_to_string(root().join(path)).unwrap();
        let (findings, _) = check_text(path, &text, &cat).unwrap();
        let of_rule: Vec<_> = findings.iter().filter(|f| f.rule == rule).collect();
        assert!(!of_rule.is_empty(), "{path}: {findings:?}");
        for f in of_rule {
            assert!(f.fix.is_none(), "{path}");
            let no_fix = f.no_fix.as_deref().unwrap_or_default();
            assert!(
                no_fix.starts_with("interceptor: ") && no_fix.contains(why),
                "{no_fix}"
            );
        }
    }
}
