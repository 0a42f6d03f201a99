//! The prefilter must never change a finding: every fixture (alone and as one project), a
//! generated multi-file project whose flows cross files in every way the index knows
//! (fresh helpers, wrappers of wrappers, key-parameter functions, key-minting chains,
//! name collisions that cancel a helper, interceptors registered elsewhere, retrying
//! interceptors, `call.clone()`), and real code (this repository and crates from the
//! local cargo registry) give the same findings with and without it. The frontends'
//! invariant the prefilter's argument rests on (every recorded name is a token of the
//! text) is checked on the same files. Reporting a subset (`--only`) never changes a
//! file's findings either: on the same projects, `--only S` gives exactly the whole run's
//! findings and errors restricted to S.

use std::path::{Path, PathBuf};

use idemlint::catalogue::Catalogue;
use idemlint::check::{Options, Report, run};
use idemlint::model::Language;
use idemlint::prefilter::SYNTHETIC_CALLEES;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn check(paths: Vec<PathBuf>, no_prefilter: bool) -> Report {
    run(
        &Options {
            paths,
            no_prefilter,
            ..Options::default()
        },
        &Catalogue::builtin(),
    )
    .expect("run")
}

/// Findings as comparable JSON lines (every field, message and fingerprint included).
fn findings(r: &Report) -> Vec<String> {
    r.findings
        .iter()
        .map(|f| serde_json::to_string(f).unwrap())
        .collect()
}

/// Every file parsed and every parsed file analysed in pass 2: what the prefilter and
/// `needs_check` must agree with.
fn check_everything(paths: Vec<PathBuf>) -> Report {
    run(
        &Options {
            paths,
            no_prefilter: true,
            check_every_file: true,
            ..Options::default()
        },
        &Catalogue::builtin(),
    )
    .expect("run")
}

fn assert_same(paths: Vec<PathBuf>, what: &str) -> (Report, Report) {
    let with = check(paths.clone(), false);
    let without = check(paths.clone(), true);
    let everything = check_everything(paths);
    for (other, label) in [
        (&without, "without the prefilter"),
        (&everything, "with every file analysed"),
    ] {
        let (a, b) = (findings(&with), findings(other));
        if a != b {
            let only_with: Vec<_> = a.iter().filter(|x| !b.contains(x)).collect();
            let only_without: Vec<_> = b.iter().filter(|x| !a.contains(x)).collect();
            panic!(
                "{what}: findings differ\nonly with the prefilter:\n{only_with:#?}\nonly {label}:\n{only_without:#?}"
            );
        }
    }

    assert_eq!(with.files, without.files, "{what}: files");
    assert_eq!(with.bytes, without.bytes, "{what}: bytes");
    (with, without)
}

fn fixtures_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            source_files(&p, out);
        } else if Language::from_path(&p).is_some() {
            out.push(p);
        }
    }
}

#[test]
fn fixtures_alone_and_together_give_the_same_findings() {
    let mut files = Vec::new();
    source_files(&fixtures_root(), &mut files);
    assert!(files.len() > 40, "{} fixtures", files.len());
    let mut total = 0;
    for f in &files {
        let (with, _) = assert_same(vec![f.clone()], &f.display().to_string());
        total += with.findings.len();
    }
    assert!(total > 40, "the fixtures have {total} findings");
    let (with, _) = assert_same(vec![fixtures_root()], "fixtures/ as one project");
    assert!(!with.findings.is_empty());
}

/// A tiny deterministic generator (xorshift), so the project is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

/// Names are drawn from small pools so that declarations collide across files.
const HELPERS: &[&str] = &["newKey", "freshId", "stamp", "nextToken", "makeKey"];
const WRAPPERS: &[&str] = &["keyFor", "wrapKey", "outerKey", "requestKey"];
const KEY_FNS: &[&str] = &["submit", "createCharge", "sendPayment", "postRefund"];
const MINTERS: &[&str] = &["chargeOnce", "mintAndSend", "payNow"];
const MINT_WRAPPERS: &[&str] = &["settle", "runBilling", "collect"];
const TYPES: &[&str] = &[
    "KeyInterceptor",
    "AuthInterceptor",
    "RetryingInterceptor",
    "TraceInterceptor",
];

fn kotlin_unit(rng: &mut Rng, n: usize) -> String {
    let h = rng.pick(HELPERS);
    let w = rng.pick(WRAPPERS);
    let k = rng.pick(KEY_FNS);
    let m = rng.pick(MINTERS);
    let mw = rng.pick(MINT_WRAPPERS);
    let t = rng.pick(TYPES);
    let t2 = rng.pick(TYPES);
    match rng.next() % 14 {
        0 => format!("import java.util.UUID\nfun {h}(): String = UUID.randomUUID().toString()\n"),
        1 => format!("fun {h}(): Long = System.currentTimeMillis()\n"),
        // Same name, not fresh: cancels the helper project-wide (every declaration must agree).
        2 => format!("fun {h}(): String = \"constant-{n}\"\n"),
        3 => format!("fun {w}(): String = {h}()\n"),
        4 => format!("fun {k}(idempotencyKey: String, body: String): String = body\n"),
        5 => format!(
            "suspend fun job{n}(api: Api) = retryOnTransient {{ api.send({k}({w}(), \"b\")) }}\n"
        ),
        6 => format!(
            "import java.util.UUID\nfun {m}(api: Api) {{ api.charge(idempotencyKey = UUID.randomUUID().toString()) }}\n"
        ),
        7 => format!("fun {mw}(api: Api) {{ {m}(api) }}\n"),
        8 => format!(
            "fun tick{n}(api: Api) {{ fixedRateTimer(period = 1000L) {{ {mw}(api) }} }}\nsuspend fun again{n}(api: Api) = retryOnTransient {{ {m}(api); val x = {h}(); api.put(idempotencyKey = x) }}\n"
        ),
        9 => format!(
            "import java.util.UUID\nclass {t} : Interceptor {{\n    override fun intercept(chain: Interceptor.Chain): Response {{\n        val r = chain.request().newBuilder().header(\"Idempotency-Key\", UUID.randomUUID().toString()).build()\n        return chain.proceed(r)\n    }}\n}}\n"
        ),
        10 => format!(
            "class {t2} : Interceptor {{\n    override fun intercept(chain: Interceptor.Chain): Response {{\n        val first = chain.proceed(chain.request())\n        if (first.code == 503) return chain.proceed(chain.request())\n        return first\n    }}\n}}\n"
        ),
        11 => format!(
            "val client{n} = OkHttpClient.Builder().addInterceptor({t2}()).addInterceptor({t}()).build()\nfun again{n}(call: Call) = call.clone().execute()\n"
        ),
        // A suppression that suppresses nothing is a finding of its own.
        12 => format!("// idemlint: allow(time-in-key) -- nothing here\nfun quiet{n}() = {n}\n"),
        // Noise: ordinary code the prefilter should skip.
        _ => format!(
            "fun noise{n}(xs: List<Int>): Int = xs.map {{ it * 2 }}.filter {{ it > {n} }}.sum()\nfun get(x: Int) = x\n"
        ),
    }
}

fn java_unit(rng: &mut Rng, n: usize) -> String {
    let h = rng.pick(HELPERS);
    let w = rng.pick(WRAPPERS);
    let k = rng.pick(KEY_FNS);
    let m = rng.pick(MINTERS);
    let mw = rng.pick(MINT_WRAPPERS);
    match rng.next() % 9 {
        0 => format!(
            "import java.util.UUID;\nclass H{n} {{ static String {h}() {{ return UUID.randomUUID().toString(); }} }}\n"
        ),
        1 => format!("class W{n} {{ static String {w}() {{ return {h}(); }} }}\n"),
        2 => format!("class C{n} {{ static String {h}() {{ return \"fixed\"; }} }}\n"),
        3 => format!(
            "class K{n} {{ String {k}(String idempotencyKey, String body) {{ return body; }} }}\n"
        ),
        4 => format!(
            "class J{n} {{ Object run(RetryTemplate retryTemplate, Api api) {{ return retryTemplate.execute(ctx -> api.send({k}({w}(), \"b\"))); }} }}\n"
        ),
        5 => format!(
            "import java.util.UUID;\nclass M{n} {{ void {m}(Api api) {{ api.charge(RequestOptions.builder().setIdempotencyKey(UUID.randomUUID().toString()).build()); }} }}\n"
        ),
        6 => format!("class MW{n} {{ void {mw}(Api api) {{ {m}(api); }} }}\n"),
        7 => format!(
            "class S{n} {{ @Scheduled(fixedRate = 1000) void tick(Api api) {{ {mw}(api); }} }}\n"
        ),
        _ => format!(
            "class N{n} {{ int noise(java.util.List<Integer> xs) {{ return xs.stream().mapToInt(x -> x * 2).sum(); }} }}\n"
        ),
    }
}

fn rust_unit(rng: &mut Rng, n: usize) -> String {
    let h = rng.pick(&["new_key", "fresh_id", "stamp_now"]);
    let w = rng.pick(&["key_for", "wrap_key"]);
    let k = rng.pick(&["submit", "send_payment"]);
    match rng.next() % 7 {
        0 => format!("pub fn {h}() -> String {{ uuid::Uuid::new_v4().to_string() }}\n"),
        1 => format!("pub fn {h}() -> u64 {{ 7 }}\n"),
        2 => format!("pub fn {w}() -> String {{ {h}() }}\n"),
        3 => format!("pub fn {k}(idempotency_key: String, body: String) -> String {{ body }}\n"),
        4 => format!(
            "pub async fn job{n}() {{ let _ = backoff::future::retry(policy(), || async {{ Ok({k}({w}(), String::new())) }}).await; }}\n"
        ),
        5 => format!(
            "pub fn send{n}(req: RequestBuilder) -> RequestBuilder {{ retry_with_backoff(|| req.header(\"Idempotency-Key\", {h}())) }}\n"
        ),
        _ => format!("pub fn noise{n}(xs: &[u32]) -> u32 {{ xs.iter().map(|x| x * 2).sum() }}\n"),
    }
}

fn generate(dir: &Path, seed: u64, files: usize) {
    let mut rng = Rng(seed);
    for n in 0..files {
        let (ext, text) = match n % 3 {
            0 => ("kt", kotlin_unit(&mut rng, n)),
            1 => ("java", java_unit(&mut rng, n)),
            _ => ("rs", rust_unit(&mut rng, n)),
        };
        let sub = dir.join(format!("m{}", n % 7));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(format!("f{n:04}.{ext}")), text).unwrap();
    }
}

#[test]
fn generated_projects_give_the_same_findings() {
    let mut total = 0;
    let mut skipped = 0;
    for seed in 1..=12u64 {
        let dir = scratch(&format!("prefilter_gen_{seed}"));
        generate(
            &dir,
            seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            60 + (seed as usize % 4) * 25,
        );
        let (with, without) = assert_same(vec![dir.clone()], &format!("seed {seed}"));
        total += without.findings.len();
        assert_eq!(
            without.parsed, without.files,
            "--no-prefilter parses every file"
        );
        skipped += with.files - with.parsed;
    }
    eprintln!("generated projects: {total} findings, {skipped} files skipped by the prefilter");
    // The projects exercise cross-file flows, and the prefilter does skip files.
    assert!(
        total > 50,
        "only {total} findings in the generated projects"
    );
    assert!(skipped > 0, "the prefilter skipped no file");
}

/// Real code: this repository and, when present, a few crates of the local cargo registry
/// (never downloaded by the test).
#[test]
fn real_code_gives_the_same_findings() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut paths = vec![root.join("src"), root.join("crates"), root.join("tests")];
    paths.extend(registry_crates(&[
        "syn-2",
        "rayon-1",
        "aho-corasick-1",
        "tree-sitter-0",
    ]));
    let (with, _) = assert_same(paths, "real code");
    assert!(with.files > 50);
}

