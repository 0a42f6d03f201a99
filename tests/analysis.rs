//! Cross-file analysis on small projects: retry combinators inferred from their bodies in
//! another file (and through a wrapper), calls that never resolve across languages, and
//! order-sensitive flow. Each project is checked with and without the prefilter, which
//! must agree, and with `--only FILE` for each of its files, which must give the whole
//! run's findings of that file.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn project(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// The JSON report of `idemlint check . --format json` run in `dir`, with `extra` flags.
fn check_json(dir: &Path, extra: &[&str]) -> serde_json::Value {
    let out = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(dir)
        .args(["check", ".", "--format", "json", "--exit-zero"])
        .args(extra)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

/// An OkHttp interceptor that mints its key on every run (finding on line 10).
const PAY_KEY_INTERCEPTOR: &str = r#"package shop.net

import java.util.UUID
import okhttp3.Interceptor
import okhttp3.Response

class PayKeyInterceptor : Interceptor {
    override fun intercept(chain: Interceptor.Chain): Response {
        val request = chain.request().newBuilder()
            .header("Idempotency-Key", UUID.randomUUID().toString())
            .build()
        return chain.proceed(request)
    }
}
"#;

/// `(path, line, rule)` of every finding, sorted; asserts the prefilter changes nothing.
fn findings(dir: &Path) -> Vec<(String, u64, String)> {
    let run = |extra: &[&str]| {
        let v = check_json(dir, extra);
        let mut got: Vec<(String, u64, String)> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|f| {
                // A finding stands for its rule and the rules merged into it (`also`).
                let also = f["also"].as_array().cloned().unwrap_or_default();
                std::iter::once(f["rule"].clone())
                    .chain(also.into_iter().map(|a| a["rule"].clone()))
                    .map(|r| {
                        (
                            f["path"].as_str().unwrap().to_string(),
                            f["line"].as_u64().unwrap(),
                            r.as_str().unwrap().to_string(),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        got.sort();
        (got, v)
    };
    let (a, va) = run(&[]);
    let (b, _) = run(&["--no-prefilter"]);
    assert_eq!(a, b, "the prefilter changed the findings: {va:#}");
    let mut files: Vec<String> = Vec::new();
    source_files(dir, dir, &mut files);
    for (i, f) in files.iter().enumerate() {
        // Both spellings: `--only FILE` and the pre-commit hook's `--only -- FILE`.
        let (got, vo) = if i % 2 == 0 {
            run(&["--only", f])
        } else {
            run(&["--only", "--", f])
        };
        let whole = |v: &serde_json::Value| -> Vec<serde_json::Value> {
            v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|x| x["path"] == f.as_str())
                .cloned()
                .collect()
        };
        assert_eq!(
            vo["findings"].as_array().unwrap(),
            &whole(&va),
            "--only {f}: not the whole run's findings of {f}"
        );
        let expected: Vec<_> = a.iter().filter(|x| x.0 == *f).cloned().collect();
        assert_eq!(got, expected, "--only {f}");
    }
    a
}

/// Source files under `dir`, as paths relative to `root` with `/`.
fn source_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            source_files(root, &p, out);
        } else if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("rs" | "java" | "kt" | "kts")
        ) {
            let rel = p.strip_prefix(root).unwrap();
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

const KOTLIN_COMBINATOR: &str = r#"package shop.net

import java.io.IOException

suspend fun <T> resilient(block: suspend () -> T): T {
    repeat(3) {
        try {
            return block()
        } catch (e: IOException) {
        }
    }
    return block()
}

suspend fun <T> withPolicy(name: String, op: suspend () -> T): T = resilient(op)
"#;

#[test]
fn a_combinator_in_another_file_makes_its_lambda_a_retry_scope_directly_and_through_a_wrapper() {
    let dir = project(
        "combinator_cross_file",
        &[
            ("src/net/Resilience.kt", KOTLIN_COMBINATOR),
            (
                "src/billing/Billing.kt",
                r#"package shop.billing

import java.util.UUID

class Billing(private val api: PaymentsApi) {
    suspend fun direct(amount: Long) = resilient {
        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), amount = amount)
    }

    suspend fun wrapped(amount: Long) = withPolicy("charge") {
        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), amount = amount)
    }

    suspend fun hoisted(amount: Long): Charge {
        val key = UUID.randomUUID().toString()
        return resilient { api.createCharge(idempotencyKey = key, amount = amount) }
    }
}
"#,
            ),
        ],
    );
    let got = findings(&dir);
    let want = vec![
        (
            "src/billing/Billing.kt".to_string(),
            7,
            "key-in-retry-scope".to_string(),
        ),
        (
            "src/billing/Billing.kt".to_string(),
            11,
            "key-in-retry-scope".to_string(),
        ),
    ];
    assert_eq!(got, want);
}

#[test]
fn a_function_that_calls_its_block_once_is_not_a_combinator() {
    let dir = project(
        "not_a_combinator",
        &[
            (
                "src/Timed.kt",
                "suspend fun <T> timed(block: suspend () -> T): T {\n    val t0 = 1\n    try { return block() } finally { log(t0) }\n}\n",
            ),
            (
                "src/Billing.kt",
                "import java.util.UUID\nsuspend fun charge(api: Api) = timed {\n    api.createCharge(idempotencyKey = UUID.randomUUID().toString())\n}\n",
            ),
        ],
    );
    assert_eq!(findings(&dir), Vec::new());
}

#[test]
fn a_rust_call_never_resolves_to_a_java_declaration_of_the_same_name() {
    let dir = project(
        "cross_language",
        &[
            (
                "java/Client.java",
                r#"import java.util.UUID;
final class Client {
    void cleanup(Http http) {
        http.header("Idempotency-Key", UUID.randomUUID().toString());
    }
}
"#,
            ),
            (
                "src/cleaner.rs",
                r#"async fn clean_expired(db: &Db) -> Result<(), Error> {
    cleanup(db).await
}

async fn run(db: &Db) {
    loop {
        match clean_expired(db).await {
            Ok(()) => break,
            Err(e) => tracing::warn!("retrying: {e}"),
        }
    }
}
"#,
            ),
        ],
    );
    assert_eq!(findings(&dir), Vec::new());
}

#[test]
fn a_read_before_a_later_reassignment_does_not_depend_on_it() {
    let dir = project(
        "order_sensitive",
        &[(
            "Commands.java",
            r#"import java.time.OffsetDateTime;
final class Commands {
    @Retryable
    Result process(Store store, long id) {
        Command command = store.find(id);
        String idempotencyKey = command.getIdempotencyKey();
        command = new Command(OffsetDateTime.now());
        return store.save(command, idempotencyKey);
    }

    @Retryable
    Result processLoop(Store store, long id) {
        String key = "k";
        for (int attempt = 0; attempt < 3; attempt++) {
            String idempotencyKey = key;
            key = "k-" + System.currentTimeMillis();
            store.save(idempotencyKey);
        }
        return null;
    }
}
"#,
        )],
    );
    // The first read precedes the clock; in the loop, the clock comes round the back edge.
    let got = findings(&dir);
    assert!(
        got.iter().all(|(_, line, _)| *line != 7 && *line != 6),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|(_, line, rule)| *line == 16 && rule == "time-in-key"),
        "{got:?}"
    );
}

