//! Hostile and broken input: every case ends with a clear message in `errors`, the other
//! files still analysed, and the exit code the README documents (findings decide it; a
//! file that cannot be read or parsed never does). Plus determinism: the same run twice
//! is byte-identical, a file alone and inside its directory get the same findings, and
//! `--jobs 1` / `--jobs 2` / `--shard I/N` agree.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The binary under test: this package's `idemlint`, or the one `IDEMLINT_BIN` names
/// (`.ci/run` points it at its one release build to run the ignored large-input test with
/// a debug test harness).
fn idemlint() -> Command {
    match std::env::var_os("IDEMLINT_BIN") {
        Some(bin) => Command::new(bin),
        None => Command::cargo_bin("idemlint").unwrap(),
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A file with one `key-in-retry-scope` finding on line 6, so every test can check that
/// the good files are still analysed next to the hostile one.
const GOOD: &str = "import java.util.UUID

suspend fun charge(api: Api, body: Body): Charge =
    retryOnTransient {
        api.createCharge(
            idempotencyKey = UUID.randomUUID().toString(),
            body = body,
        )
    }
";

/// Runs `idemlint check --format json ARGS` in `dir`; returns (exit code, JSON).
fn json(dir: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let out = idemlint()
        .current_dir(dir)
        .arg("check")
        .args(args)
        .args(["--format", "json"])
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (code, v)
}

fn errors_for<'a>(v: &'a serde_json::Value, path: &str) -> Vec<&'a serde_json::Value> {
    v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["path"] == path)
        .collect()
}

fn assert_good_still_analysed(v: &serde_json::Value) {
    let f = v["findings"].as_array().unwrap();
    assert!(
        f.iter()
            .any(|f| f["path"] == "Good.kt" && f["line"] == 6 && f["rule"] == "key-in-retry-scope"),
        "Good.kt was not analysed: {v:#}"
    );
}

#[test]
fn invalid_utf8_and_binary_files_are_reported_and_skipped() {
    let dir = scratch("hostile_encoding");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    let mut bad = b"val idempotencyKey = \"".to_vec();
    bad.extend([0xc3, 0x28, b'"', b'\n']);
    std::fs::write(dir.join("Bad.kt"), &bad).unwrap();
    std::fs::write(
        dir.join("Image.java"),
        [0x89, b'P', b'N', b'G', 0, 0, 0, 0x0d],
    )
    .unwrap();
    for flag in [&[][..], &["--no-prefilter"][..]] {
        let mut args = vec!["."];
        args.extend(flag);
        let (code, v) = json(&dir, &args);
        assert_eq!(code, 1, "findings decide the exit code");
        assert_good_still_analysed(&v);
        let e = errors_for(&v, "Bad.kt");
        assert_eq!(e.len(), 1, "{v:#}");
        let m = e[0]["message"].as_str().unwrap();
        assert!(
            m.contains("not valid UTF-8") && m.contains("offset 22"),
            "{m}"
        );
        let e = errors_for(&v, "Image.java");
        assert!(
            e[0]["message"].as_str().unwrap().contains("binary"),
            "{v:#}"
        );
    }
}

#[test]
fn empty_files_are_fine() {
    let dir = scratch("hostile_empty");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    for name in ["a.rs", "B.java", "C.kt", "d.kts"] {
        std::fs::write(dir.join(name), "").unwrap();
    }
    let (code, v) = json(&dir, &[".", "--no-prefilter"]);
    assert_eq!(code, 1);
    assert_good_still_analysed(&v);
    assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{v:#}");
}

/// Per language: a file with a syntax error, then a finding the parser can still reach.
#[test]
fn syntax_errors_are_reported_and_the_rest_is_analysed() {
    let dir = scratch("hostile_syntax");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    std::fs::write(
        dir.join("Broken.java"),
        "class Broken {\n    void f( { int x = ; }\n    Object g(RetryTemplate retryTemplate, Api api) {\n        return retryTemplate.execute(ctx -> api.charge(RequestOptions.builder().setIdempotencyKey(java.util.UUID.randomUUID().toString()).build()));\n    }\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Broken.kt"),
        "fun f( { val x = }\n\nsuspend fun g(api: Api) = retryOnTransient {\n    api.send(idempotencyKey = java.util.UUID.randomUUID().toString())\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("broken.rs"),
        "fn f() {\n    let idempotency_key = ;\n}\n",
    )
    .unwrap();
    let (code, v) = json(&dir, &["."]);
    assert_eq!(code, 1);
    assert_good_still_analysed(&v);
    for (path, line) in [("Broken.java", 2), ("Broken.kt", 1), ("broken.rs", 2)] {
        let e = errors_for(&v, path);
        assert!(!e.is_empty(), "{path}: no error in {v:#}");
        assert_eq!(e[0]["line"], line, "{path}: {v:#}");
        assert!(e[0]["column"].as_u64().is_some());
        assert!(!e[0]["message"].as_str().unwrap().is_empty());
    }
    let findings = v["findings"].as_array().unwrap();
    // Tree-sitter recovers: the findings after the error are still reported.
    assert!(
        findings
            .iter()
            .any(|f| f["path"] == "Broken.java" && f["line"] == 4),
        "{v:#}"
    );
    assert!(
        findings
            .iter()
            .any(|f| f["path"] == "Broken.kt" && f["line"] == 4),
        "{v:#}"
    );
}

