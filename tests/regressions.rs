//! Regression tests for problems found by trying to break idemlint with hostile input.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const GOOD: &str = "import java.util.UUID\nsuspend fun charge(api: Api) = retryOnTransient { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }\n";

fn json(dir: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let out = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

fn good_finding_present(v: &serde_json::Value) -> bool {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["path"] == "Good.kt" && f["rule"] == "key-in-retry-scope")
}

#[test]
fn kotlin_templates_hidden_behind_a_backticked_quote_do_not_abort_the_run() {
    let dir = scratch("kt_backtick");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    let depth = 700;
    let deep = format!(
        "fun `it's`() = 1\nval s = {}x{}\n",
        "\"${".repeat(depth),
        "}\"".repeat(depth)
    );
    std::fs::write(dir.join("Deep.kt"), deep).unwrap();
    // --no-prefilter: the file has no key word, so the prefilter would not parse it.
    let (code, v) = json(&dir, &["check", ".", "--no-prefilter"]);
    assert_eq!(code, 1);
    assert!(good_finding_present(&v), "{v:#}");
    assert!(
        v["errors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["path"] == "Deep.kt")
    );
}

#[test]
fn rust_nesting_beyond_the_limit_is_refused_not_a_crash() {
    let dir = scratch("rust_deep");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    std::fs::write(
        dir.join("deep.rs"),
        format!("fn f() {{ let x = {}1; }}\n", "-".repeat(300_000)),
    )
    .unwrap();
    std::fs::write(
        dir.join("generic.rs"),
        format!(
            "type T = {}u8{};\n",
            "Vec<".repeat(200_000),
            ">".repeat(200_000)
        ),
    )
    .unwrap();
    // --no-prefilter: the files have no key word, so the prefilter would not parse them.
    let (code, v) = json(&dir, &["check", ".", "--no-prefilter"]);
    assert_eq!(code, 1);
    assert!(good_finding_present(&v));
    let errors = v["errors"].as_array().unwrap();
    for f in ["deep.rs", "generic.rs"] {
        let e = errors.iter().find(|e| e["path"] == f).expect(f);
        assert!(
            e["message"].as_str().unwrap().contains("nesting deeper"),
            "{e}"
        );
    }
}

#[test]
fn huge_job_counts_are_capped() {
    let dir = scratch("jobs");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    let (code, v) = json(&dir, &["check", "--jobs", "99999999999", "."]);
    assert_eq!(code, 1);
    assert!(good_finding_present(&v));
}

#[test]
fn rust_helpers_do_not_answer_for_kotlin_calls() {
    let dir = scratch("cross_language");
    std::fs::write(
        dir.join("keys.rs"),
        "pub fn newKey() -> String { uuid::Uuid::new_v4().to_string() }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Pay.kt"),
        "fun newKey(): String = \"order-42\"\nsuspend fun pay(api: Api) = retryOnTransient { api.pay(idempotencyKey = newKey()) }\n",
    )
    .unwrap();
    let (code, v) = json(&dir, &["check", "."]);
    assert_eq!(code, 0, "{v:#}");
}