#[test]
fn java_unicode_escapes_in_identifiers_are_decoded_and_spans_map_back() {
    let text = "class EscJob {\n    Charge charge(PaymentsApi api, ChargeRequest body) {\n        return retryTemplate.execute(ctx -> {\n            String key = UUID.\\u0072andomUUID().toString();\n            return api.createCharge(key, body);\n        });\n    }\n}\ninterface PaymentsApi {\n    @POST(\"v1/charges\")\n    Call<Charge> createCharge(@Header(\"Idempotency-Key\") String key, @Body ChargeRequest body);\n}\n";
    let dir = project("java_unicode_escape", &[("EscJob.java", text)]);
    let out = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["check", "EscJob.java", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "key-in-retry-scope", "{v:#}");
    assert_eq!(f["line"], 4);
    // The span covers the escaped spelling as written: column 26 to the `)`.
    assert_eq!(f["column"], 26);
    assert_eq!(f["source"], "UUID.\\u0072andomUUID()");
    assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{v:#}");
}

/// javac compiles `"a\u0000b"` (the escape is decoded before tokenising, giving a NUL
/// inside the literal); decoded, the NUL ended tree-sitter's input and the file was a
/// syntax error (chargebee-java's `JsonUtil.java`), failing `--strict` on valid code.
#[test]
fn java_nul_unicode_escape_is_no_syntax_error() {
    let text = "class V {\n    String q = \"a\\u0000b\";\n    String p = \"a\\uu0000b\";\n    String r = \"\\u0041\";\n    void f() { g(); }\n}\n";
    let dir = project("java_nul_escape", &[("V.java", text)]);
    let out = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .args([
            "check",
            "V.java",
            "--format",
            "json",
            "--no-prefilter",
            "--strict",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["errors"].as_array().unwrap().len(), 0, "{v:#}");
    assert_eq!(out.status.code(), Some(0), "{v:#}");
}

/// Past the per-file limit, the errors not listed are counted on the last one listed: no
/// entry without a line (it sorted first and counted as a problem of its own).
#[test]
fn syntax_errors_past_the_limit_are_counted_on_the_last_one_shown() {
    let mut text = String::from("class E {\n");
    for f in ["a", "b", "c", "d", "e", "f", "g"] {
        text.push_str(&format!("  void {f}() {{ int x = ; }}\n"));
    }
    text.push_str("}\n");
    let dir = project("many_syntax_errors", &[("E.java", &text)]);
    let out = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["check", "E.java", "--format", "json", "--no-prefilter"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 5, "{v:#}");
    assert!(errors.iter().all(|e| e["line"].is_u64()), "{v:#}");
    let lines: Vec<u64> = errors.iter().map(|e| e["line"].as_u64().unwrap()).collect();
    assert_eq!(lines, [2, 3, 4, 5, 6]);
    assert!(
        errors[4]["message"]
            .as_str()
            .unwrap()
            .ends_with("; 2 more syntax error(s) in this file not shown"),
        "{v:#}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("5 problems in 1 file"), "{stderr}");
}

/// An Apache HttpClient interceptor that adds a key only when the request has none
/// (`containsHeader`, 4.x and 5.x `HttpMessage`) still mints on every retry, since each
/// retry starts from the original headers; the message names the fallback.
#[test]
fn apache_contains_header_guard_is_named_as_the_fallback() {
    let text = "import java.util.UUID;\nimport org.apache.http.HttpRequest;\nimport org.apache.http.HttpRequestInterceptor;\nimport org.apache.http.protocol.HttpContext;\n\nclass KeyInterceptor implements HttpRequestInterceptor {\n    @Override\n    public void process(HttpRequest request, HttpContext context) {\n        if (!request.containsHeader(\"Idempotency-Key\")) {\n            request.addHeader(\"Idempotency-Key\", UUID.randomUUID().toString());\n        }\n    }\n}\n";
    let dir = project("apache_guard", &[("KeyInterceptor.java", text)]);
    let v = check_json(&dir, &[]);
    let f = &v["findings"][0];
    assert_eq!(f["rule"], "key-in-interceptor", "{v:#}");
    assert_eq!(f["line"], 10);
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("whenever the request carries no key of its own"),
        "{v:#}"
    );
}

#[test]
fn a_flow_budget_that_runs_out_is_reported_not_silent() {
    let n = 20_000;
    let mut text = String::from(
        "import java.util.UUID\nsuspend fun f(api: Api) = retryOnTransient {\n    val k0 = UUID.randomUUID().toString()\n",
    );
    for i in 0..n {
        text.push_str(&format!("    val k{} = k{i}\n", i + 1));
    }
    text.push_str(&format!("    api.send(idempotencyKey = k{n})\n}}\n"));
    let dir = project("flow_budget", &[("Alias.kt", &text)]);
    let out = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(&dir)
        .args(["check", "Alias.kt", "--format", "json", "--exit-zero"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors = v["errors"].as_array().unwrap();
    assert!(
        errors
            .iter()
            .any(|e| e["message"].as_str().unwrap().contains("value-flow budget")),
        "{v:#}"
    );
}

const KOTLIN_KEY_INTERCEPTOR: &str = r#"package shop.net

import java.util.UUID
import okhttp3.Interceptor
import okhttp3.OkHttpClient
import okhttp3.Request
import okhttp3.Response

class KeyInterceptor : Interceptor {
    override fun intercept(chain: Interceptor.Chain): Response {
        val request = chain.request().withKey()
        return chain.proceed(request)
    }

    private fun Request.withKey(): Request =
        newBuilder().header("Idempotency-Key", UUID.randomUUID().toString()).build()
}

fun client(): OkHttpClient = OkHttpClient.Builder().addInterceptor(KeyInterceptor()).build()
"#;

const KOTLIN_CAPTURE_API: &str = r#"package shop.net

import retrofit2.http.POST
import retrofit2.http.Path

interface CaptureApi {
    @POST("/invoices/{id}/capture")
    suspend fun capture(@Path("id") id: String): String
}

class CaptureRepository(private val api: CaptureApi) {
    suspend fun captureInvoice(id: String): String = api.capture(id)
}
"#;

/// An OkHttp application interceptor runs again only when the call is retried at the call
/// level: a polling loop that re-invokes a repository method reaching a Retrofit endpoint
/// (in another file, through a labelled `return@launch`) is that evidence; a loop around a
/// database call is not, and the interceptor's key is then only `interceptor-mints-key`.
#[test]
fn call_level_retry_evidence_must_reach_an_http_call() {
    let poller = r#"package shop.ui

import kotlinx.coroutines.delay
import kotlinx.coroutines.launch

class CaptureViewModel(private val repo: CaptureRepository, private val db: Db) {
    fun poll(id: String) {
        scope.launch {
            var waited = 0L
            while (waited < 30_000) {
                val result = REPO_CALL
                if (isCaptureRetryable(result)) {
                    delay(500)
                    waited += 500
                } else {
                    return@launch
                }
            }
        }
    }

    private fun isCaptureRetryable(r: String) = r == "pending"
}
"#;
    let http = project(
        "call_level_http",
        &[
            ("src/net/KeyInterceptor.kt", KOTLIN_KEY_INTERCEPTOR),
            ("src/net/CaptureApi.kt", KOTLIN_CAPTURE_API),
            (
                "src/ui/CaptureViewModel.kt",
                &poller.replace("REPO_CALL", "repo.captureInvoice(id)"),
            ),
        ],
    );
    assert_eq!(
        findings(&http),
        vec![(
            "src/net/KeyInterceptor.kt".to_string(),
            11,
            "key-in-interceptor".to_string()
        )]
    );
    let db = project(
        "call_level_db",
        &[
            ("src/net/KeyInterceptor.kt", KOTLIN_KEY_INTERCEPTOR),
            ("src/net/CaptureApi.kt", KOTLIN_CAPTURE_API),
            (
                "src/ui/CaptureViewModel.kt",
                &poller.replace("REPO_CALL", "db.loadStatus(id)"),
            ),
        ],
    );
    assert_eq!(
        findings(&db),
        vec![(
            "src/net/KeyInterceptor.kt".to_string(),
            11,
            "interceptor-mints-key".to_string()
        )]
    );
}

/// Call-level retry evidence belongs to a client library: a `@Retryable` method around a
/// `RestTemplate` exchange never runs an OkHttp interceptor again, and a retry around a
/// Retrofit endpoint or OkHttp's `newCall` never runs a Spring `ClientHttpRequestInterceptor`
/// again. Each interceptor is per attempt only under a retry of a call through its own
/// library.
#[test]
fn call_level_retry_evidence_must_reach_the_interceptors_own_client_library() {
    let rest_retry = r#"package shop.pay;

import org.springframework.retry.annotation.Retryable;
import org.springframework.web.client.RestTemplate;

public class LedgerClient {
    private final RestTemplate restTemplate;

    public LedgerClient(RestTemplate restTemplate) {
        this.restTemplate = restTemplate;
    }

    @Retryable(maxAttempts = 3)
    public String post(String url, Object body) {
        return restTemplate.postForObject(url, body, String.class);
    }
}
"#;
    let retrofit_retry = r#"package shop.pay;

import org.springframework.retry.annotation.Retryable;

public class CaptureJob {
    private final shop.net.CaptureRepository repo;

    public CaptureJob(shop.net.CaptureRepository repo) {
        this.repo = repo;
    }

    @Retryable(maxAttempts = 3)
    public Object capture(String id) {
        return repo.captureInvoice(id);
    }
}
"#;
    let newcall_retry = r#"package shop.pay

import okhttp3.OkHttpClient
import okhttp3.Request

class Refunds(private val http: OkHttpClient) {
    fun refund(req: Request): Int {
        var attempt = 0
        while (true) {
            try {
                return http.newCall(req).execute().code
            } catch (e: java.io.IOException) {
                if (++attempt >= 3) throw e
            }
        }
    }
}
"#;
    let spring_interceptor = r#"package shop.pay;

import java.io.IOException;
import java.util.UUID;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

public class LedgerKeyInterceptor implements ClientHttpRequestInterceptor {
    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution) throws IOException {
        request.getHeaders().set("Idempotency-Key", UUID.randomUUID().toString());
        return execution.execute(request, body);
    }
}
"#;
    let okhttp = "src/net/KeyInterceptor.kt";
    let spring = "src/pay/LedgerKeyInterceptor.java";
    let cases: [(&str, &str, &str, &str); 3] = [
        (
            "rest",
            "src/pay/LedgerClient.java",
            rest_retry,
            "interceptor-mints-key",
        ),
        (
            "retrofit",
            "src/pay/CaptureJob.java",
            retrofit_retry,
            "key-in-interceptor",
        ),
        (
            "newcall",
            "src/pay/Refunds.kt",
            newcall_retry,
            "key-in-interceptor",
        ),
    ];
    for (name, path, retry, okhttp_rule) in cases {
        let dir = project(
            &format!("client_library_{name}"),
            &[
                (okhttp, KOTLIN_KEY_INTERCEPTOR),
                ("src/net/CaptureApi.kt", KOTLIN_CAPTURE_API),
                (spring, spring_interceptor),
                (path, retry),
            ],
        );
        let spring_rule = if name == "rest" {
            "key-in-interceptor"
        } else {
            "interceptor-mints-key"
        };
        assert_eq!(
            findings(&dir),
            vec![
                (okhttp.to_string(), 11, okhttp_rule.to_string()),
                (spring.to_string(), 13, spring_rule.to_string()),
            ],
            "{name}"
        );
    }
}

/// An OkHttp application interceptor runs again under a call-level retry only of calls
/// made through the client it is registered on: a Retrofit service is tied to its client
/// by `.client(x)`, and a retry of an endpoint of a service on another client is no
/// evidence. When a service's client cannot be told (a parameter), any retry reaching
/// OkHttp still counts.
#[test]
fn call_level_retry_evidence_is_tied_to_the_client_the_interceptor_is_registered_on() {
    let interceptor = PAY_KEY_INTERCEPTOR;
    let network = r#"package shop.net

import okhttp3.OkHttpClient
import retrofit2.Retrofit

object Network {
    private val paymentsClient = OkHttpClient.Builder().addInterceptor(PayKeyInterceptor()).build()
    private val plainClient = OkHttpClient.Builder().build()
    val capture: CaptureApi = Retrofit.Builder().baseUrl("https://pay.example/")
        .client(paymentsClient).build().create(CaptureApi::class.java)
    val analytics: AnalyticsApi = Retrofit.Builder().baseUrl("https://stats.example/")
        .client(plainClient).build().create(AnalyticsApi::class.java)
}
"#;
    let apis = r#"package shop.net

import retrofit2.http.POST
import retrofit2.http.Path

interface CaptureApi {
    @POST("/invoices/{id}/capture")
    fun capture(@Path("id") id: String): String
}

interface AnalyticsApi {
    @POST("/events/{name}")
    fun track(@Path("name") name: String): String
}
"#;
    let job = |call: &str| {
        format!(
            r#"package shop.jobs;

import org.springframework.retry.annotation.Retryable;

public class RetriedJob {{
    @Retryable(maxAttempts = 3)
    public Object run(String id) {{
        return {call};
    }}
}}
"#
        )
    };
    let unknown_client = r#"package shop.net

import okhttp3.OkHttpClient
import retrofit2.Retrofit

fun analyticsFor(client: OkHttpClient): AnalyticsApi =
    Retrofit.Builder().baseUrl("https://stats.example/").client(client).build()
        .create(AnalyticsApi::class.java)
"#;
    let at = "src/net/PayKeyInterceptor.kt";
    let cases: [(&str, &str, bool, &str); 3] = [
        (
            "other_client",
            "shop.net.Network.INSTANCE.getAnalytics().track(id)",
            false,
            "interceptor-mints-key",
        ),
        (
            "own_client",
            "shop.net.Network.INSTANCE.getCapture().capture(id)",
            false,
            "key-in-interceptor",
        ),
        (
            "unknown_client",
            "shop.net.Network.INSTANCE.getAnalytics().track(id)",
            true,
            "key-in-interceptor",
        ),
    ];
    for (name, call, with_unknown, rule) in cases {
        let job = job(call);
        let mut files = vec![
            (at, interceptor),
            ("src/net/Network.kt", network),
            ("src/net/Apis.kt", apis),
            ("src/jobs/RetriedJob.java", job.as_str()),
        ];
        if with_unknown {
            files.push(("src/net/AnalyticsFactory.kt", unknown_client));
        }
        let dir = project(&format!("client_tie_{name}"), &files);
        assert_eq!(
            findings(&dir),
            vec![(at.to_string(), 10, rule.to_string())],
            "{name}"
        );
    }
}

/// `call.clone()` is call-level retry evidence for the interceptors of the client the
/// cloned call was made through: a call of a service on another client is none; a call
/// whose client cannot be told (a callback's `call` parameter) counts for every client.
#[test]
fn cloned_calls_are_evidence_only_for_their_own_client() {
    let interceptor = PAY_KEY_INTERCEPTOR.replace("PayKeyInterceptor", "CloneKeyInterceptor");
    let network = r#"package shop.net

import okhttp3.OkHttpClient
import retrofit2.Retrofit

object CloneNetwork {
    private val payClient = OkHttpClient.Builder().addInterceptor(CloneKeyInterceptor()).build()
    private val statsClient = OkHttpClient.Builder().build()
    val refunds: RefundCallApi = Retrofit.Builder().baseUrl("https://pay.example/")
        .client(payClient).build().create(RefundCallApi::class.java)
    val metrics: MetricCallApi = Retrofit.Builder().baseUrl("https://stats.example/")
        .client(statsClient).build().create(MetricCallApi::class.java)
}
"#;
    let apis = r#"package shop.net

import retrofit2.Call
import retrofit2.http.POST
import retrofit2.http.Path

interface RefundCallApi {
    @POST("/refunds/{id}")
    fun refund(@Path("id") id: String): Call<String>
}

interface MetricCallApi {
    @POST("/metrics/{name}")
    fun record(@Path("name") name: String): Call<String>
}
"#;
    let sender = |body: &str| {
        format!(
            r#"package shop.jobs

import retrofit2.Call
import retrofit2.Callback
import retrofit2.Response
import shop.net.MetricCallApi
import shop.net.RefundCallApi

class Resender(private val refunds: RefundCallApi, private val metrics: MetricCallApi) {{
{body}
}}
"#
        )
    };
    let other = "    fun again(name: String) {\n        val call = metrics.record(name)\n        call.execute()\n        call.clone().execute()\n    }";
    let own = "    fun again(id: String) {\n        val call = refunds.refund(id)\n        call.execute()\n        call.clone().execute()\n    }";
    let callback = "    fun again(name: String) {\n        metrics.record(name).enqueue(object : Callback<String> {\n            override fun onResponse(call: Call<String>, response: Response<String>) {}\n            override fun onFailure(call: Call<String>, t: Throwable) {\n                call.clone().enqueue(this)\n            }\n        })\n    }";
    let at = "src/net/CloneKeyInterceptor.kt";
    for (name, body, rule) in [
        ("clone_other_client", other, "interceptor-mints-key"),
        ("clone_own_client", own, "key-in-interceptor"),
        ("clone_unknown_client", callback, "key-in-interceptor"),
    ] {
        let s = sender(body);
        let dir = project(
            name,
            &[
                (at, interceptor.as_str()),
                ("src/net/CloneNetwork.kt", network),
                ("src/net/CallApis.kt", apis),
                ("src/jobs/Resender.kt", s.as_str()),
            ],
        );
        assert_eq!(
            findings(&dir),
            vec![(at.to_string(), 10, rule.to_string())],
            "{name}"
        );
    }
}

/// A wrapper that passes its block on to `Helper.retry(block = block)` is a combinator
/// when the receiver names the type whose `retry` retries it, even though another `retry`
/// of the same arity (on another type) does not.
#[test]
fn a_wrapper_resolves_its_callee_by_the_receiver_type_and_named_arguments() {
    let dir = project(
        "wrapper_receiver",
        &[
            (
                "src/net/RetryHelper.kt",
                r#"package shop.net

import java.io.IOException

object RetryHelper {
    suspend fun <T> retry(block: suspend () -> T, times: Int = 3): T {
        repeat(times) {
            try {
                return block()
            } catch (e: IOException) {
            }
        }
        return block()
    }
}

class Screen {
    fun <T> retry(op: suspend () -> T, times: Int = 0) {
        println(times)
    }
}

suspend fun <T> guarded(block: suspend () -> T): T = RetryHelper.retry(block = block)
"#,
            ),
            (
                "src/billing/Billing.kt",
                r#"package shop.billing

import java.util.UUID

class Billing(private val api: PaymentsApi) {
    suspend fun charge(amount: Long) = guarded {
        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), amount = amount)
    }
}
"#,
            ),
        ],
    );
    assert_eq!(
        findings(&dir),
        vec![(
            "src/billing/Billing.kt".to_string(),
            7,
            "key-in-retry-scope".to_string()
        )]
    );
}

/// The mint precedes the interceptor's own retry of `proceed`: every attempt it makes
/// shares the key, and with no call-level retry in the project nothing is reported; the
/// same interceptor without its own loop mints per call (`interceptor-mints-key`).
#[test]
fn a_key_minted_before_the_interceptors_own_retry_loop_is_not_reported() {
    let java = r#"import java.io.IOException;
import java.util.UUID;
import okhttp3.Interceptor;
import okhttp3.Request;
import okhttp3.Response;

OWN
final class Keys {
    static Request withKey(Request request) {
        return request.newBuilder().header("Idempotency-Key", UUID.randomUUID().toString()).build();
    }
}
"#
    .replace("OWN", OWN_JAVA);
    let kotlin = r#"import java.io.IOException
import java.util.UUID
import okhttp3.Interceptor
import okhttp3.Request
import okhttp3.Response

class RetryingKeyInterceptor : Interceptor {
    override fun intercept(chain: Interceptor.Chain): Response {
        val request = chain.request().withIdempotencyKey()
        repeat(3) {
            try {
                return chain.proceed(request)
            } catch (_: IOException) {
            }
        }
        return chain.proceed(request)
    }
}

private fun Request.withIdempotencyKey(): Request =
    newBuilder().header("Idempotency-Key", UUID.randomUUID().toString()).build()
"#;
    let dir = project(
        "own_retry_loop",
        &[
            ("src/KeyedRetryInterceptor.java", &java),
            ("src/RetryingKeyInterceptor.kt", kotlin),
        ],
    );
    assert_eq!(findings(&dir), vec![]);
    let without_loop = kotlin.replace(
        "        repeat(3) {\n            try {\n                return chain.proceed(request)\n            } catch (_: IOException) {\n            }\n        }\n",
        "",
    );
    assert_ne!(without_loop, kotlin);
    let dir = project(
        "own_retry_loop_removed",
        &[("src/RetryingKeyInterceptor.kt", &without_loop)],
    );
    assert_eq!(
        findings(&dir),
        vec![(
            "src/RetryingKeyInterceptor.kt".to_string(),
            9,
            "interceptor-mints-key".to_string()
        )]
    );
}

const OWN_JAVA: &str = r#"class KeyedRetryInterceptor implements Interceptor {
    @Override
    public Response intercept(Interceptor.Chain chain) throws IOException {
        Request request = Keys.withKey(chain.request());
        for (int attempt = 0; attempt < 3; attempt++) {
            try {
                return chain.proceed(request);
            } catch (IOException e) {
                // try again with the same request
            }
        }
        return chain.proceed(request);
    }
}