#[test]
fn crlf_and_bom_keep_positions() {
    let dir = scratch("hostile_crlf_bom");
    let crlf = GOOD.replace('\n', "\r\n");
    std::fs::write(dir.join("Crlf.kt"), &crlf).unwrap();
    std::fs::write(dir.join("Bom.kt"), format!("\u{feff}{crlf}")).unwrap();
    // The source on line 1, right after the BOM: column 1 is the first visible character.
    std::fs::write(
        dir.join("first.rs"),
        "\u{feff}fn k() { let idempotency_key = std::time::SystemTime::now(); }\r\n",
    )
    .unwrap();
    let (code, v) = json(&dir, &["."]);
    assert_eq!(code, 1);
    let line6 = GOOD.lines().nth(5).unwrap();
    let col = line6.find("UUID").unwrap() + 1;
    for path in ["Crlf.kt", "Bom.kt"] {
        let f = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{path}: {v:#}"));
        assert_eq!(
            (f["line"].as_u64(), f["column"].as_u64()),
            (Some(6), Some(col as u64))
        );
        assert_eq!(
            f["end_column"].as_u64(),
            Some((col + "UUID.randomUUID()".len()) as u64)
        );
        assert_eq!(f["source"], "UUID.randomUUID()");
        assert_eq!(f["boundary"]["line"], 4);
    }
    let f = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "first.rs")
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(f["line"], 1);
    assert_eq!(
        f["column"],
        "fn k() { let idempotency_key = ".chars().count() + 1
    );
    assert_eq!(f["source"], "std::time::SystemTime::now()");
}