fn registry_crates(prefixes: &[&str]) -> Vec<PathBuf> {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let Some(src) = home.map(|h| h.join("registry").join("src")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for index in std::fs::read_dir(src).into_iter().flatten().flatten() {
        let mut crates: Vec<PathBuf> = std::fs::read_dir(index.path())
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        crates.sort();
        for p in prefixes {
            if let Some(c) = crates.iter().rev().find(|c| {
                c.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(p))
            }) && !out.iter().any(|o: &PathBuf| o.file_name() == c.file_name())
            {
                out.push(c.clone());
            }
        }
    }
    out
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// True when `name` occurs in `text` with no identifier character glued to it.
fn has_token(text: &str, name: &str) -> bool {
    let name = name.strip_prefix("r#").unwrap_or(name);
    let t = text.as_bytes();
    text.match_indices(name).any(|(i, _)| {
        let end = i + name.len();
        (i == 0 || !is_ident(t[i - 1])) && (end >= t.len() || !is_ident(t[end]))
    })
}

/// The invariant the prefilter's argument rests on: callees, receivers' last segments,
/// function, parameter, binding, type and annotation names are tokens of the text (or a
/// documented synthetic callee).
#[test]
fn recorded_names_are_tokens_of_the_text() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    source_files(&fixtures_root(), &mut files);
    source_files(&root.join("src"), &mut files);
    let dir = scratch("prefilter_tokens");
    generate(&dir, 42, 90);
    source_files(&dir, &mut files);
    let mut problems = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let lang = Language::from_path(f).unwrap();
        let model = idemlint::lang::lower(lang, &text);
        let mut names: Vec<(&str, String)> = Vec::new();
        for c in &model.calls {
            if !SYNTHETIC_CALLEES.contains(&(c.callee.as_str(), lang)) {
                names.push(("callee", c.callee.clone()));
            }
            // Receivers longer than the frontends' 256-byte cap are kept as their tail,
            // whose first segment may be cut; only complete segments are checked.
            if let Some(r) = idemlint::catalogue::receiver_text(c)
                && r.len() < 200
            {
                let last = idemlint::catalogue::last_segment(&r);
                if !last.is_empty() && last.chars().all(|ch| ch.is_alphanumeric() || ch == '_') {
                    names.push(("receiver", last.to_string()));
                }
            }
            for a in &c.args {
                if let Some(t) = &a.type_hint {
                    names.push(("type hint", t.clone()));
                }
                if let Some(n) = &a.name {
                    names.push(("argument name", n.clone()));
                }
            }
        }
        for s in &model.scopes {
            match &s.kind {
                idemlint::model::ScopeKind::Function(fi) => {
                    if !fi.name.is_empty() {
                        names.push(("function", fi.name.clone()));
                    }
                    for p in &fi.params {
                        names.push(("parameter", p.name.clone()));
                    }
                    // Rust doc comments are recorded as `doc` attributes.
                    for a in fi.annotations.iter().filter(|a| a.name != "doc") {
                        names.push(("annotation", a.name.clone()));
                    }
                }
                idemlint::model::ScopeKind::Type(t) | idemlint::model::ScopeKind::Object(t) => {
                    // An unnamed Kotlin `companion object` is recorded as `Companion`, its
                    // name in Kotlin: a type name no demand asks for.
                    let companion = lang == Language::Kotlin && t.name == "Companion";
                    if !t.name.is_empty() && !companion {
                        names.push(("type", t.name.clone()));
                    }
                    for st in &t.supertypes {
                        names.push(("supertype", st.clone()));
                    }
                }
                _ => {}
            }
        }
        for b in &model.bindings {
            names.push(("binding", b.name.clone()));
        }
        for a in &model.assigns {
            names.push(("assignment", a.name.clone()));
        }
        for (what, n) in names {
            if n.is_empty() || !has_token(&text, &n) {
                problems.push(format!(
                    "{}: {what} `{n}` is not a token of the text",
                    f.display()
                ));
            }
        }
    }
    problems.sort();
    problems.dedup();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A suppression that suppresses nothing is reported even in a project without any key
/// word (where the prefilter parses nothing else).
#[test]
fn unused_suppressions_are_found_without_any_key_word() {
    let dir = scratch("prefilter_unused_suppression");
    std::fs::write(
        dir.join("Quiet.kt"),
        "// idemlint: allow(time-in-key) -- nothing to suppress\nfun quiet() = 1\n",
    )
    .unwrap();
    std::fs::write(dir.join("noise.rs"), "fn f() -> u32 { 2 }\n").unwrap();
    let (with, _) = assert_same(vec![dir], "unused suppression");
    assert!(
        with.findings.iter().any(|f| f.rule == "unused-suppression"),
        "{:?}",
        with.findings
    );
    assert_eq!(
        with.parsed, 1,
        "only the file that mentions idemlint is parsed"
    );
}

/// The demand starts from the calls a key can come from: a helper declared elsewhere that
/// the key flow calls is parsed (and found), while a file whose only link to the keyed one
/// is a fresh function the key never passes through is not parsed at all.
#[test]
fn demand_follows_the_calls_a_key_comes_from() {
    let dir = scratch("prefilter_demand_from_key_flows");
    std::fs::write(
        dir.join("Pay.kt"),
        "import okhttp3.Request\n\
         suspend fun <T> withRetry(block: suspend () -> T): T {\n\
         \x20   repeat(2) { try { return block() } catch (e: Exception) {} }\n\
         \x20   return block()\n\
         }\n\
         suspend fun pay(b: Request.Builder) = withRetry {\n\
         \x20   println(render())\n\
         \x20   b.header(\"Idempotency-Key\", newKey()).build()\n\
         }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Keys.kt"),
        "import java.util.UUID\nfun newKey(): String = UUID.randomUUID().toString()\n",
    )
    .unwrap();
    // Fresh, and called from the keyed file, but not on the way to a key.
    std::fs::write(
        dir.join("Clock.kt"),
        "fun render(): Long = System.currentTimeMillis()\n",
    )
    .unwrap();
    // A fresh function of a name nothing on the way to a key calls.
    std::fs::write(
        dir.join("Other.kt"),
        "fun stamp(): Long = System.nanoTime()\nfun use() = stamp()\n",
    )
    .unwrap();
    let (with, without) = assert_same(vec![dir.clone()], "demand from key flows");
    assert!(
        with.findings
            .iter()
            .any(|f| f.rule == "key-in-retry-scope" && f.path.ends_with("Pay.kt")),
        "{:?}",
        with.findings
    );
    assert_eq!(without.parsed, 4);
    assert_eq!(
        with.parsed, 2,
        "Pay.kt (sink word) and Keys.kt (declares newKey, which the key flow calls)"
    );

    // A second declaration of `newKey` that is not fresh keeps the name from being fresh:
    // it must be parsed too, and then neither mode reports the helper call.
    std::fs::write(dir.join("Fixed.kt"), "fun newKey(): String = \"fixed\"\n").unwrap();
    let (with, _) = assert_same(vec![dir], "demand from key flows, veto");
    assert_eq!(with.parsed, 3);
}

/// Later rounds read again only the files whose token signature may hold a demanded
/// name: files that never mention `newKey` are not read after stage 0, and the findings
/// are those of the full run.
#[test]
fn token_signatures_spare_reading_files_without_the_names() {
    let dir = scratch("prefilter_token_signatures");
    std::fs::write(
        dir.join("Pay.kt"),
        "suspend fun <T> withRetry(block: suspend () -> T): T {\n\
         \x20   repeat(2) { try { return block() } catch (e: Exception) {} }\n\
         \x20   return block()\n\
         }\n\
         suspend fun pay(b: okhttp3.Request.Builder) = withRetry {\n\
         \x20   b.header(\"Idempotency-Key\", newKey()).build()\n\
         }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Keys.kt"),
        "fun newKey(): String = java.util.UUID.randomUUID().toString()\n",
    )
    .unwrap();
    // Files with source words (read in stage 0, not parsed) that never say `newKey`; one
    // says `newKeys` and one `renewKey`, which are other tokens.
    for i in 0..30 {
        let name = match i {
            0 => "newKeys".to_string(),
            1 => "renewKey".to_string(),
            _ => format!("stamp{i}"),
        };
        std::fs::write(
            dir.join(format!("Other{i}.kt")),
            format!("fun {name}(): Long = System.nanoTime()\n"),
        )
        .unwrap();
    }
    let (with, _) = assert_same(vec![dir], "token signatures");
    assert!(
        with.findings.iter().any(|f| f.path.ends_with("Pay.kt")),
        "{:?}",
        with.findings
    );
    assert_eq!(
        with.parsed, 2,
        "Pay.kt (sink word) and Keys.kt (declares newKey)"
    );
    assert!(
        with.stats.ruled_out >= 30 && with.stats.reread <= 2,
        "read again {}, spared {}",
        with.stats.reread,
        with.stats.ruled_out
    );
}

/// Pass 2 analyses a file with a catalogue source only where a flow of pass 1 takes the
/// source to a sink, a named write or a positional argument of a key-parameter function:
/// a random value that is only logged beside a key-parameter call leaves its file out,
/// while the same value passed as the key is analysed and found.
#[test]
fn a_source_that_reaches_no_key_leaves_its_file_unchecked() {
    let dir = scratch("prefilter_source_reaching_no_key");
    std::fs::write(
        dir.join("Retry.kt"),
        "suspend fun <T> withRetry(block: suspend () -> T): T {\n\
         \x20   repeat(2) { try { return block() } catch (e: Exception) {} }\n\
         \x20   return block()\n\
         }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Api.kt"),
        "import okhttp3.Request\n\
         fun submit(b: Request.Builder, idempotencyKey: String) =\n\
         \x20   b.header(\"Idempotency-Key\", idempotencyKey).build()\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Logged.kt"),
        "import java.util.UUID\n\
         import okhttp3.Request\n\
         suspend fun order(b: Request.Builder) = withRetry {\n\
         \x20   println(UUID.randomUUID())\n\
         \x20   submit(b, \"order-42\")\n\
         }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Minted.kt"),
        "import java.util.UUID\n\
         import okhttp3.Request\n\
         suspend fun refund(b: Request.Builder) = withRetry {\n\
         \x20   submit(b, UUID.randomUUID().toString())\n\
         }\n",
    )
    .unwrap();
    let (with, without) = assert_same(vec![dir.clone()], "source reaching no key");
    let found: Vec<(String, &str)> = with
        .findings
        .iter()
        .map(|f| (f.path.clone(), f.rule))
        .collect();
    assert!(
        found
            .iter()
            .any(|(p, r)| p.ends_with("Minted.kt") && *r == "key-in-retry-scope"),
        "{found:?}"
    );
    assert!(
        !found.iter().any(|(p, _)| p.ends_with("Logged.kt")),
        "{found:?}"
    );
    assert_eq!(without.parsed, 4);
    assert_eq!(
        (with.checked, without.checked),
        (1, 1),
        "only Minted.kt is analysed again: Logged.kt's random value reaches no key"
    );
    let everything = check_everything(vec![dir]);
    assert_eq!(everything.checked, 4);
}