"#;

/// Runs `check` and returns the JSON report (no prefilter comparison).
fn report(dir: &Path) -> serde_json::Value {
    let out = Command::cargo_bin("idemlint")
        .unwrap()
        .current_dir(dir)
        .args(["check", ".", "--format", "json", "--exit-zero"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

const WORKFLOW_SERVICE: &str = r#"package wf;

public interface WorkflowService {
    Response start(StartRequest request) throws Exception;
}
"#;

const TCHANNEL_SERVICE: &str = r#"package wf;

import java.util.UUID;

public class TChannelService implements WorkflowService {
    @Override
    public Response start(StartRequest request) throws Exception {
        initialize(request);
        return call(request);
    }

    private void initialize(StartRequest request) {
        request.setIdempotencyKey(UUID.randomUUID().toString());
    }

    private Response call(StartRequest request) { return new Response(); }
}
"#;

const WORKFLOW_CLIENT: &str = r#"package wf;

public class WorkflowClient {
    private final WorkflowService service;

    WorkflowClient(WorkflowService service) { this.service = service; }

    Response submit(StartRequest request) throws Exception {
        return Retryer.retry(() -> service.start(request));
    }
}
"#;

const RETRYER: &str = r#"package wf;

class Retryer {
    interface Op<R> { R apply() throws Exception; }

    static <R> R retry(Op<R> op) throws Exception {
        for (int attempt = 0; ; attempt++) {
            try {
                return op.apply();
            } catch (Exception e) {
                if (attempt >= 3) throw e;
            }
        }
    }
}
"#;

/// A call through an interface resolves to its implementations (the bodiless interface
/// method is left out). When every implementation mints the key the finding is an error
/// and names each mint; when only some do, it is reported one severity lower with the
/// ambiguity named, never dropped.
#[test]
fn a_call_through_an_interface_needs_every_implementation_to_agree_or_says_it_is_ambiguous() {
    let grpc = r#"package wf;

import java.util.UUID;

public class GrpcService implements WorkflowService {
    @Override
    public Response start(StartRequest request) throws Exception {
        request.setIdempotencyKey(UUID.randomUUID().toString());
        return new Response();
    }
}
"#;
    let fake = r#"package wf;

public class RecordingService implements WorkflowService {
    @Override
    public Response start(StartRequest request) { return new Response(); }
}
"#;
    let base = [
        ("src/wf/WorkflowService.java", WORKFLOW_SERVICE),
        ("src/wf/TChannelService.java", TCHANNEL_SERVICE),
        ("src/wf/WorkflowClient.java", WORKFLOW_CLIENT),
        ("src/wf/Retryer.java", RETRYER),
        ("src/wf/GrpcService.java", grpc),
    ];
    let agreed = project("interface_agreed", &base);
    assert_eq!(
        findings(&agreed),
        vec![(
            "src/wf/WorkflowClient.java".to_string(),
            9,
            "key-in-retry-scope".to_string()
        )]
    );
    let v = report(&agreed);
    let f = &v["findings"][0];
    assert_eq!(f["severity"], "error", "{f:#}");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("`start()` mints a new idempotency key")
            && msg.contains("GrpcService.java:8")
            && msg.contains("TChannelService.java:13"),
        "{msg}"
    );

    let mut files = base.to_vec();
    files.push(("src/wf/RecordingService.java", fake));
    let ambiguous = project("interface_ambiguous", &files);
    assert_eq!(
        findings(&ambiguous),
        vec![(
            "src/wf/WorkflowClient.java".to_string(),
            9,
            "key-in-retry-scope".to_string()
        )]
    );
    let v = report(&ambiguous);
    let f = &v["findings"][0];
    assert_eq!(f["severity"], "warning", "{f:#}");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("`start()` may mint a new idempotency key (2 of the 3 declarations"),
        "{msg}"
    );
}

/// A helper that returns the key, called through an interface whose implementations live in
/// other files: when every implementation returns a fresh value the finding is an error;
/// when only some do it is reported one severity lower, naming the ambiguity (never
/// dropped); when none does there is no finding. Kotlin expression-bodied overrides count
/// as implementations (not as bodiless declarations).
#[test]
fn a_fresh_helper_behind_an_interface_needs_every_implementation_or_says_it_is_ambiguous() {
    let source = r#"package pay

interface KeySource {
    fun keyFor(orderId: String): String
}
"#;
    let random = r#"package pay

import java.util.UUID

class RandomKeys : KeySource {
    override fun keyFor(orderId: String): String = UUID.randomUUID().toString()
}
"#;
    let derived = r#"package pay

class DerivedKeys : KeySource {
    override fun keyFor(orderId: String): String = "order-$orderId"
}
"#;
    let charger = r#"package pay

import org.springframework.retry.annotation.Retryable

class Charger(private val keys: KeySource, private val api: ChargeApi) {
    @Retryable
    fun charge(orderId: String, cents: Long): String {
        val idempotencyKey = keys.keyFor(orderId)
        return api.charge(idempotencyKey, orderId, cents)
    }
}

interface ChargeApi {
    fun charge(idempotencyKey: String, orderId: String, cents: Long): String
}
"#;
    let base = [
        ("src/pay/KeySource.kt", source),
        ("src/pay/Charger.kt", charger),
    ];
    let expect = vec![(
        "src/pay/Charger.kt".to_string(),
        8,
        "key-in-retry-scope".to_string(),
    )];

    let mut files = base.to_vec();
    files.push(("src/pay/RandomKeys.kt", random));
    let dir = project("fresh_helper_all_implementations", &files);
    assert_eq!(findings(&dir), expect);
    let v = report(&dir);
    let f = &v["findings"][0];
    assert_eq!(f["severity"], "error", "{f:#}");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("`keyFor()` (which returns `UUID.randomUUID()` from src/pay/RandomKeys.kt:6)"),
        "{msg}"
    );

    files.push(("src/pay/DerivedKeys.kt", derived));
    let dir = project("fresh_helper_some_implementations", &files);
    assert_eq!(findings(&dir), expect);
    let v = report(&dir);
    let f = &v["findings"][0];
    assert_eq!(f["severity"], "warning", "{f:#}");
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("`keyFor()` (which may return `UUID.randomUUID()` from src/pay/RandomKeys.kt:6: 1 of the 2 declarations it may call does;"),
        "{msg}"
    );

    let mut files = base.to_vec();
    files.push(("src/pay/DerivedKeys.kt", derived));
    let dir = project("fresh_helper_no_implementation", &files);
    assert_eq!(findings(&dir), Vec::<(String, u64, String)>::new());
}