#[test]
fn paths_are_cleaned_and_named_once() {
    let dir = scratch("paths");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    let (_, v) = json(&dir, &["check", ".//Good.kt", "Good.kt", "."]);
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{v:#}");
    assert_eq!(findings[0]["path"], "Good.kt");
}

#[test]
fn lone_carriage_returns_end_lines() {
    let dir = scratch("lone_cr");
    std::fs::write(dir.join("Good.kt"), GOOD.replace('\n', "\r")).unwrap();
    let (_, v) = json(&dir, &["check", "Good.kt"]);
    assert_eq!(v["findings"][0]["line"], 2, "{v:#}");
}

#[test]
fn invalid_utf8_is_reported_with_its_position() {
    let dir = scratch("utf8");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    let mut bad = b"class A {\n  val s = \"".to_vec();
    bad.extend([0xff, 0xfe]);
    bad.extend(b"\"\n}\n");
    std::fs::write(dir.join("Bad.java"), bad).unwrap();
    let (code, v) = json(&dir, &["check", "."]);
    assert_eq!(code, 1);
    assert!(good_finding_present(&v));
    let e = &v["errors"][0];
    assert_eq!(e["path"], "Bad.java");
    assert_eq!(e["line"], 2);
    assert_eq!(e["column"], 12);
}

#[test]
fn very_long_lines_render_in_human_output() {
    let dir = scratch("long_line");
    let padding = " ".repeat(70_000);
    std::fs::write(
        dir.join("Good.kt"),
        GOOD.replace("retryOnTransient", &format!("{padding}retryOnTransient")),
    )
    .unwrap();
    let out = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .args(["check", "Good.kt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("key-in-retry-scope"));
}

#[cfg(unix)]
#[test]
fn a_named_fifo_is_reported_not_ignored() {
    let dir = scratch("fifo");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    let ok = std::process::Command::new("mkfifo")
        .arg(dir.join("Pipe.java"))
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: mkfifo unavailable");
        return;
    }
    let (code, v) = json(&dir, &["check", "Pipe.java", "Good.kt"]);
    assert_eq!(code, 1);
    assert!(good_finding_present(&v));
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("not a regular file")
    );
}

/// A `@Retryable` method missing a closing brace swallows the methods after it when the
/// parser recovers: a key minted in the next method is not known to run inside the retry,
/// so nothing is reported past the syntax error (which is itself reported), while a mint
/// before the error, inside the retried method, still is.
#[test]
fn a_retry_method_that_swallows_the_next_after_a_syntax_error_reports_nothing_past_it() {
    let dir = scratch("damaged_retry_scope");
    let text = r#"import java.util.UUID;
import org.springframework.retry.annotation.Retryable;

class Wallets {
    @Retryable(maxAttempts = 3)
    public void create(Api api) {
        api.charge(UUID.randomUUID().toString());
        try {
            api.save();
        } catch (RuntimeException e) {
            throw new IllegalStateException("x", e)
        }
    // the method's closing brace is missing

    public void withdraw(Api api) {
        String idempotencyKey = UUID.randomUUID().toString();
        api.withdraw(idempotencyKey);
    }
}

interface Api {
    void charge(String idempotencyKey);
    void save();
    void withdraw(String idempotencyKey);
}
"#;
    std::fs::write(dir.join("Wallets.java"), text).unwrap();
    let (_, v) = json(&dir, &["check", ".", "--exit-zero"]);
    let lines: Vec<u64> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, vec![7], "{v:#}");
    assert!(!v["errors"].as_array().unwrap().is_empty(), "{v:#}");
}

/// A finding on a line longer than miette can draw (a column past 65,535) is printed as
/// one plain line in the human format, with no panic message on standard error.
#[test]
fn a_finding_far_into_an_overlong_line_prints_plainly_without_a_panic() {
    let dir = scratch("overlong_line");
    let code = "import java.util.UUID; class R { RetryTemplate retryTemplate; Api api; \
                Object f(String a) { return retryTemplate.execute(ctx -> \
                api.createCharge(UUID.randomUUID().toString(), a)); } } \
                interface Api { Object createCharge(String idempotencyKey, String body); }";
    let text = format!("/* {} */ {code}\n", "x".repeat(70_000));
    std::fs::write(dir.join("R.java"), text).unwrap();
    let out = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["check", "R.java", "--format", "human", "--color", "never"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("R.java:1:") && stdout.contains("error[key-in-retry-scope]"),
        "{stdout}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// A hoist into a `switch` arm's block (`final String idempotencyKey = ..;` before
/// `case 1 ->`) does not parse. In a file that already has syntax errors the error count
/// alone did not show it: tree-sitter folded the old errors into one larger region (4
/// errors before, 3 after), or the count was at its reported cap (20 before and after).
/// Such a fix is refused: the file is left as it was.
#[test]
fn a_fix_that_breaks_a_file_with_syntax_errors_is_refused() {
    for (name, messages) in [("absorbed", ABSORBED), ("saturated", SATURATED)] {
        let text = format!("{JOB}{messages}");
        let dir = scratch(&format!("fix_breaks_{name}"));
        std::fs::write(dir.join("G.java"), &text).unwrap();
        let (_, v) = json(&dir, &["check", ".", "--fix"]);
        assert_eq!(
            std::fs::read_to_string(dir.join("G.java")).unwrap(),
            text,
            "{name}: the file was rewritten: {v:#}"
        );
        let f = &v["findings"][0];
        assert_eq!(f["rule"], "key-in-retry-scope", "{name}: {v:#}");
        assert!(
            f["fix"].is_null() || f["fix"]["applicability"] != "safe",
            "{name}: {v:#}"
        );
    }
}

/// A retried refund whose fix would hoist the key into a `switch` arm's block, and the
/// interface it calls; then a class with syntax errors of its own.
const JOB: &str = r#"import java.util.UUID;
import org.springframework.retry.support.RetryTemplate;

class Job {
    private final RetryTemplate retryTemplate;
    private final RefundsApi api;
    Job(RetryTemplate r, RefundsApi a) { retryTemplate = r; api = a; }

    String g(String p, int mode) {
        return switch (mode) {
            case 1 -> retryTemplate.execute(ctx -> api.refund(p, UUID.randomUUID().toString()));
            default -> "";
        };
    }
}

interface RefundsApi {
    String refund(String paymentId, String idempotencyKey);
}

"#;

/// Two `\"` outside a string literal: 4 errors, which the broken hoist folds into one region.
const ABSORBED: &str = r#"class Messages {
    void m() {
        log(\"m0\");
        log(\"m1\");
    }
}
"#;

/// More errors than the 20 reported.
const SATURATED: &str = r#"class Messages {
    void m() {
        1 2 int = 1; 1 2
        int = 1; ) ( int = 1; 1 2
        1 2 int = 1; ) ( 1 2
        ) ( 1 2 ) (
        ) ( int = 1;
        1 2 1 2
        int = 1; 1 2
        int = 1; 1 2
        int = 1;
        ) ( 1 2 1 2 1 2
        int = 1; ) (
        1 2 1 2
        int = 1; 1 2 int = 1; ) (
        ) ( int = 1; ) (
        1 2
        ) ( 1 2 int = 1; ) (
        1 2 int = 1;
        1 2 1 2 int = 1;
        int = 1; int = 1; 1 2
        int = 1; ) ( int = 1;
        1 2
        int = 1; 1 2 ) (
        int = 1; 1 2 ) ( 1 2
        ) ( int = 1; 1 2 int = 1;
        1 2 1 2
        1 2
        1 2 1 2
        ) ( int = 1; 1 2
        1 2
        ) ( 1 2
    }
}
"#;

/// The count of syntax errors not shown covers every error of the file, not only those
/// the frontend keeps (20): 1,000 broken declarations, 5 shown, 995 more.
#[test]
fn every_syntax_error_is_counted_though_five_are_shown() {
    let dir = scratch("many_syntax_errors");
    let body: String = (0..1000).map(|_| "void f() { int = ; }\n").collect();
    std::fs::write(dir.join("Many.java"), format!("class A {{\n{body}}}\n")).unwrap();
    let (_, v) = json(&dir, &["check", ".", "--no-prefilter"]);
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 5, "{v:#}");
    let last = errors[4]["message"].as_str().unwrap();
    assert!(
        last.ends_with("; 995 more syntax error(s) in this file not shown"),
        "{last}"
    );
}

/// The human report's `path:line:col` header counts characters, as every other format
/// does: with multi-byte text before the key on its line, the byte count would be larger
/// (a new user's report, thirty-sixth session).
#[test]
fn human_header_column_counts_characters_like_the_other_formats() {
    let dir = scratch("human_char_column");
    let text = "import java.util.UUID\nsuspend fun charge(api: Api) = retryOnTransient { val größe = \"€€\"; api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }\n";
    std::fs::write(dir.join("Good.kt"), text).unwrap();
    let (_, v) = json(&dir, &["check", "Good.kt", "--exit-zero"]);
    let f = &v["findings"][0];
    let (line, column) = (f["line"].as_u64().unwrap(), f["column"].as_u64().unwrap());
    // The key's first character, counted in characters from the line's start (1-based).
    let line_text = text.lines().nth(line as usize - 1).unwrap();
    let at = line_text.find("UUID.randomUUID").unwrap();
    assert_eq!(column as usize, line_text[..at].chars().count() + 1);
    assert_ne!(
        column as usize,
        at + 1,
        "the line must hold multi-byte text"
    );
    let out = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["check", "Good.kt", "--exit-zero", "--color", "never"])
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&out.stdout);
    assert!(
        human.contains(&format!("[Good.kt:{line}:{column}]")),
        "{human}"
    );
}

