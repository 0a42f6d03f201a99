//! End-to-end tests of what users meet when they adopt idemlint: configuration discovery
//! and errors, rule levels, include/exclude, catalogue extensions, suppressions, baselines,
//! standard input and the cargo flags. Every test runs the real binaries in a scratch
//! directory and parses the JSON output.

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use common::write;
use predicates::prelude::*;
use serde_json::Value;

fn idemlint() -> Command {
    let mut c = Command::cargo_bin("idemlint").unwrap();
    c.env("NO_COLOR", "1");
    c
}

/// A fresh scratch directory under cargo's per-test temporary directory.
fn scratch(name: &str) -> PathBuf {
    common::scratch("adoption", name)
}

/// Runs `idemlint check ARGS --format json` in `dir`, asserts the exit code, parses stdout.
fn json(dir: &Path, args: &[&str], code: i32) -> Value {
    let out = idemlint()
        .current_dir(dir)
        .arg("check")
        .args(args)
        .args(["--format", "json"])
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out)))
}

/// `(rule, path, line, severity)` of every finding.
fn findings(v: &Value) -> Vec<(String, String, u64, String)> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["path"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn rules_of(v: &Value) -> Vec<String> {
    findings(v).into_iter().map(|f| f.0).collect()
}

/// A retry-scope bug (line 5) and a clock key outside any boundary (line 9).
const KOTLIN: &str = r#"import java.util.UUID

suspend fun charge(api: Api, body: Body): Charge =
    retryOnTransient {
        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)
    }

fun period(api: Api, customerId: String) =
    api.createCharge(idempotencyKey = "p-$customerId-${System.currentTimeMillis()}", body = b)
"#;

#[test]
fn nearest_configuration_wins_and_sets_levels() {
    let dir = scratch("walk_up");
    write(
        &dir,
        "idemlint.toml",
        "[rules]\ntime-in-key = \"off\"\nkey-in-retry-scope = \"warning\"\n",
    );
    write(&dir, "src/billing/Billing.kt", KOTLIN);
    write(&dir, "legacy/deep/Billing.kt", KOTLIN);
    write(
        &dir,
        "legacy/.idemlint.toml",
        "[rules]\ntime-in-key = \"error\"\n",
    );
    let v = json(&dir, &["."], 1);
    let mut got = findings(&v);
    got.sort();
    assert_eq!(
        got,
        vec![
            // legacy/.idemlint.toml is nearer: default severity for the retry rule, time-in-key raised.
            (
                "key-in-retry-scope".into(),
                "legacy/deep/Billing.kt".into(),
                5,
                "error".into()
            ),
            // idemlint.toml: time-in-key off, retry rule lowered.
            (
                "key-in-retry-scope".into(),
                "src/billing/Billing.kt".into(),
                5,
                "warning".into()
            ),
            (
                "time-in-key".into(),
                "legacy/deep/Billing.kt".into(),
                9,
                "error".into()
            ),
        ]
    );
    // --config replaces discovery for every file.
    write(
        &dir,
        "other.toml",
        "[rules]\nkey-in-retry-scope = \"off\"\n",
    );
    let v = json(&dir, &[".", "--config", "other.toml"], 1);
    assert_eq!(rules_of(&v), vec!["time-in-key", "time-in-key"]);
}