/// One call further down: a helper that returns what `Ids.newId()` returns is fresh when
/// the declarations that call's receiver resolves to are, even though an unrelated
/// namesake elsewhere (`Names.newId(id)`) is not; and not fresh when the receiver's own
/// declaration is not (`Stable.newId()`). Both with and without the prefilter (which must
/// parse the receiver's file even though the name has a settled, non-fresh declaration).
#[test]
fn a_helper_one_call_down_resolves_its_callee_by_receiver_not_by_name() {
    let ids = "package p\n\nimport java.util.UUID\n\nobject Ids {\n    fun newId(): String = UUID.randomUUID().toString()\n}\n";
    let names = "package p\n\nobject Names {\n    fun newId(id: String): String = \"k-$id\"\n}\n";
    let stable = "package p\n\nobject Stable {\n    fun newId(): String = \"stable\"\n}\n";
    let sender = r#"package p

import org.springframework.retry.annotation.Retryable

class RefundSender(private val api: RefundApi) {
    @Retryable
    fun send(refundId: String): String {
        val idempotencyKey = freshKey()
        return api.refund(idempotencyKey, refundId)
    }

    @Retryable
    fun resend(refundId: String): String {
        val idempotencyKey = stableKey()
        return api.refund(idempotencyKey, refundId)
    }

    private fun freshKey(): String = Ids.newId()

    private fun stableKey(): String = Stable.newId()
}

interface RefundApi {
    fun refund(idempotencyKey: String, refundId: String): String
}
"#;
    let dir = project(
        "helper_one_call_down_by_receiver",
        &[
            ("src/p/Ids.kt", ids),
            ("src/p/Names.kt", names),
            ("src/p/Stable.kt", stable),
            ("src/p/RefundSender.kt", sender),
        ],
    );
    assert_eq!(
        findings(&dir),
        vec![(
            "src/p/RefundSender.kt".to_string(),
            8,
            "key-in-retry-scope".to_string()
        )]
    );
    let v = report(&dir);
    let msg = v["findings"][0]["message"].as_str().unwrap();
    assert!(
        msg.contains("`freshKey()` (which returns `UUID.randomUUID()` from src/p/Ids.kt:6)"),
        "{msg}"
    );
}

/// Production code cannot call test code (Gradle and Maven compile `src/main` without
/// `src/test`): a test builder whose `build()` mints a key does not make a production
/// builder chain's `build()` mint one, and the receiver of a chain is its last call
/// (`Refund.builder().id(..).build()` is called on `id(..)`, not on `builder()`).
#[test]
fn production_calls_never_resolve_to_test_sources() {
    let service = r#"package pay;

import org.springframework.retry.annotation.Retryable;

public class RefundService {
    private final Gateway gateway;

    @Retryable
    public void refund(String id) {
        Refund r = Refund.builder().id(id).build();
        RefundRequestBuilder requestBuilder = new RefundRequestBuilder();
        requestBuilder.build();
        gateway.send(r, "refund-" + id);
    }
}
"#;
    let test_builder = r#"package pay;

import java.util.UUID;

public class RefundRequestBuilder {
    private String idempotencyKey;

    public RefundRequestBuilder build() {
        this.idempotencyKey = UUID.randomUUID().toString();
        request.setIdempotencyKey(idempotencyKey);
        return this;
    }
}
"#;
    let files = [
        ("src/main/java/pay/RefundService.java", service),
        ("src/test/java/pay/RefundRequestBuilder.java", test_builder),
    ];
    let dir = project("test_sources_invisible", &files);
    assert_eq!(findings(&dir), Vec::<(String, u64, String)>::new());

    // The same builder in production code is what `requestBuilder.build()` calls (its
    // declared type); the chain's `build()` still resolves to nothing.
    let files = [
        ("src/main/java/pay/RefundService.java", service),
        ("src/main/java/pay/RefundRequestBuilder.java", test_builder),
    ];
    let dir = project("main_sources_visible", &files);
    assert_eq!(
        findings(&dir),
        vec![(
            "src/main/java/pay/RefundService.java".to_string(),
            12,
            "key-in-retry-scope".to_string()
        )]
    );
}

/// A package named `tests` inside a main source set (`src/main/java/com/acme/tests/`) is
/// production code: only the directories above the source set's language root say what
/// the layout is (a corpus project's `com.playtomic.tests.wallet` hid its findings).
#[test]
fn packages_named_tests_in_main_sources_are_production_code() {
    let service = r#"package com.acme.tests.pay;

import org.springframework.retry.annotation.Retryable;

public class RefundService {
    private final RefundRequestBuilder requestBuilder = new RefundRequestBuilder();

    @Retryable
    public void refund(String id) {
        requestBuilder.build();
    }
}
"#;
    let builder = r#"package com.acme.tests.pay;

import java.util.UUID;

public class RefundRequestBuilder {
    private String idempotencyKey;

    public RefundRequestBuilder build() {
        this.idempotencyKey = UUID.randomUUID().toString();
        return this;
    }
}
"#;
    let files = [
        (
            "src/main/java/com/acme/tests/pay/RefundService.java",
            service,
        ),
        (
            "src/main/java/com/acme/tests/pay/RefundRequestBuilder.java",
            builder,
        ),
    ];
    let dir = project("tests_package_in_main", &files);
    assert_eq!(
        findings(&dir),
        vec![(
            "src/main/java/com/acme/tests/pay/RefundService.java".to_string(),
            10,
            "key-in-retry-scope".to_string()
        )]
    );
    // The builder in the test source set stays invisible to production code.
    let files = [
        (
            "src/main/java/com/acme/tests/pay/RefundService.java",
            service,
        ),
        (
            "src/test/java/com/acme/tests/pay/RefundRequestBuilder.java",
            builder,
        ),
    ];
    let dir = project("tests_package_in_test", &files);
    assert_eq!(findings(&dir), Vec::<(String, u64, String)>::new());
}

/// A paced loop in test or benchmark code (a load test's signal sender) runs in one
/// process, not on every replica: `unlocked-scheduled-job` is a production-code rule. The
/// same loop under `src/` or in an example program (which users copy) is reported.
#[test]
fn scheduled_jobs_in_test_sources_are_not_replicated() {
    let job = r#"use std::time::Duration;
use uuid::Uuid;

pub async fn sender(client: reqwest::Client) {
    loop {
        tokio::time::sleep(Duration::from_secs(5)).await;
        let idempotency_key = Uuid::new_v4().to_string();
        let _ = client
            .post("https://payments.example.com/v1/charges")
            .header("Idempotency-Key", idempotency_key)
            .send()
            .await;
    }
}

pub async fn start(client: reqwest::Client) {
    tokio::spawn(sender(client));
}
"#;
    for (path, expected) in [
        ("tests/load.rs", vec![]),
        ("crates/core/benches/send.rs", vec![]),
        (
            "src/sender.rs",
            vec![(
                "src/sender.rs".to_string(),
                7,
                "unlocked-scheduled-job".to_string(),
            )],
        ),
        (
            "examples/sender.rs",
            vec![(
                "examples/sender.rs".to_string(),
                7,
                "unlocked-scheduled-job".to_string(),
            )],
        ),
    ] {
        let dir = project(&format!("sched_{}", path.replace('/', "_")), &[(path, job)]);
        assert_eq!(findings(&dir), expected, "{path}");
    }
}