/// A file whose lines end in lone `\r` (Java and Kotlin accept them as line terminators)
/// is drawn line by line, with the header at the line and column every other format
/// gives: the snippet's text broke lines at `\n` only, so the whole file was line 1 and
/// the header said `1:134` where JSON said `4:43` (break-it, thirty-sixth session).
#[test]
fn human_snippet_of_a_file_with_lone_cr_line_breaks_has_its_lines() {
    let dir = scratch("human_lone_cr");
    let text = "import java.util.UUID\rsuspend fun charge(api: Api): Charge {\r    return retryOnTransient {\r        api.createCharge(idempotencyKey = UUID.randomUUID().toString())\r    }\r}\r";
    std::fs::write(dir.join("Cr.kt"), text).unwrap();
    let (_, v) = json(&dir, &["check", "Cr.kt", "--exit-zero"]);
    let f = &v["findings"][0];
    let (line, column) = (f["line"].as_u64().unwrap(), f["column"].as_u64().unwrap());
    assert_eq!((line, column), (4, 43));
    let out = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["check", "Cr.kt", "--exit-zero", "--color", "never"])
        .output()
        .unwrap();
    let human = String::from_utf8_lossy(&out.stdout);
    assert!(human.contains("[Cr.kt:4:43]"), "{human}");
    // The key's line is drawn as a line of its own, numbered 4.
    assert!(
        human.contains(" 4 │         api.createCharge(idempotencyKey"),
        "{human}"
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A `key-in-retry-scope` finding with a `time-in-key` finding folded into it keeps the
/// folded help, last, and says what `--fix` does right after the advice it does: a safe
/// hoist's help lost the folded part, and an unsafe one's "`--fix --unsafe-fixes` does
/// this" followed the folded `derive(..)` advice, which `--fix` does not do (new user,
/// thirty-sixth session).
#[test]
fn folded_help_stays_last_and_the_fix_note_follows_its_advice() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (fixture, fix_note) in [
        // A safe hoist: the help names the declaration `--fix` writes.
        (
            "fixtures/kotlin/key-in-retry-scope/clock_in_retry_is_one_finding.kt",
            "use `idempotencyKey` inside",
        ),
        // An unsafe move of a declaration.
        (
            "fixtures/rust/key-in-retry-scope/backon_retryable.rs",
            "(`--fix --unsafe-fixes` does this, but review it",
        ),
    ] {
        let (_, v) = json(root, &["check", fixture, "--exit-zero"]);
        let f = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| {
                f["rule"] == "key-in-retry-scope" && !f["also"].as_array().unwrap().is_empty()
            })
            .unwrap_or_else(|| panic!("{fixture}: no finding with another folded into it: {v}"));
        assert_eq!(f["also"][0]["rule"], "time-in-key", "{fixture}");
        let help = f["help"].as_str().unwrap();
        let folded = help
            .find("; for `time-in-key`: build the key from what identifies the operation")
            .unwrap_or_else(|| panic!("{fixture}: folded help lost: {help}"));
        let note = help
            .find(fix_note)
            .unwrap_or_else(|| panic!("{fixture}: no fix note: {help}"));
        assert!(note < folded, "{fixture}: {help}");
        assert_eq!(help.matches("; for `").count(), 1, "{fixture}: {help}");
    }
}
