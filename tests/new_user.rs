//! What a new user met in a first session: `--strict -q` failing without a word, files
//! and problems counted alike, the Rust lexer's wording for a syntax error, a mistyped
//! `check`, a reader closing the pipe, a tree with nothing to check, `--format cargo`
//! package data, `cargo idemlint` paths, and the small things of the human report.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn idemlint() -> Command {
    let mut c = Command::cargo_bin("idemlint").unwrap();
    for v in ["NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "CLICOLOR"] {
        c.env_remove(v);
    }
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("new_user")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(dir: &Path, args: &[&str]) -> Out {
    let o = idemlint().current_dir(dir).args(args).output().unwrap();
    Out {
        code: o.status.code().unwrap(),
        stdout: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
    }
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
    // One line, naming the cause, with nothing else.
    assert_eq!(
        o.stderr,
        "idemlint: --strict: 2 files (3 problems) could not be analysed fully\n"
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
            .contains("--strict: 1 file could not be analysed fully\n"),
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
    assert!(msg.starts_with("unterminated or invalid string literal"), "{msg}");
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
            o.stderr
                .contains(&format!("unknown command `{typed}`; did you mean `idemlint check`?")),
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
    assert!(o.stderr.contains("no Rust, Java or Kotlin files found"), "{}", o.stderr);
    let o = run(&d, &["check", "empty", "--strict"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("(--strict: exit 2)"), "{}", o.stderr);
    // A tree with sources says nothing of the kind.
    write(&d, "src/A.kt", "fun a() = 1\n");
    let o = run(&d, &["check", "src"]);
    assert_eq!(o.code, 0);
    assert!(!o.stderr.contains("no Rust"), "{}", o.stderr);
}