/// 10,000 levels of parentheses and of lambdas in each language: no stack overflow, a
/// message about the depth, and the other files analysed. The key word makes the
/// prefilter parse them.
#[test]
fn deep_nesting_is_refused_with_a_message() {
    let dir = scratch("hostile_nesting");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    let n = 10_000;
    let parens = |open: &str, close: &str| format!("{}x{}", open.repeat(n), close.repeat(n));
    std::fs::write(
        dir.join("Parens.java"),
        format!(
            "class P {{ String idempotencyKey = {}; }}\n",
            parens("(", ")")
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("Lambdas.java"),
        format!(
            "class L {{ Object idempotencyKey = {}x; }}\n",
            "() -> ".repeat(n)
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("Parens.kt"),
        format!("val idempotencyKey = {}\n", parens("(", ")")),
    )
    .unwrap();
    std::fs::write(
        dir.join("Lambdas.kt"),
        format!("val idempotencyKey = {}\n", parens("{ ", " }")),
    )
    .unwrap();
    std::fs::write(
        dir.join("Templates.kt"),
        format!("val idempotencyKey = \"{}\"\n", parens("${\"", "\"}")),
    )
    .unwrap();
    std::fs::write(
        dir.join("parens.rs"),
        format!("fn f() {{ let idempotency_key = {}; }}\n", parens("(", ")")),
    )
    .unwrap();
    std::fs::write(
        dir.join("closures.rs"),
        format!("fn f() {{ let idempotency_key = {}x; }}\n", "|| ".repeat(n)),
    )
    .unwrap();
    let (code, v) = json(&dir, &["."]);
    assert_eq!(code, 1);
    assert_good_still_analysed(&v);
    for path in [
        "Parens.java",
        "Lambdas.java",
        "Parens.kt",
        "Lambdas.kt",
        "Templates.kt",
        "parens.rs",
        "closures.rs",
    ] {
        let e = errors_for(&v, path);
        assert!(!e.is_empty(), "{path}: no message in {v:#}");
        let m = e[0]["message"].as_str().unwrap();
        assert!(
            m.contains("nest") || m.contains("deep") || m.contains("recursion"),
            "{path}: {m}"
        );
    }
}

#[test]
fn symlink_loops_and_dangling_links_do_not_hang() {
    let dir = scratch("hostile_symlinks");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::os::unix::fs::symlink("../sub", dir.join("sub/loop")).unwrap();
    std::os::unix::fs::symlink("self.rs", dir.join("self.rs")).unwrap();
    std::os::unix::fs::symlink("missing.kt", dir.join("Dangling.kt")).unwrap();
    let (code, v) = json(&dir, &["."]);
    assert_eq!(code, 1);
    assert_good_still_analysed(&v);
    // Named explicitly, a loop is reported in `errors` with the system's reason, and the
    // other paths are still checked.
    let (code, v) = json(&dir, &["self.rs", "Good.kt"]);
    assert_eq!(code, 1);
    assert_good_still_analysed(&v);
    let e = errors_for(&v, "self.rs");
    assert_eq!(e.len(), 1, "{v:#}");
    let m = e[0]["message"].as_str().unwrap().to_lowercase();
    assert!(m.contains("symbolic links"), "{m}");
}

#[test]
fn unreadable_files_are_reported() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("hostile_unreadable");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    let secret = dir.join("Secret.kt");
    std::fs::write(&secret, "val idempotencyKey = 1\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads anything: run the binary as `nobody` then (the CI runs as root).
    let as_root = std::fs::read(&secret).is_ok();
    let mut cmd = if as_root {
        let Ok(setpriv) = which("setpriv") else {
            eprintln!("skipped: running as root and no setpriv to drop privileges");
            return;
        };
        for d in dir.ancestors() {
            // `nobody` must reach the files: make the scratch path traversable.
            if d.starts_with(env!("CARGO_TARGET_TMPDIR")) {
                let _ = std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755));
            }
        }
        let mut c = std::process::Command::new(setpriv);
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(assert_cmd::cargo::cargo_bin("idemlint"));
        c
    } else {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("idemlint"))
    };
    let out = cmd
        .current_dir(&dir)
        .args(["check", ".", "--format", "json"])
        .output()
        .unwrap();
    if as_root && out.stdout.is_empty() {
        eprintln!(
            "skipped: `nobody` cannot run the test binary here: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_good_still_analysed(&v);
    let e = errors_for(&v, "Secret.kt");
    assert_eq!(e.len(), 1, "{v:#}");
    let m = e[0]["message"].as_str().unwrap();
    assert!(
        m.contains("could not read") && m.contains("ermission denied"),
        "{m}"
    );
}

fn which(name: &str) -> Result<PathBuf, ()> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}

/// Files appear and vanish while idemlint walks, reads and re-reads them: every run ends,
/// the stable file is analysed, and whatever vanished is either absent or reported with a
/// reason (never a panic).
#[test]
fn paths_vanishing_during_the_run_are_reported_not_fatal() {
    let dir = scratch("hostile_vanishing");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    let churn = dir.join("churn");
    std::fs::create_dir_all(&churn).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let worker = {
        let stop = stop.clone();
        let churn = churn.clone();
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let p = churn.join(format!("F{}.kt", i % 50));
                if i.is_multiple_of(2) {
                    let _ = std::fs::write(&p, GOOD.replace("charge", &format!("charge{i}")));
                } else {
                    let _ = std::fs::remove_file(&p);
                }
                i += 1;
            }
        })
    };
    for _ in 0..15 {
        let (code, v) = json(&dir, &["."]);
        assert!(code == 0 || code == 1, "exit {code}");
        assert_good_still_analysed(&v);
        for e in v["errors"].as_array().unwrap() {
            let m = e["message"].as_str().unwrap();
            assert!(
                m.contains("could not")
                    || m.contains("changed while")
                    || m.contains("binary")
                    || m.contains("UTF-8"),
                "unclear message: {e}"
            );
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    worker.join().unwrap();
}

/// Generated Kotlin of at least `bytes` bytes with a finding at the returned line near its end.
fn big_kotlin(bytes: usize) -> (String, usize) {
    let mut text = String::with_capacity(bytes + (1 << 20));
    text.push_str("import java.util.UUID\n");
    let mut i = 0;
    while text.len() < bytes {
        text.push_str(&format!(
            "fun helper{i}(a: Int, b: String): String {{\n    val idempotencyKey = \"order-$a-$b-{i}\"\n    return listOf(a, b).joinToString(\",\") + idempotencyKey\n}}\n"
        ));
        i += 1;
    }
    let line = text.lines().count() + 3;
    text.push_str("suspend fun last(api: Api) = retryOnTransient {\n    api.send(\n        idempotencyKey = UUID.randomUUID().toString(),\n    )\n}\n");
    (text, line)
}

/// A 50 MB generated Kotlin file (made here, never committed) is over the default size
/// limit (10 MiB): it is reported in `errors`, quickly, and the other files are analysed;
/// a 6 MB one, under the limit, is analysed and its finding near the end is found. Slow
/// with a debug binary: `.ci/run` runs it (`--ignored`) against the release binary, whose peak memory is
/// about 600 MiB (the 50 MB file used to take 5 GiB and more).
#[test]
#[ignore = "about a minute with a debug binary; .ci/run runs it with IDEMLINT_BIN set to its release build"]
fn a_50_mb_file_is_refused_and_a_6_mb_file_is_analysed() {
    let dir = scratch("hostile_huge");
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    let (huge, _) = big_kotlin(50 << 20);
    std::fs::write(dir.join("Huge.kt"), &huge).unwrap();
    drop(huge);
    let (big, line) = big_kotlin(6 << 20);
    std::fs::write(dir.join("Big.kt"), &big).unwrap();
    let (code, v) = json(&dir, &["."]);
    assert_eq!(code, 1);
    assert_good_still_analysed(&v);
    let huge_errors = errors_for(&v, "Huge.kt");
    assert_eq!(huge_errors.len(), 1, "{}", v["errors"]);
    assert!(
        huge_errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("file too large"),
        "{}",
        v["errors"]
    );
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "Big.kt" && f["line"] == line),
        "{}",
        v["errors"]
    );
}

