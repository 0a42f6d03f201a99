//! Stumbles of a new user's first hour (issue 14, third pass), one test each: the help
//! and the fix agree on a hoist, SARIF's `executionSuccessful` follows the run, `--only`
//! and PATH cannot be confused, boundary labels name the call chain as written, SARIF
//! message text escapes brackets, `--fix`/`--diff` leave baselined findings alone, and the
//! reasons for a missing or unsafe fix say what would go wrong.

mod common;

use std::path::{Path, PathBuf};

use common::run;
use serde_json::Value;

fn scratch(name: &str) -> PathBuf {
    common::scratch("first_hour", name)
}

fn json(dir: &Path, args: &[&str]) -> Value {
    let mut a = vec!["check", "--format", "json"];
    a.extend_from_slice(args);
    let o = run(dir, &a);
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", o.stdout, o.stderr))
}

fn findings(v: &Value) -> Vec<Value> {
    v["findings"].as_array().unwrap().clone()
}

/// A Java 8 project (no build file, no `java-version`): the key comes from a helper
/// declared in the same file, so its type is known.
const JAVA_HELPER: &str = r#"import java.util.UUID;

final class Payouts {
    private final RetryTemplate retryTemplate = new RetryTemplate();

    static String newKey() {
        return "po_" + UUID.randomUUID();
    }

    Payout send(PayoutApi api, String accountId) {
        return retryTemplate.execute(ctx -> api.createPayout(accountId, newKey()));
    }
}

interface PayoutApi { Payout createPayout(String accountId, String idempotencyKey); }
"#;

/// The same, with the helper in another file: its type is not known here.
const JAVA_CALLER: &str = r#"final class Payouts {
    private final RetryTemplate retryTemplate = new RetryTemplate();

    Payout send(PayoutApi api, String accountId) {
        return retryTemplate.execute(ctx -> api.createPayout(accountId, Keys.newKey()));
    }
}

interface PayoutApi { Payout createPayout(String accountId, String idempotencyKey); }
"#;
const JAVA_KEYS: &str = r#"import java.util.UUID;

final class Keys {
    static Key newKey() {
        return new Key("po_" + UUID.randomUUID());
    }
}
"#;

/// The declaration a hoist fix inserts (its first edit), trimmed.
fn inserted(f: &Value) -> Option<String> {
    Some(f["fix"]["edits"][0]["content"].as_str()?.trim().to_string())
}

#[test]
fn help_and_fix_agree_on_the_hoisted_declaration() {
    // Java 8, type known from the same file: the fix declares it with that type, and the
    // help suggests exactly that declaration (not `final var`, which Java 8 lacks).
    let dir = scratch("help_fix_known_type");
    std::fs::write(dir.join("Payouts.java"), JAVA_HELPER).unwrap();
    let f = findings(&json(&dir, &["Payouts.java"]));
    assert_eq!(f.len(), 1, "{f:?}");
    let help = f[0]["help"].as_str().unwrap();
    assert_eq!(
        inserted(&f[0]).as_deref(),
        Some("final String idempotencyKey = newKey();"),
        "{f:?}"
    );
    assert_eq!(f[0]["fix"]["applicability"], "safe");
    assert!(!help.contains("final var"), "{help}");
    assert!(
        help.contains(
            "add `final String idempotencyKey = newKey();` there and use `idempotencyKey` inside"
        ),
        "{help}"
    );

    // Java 8, type unknown (the helper is elsewhere): no fix, and the help says why
    // instead of suggesting a `var` declaration the fixer refuses.
    let dir = scratch("help_fix_unknown_type");
    std::fs::write(dir.join("Payouts.java"), JAVA_CALLER).unwrap();
    std::fs::write(dir.join("Keys.java"), JAVA_KEYS).unwrap();
    let f = findings(&json(&dir, &["."]));
    assert_eq!(f.len(), 1, "{f:?}");
    let help = f[0]["help"].as_str().unwrap();
    assert!(f[0]["fix"].is_null(), "{f:?}");
    assert!(!help.contains("final var"), "{help}");
    assert!(
        help.contains(
            "declare `idempotencyKey` there, with the type of `Keys.newKey()` (Java 8 has no `var`)"
        ),
        "{help}"
    );
    assert!(
        help.contains("(not done by `--fix`, which does not know that type; with `java-version` 10 or later it declares the key with `var`)"),
        "{help}"
    );
    assert_eq!(help.matches("has no `var`").count(), 1, "{help}");
    let why = f[0]["no_fix"].as_str().unwrap();
    assert!(why.contains("Java 8 has no `var`"), "{why}");

    // Java 17: `var` is fine for both.
    std::fs::write(dir.join("idemlint.toml"), "java-version = 17\n").unwrap();
    let f = findings(&json(&dir, &["."]));
    let help = f[0]["help"].as_str().unwrap();
    assert_eq!(
        inserted(&f[0]).as_deref(),
        Some("final var idempotencyKey = Keys.newKey();")
    );
    assert!(
        help.contains("add `final var idempotencyKey = Keys.newKey();` there"),
        "{help}"
    );
}

