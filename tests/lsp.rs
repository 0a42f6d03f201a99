//! Drives the `idemlint lsp` binary as an editor would: a real child process spoken to
//! over its stdin/stdout with LSP framing. Every wait has a timeout, so a hung server
//! fails the test instead of hanging it.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(30);

/// `ü` (1 UTF-16 unit, 2 bytes) and `💳` (2 UTF-16 units, 4 bytes) come before the finding
/// on its line, so only a correct UTF-16 conversion gives the expected range.
const BAD: &str = "import java.util.UUID\n\
\n\
suspend fun charge(api: Api): Charge {\n\
\x20   val note = \"ü💳\"; return retryOnTransient { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }\n\
}\n";

/// The same code with the key hoisted out of the retry lambda.
const FIXED: &str = "import java.util.UUID\n\
\n\
suspend fun charge(api: Api): Charge {\n\
\x20   val idempotencyKey = UUID.randomUUID().toString()\n\
\x20   val note = \"ü💳\"; return retryOnTransient { api.createCharge(idempotencyKey = idempotencyKey) }\n\
}\n";

struct Client {
    child: Child,
    stdin: ChildStdin,
    rx: mpsc::Receiver<Value>,
    next_id: i64,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_idemlint"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start idemlint lsp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            while let Some(msg) = read_message(&mut r) {
                if tx.send(msg).is_err() {
                    return;
                }
            }
        });
        Client {
            child,
            stdin,
            rx,
            next_id: 1,
        }
    }

    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its response (other messages meanwhile are dropped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait_for(|m| m["id"] == id && m.get("method").is_none())
    }

    /// The next message that satisfies `pred`; panics after [`TIMEOUT`].
    fn wait_for(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(m) if pred(&m) => return m,
                Ok(_) => {}
                Err(e) => panic!("no expected message from the server within {TIMEOUT:?}: {e}"),
            }
        }
    }

    fn diagnostics_for(&mut self, uri: &str) -> Value {
        self.wait_for(|m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
        })["params"]
            .clone()
    }

    /// Waits for the process to exit; kills it and panics after [`TIMEOUT`].
    fn wait_exit(mut self) -> i32 {
        drop(self.stdin);
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().expect("exited by a signal");
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("the server did not exit within {TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

fn read_message(r: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    r.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// Byte offset of a 0-based line and UTF-16 `character` in `text` (lines end at `\n`).
fn utf16_offset(text: &str, line: u64, character: u64) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line as usize)
        .map(str::len)
        .sum();
    let mut units = 0;
    for (i, ch) in text[start..].char_indices() {
        if units >= character || ch == '\n' {
            return start + i;
        }
        units += ch.len_utf16() as u64;
    }
    text.len()
}

/// Applies LSP `TextEdit`s whose ranges all refer to `text`, as a client does.
fn apply_utf16_edits(text: &str, edits: &[Value]) -> String {
    let at = |p: &Value| {
        utf16_offset(
            text,
            p["line"].as_u64().unwrap(),
            p["character"].as_u64().unwrap(),
        )
    };
    let mut spans: Vec<(usize, usize, &str)> = edits
        .iter()
        .map(|e| {
            (
                at(&e["range"]["start"]),
                at(&e["range"]["end"]),
                e["newText"].as_str().unwrap(),
            )
        })
        .collect();
    spans.sort_by_key(|&(a, b, _)| std::cmp::Reverse((a, b)));
    let mut out = text.to_string();
    for (a, b, t) in spans {
        out.replace_range(a..b, t);
    }
    out
}

fn file_uri(name: &str) -> String {
    let dir = std::env::temp_dir();
    format!("file://{}/idemlint lsp test/{name}", dir.display()).replace(' ', "%20")
}

fn utf16_len(s: &str) -> u64 {
    s.encode_utf16().count() as u64
}

#[test]
fn diagnostics_follow_the_unsaved_text_and_hover_shows_the_docs() {
    let mut c = Client::start();
    let init = c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {
            "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]},
                             "publishDiagnostics": {"relatedInformation": true}}}}),
    );
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["positionEncoding"], "utf-16");
    assert_eq!(caps["hoverProvider"], true);
    assert_eq!(
        caps["codeActionProvider"]["codeActionKinds"],
        json!(["quickfix", "source.fixAll.idemlint"])
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "idemlint");
    c.notify("initialized", json!({}));

    let uri = file_uri("Billing.kt");
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "kotlin", "version": 1, "text": BAD}}),
    );
    let published = c.diagnostics_for(&uri);
    assert_eq!(published["version"], 1);
    let diags = published["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let d = &diags[0];

    // The range is the source `UUID.randomUUID()`, in UTF-16 code units.
    let line = BAD.lines().nth(3).unwrap();
    let before = &line[..line.find("UUID.randomUUID()").unwrap()];
    let start = utf16_len(before);
    assert_eq!(start, 82, "ü counts 1 unit and 💳 2 (81 chars, 85 bytes)");
    assert_eq!(
        d["range"],
        json!({"start": {"line": 3, "character": start},
               "end": {"line": 3, "character": start + utf16_len("UUID.randomUUID()")}})
    );
    assert_eq!(d["code"], "key-in-retry-scope");
    assert_eq!(d["severity"], 1);
    assert_eq!(d["source"], "idemlint");
    assert_eq!(
        d["codeDescription"]["href"],
        "https://github.com/idemlint/idemlint/blob/main/rules/docs/key-in-retry-scope.md"
    );
    let related = &d["relatedInformation"][0];
    assert_eq!(related["location"]["uri"], uri.as_str());
    let boundary_start = utf16_len(&line[..line.find("retryOnTransient").unwrap()]);
    assert_eq!(
        related["location"]["range"]["start"],
        json!({"line": 3, "character": boundary_start})
    );

    // Hover inside the range shows the rule's documentation as markdown.
    let hover = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 3, "character": start + 3}}),
    );
    let contents = &hover["result"]["contents"];
    assert_eq!(contents["kind"], "markdown");
    let text = contents["value"].as_str().unwrap();
    let explain = Command::new(env!("CARGO_BIN_EXE_idemlint"))
        .args(["explain", "key-in-retry-scope"])
        .output()
        .unwrap();
    assert_eq!(text, String::from_utf8(explain.stdout).unwrap().trim_end());
    assert_eq!(hover["result"]["range"], d["range"]);
    // Outside any diagnostic: nothing.
    let nothing = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(nothing["result"], Value::Null);

    // Full-text change to the fixed code (unsaved): the diagnostics are cleared.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"text": FIXED}]}),
    );
    let published = c.diagnostics_for(&uri);
    assert_eq!(published["version"], 2);
    assert_eq!(published["diagnostics"], json!([]));

    // Back to the bug.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3},
               "contentChanges": [{"text": BAD}]}),
    );
    assert_eq!(
        c.diagnostics_for(&uri)["diagnostics"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // The quick fix on the diagnostic: applying its edits (as a client does) removes it.
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": d["range"],
               "context": {"diagnostics": [d], "only": ["quickfix"]}}),
    )["result"]
        .clone();
    let quick = &actions[0];
    assert_eq!(quick["kind"], "quickfix");
    assert_eq!(quick["diagnostics"][0]["code"], "key-in-retry-scope");
    let edits = quick["edit"]["changes"][uri.as_str()].as_array().unwrap();
    let fixed_by_action = apply_utf16_edits(BAD, edits);
    assert!(fixed_by_action.contains("retryOnTransient"));
    // The key moved out of the lambda: it is declared once, and the argument reads it.
    assert!(fixed_by_action.contains("val idempotencyKey = UUID.randomUUID()"));
    assert!(fixed_by_action.contains("idempotencyKey = idempotencyKey"));
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 4},
               "contentChanges": [{"text": fixed_by_action}]}),
    );
    assert_eq!(c.diagnostics_for(&uri)["diagnostics"], json!([]));

    // Back to the bug, then close: closing clears the diagnostics.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 5},
               "contentChanges": [{"text": BAD}]}),
    );
    assert_eq!(
        c.diagnostics_for(&uri)["diagnostics"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    assert_eq!(c.diagnostics_for(&uri)["diagnostics"], json!([]));

    let shutdown = c.request("shutdown", Value::Null);
    assert_eq!(shutdown["result"], Value::Null);
    assert!(shutdown.get("error").is_none());
    c.notify("exit", Value::Null);
    assert_eq!(c.wait_exit(), 0);
}

#[test]
fn utf8_positions_when_the_client_offers_them_and_garbage_is_survived() {
    let mut c = Client::start();
    // Garbage before anything else: logged and skipped.
    c.stdin
        .write_all(b"Content-Length: 5\r\n\r\n{oops")
        .unwrap();
    let init = c.request(
        "initialize",
        json!({"capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]}}}),
    );
    assert_eq!(init["result"]["capabilities"]["positionEncoding"], "utf-8");
    c.notify("initialized", json!({}));
    let uri = file_uri("Billing8.kt");
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "kotlin", "version": 1, "text": BAD}}),
    );
    let d = c.diagnostics_for(&uri)["diagnostics"][0].clone();
    let line = BAD.lines().nth(3).unwrap();
    let start = line.find("UUID.randomUUID()").unwrap() as u64;
    assert_eq!(start, 85);
    assert_eq!(d["range"]["start"], json!({"line": 3, "character": start}));
    // An incremental edit in UTF-8 units hoists nothing but renames the source away.
    let len = "UUID.randomUUID().toString()".len() as u64;
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{
            "range": {"start": {"line": 3, "character": start},
                      "end": {"line": 3, "character": start + len}},
            "text": "request.idempotencyKey"}]}),
    );
    assert_eq!(c.diagnostics_for(&uri)["diagnostics"], json!([]));
    c.stdin.write_all(b"Content-Length: 2\r\n\r\n[]").unwrap();
    let shutdown = c.request("shutdown", Value::Null);
    assert_eq!(shutdown["result"], Value::Null);
    c.notify("exit", Value::Null);
    assert_eq!(c.wait_exit(), 0);
}