fn generated_project(dir: &Path) {
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    for (i, body) in [
        "fun newKey(): String = java.util.UUID.randomUUID().toString()",
        "suspend fun pay(api: Api) = retryOnTransient { api.send(idempotencyKey = newKey()) }",
        "fun keyFor(): String = newKey()",
        "fun submit(idempotencyKey: String, body: String) = body",
        "suspend fun pay2(api: Api) = retryOnTransient { api.send(submit(keyFor(), \"b\")) }",
        "fun stamp(): Long = System.currentTimeMillis()",
        "fun pay3(api: Api) { api.send(idempotencyKey = \"k-${stamp()}\") }",
    ]
    .iter()
    .enumerate()
    {
        let sub = dir.join(format!("pkg{}", i % 3));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(format!("F{i}.kt")), body).unwrap();
    }
}

#[test]
fn the_same_run_twice_is_byte_identical_and_jobs_agree() {
    let dir = scratch("determinism");
    generated_project(&dir);
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    for root in [dir.clone(), fixtures] {
        let run = |args: &[&str]| {
            idemlint()
                .current_dir(&root)
                .arg("check")
                .args(args)
                .args([".", "--format", "json"])
                .output()
                .unwrap()
                .stdout
        };
        let a = run(&[]);
        assert!(a.len() > 100);
        assert_eq!(a, run(&[]), "second run differs");
        assert_eq!(a, run(&["--jobs", "1"]), "--jobs 1 differs");
        assert_eq!(a, run(&["--jobs", "2"]), "--jobs 2 differs");
    }
}

/// Every fixture alone and inside one directory holding all fixtures. Facts cross files
/// by design (a project that enables ShedLock anywhere enables it everywhere), so the one
/// fixture that exists to enable ShedLock is left out of the directory, and messages (which
/// may quote another file, e.g. where the project clones calls) are not compared: rule,
/// position, source, boundary and fingerprint are (an interceptor's two rules count as
/// one: which applies depends on whether the project retries calls anywhere).
#[test]
fn a_file_alone_and_in_its_directory_get_the_same_findings() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let root = scratch("alone_vs_dir");
    let mut rels = Vec::new();
    for lang in ["java", "kotlin", "rust"] {
        for rule in std::fs::read_dir(src.join(lang)).unwrap().flatten() {
            for f in std::fs::read_dir(rule.path()).unwrap().flatten() {
                let rel = f.path().strip_prefix(&src).unwrap().to_path_buf();
                if rel.ends_with("safe_shedlock_enabled.java") {
                    continue;
                }
                std::fs::create_dir_all(root.join(rel.parent().unwrap())).unwrap();
                std::fs::copy(f.path(), root.join(&rel)).unwrap();
                rels.push(rel.display().to_string());
            }
        }
    }
    let (_, all) = json(&root, &["."]);
    let pick = |v: &serde_json::Value, rel: &str| -> Vec<String> {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["path"] == rel)
            .map(|x| {
                // Whether an application interceptor runs per attempt depends on whether
                // the project retries calls anywhere, so the two interceptor rules (and
                // the fingerprint, which includes the rule) may differ; the finding may not.
                let rule = match x["rule"].as_str().unwrap() {
                    "interceptor-mints-key" | "key-in-interceptor" => "interceptor".to_string(),
                    r => format!("{r} {}", x["fingerprint"]),
                };
                let keep = ["line", "column", "end_line", "end_column", "source"];
                let mut s: Vec<String> = keep.iter().map(|k| x[*k].to_string()).collect();
                s.push(rule);
                s.push(x["boundary"].to_string());
                s.join(" ")
            })
            .collect()
    };
    let mut with_findings = 0;
    for rel in &rels {
        let (_, alone) = json(&root, &[rel]);
        let a = pick(&alone, rel);
        assert_eq!(a, pick(&all, rel), "{rel}");
        with_findings += usize::from(!a.is_empty());
    }
    assert!(rels.len() > 40 && with_findings > 20);
}

