//! What a new user met in a first session: `--strict -q` failing without a word, files
//! and problems counted alike, the Rust lexer's wording for a syntax error, a mistyped
//! `check`, a reader closing the pipe, a tree with nothing to check, `--format cargo`
//! package data, `cargo idemlint` paths, and the small things of the human report.

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::{run, write};

fn scratch(name: &str) -> PathBuf {
    common::scratch("new_user", name)
}

/// Two Java files with syntax errors: three problems in two files.
fn broken_java(dir: &Path) {
    write(
        dir,
        "A.java",
        "class A {\n  void f() { int x = ; }\n  void g() { int y = ; }\n}\n",
    );
    write(dir, "B.java", "class B {\n  void f() { int x = ; }\n}\n");
}

#[test]
fn strict_says_why_it_fails_even_when_quiet() {
    let d = scratch("strict-quiet");
    broken_java(&d);
    let o = run(&d, &[".", "--strict", "-q", "--no-prefilter"]);
    assert_eq!(o.code, 2);
    assert_eq!(o.stdout, "");
    // One line, naming the cause and the first problem (the report that lists them is
    // hidden), with nothing else.
    assert_eq!(
        o.stderr,
        "idemlint: --strict: 2 files (3 problems) could not be analysed fully; the first: \
         A.java:2: syntax error; the rest of the file was analysed where the parser \
         recovered\n"
    );
}