#[test]
fn exit_without_shutdown_is_an_error_exit() {
    let mut c = Client::start();
    c.request("initialize", json!({"capabilities": {}}));
    c.notify("exit", Value::Null);
    assert_eq!(c.wait_exit(), 1);
}

/// A fresh directory under cargo's per-test temporary directory.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn uri_of(path: &std::path::Path) -> String {
    format!("file://{}", path.display()).replace(' ', "%20")
}

/// Configuration files, rule levels and suppressions apply in the editor exactly as in
/// `check`; a broken configuration is reported on the document.
#[test]
fn configuration_and_suppressions_apply() {
    let off = scratch("lsp_config_off");
    std::fs::write(
        off.join("idemlint.toml"),
        "[rules]\nkey-in-retry-scope = \"warning\"\n",
    )
    .unwrap();
    let broken = scratch("lsp_config_broken");
    let toml = "[rules]\nkey-in-retry-scop = \"off\"\n";
    std::fs::write(broken.join("idemlint.toml"), toml).unwrap();
    let plain = scratch("lsp_config_none");

    let mut c = Client::start();
    c.request("initialize", json!({"capabilities": {}}));
    c.notify("initialized", json!({}));
    let open = |c: &mut Client, uri: &str, text: &str| {
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "kotlin", "version": 1, "text": text}}),
        );
        c.diagnostics_for(uri)["diagnostics"].clone()
    };

    // The level from idemlint.toml: a warning instead of the default error.
    let d = open(&mut c, &uri_of(&off.join("Billing.kt")), BAD);
    assert_eq!(d.as_array().unwrap().len(), 1, "{d:#?}");
    assert_eq!(d[0]["code"], "key-in-retry-scope");
    assert_eq!(d[0]["severity"], 2);

    // A suppression comment on the line above.
    let suppressed = BAD.replace(
        "    val note",
        "    // idemlint: allow(key-in-retry-scope) -- the API dedupes by body hash\n    val note",
    );
    let d = open(&mut c, &uri_of(&plain.join("Billing.kt")), &suppressed);
    assert_eq!(d, json!([]));

    // An unknown rule id in the configuration: one error on the document, pointing at the
    // key in idemlint.toml.
    let d = open(&mut c, &uri_of(&broken.join("Billing.kt")), BAD);
    assert_eq!(d.as_array().unwrap().len(), 1, "{d:#?}");
    assert_eq!(d[0]["code"], "config-error");
    assert_eq!(d[0]["severity"], 1);
    assert!(
        d[0]["message"]
            .as_str()
            .unwrap()
            .contains("key-in-retry-scope"),
        "suggests the right id: {d:#?}"
    );
    let related = &d[0]["relatedInformation"][0]["location"];
    assert_eq!(related["uri"], uri_of(&broken.join("idemlint.toml")));
    assert_eq!(
        related["range"]["start"],
        json!({"line": 1, "character": 0})
    );

    c.request("shutdown", Value::Null);
    c.notify("exit", Value::Null);
    assert_eq!(c.wait_exit(), 0);
}