#[test]
fn cargo_metadata_tables_are_configuration() {
    let dir = scratch("cargo_metadata");
    write(
        &dir,
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/*\"]\n\n[workspace.metadata.idemlint.rules]\ntime-in-key = \"off\"\n",
    );
    write(
        &dir,
        "crates/pay/Cargo.toml",
        "[package]\nname = \"pay\"\nversion = \"0.1.0\"\n\n[package.metadata.idemlint.rules]\nkey-in-retry-scope = \"note\"\n",
    );
    write(&dir, "crates/pay/src/Billing.kt", KOTLIN);
    write(
        &dir,
        "crates/ledger/Cargo.toml",
        "[package]\nname = \"ledger\"\nversion = \"0.1.0\"\n",
    );
    write(&dir, "crates/ledger/src/Billing.kt", KOTLIN);
    let mut got = findings(&json(&dir, &["."], 1));
    got.sort();
    assert_eq!(
        got,
        vec![
            // ledger has no table of its own: the workspace table applies.
            (
                "key-in-retry-scope".into(),
                "crates/ledger/src/Billing.kt".into(),
                5,
                "error".into()
            ),
            // pay's own package table wins over the workspace table (time-in-key back on).
            (
                "key-in-retry-scope".into(),
                "crates/pay/src/Billing.kt".into(),
                5,
                "note".into()
            ),
            (
                "time-in-key".into(),
                "crates/pay/src/Billing.kt".into(),
                9,
                "warning".into()
            ),
        ]
    );
}

#[test]
fn bad_configuration_shows_the_span_and_help_and_exits_2() {
    let dir = scratch("bad_config");
    write(&dir, "Billing.kt", KOTLIN);
    write(
        &dir,
        "idemlint.toml",
        "[rules]\ntime-in-key = \"off\"\nkey-in-retry-scop = \"off\"\n",
    );
    idemlint()
        .current_dir(&dir)
        .args(["check", "."])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains("idemlint.toml:3:1"))
        .stderr(predicate::str::contains("3 │ key-in-retry-scop = \"off\""))
        .stderr(predicate::str::contains(
            "help: did you mean `key-in-retry-scope`?",
        ));
    write(&dir, "idemlint.toml", "[rules]\ntime-in-key = \"warn\"\n");
    idemlint()
        .current_dir(&dir)
        .args(["check", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid level for `time-in-key`"))
        .stderr(predicate::str::contains(
            "help: use \"off\", \"note\", \"warning\" or \"error\"",
        ));
    write(&dir, "idemlint.toml", "exlude = [\"gen\"]\n");
    idemlint()
        .current_dir(&dir)
        .args(["check", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "unknown configuration key `exlude`",
        ))
        .stderr(predicate::str::contains("did you mean `exclude`?"));
    // A typo inside a catalogue entry with flattened call keys is found at the key.
    write(
        &dir,
        "idemlint.toml",
        "[[boundary]]\nid = \"team\"\nkind = \"retry\"\nform = \"lambda-arg\"\nflavor = \"retry\"\nlabel = \"x\"\ncalee = [\"withBackoff\"]\n",
    );
    idemlint()
        .current_dir(&dir)
        .args(["check", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("idemlint.toml:7:1"))
        .stderr(predicate::str::contains("unknown key `calee`"))
        .stderr(predicate::str::contains("did you mean `callee`?"));
    // The column counts characters, as every report does: after `"été-clé", ` the
    // value is the 28th character of its line and starts at its 31st byte.
    write(
        &dir,
        "idemlint.toml",
        "[keys]\nheader_names = [\"été-clé\", 5]\n",
    );
    idemlint()
        .current_dir(&dir)
        .args(["check", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("idemlint.toml:2:28"))
        .stderr(predicate::str::contains("expected a string"));
    // --config naming a missing file.
    idemlint()
        .current_dir(&dir)
        .args(["check", ".", "--config", "nope.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nope.toml"));
}

#[test]
fn select_and_ignore() {
    let dir = scratch("select");
    write(&dir, "Billing.kt", KOTLIN);
    assert_eq!(
        rules_of(&json(&dir, &[".", "--select", "time-in-key"], 1)),
        vec!["time-in-key"]
    );
    assert_eq!(
        rules_of(&json(
            &dir,
            &[".", "--ignore", "time-in-key,key-in-retry-scope"],
            0
        )),
        Vec::<String>::new()
    );
    // --select wins over a configuration that turns the rule off.
    write(&dir, "idemlint.toml", "[rules]\ntime-in-key = \"off\"\n");
    assert_eq!(
        rules_of(&json(&dir, &[".", "--select", "time-in-key"], 1)),
        vec!["time-in-key"]
    );
    idemlint()
        .current_dir(&dir)
        .args(["check", ".", "--ignore", "time-in-kye"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `time-in-key`?"));
}

#[test]
fn include_and_exclude_globs() {
    let dir = scratch("globs");
    for f in [
        "src/Billing.kt",
        "src/generated/Billing.kt",
        "src/BillingTest.kt",
        "scripts/Billing.kt",
    ] {
        write(&dir, f, KOTLIN);
    }
    write(
        &dir,
        "idemlint.toml",
        "include = [\"src\"]\nexclude = [\"generated\", \"*Test.kt\"]\n[rules]\ntime-in-key = \"off\"\n",
    );
    let v = json(&dir, &["."], 1);
    let paths: Vec<String> = findings(&v).into_iter().map(|f| f.1).collect();
    assert_eq!(paths, vec!["src/Billing.kt"]);
    // Explicitly named files obey the globs too.
    let v = json(&dir, &["src/generated/Billing.kt"], 0);
    assert!(findings(&v).is_empty());
}

#[test]
fn catalogue_extensions_add_a_retry_helper_and_a_stable_derivation() {
    let dir = scratch("catalogue");
    write(
        &dir,
        "Team.kt",
        r#"import java.util.UUID

suspend fun charge(api: Api, body: Body): Charge =
    withBackoff(attempts = 5) {
        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)
    }

fun period(api: Api, customerId: String) =
    api.createCharge(idempotencyKey = deriveKey(customerId, System.currentTimeMillis()), body = b)
"#,
    );
    let before = findings(&json(&dir, &["."], 1));
    assert_eq!(
        before,
        vec![("time-in-key".into(), "Team.kt".into(), 9, "warning".into())]
    );
    write(
        &dir,
        "idemlint.toml",
        r#"# The team's own retry helper runs its block once per attempt.
[[boundary]]
id = "team.with-backoff"
kind = "retry"
form = "lambda-arg"
langs = ["kotlin"]
callee = ["withBackoff"]
flavor = "retry"
label = "team `withBackoff`"

# deriveKey reduces the clock to the billing day and hashes it with the customer id.
[[stable]]
callee = ["deriveKey"]
"#,
    );
    let v = json(&dir, &["."], 1);
    assert_eq!(
        findings(&v),
        vec![(
            "key-in-retry-scope".into(),
            "Team.kt".into(),
            5,
            "error".into()
        )]
    );
    assert!(
        v["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("withBackoff")
    );
}

const SUPPRESSED: &str = r#"import java.util.UUID

suspend fun a(api: Api, body: Body): Charge =
    retryOnTransient {
        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body) // idemlint: allow(key-in-retry-scope) -- sandbox
    }

suspend fun b(api: Api, body: Body): Charge =
    retryOnTransient {
        // idemlint: allow(key-in-retry-scope)
        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)
    }

@Suppress("idemlint:key-in-retry-scope")
suspend fun c(api: Api, body: Body): Charge =
    retryOnTransient {
        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)
    }

fun d() = 1 // idemlint: allow(time-in-key) -- stale
"#;

#[test]
fn suppressions_unused_and_reasons() {
    let dir = scratch("suppressions");
    write(&dir, "Billing.kt", SUPPRESSED);
    let v = json(&dir, &["."], 1);
    assert_eq!(
        findings(&v),
        vec![(
            "unused-suppression".into(),
            "Billing.kt".into(),
            20,
            "warning".into()
        )]
    );
    let f = &v["findings"][0];
    let line20 = SUPPRESSED.lines().nth(19).unwrap();
    assert_eq!(
        f["column"],
        line20.find("time-in-key").unwrap() + 1,
        "points at the rule id"
    );
    assert!(f["message"].as_str().unwrap().contains("`time-in-key`"));
    // Reasons required: the two suppressions without `-- reason` are reported.
    write(
        &dir,
        "idemlint.toml",
        "require-suppression-reason = true\n[rules]\nunused-suppression = \"off\"\n",
    );
    let v = json(&dir, &["."], 1);
    assert_eq!(
        findings(&v),
        vec![
            (
                "suppression-without-reason".into(),
                "Billing.kt".into(),
                10,
                "warning".into()
            ),
            (
                "suppression-without-reason".into(),
                "Billing.kt".into(),
                14,
                "warning".into()
            ),
        ]
    );
    // Turning the suppressed rule off makes its suppressions neither used nor reported.
    write(&dir, "idemlint.toml", "[rules]\ntime-in-key = \"off\"\n");
    assert!(findings(&json(&dir, &["."], 0)).is_empty());
}

#[test]
fn check_text_applies_the_same_suppressions_and_configuration() {
    let dir = scratch("check_text");
    write(&dir, "Billing.kt", SUPPRESSED);
    write(
        &dir,
        "idemlint.toml",
        "[rules]\nunused-suppression = \"error\"\n",
    );
    let file = json(&dir, &["Billing.kt"], 1);
    let cat = idemlint::catalogue::Catalogue::builtin();
    let mut resolver = idemlint::config::Resolver::new(&cat, None, Default::default()).unwrap();
    let config = resolver.for_path(&dir.join("Billing.kt")).unwrap();
    let (text_findings, _) =
        idemlint::check::check_text_with("Billing.kt", SUPPRESSED, &config).unwrap();
    let from_text: Vec<(String, u64, String)> = text_findings
        .iter()
        .map(|f| {
            (
                f.rule.to_string(),
                f.line as u64,
                f.severity.name().to_string(),
            )
        })
        .collect();
    let from_file: Vec<(String, u64, String)> = findings(&file)
        .into_iter()
        .map(|f| (f.0, f.2, f.3))
        .collect();
    assert_eq!(from_text, from_file);
    assert_eq!(
        from_text,
        vec![("unused-suppression".to_string(), 20, "error".to_string())]
    );
    // The plain entry point applies suppressions too (default configuration).
    let (plain, _) = idemlint::check::check_text("Billing.kt", SUPPRESSED, &cat).unwrap();
    assert_eq!(plain.len(), 1);
    assert_eq!(plain[0].severity.name(), "warning");
}

#[test]
fn baseline_hides_known_findings_reports_new_copies_and_stale_entries() {
    let dir = scratch("baseline");
    write(&dir, "Billing.kt", KOTLIN);
    write(&dir, "Other.kt", KOTLIN);
    // Writing records every finding and reports none.
    let v = json(
        &dir,
        &[".", "--write-baseline", "idemlint-baseline.json"],
        0,
    );
    assert!(findings(&v).is_empty());
    assert_eq!(v["baseline"]["matched"], 4);
    let base: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("idemlint-baseline.json")).unwrap())
            .unwrap();
    assert_eq!(base["version"], 1);
    assert_eq!(base["fingerprint"], "idemlint/v1");
    assert_eq!(base["entries"].as_array().unwrap().len(), 4);
    assert!(
        base["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["count"] == 1)
    );
    // Re-run: clean.
    let v = json(&dir, &[".", "--baseline", "idemlint-baseline.json"], 0);
    assert!(findings(&v).is_empty());
    assert_eq!(v["baseline"]["stale"].as_array().unwrap().len(), 0);
    // Lines added above: still clean.
    write(
        &dir,
        "Billing.kt",
        &format!("// Billing\n// owned by payments\n\n{KOTLIN}"),
    );
    assert!(
        findings(&json(
            &dir,
            &[".", "--baseline", "idemlint-baseline.json"],
            0
        ))
        .is_empty()
    );
    // A second copy of the baselined bug in the same retry block is reported.
    let doubled = KOTLIN.replace(
        "        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)\n",
        "        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)\n        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)\n",
    );
    write(&dir, "Billing.kt", &doubled);
    let v = json(&dir, &[".", "--baseline", "idemlint-baseline.json"], 1);
    assert_eq!(
        findings(&v),
        vec![(
            "key-in-retry-scope".into(),
            "Billing.kt".into(),
            6,
            "error".into()
        )]
    );
    // Fixing Other.kt makes its entries stale: reported in JSON and on stderr.
    write(&dir, "Other.kt", "fun clean() = 1\n");
    let out = idemlint()
        .current_dir(&dir)
        .args([
            "check",
            ".",
            "--baseline",
            "idemlint-baseline.json",
            "--format",
            "json",
        ])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("stale baseline entry"))
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let stale = v["baseline"]["stale"].as_array().unwrap();
    assert_eq!(stale.len(), 2);
    assert!(
        stale
            .iter()
            .all(|s| s["path"] == "Other.kt" && s["found"] == 0 && s["recorded"] == 1)
    );
    // Rewriting against the old baseline prunes it and never adds the new copy.
    let v = json(
        &dir,
        &[
            ".",
            "--baseline",
            "idemlint-baseline.json",
            "--write-baseline",
            "idemlint-baseline.json",
        ],
        1,
    );
    assert_eq!(findings(&v).len(), 1, "the new copy is still reported");
    let base: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("idemlint-baseline.json")).unwrap())
            .unwrap();
    assert_eq!(base["entries"].as_array().unwrap().len(), 2);
    assert!(
        base["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["path"] == "Billing.kt" && e["count"] == 1)
    );
    // A broken baseline file is a tool error.
    write(&dir, "broken.json", "{\"version\": 1");
    idemlint()
        .current_dir(&dir)
        .args(["check", ".", "--baseline", "broken.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("broken.json"));
}

/// A run that reports on part of the files (a pre-commit hook's `--only`, one `--shard`)
/// leaves the baseline's entries of the other files alone: they are not stale, and
/// `--baseline F --write-baseline F` keeps them, so the next full run stays clean.
#[test]
fn a_partial_run_neither_reports_nor_prunes_the_other_files_entries() {
    let dir = scratch("baseline_partial");
    write(&dir, "Billing.kt", KOTLIN);
    write(&dir, "Other.kt", KOTLIN);
    let v = json(&dir, &[".", "--write-baseline", "b.json"], 0);
    assert_eq!(v["baseline"]["matched"], 4);
    let entries = |dir: &Path| -> Vec<String> {
        let b: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("b.json")).unwrap()).unwrap();
        let mut paths: Vec<String> = b["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap().to_string())
            .collect();
        paths.sort();
        paths
    };
    let all = entries(&dir);
    assert_eq!(all.len(), 4);
    // One finding of Billing.kt fixed: only that entry is stale; Other.kt's are not.
    write(
        &dir,
        "Billing.kt",
        &KOTLIN.replacen("UUID.randomUUID()", "orderKey", 1),
    );
    let v = json(
        &dir,
        &[
            ".",
            "--only",
            "Billing.kt",
            "--baseline",
            "b.json",
            "--write-baseline",
            "b.json",
        ],
        0,
    );
    let stale = v["baseline"]["stale"].as_array().unwrap();
    assert!(
        stale.iter().all(|s| s["path"] == "Billing.kt"),
        "{stale:#?}"
    );
    let after = entries(&dir);
    assert_eq!(
        after.iter().filter(|p| *p == "Other.kt").count(),
        2,
        "{after:?}"
    );
    assert!(
        after.len() < all.len(),
        "the fixed finding's entry is pruned: {after:?}"
    );
    // The next full run is clean.
    let v = json(&dir, &[".", "--baseline", "b.json"], 0);
    assert!(findings(&v).is_empty(), "{v:#}");
    // A shard run, too, leaves the other shard's entries alone.
    for shard in ["1/2", "2/2"] {
        let v = json(&dir, &[".", "--shard", shard, "--baseline", "b.json"], 0);
        let stale = v["baseline"]["stale"].as_array().unwrap();
        assert!(stale.is_empty(), "{shard}: {stale:#?}");
    }
}

#[test]
fn standard_input_with_a_file_name() {
    let dir = scratch("stdin");
    write(
        &dir,
        "src/idemlint.toml",
        "[rules]\ntime-in-key = \"off\"\n",
    );
    let out = idemlint()
        .current_dir(&dir)
        .args([
            "check",
            "--stdin-filename",
            "src/Billing.kt",
            "-",
            "--format",
            "json",
        ])
        .write_stdin(KOTLIN)
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    // The configuration next to the (not existing) file applies.
    assert_eq!(
        findings(&v),
        vec![(
            "key-in-retry-scope".into(),
            "src/Billing.kt".into(),
            5,
            "error".into()
        )]
    );
    // Human output renders the snippet from standard input.
    idemlint()
        .current_dir(&dir)
        .args(["--stdin-filename", "Billing.kt", "-"])
        .write_stdin(KOTLIN)
        .assert()
        .code(1)
        .stdout(predicate::str::contains("Billing.kt:5:"))
        .stdout(predicate::str::contains("retryOnTransient {"));
    idemlint()
        .current_dir(&dir)
        .args(["check", "-"])
        .write_stdin(KOTLIN)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--stdin-filename"));
    idemlint()
        .current_dir(&dir)
        .args(["check", "--stdin-filename", "notes.txt", "-"])
        .write_stdin(KOTLIN)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("notes.txt"));
}

const RUST_BUG: &str = "pub async fn charge() {\n    backoff::future::retry(policy(), || async {\n        send(uuid::Uuid::new_v4()).await\n    }).await;\n}\nfn send(idempotency_key: uuid::Uuid) {}\n";

fn cargo_workspace(name: &str) -> PathBuf {
    let dir = scratch(name);
    write(
        &dir,
        "Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\nmembers = [\"crates/gen\", \"crates/pay\"]\n",
    );
    write(&dir, "src/lib.rs", RUST_BUG);
    for member in ["gen", "pay"] {
        write(
            &dir,
            &format!("crates/{member}/Cargo.toml"),
            &format!("[package]\nname = \"{member}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        );
        write(&dir, &format!("crates/{member}/src/lib.rs"), RUST_BUG);
    }
    write(&dir, "tools/lib.rs", RUST_BUG); // not in any member
    dir
}

fn cargo_paths(dir: &Path, args: &[&str]) -> Vec<String> {
    let out = Command::cargo_bin("cargo-idemlint")
        .unwrap()
        .current_dir(dir)
        .arg("idemlint")
        .args(args)
        .args(["--format", "json"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    findings(&v).into_iter().map(|f| f.1).collect()
}

#[test]
fn cargo_workspace_exclude_and_manifest_path() {
    let dir = cargo_workspace("cargo_flags");
    // Default: the workspace root, every file under it.
    assert_eq!(
        cargo_paths(&dir, &[]),
        vec![
            "crates/gen/src/lib.rs",
            "crates/pay/src/lib.rs",
            "src/lib.rs",
            "tools/lib.rs"
        ]
    );
    // --workspace: the members' directories, each file once.
    assert_eq!(
        cargo_paths(&dir, &["--workspace"]),
        vec![
            "crates/gen/src/lib.rs",
            "crates/pay/src/lib.rs",
            "src/lib.rs",
            "tools/lib.rs"
        ]
    );
    // --exclude a nested member: left out although the root member contains it.
    assert_eq!(
        cargo_paths(&dir, &["--workspace", "--exclude", "gen"]),
        vec!["crates/pay/src/lib.rs", "src/lib.rs", "tools/lib.rs"]
    );
    // --exclude the root member: the nested members are still checked.
    assert_eq!(
        cargo_paths(&dir, &["--workspace", "--exclude", "app"]),
        vec!["crates/gen/src/lib.rs", "crates/pay/src/lib.rs"]
    );
    // --manifest-path from elsewhere: that manifest's workspace root.
    let parent = dir.parent().unwrap();
    let paths = cargo_paths(
        parent,
        &["--manifest-path", "cargo_flags/crates/pay/Cargo.toml"],
    );
    assert_eq!(paths.len(), 4);
    assert!(
        paths.iter().all(|p| p.starts_with("cargo_flags/")),
        "{paths:?}"
    );
    // --exclude needs --workspace, as with cargo; a bad manifest path is a tool error.
    Command::cargo_bin("cargo-idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["idemlint", "--exclude", "gen"])
        .assert()
        .code(2);
    Command::cargo_bin("cargo-idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["idemlint", "--manifest-path", "nope/Cargo.toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nope/Cargo.toml"));
}

#[test]
fn new_rules_are_listed_and_explained() {
    let out = idemlint()
        .arg("rules")
        .assert()
        .code(0)
        .get_output()
        .stdout
        .clone();
    let s = String::from_utf8(out).unwrap();
    for id in ["unused-suppression", "suppression-without-reason"] {
        let line = s
            .lines()
            .find(|l| l.starts_with(id))
            .unwrap_or_else(|| panic!("{s}"));
        assert!(line.contains("warning"), "{line}");
    }
    idemlint()
        .args(["explain", "unused-suppression"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("## Why is this bad?"));
}