#[test]
fn help_names_the_local_the_fix_declares() {
    // `idempotencyKey` is taken: the fix uses `idempotencyKey2`, and so does the help.
    let dir = scratch("help_fix_name_taken");
    std::fs::write(
        dir.join("Charges.kt"),
        r#"import java.util.UUID

class Charges(private val api: Api) {
    suspend fun charge(idempotencyKey: String, body: Body): Charge {
        log(idempotencyKey)
        return retryOnTransient {
            api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)
        }
    }
}
"#,
    )
    .unwrap();
    let f = findings(&json(&dir, &["Charges.kt"]));
    assert_eq!(f.len(), 1, "{f:?}");
    let decl = inserted(&f[0]).unwrap();
    assert!(decl.starts_with("val idempotencyKey2 = "), "{decl}");
    let help = f[0]["help"].as_str().unwrap();
    assert!(
        help.contains(&format!(
            "add `{decl}` there and use `idempotencyKey2` inside"
        )),
        "{help}"
    );
}

/// A file that cannot be analysed (not UTF-8) next to one finding.
fn project_with_a_broken_file(name: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("Payouts.java"), JAVA_HELPER).unwrap();
    std::fs::write(
        dir.join("Broken.java"),
        b"class Broken { String s = \"\xff\xfe\"; }\n",
    )
    .unwrap();
    dir
}

fn invocation(dir: &Path, args: &[&str]) -> (i32, Value) {
    let mut a = vec!["check", "--format", "sarif"];
    a.extend_from_slice(args);
    let o = run(dir, &a);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    (o.code, v["runs"][0]["invocations"][0].clone())
}

#[test]
fn sarif_execution_successful_follows_the_run() {
    let dir = project_with_a_broken_file("sarif_execution");
    // --strict: exit 2, and the log says the execution did not succeed.
    let (code, inv) = invocation(&dir, &[".", "--strict"]);
    assert_eq!(code, 2);
    assert_eq!(inv["executionSuccessful"], false, "{inv}");
    assert_eq!(inv["exitCode"], 2, "{inv}");
    // Without --strict the exit code is the findings', but a file was not analysed.
    let (code, inv) = invocation(&dir, &["."]);
    assert_eq!(code, 1);
    assert_eq!(inv["executionSuccessful"], false, "{inv}");
    assert_eq!(inv["exitCode"], 1, "{inv}");
    assert_eq!(
        inv["toolExecutionNotifications"].as_array().map(Vec::len),
        Some(1)
    );
    // Every file analysed: success, whatever the findings.
    let (code, inv) = invocation(&dir, &["Payouts.java", "--strict"]);
    assert_eq!(code, 1);
    assert_eq!(inv["executionSuccessful"], true, "{inv}");
    assert_eq!(inv["exitCode"], 1, "{inv}");
    let (code, inv) = invocation(&dir, &["Payouts.java", "--exit-zero"]);
    assert_eq!((code, &inv["executionSuccessful"]), (0, &Value::Bool(true)));
}

/// Two files under `src/`, and a third outside it.
fn only_project(name: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("other")).unwrap();
    std::fs::write(dir.join("src/Payouts.java"), JAVA_HELPER).unwrap();
    std::fs::write(
        dir.join("src/Refunds.java"),
        JAVA_HELPER.replace("Payouts", "Refunds"),
    )
    .unwrap();
    std::fs::write(
        dir.join("other/Other.java"),
        JAVA_HELPER.replace("Payouts", "Other"),
    )
    .unwrap();
    dir
}