/// A call of a common name through a receiver of a declared type asks only for the files
/// that declare that type (or implement it): another type's `build` is not parsed, while an
/// implementation of the receiver's type is, and vetoes the fresh answer in both modes.
/// (`Receipt.build`, parsed with the keyed file and not fresh, settles that `build` is not
/// fresh by name, which is how the index decides whether `pay` mints through it.)
#[test]
fn demand_resolves_calls_by_the_receivers_type() {
    let dir = scratch("prefilter_demand_by_receiver_type");
    std::fs::write(
        dir.join("Pay.kt"),
        "import okhttp3.Request\n\
         suspend fun <T> withRetry(block: suspend () -> T): T {\n\
         \x20   repeat(2) { try { return block() } catch (e: Exception) {} }\n\
         \x20   return block()\n\
         }\n\
         suspend fun pay(b: Request.Builder, keys: KeyMaker) = withRetry {\n\
         \x20   b.header(\"Idempotency-Key\", keys.build()).build()\n\
         }\n\
         class Receipt {\n    fun build(): String = \"receipt\"\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("KeyMaker.kt"),
        "import java.util.UUID\nopen class KeyMaker {\n\
         \x20   open fun build(): String = UUID.randomUUID().toString()\n}\n",
    )
    .unwrap();
    // `build` of an unrelated type, not fresh: it would veto the answer if it were a
    // candidate, but a call on a `KeyMaker` never reaches it.
    std::fs::write(
        dir.join("Report.kt"),
        "class Report {\n    fun build(): String = \"report\"\n}\n",
    )
    .unwrap();
    let (with, without) = assert_same(vec![dir.clone()], "demand by receiver type");
    assert!(
        with.findings
            .iter()
            .any(|f| f.rule == "key-in-retry-scope" && f.path.ends_with("Pay.kt")),
        "{:?}",
        with.findings
    );
    assert_eq!(without.parsed, 3);
    assert_eq!(
        with.parsed, 2,
        "Pay.kt (sink word) and KeyMaker.kt (declares the receiver's type and `build`)"
    );

    // A subclass of the receiver's type is a candidate too: parsed, and its `build` (not
    // fresh) makes the call ambiguous in both modes: reported one severity lower, naming
    // the ambiguity. `Report.build` is still no candidate (1 of 2, not 1 of 3).
    std::fs::write(
        dir.join("FixedKeys.kt"),
        "class FixedKeys : KeyMaker() {\n    override fun build(): String = \"fixed\"\n}\n",
    )
    .unwrap();
    let (with, _) = assert_same(vec![dir], "demand by receiver type, subclass");
    assert_eq!(with.parsed, 3);
    let f = with
        .findings
        .iter()
        .find(|f| f.rule == "key-in-retry-scope" && f.path.ends_with("Pay.kt"))
        .unwrap_or_else(|| panic!("{:?}", with.findings));
    assert!(f.ambiguous, "{f:?}");
    assert!(
        f.message
            .contains("1 of the 2 declarations it may call does"),
        "{}",
        f.message
    );
}

/// In Rust files, a name wanted for its declarations (a callee a key can come from) makes
/// a file be parsed only where `fn NAME` declares it: a file that merely calls the helper
/// is not parsed, one that declares it behind a comment is.
#[test]
fn rust_demand_reads_declarations() {
    let dir = scratch("prefilter_demand_rust_declarations");
    std::fs::write(
        dir.join("send.rs"),
        "pub fn send(req: RequestBuilder) -> RequestBuilder {\n\
         \x20   retry_with_backoff(|| req.header(\"Idempotency-Key\", new_key()))\n\
         }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("keys.rs"),
        "pub fn new_key() -> String {\n    uuid::Uuid::new_v4().to_string()\n}\n",
    )
    .unwrap();
    // Calls the helper, declares nothing the key flow needs.
    std::fs::write(
        dir.join("log.rs"),
        "pub fn log() {\n    println!(\"{}\", new_key());\n}\n",
    )
    .unwrap();
    let (with, without) = assert_same(vec![dir.clone()], "rust declarations");
    assert!(
        with.findings.iter().any(|f| f.path.ends_with("send.rs")),
        "{:?}",
        with.findings
    );
    assert_eq!(without.parsed, 3);
    assert_eq!(
        with.parsed, 2,
        "send.rs (sink word) and keys.rs (declares new_key)"
    );

    // A declaration with a comment between `fn` and the name is still found, and its
    // constant value vetoes the fresh answer in both modes.
    std::fs::write(
        dir.join("fixed.rs"),
        "pub fn /* fixed */ new_key() -> String {\n    String::from(\"k\")\n}\n",
    )
    .unwrap();
    let (with, _) = assert_same(vec![dir], "rust declarations, veto");
    assert_eq!(with.parsed, 3);
}

/// `path` made absolute and canonical, for comparing report paths with `--only` sets.
fn canonical(p: &Path) -> PathBuf {
    idemlint::config::absolute_path(p)
}

fn in_subset(subset: &[PathBuf], path: &str) -> bool {
    let p = canonical(Path::new(path));
    subset.iter().any(|s| {
        let s = canonical(s);
        p == s || (s.is_dir() && p.starts_with(&s))
    })
}

/// Runs `root` whole and with `--only` each of `subsets`; each subset's findings and errors
/// must be the whole run's restricted to it. Returns the findings the subsets reported and
/// how many subsets checked alone (without the rest of the project) report otherwise, which
/// shows that the subsets' findings depend on facts of other files.
fn assert_only_agrees(root: &Path, subsets: &[Vec<PathBuf>], what: &str) -> (usize, usize) {
    let full = check(vec![root.to_path_buf()], false);
    let mut reported = 0;
    let mut alone_differs = 0;
    for s in subsets {
        let part = run(
            &Options {
                paths: vec![root.to_path_buf()],
                only: Some(idemlint::check::Only {
                    paths: s.clone(),
                    named: true,
                }),
                ..Options::default()
            },
            &Catalogue::builtin(),
        )
        .expect("run --only");
        let expected: Vec<String> = full
            .findings
            .iter()
            .filter(|f| in_subset(s, &f.path))
            .map(|f| serde_json::to_string(f).unwrap())
            .collect();
        let got = findings(&part);
        assert_eq!(
            got, expected,
            "{what}: --only {s:?} differs from the whole run restricted to it"
        );
        let errors = |r: &Report, filter: bool| -> Vec<String> {
            r.errors
                .iter()
                .filter(|e| !filter || in_subset(s, &e.path))
                .map(|e| format!("{}:{:?}: {}", e.path, e.line, e.message))
                .collect()
        };
        assert_eq!(
            errors(&part, false),
            errors(&full, true),
            "{what}: errors of --only {s:?}"
        );
        let files = s
            .iter()
            .map(|p| {
                if p.is_dir() {
                    let mut v = Vec::new();
                    source_files(p, &mut v);
                    v.len()
                } else {
                    1
                }
            })
            .sum::<usize>();
        assert_eq!(part.files, files, "{what}: files checked with --only {s:?}");
        reported += got.len();
        let alone: Vec<(String, usize, &str)> = check(s.clone(), false)
            .findings
            .iter()
            .map(|f| {
                (
                    canonical(Path::new(&f.path)).display().to_string(),
                    f.line,
                    f.rule,
                )
            })
            .collect();
        let with_project: Vec<(String, usize, &str)> = part
            .findings
            .iter()
            .map(|f| {
                (
                    canonical(Path::new(&f.path)).display().to_string(),
                    f.line,
                    f.rule,
                )
            })
            .collect();
        if alone != with_project {
            alone_differs += 1;
        }
    }
    (reported, alone_differs)
}

#[test]
fn only_reports_the_whole_runs_findings_of_its_files() {
    // Every fixture file alone, in the project of its rule directory.
    let mut reported = 0;
    let mut singletons = 0;
    for lang in ["java", "kotlin", "rust"] {
        let lang_dir = fixtures_root().join(lang);
        let mut rule_dirs: Vec<PathBuf> = std::fs::read_dir(&lang_dir)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        rule_dirs.sort();
        for dir in rule_dirs {
            let mut files = Vec::new();
            source_files(&dir, &mut files);
            singletons += files.len();
            let subsets: Vec<Vec<PathBuf>> = files.into_iter().map(|f| vec![f]).collect();
            reported += assert_only_agrees(&dir, &subsets, &dir.display().to_string()).0;
        }
    }
    // fixtures/ as one project: each language, a rule directory, single files, a mixed set.
    let root = fixtures_root();
    let subsets = vec![
        vec![root.join("java")],
        vec![root.join("kotlin")],
        vec![root.join("rust")],
        vec![root.join("kotlin/key-in-retry-scope")],
        vec![root.join("fix")],
    ];
    reported += assert_only_agrees(&root, &subsets, "fixtures/").0;
    assert!(singletons > 40, "{singletons} fixture files");
    assert!(
        reported > 100,
        "only {reported} findings reported by the subsets"
    );

    // Generated cross-file projects: single files, a directory, every third file.
    let mut cross = 0;
    let mut depends = 0;
    for seed in 1..=6u64 {
        let dir = scratch(&format!("only_gen_{seed}"));
        generate(
            &dir,
            seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            60 + (seed as usize % 4) * 25,
        );
        let mut files = Vec::new();
        source_files(&dir, &mut files);
        let mut subsets: Vec<Vec<PathBuf>> =
            files.iter().step_by(9).map(|f| vec![f.clone()]).collect();
        subsets.push(vec![dir.join("m3")]);
        subsets.push(files.iter().step_by(3).cloned().collect());
        let (n, d) = assert_only_agrees(&dir, &subsets, &format!("generated seed {seed}"));
        cross += n;
        depends += d;
    }
    assert!(cross > 30, "only {cross} findings in the generated subsets");
    // The equivalence is not trivial: checked alone, some subsets report otherwise.
    assert!(
        depends > 3,
        "only {depends} generated subsets depend on other files"
    );

    // Real code: this repository's sources, and crates of the local cargo registry when
    // present (never downloaded by the test).
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    assert_only_agrees(
        &src,
        &[vec![src.join("check.rs")], vec![src.join("lang")]],
        "src/",
    );
    for krate in registry_crates(&["aho-corasick-1", "rayon-1"]) {
        let mut files = Vec::new();
        source_files(&krate, &mut files);
        let subsets: Vec<Vec<PathBuf>> = files
            .iter()
            .step_by(files.len().max(4) / 4)
            .map(|f| vec![f.clone()])
            .collect();
        assert_only_agrees(&krate, &subsets, &krate.display().to_string());
    }
}

/// A name is settled "not fresh" only by a declaration the index's unanimity counts for the
/// call: a Kotlin declaration with a default argument does not fit a Java call with fewer
/// arguments, and a test source's declaration does not count for a production caller. Both
/// once kept the fresh declaration's file unparsed (a finding lost with the prefilter).
#[test]
fn settled_names_fit_the_call_as_the_index_does() {
    const PAY: &str = "package shop;
import dev.failsafe.Failsafe;
import dev.failsafe.RetryPolicy;
class Pay {
    PayoutApi api;
    RetryPolicy<String> policy;
    String make() { return helper(); }
    String send(String id) {
        return Failsafe.with(policy).get(() -> api.payout(make(), id));
    }
}
interface PayoutApi { String payout(String idempotencyKey, String id); }
";
    const FRESH: &str = "package shop;
import java.util.UUID;
class Fresh {
    static String helper() { return UUID.randomUUID().toString(); }
}
";
    let cases: [(&str, &[(&str, &str)]); 2] = [
        (
            "settled-kotlin-default",
            &[
                ("Pay.java", PAY),
                ("Fresh.java", FRESH),
                (
                    "Defaults.kt",
                    "package shop\n\nobject Defaults {\n    const val IDEMPOTENCY_HEADER = \"Idempotency-Key\"\n    fun helper(x: String = \"a\"): String = \"fixed-$x\"\n}\n",
                ),
            ],
        ),
        (
            "settled-test-source",
            &[
                ("src/main/java/shop/Pay.java", PAY),
                ("src/main/java/shop/Fresh.java", FRESH),
                (
                    "src/test/java/shop/TestKeys.java",
                    "package shop;\nclass TestKeys {\n    static final String IDEMPOTENCY_HEADER = \"Idempotency-Key\";\n    static String helper() { return \"fixed-test-key\"; }\n}\n",
                ),
            ],
        ),
    ];
    for (name, files) in cases {
        same_retry_finding(name, files, "Pay.java");
    }
}

