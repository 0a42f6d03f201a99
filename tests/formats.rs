//! The CI output formats and flags, each checked by parsing its output: SARIF against the
//! official OASIS SARIF 2.1.0 JSON schema (vendored in `tests/data/`, see its README) and
//! against the structure GitHub code scanning needs; fingerprint
//! stability under a line shift; GitHub workflow commands and `short` lines by regex; and
//! `--output`, `--exit-zero`, `--quiet`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use regex::Regex;
use serde_json::Value;

fn idemlint() -> Command {
    Command::cargo_bin("idemlint").unwrap()
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh scratch directory under cargo's per-test temporary directory.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("formats")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A Kotlin function `name` that regenerates its key on every retry attempt.
fn retry_bug(name: &str) -> String {
    format!(
        "suspend fun {name}(api: Api, body: Body): Charge =\n    retryOnTransient {{\n        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)\n    }}\n"
    )
}

fn kotlin_file(functions: &[&str]) -> String {
    let mut s = String::from("import java.util.UUID\n\n");
    for f in functions {
        s.push_str(&retry_bug(f));
        s.push('\n');
    }
    s
}

/// Runs `idemlint check ARGS` in `dir`; returns (exit code, stdout, stderr).
fn run(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = idemlint()
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .arg("check")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn json(dir: &Path, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format", "json"]);
    let (_, out, err) = run(dir, &a);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("JSON: {e}\n{out}\n{err}"))
}

fn sarif(dir: &Path, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--format", "sarif"]);
    let (code, out, err) = run(dir, &a);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    // Standard error holds the summary alone (issue 14: a red CI step says why): the
    // findings line and, when there are findings, the fixes line.
    assert!(
        (err.starts_with("idemlint: ")
            && err.lines().all(|l| l.starts_with("idemlint: "))
            && err.lines().count() <= 2)
            || (err.is_empty() && args.iter().any(|a| *a == "-q" || *a == "--quiet")),
        "SARIF writes only the summary line to stderr: {err}"
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("SARIF is not JSON: {e}\n{out}"))
}

// ---------------------------------------------------------------------------------------
// A JSON Schema (draft-04) validator for the keywords the SARIF schema uses. Any keyword
// it does not know fails the test, so nothing in the schema is skipped silently.

struct Schema {
    root: Value,
}

const ANNOTATION_KEYWORDS: &[&str] = &["$schema", "id", "title", "description", "default"];

impl Schema {
    fn load() -> Schema {
        let path = manifest_dir().join("tests/data/sarif-schema-2.1.0.json");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "the OASIS SARIF 2.1.0 schema is expected at {} (vendored, see \
                 tests/data/README.md): {e}",
                path.display()
            )
        });
        Schema {
            root: serde_json::from_str(&text).expect("the SARIF schema is JSON"),
        }
    }

    fn validate(&self, instance: &Value) -> Vec<String> {
        let mut errors = Vec::new();
        self.check(&self.root, instance, "$", &mut errors);
        errors
    }

    fn resolve(&self, reference: &str) -> &Value {
        let pointer = reference
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("external $ref {reference} not supported"));
        self.root
            .pointer(pointer)
            .unwrap_or_else(|| panic!("dangling $ref {reference}"))
    }

    fn check(&self, schema: &Value, v: &Value, at: &str, errors: &mut Vec<String>) {
        let Some(s) = schema.as_object() else {
            panic!("schema at {at} is not an object");
        };
        if let Some(r) = s.get("$ref") {
            // Draft-04: a $ref replaces its siblings.
            return self.check(self.resolve(r.as_str().unwrap()), v, at, errors);
        }
        for (keyword, arg) in s {
            match keyword.as_str() {
                k if ANNOTATION_KEYWORDS.contains(&k) => {}
                "definitions" => {}
                "type" => {
                    let ok = match arg {
                        Value::String(t) => type_matches(t, v),
                        Value::Array(ts) => ts.iter().any(|t| type_matches(t.as_str().unwrap(), v)),
                        _ => panic!("bad type at {at}"),
                    };
                    if !ok {
                        errors.push(format!("{at}: expected type {arg}, got {v}"));
                    }
                }
                "enum" => {
                    if !arg.as_array().unwrap().contains(v) {
                        errors.push(format!("{at}: {v} is not one of {arg}"));
                    }
                }
                "properties" | "additionalProperties" | "required" => {
                    let Some(obj) = v.as_object() else { continue };
                    let props = s.get("properties").and_then(Value::as_object);
                    match keyword.as_str() {
                        "properties" => {
                            for (k, sub) in arg.as_object().unwrap() {
                                if let Some(x) = obj.get(k) {
                                    self.check(sub, x, &format!("{at}.{k}"), errors);
                                }
                            }
                        }
                        "required" => {
                            for k in arg.as_array().unwrap() {
                                if !obj.contains_key(k.as_str().unwrap()) {
                                    errors.push(format!("{at}: missing required property {k}"));
                                }
                            }
                        }
                        _ => {
                            for (k, x) in obj {
                                if props.is_some_and(|p| p.contains_key(k)) {
                                    continue;
                                }
                                match arg {
                                    Value::Bool(false) => {
                                        errors.push(format!("{at}: property `{k}` is not allowed"))
                                    }
                                    Value::Bool(true) => {}
                                    sub => self.check(sub, x, &format!("{at}.{k}"), errors),
                                }
                            }
                        }
                    }
                }
                "items" => {
                    if let Some(a) = v.as_array() {
                        for (i, x) in a.iter().enumerate() {
                            self.check(arg, x, &format!("{at}[{i}]"), errors);
                        }
                    }
                }
                "minItems" => {
                    if let Some(a) = v.as_array()
                        && (a.len() as u64) < arg.as_u64().unwrap()
                    {
                        errors.push(format!("{at}: fewer than {arg} items"));
                    }
                }
                "uniqueItems" => {
                    if let Some(a) = v.as_array()
                        && arg == &Value::Bool(true)
                    {
                        for (i, x) in a.iter().enumerate() {
                            if a[..i].contains(x) {
                                errors.push(format!("{at}[{i}]: duplicate item"));
                            }
                        }
                    }
                }
                "minimum" | "maximum" => {
                    if let Some(n) = v.as_f64() {
                        let bound = arg.as_f64().unwrap();
                        let bad = if keyword == "minimum" {
                            n < bound
                        } else {
                            n > bound
                        };
                        if bad {
                            errors.push(format!("{at}: {n} violates {keyword} {bound}"));
                        }
                    }
                }
                "pattern" => {
                    if let Some(t) = v.as_str()
                        && !Regex::new(arg.as_str().unwrap()).unwrap().is_match(t)
                    {
                        errors.push(format!("{at}: {t:?} does not match {arg}"));
                    }
                }
                "format" => {
                    if let Some(t) = v.as_str()
                        && !format_matches(arg.as_str().unwrap(), t)
                    {
                        errors.push(format!("{at}: {t:?} is not a valid {arg}"));
                    }
                }
                "anyOf" | "oneOf" => {
                    let passing = arg
                        .as_array()
                        .unwrap()
                        .iter()
                        .filter(|sub| {
                            let mut e = Vec::new();
                            self.check(sub, v, at, &mut e);
                            e.is_empty()
                        })
                        .count();
                    if passing == 0 || (keyword == "oneOf" && passing > 1) {
                        errors.push(format!("{at}: {passing} schemas of {keyword} match"));
                    }
                }
                other => panic!("schema keyword `{other}` at {at} is not supported by this test"),
            }
        }
    }
}

