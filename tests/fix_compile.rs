//! The compile gate and the fix properties over a generated variant matrix (issue 11):
//! every fixed fixture under `fixtures/fix/` and every variant (lambda passed directly,
//! stored in a local first, in a field, Kotlin expression-bodied function, one-line batch
//! loop, nested lambdas, Rust `move` closure and `async move` block, CRLF and BOM files) is
//! fixed with `idemlint check --fix` (safe fixes only) and compiled: Java with
//! `javac --release 8`, Kotlin with `kotlinc`, Rust with `rustc --edition 2021 --crate-type
//! lib`. A missing compiler fails the test (`.ci/run` installs them). After the fix: no
//! fixable finding is left, no new finding appears, and the key is evaluated inside as many
//! loops over items as before (one distinct key per batch item).

use std::path::{Path, PathBuf};
use std::process::Command as Proc;

use assert_cmd::Command;
use idemlint::catalogue::Catalogue;
use idemlint::check::check_text;
use idemlint::finding::Applicability;

const JAVA_STUBS: &str = "    static final class Retry {\n        static <T> T withRetry(int attempts, Supplier<T> body) {\n            RuntimeException last = null;\n            for (int i = 0; i < attempts; i++) {\n                try {\n                    return body.get();\n                } catch (RuntimeException e) {\n                    last = e;\n                }\n            }\n            throw last;\n        }\n    }\n    static final class Api {\n        String createCharge(String idempotencyKey, long amount) { return idempotencyKey + amount; }\n        String createPayment(UUID idempotencyKey, long amount) { return idempotencyKey.toString() + amount; }\n    }\n    private final Api api = new Api();\n";

fn java(class: &str, body: &str) -> String {
    format!(
        "package {};\nimport java.util.List;\nimport java.util.UUID;\nimport java.util.function.Supplier;\n\nfinal class {class} {{\n{JAVA_STUBS}\n{body}}}\n",
        class.to_lowercase()
    )
}

const KOTLIN_STUBS: &str = "class Api {\n    fun createCharge(idempotencyKey: String, amount: Long): String = \"$idempotencyKey:$amount\"\n}\n\nfun <T> withRetry(attempts: Int, block: () -> T): T {\n    var last: RuntimeException? = null\n    repeat(attempts) {\n        try {\n            return block()\n        } catch (e: RuntimeException) {\n            last = e\n        }\n    }\n    throw last!!\n}\n";

fn kotlin(pkg: &str, body: &str) -> String {
    format!(
        "package {pkg}\n\nimport java.util.UUID\n\n{KOTLIN_STUBS}\nclass Billing(private val api: Api) {{\n{body}}}\n"
    )
}

const RUST_STUBS: &str = "#![allow(dead_code)]\nmod uuid {\n    #[derive(Clone, Copy, Debug)]\n    pub struct Uuid(pub u128);\n    impl Uuid {\n        pub fn new_v4() -> Uuid {\n            Uuid(4)\n        }\n    }\n    impl std::fmt::Display for Uuid {\n        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {\n            write!(f, \"{:032x}\", self.0)\n        }\n    }\n}\nmod backoff {\n    pub fn retry<T, E, F: FnMut() -> Result<T, E>>(attempts: u32, mut op: F) -> Result<T, E> {\n        let mut n = 1;\n        loop {\n            match op() {\n                Ok(v) => return Ok(v),\n                Err(e) if n >= attempts => return Err(e),\n                Err(_) => n += 1,\n            }\n        }\n    }\n}\nuse uuid::Uuid;\npub struct Charge {\n    pub idempotency_key: String,\n    pub amount: u64,\n}\npub fn send(charge: &Charge) -> Result<String, String> {\n    Ok(format!(\"{}:{}\", charge.idempotency_key, charge.amount))\n}\n";

fn rust(body: &str) -> String {
    format!("{RUST_STUBS}\n{body}")
}