/// Whether a lambda given to a project function is retried depends only on the parameter
/// it binds: what the function does with its other parameters is not demanded. Here
/// `runWith` passes its label to `Tag.of`, a name every model file declares; none of them
/// is parsed, while the retrying `retryIt` the block is handed to is. (Before, every
/// declaration of every callee a candidate passed any parameter to was followed: in
/// openai-java, 326 model files for `JsonField.of(value)`.)
#[test]
fn combinator_demand_follows_the_lambdas_parameter_only() {
    let dir = scratch("prefilter_combinator_parameter");
    let files: &[(&str, &str)] = &[
        (
            "Pay.kt",
            "import okhttp3.Request\nimport java.util.UUID\n\
             fun pay(b: Request.Builder) = runWith(\"pay\") {\n\
             \x20   b.header(\"Idempotency-Key\", UUID.randomUUID().toString()).build()\n\
             }\n",
        ),
        (
            "Helpers.kt",
            "fun <T> runWith(label: String, block: () -> T): T {\n\
             \x20   Tag.of(label)\n\
             \x20   return retryIt(block)\n\
             }\n",
        ),
        (
            "Retry.kt",
            "fun <T> retryIt(block: () -> T): T {\n\
             \x20   repeat(2) { try { return block() } catch (e: Exception) {} }\n\
             \x20   return block()\n\
             }\n",
        ),
    ];
    for (path, text) in files {
        std::fs::write(dir.join(path), text).unwrap();
    }
    for i in 0..4 {
        std::fs::write(
            dir.join(format!("Model{i}.kt")),
            format!(
                "class Model{i}(val v: String) {{\n    companion object {{\n        fun of(v: String) = Model{i}(v)\n    }}\n}}\n"
            ),
        )
        .unwrap();
    }
    std::fs::write(
        dir.join("Tag.kt"),
        "object Tag {\n    fun of(label: String): String = label\n}\n",
    )
    .unwrap();
    let (with, without) = assert_same(vec![dir], "combinator parameter");
    assert!(
        with.findings
            .iter()
            .any(|f| f.rule == "key-in-retry-scope" && f.path.ends_with("Pay.kt")),
        "{:#?}",
        findings(&with)
    );
    assert_eq!(without.parsed, 8);
    assert_eq!(
        with.parsed, 3,
        "Pay.kt, Helpers.kt (runWith) and Retry.kt (retryIt)"
    );
}

/// A Kotlin named lambda argument binds the parameter of its name, in pass 2 and in the
/// prefilter's demand alike: `withFallback(onGiveUp = { .. }, block = { .. })` retries the
/// second lambda, not the first, and through a wrapper (`charging(work = { .. }, label =
/// ..)`) the lambda binds `work`, which the wrapper hands to `block`.
#[test]
fn named_lambda_arguments_bind_by_name_in_both_modes() {
    let dir = scratch("prefilter_named_lambda");
    let files: &[(&str, &str)] = &[
        (
            "Pay.kt",
            "import okhttp3.Request\nimport java.util.UUID\n\
             fun pay(b: Request.Builder) = withFallback(\n\
             \x20   onGiveUp = { b.header(\"Idempotency-Key\", UUID.randomUUID().toString()).build() },\n\
             \x20   block = { b.header(\"Idempotency-Key\", UUID.randomUUID().toString()).build() }\n\
             )\n\
             fun renew(b: Request.Builder) = charging(work = {\n\
             \x20   b.header(\"Idempotency-Key\", UUID.randomUUID().toString()).build()\n\
             }, label = \"renew\")\n",
        ),
        (
            "Helpers.kt",
            "fun <T> charging(label: String, work: () -> T): T =\n\
             \x20   withFallback(onGiveUp = { throw IllegalStateException(label) }, block = work)\n",
        ),
        (
            "Retry.kt",
            "fun <T> withFallback(block: () -> T, onGiveUp: () -> T): T {\n\
             \x20   repeat(2) { try { return block() } catch (e: Exception) {} }\n\
             \x20   return onGiveUp()\n\
             }\n",
        ),
    ];
    for (path, text) in files {
        std::fs::write(dir.join(path), text).unwrap();
    }
    let (with, _) = assert_same(vec![dir], "named lambda arguments");
    let mut lines: Vec<usize> = with
        .findings
        .iter()
        .filter(|f| f.rule == "key-in-retry-scope" && f.path.ends_with("Pay.kt"))
        .map(|f| f.line)
        .collect();
    lines.sort();
    assert_eq!(lines, vec![5, 8], "{:#?}", findings(&with));
}

/// A call whose candidate declaration is parsed and waits only on names nobody scanned
/// for yet is held back one round: `Key::deser_default()` returns `Self { v: Some(None) }`,
/// and once `Some` is known to have no declaration the local declaration settles the name,
/// so the other files declaring `deser_default` (every generated model of async-stripe,
/// 1,431 files) are not parsed. Both modes report the same one finding.
#[test]
fn a_call_waiting_only_on_unscanned_names_is_held_back() {
    let dir = scratch("prefilter_held_back");
    std::fs::write(dir.join("keyed.rs"), "use uuid::Uuid;\n\npub struct Key {\n    v: Option<Option<String>>,\n}\n\nimpl Key {\n    fn deser_default() -> Self {\n        Self { v: Some(None) }\n    }\n\n    fn take_out(self) -> String {\n        let Some(Some(v)) = self.v else { return String::new() };\n        v\n    }\n}\n\nfn make_key() -> String {\n    let b = Key::deser_default();\n    b.take_out()\n}\n\npub async fn charge(client: &reqwest::Client) {\n    for _ in 0..3 {\n        let key = Uuid::new_v4().to_string();\n        if client.post(\"https://api.example.com/charges\").header(\"Idempotency-Key\", key).send().await.is_ok() {\n            break;\n        }\n    }\n    let _ = client.post(\"https://api.example.com/refunds\").header(\"Idempotency-Key\", make_key()).send().await;\n}\n").unwrap();
    for i in 0..4 {
        std::fs::write(
            dir.join(format!("model{i}.rs")),
            "pub struct Model0 {\n    a: Option<u8>,\n}\n\nimpl Model0 {\n    fn deser_default() -> Self {\n        Self { a: Some(1) }\n    }\n}\n".replace("Model0", &format!("Model{i}")),
        )
        .unwrap();
    }
    let (with, without) = assert_same(vec![dir], "held back");
    assert_eq!(with.findings.len(), 1, "{:#?}", findings(&with));
    assert_eq!(without.parsed, 5);
    assert_eq!(with.parsed, 1, "keyed.rs alone");
}

/// A name followed only for the fixpoint's unanimity (a helper returns its result) is
/// sampled: its first declarations are parsed, and once one of them can never be fresh
/// the name is settled, so the rest are not (async-stripe: 8 of 881 `from_value`
/// declarations). When every declaration of a name returns a fresh value, the samples
/// grow until all are parsed. Both modes report the same findings.
#[test]
fn names_followed_for_unanimity_are_sampled() {
    let keyed = "use uuid::Uuid;\n\nfn make_key() -> String {\n    render_key()\n}\n\npub async fn charge(client: &reqwest::Client) {\n    for _ in 0..3 {\n        let key = Uuid::new_v4().to_string();\n        if client.post(\"https://api.example.com/charges\").header(\"Idempotency-Key\", key).send().await.is_ok() {\n            break;\n        }\n    }\n    let _ = client.post(\"https://api.example.com/refunds\").header(\"Idempotency-Key\", make_key()).send().await;\n}\n";
    for (label, body, parsed) in [
        // Settled by the first sample: 1 + 8 of 13 files. Each declaration reads a clock
        // (not returned), so the fresh closure would parse them all: it does not start.
        (
            "settled",
            "let _started = std::time::Instant::now();\n    String::new()",
            9,
        ),
        // Without a source word anywhere but keyed.rs, the fresh closure shows at once
        // that no `render_key` can be fresh: none is parsed.
        ("never fresh", "String::new()", 1),
        // Every declaration is fresh: the samples grow until all of them are parsed.
        ("fresh", "uuid::Uuid::new_v4().to_string()", 13),
    ] {
        let dir = scratch(&format!("prefilter_sampled_{}", label.replace(' ', "_")));
        std::fs::write(dir.join("keyed.rs"), keyed).unwrap();
        for i in 0..12 {
            std::fs::write(
                dir.join(format!("render{i:02}.rs")),
                format!("pub fn render_key() -> String {{\n    {body}\n}}\n"),
            )
            .unwrap();
        }
        let (with, without) = assert_same(vec![dir], label);
        assert_eq!(without.parsed, 13, "{label}");
        assert_eq!(with.parsed, parsed, "{label}");
        // The key minted in the retry loop; the refund's is sent once.
        let lines: Vec<usize> = with.findings.iter().map(|f| f.line).collect();
        assert_eq!(lines, vec![9], "{label}: {:#?}", findings(&with));
    }
}

