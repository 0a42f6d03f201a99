//! End-to-end tests of the `idemlint` and `cargo-idemlint` binaries: exit codes, the JSON
//! shape, human output, parse errors, and the cargo subcommand conventions.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

fn idemlint() -> Command {
    Command::cargo_bin("idemlint").unwrap()
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh scratch directory under cargo's per-test temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const RETRY_BUG: &str = r#"
import java.util.UUID

suspend fun charge(api: Api, body: Body): Charge =
    retryOnTransient {
        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)
    }
"#;

const CLEAN: &str = r#"
suspend fun charge(api: Api, body: Body, customerId: String, period: String): Charge {
    val idempotencyKey = stableKey(customerId, period)
    return retryOnTransient { api.createCharge(idempotencyKey = idempotencyKey, body = body) }
}
"#;

#[test]
fn exit_one_with_findings_and_json_shape() {
    let dir = scratch("json_shape");
    std::fs::write(dir.join("Billing.kt"), RETRY_BUG).unwrap();
    let out = idemlint()
        .current_dir(&dir)
        .args(["check", "Billing.kt", "--format", "json"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["errors"].as_array().unwrap().len(), 0);
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{v:#}");
    let f = &findings[0];
    assert_eq!(f["rule"], "key-in-retry-scope");
    assert_eq!(f["severity"], "error");
    assert_eq!(f["path"], "Billing.kt");
    assert_eq!(f["line"], 6);
    // `UUID.randomUUID()` starts after `api.createCharge(idempotencyKey = `.
    let line6 = RETRY_BUG.lines().nth(5).unwrap();
    assert_eq!(f["column"], line6.find("UUID").unwrap() + 1);
    assert_eq!(f["end_line"], 6);
    assert_eq!(
        f["end_column"],
        line6.find("UUID").unwrap() + "UUID.randomUUID()".len() + 1
    );
    assert_eq!(f["source"], "UUID.randomUUID()");
    assert!(f["message"].as_str().unwrap().contains("retryOnTransient"));
    assert!(
        f["help"]
            .as_str()
            .unwrap()
            .contains("val idempotencyKey = ")
    );
    assert_eq!(f["boundary"]["kind"], "retry");
    assert_eq!(f["boundary"]["line"], 5);
    assert_eq!(f["boundary"]["column"], 5);
}

#[test]
fn exit_zero_when_clean() {
    let dir = scratch("clean");
    std::fs::write(dir.join("Billing.kt"), CLEAN).unwrap();
    idemlint()
        .current_dir(&dir)
        .args(["check", "."])
        .env("NO_COLOR", "1")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("0 findings"));
}

#[test]
fn default_subcommand_is_check() {
    let dir = scratch("default_check");
    std::fs::write(dir.join("Billing.kt"), RETRY_BUG).unwrap();
    idemlint()
        .current_dir(&dir)
        .arg("Billing.kt")
        .assert()
        .code(1);
}

#[test]
fn missing_path_is_a_tool_error() {
    idemlint()
        .args(["check", "does/not/exist"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("path not found"));
}

#[test]
fn bad_arguments_are_a_tool_error() {
    idemlint()
        .args(["check", "--format", "xml", "."])
        .assert()
        .code(2);
}

#[test]
fn parse_errors_are_reported_and_other_files_still_analysed() {
    let dir = scratch("parse_errors");
    // The key name makes the prefilter parse it (files that cannot matter are not parsed
    // unless --no-prefilter is given).
    std::fs::write(
        dir.join("broken.rs"),
        "fn f() {\n    let idempotency_key = ;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("Billing.kt"), RETRY_BUG).unwrap();
    std::fs::write(dir.join("bad.java"), [0xff, 0xfe, 0x00, 0x41]).unwrap();
    let out = idemlint()
        .current_dir(&dir)
        .args(["check", ".", "--format", "json"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["findings"].as_array().unwrap().len(), 1);
    let errors = v["errors"].as_array().unwrap();
    let broken = errors
        .iter()
        .find(|e| e["path"] == "broken.rs")
        .expect("broken.rs reported");
    assert_eq!(broken["line"], 2);
    assert!(broken["column"].as_u64().unwrap() > 1);
    assert!(
        errors
            .iter()
            .any(|e| e["path"] == "bad.java" && e["message"].as_str().unwrap().contains("binary"))
    );
}

#[test]
fn only_parse_errors_exit_zero() {
    let dir = scratch("only_parse_errors");
    std::fs::write(dir.join("broken.rs"), "fn f( {").unwrap();
    idemlint()
        .current_dir(&dir)
        .args(["check", ".", "--no-prefilter"])
        .env("NO_COLOR", "1")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("broken.rs:1"));
}

#[test]
fn human_output_names_rule_source_boundary_and_help_without_colour() {
    let dir = scratch("human");
    std::fs::write(dir.join("Billing.kt"), RETRY_BUG).unwrap();
    let out = idemlint()
        .current_dir(&dir)
        .args(["check", "Billing.kt"])
        .env("NO_COLOR", "1")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let s = String::from_utf8(out).unwrap();
    assert!(s.contains("idemlint::key-in-retry-scope"), "{s}");
    assert!(s.contains("Billing.kt:6:"), "{s}");
    assert!(s.contains("evaluated again on every run"), "{s}");
    assert!(s.contains("retry boundary"), "{s}");
    assert!(s.contains("help:"), "{s}");
    assert!(
        !s.contains('\u{1b}'),
        "colour escape codes with NO_COLOR: {s}"
    );
}

#[test]
fn rules_and_explain() {
    let out = idemlint()
        .arg("rules")
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let s = String::from_utf8(out).unwrap();
    for id in [
        "key-in-interceptor",
        "key-in-retry-scope",
        "key-in-callback-retry",
        "unlocked-scheduled-job",
        "time-in-key",
        "interceptor-mints-key",
    ] {
        let line = s
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("{id}: {s}"));
        assert!(line.contains("error") || line.contains("warning"), "{line}");
        assert!(line.len() > id.len() + 20, "no summary: {line}");
    }
    idemlint()
        .args(["explain", "key-in-interceptor"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("## Why is this bad?"))
        .stdout(predicate::str::contains("addNetworkInterceptor"));
    idemlint()
        .args(["explain", "key-in-retry-scop"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "did you mean `key-in-retry-scope`",
        ));
    // The id as a finding's header prints it (`idemlint::key-in-retry-scope`).
    idemlint()
        .args(["explain", "idemlint::key-in-retry-scope"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("## Why is this bad?"));
    // The hint sees the id as the lookup does: case and `_` normalised first.
    idemlint()
        .args(["explain", "KEY_IN_RETRY"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "did you mean `key-in-retry-scope`",
        ));
}

#[test]
fn cargo_subcommand_strips_its_name_and_defaults_to_workspace_root() {
    let dir = scratch("cargo_project");
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"payments\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("src/jobs")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "pub mod jobs;\n").unwrap();
    std::fs::write(
        dir.join("src/jobs/charge.rs"),
        "pub async fn charge() {\n    backoff::future::retry(policy(), || async {\n        send(uuid::Uuid::new_v4()).await\n    }).await;\n}\nfn send(idempotency_key: uuid::Uuid) {}\n",
    )
    .unwrap();
    // Run from a subdirectory: the workspace root is still what gets checked.
    let out = Command::cargo_bin("cargo-idemlint")
        .unwrap()
        .current_dir(dir.join("src"))
        .args(["idemlint", "--format", "json"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "key-in-retry-scope");
    // Shown relative to the current directory, as with `--workspace`.
    assert_eq!(f["path"], "jobs/charge.rs", "{v:#}");
    // Explicit arguments work the same as for `idemlint`.
    Command::cargo_bin("cargo-idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["idemlint", "check", "src", "--format", "json"])
        .assert()
        .code(1);
}

#[test]
fn gitignored_files_are_skipped() {
    let dir = scratch("gitignore");
    std::fs::write(dir.join(".gitignore"), "generated/\n").unwrap();
    std::fs::create_dir_all(dir.join("generated")).unwrap();
    std::fs::write(dir.join("generated/Billing.kt"), RETRY_BUG).unwrap();
    std::fs::write(dir.join("Noise.kt"), "fun noise() = 1\n").unwrap();
    let out = idemlint()
        .current_dir(&dir)
        .args(["check", "."])
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    // The summary names what it left out, so the user need not hunt for it.
    let summary = String::from_utf8_lossy(&out);
    assert!(
        summary.contains("not checked: 1 directory (generated) matched by .gitignore"),
        "{summary}"
    );
}

/// A hidden or ignored directory with no source file in it (`.github` with workflows) is
/// not worth a "not checked" line; one holding a source file, at any depth, is.
#[test]
fn left_out_directories_without_sources_are_not_mentioned() {
    let dir = scratch("left_out_no_sources");
    std::fs::create_dir_all(dir.join(".github/workflows")).unwrap();
    std::fs::write(dir.join(".github/workflows/ci.yml"), "on: push\n").unwrap();
    std::fs::write(dir.join("Noise.kt"), "fun noise() = 1\n").unwrap();
    let run = |dir: &Path| {
        let out = idemlint()
            .current_dir(dir)
            .args(["check", "."])
            .assert()
            .code(0)
            .get_output()
            .stdout
            .clone();
        String::from_utf8_lossy(&out).into_owned()
    };
    let summary = run(&dir);
    assert!(!summary.contains("not checked"), "{summary}");
    std::fs::create_dir_all(dir.join(".github/scripts/deep")).unwrap();
    std::fs::write(dir.join(".github/scripts/deep/Gen.kt"), "fun gen() = 2\n").unwrap();
    let summary = run(&dir);
    assert!(
        summary
            .contains("not checked: 1 directory (.github) matched by .gitignore/.ignore or hidden"),
        "{summary}"
    );
}

#[test]
fn fixtures_directory_has_findings_in_every_language() {
    let out = idemlint()
        .current_dir(manifest_dir())
        .args(["check", "fixtures", "--format", "json"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    for ext in [".rs", ".java", ".kt"] {
        assert!(
            v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["path"].as_str().unwrap().ends_with(ext)),
            "no finding in a {ext} fixture"
        );
    }
    // Relative input gives relative paths.
    assert!(
        v["findings"][0]["path"]
            .as_str()
            .unwrap()
            .starts_with("fixtures/")
    );
}

#[test]
fn fingerprints_survive_unrelated_lines_above_and_count_copies() {
    let dir = scratch("fingerprints");
    let json = |dir: &Path| -> serde_json::Value {
        let out = idemlint()
            .current_dir(dir)
            .args(["check", "Billing.kt", "--format", "json"])
            .assert()
            .code(1)
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice(&out).unwrap()
    };
    std::fs::write(dir.join("Billing.kt"), RETRY_BUG).unwrap();
    let before = json(&dir);
    std::fs::write(
        dir.join("Billing.kt"),
        format!("// billing\n\nimport a.b.C\n{RETRY_BUG}"),
    )
    .unwrap();
    let after = json(&dir);
    let f0 = &before["findings"][0];
    let f1 = &after["findings"][0];
    assert_eq!(
        f1["line"].as_u64().unwrap(),
        f0["line"].as_u64().unwrap() + 3
    );
    assert_eq!(f0["fingerprint"], f1["fingerprint"]);
    assert_eq!(f0["fingerprint"].as_str().unwrap().len(), 32);
    // A different source expression in the same place is a different finding.
    std::fs::write(
        dir.join("Billing.kt"),
        RETRY_BUG.replace(
            "UUID.randomUUID().toString()",
            "System.currentTimeMillis().toString()",
        ),
    )
    .unwrap();
    let other = json(&dir);
    assert_ne!(other["findings"][0]["fingerprint"], f0["fingerprint"]);
}

#[test]
fn check_text_matches_the_file_pipeline() {
    let cat = idemlint::catalogue::Catalogue::builtin();
    let (findings, errors) = idemlint::check::check_text("Billing.kt", RETRY_BUG, &cat).unwrap();
    assert!(errors.is_empty());
    assert_eq!(findings.len(), 1);
    assert_eq!(findings[0].rule, "key-in-retry-scope");
    assert_eq!(findings[0].line, 6);
    assert!(idemlint::check::check_text("notes.txt", "x", &cat).is_none());
}

#[test]
fn common_method_names_do_not_bind_to_project_functions_elsewhere() {
    let dir = scratch("cross_file_names");
    std::fs::write(
        dir.join("Store.java"),
        "class Store {\n    public void remove(String idempotencyKey) { }\n}\n",
    )
    .unwrap();
    // `active.remove(runId)` is a map, not `Store.remove`; nothing here is a key.
    std::fs::write(
        dir.join("Job.java"),
        "import java.util.*;\nclass Job {\n    private final Map<String, Object> active = new HashMap<>();\n    @Scheduled(fixedDelay = 5000)\n    public void tick() {\n        String runId = UUID.randomUUID().toString();\n        active.put(runId, new Object());\n        active.remove(runId);\n    }\n}\n",
    )
    .unwrap();
    // A same-named helper in another class does not hide this file's own fresh helper.
    std::fs::write(
        dir.join("Keys.java"),
        "class Keys {\n    String generateKey(String orderId) { return \"order-\" + orderId; }\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Client.java"),
        "class Client {\n    void pay() {\n        retryTemplate.execute(c -> http.header(\"Idempotency-Key\", generateKey(\"x\")));\n    }\n    private String generateKey(String p) { return p + UUID.randomUUID(); }\n}\n",
    )
    .unwrap();
    let out = idemlint()
        .current_dir(&dir)
        .args(["check", ".", "--format", "json"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{v:#}");
    assert_eq!(findings[0]["path"], "Client.java");
    assert_eq!(findings[0]["rule"], "key-in-retry-scope");
    assert_eq!(findings[0]["source"], "generateKey(\"x\")");
}

/// The README's run command checks `examples/`: one finding per defect file (one rule each,
/// in each language), none in the fixed twins.
#[test]
fn bundled_examples_show_one_finding_per_defect_and_none_in_the_twins() {
    let out = idemlint()
        .current_dir(manifest_dir())
        .args(["check", "examples", "--format", "json"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let mut got: Vec<(String, String)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().replace('\\', "/"),
                f["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    got.sort();
    let want = [
        ("examples/java/RefundClient.java", "key-in-callback-retry"),
        ("examples/kotlin/ChargeRetry.kt", "key-in-retry-scope"),
        ("examples/kotlin/PaymentsHttp.kt", "key-in-interceptor"),
        ("examples/rust/payouts.rs", "unlocked-scheduled-job"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(p, r)| (p.to_string(), r.to_string()))
        .collect();
    assert_eq!(got, want, "{v:#}");
    // The fixed twins sit in the defect files (the functions named `...Fixed` / `..._fixed`):
    // exactly one finding per file means the twin is clean.
    assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{v:#}");
}

/// The summary says how many findings have a safe fix, how many only an unsafe one, and
/// why the others have none.
#[test]
fn summary_counts_fixes_and_gives_the_reasons_for_none() {
    let out = idemlint()
        .current_dir(manifest_dir())
        .args(["check", "examples", "--format", "short"])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let line = stderr
        .lines()
        .find(|l| l.starts_with("idemlint: fixes: "))
        .unwrap_or_else(|| panic!("no fix summary in {stderr}"));
    // The Resilience4j retry (a hoist) and the Retrofit callback (`call.clone()`) have a
    // safe fix; the interceptor and the scheduler have none, each with its reason.
    assert!(line.contains("2 safe (`--fix`)"), "{line}");
    assert!(line.contains("without a fix"), "{line}");
    assert!(line.contains("1: interceptor; "), "{line}");
    assert!(line.contains("1: scheduler; "), "{line}");
}

/// `--diff` says why each unsafe fix needs review, and that it is left out of the diff
/// unless `--unsafe-fixes` is given.
#[test]
fn diff_gives_the_reason_for_each_unsafe_fix() {
    let f = "fixtures/rust/key-in-retry-scope/backon_retry_closure.rs";
    let out = idemlint()
        .current_dir(manifest_dir())
        .args(["check", f, "--diff"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let line = stderr
        .lines()
        .find(|l| l.contains("unsafe fix ("))
        .unwrap_or_else(|| panic!("no unsafe-fix line in {stderr}"));
    assert!(line.contains("add `.clone()` or `move`"), "{line}");
    assert!(
        line.ends_with("not in the diff, add --unsafe-fixes"),
        "{line}"
    );
    let out = idemlint()
        .current_dir(manifest_dir())
        .args(["check", f, "--diff", "--unsafe-fixes"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr
            .lines()
            .any(|l| l.contains("unsafe fix (") && !l.contains("not in the diff")),
        "{stderr}"
    );
}