/// A Spring `ClientHttpRequestInterceptor` runs once per exchange: with no call-level retry
/// in the project its fallback key is `interceptor-mints-key`; once a `@Retryable` method
/// sends a request through `RestTemplate`, every attempt runs the interceptor again and it
/// is `key-in-interceptor`.
#[test]
fn spring_client_interceptor_is_per_attempt_under_call_level_retry() {
    let interceptor = r#"package pay;

import java.io.IOException;
import java.util.UUID;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;

public class KeyInterceptor implements ClientHttpRequestInterceptor {
    @Override
    public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution) throws IOException {
        if (!request.getHeaders().containsKey("Idempotency-Key")) {
            request.getHeaders().set("Idempotency-Key", UUID.randomUUID().toString());
        }
        return execution.execute(request, body);
    }
}
"#;
    let client = |annotation: &str| {
        format!(
            r#"package pay;

import org.springframework.retry.annotation.Retryable;
import org.springframework.web.client.RestTemplate;

public class RestService {{
    private final RestTemplate restTemplate;

    public RestService(RestTemplate restTemplate) {{
        this.restTemplate = restTemplate;
    }}

    {annotation}
    public String post(String url, Object body) {{
        return restTemplate.postForObject(url, body, String.class);
    }}
}}
"#
        )
    };
    let at = "src/main/java/pay/KeyInterceptor.java";
    for (annotation, rule) in [
        ("", "interceptor-mints-key"),
        (
            "@Retryable(retryFor = Exception.class)",
            "key-in-interceptor",
        ),
    ] {
        let service = client(annotation);
        let files = [
            (at, interceptor),
            ("src/main/java/pay/RestService.java", &service),
        ];
        let dir = project(&format!("spring_interceptor_{rule}"), &files);
        assert_eq!(
            findings(&dir),
            vec![(at.to_string(), 14, rule.to_string())],
            "{annotation}"
        );
    }
}

/// A test that builds a unique key from the clock runs once: `time-in-key` does not report
/// it in test sources unless a retry boundary re-evaluates it (then it is reported), and
/// reports the same line in production code.
#[test]
fn clock_keys_in_tests_are_reported_only_under_a_retry() {
    let once = r#"package pay;

public class ChargeIT {
    void charges(Client client) {
        String idempotencyKey = "test-" + System.currentTimeMillis();
        client.charge(100, idempotencyKey);
    }
}
"#;
    let retried = r#"package pay;

import org.springframework.retry.annotation.Retryable;

public class ChargeIT {
    @Retryable
    void charges(Client client) {
        String idempotencyKey = "test-" + System.currentTimeMillis();
        client.charge(100, idempotencyKey);
    }
}
"#;
    // Under the retry the clock is one finding of the boundary's rule that also names
    // `time-in-key` (listed here as both rules).
    for (n, path, text, want) in [
        (0, "src/test/java/pay/ChargeIT.java", once, vec![]),
        (
            1,
            "src/main/java/pay/ChargeIT.java",
            once,
            vec![(5, "time-in-key")],
        ),
        (
            2,
            "src/test/java/pay/ChargeIT.java",
            retried,
            vec![(8, "key-in-retry-scope"), (8, "time-in-key")],
        ),
    ] {
        let dir = project(&format!("clock_test_{n}"), &[(path, text)]);
        let want: Vec<(String, u64, String)> = want
            .into_iter()
            .map(|(l, r)| (path.to_string(), l, r.to_string()))
            .collect();
        assert_eq!(findings(&dir), want, "{path}");
    }
}