#[test]
fn only_and_path_cannot_be_confused() {
    let dir = only_project("only_order");
    // PATH after the --only files: `.` would be an --only "file" that reports everything.
    let o = run(&dir, &["check", "--only", "src/Payouts.java", "."]);
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(
        o.stderr
            .contains("--only .: that is the checked path itself"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr
            .contains("`idemlint check . --only src/Payouts.java`"),
        "{}",
        o.stderr
    );
    // PATH first works, and several --only files are taken up to the next option.
    let v = json(
        &dir,
        &[
            ".",
            "--only",
            "src/Payouts.java",
            "src/Refunds.java",
            "--quiet",
        ],
    );
    let paths: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["src/Payouts.java", "src/Refunds.java"]);
    // `--` ends the --only files: what follows is a PATH.
    let v = json(&dir, &["--only", "src/Payouts.java", "--", "src"]);
    assert_eq!(findings(&v).len(), 1);
    // A named file outside PATH, or missing, is an error that says so.
    let o = run(&dir, &["check", "src", "--only", "other/Other.java"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("--only other/Other.java: not under the checked path src"),
        "{}",
        o.stderr
    );
    let o = run(&dir, &["check", ".", "--only", "src/Nope.java"]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("path not found: src/Nope.java (named by --only)"),
        "{}",
        o.stderr
    );
    // The usage line says where PATH goes.
    let o = run(&dir, &["check", "--help"]);
    assert!(
        o.stdout.contains("idemlint check [PATH]... --only FILE..."),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("PATH first"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("idemlint check [PATH]... [OPTIONS] --only -- FILE..."),
        "{}",
        o.stdout
    );
}

fn label(dir: &Path, file: &str, text: &str) -> Vec<String> {
    std::fs::write(dir.join(file), text).unwrap();
    findings(&json(dir, &[file]))
        .iter()
        .map(|f| f["boundary"]["label"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn boundary_labels_name_the_call_chain_as_written() {
    let dir = scratch("labels");
    let java = label(
        &dir,
        "TopUp.java",
        r#"import dev.failsafe.Failsafe;
import java.util.UUID;

final class TopUp {
    Result topUp(WalletApi wallet, String walletId) {
        return Failsafe.with(retryPolicy).get(() -> wallet.topUp(walletId, UUID.randomUUID().toString()));
    }
}

interface WalletApi { Result topUp(String walletId, String idempotencyKey); }
"#,
    );
    assert_eq!(java, ["`Failsafe.with(…).get(…)`"]);
    let kotlin = label(
        &dir,
        "TopUp.kt",
        r#"import dev.failsafe.Failsafe
import java.util.UUID

class TopUp(private val wallet: WalletApi) {
    fun topUp(walletId: String): Result =
        Failsafe.with(retryPolicy).get { -> wallet.topUp(walletId, idempotencyKey = UUID.randomUUID().toString()) }
}

interface WalletApi { fun topUp(walletId: String, idempotencyKey: String): Result }
"#,
    );
    assert_eq!(kotlin, ["`Failsafe.with(…).get { … }`"]);
    let rust = label(
        &dir,
        "top_up.rs",
        r#"use uuid::Uuid;

async fn top_up(client: &reqwest::Client) -> Result<(), reqwest::Error> {
    Backoff::new(3)
        .retry_async(|| async {
            client
                .post("https://wallet.example.com/v1/top-ups")
                .header("Idempotency-Key", Uuid::new_v4().to_string())
                .send()
                .await
        })
        .await?;
    Ok(())
}
"#,
    );
    assert_eq!(rust, ["`Backoff::new(…).retry_async(…)`"]);
    // A plain receiver keeps its last name (`this.retryTemplate` → `retryTemplate`).
    let plain = label(&dir, "Payouts.java", JAVA_HELPER);
    assert_eq!(plain, ["`retryTemplate.execute(…)`"]);
}

#[test]
fn sarif_message_text_escapes_brackets() {
    let dir = scratch("sarif_brackets");
    std::fs::write(
        dir.join("Charges.kt"),
        r#"import java.util.UUID

class Charges(private val api: Api, private val retries: List<Retry>) {
    suspend fun charge(ids: List<String>, body: Body): Charge {
        return retries[0].executeSuspendFunction {
            api.createCharge(idempotencyKey = ids[0] + UUID.randomUUID(), body = body)
        }
    }
}
"#,
    )
    .unwrap();
    let o = run(&dir, &["check", "--format", "sarif", "Charges.kt"]);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{}", o.stdout);
    let r = &results[0];
    let text = r["message"]["text"].as_str().unwrap();
    assert!(text.contains("ids\\[0\\]"), "{text}");
    assert!(text.contains("retries\\[0\\]"), "{text}");
    // The one link idemlint writes stays a link; no other bracket is bare.
    let link = "[retry boundary](1)";
    assert_eq!(text.matches(link).count(), 1, "{text}");
    let rest = text.replacen(link, "", 1);
    let bare = rest
        .char_indices()
        .filter(|(i, c)| matches!(c, '[' | ']') && !rest[..*i].ends_with('\\'))
        .count();
    assert_eq!(bare, 0, "{text}");
    let related = r["relatedLocations"][0]["message"]["text"]
        .as_str()
        .unwrap();
    assert!(related.contains("retries\\[0\\]"), "{related}");
    if let Some(d) = r["fixes"][0]["description"]["text"].as_str() {
        assert!(!d.contains("ids[0]"), "{d}");
    }
}

/// A Kotlin retry with a safe hoist fix, in function `name`.
fn fixable(name: &str) -> String {
    format!(
        r#"import java.util.UUID

suspend fun {name}(api: Api, body: Body): Charge {{
    return retryOnTransient {{
        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)
    }}
}}
"#
    )
}

#[test]
fn fix_and_diff_leave_baselined_findings_alone() {
    let dir = scratch("fix_baseline");
    std::fs::write(dir.join("Old.kt"), fixable("old")).unwrap();
    let o = run(&dir, &["check", ".", "--write-baseline", "baseline.json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    std::fs::write(dir.join("New.kt"), fixable("new")).unwrap();
    // --diff shows only the reported finding's fix.
    let o = run(
        &dir,
        &["check", ".", "--diff", "--baseline", "baseline.json"],
    );
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(o.stdout.contains("+++ b/New.kt"), "{}", o.stdout);
    assert!(!o.stdout.contains("Old.kt"), "{}", o.stdout);
    assert!(
        o.stderr
            .contains("1 finding recorded in baseline.json not shown"),
        "{}",
        o.stderr
    );
    // --fix fixes only it, and leaves the baselined file as it was.
    let o = run(
        &dir,
        &["check", ".", "--fix", "--baseline", "baseline.json"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stderr.contains("applied 1 fix in 1 file"), "{}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("Old.kt")).unwrap(),
        fixable("old")
    );
    assert_ne!(
        std::fs::read_to_string(dir.join("New.kt")).unwrap(),
        fixable("new")
    );
    // The baseline's finding is still there, and still hidden.
    let o = run(&dir, &["check", ".", "--baseline", "baseline.json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(&dir, &["check", "."]);
    assert_eq!(o.code, 1, "{}", o.stderr);
}

/// Every reason the fixer gives on the fixtures (no fix, or an unsafe one).
fn fixture_reasons() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let v = json(root, &["fixtures", "--no-ignore"]);
    let mut out: Vec<String> = Vec::new();
    for f in findings(&v) {
        if let Some(r) = f["no_fix"].as_str() {
            out.push(r.to_string());
        }
        if let Some(r) = f["fix"]["reason"].as_str() {
            out.push(r.to_string());
        }
    }
    out.sort();
    out.dedup();
    out
}

#[test]
fn fix_reasons_say_what_would_go_wrong() {
    let reasons = fixture_reasons();
    assert!(reasons.len() >= 5, "{reasons:#?}");
    // The mechanical phrasings of before, none of which says what would go wrong.
    for old in [
        "the boundary",
        "retried scope",
        "no statement to insert before",
        "the helper mints and sends the key itself",
        "needs a lock or a stable key",
        "loop(s)/lambda(s)",
        "does not re-invoke the original call",
    ] {
        for r in &reasons {
            assert!(!r.contains(old), "`{old}` in {r}");
        }
    }
    // Each reason is a sentence with a consequence, at least a clause long.
    for r in &reasons {
        assert!(r.split_whitespace().count() >= 12, "too terse: {r}");
    }
}

#[test]
fn hoisting_out_of_a_loop_over_items_says_every_item_would_share_the_key() {
    let dir = scratch("loop_reason");
    std::fs::write(
        dir.join("Batch.java"),
        r#"import java.util.List;
import java.util.UUID;

final class Batch {
    private final RetryTemplate retryTemplate = new RetryTemplate();

    void chargeAll(ChargeApi api, List<String> orders) {
        for (String order : orders) retryTemplate.execute(ctx -> api.createCharge(order, UUID.randomUUID().toString()));
    }
}

interface ChargeApi { Object createCharge(String orderId, String idempotencyKey); }
"#,
    )
    .unwrap();
    let f = findings(&json(&dir, &["Batch.java"]));
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(f[0]["fix"].is_null(), "{f:?}");
    let why = f[0]["no_fix"].as_str().unwrap();
    assert!(
        why.contains("hoisting the key out of that loop would give every item the same key"),
        "{why}"
    );
    // The help does not suggest the hoist as if `--fix` could do it; it gives the reason.
    let help = f[0]["help"].as_str().unwrap();
    assert!(
        help.contains(&format!("(not done by `--fix`: {why})")),
        "{help}"
    );
    // Java 8 (no build file): the suggested declaration has a type, not `var`.
    assert!(
        help.contains("add `final String idempotencyKey = UUID.randomUUID().toString();` there"),
        "{help}"
    );
}

/// A project with one finding and one file with a syntax error.
fn flags_project(name: &str) -> PathBuf {
    let dir = scratch(name);
    std::fs::write(dir.join("Payouts.java"), JAVA_HELPER).unwrap();
    std::fs::write(dir.join("Broken.java"), "class Broken { void f( { }\n").unwrap();
    dir
}

/// `--parse-only` (documented in docs/cli.md, used by scripts/bench.sh): parses every file
/// and reports parse errors, nothing else, and exits 0.
#[test]
fn parse_only_reports_parse_errors_and_no_findings() {
    let dir = flags_project("parse_only");
    let v = json(&dir, &[".", "--parse-only"]);
    assert_eq!(findings(&v).len(), 0, "{v}");
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{v}");
    assert_eq!(errors[0]["path"], "Broken.java");
    // Nothing is analysed, so the message does not say the rest of the file was.
    assert_eq!(errors[0]["message"], "syntax error", "{v}");
    let o = run(&dir, &["check", ".", "--parse-only"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // Without it, the finding is there.
    assert_eq!(findings(&json(&dir, &["."])).len(), 1);
}

/// `--timings` (documented, read by bench/keyed.sh): files discovered, read, parsed per
/// round and checked, the index's builds and size, each phase's time and the peak RSS at
/// its end, on standard error.
#[test]
fn timings_print_counts_and_phases_on_stderr() {
    let dir = flags_project("timings");
    let o = run(&dir, &["check", ".", "--timings", "--format", "json"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(findings(&v).len(), 1);
    let stats: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| l.starts_with("idemlint stats: "))
        .collect();
    assert!(
        stats[0].starts_with("idemlint stats: 2 files found, 2 read, "),
        "{stats:?}"
    );
    assert!(
        stats[0].contains(" parsed, ") && stats[0].ends_with(" analysed for findings (pass 2)"),
        "{stats:?}"
    );
    assert!(
        stats[1].starts_with("idemlint stats: parsed: ")
            && stats[1].contains(" with a key word")
            && stats[2].starts_with("idemlint stats: project index: ")
            && stats[2].contains(" function declaration"),
        "{stats:?}"
    );
    for phase in ["discover", "read+scan", "pass 1", "index", "pass 2"] {
        assert!(
            stats.iter().any(|l| l.contains(&format!(": {phase} "))
                && l.contains(" s ")
                && l.contains('%')),
            "{phase}: {stats:?}"
        );
    }
    // The files pass 1 took longest to parse, longest first: Payouts.java has the key
    // word, so it is parsed whatever the prefilter selects.
    let slow: Vec<&str> = stats
        .iter()
        .filter_map(|l| l.strip_prefix("idemlint stats: slow to parse: "))
        .collect();
    assert!(
        slow.iter().any(|l| l.ends_with(" MB, Payouts.java")) && slow.len() <= 2,
        "{stats:?}"
    );
    let slow_secs: Vec<f64> = slow
        .iter()
        .map(|l| l.split(" s, ").next().unwrap().parse().unwrap())
        .collect();
    assert!(slow_secs.windows(2).all(|w| w[0] >= w[1]), "{stats:?}");
    // A total line last: the phases' seconds summed (each printed rounded to 1 ms).
    let secs = |l: &str| -> f64 {
        let words: Vec<&str> = l.split_whitespace().collect();
        words
            .iter()
            .position(|w| *w == "s")
            .and_then(|i| words.get(i.checked_sub(1)?)?.parse().ok())
            .unwrap_or_else(|| panic!("no seconds in {l:?}"))
    };
    let total = stats.last().unwrap();
    assert!(total.starts_with("idemlint stats: total "), "{stats:?}");
    let phases: f64 = stats[stats.len() - 6..stats.len() - 1]
        .iter()
        .map(|l| secs(l))
        .sum();
    assert!((secs(total) - phases).abs() < 0.01, "{stats:?}");
    // Linux has `/proc/self/status`: each phase line ends with the peak RSS so far, which
    // never falls; the total line repeats the highest.
    if cfg!(target_os = "linux") {
        let peaks: Vec<u64> = stats
            .iter()
            .filter_map(|l| l.split("peak RSS ").nth(1))
            .map(|x| x.trim_end_matches(" MiB").parse().unwrap())
            .collect();
        assert_eq!(peaks.len(), 6, "{stats:?}");
        assert_eq!(peaks[5], peaks[4], "{stats:?}");
        assert!(
            peaks.windows(2).all(|w| w[0] <= w[1]) && peaks[0] > 0,
            "{stats:?}"
        );
    }
}

/// `--verbose` and `-v` are `--timings` by the names other tools give it: the same counts.
#[test]
fn verbose_and_v_are_timings() {
    let dir = flags_project("stats_alias");
    let counts = |flag: &str| -> Vec<String> {
        let o = run(&dir, &["check", ".", flag, "--format", "json"]);
        assert_eq!(o.code, 1, "{flag}: {}", o.stderr);
        o.stderr
            .lines()
            .filter(|l| {
                l.starts_with("idemlint stats: ")
                    && !l.contains(" s ")
                    && !l.contains("slow to parse")
            })
            .map(str::to_string)
            .collect()
    };
    let timings = counts("--timings");
    assert!(timings.len() >= 3, "{timings:?}");
    assert_eq!(counts("--verbose"), timings);
    assert_eq!(counts("-v"), timings);
}

/// `--message-format short|human` is cargo's spelling of those formats and wins over
/// `--format` (docs/cli.md).
#[test]
fn message_format_short_and_human_win_over_format() {
    let dir = flags_project("message_format");
    let short = run(&dir, &["check", "Payouts.java", "--format", "short"]);
    let o = run(
        &dir,
        &[
            "check",
            "Payouts.java",
            "--format",
            "json",
            "--message-format",
            "short",
        ],
    );
    assert_eq!((o.code, &o.stdout), (1, &short.stdout));
    assert!(o.stdout.starts_with("Payouts.java:11:"), "{}", o.stdout);
    let human = run(&dir, &["check", "Payouts.java", "--color", "never"]);
    let o = run(
        &dir,
        &[
            "check",
            "Payouts.java",
            "--format",
            "sarif",
            "--message-format",
            "human",
            "--color",
            "never",
        ],
    );
    assert_eq!((o.code, &o.stdout), (1, &human.stdout));
    assert!(
        o.stdout.contains("idemlint::key-in-retry-scope"),
        "{}",
        o.stdout
    );
}

/// An `--only` file that is a symbolic link inside PATH to a file outside it is PATH's
/// (the walk reports such links), not an `--only` error.
#[cfg(unix)]
#[test]
fn only_accepts_a_link_inside_path() {
    let dir = only_project("only_link");
    std::os::unix::fs::symlink("../other/Other.java", dir.join("src/Link.java")).unwrap();
    let o = run(
        &dir,
        &[
            "check",
            "src",
            "--only",
            "src/Link.java",
            "--format",
            "json",
        ],
    );
    assert_ne!(o.code, 2, "{}", o.stderr);
    assert!(
        !o.stderr.contains("not under the checked path"),
        "{}",
        o.stderr
    );
}

/// A local that holds more than the key (a request body built around it) is not moved:
/// the fix hoists the key's expression, and the help says that, not "move `body`".
#[test]
fn help_suggests_the_hoist_the_fix_makes_when_the_local_holds_more() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let f = findings(&json(
        root,
        &["fixtures/rust/key-in-retry-scope/backon_retry_closure.rs"],
    ));
    let f = f
        .iter()
        .find(|f| f["line"] == 26)
        .expect("finding on line 26");
    assert_eq!(
        inserted(f).as_deref(),
        Some("let idempotency_key = Ulid::new().to_string();")
    );
    let help = f["help"].as_str().unwrap();
    assert!(
        help.contains("add `let idempotency_key = Ulid::new().to_string();` there and use `idempotency_key` inside"),
        "{help}"
    );
    assert!(!help.contains("move the declaration of `body`"), "{help}");
}