#[test]
fn shards_partition_the_files_and_together_give_the_whole_output() {
    let dir = scratch("shards");
    generated_project(&dir);
    std::fs::write(dir.join("bad.rs"), [0xff, 0xfe]).unwrap();
    let (_, whole) = json(&dir, &["."]);
    let n = 3;
    let mut findings = Vec::new();
    let mut errors = Vec::new();
    let mut files = 0;
    for i in 1..=n {
        let (_, v) = json(&dir, &[".", "--shard", &format!("{i}/{n}")]);
        findings.extend(v["findings"].as_array().unwrap().iter().cloned());
        errors.extend(v["errors"].as_array().unwrap().iter().cloned());
        let human = idemlint()
            .current_dir(&dir)
            .args(["check", ".", "--shard", &format!("{i}/{n}")])
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
            .stdout;
        let human = String::from_utf8_lossy(&human).to_string();
        // "... in N files checked[, M problems in K files reported above]"
        let count: usize = human
            .split(" checked")
            .next()
            .and_then(|s| s.rsplit(" in ").next())
            .and_then(|s| s.split_whitespace().next())
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{human}"));
        files += count;
    }
    let key = |v: &serde_json::Value| v.to_string();
    findings.sort_by_key(key);
    errors.sort_by_key(key);
    let mut wf = whole["findings"].as_array().unwrap().clone();
    let mut we = whole["errors"].as_array().unwrap().clone();
    wf.sort_by_key(key);
    we.sort_by_key(key);
    assert!(wf.len() >= 4, "{whole:#}");
    assert_eq!(findings, wf, "findings of the shards");
    assert_eq!(errors, we, "errors of the shards");
    assert_eq!(files, 9, "every file in exactly one shard");
    for bad in ["0/3", "4/3", "1/0", "x"] {
        let out = idemlint()
            .current_dir(&dir)
            .args(["check", ".", "--shard", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "--shard {bad}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("I/N"),
            "--shard {bad}"
        );
    }
}

/// Properties whose getters read the previous one twice, and lambdas calling the previous
/// lambda: each getter or lambda body is walked once per query, not once per path to it
/// (2^60 paths here). Before, a real Android project took minutes on such chains.
#[test]
fn chains_of_getters_and_lambdas_are_walked_once() {
    let dir = scratch("getter_chains");
    let mut src = String::from(
        "import java.util.UUID\nclass Svc(private val client: okhttp3.OkHttpClient) {\n    val p0: String get() = UUID.randomUUID().toString()\n    val f0 = { p0 }\n",
    );
    for i in 1..60 {
        src.push_str(&format!(
            "    val p{i}: String get() = p{j} + p{j}\n    val f{i} = {{ f{j}() + f{j}() + p{i} }}\n",
            j = i - 1
        ));
    }
    src.push_str(
        "    fun run() {\n        repeat(3) {\n            try {\n                val req = okhttp3.Request.Builder().url(\"https://x/charges\").header(\"Idempotency-Key\", f59()).build()\n                client.newCall(req).execute(); return\n            } catch (e: Exception) {}\n        }\n    }\n}\n",
    );
    std::fs::write(dir.join("Chains.kt"), &src).unwrap();
    std::fs::write(dir.join("Good.kt"), GOOD).unwrap();
    let (code, v) = json(&dir, &["."]);
    assert_eq!(code, 1, "{v:#}");
    assert_good_still_analysed(&v);
    let line = src.lines().position(|l| l.contains("f59()")).unwrap() + 1;
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "Chains.kt"
                && f["line"] == line
                && f["rule"] == "key-in-retry-scope"),
        "{v:#}"
    );
}