#[test]
fn strict_counts_files_and_problems_apart() {
    let d = scratch("strict-count");
    broken_java(&d);
    let o = run(&d, &[".", "--strict", "--no-prefilter"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("--strict: 2 files (3 problems) could not be analysed fully"),
        "{}",
        o.stderr
    );
    // One problem per file: no problem count.
    let o = run(&d, &["B.java", "--strict", "--no-prefilter"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("--strict: 1 file could not be analysed fully: B.java:2: syntax error"),
        "{}",
        o.stderr
    );
}

/// `(path, line, column, message)` of the single error `--format json` reports for `text`.
fn rust_error(name: &str, text: &str) -> (usize, usize, String) {
    let d = scratch(name);
    write(&d, "lib.rs", text);
    let o = run(&d, &["lib.rs", "--format", "json", "--no-prefilter"]);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{}", o.stdout);
    let e = &errors[0];
    (
        e["line"].as_u64().unwrap() as usize,
        e["column"].as_u64().unwrap() as usize,
        e["message"].as_str().unwrap().to_string(),
    )
}

#[test]
fn rust_lexer_errors_say_what_is_wrong_where() {
    let (line, col, msg) = rust_error("unclosed", "fn main( {\n");
    assert_eq!((line, col), (1, 8), "{msg}");
    assert!(
        msg.starts_with("unclosed delimiter `(` (and 1 more inside it); the file was skipped"),
        "{msg}"
    );
    assert!(!msg.contains("token stream"), "{msg}");
    // A missing `}` deep in a file: the outermost unclosed opening is named.
    let (line, col, msg) = rust_error(
        "unclosed-deep",
        "mod m {\n    fn a() {\n        if x {\n    }\n    fn b() {}\n}\n",
    );
    assert_eq!((line, col), (1, 7), "{msg}");
    assert!(msg.starts_with("unclosed delimiter `{`;"), "{msg}");
    let (line, col, msg) = rust_error("mismatched", "fn f() {\n    (]\n}\n");
    assert_eq!((line, col), (2, 6), "{msg}");
    assert!(
        msg.starts_with("mismatched closing delimiter `]` (the open delimiter is `(` at line 2)"),
        "{msg}"
    );
    let (line, col, msg) = rust_error("unexpected", "fn g() }\n");
    assert_eq!((line, col), (1, 8), "{msg}");
    assert!(msg.starts_with("unexpected closing delimiter `}`"), "{msg}");
    let (line, col, msg) = rust_error("string", "fn s() {\n    let x = \"abc;\n}\n");
    assert_eq!((line, col), (2, 13), "{msg}");
    assert!(
        msg.starts_with("unterminated or invalid string literal"),
        "{msg}"
    );
    let (line, col, msg) = rust_error("comment", "fn c() {} /* open\n");
    assert_eq!((line, col), (1, 11), "{msg}");
    assert!(msg.starts_with("unterminated block comment"), "{msg}");
    // A BOM and a shebang before the text keep the location right.
    let (line, col, msg) = rust_error("shebang", "\u{feff}#!/usr/bin/env run\nfn main( {\n");
    assert_eq!((line, col), (2, 8), "{msg}");
    // syn's own parse errors keep their wording.
    let (line, _, msg) = rust_error("syn", "fn main() {\n    let = 5;\n}\n");
    assert_eq!(line, 2, "{msg}");
    assert!(msg.starts_with("expected "), "{msg}");
}

#[test]
fn a_mistyped_check_is_an_unknown_command() {
    let d = scratch("chek");
    write(&d, "A.kt", "fun a() = 1\n");
    for typed in ["chek", "chekc", "chck"] {
        let o = run(&d, &[typed, "."]);
        assert_eq!(o.code, 2, "{typed}");
        assert!(
            o.stderr.contains(&format!(
                "unknown command `{typed}`; did you mean `idemlint check`?"
            )),
            "{typed}: {}",
            o.stderr
        );
        assert!(!o.stderr.contains("path not found"), "{}", o.stderr);
    }
    // A path of that name is checked.
    std::fs::create_dir(d.join("chek")).unwrap();
    let o = run(&d, &["chek"]);
    assert_ne!(o.code, 2, "{}", o.stderr);
}

#[cfg(unix)]
#[test]
fn a_closed_pipe_is_not_an_error() {
    let d = scratch("epipe");
    write(
        &d,
        "Pay.kt",
        "import java.util.UUID\n\nsuspend fun charge(api: Api, body: Body): Charge =\n    retryOnTransient {\n        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)\n    }\n",
    );
    let bin = assert_cmd::cargo::cargo_bin("idemlint");
    // The reader closes its end before idemlint writes the report: no message, and the
    // exit code is the findings' (1), not a tool error.
    let o = std::process::Command::new("sh")
        .current_dir(&d)
        .arg("-c")
        .arg(format!(
            "{{ '{}' check . --format json; echo \"rc=$?\" >&2; }} | (exec 0<&-; sleep 1)",
            bin.display()
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8(o.stderr).unwrap();
    assert!(stderr.contains("rc=1"), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
    assert!(!stderr.contains("error:"), "{stderr}");
}

/// `completions` and `man` into a reader that stops early (`| head -1`): no panic, no
/// message, exit 0.
#[cfg(unix)]
#[test]
fn completions_and_man_into_a_closed_pipe() {
    let d = scratch("epipe-gen");
    let bin = assert_cmd::cargo::cargo_bin("idemlint");
    for sub in ["completions bash", "man"] {
        let o = std::process::Command::new("sh")
            .current_dir(&d)
            .arg("-c")
            .arg(format!(
                "{{ '{}' {sub}; echo \"rc=$?\" >&2; }} | (exec 0<&-; sleep 1)",
                bin.display()
            ))
            .output()
            .unwrap();
        let stderr = String::from_utf8(o.stderr).unwrap();
        assert!(stderr.contains("rc=0"), "{sub}: {stderr}");
        assert!(!stderr.contains("panicked"), "{sub}: {stderr}");
        assert!(!stderr.contains("error"), "{sub}: {stderr}");
    }
}

#[test]
fn nothing_to_check_is_a_warning() {
    let d = scratch("empty");
    write(&d, "empty/README.md", "nothing here\n");
    let o = run(&d, &["check", "empty"]);
    assert_eq!(o.code, 0);
    assert!(
        o.stderr
            .contains("warning: no Rust, Java or Kotlin files found under empty\n"),
        "{}",
        o.stderr
    );
    // Said with --quiet too; --strict makes it fail.
    let o = run(&d, &["check", "empty", "-q"]);
    assert_eq!(o.code, 0);
    assert!(
        o.stderr.contains("no Rust, Java or Kotlin files found"),
        "{}",
        o.stderr
    );
    let o = run(&d, &["check", "empty", "--strict"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("(--strict: exit 2)"), "{}", o.stderr);
    // A tree with sources says nothing of the kind.
    write(&d, "src/A.kt", "fun a() = 1\n");
    let o = run(&d, &["check", "src"]);
    assert_eq!(o.code, 0);
    assert!(!o.stderr.contains("no Rust"), "{}", o.stderr);
}

/// A retry helper in another file: the help gives this file's line next to the call and
/// the helper's location after the reason, so neither reads as the other's.
#[test]
fn help_keeps_this_files_line_apart_from_the_helpers() {
    let d = scratch("helper-line");
    write(
        &d,
        "src/Retry.java",
        "import java.util.function.Supplier;\n\nclass Retry {\n    static <T> T attemptThrice(Supplier<T> body) {\n        RuntimeException last = null;\n        for (int i = 0; i < 3; i++) {\n            try {\n                return body.get();\n            } catch (RuntimeException e) {\n                last = e;\n            }\n        }\n        throw last;\n    }\n}\n",
    );
    write(
        &d,
        "src/Pay.java",
        "import java.util.UUID;\n\nclass Pay {\n    Charge pay(Api api, String customerId) {\n        return Retry.attemptThrice(() -> {\n            String key = UUID.randomUUID().toString();\n            return api.charge(key, customerId);\n        });\n    }\n    interface Api { @POST(\"c\") Charge charge(@Header(\"Idempotency-Key\") String key, String c); }\n}\n",
    );
    let o = run(&d, &["check", ".", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let help = v["findings"][0]["help"].as_str().unwrap();
    assert!(
        help.starts_with(
            "compute the key once, before `Retry.attemptThrice(…)` at line 5, which calls `body` again in a retry loop after a failure (src/Retry.java:8): "
        ),
        "{help}"
    );
    assert!(!help.contains(") (line"), "{help}");
}

/// `(package_id, manifest_path, file_name)` of every compiler message of `--format cargo`.
fn cargo_messages(dir: &Path, bin: &str, args: &[&str]) -> Vec<(String, String, String)> {
    let o = Command::cargo_bin(bin)
        .unwrap()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8(o.stdout).unwrap();
    stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|m| m["reason"] == "compiler-message")
        .map(|m| {
            (
                m["package_id"].as_str().unwrap().to_string(),
                m["manifest_path"].as_str().unwrap().to_string(),
                m["message"]["spans"][0]["file_name"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect()
}

const RUST_BUG: &str = "fn settle_payout(client: &Client, payout_id: &str) {\n    backoff::retry(policy, || {\n        client.post(URL).header(\"Idempotency-Key\", uuid::Uuid::new_v4().to_string()).send()\n    });\n}\n";

/// A workspace: `[workspace.package] version = "2.3.4"`, member `pay` inheriting it and
/// member `other` at `0.9.1`, each with one finding.
fn workspace(name: &str) -> PathBuf {
    let d = scratch(name);
    write(
        &d,
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/*\"]\n\n[workspace.package]\nversion = \"2.3.4\"\n",
    );
    write(
        &d,
        "crates/pay/Cargo.toml",
        "[package]\nname = \"pay-core\"\nversion.workspace = true\nedition = \"2021\"\n",
    );
    write(&d, "crates/pay/src/lib.rs", RUST_BUG);
    write(
        &d,
        "crates/other/Cargo.toml",
        "[package]\nname = \"other\"\nversion = \"0.9.1\"\n",
    );
    write(&d, "crates/other/src/lib.rs", RUST_BUG);
    std::fs::create_dir_all(d.join(".git")).unwrap();
    d.canonicalize().unwrap()
}

#[test]
fn cargo_format_reads_the_real_package() {
    let ws = workspace("cargo-package");
    let msgs = cargo_messages(&ws, "idemlint", &["check", ".", "--format", "cargo"]);
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    let other = &msgs[0];
    assert!(other.0.ends_with("/crates/other#other@0.9.1"), "{other:?}");
    assert_eq!(
        other.1,
        ws.join("crates/other/Cargo.toml").display().to_string()
    );
    let pay = &msgs[1];
    assert!(pay.0.ends_with("/crates/pay#pay-core@2.3.4"), "{pay:?}");
}

#[test]
fn cargo_format_never_looks_above_the_repository() {
    let d = scratch("cargo-above-git");
    // A manifest in a home directory, above a Kotlin-only repository.
    write(
        &d,
        "Cargo.toml",
        "[package]\nname = \"zz-manifest-above-the-repo\"\nversion = \"0.0.0\"\n",
    );
    let repo = d.join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write(
        &repo,
        "src/Pay.kt",
        "import java.util.UUID\n\nsuspend fun charge(api: Api, body: Body): Charge =\n    retryOnTransient {\n        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)\n    }\n",
    );
    let msgs = cargo_messages(&repo, "idemlint", &["check", ".", "--format", "cargo"]);
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    let (id, manifest, _) = &msgs[0];
    assert!(id.ends_with("/src#unpackaged@0.0.0"), "{id}");
    // The package of the manifest above is not used (its name is not a path a checkout has).
    assert!(!id.contains("zz-manifest-above-the-repo"), "{id}");
    assert!(!Path::new(manifest).exists(), "{manifest}");
    // Outside any repository, nothing above the checked path and the current directory.
    std::fs::remove_dir_all(repo.join(".git")).unwrap();
    let msgs = cargo_messages(&repo, "idemlint", &["check", "src", "--format", "cargo"]);
    assert!(msgs[0].0.ends_with("#unpackaged@0.0.0"), "{msgs:?}");
}

/// `cargo idemlint` in a member shows a file the same way with and without
/// `--workspace`: relative to the current directory.
#[test]
fn cargo_idemlint_paths_are_relative_to_the_current_directory() {
    let ws = workspace("cargo-paths");
    let pay = ws.join("crates/pay");
    let paths = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["idemlint", "--message-format=json"];
        all.extend(args);
        cargo_messages(&pay, "cargo-idemlint", &all)
            .into_iter()
            .map(|m| m.2)
            .collect()
    };
    let plain = paths(&[]);
    assert_eq!(plain, ["../other/src/lib.rs", "src/lib.rs"]);
    assert_eq!(paths(&["--workspace"]), plain);
    assert_eq!(
        paths(&["--workspace", "--exclude", "other"]),
        ["src/lib.rs"]
    );
}

/// The summary line sends users to JSON `no_fix`; docs/json.md documents it and
/// `fix.reason` with the shape the output has: `no_fix` exactly when there is no `fix`,
/// `fix.reason` exactly when the fix is unsafe.
#[test]
fn json_no_fix_and_fix_reason_are_documented_as_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/json.md")).unwrap();
    assert!(doc.contains("| `no_fix` | string, present only when there is no `fix`"));
    assert!(doc.contains("| `fix.reason` | string, present only when `applicability` is `unsafe`"));
    let o = run(
        root,
        &[
            "check",
            "examples/kotlin/ChargeRetry.kt",
            "fixtures/kotlin/key-in-retry-scope/clock_in_retry_is_one_finding.kt",
            "--format",
            "json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let findings = v["findings"].as_array().unwrap();
    let (mut no_fix, mut reasons) = (0, 0);
    for f in findings {
        match (&f["fix"], &f["no_fix"]) {
            (serde_json::Value::Null, serde_json::Value::String(_)) => no_fix += 1,
            (fix @ serde_json::Value::Object(_), serde_json::Value::Null) => {
                let unsafe_fix = fix["applicability"] == "unsafe";
                assert_eq!(fix["reason"].is_string(), unsafe_fix, "{f}");
                reasons += usize::from(unsafe_fix);
            }
            _ => panic!("a finding has both or neither of fix and no_fix: {f}"),
        }
    }
    assert!(no_fix >= 1 && reasons >= 1, "{}", o.stdout);
}

/// The pre-commit snippet's comment stays true once `pre-commit autoupdate` has replaced
/// `main` with a commit (it keeps the comment).
#[test]
fn pre_commit_comment_reads_well_after_autoupdate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for doc in ["README.md", "docs/integrations.md"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with("rev: main"))
            .unwrap_or_else(|| panic!("{doc}: no rev line"));
        let comment = line.split_once('#').unwrap().1.trim();
        assert_eq!(
            comment, "`pre-commit autoupdate` pins this to a commit",
            "{doc}"
        );
    }
}

#[test]
fn file_sizes_are_shown_once() {
    // The human report lists file problems on standard output, before the summary.
    let d = scratch("sizes");
    write(
        &d,
        "A.kt",
        &format!("fun a() = 1\n{}", "// padding\n".repeat(80)),
    );
    let o = run(&d, &["check", "A.kt", "--max-file-size", "10"]);
    assert!(
        o.stdout
            .contains("file too large: 892 bytes, over the limit of 10 bytes; not analysed"),
        "{}",
        o.stdout
    );
    // A rounded size keeps the exact count beside it.
    let o = run(&d, &["check", "A.kt", "--max-file-size", "100"]);
    assert!(
        o.stdout.contains("over the limit of 100 bytes;"),
        "{}",
        o.stdout
    );
    write(&d, "B.kt", &"// padding\n".repeat(200));
    let o = run(&d, &["check", "B.kt", "--max-file-size", "1KiB"]);
    assert!(
        o.stdout
            .contains("file too large: 2.1 KiB (2200 bytes), over the limit of 1 KiB (1024 bytes)"),
        "{}",
        o.stdout
    );
}

/// The fix summary gives a reason's first clause whole: never an opened parenthesis or
/// code span without its end.
#[test]
fn fix_summary_cuts_reasons_at_a_clause_boundary() {
    let d = scratch("summary-reason");
    write(&d, "U.kt", "fun a() = 1 // idemlint: allow(time-in-key)\n");
    let o = run(&d, &["check", "U.kt"]);
    let line = o
        .stdout
        .lines()
        .find(|l| l.starts_with("idemlint: fixes: "))
        .unwrap();
    assert!(
        line.contains(
            "(1: idemlint has no automatic edit for unused-suppression; `idemlint explain unused-suppression`"
        ),
        "{line}"
    );
    assert_eq!(
        line.matches('(').count(),
        line.matches(')').count(),
        "{line}"
    );
    assert_eq!(line.matches('`').count() % 2, 0, "{line}");
}

/// A long `path:line` in a message moves to the next line whole instead of being split
/// at a `/` or a hyphen.
#[test]
fn human_report_keeps_locations_whole_when_wrapping() {
    let d = scratch("wrap");
    let dir = "src/payments-retry-helpers-for-the-billing-service";
    write(
        &d,
        &format!("{dir}/Retry.java"),
        "import java.util.function.Supplier;\n\nclass Retry {\n    static <T> T attemptThrice(Supplier<T> body) {\n        RuntimeException last = null;\n        for (int i = 0; i < 3; i++) {\n            try {\n                return body.get();\n            } catch (RuntimeException e) {\n                last = e;\n            }\n        }\n        throw last;\n    }\n}\n",
    );
    write(
        &d,
        "src/Pay.java",
        "import java.util.UUID;\n\nclass Pay {\n    Charge pay(Api api, String customerId) {\n        return Retry.attemptThrice(() -> {\n            String key = UUID.randomUUID().toString();\n            return api.charge(key, customerId);\n        });\n    }\n    interface Api { @POST(\"c\") Charge charge(@Header(\"Idempotency-Key\") String key, String c); }\n}\n",
    );
    let o = run(&d, &["check", "."]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let location = format!("{dir}/Retry.java:8");
    // In the message and in the help.
    assert_eq!(o.stdout.matches(&location).count(), 2, "{}", o.stdout);
    assert!(
        o.stdout
            .lines()
            .all(|l| l.chars().count() <= 100 || l.contains(&location))
    );
}

#[test]
fn rust_loop_fix_reason_speaks_of_the_loop() {
    let d = scratch("loop-reason");
    write(
        &d,
        "pay.rs",
        "fn pay(client: &Client) -> Result<Response, Error> {\n    let mut last = None;\n    for _attempt in 0..3 {\n        let idempotency_key = uuid::Uuid::new_v4().to_string();\n        match client.post(URL).header(\"Idempotency-Key\", idempotency_key).send() {\n            Ok(r) => return Ok(r),\n            Err(e) => last = Some(e),\n        }\n    }\n    Err(last.unwrap())\n}\n",
    );
    let o = run(&d, &["check", "pay.rs", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let reason = v["findings"][0]["fix"]["reason"].as_str().unwrap();
    assert!(!reason.contains("closure"), "{reason}");
    assert!(
        reason.starts_with("in Rust the loop now uses `idempotency_key` declared before it instead of creating it on every iteration"),
        "{reason}"
    );
    assert!(reason.contains("`idempotency_key.clone()`"), "{reason}");
}

/// Every problem of a configuration file is reported, each at its own line.
#[test]
fn config_errors_are_all_reported() {
    let d = scratch("config-errors");
    write(&d, "A.kt", "fun a() = 1\n");
    write(
        &d,
        "idemlint.toml",
        "require-suppression-reason = 3\n\n[rules]\ntime-in = \"off\"\nkey-in-retry-scope = \"loud\"\n",
    );
    let o = run(&d, &["check", "."]);
    assert_eq!(o.code, 2);
    for (loc, what) in [
        (
            "idemlint.toml:1:30",
            "`require-suppression-reason` must be `true` or `false`",
        ),
        ("idemlint.toml:4:1", "unknown rule `time-in`"),
        (
            "idemlint.toml:5:22",
            "invalid level for `key-in-retry-scope`",
        ),
    ] {
        assert!(o.stderr.contains(loc), "{loc}: {}", o.stderr);
        assert!(o.stderr.contains(what), "{what}: {}", o.stderr);
    }
    // In file order, the first saying how many more there are.
    let first = o.stderr.find("must be `true`").unwrap();
    assert!(first < o.stderr.find("unknown rule").unwrap());
    assert!(o.stderr.contains("(and 2 more problems)"), "{}", o.stderr);
}