fn type_matches(t: &str, v: &Value) -> bool {
    match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        other => panic!("unknown type {other}"),
    }
}

/// RFC 3986 `URI` / `URI-reference` (characters and shape) and RFC 3339 date-times.
fn format_matches(format: &str, s: &str) -> bool {
    let chars_ok = Regex::new(r"^([A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$")
        .unwrap()
        .is_match(s);
    match format {
        "uri" => {
            chars_ok
                && Regex::new(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
                    .unwrap()
                    .is_match(s)
        }
        "uri-reference" => chars_ok,
        "date-time" => Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")
            .unwrap()
            .is_match(s),
        other => panic!("format {other} not supported by this test"),
    }
}

// ---------------------------------------------------------------------------------------
// SARIF

/// The fixtures' SARIF and, for the notifications, a scratch project with a finding in a
/// file whose name needs percent-encoding, an unparsable file and a binary one.
fn sarif_samples() -> Vec<(String, Value)> {
    let fixtures = sarif(&manifest_dir(), &["fixtures"]);
    let dir = scratch("sarif_samples");
    std::fs::create_dir_all(dir.join("sub dir")).unwrap();
    std::fs::write(dir.join("sub dir/Zahlung ü.kt"), kotlin_file(&["charge"])).unwrap();
    // A key word makes the prefilter parse it (files that cannot matter are not parsed).
    std::fs::write(
        dir.join("broken.rs"),
        "fn f() {\n    let idempotency_key = ;\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("bad.java"), [0xff, 0xfe, 0x00, 0x41]).unwrap();
    let scratch = sarif(&dir, &["."]);
    vec![("fixtures".into(), fixtures), ("scratch".into(), scratch)]
}

#[test]
fn sarif_validates_against_the_oasis_schema() {
    let schema = Schema::load();
    for (name, log) in sarif_samples() {
        let errors = schema.validate(&log);
        assert!(
            errors.is_empty(),
            "SARIF of {name} violates the schema:\n{}",
            errors.join("\n")
        );
    }
}

/// An error the schema check must report, and the change to a valid log that causes it.
type Mutation = (&'static str, fn(&mut Value));

#[test]
fn the_schema_check_catches_broken_logs() {
    let schema = Schema::load();
    let (_, log) = sarif_samples().remove(0);
    let mutations: Vec<Mutation> = vec![
        ("missing required property", |v| {
            v["runs"][0]["results"][0]
                .as_object_mut()
                .unwrap()
                .remove("message");
        }),
        ("is not one of", |v| {
            v["runs"][0]["results"][0]["level"] = "fatal".into()
        }),
        ("violates minimum", |v| {
            v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
                0.into()
        }),
        ("is not allowed", |v| {
            v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["line"] =
                1.into()
        }),
        ("is not a valid", |v| {
            v["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] =
                "a path with spaces.kt".into()
        }),
        ("is not one of", |v| v["version"] = "2.0.0".into()),
    ];
    assert!(schema.validate(&log).is_empty());
    for (expected, mutate) in mutations {
        let mut broken = log.clone();
        mutate(&mut broken);
        let errors = schema.validate(&broken);
        assert!(
            errors.iter().any(|e| e.contains(expected)),
            "expected an error containing `{expected}`, got {errors:?}"
        );
    }
}

#[test]
fn sarif_has_the_structure_github_code_scanning_needs() {
    let root = manifest_dir();
    let log = sarif(&root, &["fixtures"]);
    let findings = json(&root, &["fixtures"])["findings"]
        .as_array()
        .unwrap()
        .clone();
    assert!(findings.len() > 20, "the fixtures have many findings");
    assert_eq!(log["version"], "2.1.0");
    assert!(
        log["$schema"]
            .as_str()
            .unwrap()
            .contains("sarif-schema-2.1.0.json")
    );
    let runs = log["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    let base = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        base.starts_with("file:///") && base.ends_with('/'),
        "{base}"
    );

    // Every rule, in RULES order, with its docs and default level.
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "idemlint");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        driver["informationUri"],
        "https://github.com/idemlint/idemlint"
    );
    let rules = driver["rules"].as_array().unwrap();
    assert_eq!(rules.len(), idemlint::rules::RULES.len());
    let pascal = Regex::new("^[A-Z][A-Za-z]+$").unwrap();
    for (r, meta) in rules.iter().zip(idemlint::rules::RULES) {
        assert_eq!(r["id"], meta.id);
        assert!(
            pascal.is_match(r["name"].as_str().unwrap()),
            "{}",
            r["name"]
        );
        let short = r["shortDescription"]["text"].as_str().unwrap();
        assert!(
            short.starts_with(meta.summary().trim_end_matches('.')),
            "{short}"
        );
        assert!(short.ends_with('.'));
        assert!(
            r["fullDescription"]["text"]
                .as_str()
                .unwrap()
                .starts_with("Flags")
        );
        assert_eq!(r["help"]["markdown"], meta.doc);
        assert_eq!(r["help"]["text"], meta.doc);
        assert_eq!(r["defaultConfiguration"]["level"], meta.severity.name());
        assert!(!r["properties"]["tags"].as_array().unwrap().is_empty());
        assert!(
            ["high", "medium", "low"].contains(&r["properties"]["precision"].as_str().unwrap())
        );
    }

    // Every finding, in the same order as the JSON output.
    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), findings.len());
    for (res, f) in results.iter().zip(&findings) {
        let index = res["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(res["ruleId"], f["rule"]);
        assert_eq!(
            rules[index]["id"], f["rule"],
            "ruleIndex points at the rule"
        );
        assert_eq!(res["level"], f["severity"]);
        let text = res["message"]["text"].as_str().unwrap();
        assert!(text.starts_with(f["message"].as_str().unwrap()), "{text}");
        assert!(text.ends_with('.'), "{text}");
        let loc = &res["locations"][0]["physicalLocation"];
        let uri = loc["artifactLocation"]["uri"].as_str().unwrap();
        assert_eq!(
            uri,
            f["path"].as_str().unwrap(),
            "fixture paths need no encoding"
        );
        assert!(!uri.contains('\\') && !uri.starts_with('/'));
        assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
        let region = &loc["region"];
        assert_eq!(region["startLine"], f["line"]);
        assert_eq!(region["startColumn"], f["column"]);
        assert_eq!(region["endLine"], f["end_line"]);
        assert_eq!(region["endColumn"], f["end_column"]);
        assert_eq!(region["snippet"]["text"], f["source"]);
        // The fingerprint, with `/N` for the N-th copy (see the requirements test).
        let fp = res["partialFingerprints"]["idemlint/v1"].as_str().unwrap();
        let base = f["fingerprint"].as_str().unwrap();
        assert!(
            fp == base || fp.strip_prefix(base).is_some_and(|r| r.starts_with('/')),
            "{fp} {base}"
        );
        match f.get("boundary") {
            Some(b) => {
                let rel = &res["relatedLocations"][0];
                assert_eq!(rel["id"], 1);
                assert_eq!(rel["physicalLocation"]["region"]["startLine"], b["line"]);
                assert_eq!(
                    rel["physicalLocation"]["region"]["startColumn"],
                    b["column"]
                );
                let m = rel["message"]["text"].as_str().unwrap();
                assert!(
                    m.starts_with(&format!(
                        "{} boundary: {}",
                        b["kind"].as_str().unwrap(),
                        b["label"].as_str().unwrap()
                    )),
                    "{m}"
                );
            }
            None => assert!(res.get("relatedLocations").is_none()),
        }
        assert_eq!(res.get("fixes").is_some(), f.get("fix").is_some());
    }
    let invocation = &run["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], true);
    assert_eq!(
        invocation["toolExecutionNotifications"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
}

#[test]
fn sarif_keeps_file_errors_encodes_uris_and_counts_code_points() {
    let (_, log) = sarif_samples().remove(1);
    let run = &log["runs"][0];
    let notes = run["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    let uri = |n: &Value| n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].clone();
    let broken = notes
        .iter()
        .find(|n| uri(n) == "broken.rs")
        .expect("broken.rs");
    assert_eq!(
        broken["locations"][0]["physicalLocation"]["region"]["startLine"],
        2
    );
    assert_eq!(broken["descriptor"]["id"], "file-not-analysed");
    assert!(notes.iter().any(|n| uri(n) == "bad.java"));
    let res = &run["results"][0];
    assert_eq!(
        res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "sub%20dir/Zahlung%20%C3%BC.kt"
    );

    // Columns count Unicode code points: an astral character (two UTF-16 units) and a
    // two-byte one before the finding move it by one column each.
    let dir = scratch("code_points");
    let text = kotlin_file(&["charge"])
        .replace("idempotencyKey = UUID", "idempotencyKey = \"😀ü\" + UUID");
    std::fs::write(dir.join("A.kt"), &text).unwrap();
    let log = sarif(&dir, &["A.kt"]);
    let region = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
    let line = text.lines().find(|l| l.contains("UUID.random")).unwrap();
    let chars_before = line[..line.find("UUID.random").unwrap()].chars().count();
    assert_eq!(region["startColumn"], chars_before + 1);
    assert_eq!(
        region["endColumn"],
        chars_before + 1 + "UUID.randomUUID()".len()
    );
}

#[test]
fn sarif_fingerprints_survive_a_line_shift() {
    let before = kotlin_file(&["charge", "refund"]);
    let shifted = before.replacen(
        "import java.util.UUID\n",
        "import java.util.UUID\nimport java.time.Instant\n\n// Billing helpers.\nfun unrelated(x: Int): Int {\n    return x + 1\n}\n",
        1,
    );
    let added = shifted.lines().count() - before.lines().count();
    let renamed = before.replace("fun charge(", "fun chargeAgain(");

    // The same file, edited: fingerprints include the project-relative path.
    let fingerprints = |_name: &str, text: &str| -> Vec<(u64, String)> {
        let dir = scratch("fingerprint_shift");
        std::fs::write(dir.join("Billing.kt"), text).unwrap();
        let log = sarif(&dir, &["Billing.kt"]);
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["locations"][0]["physicalLocation"]["region"]["startLine"]
                        .as_u64()
                        .unwrap(),
                    r["partialFingerprints"]["idemlint/v1"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                )
            })
            .collect()
    };
    let a = fingerprints("shift_before", &before);
    let b = fingerprints("shift_after", &shifted);
    let c = fingerprints("shift_renamed", &renamed);
    assert_eq!(a.len(), 2);
    assert_ne!(a[0].1, a[1].1, "two functions, two identities");
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(y.0, x.0 + added as u64, "the finding moved down");
        assert_eq!(x.1, y.1, "but kept its fingerprint");
    }
    assert_ne!(
        a[0].1, c[0].1,
        "renaming the enclosing function changes the identity"
    );
    assert_eq!(a[1].1, c[1].1, "the other function is untouched");
}

// ---------------------------------------------------------------------------------------
// GitHub workflow commands

/// Decodes `%XX` escapes.
fn unescape(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(h) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(h, 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

struct WorkflowCommand {
    kind: String,
    props: HashMap<String, String>,
    message: String,
}

fn parse_commands(stdout: &str) -> Vec<WorkflowCommand> {
    let re = Regex::new(r"^::(error|warning|notice)(?: ([^:]*))?::(.*)$").unwrap();
    stdout
        .lines()
        .map(|l| {
            let c = re
                .captures(l)
                .unwrap_or_else(|| panic!("not a workflow command: {l}"));
            let props = c
                .get(2)
                .map(|p| {
                    p.as_str()
                        .split(',')
                        .map(|kv| {
                            let (k, v) = kv.split_once('=').expect("key=value");
                            (k.to_string(), unescape(v))
                        })
                        .collect()
                })
                .unwrap_or_default();
            WorkflowCommand {
                kind: c[1].to_string(),
                props,
                message: unescape(&c[3]),
            }
        })
        .collect()
}

#[test]
fn github_annotations_parse_back_to_the_findings() {
    let dir = scratch("github");
    // A name with the characters property escaping exists for.
    std::fs::write(dir.join("Pay,ment:s.kt"), kotlin_file(&["charge"])).unwrap();
    // A key word makes the prefilter parse it (files that cannot matter are not parsed).
    std::fs::write(
        dir.join("broken.rs"),
        "fn f() {\n    let idempotency_key = ;\n}\n",
    )
    .unwrap();
    let findings = json(&dir, &["."])["findings"].as_array().unwrap().clone();
    assert_eq!(findings.len(), 1);
    let f = &findings[0];
    let (code, stdout, stderr) = run(&dir, &[".", "--format", "github"]);
    assert_eq!(code, 1);
    assert!(stdout.contains("file=Pay%2Cment%3As.kt,"), "{stdout}");
    let cmds = parse_commands(&stdout);
    assert_eq!(cmds.len(), 2, "{stdout}");
    let c = cmds.iter().find(|c| c.kind == "error").unwrap();
    assert_eq!(c.props["file"], "Pay,ment:s.kt");
    assert_eq!(c.props["line"], f["line"].to_string());
    assert_eq!(c.props["endLine"], f["end_line"].to_string());
    assert_eq!(c.props["col"], f["column"].to_string());
    assert_eq!(c.props["endColumn"], f["end_column"].to_string());
    assert_eq!(c.props["title"], "idemlint: key-in-retry-scope");
    assert_eq!(
        c.message,
        format!(
            "{}\nhelp: {}",
            f["message"].as_str().unwrap(),
            f["help"].as_str().unwrap()
        )
    );
    let w = cmds.iter().find(|c| c.kind == "warning").unwrap();
    assert_eq!(w.props["file"], "broken.rs");
    assert_eq!(w.props["line"], "2");
    assert!(stderr.contains("idemlint: 1 finding"), "{stderr}");

    let (_, quiet, quiet_err) = run(&dir, &[".", "--format", "github", "--quiet"]);
    let cmds = parse_commands(&quiet);
    assert_eq!(cmds.len(), 1, "--quiet drops file problems: {quiet}");
    assert_eq!(cmds[0].kind, "error");
    assert!(quiet_err.is_empty(), "{quiet_err}");
}

#[test]
fn github_says_once_when_annotations_exceed_the_limit() {
    let names: Vec<String> = (0..11).map(|i| format!("charge{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let dir = scratch("github_limit");
    std::fs::write(dir.join("Many.kt"), kotlin_file(&names)).unwrap();
    let (code, stdout, _) = run(&dir, &["Many.kt", "--format", "github"]);
    assert_eq!(code, 1);
    let cmds = parse_commands(&stdout);
    assert_eq!(
        cmds.iter().filter(|c| c.kind == "error").count(),
        11,
        "all printed"
    );
    let notices: Vec<&WorkflowCommand> = cmds.iter().filter(|c| c.kind == "notice").collect();
    assert_eq!(notices.len(), 1);
    assert_eq!(
        cmds[0].kind, "notice",
        "the notice comes first, so GitHub shows it"
    );
    assert!(
        notices[0].message.contains("11 error"),
        "{}",
        notices[0].message
    );
    assert!(notices[0].message.contains("--format sarif"));
    assert!(notices[0].message.contains("upload-sarif"));

    std::fs::write(dir.join("Many.kt"), kotlin_file(&names[..10])).unwrap();
    let (_, stdout, _) = run(&dir, &["Many.kt", "--format", "github"]);
    let cmds = parse_commands(&stdout);
    assert_eq!(cmds.len(), 10);
    assert!(cmds.iter().all(|c| c.kind == "error"), "10 fit: no notice");
}

// ---------------------------------------------------------------------------------------
// short

#[test]
fn short_prints_one_parsable_line_per_finding() {
    let dir = scratch("short");
    std::fs::write(dir.join("Billing.kt"), kotlin_file(&["charge", "refund"])).unwrap();
    // A key word makes the prefilter parse it (files that cannot matter are not parsed).
    std::fs::write(dir.join("broken.rs"), "fn idempotency_key( {").unwrap();
    let findings = json(&dir, &["."])["findings"].as_array().unwrap().clone();
    let (code, stdout, stderr) = run(&dir, &[".", "--format", "short"]);
    assert_eq!(code, 1);
    let re = Regex::new(
        r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|note)\[(?P<rule>[a-z0-9-]+)\] (?P<msg>.+)$",
    )
    .unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.len(),
        findings.len(),
        "nothing else on stdout: {stdout}"
    );
    for (l, f) in lines.iter().zip(&findings) {
        let c = re
            .captures(l)
            .unwrap_or_else(|| panic!("bad short line: {l}"));
        assert_eq!(&c["path"], f["path"].as_str().unwrap());
        assert_eq!(c["line"], f["line"].to_string());
        assert_eq!(c["col"], f["column"].to_string());
        assert_eq!(&c["sev"], f["severity"].as_str().unwrap());
        assert_eq!(&c["rule"], f["rule"].as_str().unwrap());
        assert_eq!(&c["msg"], f["message"].as_str().unwrap());
    }
    assert!(stderr.contains("warning: broken.rs:1"), "{stderr}");
    assert!(stderr.contains("idemlint: 2 findings"), "{stderr}");

    let (_, quiet, quiet_err) = run(&dir, &[".", "--format", "short", "--quiet"]);
    assert_eq!(quiet, stdout);
    assert!(quiet_err.is_empty(), "{quiet_err}");
}

// ---------------------------------------------------------------------------------------
// --output, --exit-zero, --quiet

#[test]
fn output_writes_the_report_to_a_file_and_keeps_the_exit_code() {
    let dir = scratch("output");
    std::fs::write(dir.join("Billing.kt"), kotlin_file(&["charge"])).unwrap();
    for format in ["sarif", "json", "github", "short", "human"] {
        let target = format!("reports/{format}/out.txt");
        let (code, stdout, _) = run(
            &dir,
            &["Billing.kt", "--format", format, "--output", &target],
        );
        assert_eq!(code, 1, "{format}: findings still exit 1");
        assert!(stdout.is_empty(), "{format}: nothing on stdout: {stdout}");
        let written = std::fs::read_to_string(dir.join(&target)).unwrap();
        assert!(
            written.contains("key-in-retry-scope"),
            "{format}: {written}"
        );
        assert!(!written.contains('\u{1b}'), "{format}: no colour in files");
    }
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("reports/sarif/out.txt")).unwrap())
            .unwrap();
    assert_eq!(v["runs"][0]["results"].as_array().unwrap().len(), 1);

    // `-` is standard output.
    let (_, stdout, _) = run(&dir, &["Billing.kt", "--format", "short", "-o", "-"]);
    assert!(stdout.starts_with("Billing.kt:"), "{stdout}");
}

#[test]
fn output_to_an_unwritable_place_is_a_tool_error() {
    let dir = scratch("output_error");
    std::fs::write(dir.join("Billing.kt"), kotlin_file(&["charge"])).unwrap();
    std::fs::create_dir_all(dir.join("a_directory")).unwrap();
    let (code, _, stderr) = run(
        &dir,
        &["Billing.kt", "--format", "sarif", "--output", "a_directory"],
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("could not write the report to `a_directory`"),
        "{stderr}"
    );
    // A parent that is a file.
    let (code, _, stderr) = run(
        &dir,
        &[
            "Billing.kt",
            "--output",
            "Billing.kt/report.sarif",
            "--exit-zero",
        ],
    );
    assert_eq!(code, 2, "--exit-zero does not hide tool errors");
    assert!(stderr.contains("Billing.kt/report.sarif"), "{stderr}");
}

#[test]
fn exit_zero_reports_but_exits_zero() {
    let dir = scratch("exit_zero");
    std::fs::write(dir.join("Billing.kt"), kotlin_file(&["charge"])).unwrap();
    let (code, stdout, _) = run(&dir, &["Billing.kt", "--format", "short", "--exit-zero"]);
    assert_eq!(code, 0);
    assert_eq!(stdout.lines().count(), 1, "the finding is still reported");
    let (code, _, stderr) = run(&dir, &["missing.kt", "--exit-zero"]);
    assert_eq!(code, 2, "tool errors still exit 2: {stderr}");
}

#[test]
fn quiet_prints_only_findings() {
    let dir = scratch("quiet");
    std::fs::write(dir.join("Billing.kt"), kotlin_file(&["charge"])).unwrap();
    // A key word makes the prefilter parse it (files that cannot matter are not parsed).
    std::fs::write(dir.join("broken.rs"), "fn idempotency_key( {").unwrap();
    let (code, loud, _) = run(&dir, &["."]);
    assert_eq!(code, 1);
    assert!(loud.contains("idemlint: 1 finding") && loud.contains("warning: broken.rs"));
    let (code, quiet, stderr) = run(&dir, &[".", "--quiet"]);
    assert_eq!(code, 1);
    assert!(quiet.contains("idemlint::key-in-retry-scope"), "{quiet}");
    assert!(!quiet.contains("idemlint: 1 finding"), "{quiet}");
    assert!(!quiet.contains("broken.rs"), "{quiet}");
    assert!(stderr.is_empty(), "{stderr}");
    // JSON and SARIF keep file errors: they are data there.
    let v = json(&dir, &[".", "--quiet"]);
    assert_eq!(v["errors"].as_array().unwrap().len(), 1);
    let s = sarif(&dir, &[".", "--quiet"]);
    assert_eq!(
        s["runs"][0]["invocations"][0]["toolExecutionNotifications"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

/// GitHub's "SARIF support for code scanning" requirements, each checked on the SARIF of
/// the fixtures (and of a project with copies of one finding): rule `fullDescription` at
/// most 1024 characters, `help` in markdown, `helpUri`, `properties.tags`,
/// `properties["problem.severity"]`, `partialFingerprints` unique per result, the related
/// boundary linked from the message (`[… boundary](1)`), and `runAutomationDetails.id`
/// (`automationDetails`) distinct per shard.
#[test]
fn sarif_meets_github_code_scanning_requirements() {
    let root = manifest_dir();
    let log = sarif(&root, &["fixtures"]);
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    for r in rules {
        let id = r["id"].as_str().unwrap();
        for form in ["text", "markdown"] {
            let d = r["fullDescription"][form].as_str().unwrap();
            assert!(
                !d.is_empty() && d.chars().count() <= 1024,
                "{id}: fullDescription.{form} has {} characters",
                d.chars().count()
            );
        }
        let help = r["help"]["markdown"].as_str().unwrap();
        assert!(
            help.starts_with("# ") && help.contains("\n## "),
            "{id}: help is the markdown docs"
        );
        let uri = r["helpUri"].as_str().unwrap();
        assert!(
            uri.starts_with("https://") && uri.ends_with(&format!("/{id}.md")),
            "{uri}"
        );
        let tags = r["properties"]["tags"].as_array().unwrap();
        assert!(
            !tags.is_empty() && tags.iter().all(|t| t.is_string()),
            "{id}: tags"
        );
        let sev = r["properties"]["problem.severity"].as_str().unwrap();
        assert!(
            ["error", "warning", "recommendation"].contains(&sev),
            "{id}: {sev}"
        );
        let level = r["defaultConfiguration"]["level"].as_str().unwrap();
        let expected = if level == "note" {
            "recommendation"
        } else {
            level
        };
        assert_eq!(sev, expected, "{id}: problem.severity follows the level");
    }
    let results = run["results"].as_array().unwrap();
    let mut linked = 0;
    for res in results {
        let text = res["message"]["text"].as_str().unwrap();
        if let Some(rel) = res["relatedLocations"].as_array() {
            let id = rel[0]["id"].as_u64().unwrap();
            assert!(
                Regex::new(&format!(r"\[[a-z ]+ boundary\]\({id}\)"))
                    .unwrap()
                    .is_match(text),
                "the message links the boundary: {text}"
            );
            linked += 1;
        } else {
            assert!(!text.contains("]("), "{text}");
        }
    }
    assert!(linked > 20, "{linked} results with a boundary");
    assert_eq!(run["automationDetails"]["id"], "idemlint/");

    // Two identical findings in one file share a fingerprint; their results do not.
    let dir = scratch("sarif_unique_fingerprints");
    let one = "    retryOnTransient { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }\n";
    std::fs::write(
        dir.join("Twice.kt"),
        format!("import java.util.UUID\n\nsuspend fun charge(api: Api) {{\n{one}{one}}}\n"),
    )
    .unwrap();
    let fps = |log: &Value| -> Vec<String> {
        log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r["partialFingerprints"]["idemlint/v1"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    let json_fps: Vec<String> = json(&dir, &["."])["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["fingerprint"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(json_fps.len(), 2);
    assert_eq!(
        json_fps[0], json_fps[1],
        "copies share the finding's fingerprint"
    );
    let twice = fps(&sarif(&dir, &["."]));
    assert_eq!(
        twice,
        vec![json_fps[0].clone(), format!("{}/2", json_fps[0])]
    );
    let all = fps(&log);
    let unique: std::collections::BTreeSet<&String> = all.iter().collect();
    assert_eq!(
        unique.len(),
        all.len(),
        "partialFingerprints unique per result"
    );

    // Shards are distinct categories; together they are every result.
    let mut ids = std::collections::BTreeSet::new();
    let mut n = 0;
    for s in ["1/2", "2/2"] {
        let log = sarif(&root, &["fixtures", "--shard", s]);
        ids.insert(
            log["runs"][0]["automationDetails"]["id"]
                .as_str()
                .unwrap()
                .to_string(),
        );
        n += log["runs"][0]["results"].as_array().unwrap().len();
    }
    assert_eq!(
        ids.into_iter().collect::<Vec<_>>(),
        ["idemlint-shard-1-of-2/", "idemlint-shard-2-of-2/"]
    );
    assert_eq!(n, results.len());
}

/// `cargo idemlint --message-format=json` (rust-analyzer's `check.overrideCommand`) prints
/// cargo's JSON message stream: `compiler-message` lines with every field cargo's message
/// types require (the ones the `cargo_metadata` crate, which rust-analyzer uses, declares
/// without a default), rustc-style spans that agree with `--format json`, then
/// `build-finished`.
#[test]
fn cargo_message_format_json_is_cargos_message_stream() {
    let dir = scratch("cargo_message_format");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"payouts\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "pub fn capture(client: &reqwest::blocking::Client) -> Result<reqwest::blocking::Response, backoff::Error<reqwest::Error>> {\n    backoff::retry(backoff::ExponentialBackoff::default(), || {\n        let key = /* ü */ uuid::Uuid::new_v4().to_string();\n        Ok(client.post(\"https://psp.example.com/v1/charges\").header(\"Idempotency-Key\", key).send()?)\n    })\n}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-idemlint"))
        .current_dir(&dir)
        .args(["idemlint", "--message-format=json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let expected = json(&dir, &["."])["findings"].as_array().unwrap().clone();
    assert_eq!(lines.len(), expected.len() + 1, "{stdout}");
    let last = lines.last().unwrap();
    assert_eq!(last["reason"], "build-finished");
    assert_eq!(last["success"], false);
    for (m, f) in lines.iter().zip(&expected) {
        assert_eq!(m["reason"], "compiler-message");
        for k in ["package_id", "manifest_path"] {
            assert!(m[k].is_string(), "{k}: {m}");
        }
        assert!(m["manifest_path"].as_str().unwrap().ends_with("Cargo.toml"));
        let t = &m["target"];
        assert!(t["name"].is_string() && t["src_path"].is_string());
        assert!(t["kind"].as_array().is_some_and(|k| !k.is_empty()));
        let d = &m["message"];
        assert_eq!(d["$message_type"], "diagnostic");
        assert_eq!(d["message"], f["message"]);
        assert_eq!(d["level"], f["severity"]);
        assert_eq!(
            d["code"]["code"],
            format!("idemlint::{}", f["rule"].as_str().unwrap())
        );
        assert!(d["rendered"].is_string());
        assert_eq!(d["children"][0]["level"], "help");
        assert_eq!(d["children"][0]["message"], f["help"]);
        let spans = d["spans"].as_array().unwrap();
        let primary: Vec<&Value> = spans.iter().filter(|s| s["is_primary"] == true).collect();
        assert_eq!(primary.len(), 1);
        let s = primary[0];
        for k in [
            "file_name",
            "byte_start",
            "byte_end",
            "line_start",
            "line_end",
            "column_start",
            "column_end",
            "is_primary",
            "text",
            "label",
            "suggested_replacement",
            "suggestion_applicability",
            "expansion",
        ] {
            assert!(s.get(k).is_some(), "span field {k}: {s}");
        }
        assert_eq!(s["file_name"], f["path"]);
        assert_eq!(s["line_start"], f["line"]);
        assert_eq!(s["column_start"], f["column"]);
        assert_eq!(s["line_end"], f["end_line"]);
        assert_eq!(s["column_end"], f["end_column"]);
        let text = std::fs::read_to_string(dir.join(f["path"].as_str().unwrap())).unwrap();
        let (a, b) = (
            s["byte_start"].as_u64().unwrap() as usize,
            s["byte_end"].as_u64().unwrap() as usize,
        );
        assert_eq!(&text[a..b], f["source"].as_str().unwrap(), "byte offsets");
        let line = &s["text"][0];
        let hl: String = line["text"]
            .as_str()
            .unwrap()
            .chars()
            .skip(line["highlight_start"].as_u64().unwrap() as usize - 1)
            .take(
                (line["highlight_end"].as_u64().unwrap()
                    - line["highlight_start"].as_u64().unwrap()) as usize,
            )
            .collect();
        assert_eq!(
            hl,
            f["source"].as_str().unwrap(),
            "highlighted columns are chars"
        );
    }
}

/// The JSON summary counts what the report holds: findings by severity and by fix, the
/// files checked and parsed, the files with a problem. A file with no key word is checked
/// but not parsed; a file that is not UTF-8 is a problem.
#[test]
fn json_summary_counts_the_report() {
    let dir = scratch("json_summary");
    std::fs::write(
        dir.join("Charges.kt"),
        kotlin_file(&["payInvoice", "payRefund"]),
    )
    .unwrap();
    std::fs::write(
        dir.join("Plain.kt"),
        "fun add(a: Int, b: Int): Int = a + b\n",
    )
    .unwrap();
    std::fs::write(dir.join("Broken.kt"), b"fun f() = \"\xff\"\n").unwrap();
    let v = json(&dir, &["--exit-zero"]);
    let findings = v["findings"].as_array().unwrap();
    let s = &v["summary"];
    assert_eq!(s["findings"], findings.len(), "{s}");
    assert!(!findings.is_empty());
    let sev = |name: &str| findings.iter().filter(|f| f["severity"] == name).count();
    for name in ["error", "warning", "note"] {
        assert_eq!(s["by_severity"][name], sev(name), "{name}: {s}");
    }
    let with_fix = |a: &str| {
        findings
            .iter()
            .filter(|f| f["fix"]["applicability"] == a)
            .count()
    };
    assert_eq!(s["fixes"]["safe"], with_fix("safe"), "{s}");
    assert_eq!(s["fixes"]["unsafe"], with_fix("unsafe"), "{s}");
    assert_eq!(
        s["fixes"]["none"],
        findings.iter().filter(|f| f.get("fix").is_none()).count(),
        "{s}"
    );
    assert_eq!(s["files"]["checked"], 3, "{s}");
    // Plain.kt holds no key word, and Broken.kt cannot be read as text.
    assert_eq!(s["files"]["parsed"], 1, "{s}");
    assert_eq!(s["files"]["with_problems"], 1, "{s}");
    assert_eq!(v["errors"][0]["path"], "Broken.kt", "{v}");
    // `--no-prefilter` parses every file it can read.
    let all = json(&dir, &["--exit-zero", "--no-prefilter"]);
    assert_eq!(all["summary"]["files"]["parsed"], 2, "{}", all["summary"]);
}