/// (file name, text, whether a safe fix is expected).
fn matrix() -> Vec<(String, String, bool)> {
    let mut v: Vec<(String, String, bool)> = vec![
        (
            "java/Direct.java".into(),
            java(
                "Direct",
                "    String run(long amount) {\n        return Retry.withRetry(3, () -> api.createCharge(UUID.randomUUID().toString(), amount));\n    }\n",
            ),
            true,
        ),
        (
            "java/Local.java".into(),
            java(
                "Local",
                "    String run(long amount) {\n        Supplier<String> op = () -> api.createCharge(UUID.randomUUID().toString(), amount);\n        return Retry.withRetry(3, op);\n    }\n",
            ),
            true,
        ),
        (
            "java/Field.java".into(),
            java(
                "Field",
                "    private final Supplier<String> op = () -> api.createCharge(UUID.randomUUID().toString(), 1);\n    String run() {\n        return Retry.withRetry(3, op);\n    }\n",
            ),
            false,
        ),
        (
            "java/Batch.java".into(),
            java(
                "Batch",
                "    void run(List<Long> orders) {\n        for (Long o : orders) { Retry.withRetry(3, () -> api.createCharge(UUID.randomUUID().toString(), o)); }\n    }\n",
            ),
            true,
        ),
        (
            "java/Nested.java".into(),
            java(
                "Nested",
                "    void run(List<Long> orders) {\n        orders.forEach(o -> {\n            Retry.withRetry(3, () -> api.createCharge(UUID.randomUUID().toString(), o));\n        });\n    }\n",
            ),
            true,
        ),
        (
            "java/BareUuid.java".into(),
            java(
                "BareUuid",
                "    String run(long amount) {\n        return Retry.withRetry(3, () -> api.createPayment(UUID.randomUUID(), amount));\n    }\n",
            ),
            true,
        ),
        (
            // Two hoists in one block: each picks a name free in the text it was computed
            // on, so they are applied in two rounds (`idempotencyKey`, `idempotencyKey2`).
            "java/Twice.java".into(),
            java(
                "Twice",
                "    void run(long amount) {\n        Retry.withRetry(3, () -> api.createCharge(UUID.randomUUID().toString(), amount));\n        Retry.withRetry(3, () -> api.createCharge(UUID.randomUUID().toString(), amount + 1));\n    }\n",
            ),
            true,
        ),
        (
            "kotlin/twice.kt".into(),
            kotlin(
                "twice",
                "    fun run(amount: Long) {\n        withRetry(3) { api.createCharge(idempotencyKey = UUID.randomUUID().toString(), amount = amount) }\n        withRetry(3) { api.createCharge(idempotencyKey = UUID.randomUUID().toString(), amount = amount + 1) }\n    }\n",
            ),
            true,
        ),
        (
            "kotlin/direct.kt".into(),
            kotlin(
                "direct",
                "    fun run(amount: Long): String {\n        return withRetry(3) { api.createCharge(idempotencyKey = UUID.randomUUID().toString(), amount = amount) }\n    }\n",
            ),
            true,
        ),
        (
            "kotlin/local.kt".into(),
            kotlin(
                "local",
                "    fun run(amount: Long): String {\n        val op = { api.createCharge(idempotencyKey = UUID.randomUUID().toString(), amount = amount) }\n        return withRetry(3, op)\n    }\n",
            ),
            true,
        ),
        (
            "kotlin/field.kt".into(),
            kotlin(
                "field",
                "    private val op = { api.createCharge(idempotencyKey = UUID.randomUUID().toString(), amount = 1) }\n    fun run(): String = withRetry(3, op)\n",
            ),
            false,
        ),
        (
            "kotlin/exprbody.kt".into(),
            kotlin(
                "exprbody",
                "    fun run(amount: Long): String =\n        withRetry(3) { api.createCharge(idempotencyKey = UUID.randomUUID().toString(), amount = amount) }\n",
            ),
            false,
        ),
        (
            "kotlin/batch.kt".into(),
            kotlin(
                "batch",
                "    fun run(orders: List<Long>) {\n        orders.forEach { order -> withRetry(3) { api.createCharge(idempotencyKey = UUID.randomUUID().toString(), amount = order) } }\n    }\n",
            ),
            true,
        ),
        (
            "kotlin/nested.kt".into(),
            kotlin(
                "nested",
                "    fun run(orders: List<Long>): List<String> {\n        return orders.map { order ->\n            withRetry(3) { api.createCharge(idempotencyKey = UUID.randomUUID().toString(), amount = order) }\n        }\n    }\n",
            ),
            true,
        ),
        (
            "rust/direct.rs".into(),
            rust(
                "pub fn run(amount: u64) -> Result<String, String> {\n    backoff::retry(3, || send(&Charge { idempotency_key: Uuid::new_v4().to_string(), amount }))\n}\n",
            ),
            true,
        ),
        (
            "rust/local.rs".into(),
            rust(
                "pub fn run(amount: u64) -> Result<String, String> {\n    let op = || send(&Charge { idempotency_key: Uuid::new_v4().to_string(), amount });\n    backoff::retry(3, op)\n}\n",
            ),
            true,
        ),
        (
            "rust/batch.rs".into(),
            rust(
                "pub fn run(orders: &[u64]) {\n    for amount in orders { let _ = backoff::retry(3, || send(&Charge { idempotency_key: Uuid::new_v4().to_string(), amount: *amount })); }\n}\n",
            ),
            true,
        ),
        (
            "rust/move_closure.rs".into(),
            rust(
                "pub fn run(amount: u64) -> Result<String, String> {\n    backoff::retry(3, move || send(&Charge { idempotency_key: Uuid::new_v4().to_string(), amount }))\n}\n",
            ),
            false,
        ),
        (
            "rust/async_move.rs".into(),
            rust(
                "pub async fn attempt(f: impl std::future::Future<Output = Result<String, String>>) -> Result<String, String> {\n    f.await\n}\npub async fn run(amount: u64) -> Result<String, String> {\n    let mut last = Err(String::new());\n    for _attempt in 0..3 {\n        last = attempt(async move { send(&Charge { idempotency_key: Uuid::new_v4().to_string(), amount }) }).await;\n        if last.is_ok() {\n            break;\n        }\n    }\n    last\n}\n",
            ),
            false,
        ),
    ];
    // CRLF and BOM copies of a few.
    let extra: Vec<(String, String, bool)> = v
        .iter()
        .filter(|(n, _, _)| n.contains("Direct") || n.contains("batch") || n.contains("direct"))
        .flat_map(|(n, t, s)| {
            let (stem, ext) = n.rsplit_once('.').unwrap();
            let crlf_name = format!("{stem}Crlf.{ext}");
            let bom_name = format!("{stem}Bom.{ext}");
            let rename = |t: &str, suffix: &str| {
                t.replace("final class Direct", &format!("final class Direct{suffix}"))
                    .replace(
                        "package direct\n",
                        &format!("package direct{}\n", suffix.to_lowercase()),
                    )
                    .replace(
                        "package batch\n",
                        &format!("package batch{}\n", suffix.to_lowercase()),
                    )
                    .replace(
                        "package direct;",
                        &format!("package direct{};", suffix.to_lowercase()),
                    )
            };
            vec![
                (crlf_name, rename(t, "Crlf").replace('\n', "\r\n"), *s),
                (bom_name, format!("\u{feff}{}", rename(t, "Bom")), *s),
            ]
        })
        .collect();
    v.extend(extra);
    v
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn need(cmd: &str, arg: &str) {
    let ok = Proc::new(cmd)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "the compile gate needs `{cmd}` (install it; .ci/run does)"
    );
}