/// A call through a receiver is settled by a candidate only where pass 2 would take that
/// candidate too (found by a break-it run): a call receiver (`fastRunner()`) names a type
/// by the getter's name exactly, not `Runner` by substring; a test-source type does not
/// make a main-source call's resolution stable; a Kotlin method with more parameters does
/// not fit a Java call. Each once left the retrying `guarded`'s file unparsed.
#[test]
fn receiver_resolution_settles_as_pass_two_resolves() {
    same_retry_finding(
        "receiver-call-exact-getter",
        &[
            ("FastRunner.kt", "class FastRunner {
    fun <T> guarded(label: String, block: () -> T): T { println(label); return twice(block) }
}
"),
            ("Retry.kt", "fun <T> twice(block: () -> T): T { repeat(2) { try { return block() } catch (e: Exception) {} }; return block() }
"),
            ("Runner.kt", "class Runner {
    fun <T> guarded(label: String, block: () -> T): T { println(label); return block() }
}
"),
            ("Svc.kt", "class Svc(val b: okhttp3.Request.Builder) {
    fun fastRunner(): FastRunner = FastRunner()
    fun pay() = fastRunner().guarded(\"pay\") { b.header(\"Idempotency-Key\", java.util.UUID.randomUUID().toString()).build() }
}
"),
        ],
        "Svc.kt",
    );
    same_retry_finding(
        "receiver-test-source-type",
        &[
            ("src/main/kotlin/Gate.kt", "class Gate {
    fun <T> guarded(label: String, block: () -> T): T {
        println(label)
        repeat(2) { try { return block() } catch (e: Exception) {} }
        return block()
    }
}
"),
            ("src/main/kotlin/Svc.kt", "class Svc(val b: okhttp3.Request.Builder, val deps: Deps) {
    fun pay() = deps.payGate.guarded(\"pay\") { b.header(\"Idempotency-Key\", java.util.UUID.randomUUID().toString()).build() }
}
object Audit {
    fun <T> guarded(label: String, block: () -> T): T { println(label); return block() }
}
"),
            ("src/test/kotlin/FakePayGate.kt", "class FakePayGate {
    fun <T> guarded(label: String, block: () -> T): T = block()
    fun sent(b: okhttp3.Request.Builder, k: String) = b.header(\"Idempotency-Key\", k)
}
"),
        ],
        "Svc.kt",
    );
    same_retry_finding(
        "receiver-java-caller-kotlin-arity",
        &[
            ("Gate.kt", "class Gate {
    fun <T> guarded(label: String, block: () -> T): T {
        println(label)
        repeat(2) { try { return block() } catch (e: Exception) {} }
        return block()
    }
}
"),
            ("PayGateDefaults.kt", "object PayGateDefaults {
    fun <T> guarded(label: String, tag: String, block: () -> T): T = block()
    fun sent(b: okhttp3.Request.Builder, k: String) = b.header(\"Idempotency-Key\", k)
}
"),
            ("Svc.java", "class Svc {
  okhttp3.Request.Builder b;
  Deps deps;
  okhttp3.Request pay() {
    return deps.payGate.guarded(\"pay\", () -> b.header(\"Idempotency-Key\", java.util.UUID.randomUUID().toString()).build());
  }
  <T> T guarded(String label, java.util.function.Supplier<T> block) { System.out.println(label); return block.get(); }
}
"),
        ],
        "Svc.java",
    );
}

/// Writes `files` into a scratch project, checks it both ways (same findings) and that
/// both report a `key-in-retry-scope` finding in the file ending in `at`.
fn same_retry_finding(name: &str, files: &[(&str, &str)], at: &str) {
    let dir = scratch(name);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let (with, _) = assert_same(vec![dir], name);
    assert!(
        with.findings
            .iter()
            .any(|f| f.rule == "key-in-retry-scope" && f.path.ends_with(at)),
        "{name}: {:#?}",
        findings(&with)
    );
}

/// A declaration is recognised by its text however it is laid out: a Kotlin extension
/// whose receiver follows `fun` after a tab, a line break or type parameters, and a Java
/// method whose return type ends in `$` or a non-ASCII letter. Each once left the fresh
/// helper's file unparsed (a finding lost with the prefilter).
#[test]
fn declarations_laid_out_unusually_are_found() {
    const KT_CALLER: &str = "package shop.pay

import io.github.resilience4j.retry.Retry

class Payer(private val retry: Retry, private val api: PayApi) {
    fun pay(orderRef: String) = retry.executeSupplier {
        api.pay(idempotencyKey = orderRef.mintKey())
    }
}

interface PayApi { fun pay(idempotencyKey: String): String }
";
    for (i, header) in [
        "fun\tString.mintKey()",
        "fun\n    String.mintKey()",
        "fun String\n    .mintKey()",
        "fun<T> String.mintKey()",
    ]
    .iter()
    .enumerate()
    {
        let ext = format!(
            "package shop.util\n\nimport java.util.UUID\n\n{header}: String = \"$this-${{UUID.randomUUID()}}\"\n"
        );
        same_retry_finding(
            &format!("layout-kotlin-{i}"),
            &[("Pay.kt", KT_CALLER), ("Ext.kt", &ext)],
            "Pay.kt",
        );
    }
    const JAVA_CALLER: &str = "import dev.failsafe.Failsafe;
import dev.failsafe.RetryPolicy;

class Pay {
  PayoutApi api;
  RetryPolicy<Object> policy;
  String make() { return helper(); }
  void run(String id) {
    Failsafe.with(policy).get(() -> api.payout(make(), id));
  }
}
interface PayoutApi { String payout(String idempotencyKey, String id); }
";
    const CONSTS: &str =
        "class Consts {\n  static final String IDEMPOTENCY_HEADER = \"Idempotency-Key\";\n}\n";
    for (i, ty) in ["Schlüsselß", "Key$"].iter().enumerate() {
        let fresh = format!(
            "import java.util.UUID;\nclass Fresh {{\n  static {ty} helper() {{ return new {ty}(UUID.randomUUID().toString()); }}\n}}\nclass {ty} {{ {ty}(String s) {{}} }}\n"
        );
        same_retry_finding(
            &format!("layout-java-{i}"),
            &[
                ("Pay.java", JAVA_CALLER),
                ("Consts.java", CONSTS),
                ("Fresh.java", &fresh),
            ],
            "Pay.java",
        );
    }
}

/// More layouts from attacking the prefilter: a method inherited through a supertype
/// whose file holds no demanded word, Kotlin extension receivers with annotation
/// arguments, comments or parentheses, and whitespace the lexers accept beyond ASCII's
/// (a vertical tab; in Rust also U+0085, U+200E, U+2028). Each once lost a finding.
#[test]
fn inherited_methods_and_unusual_whitespace_are_found() {
    const JAVA_PAY: &str = "import dev.failsafe.Failsafe;
import dev.failsafe.RetryPolicy;

class Pay extends Mid {
  PayoutApi api;
  RetryPolicy<Object> policy;
  void run(String id) {
    Failsafe.with(policy).get(() -> api.payout(helper(), id));
  }
}
";
    const JAVA_API: &str =
        "interface PayoutApi { String payout(String idempotencyKey, String id); }\n";
    const CONSTS: &str =
        "class Consts {\n  static final String IDEMPOTENCY_HEADER = \"Idempotency-Key\";\n}\n";
    same_retry_finding(
        "inherited-through-skipped-middle",
        &[
            ("Pay.java", JAVA_PAY),
            ("PayoutApi.java", JAVA_API),
            ("Consts.java", CONSTS),
            ("Mid.java", "abstract class Mid extends Base {\n}\n"),
            (
                "Base.java",
                "import java.util.UUID;\nabstract class Base {\n  String helper() { return UUID.randomUUID().toString(); }\n}\n",
            ),
        ],
        "Pay.java",
    );
    // Supertypes are merged by simple name: another type named `Pay`, nested or in
    // another package, with a file holding no demanded word, adds its supertypes.
    let base = |name: &str, ret: &str| {
        format!(
            "import java.util.UUID;\nabstract class {name} {{\n  String helper() {{ return {ret}; }}\n}}\n"
        )
    };
    same_retry_finding(
        "same-named-type-nested",
        &[
            ("Pay.java", &JAVA_PAY.replace("extends Mid ", "")),
            ("PayoutApi.java", JAVA_API),
            ("Consts.java", CONSTS),
            (
                "Other.java",
                "class Outer {\n  static class Pay extends Evil {\n  }\n}\n",
            ),
            ("Evil.java", &base("Evil", "UUID.randomUUID().toString()")),
        ],
        "Pay.java",
    );
    same_retry_finding(
        "same-named-type-other-package",
        &[
            (
                "Pay.java",
                &JAVA_PAY.replace("extends Mid ", "extends Base "),
            ),
            ("PayoutApi.java", JAVA_API),
            ("Consts.java", CONSTS),
            ("Base.java", &base("Base", "UUID.randomUUID().toString()")),
            (
                "other/Pay.java",
                "package other;\nclass Pay extends Calm {\n}\n",
            ),
            (
                "other/Calm.java",
                &format!("package other;\n{}", base("Calm", "\"fixed\"")),
            ),
        ],
        "Pay.java",
    );
    same_retry_finding(
        "java-vertical-tab",
        &[
            (
                "Pay.java",
                &JAVA_PAY
                    .replace("extends Mid ", "")
                    .replace("payout(helper()", "payout(make()")
                    .replace(
                        "  void run",
                        "  String make() { return helper(); }\n  void run",
                    ),
            ),
            ("PayoutApi.java", JAVA_API),
            ("Consts.java", CONSTS),
            (
                "Fresh.java",
                "import java.util.UUID;\nclass Fresh {\n  static String\u{0b}helper() { return UUID.randomUUID().toString(); }\n}\n",
            ),
        ],
        "Pay.java",
    );
    let kt_pay = |call: &str| {
        format!(
            "package shop.pay\n\nimport io.github.resilience4j.retry.Retry\n\nclass Payer(private val retry: Retry, private val api: PayApi) {{\n    fun make() = {call}\n    fun pay(orderRef: String) = retry.executeSupplier {{\n        api.pay(idempotencyKey = make())\n    }}\n}}\n"
        )
    };
    const KT_API: &str =
        "package shop.pay\ninterface PayApi { fun pay(idempotencyKey: String): String }\n";
    for (i, (header, call)) in [
        ("fun @receiver:Ann(v = 1) String.helper()", "\"a\".helper()"),
        ("fun /* a=b */ String.helper()", "\"a\".helper()"),
        ("fun @receiver:Ann(\"{\") String.helper()", "\"a\".helper()"),
        ("fun (@Ann(v = 1) String).helper()", "\"a\".helper()"),
        ("fun\u{0b}helper()", "helper()"),
        // Kotlin block comments nest; an escaped quote in an annotation's string.
        (
            "fun /* x = 1 /* y */ z */ String.helper()",
            "\"a\".helper()",
        ),
        (
            "fun @receiver:A(w = \"\\\"\", v = \"(\\\"\") String.helper()",
            "\"a\".helper()",
        ),
    ]
    .iter()
    .enumerate()
    {
        let fresh = format!(
            "package shop.util\nimport java.util.UUID\n{header}: String = UUID.randomUUID().toString()\n"
        );
        same_retry_finding(
            &format!("kotlin-header-{i}"),
            &[
                ("Pay.kt", &kt_pay(call)),
                ("PayApi.kt", KT_API),
                ("Fresh.kt", &fresh),
            ],
            "Pay.kt",
        );
    }
    const RUST_PAY: &str = "use backon::{ExponentialBuilder, Retryable};

pub async fn pay(client: &reqwest::Client, id: &str) -> Result<reqwest::Response, reqwest::Error> {
    (|| async {
        let idempotency_key = mint(id);
        client
            .post(\"https://psp.example.com/v1/pay\")
            .header(\"Idempotency-Key\", idempotency_key)
            .send()
            .await
    })
    .retry(ExponentialBuilder::default())
    .await
}
";
    for (i, ws) in ["\u{0b}", "\u{85}", "\u{200e}", "\u{2028}"]
        .iter()
        .enumerate()
    {
        let keys = format!(
            "pub fn{ws}mint(id: &str) -> String {{ format!(\"{{id}}-{{}}\", uuid::Uuid::new_v4()) }}\n"
        );
        same_retry_finding(
            &format!("rust-whitespace-{i}"),
            &[("src/pay.rs", RUST_PAY), ("src/keys.rs", &keys)],
            "pay.rs",
        );
    }
}

/// A line comment between a declaration's type (or `fun`) and its name says nothing about
/// the name, whatever it ends with: a trailing `*` or `.` once made the helper's or the
/// combinator's file look like it declared nothing (a finding lost with the prefilter).
#[test]
fn a_line_comment_before_a_declared_name_is_no_context() {
    const JAVA_CALLER: &str = "import java.util.UUID;

class ChargeJob {
    Charge charge(PaymentsApi api, String orderId, ChargeRequest body) {
        return retryTemplate.execute(ctx -> {
            String key = KeyHelper.mint();
            return api.createCharge(key, body);
        });
    }
}

interface PaymentsApi {
    @POST(\"v1/charges\")
    Call<Charge> createCharge(@Header(\"Idempotency-Key\") String key, @Body ChargeRequest body);
}
";
    for (i, comment) in ["// a fresh key *", "// a fresh key per call."]
        .iter()
        .enumerate()
    {
        let helper = format!(
            "import java.util.UUID;\n\nclass KeyHelper {{\n    static String {comment}\n    mint() {{\n        return UUID.randomUUID().toString();\n    }}\n}}\n"
        );
        same_retry_finding(
            &format!("line-comment-java-{i}"),
            &[("ChargeJob.java", JAVA_CALLER), ("KeyHelper.java", &helper)],
            "ChargeJob.java",
        );
    }
    same_retry_finding(
        "line-comment-kotlin-combinator",
        &[
            (
                "Submitter.kt",
                "import java.util.UUID

class Submitter(private val api: PaymentsApi) {
    fun submit(body: ChargeRequest): Charge =
        resilient { api.createCharge(UUID.randomUUID().toString(), body) }
}

interface PaymentsApi {
    @POST(\"v1/charges\")
    fun createCharge(@Header(\"Idempotency-Key\") key: String, @Body body: ChargeRequest): Charge
}
",
            ),
            (
                "Retry.kt",
                "import java.io.IOException

fun <T> // retried on IOException only *
resilient(block: () -> T): T {
    repeat(3) {
        try {
            return block()
        } catch (e: IOException) {
        }
    }
    return block()
}
",
            ),
        ],
        "Submitter.kt",
    );
}

/// A declaration in test code is never called from main code (`ProjectIndex::candidates`):
/// a project whose only minting `build(..)` is a test fixture's does not send every main
/// file with a retry and a `build(..)` call to pass 2, and the findings stay those of
/// analysing every file.
#[test]
fn a_test_fixture_that_mints_does_not_make_main_calls_of_its_name_suspect() {
    let dir = scratch("test-fixture-mints");
    let files = [
        (
            "src/test/java/com/acme/ChargeFixtures.java",
            "package com.acme;\n\nimport java.util.UUID;\n\nclass ChargeFixtures {\n    static Charge build(PaymentsApi api, ChargeRequest body) {\n        return api.createCharge(UUID.randomUUID().toString(), body);\n    }\n}\n",
        ),
        (
            "src/test/java/com/acme/ChargeJobTest.java",
            "package com.acme;\n\nclass ChargeJobTest {\n    Charge retried(PaymentsApi api, ChargeRequest body) {\n        for (int attempt = 0; attempt < 3; attempt++) {\n            try {\n                return ChargeFixtures.build(api, body);\n            } catch (RuntimeException e) {\n            }\n        }\n        return null;\n    }\n}\n",
        ),
        (
            "src/main/java/com/acme/ChargeJob.java",
            "package com.acme;\n\nclass ChargeJob {\n    Charge run(Builders b, PaymentsApi api, ChargeRequest body) {\n        for (int attempt = 0; attempt < 3; attempt++) {\n            try {\n                return b.build(api, body);\n            } catch (RuntimeException e) {\n            }\n        }\n        return null;\n    }\n}\n",
        ),
        (
            "src/main/java/com/acme/PaymentsApi.java",
            "package com.acme;\n\ninterface PaymentsApi {\n    @POST(\"v1/charges\")\n    Charge createCharge(@Header(\"Idempotency-Key\") String key, @Body ChargeRequest body);\n}\n",
        ),
    ];
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let (with, _) = assert_same(vec![dir.clone()], "test fixture that mints");
    let paths: Vec<&str> = with.findings.iter().map(|f| f.path.as_str()).collect();
    assert!(
        !paths.is_empty() && paths.iter().all(|p| p.ends_with("ChargeJobTest.java")),
        "{paths:?}"
    );
    // The fixture (a key sink with a source) and the test that retries it; not the main
    // job, whose `build(..)` can only be a main declaration.
    assert_eq!(with.stats.checked, 2, "{}", with.stats.render());
}

fn write_files(dir: &Path, files: &[(String, String)]) {
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

#[test]
fn main_calls_of_a_test_fixtures_minting_name_are_not_parsed() {
    let dir = scratch("test-fixture-mints-mentions");
    let mut files: Vec<(String, String)> = vec![
        (
            "src/test/java/com/acme/ChargeFixtures.java".into(),
            "package com.acme;\n\nimport java.util.UUID;\n\nclass ChargeFixtures {\n    static Charge build(PaymentsApi api, ChargeRequest body) {\n        return api.createCharge(UUID.randomUUID().toString(), body);\n    }\n}\n".into(),
        ),
        (
            "src/test/java/com/acme/ChargeJobTest.java".into(),
            "package com.acme;\n\nclass ChargeJobTest {\n    Charge retried(PaymentsApi api, ChargeRequest body) {\n        for (int attempt = 0; attempt < 3; attempt++) {\n            try {\n                return ChargeFixtures.build(api, body);\n            } catch (RuntimeException e) {\n            }\n        }\n        return null;\n    }\n}\n".into(),
        ),
        (
            "src/main/java/com/acme/PaymentsApi.java".into(),
            "package com.acme;\n\ninterface PaymentsApi {\n    @POST(\"v1/charges\")\n    Charge createCharge(@Header(\"Idempotency-Key\") String key, @Body ChargeRequest body);\n}\n".into(),
        ),
        // A main declaration of the name: wanted, as a test call may resolve to it.
        (
            "src/main/java/com/acme/Builders.java".into(),
            "package com.acme;\n\nclass Builders {\n    Charge build(PaymentsApi api, ChargeRequest body) {\n        return null;\n    }\n}\n".into(),
        ),
    ];
    // Main code calling `build(..)`: it cannot reach the test fixture.
    for i in 0..6 {
        files.push((
            format!("src/main/java/com/acme/Job{i}.java"),
            format!("package com.acme;\n\nclass Job{i} {{\n    Charge run(Builders b, PaymentsApi api, ChargeRequest body) {{\n        return b.build(api, body);\n    }}\n}}\n"),
        ));
    }
    write_files(&dir, &files);
    let (with, without) = assert_same(
        vec![dir.clone()],
        "a test fixture's name called from main code",
    );
    assert!(
        with.findings
            .iter()
            .any(|f| f.path.ends_with("ChargeJobTest.java")),
        "{:?}",
        findings(&with)
    );
    assert_eq!(without.parsed, 10);
    // The fixture, the API, the test that calls `build` and the main declaration of
    // `build`; none of the six main callers.
    assert_eq!(with.parsed, 4, "{}", with.stats.render());
}

#[test]
fn a_request_types_declaration_is_wanted_not_its_mentions() {
    let dir = scratch("bound-type-declarations");
    let mut files: Vec<(String, String)> = vec![
        (
            "src/main/java/com/acme/PayoutRequest.java".into(),
            "package com.acme;\n\nimport java.time.Instant;\n\nclass PayoutRequest {\n    public String accountId;\n    public String requestRef = \"payout-\" + Instant.now().toEpochMilli();\n}\n".into(),
        ),
        (
            "src/main/java/com/acme/PayoutController.java".into(),
            "package com.acme;\n\n@RestController\nclass PayoutController {\n    private final PayoutGateway gateway;\n\n    PayoutController(PayoutGateway gateway) { this.gateway = gateway; }\n\n    @PostMapping(\"/payouts\")\n    String create(@RequestBody PayoutRequest request) {\n        return gateway.send(request.accountId, request.requestRef);\n    }\n}\n".into(),
        ),
        (
            "src/main/java/com/acme/PayoutGateway.java".into(),
            "package com.acme;\n\ninterface PayoutGateway {\n    String send(String accountId, String idempotencyKey);\n}\n".into(),
        ),
    ];
    // Code that only uses the request type.
    for i in 0..5 {
        files.push((
            format!("src/main/java/com/acme/Mapper{i}.java"),
            format!("package com.acme;\n\nclass Mapper{i} {{\n    String account(PayoutRequest r) {{\n        return r.accountId;\n    }}\n}}\n"),
        ));
    }
    write_files(&dir, &files);
    let (with, without) = assert_same(vec![dir.clone()], "a request type's mentions");
    assert!(
        with.findings
            .iter()
            .any(|f| f.path.ends_with("PayoutRequest.java") && f.line == 7),
        "{:?}",
        findings(&with)
    );
    assert_eq!(without.parsed, 8);
    assert_eq!(with.parsed, 3, "{}", with.stats.render());
}

/// A request field's default that calls a clock helper declared in another file: the
/// default is a sink once the handler's file is indexed, and its flow asks about the
/// helper, whose declaration must be parsed and whose file must be checked (both were
/// missed: the prefilter never asked for the helper, and `needs_check` looked only at
/// catalogue sources in the request type's file).
#[test]
fn a_request_defaults_helper_in_another_file_is_followed() {
    let dir = scratch("bound-default-helper");
    let mut files: Vec<(String, String)> = vec![
        (
            "src/main/java/com/acme/PayoutRequest.java".into(),
            "package com.acme;\n\nclass PayoutRequest {\n    public String accountId;\n    public String requestRef = Seeds.now();\n}\n".into(),
        ),
        (
            "src/main/java/com/acme/Seeds.java".into(),
            "package com.acme;\n\nfinal class Seeds {\n    static String now() {\n        return \"payout-\" + System.currentTimeMillis();\n    }\n}\n".into(),
        ),
        (
            "src/main/java/com/acme/PayoutController.java".into(),
            "package com.acme;\n\n@RestController\nclass PayoutController {\n    private final PayoutGateway gateway;\n\n    PayoutController(PayoutGateway gateway) { this.gateway = gateway; }\n\n    @PostMapping(\"/payouts\")\n    String create(@RequestBody PayoutRequest request) {\n        return gateway.send(request.accountId, request.requestRef);\n    }\n}\n".into(),
        ),
        (
            "src/main/java/com/acme/PayoutGateway.java".into(),
            "package com.acme;\n\ninterface PayoutGateway {\n    String send(String accountId, String idempotencyKey);\n}\n".into(),
        ),
        (
            "src/main/kotlin/com/acme/RefundRequest.kt".into(),
            "package com.acme\n\ndata class RefundRequest(val chargeId: String, val refundRef: String = Ids.fresh())\n".into(),
        ),
        (
            "src/main/kotlin/com/acme/Ids.kt".into(),
            "package com.acme\n\nobject Ids {\n    fun fresh(): String = \"refund-${System.currentTimeMillis()}\"\n}\n".into(),
        ),
        (
            "src/main/kotlin/com/acme/RefundController.kt".into(),
            "package com.acme\n\n@RestController\nclass RefundController(private val gateway: RefundGateway) {\n    @PostMapping(\"/refunds\")\n    fun refund(@RequestBody request: RefundRequest): String =\n        gateway.refund(request.chargeId, request.refundRef)\n}\n".into(),
        ),
        (
            "src/main/kotlin/com/acme/RefundGateway.kt".into(),
            "package com.acme\n\ninterface RefundGateway {\n    fun refund(chargeId: String, idempotencyKey: String): String\n}\n".into(),
        ),
    ];
    // Code that only uses the request types.
    for i in 0..4 {
        files.push((
            format!("src/main/java/com/acme/Mapper{i}.java"),
            format!("package com.acme;\n\nclass Mapper{i} {{\n    String account(PayoutRequest r) {{\n        return r.accountId;\n    }}\n}}\n"),
        ));
    }
    write_files(&dir, &files);
    let (with, _) = assert_same(vec![dir.clone()], "a request default's helper");
    let at = |file: &str, line: usize| {
        with.findings
            .iter()
            .any(|f| f.path.ends_with(file) && f.line == line)
    };
    assert!(
        at("PayoutRequest.java", 5) && at("RefundRequest.kt", 3),
        "{:?}",
        findings(&with)
    );
    // The mappers are not parsed for it.
    assert!(with.parsed <= 8, "{}", with.stats.render());
}

/// The same call text (`store.get()`, one shared call record) in a Java and a Rust helper:
/// the index resolves a call on a named receiver once per language and kind of code, not
/// once per file, and must not answer one language with the other's declarations. Java's
/// `Store.get()` mints, so `key()` does and the retried call is a finding; Rust's only
/// `get` is on `Ids`, which `store` does not name, so Rust's `key` does not mint.
#[test]
fn a_call_on_a_named_receiver_resolves_per_language() {
    let dir = scratch("named-receiver-per-language");
    write_files(
        &dir,
        &[
            (
                "src/main/java/com/acme/Poster.java".into(),
                NAMED_RECEIVER_JAVA.into(),
            ),
            ("src/lib.rs".into(), NAMED_RECEIVER_RUST.into()),
        ],
    );
    let (with, _) = assert_same(vec![dir.clone()], "a shared call in two languages");
    let got: Vec<(String, usize)> = with
        .findings
        .iter()
        .map(|f| (f.path.rsplit('/').next().unwrap().to_string(), f.line))
        .collect();
    assert_eq!(
        got,
        vec![("Poster.java".to_string(), 30)],
        "{:?}",
        findings(&with)
    );
}

const NAMED_RECEIVER_JAVA: &str = "package com.acme;\n\nimport org.springframework.retry.support.RetryTemplate;\nimport org.springframework.web.client.RestClient;\n\nclass Store {\n    String get() {\n        return java.util.UUID.randomUUID().toString();\n    }\n}\n\nclass Poster {\n    private final RestClient ledger;\n    private final RetryTemplate retryTemplate;\n    private final Registry registry;\n\n    Poster(RestClient ledger, RetryTemplate retryTemplate, Registry registry) {\n        this.ledger = ledger;\n        this.retryTemplate = retryTemplate;\n        this.registry = registry;\n    }\n\n    String key() {\n        var store = registry.lookup();\n        return store.get();\n    }\n\n    void post(Entry entry) {\n        retryTemplate.execute(ctx -> {\n            String key = key();\n            return ledger.post().uri(\"/v1/entries\").header(\"Idempotency-Key\", key).body(entry).retrieve().toBodilessEntity();\n        });\n    }\n}\n";
const NAMED_RECEIVER_RUST: &str = "pub struct Ids;\n\nimpl Ids {\n    pub fn get(&self) -> String {\n        uuid::Uuid::new_v4().to_string()\n    }\n}\n\nfn key(registry: &Registry) -> String {\n    let store = registry.lookup();\n    store.get()\n}\n\npub async fn post(client: &reqwest::Client, registry: &Registry) {\n    for _ in 0..3 {\n        let key = key(registry);\n        let r = client.post(\"https://api.example.com/v1/entries\").header(\"Idempotency-Key\", key).send().await;\n        if r.is_ok() {\n            break;\n        }\n    }\n}\n";

/// `n` Java files with a key sink (parsed at once), `users` that call one of them (parsed
/// by the first name round), and `rest` that name nothing pass 1 looks for, each padded
/// with `pad` bytes of comment.
fn keyed_project(dir: &Path, n: usize, users: usize, rest: usize, pad: usize) {
    let mut files = Vec::new();
    for i in 0..n {
        files.push((
            format!("src/main/java/com/acme/Api{i}.java"),
            format!("package com.acme;\n\ninterface Api{i} {{\n    @POST(\"v1/charges\")\n    Charge charge{i}(@Header(\"Idempotency-Key\") String key, @Body ChargeRequest body);\n}}\n"),
        ));
    }
    for i in 0..users {
        files.push((
            format!("src/main/java/com/acme/User{i}.java"),
            format!("package com.acme;\n\nclass User{i} {{\n    Charge pay(Api0 api, String k, ChargeRequest body) {{\n        return api.charge0(k, body);\n    }}\n}}\n"),
        ));
    }
    let padding = format!("// {}\n", "x".repeat(pad));
    for i in 0..rest {
        files.push((
            format!("src/main/java/com/acme/Plain{i}.java"),
            format!("package com.acme;\n\n{padding}class Plain{i} {{\n    int value() {{\n        return {i};\n    }}\n}}\n"),
        ));
    }
    // A key from the clock, in a file parsed at once: it makes the name rounds run.
    files.push((
        "src/main/java/com/acme/Caller.java".into(),
        "package com.acme;\n\nclass Caller {\n    Charge pay(Api0 api, ChargeRequest body) {\n        String idempotencyKey = \"k-\" + System.currentTimeMillis();\n        return api.charge0(idempotencyKey, body);\n    }\n}\n".into(),
    ));
    write_files(dir, &files);
}

#[test]
fn a_large_project_with_little_left_parses_it_all() {
    // 601 files parsed at once, 100 by the first round, and 150 small ones left: parsing
    // them costs less than another round.
    let dir = scratch("parse-the-rest");
    keyed_project(&dir, 600, 100, 150, 0);
    let (with, without) = assert_same(vec![dir.clone()], "little left");
    assert!(!with.findings.is_empty());
    assert_eq!(without.parsed, 851);
    assert_eq!(with.parsed, 851, "{}", with.stats.render());
    assert_eq!(with.stats.parsed_per_round.last(), Some(&150));
    // The same files left, each large: more than half the bytes parsed, so they are
    // scanned for names, and none is parsed.
    let dir = scratch("parse-the-rest-large");
    keyed_project(&dir, 600, 100, 150, 2000);
    let (with, _) = assert_same(vec![dir.clone()], "large files left");
    assert_eq!(with.parsed, 701, "{}", with.stats.render());
    // Nothing parsed by a name round: no round follows, so nothing more is parsed however
    // little is left.
    let dir = scratch("parse-the-rest-no-round");
    keyed_project(&dir, 600, 0, 150, 0);
    let (with, _) = assert_same(vec![dir.clone()], "no round");
    assert_eq!(with.parsed, 601, "{}", with.stats.render());
}

/// A capitalised receiver of one or two letters (`Q.key()`) names the type of exactly
/// that name, here a Kotlin `object Q` in another file whose `key()` mints: the index
/// resolves the call to it, so the prefilter must want `key`'s declarations (it wanted
/// nothing for a receiver too short to name a type by containment, and the default run
/// missed what `--no-prefilter` found). A Kotlin companion object's function called
/// through its class (`Ids.fresh()`) and as `Ids.Companion.fresh()` is found alike.
#[test]
fn a_short_capitalised_receiver_and_a_companion_are_resolved_in_both_modes() {
    let dir = scratch("short-receiver-companion");
    let gateway = "package com.acme\n\ninterface RefundGateway {\n    fun refund(chargeId: String, idempotencyKey: String): String\n}\n";
    write_files(
        &dir,
        &[
            (
                "src/main/kotlin/com/acme/Q.kt".into(),
                "package com.acme\n\nimport java.util.UUID\n\nobject Q {\n    fun key(): String = UUID.randomUUID().toString()\n}\n".into(),
            ),
            (
                "src/main/kotlin/com/acme/Ids.kt".into(),
                "package com.acme\n\nimport java.util.UUID\n\nclass Ids {\n    companion object {\n        fun fresh(): String = UUID.randomUUID().toString()\n    }\n}\n".into(),
            ),
            (
                "src/main/kotlin/com/acme/Payer.kt".into(),
                "package com.acme\n\nimport org.springframework.retry.annotation.Retryable\n\nclass Payer(private val gateway: RefundGateway) {\n    @Retryable\n    fun pay(chargeId: String): String = gateway.refund(chargeId, Q.key())\n\n    @Retryable\n    fun payAgain(chargeId: String): String = gateway.refund(chargeId, Ids.fresh())\n\n    @Retryable\n    fun payQualified(chargeId: String): String = gateway.refund(chargeId, Ids.Companion.fresh())\n}\n".into(),
            ),
            ("src/main/kotlin/com/acme/RefundGateway.kt".into(), gateway.into()),
        ],
    );
    let (with, _) = assert_same(vec![dir.clone()], "a short receiver and a companion");
    let lines: Vec<usize> = with
        .findings
        .iter()
        .filter(|f| f.path.ends_with("Payer.kt"))
        .map(|f| f.line)
        .collect();
    assert_eq!(lines, vec![7, 10, 13], "{:?}", findings(&with));
}

/// The fresh closure: a key sent from `code.as_str()` in a retry loop, with `as_str`
/// declared by twelve unrelated models. With no source word anywhere, no `as_str` can be
/// fresh and none is parsed (async-stripe: 550 generated `as_str` declarations). A fresh
/// `as_str` of the receiver's type, directly or through a helper in a file with no
/// source word of its own, is found as without the prefilter; one returning its own
/// retry loop's attempt counter is fresh in neither mode.
#[test]
fn the_fresh_closure_spares_names_that_cannot_be_fresh() {
    let keyed = "pub struct Code;\n\npub async fn charge(client: &reqwest::Client, code: Code) {\n    for _ in 0..3 {\n        if client.post(\"https://api.example.com/charges\").header(\"Idempotency-Key\", code.as_str()).send().await.is_ok() {\n            break;\n        }\n    }\n}\n";
    let direct = "use crate::Code;\n\nimpl Code {\n    pub fn as_str(&self) -> String {\n        uuid::Uuid::new_v4().to_string()\n    }\n}\n";
    let source = "pub fn fresh_code() -> String {\n    uuid::Uuid::new_v4().to_string()\n}\n";
    let wrap = "use crate::Code;\n\nimpl Code {\n    pub fn as_str(&self) -> String {\n        crate::source::fresh_code()\n    }\n}\n";
    // An attempt counter returned from a function's own retry loop is no fresh value of
    // the function (it has no source word either, so the closure could not see it).
    let counter = "use crate::Code;\n\nimpl Code {\n    pub fn as_str(&self) -> String {\n        for attempt in 0..3 {\n            match ping() {\n                Ok(_) => return format!(\"k{attempt}\"),\n                Err(_) => continue,\n            }\n        }\n        String::new()\n    }\n}\n";
    // Once `as_str` may be fresh, its every mention is wanted, which here costs what the
    // demand without the closure does: the closure stops and the declarations are
    // sampled as before (how many are parsed then is not this test's business).
    for (label, extra, findings_n, parsed) in [
        ("never fresh", vec![], 0, Some(1)),
        ("attempt counter", vec![("counter.rs", counter)], 0, Some(1)),
        ("fresh", vec![("direct.rs", direct)], 1, None),
        (
            "fresh through a helper",
            vec![("source.rs", source), ("wrap.rs", wrap)],
            1,
            None,
        ),
    ] {
        let dir = scratch(&format!("prefilter_closure_{}", label.replace(' ', "_")));
        std::fs::write(dir.join("keyed.rs"), keyed).unwrap();
        for i in 0..12 {
            std::fs::write(
                dir.join(format!("model{i:02}.rs")),
                format!(
                    "pub enum Model{i} {{\n    A,\n}}\n\nimpl Model{i} {{\n    pub fn as_str(&self) -> &'static str {{\n        \"a\"\n    }}\n}}\n"
                ),
            )
            .unwrap();
        }
        for (name, text) in &extra {
            std::fs::write(dir.join(name), text).unwrap();
        }
        let (with, without) = assert_same(vec![dir], label);
        assert_eq!(without.parsed, 13 + extra.len(), "{label}");
        if let Some(p) = parsed {
            assert_eq!(with.parsed, p, "{label}");
        }
        assert_eq!(
            with.findings.len(),
            findings_n,
            "{label}: {:#?}",
            findings(&with)
        );
    }
}

/// A key generator the catalogue knows by its name only (`idempotencyKeyGenerator.generate()`) is the
/// project's own code once another file declares it in a type named for the receiver, and
/// then no source. Its declaration is wanted whether or not it can be fresh: the fresh
/// closure, which spares declarations of names that cannot be fresh, must not spare it
/// (found by a break-it helper: the default run reported the stable generator).
#[test]
fn a_generator_known_by_name_is_read_where_it_is_declared() {
    let dir = scratch("prefilter_by_name_declared");
    std::fs::write(
        dir.join("Payments.java"),
        "import okhttp3.OkHttpClient;\nimport okhttp3.Request;\n\nclass Payments {\n    private final OkHttpClient client = new OkHttpClient();\n    private final KeyGenerator idempotencyKeyGenerator = new KeyGenerator();\n\n    void pay() {\n        for (int i = 0; i < 3; i++) {\n            try {\n                Request req = new Request.Builder().url(\"https://api.example.com/v1/payments\").header(\"Idempotency-Key\", idempotencyKeyGenerator.generate()).build();\n                client.newCall(req).execute();\n                return;\n            } catch (Exception e) {\n            }\n        }\n    }\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("KeyGenerator.java"),
        "class KeyGenerator {\n    private final String orderId = \"order-42\";\n\n    String generate() {\n        return \"o-\" + orderId;\n    }\n}\n",
    )
    .unwrap();
    let (with, _) = assert_same(vec![dir], "by name");
    assert!(with.findings.is_empty(), "{:#?}", findings(&with));
    assert_eq!(with.parsed, 2);
}

/// Files of at least `check::BIG_FILE_BYTES` (1 MiB) with a sink word are parsed right
/// after stage 0 rather than in it, and any large file is parsed on one thread, largest
/// first: neither may change what is found or which round a file counts in.
#[test]
fn large_files_are_parsed_apart_with_the_same_findings() {
    let dir = scratch("large-files-apart");
    // A block comment that makes a file large without making it slow to parse.
    let filler = |n: usize| {
        let mut s = String::from("/*\n");
        while s.len() < n {
            s.push_str("lorem ipsum dolor sit amet consectetur adipiscing elit sed do\n");
        }
        s.push_str("*/\n");
        s
    };
    let mb = idemlint::check::BIG_FILE_BYTES;
    std::fs::write(
        dir.join("Pay.java"),
        "class Pay {\n    Receipt pay(Bank bank, String id) {\n        for (int attempt = 0; attempt < 3; attempt++) {\n            try {\n                return bank.transfer(id, KeyMaker.fresh());\n            } catch (RuntimeException e) {\n            }\n        }\n        throw new IllegalStateException();\n    }\n}\ninterface Bank { Receipt transfer(String id, String idempotencyKey); }\nfinal class Receipt {}\n",
    )
    .unwrap();
    // Large, no sink word: reached through the name `fresh`, in a later round.
    std::fs::write(
        dir.join("KeyMaker.java"),
        format!(
            "import java.util.UUID;\n{}class KeyMaker {{\n    static String fresh() {{ return UUID.randomUUID().toString(); }}\n}}\n",
            filler(mb + 10)
        ),
    )
    .unwrap();
    // Large, with a sink word: parsed right after stage 0, and counted in round 0.
    std::fs::write(
        dir.join("BigPay.java"),
        format!(
            "import java.util.UUID;\n{}class BigPay {{\n    Receipt pay(BigBank bank, String id) {{\n        for (int attempt = 0; attempt < 3; attempt++) {{\n            try {{\n                return bank.send(id, UUID.randomUUID().toString());\n            }} catch (RuntimeException e) {{\n            }}\n        }}\n        throw new IllegalStateException();\n    }}\n}}\ninterface BigBank {{ Receipt send(String id, String idempotencyKey); }}\n",
            filler(2 * mb)
        ),
    )
    .unwrap();
    let (with, _) = assert_same(vec![dir.clone()], "large files");
    let found: Vec<(String, &str)> = with
        .findings
        .iter()
        .map(|f| {
            (
                Path::new(&f.path)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                f.rule,
            )
        })
        .collect();
    assert!(
        found.contains(&("Pay.java".to_string(), "key-in-retry-scope")),
        "through the large helper file: {found:?}"
    );
    assert!(
        found.contains(&("BigPay.java".to_string(), "key-in-retry-scope")),
        "in the large file with a sink word: {found:?}"
    );
    // Stage 0: both files with a sink word (the large one parsed right after it).
    assert_eq!(
        with.stats.parsed_per_round.first(),
        Some(&2),
        "{:?}",
        with.stats.parsed_per_round
    );
    assert_eq!(with.parsed, 3);
}

/// Temporal's usual layout: the `@ActivityInterface` in one file, the implementing class
/// in another (which need not import Temporal at all). The implementing methods are
/// activity methods, retried by the server: a key minted in one, directly or through a
/// helper declared in a third file, is a finding in both modes; a method the interface
/// does not declare, or a class implementing an unannotated interface, is not.
#[test]
fn an_annotation_on_an_interface_in_another_file_makes_its_implementations_boundaries() {
    let dir = scratch("prefilter_interface_in_another_file");
    std::fs::write(
        dir.join("PaymentActivities.java"),
        "import io.temporal.activity.ActivityInterface;\n\
         @ActivityInterface\n\
         public interface PaymentActivities {\n\
         \x20   void charge(String orderId, long amount);\n\
         \x20   void refund(String orderId);\n\
         }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("PaymentActivitiesImpl.java"),
        "import java.util.UUID;\n\
         public class PaymentActivitiesImpl implements PaymentActivities {\n\
         \x20   private final Gateway gateway;\n\
         \x20   private final Keys keys;\n\
         \x20   PaymentActivitiesImpl(Gateway gateway, Keys keys) { this.gateway = gateway; this.keys = keys; }\n\
         \x20   @Override\n\
         \x20   public void charge(String orderId, long amount) {\n\
         \x20       gateway.charge(orderId, amount, UUID.randomUUID().toString());\n\
         \x20   }\n\
         \x20   @Override\n\
         \x20   public void refund(String orderId) {\n\
         \x20       keys.refundWithNewKey(gateway, orderId);\n\
         \x20   }\n\
         \x20   public void audit(String orderId) {\n\
         \x20       gateway.charge(orderId, 0, UUID.randomUUID().toString());\n\
         \x20   }\n\
         }\n\
         interface Gateway {\n\
         \x20   void charge(String orderId, long amount, String idempotencyKey);\n\
         \x20   void refund(String orderId, String idempotencyKey);\n\
         }\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("Keys.java"),
        "import java.util.UUID;\n\
         public class Keys {\n\
         \x20   public void refundWithNewKey(Gateway g, String orderId) {\n\
         \x20       g.refund(orderId, UUID.randomUUID().toString());\n\
         \x20   }\n\
         }\n",
    )
    .unwrap();
    // An interface without the annotation: its implementations are not activities.
    std::fs::write(
        dir.join("Plain.java"),
        "public interface Plain {\n    void charge(String orderId, long amount);\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("PlainImpl.java"),
        "import java.util.UUID;\n\
         public class PlainImpl implements Plain {\n\
         \x20   private Gateway gateway;\n\
         \x20   public void charge(String orderId, long amount) {\n\
         \x20       gateway.charge(orderId, amount, UUID.randomUUID().toString());\n\
         \x20   }\n\
         }\n",
    )
    .unwrap();
    // Another interface of the same simple name, not annotated, in another package: its
    // implementation's `audit` is no activity method (the annotated `PaymentActivities`
    // declares no `audit`).
    std::fs::create_dir_all(dir.join("other")).unwrap();
    std::fs::write(
        dir.join("other/PaymentActivities.java"),
        "package other;\npublic interface PaymentActivities {\n    void audit(String orderId);\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("other/AuditImpl.java"),
        "package other;\n\
         import java.util.UUID;\n\
         public class AuditImpl implements PaymentActivities {\n\
         \x20   private Gateway gateway;\n\
         \x20   public void audit(String orderId) {\n\
         \x20       gateway.charge(orderId, 0, UUID.randomUUID().toString());\n\
         \x20   }\n\
         }\n\
         interface Gateway {\n    void charge(String orderId, long amount, String idempotencyKey);\n}\n",
    )
    .unwrap();
    // Kotlin: the interface in Kotlin, the implementation too, in separate files.
    std::fs::write(
        dir.join("LedgerActivities.kt"),
        "import io.temporal.activity.ActivityInterface\n\
         @ActivityInterface\n\
         interface LedgerActivities {\n    fun post(entryId: String)\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("LedgerActivitiesImpl.kt"),
        "import java.util.UUID\n\
         class LedgerActivitiesImpl(private val gateway: Gateway) : LedgerActivities {\n\
         \x20   override fun post(entryId: String) {\n\
         \x20       gateway.charge(entryId, 1, UUID.randomUUID().toString())\n\
         \x20   }\n\
         }\n",
    )
    .unwrap();
    let (with, _) = assert_same(vec![dir], "interface in another file");
    let at: Vec<(String, usize)> = with
        .findings
        .iter()
        .filter(|f| f.rule == "key-in-retry-scope")
        .map(|f| {
            (
                Path::new(&f.path)
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .to_string(),
                f.line,
            )
        })
        .collect();
    assert_eq!(
        at,
        vec![
            ("LedgerActivitiesImpl.kt".to_string(), 4),
            ("PaymentActivitiesImpl.java".to_string(), 8),
            ("PaymentActivitiesImpl.java".to_string(), 12),
        ],
        "{:#?}",
        with.findings
    );
    let f = with
        .findings
        .iter()
        .find(|f| f.path.ends_with("PaymentActivitiesImpl.java") && f.line == 8)
        .unwrap();
    assert!(
        f.message
            .contains("implementing `@ActivityInterface` `PaymentActivities.charge()`"),
        "{}",
        f.message
    );
}

/// The cases a break-it helper found against the forty-third session's narrower words and
/// declaration tests (and two older ones): each gave different findings with and without
/// the prefilter. An annotation whose name holds `idempot` with a SpEL clock key; a Kotlin
/// retry combinator whose name follows `fun <T>` and a character that is not ASCII, or a
/// line ending in a comment after a backticked name holding a quote; a Java declaration
/// after a comment holding `/*`.
#[test]
fn narrowed_words_and_declaration_tests_keep_the_findings() {
    let caller = "package shop\n\nimport java.util.UUID\n\n\
        suspend fun charge(api: PaymentsApi, amount: Long): Charge = resilient {\n    \
        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), amount = amount)\n}\n\n\
        interface PaymentsApi { suspend fun createCharge(idempotencyKey: String, amount: Long): Charge }\n\
        class Charge\n";
    let body = "    repeat(3) {\n        try {\n            return block()\n        } catch (e: IOException) {\n        }\n    }\n    return block()\n}\n";
    let headers = [
        "suspend fun <T>\u{a0}resilient(block: suspend () -> T): T {\n",
        "suspend fun <T>\u{feff}resilient(block: suspend () -> T): T {\n",
        "suspend fun <`T\"`> // x\"\nresilient(block: suspend () -> `T\"`): `T\"` {\n",
        "val `q\"q` = 1; suspend fun <T> // \"\nresilient(block: suspend () -> T): T {\n",
    ];
    for (i, header) in headers.iter().enumerate() {
        let dir = scratch(&format!("narrowed-kotlin-{i}"));
        std::fs::write(dir.join("Charges.kt"), caller).unwrap();
        std::fs::write(
            dir.join("Retry.kt"),
            format!("package shop\n\nimport java.io.IOException\n\n{header}{body}"),
        )
        .unwrap();
        let (with, _) = assert_same(vec![dir], header);
        assert!(
            with.findings.iter().any(|f| f.rule == "key-in-retry-scope"),
            "{header}: {:#?}",
            with.findings
        );
    }
    for (i, (name, clock)) in [
        ("Idempotency", "T(System).currentTimeMillis()"),
        ("IdempotOp", "T(java.time.Instant).now()"),
    ]
    .iter()
    .enumerate()
    {
        let dir = scratch(&format!("narrowed-spel-{i}"));
        std::fs::write(
            dir.join("Svc.java"),
            format!(
                "public class TransferService {{\n    @{name}(keyExpression = \"'refund:' + #refundId + ':' + {clock}\")\n    public void refund(String refundId) {{}}\n}}\n"
            ),
        )
        .unwrap();
        let (with, _) = assert_same(vec![dir], name);
        assert!(
            with.findings.iter().any(|f| f.rule == "time-in-key"),
            "{name}: {:#?}",
            with.findings
        );
    }
    let dir = scratch("narrowed-java-comment");
    std::fs::write(
        dir.join("PayoutSender.java"),
        "import dev.failsafe.Failsafe;\nimport dev.failsafe.RetryPolicy;\n\n\
         interface PayoutKeySource {\n    String keyFor(String payoutId);\n}\n\n\
         final class PayoutSender {\n    private final PayoutKeySource keys;\n    private final PayoutApi api;\n    \
         private final RetryPolicy<String> retryPolicy = RetryPolicy.<String>builder().withMaxRetries(3).build();\n\n    \
         String send(String payoutId, long amountMinor) {\n        return Failsafe.with(retryPolicy).get(() -> {\n            \
         String idempotencyKey = keys.keyFor(payoutId);\n            return api.payout(idempotencyKey, payoutId, amountMinor);\n        });\n    }\n}\n\n\
         interface PayoutApi {\n    String payout(String idempotencyKey, String payoutId, long amountMinor);\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("RandomPayoutKeys.java"),
        "import java.util.UUID;\n\nfinal class RandomPayoutKeys implements PayoutKeySource {\n    @Override\n    public String keyFor(String payoutId) {\n        return UUID.randomUUID().toString();\n    }\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("DerivedPayoutKeys.java"),
        "final class DerivedPayoutKeys implements PayoutKeySource {\n    public String /* ( /* */ keyFor(String payoutId) {\n        return \"p-\" + payoutId;\n    }\n}\n",
    )
    .unwrap();
    let (with, _) = assert_same(vec![dir], "Java comment holding /*");
    assert!(
        with.findings.iter().any(|f| f.rule == "key-in-retry-scope"
            && f.severity == idemlint::finding::Severity::Warning),
        "{:#?}",
        with.findings
    );
}