/// Item 16: analysis runs off the server loop, so a request about another document is
/// answered while a large document is analysed; the edits that arrive meanwhile make the
/// stale work be dropped and only the newest version's diagnostics matter; a header line
/// without a newline is read past with bounded memory, and the server goes on.
#[test]
fn analysis_runs_off_the_loop_and_headers_are_bounded() {
    let mut c = Client::start();
    c.request("initialize", json!({"capabilities": {}}));
    c.notify("initialized", json!({}));
    // About 2 MB of Kotlin: seconds of analysis in a debug build.
    let mut big = String::from("import java.util.UUID\n");
    let mut i = 0;
    while big.len() < 2 << 20 {
        big.push_str(&format!(
            "fun helper{i}(a: Int, b: String): String {{\n    val idempotencyKey = \"order-$a-$b-{i}\"\n    return listOf(a, b).joinToString(\",\") + idempotencyKey\n}}\n"
        ));
        i += 1;
    }
    let big_uri = file_uri("Big.kt");
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": big_uri, "languageId": "kotlin", "version": 1, "text": big}}),
    );
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let other = file_uri("Other.kt");
    let id = c.next_id;
    c.next_id += 1;
    c.send(
        json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover",
        "params": {"textDocument": {"uri": other}, "position": {"line": 0, "character": 0}}}),
    );
    // The hover's answer comes before the big document's diagnostics.
    let first = c.wait_for(|m| m["id"] == id || m["params"]["uri"] == big_uri.as_str());
    assert_eq!(
        first["id"], id,
        "the hover waited for the analysis: {first}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // Two quick edits: the diagnostics that end up published are version 3's.
    for v in [2, 3] {
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": big_uri, "version": v},
                "contentChanges": [{"text": if v == 3 { BAD } else { "fun x() {}\n" }}]}),
        );
    }
    let d = c.wait_for(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == big_uri.as_str()
            && m["params"]["version"] == 3
    });
    assert_eq!(
        d["params"]["diagnostics"].as_array().unwrap().len(),
        1,
        "{d}"
    );

    // A 4 MB header line without a newline, then a well-formed request.
    let mut junk = vec![b'X'; 4 << 20];
    junk.extend_from_slice(b"\r\n\r\n");
    c.stdin.write_all(&junk).unwrap();
    let r = c.request("shutdown", Value::Null);
    assert!(r.get("error").is_none(), "{r}");
    c.notify("exit", Value::Null);
    assert_eq!(c.wait_exit(), 0);
}