fn run_ok(mut c: Proc, what: &str) {
    let o = c.output().unwrap_or_else(|e| panic!("run {what}: {e}"));
    assert!(
        o.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn compile_all(dir: &Path, files: &[PathBuf], tag: &str) {
    let out = dir.join(format!("out-{tag}"));
    std::fs::create_dir_all(&out).unwrap();
    let java: Vec<&PathBuf> = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "java"))
        .collect();
    let kotlin: Vec<&PathBuf> = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "kt"))
        .collect();
    // javac rejects a BOM (the JLS has none): compile a copy without it.
    let java: Vec<PathBuf> = java
        .into_iter()
        .map(|p| {
            let t = std::fs::read_to_string(p).unwrap();
            match t.strip_prefix('\u{feff}') {
                Some(rest) => {
                    let q = out.join(p.file_name().unwrap());
                    std::fs::write(&q, rest).unwrap();
                    q
                }
                None => p.clone(),
            }
        })
        .collect();
    if !java.is_empty() {
        let mut c = Proc::new("javac");
        c.args(["--release", "8", "-nowarn", "-d"])
            .arg(out.join("java"))
            .args(&java);
        run_ok(c, &format!("javac --release 8 ({tag})"));
    }
    if !kotlin.is_empty() {
        let mut c = Proc::new("kotlinc");
        c.arg("-nowarn")
            .arg("-d")
            .arg(out.join("kotlin"))
            .args(&kotlin);
        run_ok(c, &format!("kotlinc ({tag})"));
    }
    for (i, r) in files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .enumerate()
    {
        let mut c = Proc::new(std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()));
        c.args([
            "--edition",
            "2021",
            "--crate-type",
            "lib",
            "--crate-name",
            &format!("v{i}"),
            "--out-dir",
        ])
        .arg(out.join("rust"))
        .arg(r);
        run_ok(c, &format!("rustc {} ({tag})", r.display()));
    }
}

fn key(f: &idemlint::finding::Finding) -> (String, String) {
    (f.rule.to_string(), f.source.split_whitespace().collect())
}

/// How many loops / lambdas (not retries) enclose the first evaluation of `source`.
fn depth(path: &str, text: &str, source: &str) -> usize {
    let lang = idemlint::model::Language::from_path(Path::new(path)).unwrap();
    let (m, facts) = idemlint::check::analyse_text(lang, text, &Catalogue::builtin());
    let at = text
        .find(source)
        .expect("the key expression is still in the file");
    idemlint::fix::verify::item_scopes(&m, &facts, at + 1)
}