/// A helper's return value is fresh through a call only when the call's receiver resolves
/// to a project declaration: `headers.get(name)` on a `HeaderMap` is the library's `get`,
/// not the project's `Transfers::get` that mints a UUID, so `header_str` returns nothing
/// fresh; a call on a receiver declared as the project type (`api.next_reference(..)` in
/// `reference`) still makes its caller fresh.
#[test]
fn a_helper_call_is_fresh_only_through_a_receiver_that_resolves_to_the_project() {
    let dir = project(
        "receiver_aware_fixpoint",
        &[
            (
                "src/transfers.rs",
                r#"use uuid::Uuid;

pub struct Transfers;

impl Transfers {
    pub fn get(&self, id: &str) -> String {
        format!("{id}-{}", Uuid::new_v4())
    }

    pub fn next_reference(&self, id: &str) -> String {
        format!("{id}-{}", Uuid::new_v4())
    }
}

pub fn reference(api: &Transfers) -> String {
    api.next_reference("tr")
}
"#,
            ),
            (
                "src/metadata.rs",
                r#"use reqwest::header::HeaderMap;

pub struct Metadata {
    pub idempotency_key: Option<String>,
}

pub fn header_str(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

pub fn from_headers(headers: &HeaderMap) -> Metadata {
    Metadata { idempotency_key: header_str(headers, "idempotency-key") }
}
"#,
            ),
            (
                "src/client.rs",
                r#"use crate::metadata::from_headers;
use crate::transfers::{reference, Transfers};

pub async fn send(client: &reqwest::Client, api: &Transfers) -> Result<(), reqwest::Error> {
    for attempt in 1..=3u64 {
        let response = client.post("https://psp.example.com/v1/transfers").send().await;
        match response {
            Ok(r) => {
                let _meta = from_headers(r.headers());
                return Ok(());
            }
            Err(e) if attempt < 3 => {
                tokio::time::sleep(std::time::Duration::from_millis(100 * attempt)).await;
                continue;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

pub async fn send_keyed(client: &reqwest::Client, api: &Transfers) -> Result<(), reqwest::Error> {
    for attempt in 1..=3u64 {
        let key = reference(api);
        let response = client
            .post("https://psp.example.com/v1/transfers")
            .header("Idempotency-Key", key)
            .send()
            .await;
        match response {
            Ok(_) => return Ok(()),
            Err(e) if attempt < 3 => {
                tokio::time::sleep(std::time::Duration::from_millis(100 * attempt)).await;
                continue;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
"#,
            ),
        ],
    );
    assert_eq!(
        findings(&dir),
        vec![(
            "src/client.rs".to_string(),
            24,
            "key-in-retry-scope".to_string()
        )]
    );
}

/// A same-file helper that returns what an inherited method, a statically imported method or
/// an interface's default method in another file returns is fresh when that method is: a call
/// without receiver is resolved by its name, as the receiver cannot tell these apart (found
/// by a break-it pass after the fixpoint started to resolve calls by their receiver).
#[test]
fn a_helper_returning_an_inherited_or_static_import_mint_stays_fresh() {
    let dir = project(
        "inherited_static_import",
        &[
            (
                "src/main/java/com/acme/BaseClient.java",
                "package com.acme;\nimport java.util.UUID;\npublic abstract class BaseClient {\n    protected String newIdempotencyKey(String op) { return op + \"-\" + UUID.randomUUID(); }\n}\n",
            ),
            (
                "src/main/java/com/acme/Keys.java",
                "package com.acme;\nimport java.util.UUID;\npublic final class Keys {\n    public static String mint(String op) { return op + \"-\" + UUID.randomUUID(); }\n}\n",
            ),
            (
                "src/main/java/com/acme/Tokens.java",
                "package com.acme;\nimport java.util.UUID;\npublic interface Tokens {\n    default String freshToken() { return UUID.randomUUID().toString(); }\n}\n",
            ),
            (
                "src/main/java/com/acme/PayoutClient.java",
                r#"package com.acme;
import static com.acme.Keys.mint;
import org.springframework.http.HttpHeaders;
import org.springframework.retry.annotation.Retryable;
public class PayoutClient extends BaseClient implements Tokens {
    @Retryable
    public void inherited(Api api) {
        HttpHeaders h = new HttpHeaders();
        h.set("Idempotency-Key", keyFor("payout"));
        api.post(h);
    }
    @Retryable
    public void staticImport(Api api) {
        HttpHeaders h = new HttpHeaders();
        h.set("Idempotency-Key", keyFor2("payout"));
        api.post(h);
    }
    @Retryable
    public void defaultMethod(Api api) {
        HttpHeaders h = new HttpHeaders();
        h.set("Idempotency-Key", keyFor3());
        api.post(h);
    }
    private String keyFor(String op) { return newIdempotencyKey(op); }
    private String keyFor2(String op) { return mint(op); }
    private String keyFor3() { return "p-" + freshToken(); }
}
interface Api { void post(HttpHeaders h); }
"#,
            ),
        ],
    );
    let got: Vec<u64> = findings(&dir)
        .into_iter()
        .filter(|(p, _, r)| p.ends_with("PayoutClient.java") && r == "key-in-retry-scope")
        .map(|(_, l, _)| l)
        .collect();
    assert_eq!(got, vec![9, 15, 21]);
}

/// `self.broker.place_order(..)` where the struct declares `broker: Arc<AngelClient>` resolves
/// to `AngelClient::place_order`, not to the caller's own `place_order` that takes a key: the field's
/// declared type (through `Arc`) decides, so a per-attempt price is no per-attempt key.
#[test]
fn a_rust_self_field_call_resolves_by_the_field_type_through_arc() {
    let dir = project(
        "rust_self_field_type",
        &[
            (
                "src/broker.rs",
                r#"pub struct AngelClient;

impl AngelClient {
    pub async fn place_order(&self, symbol: &str, kind: &str, price: Option<f64>) -> Result<String, String> {
        Ok(format!("{symbol}:{kind}@{price:?}"))
    }
}
"#,
            ),
            (
                "src/manager.rs",
                r#"use std::sync::Arc;

use crate::broker::AngelClient;

pub struct Manager {
    broker: Arc<AngelClient>,
    http: reqwest::Client,
}

impl Manager {
    pub async fn place_order(&self, symbol: &str, price: Option<f64>, idempotency_key: String) {
        let _ = self
            .http
            .post("https://broker.example.com/v1/orders")
            .header("Idempotency-Key", idempotency_key)
            .body(format!("{symbol}@{price:?}"))
            .send()
            .await;
    }

    pub async fn run(&self, symbol: &str, key: String, steps: &[f64]) -> Result<String, String> {
        let mut price = 100.0;
        for attempt in 0..=3usize {
            if attempt > 0 {
                let step = steps[attempt - 1];
                price = 100.0 * (1.0 + step);
            }
            match self.broker.place_order(symbol, "LIMIT", Some(price)).await {
                Ok(id) => return Ok(id),
                Err(_) => continue,
            }
        }
        self.place_order(symbol, None, key).await;
        Err("gave up".into())
    }
}
"#,
            ),
        ],
    );
    assert_eq!(findings(&dir), vec![]);
}

#[test]
fn keys_named_in_other_files_reach_their_sinks_through_constants_routes_wrappers_and_helpers() {
    // Shapes of payment-hub connectors: the header constant, the Camel route, the
    // `newWorker` wrapper and the helper that sets the header each live in another file.
    let dir = project(
        "named_keys_across_files",
        &[
            (
                "src/main/java/hub/Props.java",
                r#"package hub;
public final class Props {
    public static final String CLIENT_CORRELATION_ID = "X-CorrelationID";
    public static final String CORRELATION_ID = "correlationId";
    public static final String TRACE = "X-Trace";
}
"#,
            ),
            (
                "src/main/java/hub/BaseWorker.java",
                r#"package hub;
import io.camunda.zeebe.client.ZeebeClient;
import io.camunda.zeebe.client.api.worker.JobHandler;
public abstract class BaseWorker {
    protected ZeebeClient zeebeClient;
    public void newWorker(String type, JobHandler handler) {
        zeebeClient.newWorker().jobType(type).handler(handler).open();
    }
}
"#,
            ),
            (
                "src/main/java/hub/BatchApi.java",
                r#"package hub;
import org.springframework.http.*;
public class BatchApi {
    public String submit(String file, String correlationId) {
        return send(entity(file, correlationId));
    }
    private HttpEntity<String> entity(String file, String correlationId) {
        HttpHeaders headers = new HttpHeaders();
        headers.set("X-CorrelationID", correlationId);
        return new HttpEntity<>(file, headers);
    }
    private String send(HttpEntity<String> e) { return ""; }
}
"#,
            ),
            (
                "src/main/java/hub/Routes.java",
                r#"package hub;
import org.apache.camel.builder.RouteBuilder;
public class Routes extends RouteBuilder {
    public void configure() {
        from("direct:pay")
            .setHeader("X-Reference-Id", simple("${exchangeProperty." + Props.CORRELATION_ID + "}"))
            .to("https://momo.example/requesttopay");
    }
}
"#,
            ),
            (
                "src/main/java/hub/Workers.java",
                r#"package hub;
import java.util.UUID;
import org.apache.camel.Exchange;
import org.springframework.http.HttpHeaders;
public class Workers extends BaseWorker {
    private BatchApi batchApi;
    void setup() {
        newWorker("batch", (client, job) -> {
            String id = String.valueOf(UUID.randomUUID());
            batchApi.submit("f.csv", id);
        });
        zeebeClient.newWorker().jobType("transfer").handler((client, job) -> {
            HttpHeaders h = new HttpHeaders();
            h.add(Props.CLIENT_CORRELATION_ID, UUID.randomUUID().toString());
            h.add(Props.TRACE, UUID.randomUUID().toString());
        }).open();
        zeebeClient.newWorker().jobType("pay").handler((client, job) -> {
            Exchange exchange = newExchange();
            exchange.setProperty(Props.CORRELATION_ID, UUID.randomUUID());
            exchange.setProperty("audit", UUID.randomUUID());
        }).open();
        newWorker("batch-keyed", (client, job) -> {
            batchApi.submit("f.csv", String.valueOf(job.getKey()));
        });
    }
    private Exchange newExchange() { return null; }
}
"#,
            ),
        ],
    );
    let got = findings(&dir);
    let w = "src/main/java/hub/Workers.java".to_string();
    assert_eq!(
        got,
        vec![
            (w.clone(), 9, "key-in-retry-scope".to_string()),
            (w.clone(), 14, "key-in-retry-scope".to_string()),
            (w.clone(), 19, "key-in-retry-scope".to_string()),
        ]
    );
}

#[test]
fn named_keys_resolve_by_declaring_type_import_and_source_set_and_inherit_from_the_nearest_type() {
    let dir = project(
        "named_keys_precision",
        &[
            (
                "src/main/java/hub/GsmaProps.java",
                r#"package hub;
public final class GsmaProps {
    public static final String CLIENT_CORRELATION_ID = "X-CorrelationID";
    public static final String REFERENCE_HEADER = "X-Reference-Id";
}
"#,
            ),
            (
                "src/main/java/hub/TraceProps.java",
                r#"package hub;
public final class TraceProps {
    public static final String CLIENT_CORRELATION_ID = "X-Trace-Id";
}
"#,
            ),
            (
                "src/main/java/hub/Routes.java",
                r#"package hub;
import org.apache.camel.builder.RouteBuilder;
public class Routes extends RouteBuilder {
    public void configure() {
        from("direct:pay")
            .setHeader(GsmaProps.REFERENCE_HEADER, simple("${exchangeProperty." + Keys.REF + "}"))
            .to("https://momo.example/requesttopay");
    }
}
"#,
            ),
            (
                "src/main/java/hub/Gsma.java",
                r#"package hub;
import org.springframework.http.HttpHeaders;
public class Gsma {
    public HttpHeaders headers(String cid) {
        HttpHeaders h = new HttpHeaders();
        h.add(GsmaProps.CLIENT_CORRELATION_ID, cid);
        return h;
    }
}
"#,
            ),
            (
                "src/main/java/hub/KeyBase.java",
                r#"package hub;
import org.springframework.http.HttpHeaders;
public abstract class KeyBase {
    public void submit(String key) {
        HttpHeaders h = new HttpHeaders();
        h.set("Idempotency-Key", key);
    }
}
"#,
            ),
            (
                "src/main/java/hub/Middle.java",
                r#"package hub;
public abstract class Middle extends KeyBase {
    @Override
    public void submit(String note) { System.out.println(note); }
}
"#,
            ),
            (
                "src/main/java/hub/Workers.java",
                r#"package hub;
import java.util.UUID;
import org.apache.camel.Exchange;
import org.springframework.http.HttpHeaders;
public class Workers {
    private Gsma gsma;
    void setup(io.camunda.zeebe.client.ZeebeClient zeebeClient) {
        zeebeClient.newWorker().jobType("a").handler((client, job) -> {
            HttpHeaders h = new HttpHeaders();
            h.add(TraceProps.CLIENT_CORRELATION_ID, UUID.randomUUID().toString());
            h.add(GsmaProps.CLIENT_CORRELATION_ID, UUID.randomUUID().toString());
            gsma.headers(UUID.randomUUID().toString());
            Exchange exchange = null;
            exchange.setProperty(Keys.REF, UUID.randomUUID());
            for (String header : java.util.List.of("X-A", "X-B")) {
                h.add(header, UUID.randomUUID().toString());
            }
        }).open();
    }
}
"#,
            ),
            (
                "src/main/java/hub/Plain.java",
                r#"package hub;
import java.util.UUID;
public class Plain {
    void setup(io.camunda.zeebe.client.ZeebeClient zeebeClient) {
        zeebeClient.newWorker().jobType("b").handler((client, job) -> {
            System.setProperty(Keys.REF, UUID.randomUUID().toString());
        }).open();
    }
}
"#,
            ),
            (
                "src/main/java/hub/Leaf.java",
                r#"package hub;
import java.util.UUID;
public class Leaf extends Middle {
    @org.springframework.retry.annotation.Retryable
    void run() {
        submit(UUID.randomUUID().toString());
    }
}
"#,
            ),
            (
                "src/test/java/hub/TestProps.java",
                r#"package hub;
public final class TestProps {
    public static final String AUDIT = "Idempotency-Key";
}
"#,
            ),
            (
                "src/main/java/hub/Audit.java",
                r#"package hub;
import java.util.UUID;
import org.springframework.http.HttpHeaders;
public class Audit {
    @org.springframework.retry.annotation.Retryable
    void run() {
        new HttpHeaders().add(AUDIT, UUID.randomUUID().toString());
    }
}
"#,
            ),
        ],
    );
    let got = findings(&dir);
    let w = "src/main/java/hub/Workers.java".to_string();
    // Only GsmaProps' constant (line 11), the helper writing under it (12) and the
    // property the route reads through a constant header name (14).
    assert_eq!(
        got,
        vec![
            (w.clone(), 11, "key-in-retry-scope".to_string()),
            (w.clone(), 12, "key-in-retry-scope".to_string()),
            (w.clone(), 14, "key-in-retry-scope".to_string()),
        ]
    );
}

/// A project combinator that returns its block's result at once retries only a thrown
/// failure: a helper that sends the key inside a `try` catching every exception, reached
/// from the block, is not run again by it. The combinator is named like the catalogue's
/// name-only retry helpers (`withRetry`) and lives in another file, which the prefilter
/// must still read; a narrower `catch`, or a step after the helper that can still fail,
/// keeps the finding.
#[test]
fn a_combinator_that_retries_only_thrown_failures_does_not_repeat_a_handled_send() {
    let retry = r#"package pay.net

import java.io.IOException

object NetworkRetry {
    suspend fun <T> withRetry(operation: suspend (attempt: Int) -> T): T {
        var last: Exception? = null
        repeat(3) { attempt ->
            try {
                return operation(attempt)
            } catch (e: IOException) {
                last = e
            }
        }
        throw IllegalStateException("gave up", last)
    }
}
"#;
    let gateway = r#"package pay.gw

import okhttp3.OkHttpClient
import okhttp3.Request
import pay.net.NetworkRetry

class Gateway(private val client: OkHttpClient, private val audit: Audit) {
    suspend fun handled(id: String): Boolean =
        NetworkRetry.withRetry { attempt -> sendHandled(id, attempt) }

    suspend fun narrow(id: String): Boolean =
        NetworkRetry.withRetry { attempt -> sendNarrow(id, attempt) }

    suspend fun thenAudit(id: String): Boolean =
        NetworkRetry.withRetry { attempt ->
            val ok = sendHandled(id, attempt)
            audit.record(id, ok)
            ok
        }

    private fun sendHandled(id: String, attempt: Int): Boolean {
        try {
            return post(id, attempt)
        } catch (e: Exception) {
            return false
        }
    }

    private fun sendNarrow(id: String, attempt: Int): Boolean {
        try {
            return post(id, attempt)
        } catch (e: IllegalArgumentException) {
            return false
        }
    }

    private fun post(id: String, attempt: Int): Boolean {
        val request = Request.Builder()
            .url("https://api.example.com/payments")
            .header("Idempotency-Key", "$id-attempt-$attempt")
            .build()
        return client.newCall(request).execute().isSuccessful
    }
}

interface Audit {
    fun record(id: String, ok: Boolean)
}
"#;
    let dir = project(
        "combinator_retries_thrown_failures",
        &[
            ("src/net/NetworkRetry.kt", retry),
            ("src/gw/Gateway.kt", gateway),
        ],
    );
    let got = findings(&dir);
    let want: Vec<(String, u64, String)> = [12, 16]
        .into_iter()
        .map(|l| {
            (
                "src/gw/Gateway.kt".to_string(),
                l,
                "key-in-retry-scope".to_string(),
            )
        })
        .collect();
    assert_eq!(got, want);
}

/// An Apache Camel processor runs once per send to its route: a `ProducerTemplate` send to
/// an in-process endpoint from inside a Zeebe job handler (redelivered) makes the
/// processor's `process` method that boundary, through `.to("direct:..")` hops and the
/// field's declared type; the same processor reached only from a plain method is not one.
/// Each piece lives in its own file, which the prefilter must read.
#[test]
fn a_camel_processor_runs_per_attempt_of_the_boundary_that_sends_to_its_route() {
    let workers = r#"package hub.zeebe;

import io.camunda.zeebe.client.ZeebeClient;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.ProducerTemplate;
import org.apache.camel.support.DefaultExchange;

public class Workers {
    private ZeebeClient zeebeClient;
    private ProducerTemplate producerTemplate;
    private CamelContext camelContext;

    public void setup() {
        zeebeClient.newWorker().jobType("block-funds").handler((client, job) -> {
            Exchange ex = new DefaultExchange(camelContext);
            producerTemplate.send("direct:send-transfers", ex);
        }).open();
    }

    public void quote() {
        Exchange ex = new DefaultExchange(camelContext);
        producerTemplate.send("direct:send-quote", ex);
    }
}
"#;
    let routes = r#"package hub.routes;

import hub.interop.PrepareQuote;
import hub.interop.PrepareTransfer;
import org.apache.camel.builder.RouteBuilder;

public class Routes extends RouteBuilder {
    private PrepareTransfer prepareTransfer;
    private PrepareQuote prepareQuote;

    @Override
    public void configure() {
        from("direct:send-transfers").id("send-transfers").to("direct:prepare");
        from("direct:prepare").process(prepareTransfer).to("direct:post");
        from("direct:send-quote").process(prepareQuote);
    }
}
"#;
    let processor = |name: &str| {
        format!(
            r#"package hub.interop;

import java.util.UUID;
import org.apache.camel.Exchange;
import org.apache.camel.Processor;
import org.mifos.connector.common.ams.dto.TransferFspRequestDTO;

public class {name} implements Processor {{
    @Override
    public void process(Exchange exchange) {{
        String transactionCode = exchange.getProperty("transactionId", String.class);
        String transferCode = UUID.randomUUID().toString();
        exchange.getIn().setBody(new TransferFspRequestDTO(transactionCode, transferCode, "acc"));
    }}
}}
"#
        )
    };
    let transfer = processor("PrepareTransfer");
    let quote = processor("PrepareQuote");
    let dir = project(
        "camel_processor_behind_zeebe_handler",
        &[
            ("src/zeebe/Workers.java", workers),
            ("src/routes/Routes.java", routes),
            ("src/interop/PrepareTransfer.java", &transfer),
            ("src/interop/PrepareQuote.java", &quote),
        ],
    );
    let got = findings(&dir);
    let want = vec![(
        "src/interop/PrepareTransfer.java".to_string(),
        12,
        "key-in-retry-scope".to_string(),
    )];
    assert_eq!(got, want);
}

/// A receiver declared with a nested type (`HttpRequest.Builder`) resolves only to a
/// project type of that name nested in the same enclosing type: the JDK's request builder
/// never reaches a project `PaymentRequest.Builder.build()` that returns a fresh key.
#[test]
fn a_nested_receiver_type_resolves_by_its_enclosing_type_too() {
    let payments = r#"package shop;

import java.util.UUID;

public class PaymentRequest {
    public static class Builder {
        private String idempotencyKey;

        public Builder idempotencyKey(String key) {
            this.idempotencyKey = key;
            return this;
        }

        public String build() {
            return idempotencyKey != null ? idempotencyKey : UUID.randomUUID().toString();
        }
    }
}
"#;
    let client = r#"package shop;

import java.net.http.HttpRequest;
import org.springframework.retry.annotation.Retryable;

public class Client {
    @Retryable
    public void jdk(HttpRequest.Builder builder, Api api) {
        api.charge(builder.build());
    }

    @Retryable
    public void project(PaymentRequest.Builder builder, Api api) {
        api.charge(builder.build());
    }
}

interface Api {
    void charge(String idempotencyKey);
}
"#;
    let dir = project(
        "nested_receiver_type",
        &[
            ("src/PaymentRequest.java", payments),
            ("src/Client.java", client),
        ],
    );
    let got = findings(&dir);
    let want = vec![(
        "src/Client.java".to_string(),
        14,
        "key-in-retry-scope".to_string(),
    )];
    assert_eq!(got, want);
}

/// A receiver that is a call resolves by the type the call returns: a Java call through a
/// Kotlin property's getter (`getPaymentSettings()` of `val paymentSettings:
/// PaymentSettingRepository`) reaches the implementations of that type only, so a getter
/// of the same name on an unrelated class (`PaymentBody.getTransactionId()`) does not
/// hide the clock the implementation puts into the key. The property's file has no key
/// word; the prefilter must read it.
#[test]
fn a_call_receiver_resolves_by_its_return_type_and_kotlin_property_getters() {
    let dir = project(
        "receiver_by_return_type",
        &[
            (
                "src/Repo.java",
                "interface PaymentSettingRepository {\n    String getTransactionId();\n}\n",
            ),
            (
                "src/Service.java",
                r#"import java.util.Calendar;

class PaymentSettingService implements PaymentSettingRepository {
    @Override
    public String getTransactionId() {
        return String.format("%s%d", "pk", Calendar.getInstance().getTimeInMillis());
    }
}

class PaymentBody {
    private String transactionId;

    public String getTransactionId() {
        return transactionId;
    }
}
"#,
            ),
            (
                "src/Module.kt",
                "class ConfigurationModule {\n    val paymentSettings: PaymentSettingRepository by lazy { PaymentSettingService() }\n}\n",
            ),
            (
                "src/Proc.java",
                r#"import retrofit2.http.Header;
import retrofit2.http.POST;

class Processor {
    private Session session;
    private PaymentService api;

    void pay() {
        final String transactionId = session.getConfigurationModule().getPaymentSettings().getTransactionId();
        api.createPayment(transactionId);
    }
}

interface PaymentService {
    @POST("/payments")
    Object createPayment(@Header("X-Idempotency-Key") String transactionId);
}
"#,
            ),
        ],
    );
    let got = findings(&dir);
    let want = vec![("src/Proc.java".to_string(), 9, "time-in-key".to_string())];
    assert_eq!(got, want);
}

/// A registration on a builder chain that spans lines is located at the registering
/// call's own line (`.addNetworkInterceptor(..)`), not the line the chain starts on.
#[test]
fn a_registration_is_located_at_its_own_line_of_a_builder_chain() {
    let interceptor = PAY_KEY_INTERCEPTOR;
    let network = r#"package shop.net

import okhttp3.OkHttpClient

object Network {
    val client = OkHttpClient.Builder()
        .retryOnConnectionFailure(true)
        .addNetworkInterceptor(PayKeyInterceptor())
        .build()
}
"#;
    let dir = project(
        "registration_line",
        &[
            ("src/net/PayKeyInterceptor.kt", interceptor),
            ("src/net/Network.kt", network),
        ],
    );
    assert_eq!(
        findings(&dir),
        vec![(
            "src/net/PayKeyInterceptor.kt".to_string(),
            10,
            "key-in-interceptor".to_string()
        )]
    );
    let v = check_json(&dir, &[]);
    let message = v["findings"][0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("src/net/Network.kt:8") && !message.contains("Network.kt:6"),
        "{message}"
    );
}

/// A constructor declared in another file: a Kotlin data class's primary constructor, a
/// Java record's canonical one and a Kotlin secondary constructor that mints. A call of
/// each from a retry scope is found as it is when both sit in one file; a type of the
/// caller's own file with the same name (no key field) hides the other file's.
#[test]
fn constructors_declared_in_another_file_take_and_mint_keys() {
    let dir = project(
        "constructor_cross_file",
        &[
            (
                "src/model/PayoutCommand.kt",
                "package shop.model\n\ndata class PayoutCommand(val idempotencyKey: String, val amount: Long) {\n    constructor(amount: Long) : this(java.util.UUID.randomUUID().toString(), amount)\n}\n",
            ),
            (
                "src/model/RefundCommand.java",
                "package shop.model;\n\npublic record RefundCommand(String chargeId, String idempotencyKey) {}\n",
            ),
            (
                "src/app/Payouts.kt",
                r#"package shop.app

import io.github.resilience4j.retry.Retry
import java.util.UUID
import shop.model.PayoutCommand

class Payouts(private val retry: Retry, private val api: PayoutApi) {
    fun positional(amount: Long) = retry.executeSupplier {
        val cmd = PayoutCommand(UUID.randomUUID().toString(), amount)
        api.send(cmd)
    }

    fun minted(amount: Long) = retry.executeSupplier {
        val cmd = PayoutCommand(amount)
        api.send(cmd)
    }

    fun once(amount: Long): String {
        val cmd = PayoutCommand(UUID.randomUUID().toString(), amount)
        return retry.executeSupplier { api.send(cmd) }
    }
}

interface PayoutApi { fun send(cmd: PayoutCommand): String }
"#,
            ),
            (
                "src/app/Audit.java",
                r#"package shop.app;

import java.util.UUID;
import org.springframework.retry.annotation.Retryable;

class Audit {
    private record PayoutCommand(String traceId, long amount) {}
    private final AuditApi api = null;

    @Retryable(maxAttempts = 3)
    public String audit(long amount) {
        return api.send(new PayoutCommand(UUID.randomUUID().toString(), amount).toString());
    }
}

interface AuditApi { String send(String line); }
"#,
            ),
            (
                "src/app/Refunds.java",
                r#"package shop.app;

import java.util.UUID;
import org.springframework.retry.annotation.Retryable;
import shop.model.RefundCommand;

class Refunds {
    private final RefundApi api = null;

    @Retryable(maxAttempts = 3)
    public String refund(String chargeId) {
        return api.send(new RefundCommand(chargeId, UUID.randomUUID().toString()));
    }
}

interface RefundApi { String send(RefundCommand cmd); }
"#,
            ),
        ],
    );
    let got = findings(&dir);
    let want = [
        ("src/app/Payouts.kt", 9),
        ("src/app/Payouts.kt", 14),
        ("src/app/Refunds.java", 12),
    ]
    .map(|(p, l)| (p.to_string(), l, "key-in-retry-scope".to_string()))
    .to_vec();
    assert_eq!(got, want);
}

/// A constructor called through the type it is nested in (`Cmds.Capture(..)`, `new
/// Cmds.Refund(..)`) or through its package (`shop.model.Top(..)`) reaches that type's
/// primary or canonical constructor in another file; a namesake nested in another type
/// does not.
#[test]
fn nested_and_qualified_constructors_are_followed_across_files() {
    let dir = project(
        "constructor_nested_cross_file",
        &[
            (
                "src/model/Cmds.kt",
                "package shop.model\n\nclass Cmds {\n    data class Capture(val idempotencyKey: String, val amount: Long)\n}\n\nclass Traces {\n    data class Mark(val traceId: String, val amount: Long)\n}\n\ndata class Top(val idempotencyKey: String, val amount: Long)\n",
            ),
            (
                "src/model/Refunds.java",
                "package shop.model;\n\npublic final class Refunds {\n    public record Refund(String chargeId, String idempotencyKey) {}\n}\n",
            ),
            (
                "src/app/Payouts.kt",
                r#"package shop.app

import io.github.resilience4j.retry.Retry
import java.util.UUID
import shop.model.Cmds
import shop.model.Traces

class Payouts(private val retry: Retry, private val api: Api) {
    fun nested(amount: Long) = retry.executeSupplier {
        api.send(Cmds.Capture(UUID.randomUUID().toString(), amount))
    }

    fun qualified(amount: Long) = retry.executeSupplier {
        api.send(shop.model.Top(UUID.randomUUID().toString(), amount))
    }

    fun traced(amount: Long) = retry.executeSupplier {
        api.send(Traces.Mark(UUID.randomUUID().toString(), amount))
    }
}

interface Api { fun send(cmd: Any): String }
"#,
            ),
            (
                "src/app/RefundService.java",
                r#"package shop.app;

import java.util.UUID;
import org.springframework.retry.annotation.Retryable;
import shop.model.Refunds;

class RefundService {
    private final RefundApi api = null;

    @Retryable(maxAttempts = 3)
    public String refund(String chargeId) {
        return api.send(new Refunds.Refund(chargeId, UUID.randomUUID().toString()));
    }
}

interface RefundApi { String send(Object cmd); }
"#,
            ),
        ],
    );
    let got = findings(&dir);
    let want = [
        ("src/app/Payouts.kt", 10),
        ("src/app/Payouts.kt", 14),
        ("src/app/RefundService.java", 12),
    ]
    .map(|(p, l)| (p.to_string(), l, "key-in-retry-scope".to_string()))
    .to_vec();
    assert_eq!(got, want);
}

/// A wrapper in another file that runs its block inside a lambda it hands to a combinator
/// (`retrying { op() }`, `() -> op.get()`) is a combinator too; one that runs the lambda
/// once is not.
#[test]
fn a_wrapper_that_runs_its_block_in_a_lambda_is_followed_across_files() {
    let dir = project(
        "forwarding_lambda_cross_file",
        &[
            (
                "src/net/Resilience.kt",
                r#"package shop.net

import java.io.IOException

fun <T> retrying(times: Int = 3, block: () -> T): T {
    var last: IOException? = null
    repeat(times) {
        try { return block() } catch (e: IOException) { last = e }
    }
    throw last ?: IOException("no attempt")
}

fun <T> once(block: () -> T): T = block()

fun <T> durably(op: () -> T): T = retrying { op() }
fun <T> plainly(op: () -> T): T = once { op() }

fun <T> withRetry(block: () -> T, attempts: Int = 3): T = retrying(attempts, block)
fun <T> inParens(op: () -> T): T = withRetry({ op() })
fun <T> fallbacks(op: () -> T, others: List<() -> T>): T {
    op()
    return retrying { others.firstNotNullOf { op -> runCatching { op() }.getOrNull() } }
}
"#,
            ),
            (
                "src/app/Payouts.kt",
                r#"package shop.app

import java.util.UUID
import shop.net.durably
import shop.net.plainly

class Payouts(private val api: PayoutApi) {
    fun a(amount: Long) = durably { api.createPayout(UUID.randomUUID().toString(), amount) }
    fun b(amount: Long) = plainly { api.createPayout(UUID.randomUUID().toString(), amount) }
    fun c(amount: Long) = inParens { api.createPayout(UUID.randomUUID().toString(), amount) }
    fun d(amount: Long) = fallbacks({ api.createPayout(UUID.randomUUID().toString(), amount) }, listOf())
}

interface PayoutApi { fun createPayout(idempotencyKey: String, amount: Long): String }
"#,
            ),
        ],
    );
    let got = findings(&dir);
    let want = [8, 10]
        .map(|l| {
            (
                "src/app/Payouts.kt".to_string(),
                l,
                "key-in-retry-scope".to_string(),
            )
        })
        .to_vec();
    assert_eq!(got, want);
}

/// A key generator recognised by its name (`XIdempotencyKeys.generate()`) that another
/// file of the project declares is followed through its declaration, as when it is
/// declared in the calling file: a clock inside is a clock key, a derived key is none.
#[test]
fn a_key_generator_declared_in_another_file_is_followed_not_taken_by_its_name() {
    let dir = project(
        "by_name_cross_file",
        &[
            (
                "src/keys/IdempotencyKeys.kt",
                r#"package shop.keys

object ClockIdempotencyKeys {
    fun generate(): String = "idk_${System.currentTimeMillis()}"
}

object OrderIdempotencyKeys {
    var currentOrder: String = "none"
    fun generate(): String = "order-$currentOrder"
}
"#,
            ),
            (
                "src/app/Payments.kt",
                r#"package shop.app

import io.github.resilience4j.retry.Retry
import shop.keys.ClockIdempotencyKeys
import shop.keys.OrderIdempotencyKeys

class Payments(private val api: Api, private val retry: Retry) {
    fun pay(orderId: String) {
        api.post(orderId, idempotencyKey = ClockIdempotencyKeys.generate())
    }
    fun payRetried(orderId: String) = retry.executeSupplier {
        api.post(orderId, idempotencyKey = OrderIdempotencyKeys.generate())
    }
}

interface Api { fun post(orderId: String, idempotencyKey: String): String }
"#,
            ),
        ],
    );
    assert_eq!(
        findings(&dir),
        vec![(
            "src/app/Payments.kt".to_string(),
            9,
            "time-in-key".to_string()
        )]
    );
}

/// A WebClient filter that mints a key runs per attempt only when something re-subscribes
/// the exchange: a `retryWhen(..)` in another file (with no key word, so the prefilter
/// must look for it) makes it `key-in-interceptor`; without one it is
/// `interceptor-mints-key`.
#[test]
fn a_webclient_filter_is_per_attempt_only_under_a_reactive_retry_anywhere() {
    let filter = r#"package shop.net;

import java.util.UUID;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import reactor.core.publisher.Mono;

public final class KeyFilter implements ExchangeFilterFunction {
    @Override
    public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
        return next.exchange(ClientRequest.from(request)
                .header("Idempotency-Key", UUID.randomUUID().toString()).build());
    }
}
"#;
    let sender = |retry: &str| {
        format!(
            "package shop.app;\n\nimport org.springframework.web.reactive.function.client.WebClient;\nimport reactor.core.publisher.Mono;\n\nclass Sender {{\n    Mono<String> send(WebClient client, String body) {{\n        return client.post().uri(\"/payouts\").bodyValue(body).retrieve().bodyToMono(String.class){retry};\n    }}\n}}\n"
        )
    };
    for (name, retry, rule) in [
        (
            "webclient_retried",
            ".retryWhen(reactor.util.retry.Retry.max(3))",
            "key-in-interceptor",
        ),
        ("webclient_not_retried", "", "interceptor-mints-key"),
    ] {
        let dir = project(
            name,
            &[
                ("src/net/KeyFilter.java", filter),
                ("src/app/Sender.java", &sender(retry)),
            ],
        );
        assert_eq!(
            findings(&dir),
            vec![("src/net/KeyFilter.java".to_string(), 14, rule.to_string())],
            "{name}"
        );
    }
}

/// A Feign interceptor's key is explained by both ways Feign runs interceptors again: on
/// every call of the client method (a Spring `@Retryable` caller, as in a Spring Cloud
/// OpenFeign service whose default `Retryer` never retries) and on every `Retryer`
/// attempt. The explanation used to name the `Retryer` alone, which such a project does not
/// use.
#[test]
fn a_feign_interceptor_finding_names_call_level_retries_and_the_retryer_defaults() {
    let dir = project(
        "feign_explained",
        &[(
            "src/main/java/shop/client/WalletClientConfig.java",
            r#"package shop.client;

import feign.RequestInterceptor;
import java.util.UUID;
import org.springframework.context.annotation.Bean;

public class WalletClientConfig {
    @Bean
    public RequestInterceptor walletRequestInterceptor() {
        return template -> template.header("Idempotency-Key", UUID.randomUUID().toString());
    }
}
"#,
        )],
    );
    let v = check_json(&dir, &[]);
    let found = v["findings"].as_array().unwrap();
    assert_eq!(found.len(), 1, "{v:#}");
    let f = &found[0];
    assert_eq!(f["rule"], "key-in-interceptor", "{v:#}");
    assert_eq!(f["line"], 10, "{v:#}");
    let message = f["message"].as_str().unwrap();
    for part in [
        "on each call of the client method",
        "`@Retryable`",
        "`Retryer.NEVER_RETRY` does not retry",
        "vanilla `Feign.builder()` retries up to 5 times",
        "`RequestTemplate.header` appends",
    ] {
        assert!(message.contains(part), "{part:?} not in {message}");
    }
}

/// A header set under a constant the file declares is named by the constant's value, the
/// name a reader sees on the wire, not by the constant's identifier.
#[test]
fn a_header_constant_is_named_by_its_value() {
    let dir = project(
        "header_constant_value",
        &[(
            "IdempotencyInterceptor.java",
            r#"import java.util.UUID;
import org.apache.http.HttpRequest;
import org.apache.http.HttpRequestInterceptor;
import org.apache.http.protocol.HttpContext;

public class IdempotencyInterceptor implements HttpRequestInterceptor {
    private static final String IDEMPOTENCY_HTTP_HEADER_KEY = "acme-idempotency-key";

    @Override
    public void process(final HttpRequest request, final HttpContext context) {
        request.addHeader(IDEMPOTENCY_HTTP_HEADER_KEY, UUID.randomUUID().toString());
    }
}
"#,
        )],
    );
    let v = check_json(&dir, &[]);
    let f = &v["findings"][0];
    assert_eq!(f["sink"], "the `acme-idempotency-key` header", "{v}");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("the `acme-idempotency-key` header"),
        "{v}"
    );
}