#[test]
fn every_variant_and_fix_fixture_compiles_after_fix_with_the_same_keys_per_item() {
    need("javac", "-version");
    need("kotlinc", "-version");
    need("rustc", "--version");
    let cat = Catalogue::builtin();
    let dir = scratch("fix_compile_gate");
    let mut files = Vec::new();
    let mut cases = Vec::new();
    for (name, text, safe) in matrix() {
        let p = dir.join(&name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, &text).unwrap();
        files.push(p);
        cases.push((name, text, safe));
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/fix");
    for lang in ["java", "kotlin", "rust"] {
        for e in std::fs::read_dir(fixtures.join(lang)).unwrap() {
            let p = e.unwrap().path();
            let to = dir.join("fixtures").join(lang).join(p.file_name().unwrap());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&p, &to).unwrap();
            files.push(to);
        }
    }
    compile_all(&dir, &files, "before");
    let before: Vec<(PathBuf, String)> = files
        .iter()
        .map(|p| (p.clone(), std::fs::read_to_string(p).unwrap()))
        .collect();
    Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["check", "--fix", "--quiet", "."])
        .assert()
        .code(1);
    compile_all(&dir, &files, "after");
    for (p, old) in &before {
        let new = std::fs::read_to_string(p).unwrap();
        let name = p
            .strip_prefix(&dir)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let (f_old, _) = check_text(&name, old, &cat).unwrap();
        let (f_new, _) = check_text(&name, &new, &cat).unwrap();
        // No safe fix left.
        let left: Vec<_> = f_new
            .iter()
            .filter(|f| {
                f.fix
                    .as_ref()
                    .is_some_and(|x| x.applicability == Applicability::Safe)
            })
            .collect();
        assert!(
            left.is_empty(),
            "{name}: safe fixes left after --fix: {left:?}\n{new}"
        );
        // No new finding.
        let mut pool: Vec<_> = f_old.iter().map(key).collect();
        for f in &f_new {
            let k = key(f);
            let i = pool.iter().position(|x| *x == k);
            assert!(i.is_some(), "{name}: new finding after --fix: {f:?}\n{new}");
            pool.remove(i.unwrap());
        }
        // The key is evaluated inside as many loops over items as before.
        for f in &f_old {
            if f.rule != "key-in-retry-scope" {
                continue;
            }
            let src = f.source.as_str();
            let was = depth(&name, old, src);
            let now = depth(&name, &new, src);
            assert_eq!(
                was, now,
                "{name}: `{src}` moved across a loop over items:\n{new}"
            );
        }
        if let Some((_, _, safe)) = cases.iter().find(|(n, _, _)| *n == name) {
            assert_eq!(
                *safe,
                new != *old,
                "{name}: safe fix expected: {safe}\n{new}"
            );
            if new != *old {
                assert!(!new.contains("final var"), "{name}: `var` at Java 8\n{new}");
                assert_eq!(
                    new.starts_with('\u{feff}'),
                    old.starts_with('\u{feff}'),
                    "{name}: BOM"
                );
                assert_eq!(
                    new.matches("\r\n").count() == new.matches('\n').count(),
                    old.contains("\r\n"),
                    "{name}: line endings"
                );
            }
        }
    }
    // The batch cases keep the key inside the per-item scope, on the same line.
    let batch = |n: &str| std::fs::read_to_string(dir.join(n)).unwrap();
    assert!(batch("java/Batch.java").contains("for (Long o : orders) { final String idempotencyKey = UUID.randomUUID().toString(); Retry.withRetry"));
    assert!(batch("kotlin/batch.kt").contains(
        "orders.forEach { order -> val idempotencyKey = UUID.randomUUID().toString(); withRetry(3)"
    ));
    assert!(batch("rust/batch.rs").contains("for amount in orders { let idempotency_key = Uuid::new_v4().to_string(); let _ = backoff::retry"));
    // The lambda stored in a local first: the key is declared before the local.
    for twice in ["java/Twice.java", "kotlin/twice.kt"] {
        let t = batch(twice);
        assert!(
            t.contains("idempotencyKey2") && t.matches("randomUUID").count() == 2,
            "{twice}: two hoists, two names\n{t}"
        );
    }
    let local = batch("java/Local.java");
    assert!(
        local.find("final String idempotencyKey").unwrap()
            < local.find("Supplier<String> op").unwrap(),
        "{local}"
    );
    let local = batch("kotlin/local.kt");
    assert!(
        local.find("val idempotencyKey").unwrap() < local.find("val op").unwrap(),
        "{local}"
    );
    let local = batch("rust/local.rs");
    assert!(
        local.find("let idempotency_key").unwrap() < local.find("let op").unwrap(),
        "{local}"
    );
    assert!(batch("java/BareUuid.java").contains("final UUID idempotencyKey = UUID.randomUUID();"));
}
