//! `idemlint lsp`: a language server over stdio (LSP 3.17, JSON-RPC framing from the
//! `lsp-server` crate, types from `lsp-types`).
//!
//! It publishes diagnostics for open Rust, Java and Kotlin documents on `didOpen` and
//! `didChange` and clears them on `didClose`. A document whose file lies in a workspace
//! folder (`initialize`'s `workspaceFolders`, else `rootUri` / `rootPath`) and exists on
//! disk is analysed as `idemlint check ROOT --only FILE` analyses it: the whole folder is
//! indexed (its files as on disk, open documents as the editor holds them), so a retry
//! helper or key parameter in another file counts; a change to any open document, a saved
//! file or a watched file (`didSave`, `workspace/didChangeWatchedFiles`, registered
//! dynamically when the client allows it) re-analyses and re-publishes the open documents
//! of that folder, in one run (a run an edit supersedes is cancelled; pass-1 results are
//! kept in memory between runs, and each folder is indexed in the background at
//! `initialized`, with `$/progress` when the client supports it). Other documents are
//! analysed alone by
//! [`crate::check::check_text_with`]. Either way, under the configuration `check` would use
//! for that path (nearest `idemlint.toml`, rule levels, include/exclude, suppressions). Each diagnostic has
//! the rule id as `code`, `codeDescription.href` pointing at the rule's documentation, the
//! attempt boundary as `relatedInformation`, and hovering its range shows the rule's
//! documentation (`rules/docs/<id>.md`). Parse errors are published as warnings with the
//! code `parse-error`. Code actions: each finding's fix (`crate::fix`: hoisting the key out
//! of the retry, `call.clone()` in a callback) as a quick fix, and
//! `source.fixAll.idemlint` for every safe fix of the document.
//!
//! Positions: the core gives byte spans; they are converted with the document text into
//! the position encoding negotiated in `initialize` (`utf-8`, `utf-16` or `utf-32`; the
//! first the client lists among those, UTF-16 when it lists none).
//!
//! Robustness: a malformed message (bad header, bad JSON, unknown shape) is logged to
//! stderr and skipped; a request that cannot be served gets a JSON-RPC error response; a
//! panic while handling a message is caught and logged. Nothing the client sends stops
//! the server except `exit` or the end of its input. Exit code: 0 after `shutdown` then
//! `exit` (or end of input after `shutdown`), 1 otherwise (as the specification asks).

pub mod position;
pub mod uri;

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOptions, CodeActionOrCommand, CodeActionParams,
    CodeActionProviderCapability, CodeDescription, Diagnostic, DiagnosticRelatedInformation,
    DiagnosticSeverity, DidChangeTextDocumentParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DocumentChanges, Hover, HoverContents, HoverParams,
    HoverProviderCapability, InitializeResult, Location, MarkupContent, MarkupKind, NumberOrString,
    OneOf, OptionalVersionedTextDocumentIdentifier, PositionEncodingKind, PublishDiagnosticsParams,
    Range, ServerCapabilities, ServerInfo, TextDocumentEdit, TextDocumentSyncCapability,
    TextDocumentSyncKind, TextDocumentSyncOptions, TextEdit, Uri, WorkspaceEdit,
};
use serde_json::Value;

use crate::catalogue::Catalogue;
use crate::config::{ConfigError, Resolver, RuleSelection};
use crate::finding::{Applicability, FileError, Finding, Fix, Severity};
use crate::model::Language;
use crate::text::LineIndex;
use position::{Encoding, LineMap};

/// Where `codeDescription.href` points: the rule's documentation page, `<id>.md` appended.
pub const RULE_DOCS_BASE: &str = "https://github.com/idemlint/idemlint/blob/main/rules/docs/";

/// The `code` of a diagnostic for a parse error of the document.
pub const PARSE_ERROR_CODE: &str = "parse-error";

/// The `code` of the diagnostic for an invalid configuration file that applies to the
/// document.
pub const CONFIG_ERROR_CODE: &str = "config-error";

/// The `code` of a diagnostic for an internal error while analysing the document.
pub const INTERNAL_ERROR_CODE: &str = "internal-error";

/// The code action kind of "apply every safe fix in this document" (under
/// `source.fixAll`, which editors run on save when asked to).
pub const FIX_ALL_KIND: &str = "source.fixAll.idemlint";

/// Largest message body accepted, bytes; a larger one is read past and dropped.
const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// Longest header line kept, bytes; a longer one is read past (not stored) and skipped.
const MAX_HEADER_LINE: usize = 8 << 10;

/// Runs the server on stdin/stdout until `exit`; returns the process exit code.
///
/// The server loop runs on a thread with the analysis stack size
/// ([`crate::check::STACK_SIZE`]), as `check`'s workers do.
pub fn run_stdio() -> i32 {
    let (tx, rx) = mpsc::channel();
    spawn_reader(std::io::BufReader::new(std::io::stdin()), tx);
    let worker = std::thread::Builder::new()
        .name("idemlint-lsp".into())
        .stack_size(crate::check::STACK_SIZE)
        .spawn(move || serve(rx, std::io::stdout().lock()));
    match worker.map(|h| h.join()) {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => {
            log("the server thread panicked");
            1
        }
        Err(e) => {
            log(&format!("could not start the server thread: {e}"));
            1
        }
    }
}

/// What the reader thread hands to the server loop.
pub enum Incoming {
    /// A well-formed message.
    Message(Message),
    /// A body that is JSON but not a valid message; carries its `id` when it had one, so
    /// the request can be answered with an error instead of leaving the client waiting.
    Invalid(Option<RequestId>),
    /// The analysis thread's result for one version of a document (internal).
    Analysed(Box<Analysed>),
    /// The client's input ended (internal: the analysis thread keeps the channel open).
    End,
    /// A workspace folder's warm-up finished; its `$/progress` token (internal).
    Warmed(Option<String>),
}

/// What a document's diagnostics are computed from: its version, and the server's change
/// counter when it was last marked for analysis (a change to another file of its
/// workspace folder bumps the counter, not the version).
type Stamp = (i32, u64);

/// Open documents' texts by absolute canonical path ([`crate::check::Options::overlays`]).
type Texts = std::sync::Arc<HashMap<PathBuf, std::sync::Arc<str>>>;

/// One document version to analyse off the server loop.
struct Job {
    key: String,
    stamp: Stamp,
    display: String,
    text: String,
    /// The workspace folder (absolute, canonical) and the file's path in it, when the
    /// document is analysed with its folder's index.
    workspace: Option<(PathBuf, PathBuf)>,
    /// The open documents' texts, for the folder's run.
    texts: Texts,
    /// A warm-up at `initialized`: index the folder (filling the pass-1 cache), report
    /// nothing; the `$/progress` token to end, when the client takes progress.
    warm: Option<Option<String>>,
}

/// What the analysis thread found for one document version.
pub struct Analysed {
    key: String,
    stamp: Stamp,
    findings: Vec<Finding>,
    errors: Vec<FileError>,
    config_error: Option<ConfigError>,
}

/// Latest stamp of every open supported document, shared with the analysis thread so it
/// skips (cancels) queued work for versions that are already stale or closed.
type Latest = std::sync::Arc<std::sync::Mutex<HashMap<String, Stamp>>>;

/// Analyses the documents of `jobs` that share a workspace folder with one
/// `idemlint check ROOT --only FILE...` run (open documents' texts instead of the files),
/// the others alone ([`analyse`]). A folder whose run fails (an invalid configuration)
/// falls back to analysing its documents alone, which reports the configuration error.
fn analyse_jobs(
    catalogue: &Catalogue,
    jobs: Vec<Job>,
    latest: Option<&Latest>,
    cache: Option<&crate::check::Pass1Cache>,
) -> Vec<Analysed> {
    let mut out = Vec::new();
    let mut alone: Vec<Job> = Vec::new();
    let mut folders: Vec<(PathBuf, Vec<Job>)> = Vec::new();
    for j in jobs {
        match &j.workspace {
            Some((root, file)) if file.is_file() => {
                let root = root.clone();
                match folders.iter_mut().find(|(r, _)| *r == root) {
                    Some((_, v)) => v.push(j),
                    None => folders.push((root, vec![j])),
                }
            }
            _ => alone.push(j),
        }
    }
    for (root, jobs) in folders {
        let files: Vec<PathBuf> = jobs
            .iter()
            .filter_map(|j| j.workspace.as_ref().map(|(_, f)| f.clone()))
            .collect();
        // A folder's run stops early once a newer analysis of its documents is asked for
        // (an edit anywhere in the folder supersedes them all).
        let cancel = latest.map(|latest| {
            let latest = latest.clone();
            let stamps: Vec<(String, Stamp)> =
                jobs.iter().map(|j| (j.key.clone(), j.stamp)).collect();
            crate::check::Cancel(std::sync::Arc::new(move || {
                latest.lock().is_ok_and(|l| {
                    stamps
                        .iter()
                        .all(|(k, s)| l.get(k).is_none_or(|now| now != s))
                })
            }))
        });
        let opts = crate::check::Options {
            cancel,
            pass1_cache: cache.cloned(),
            paths: vec![root],
            only: Some(crate::check::Only {
                paths: files.clone(),
                named: true,
            }),
            // The newest snapshot of the open documents among the jobs.
            overlays: jobs
                .iter()
                .max_by_key(|j| j.stamp.1)
                .map(|j| j.texts.clone()),
            ..crate::check::Options::default()
        };
        let report = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            crate::check::run(&opts, catalogue)
        }));
        match report {
            // Superseded: newer jobs for these documents are queued; nothing to publish.
            Ok(Ok(report)) if report.cancelled => {}
            Ok(Ok(mut report)) => {
                for (j, file) in jobs.into_iter().zip(files) {
                    let shown = crate::discover::display_of(&file);
                    let (findings, rest): (Vec<Finding>, Vec<Finding>) =
                        std::mem::take(&mut report.findings)
                            .into_iter()
                            .partition(|f| f.path == shown);
                    report.findings = rest;
                    let errors = report
                        .errors
                        .iter()
                        .filter(|e| e.path == shown)
                        .cloned()
                        .collect();
                    out.push(Analysed {
                        key: j.key,
                        stamp: j.stamp,
                        findings,
                        errors,
                        config_error: None,
                    });
                }
            }
            _ => alone.extend(jobs),
        }
    }
    for j in alone {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            analyse(catalogue, &j.display, &j.text)
        }));
        let (findings, errors, config_error) = match r {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(p) => (
                Vec::new(),
                vec![FileError {
                    path: j.display.clone(),
                    line: None,
                    column: None,
                    message: format!(
                        "internal error while analysing this file (please report it): {}",
                        panic_text(&p)
                    ),
                }],
                None,
            ),
        };
        out.push(Analysed {
            key: j.key,
            stamp: j.stamp,
            findings,
            errors,
            config_error,
        });
    }
    out
}

/// Analyses `text` as `display` under the configuration `check` would use for it:
/// findings, file errors and a configuration error. `None`: not a supported language.
fn analyse(
    catalogue: &Catalogue,
    display: &str,
    text: &str,
) -> Option<(Vec<Finding>, Vec<FileError>, Option<ConfigError>)> {
    // The configuration is looked up afresh for every analysis (as `check` does per
    // run), so edits to `idemlint.toml` apply from the document's next change.
    let path = Path::new(display);
    let resolved =
        Resolver::new(catalogue, None, RuleSelection::default()).and_then(|mut r| r.for_path(path));
    match resolved {
        Ok(config) if !config.includes(path) => Some((Vec::new(), Vec::new(), None)),
        Ok(config) => {
            crate::check::check_text_with(display, text, &config).map(|(f, e)| (f, e, None))
        }
        Err(e) => Some((Vec::new(), Vec::new(), Some(e))),
    }
}

/// The analysis thread: takes jobs from `jobs`, keeps only the newest queued job of each
/// document, skips versions no longer current in `latest`, and sends results to `out`.
/// A job that has started runs to its end (its result is dropped if stale by then).
fn spawn_analyser(
    jobs: mpsc::Receiver<Job>,
    out: mpsc::Sender<Incoming>,
    latest: Latest,
    catalogue: Catalogue,
) -> bool {
    std::thread::Builder::new()
        .name("idemlint-lsp-analysis".into())
        .stack_size(crate::check::STACK_SIZE)
        .spawn(move || {
            // Pass-1 results of the workspace folders' files, kept between analyses: an
            // edit re-parses only the files whose text changed.
            let cache = crate::check::Pass1Cache::default();
            while let Ok(first) = jobs.recv() {
                let mut queue = vec![first];
                queue.extend(jobs.try_iter());
                // The newest job per document, in arrival order.
                let mut newest: Vec<Job> = Vec::new();
                for j in queue {
                    newest.retain(|n| n.key != j.key);
                    newest.push(j);
                }
                let (warm, newest): (Vec<Job>, Vec<Job>) =
                    newest.into_iter().partition(|j| j.warm.is_some());
                for job in warm {
                    if let Some((root, _)) = &job.workspace {
                        let opts = crate::check::Options {
                            paths: vec![root.clone()],
                            only: Some(crate::check::Only {
                                paths: Vec::new(),
                                named: true,
                            }),
                            pass1_cache: Some(cache.clone()),
                            ..crate::check::Options::default()
                        };
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            crate::check::run(&opts, &catalogue)
                        }));
                    }
                    if out.send(Incoming::Warmed(job.warm.flatten())).is_err() {
                        return;
                    }
                }
                let current: Vec<Job> = newest
                    .into_iter()
                    .filter(|job| {
                        latest
                            .lock()
                            .map(|l| l.get(&job.key) == Some(&job.stamp))
                            .unwrap_or(true)
                    })
                    .collect();
                if current.is_empty() {
                    continue;
                }
                for msg in analyse_jobs(&catalogue, current, Some(&latest), Some(&cache)) {
                    if out.send(Incoming::Analysed(Box::new(msg))).is_err() {
                        return;
                    }
                }
            }
        })
        .is_ok()
}

/// Reads framed messages from `input` on a new thread and sends them to `tx` until the
/// end of the input or an I/O error. Malformed messages are logged and skipped.
pub fn spawn_reader<R: BufRead + Send + 'static>(mut input: R, tx: mpsc::Sender<Incoming>) {
    let spawned = std::thread::Builder::new()
        .name("idemlint-lsp-reader".into())
        .spawn(move || {
            loop {
                match read_frame(&mut input) {
                    Ok(Some(body)) => {
                        if tx.send(parse_body(&body)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => return,
                    Err(e) => {
                        log(&format!("stopped reading the input: {e}"));
                        return;
                    }
                }
            }
        });
    if let Err(e) = spawned {
        log(&format!("could not start the reader thread: {e}"));
    }
}

/// Reads one `Content-Length`-framed body. `Ok(None)` at the end of the input. Header
/// blocks without a usable `Content-Length`, and bodies over [`MAX_MESSAGE_BYTES`], are
/// logged and skipped.
fn read_frame(input: &mut impl BufRead) -> std::io::Result<Option<Vec<u8>>> {
    loop {
        let mut length: Option<usize> = None;
        let mut saw_header = false;
        loop {
            let mut line = Vec::new();
            let n = input
                .by_ref()
                .take(MAX_HEADER_LINE as u64)
                .read_until(b'\n', &mut line)?;
            if n == 0 {
                if saw_header {
                    log("the input ended inside a message header");
                }
                return Ok(None);
            }
            if !line.ends_with(b"\n") && n == MAX_HEADER_LINE {
                // Read past the rest of the line without keeping it.
                log(&format!(
                    "a header line longer than {MAX_HEADER_LINE} bytes was skipped"
                ));
                loop {
                    let buf = input.fill_buf()?;
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    match buf.iter().position(|&b| b == b'\n') {
                        Some(p) => {
                            input.consume(p + 1);
                            break;
                        }
                        None => {
                            let len = buf.len();
                            input.consume(len);
                        }
                    }
                }
                saw_header = true;
                continue;
            }
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\r', '\n']);
            if line.is_empty() {
                if saw_header {
                    break;
                }
                continue; // stray blank line between messages
            }
            saw_header = true;
            match line.split_once(':') {
                Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                    match value.trim().parse::<usize>() {
                        Ok(n) => length = Some(n),
                        Err(_) => log(&format!("malformed Content-Length header: {line:?}")),
                    }
                }
                Some(_) => {} // Content-Type and other headers
                None => log(&format!("malformed header line skipped: {:?}", clip(line))),
            }
        }
        let Some(length) = length else {
            log("a message header without a valid Content-Length was skipped");
            continue;
        };
        if length > MAX_MESSAGE_BYTES {
            log(&format!(
                "a message of {length} bytes is over the limit of {MAX_MESSAGE_BYTES}; skipped"
            ));
            let skipped = std::io::copy(
                &mut input.by_ref().take(length as u64),
                &mut std::io::sink(),
            )?;
            if skipped < length as u64 {
                return Ok(None);
            }
            continue;
        }
        let mut body = vec![0; length];
        match input.read_exact(&mut body) {
            Ok(()) => return Ok(Some(body)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                log("the input ended inside a message body");
                return Ok(None);
            }
            Err(e) => return Err(e),
        }
    }
}

fn parse_body(body: &[u8]) -> Incoming {
    match serde_json::from_slice::<Message>(body) {
        Ok(m) => Incoming::Message(m),
        Err(e) => {
            let text = String::from_utf8_lossy(body);
            log(&format!(
                "malformed message skipped ({e}): {:?}",
                clip(&text)
            ));
            let id = serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|v| v.get("id").cloned())
                .and_then(|id| serde_json::from_value::<RequestId>(id).ok());
            Incoming::Invalid(id)
        }
    }
}

fn clip(s: &str) -> String {
    if s.chars().count() <= 200 {
        s.to_string()
    } else {
        let mut c: String = s.chars().take(200).collect();
        c.push('…');
        c
    }
}

fn log(msg: &str) {
    eprintln!("idemlint lsp: {msg}");
}

/// One open document.
struct Document {
    uri: Uri,
    text: String,
    version: i32,
    /// The path handed to `check_text`: the file's path for `file:` URIs, else the URI;
    /// with the extension of the document's language appended when its own does not
    /// name one.
    display: String,
    /// Whether the document is Rust, Java or Kotlin (by extension or `languageId`).
    supported: bool,
    /// The file's absolute canonical path (`file:` URIs only).
    path: Option<PathBuf>,
    /// The server's change counter when the document was last marked for analysis.
    epoch: u64,
    /// What was last published, for hover and code actions.
    published: Vec<Published>,
    /// The findings behind `published` (for "fix all").
    findings: Vec<Finding>,
    /// The stamp `published` was computed from.
    published_stamp: Option<Stamp>,
    /// The stamp last handed to the analysis thread.
    queued_stamp: Option<Stamp>,
}

impl Document {
    fn stamp(&self) -> Stamp {
        (self.version, self.epoch)
    }
}

/// A published diagnostic, remembered for hover and code actions.
struct Published {
    /// Byte span in the text the diagnostic was computed from.
    start: usize,
    end: usize,
    range: Range,
    rule: Option<&'static str>,
    diagnostic: Diagnostic,
    /// The finding's fix (byte edits into the same text).
    fix: Option<Fix>,
}

/// The server state and loop; generic over the output for tests.
struct Server<W: Write> {
    out: W,
    catalogue: Catalogue,
    encoding: Encoding,
    /// Hover contents in markdown (else plain text, when the client says so).
    markdown: bool,
    /// Workspace edits as versioned `documentChanges` (when the client supports them)
    /// rather than `changes`.
    document_changes: bool,
    initialized: bool,
    shutdown: bool,
    documents: HashMap<String, Document>,
    /// Documents changed since their diagnostics were last published.
    dirty: BTreeSet<String>,
    /// Jobs for the analysis thread (`None`: it could not be started; analyse inline).
    jobs: Option<mpsc::Sender<Job>>,
    /// Latest stamp of each open document, read by the analysis thread.
    latest: Latest,
    /// Workspace folders (absolute, canonical), from `initialize`.
    roots: Vec<PathBuf>,
    /// Counts changes (documents, saved and watched files), for [`Stamp`]s.
    epoch: u64,
    /// The client lets the server register `workspace/didChangeWatchedFiles` watchers.
    watch_dynamic: bool,
    /// The client takes server-initiated work-done progress (`window.workDoneProgress`).
    progress: bool,
    /// Warm-up progress by token: `$/progress` is sent only once the client has answered
    /// `window/workDoneProgress/create` (the request's id is the token).
    indexing: HashMap<String, Indexing>,
}

/// One workspace folder's warm-up progress.
struct Indexing {
    folder: String,
    /// `begin` was sent.
    begun: bool,
    /// The warm-up finished.
    done: bool,
}

/// Serves the messages arriving on `rx`, writing to `out`, until `exit` or the end of the
/// input; returns the exit code (0 only after `shutdown`).
///
/// Diagnostics are recomputed lazily: a document changed by `didOpen`/`didChange` is
/// analysed once no further message is waiting (so a burst of edits is analysed once), or
/// before a request that needs its diagnostics.
pub fn serve<W: Write>(input: mpsc::Receiver<Incoming>, out: W) -> i32 {
    // The client's messages and the analysis thread's results arrive on one channel.
    let (tx, rx) = mpsc::channel();
    let forward = tx.clone();
    let forwarded = std::thread::Builder::new()
        .name("idemlint-lsp-forward".into())
        .spawn(move || {
            for m in input {
                if forward.send(m).is_err() {
                    return;
                }
            }
            let _ = forward.send(Incoming::End);
        })
        .is_ok();
    if !forwarded {
        log("could not start the forwarding thread");
        return 1;
    }
    let latest: Latest = Default::default();
    let (jobs_tx, jobs_rx) = mpsc::channel();
    let jobs = spawn_analyser(jobs_rx, tx, latest.clone(), Catalogue::builtin()).then_some(jobs_tx);
    if jobs.is_none() {
        log("could not start the analysis thread; analysing on the server thread");
    }
    let mut server = Server {
        jobs,
        latest,
        out,
        catalogue: Catalogue::builtin(),
        encoding: Encoding::Utf16,
        markdown: true,
        document_changes: false,
        initialized: false,
        shutdown: false,
        documents: HashMap::new(),
        dirty: BTreeSet::new(),
        roots: Vec::new(),
        epoch: 0,
        watch_dynamic: false,
        progress: false,
        indexing: HashMap::new(),
    };
    loop {
        let incoming = match rx.try_recv() {
            Ok(m) => Some(m),
            Err(mpsc::TryRecvError::Disconnected) => None,
            Err(mpsc::TryRecvError::Empty) => {
                if !server.dirty.is_empty() {
                    if server.publish_dirty().is_err() {
                        return 1;
                    }
                    continue;
                }
                rx.recv().ok()
            }
        };
        let incoming = match incoming {
            Some(Incoming::End) => None,
            other => other,
        };
        let Some(incoming) = incoming else {
            // End of input: like `exit`.
            return if server.shutdown { 0 } else { 1 };
        };
        let step =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| server.handle(incoming)));
        match step {
            Ok(Ok(Flow::Continue)) => {}
            Ok(Ok(Flow::Exit(code))) => return code,
            Ok(Err(e)) => {
                log(&format!("could not write to the client: {e}"));
                return 1;
            }
            Err(p) => log(&format!(
                "internal error while handling a message (please report it): {}",
                panic_text(&p)
            )),
        }
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".into()
    }
}

enum Flow {
    Continue,
    Exit(i32),
}

type Io = std::io::Result<()>;

impl<W: Write> Server<W> {
    fn send(&mut self, msg: Message) -> Io {
        msg.write(&mut self.out)
    }

    fn reply_err(&mut self, id: RequestId, code: ErrorCode, message: String) -> Io {
        self.send(Response::new_err(id, code as i32, message).into())
    }

    fn handle(&mut self, incoming: Incoming) -> std::io::Result<Flow> {
        match incoming {
            Incoming::Invalid(Some(id)) => {
                self.reply_err(id, ErrorCode::InvalidRequest, "malformed message".into())?;
            }
            Incoming::Message(Message::Response(r)) => self.response(r)?,
            Incoming::Invalid(None) | Incoming::End => {}
            Incoming::Analysed(a) => self.analysed(*a)?,
            Incoming::Warmed(Some(token)) => match self.indexing.get_mut(&token) {
                // Begun (the client created the token): end it.
                Some(p) if p.begun => {
                    self.indexing.remove(&token);
                    self.progress_end(&token)?;
                }
                // Not created yet: end it when the client answers.
                Some(p) => p.done = true,
                None => {}
            },
            Incoming::Warmed(None) => {}
            Incoming::Message(Message::Request(req)) => self.request(req)?,
            Incoming::Message(Message::Notification(n)) => {
                if n.method == "exit" {
                    return Ok(Flow::Exit(if self.shutdown { 0 } else { 1 }));
                }
                if self.initialized && !self.shutdown {
                    self.notification(n)?;
                }
            }
        }
        Ok(Flow::Continue)
    }

    fn request(&mut self, req: Request) -> Io {
        if req.method == "initialize" {
            if self.initialized {
                return self.reply_err(
                    req.id,
                    ErrorCode::InvalidRequest,
                    "initialize was already received".into(),
                );
            }
            let result = self.initialize(&req.params);
            self.initialized = true;
            return self.send(Response::new_ok(req.id, result).into());
        }
        if !self.initialized {
            return self.reply_err(
                req.id,
                ErrorCode::ServerNotInitialized,
                format!("`{}` before `initialize`", req.method),
            );
        }
        if self.shutdown {
            return self.reply_err(
                req.id,
                ErrorCode::InvalidRequest,
                format!("`{}` after `shutdown`", req.method),
            );
        }
        match req.method.as_str() {
            "shutdown" => {
                self.shutdown = true;
                self.dirty.clear();
                self.send(Response::new_ok(req.id, Value::Null).into())
            }
            "textDocument/codeAction" => {
                match serde_json::from_value::<CodeActionParams>(req.params) {
                    Ok(params) => {
                        let actions = self.code_actions(&params)?;
                        self.send(Response::new_ok(req.id, actions).into())
                    }
                    Err(e) => self.reply_err(req.id, ErrorCode::InvalidParams, e.to_string()),
                }
            }
            "textDocument/hover" => match serde_json::from_value::<HoverParams>(req.params) {
                Ok(params) => {
                    let hover = self.hover(&params)?;
                    self.send(Response::new_ok(req.id, hover).into())
                }
                Err(e) => self.reply_err(req.id, ErrorCode::InvalidParams, e.to_string()),
            },
            other => self.reply_err(
                req.id,
                ErrorCode::MethodNotFound,
                format!("idemlint does not handle `{other}`"),
            ),
        }
    }

    /// Reads the client capabilities this server cares about from the raw `initialize`
    /// parameters (raw JSON, so a newer client's unknown fields cannot fail the
    /// handshake) and builds the result.
    fn initialize(&mut self, params: &Value) -> InitializeResult {
        let caps = params.get("capabilities");
        let offered = caps
            .and_then(|c| c.pointer("/general/positionEncodings"))
            .and_then(Value::as_array);
        self.encoding = offered
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find_map(Encoding::from_name)
            .unwrap_or(Encoding::Utf16);
        if let Some(formats) = caps
            .and_then(|c| c.pointer("/textDocument/hover/contentFormat"))
            .and_then(Value::as_array)
        {
            self.markdown = formats.iter().any(|f| f.as_str() == Some("markdown"));
        }
        self.document_changes = caps
            .and_then(|c| c.pointer("/workspace/workspaceEdit/documentChanges"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        self.watch_dynamic = caps
            .and_then(|c| c.pointer("/workspace/didChangeWatchedFiles/dynamicRegistration"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        self.progress = caps
            .and_then(|c| c.pointer("/window/workDoneProgress"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        self.roots = workspace_roots(params);
        InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(PositionEncodingKind::from(
                    self.encoding.name().to_string(),
                )),
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::INCREMENTAL),
                        save: Some(lsp_types::TextDocumentSyncSaveOptions::Supported(true)),
                        ..TextDocumentSyncOptions::default()
                    },
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                code_action_provider: Some(CodeActionProviderCapability::Options(
                    CodeActionOptions {
                        code_action_kinds: Some(vec![
                            CodeActionKind::QUICKFIX,
                            CodeActionKind::from(FIX_ALL_KIND),
                        ]),
                        ..CodeActionOptions::default()
                    },
                )),
                ..ServerCapabilities::default()
            },
            server_info: Some(ServerInfo {
                name: "idemlint".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
        }
    }

    fn notification(&mut self, n: Notification) -> Io {
        match n.method.as_str() {
            "textDocument/didOpen" => {
                match serde_json::from_value::<DidOpenTextDocumentParams>(n.params) {
                    Ok(p) => self.did_open(p),
                    Err(e) => log(&format!("bad didOpen parameters: {e}")),
                }
            }
            "textDocument/didChange" => {
                match serde_json::from_value::<DidChangeTextDocumentParams>(n.params) {
                    Ok(p) => self.did_change(p),
                    Err(e) => log(&format!("bad didChange parameters: {e}")),
                }
            }
            "textDocument/didClose" => {
                match serde_json::from_value::<DidCloseTextDocumentParams>(n.params) {
                    Ok(p) => return self.did_close(p),
                    Err(e) => log(&format!("bad didClose parameters: {e}")),
                }
            }
            "textDocument/didSave" => {
                match serde_json::from_value::<lsp_types::DidSaveTextDocumentParams>(n.params) {
                    Ok(p) => {
                        let key = p.text_document.uri.as_str().to_string();
                        let path = uri::to_path(&key).map(|p| crate::config::absolute_path(&p));
                        self.touch(Some(&key), path.as_deref());
                    }
                    Err(e) => log(&format!("bad didSave parameters: {e}")),
                }
            }
            "workspace/didChangeWatchedFiles" => {
                match serde_json::from_value::<lsp_types::DidChangeWatchedFilesParams>(n.params) {
                    Ok(p) => {
                        for change in p.changes {
                            if let Some(path) = uri::to_path(change.uri.as_str()) {
                                self.touch(None, Some(&crate::config::absolute_path(&path)));
                            }
                        }
                    }
                    Err(e) => log(&format!("bad didChangeWatchedFiles parameters: {e}")),
                }
            }
            "initialized" if !self.roots.is_empty() => {
                if self.watch_dynamic {
                    self.register_watchers()?;
                }
                return self.warm_up();
            }
            // `initialized`, `$/cancelRequest` (every request is answered at once),
            // `$/setTrace`, other `workspace/*` and anything else: nothing to do.
            _ => {}
        }
        Ok(())
    }

    fn did_open(&mut self, p: DidOpenTextDocumentParams) {
        let item = p.text_document;
        let key = item.uri.as_str().to_string();
        let (display, supported) = display_path(item.uri.as_str(), &item.language_id);
        let path = uri::to_path(item.uri.as_str()).map(|p| crate::config::absolute_path(&p));
        self.documents.insert(
            key.clone(),
            Document {
                uri: item.uri,
                text: item.text,
                version: item.version,
                display,
                supported,
                path: path.clone(),
                epoch: 0,
                published: Vec::new(),
                findings: Vec::new(),
                published_stamp: None,
                queued_stamp: None,
            },
        );
        if supported {
            self.touch(Some(&key), path.as_deref());
        }
    }

    /// The deepest workspace folder containing `path`.
    fn root_of(&self, path: &Path) -> Option<&PathBuf> {
        self.roots
            .iter()
            .filter(|r| path.starts_with(r))
            .max_by_key(|r| r.components().count())
    }

    /// Marks for analysis the document `key` and, when `changed` (a file's absolute path)
    /// lies in a workspace folder, every open document of that folder: their findings may
    /// depend on it.
    fn touch(&mut self, key: Option<&str>, changed: Option<&Path>) {
        self.epoch += 1;
        let root = changed.and_then(|p| self.root_of(p)).cloned();
        let roots = self.roots.clone();
        for (k, d) in &mut self.documents {
            if !d.supported {
                continue;
            }
            let in_root = root.as_ref().is_some_and(|r| {
                d.path.as_ref().is_some_and(|p| {
                    p.starts_with(r)
                        && roots
                            .iter()
                            .filter(|x| p.starts_with(x))
                            .max_by_key(|x| x.components().count())
                            == Some(r)
                })
            });
            if in_root || key == Some(k.as_str()) {
                d.epoch = self.epoch;
                self.dirty.insert(k.clone());
            }
        }
    }

    /// Asks the client to report changes of source and configuration files
    /// (`client/registerCapability` for `workspace/didChangeWatchedFiles`).
    fn register_watchers(&mut self) -> Io {
        let params = serde_json::json!({
            "registrations": [{
                "id": "idemlint-watched-files",
                "method": "workspace/didChangeWatchedFiles",
                "registerOptions": {"watchers": [
                    {"globPattern": "**/*.{rs,java,kt,kts}"},
                    {"globPattern": "**/{idemlint.toml,.idemlint.toml,Cargo.toml,.gitignore,.ignore}"}
                ]}
            }]
        });
        self.send(
            Request::new(
                RequestId::from("idemlint-register-watchers".to_string()),
                "client/registerCapability".into(),
                params,
            )
            .into(),
        )
    }

    /// Indexes every workspace folder in the background (the analysis thread's pass-1
    /// cache), with `$/progress` work-done progress when the client supports it.
    fn warm_up(&mut self) -> Io {
        let Some(jobs) = self.jobs.clone() else {
            return Ok(());
        };
        for (n, root) in self.roots.clone().into_iter().enumerate() {
            let token = self.progress.then(|| format!("idemlint-index-{n}"));
            if let Some(t) = &token {
                self.indexing.insert(
                    t.clone(),
                    Indexing {
                        folder: root.display().to_string(),
                        begun: false,
                        done: false,
                    },
                );
                self.send(
                    Request::new(
                        RequestId::from(t.clone()),
                        "window/workDoneProgress/create".into(),
                        serde_json::json!({"token": t}),
                    )
                    .into(),
                )?;
            }
            let job = Job {
                key: format!("idemlint-warm-up:{}", root.display()),
                stamp: (0, 0),
                display: String::new(),
                text: String::new(),
                workspace: Some((root.clone(), root)),
                texts: Default::default(),
                warm: Some(token),
            };
            if jobs.send(job).is_err() {
                break;
            }
        }
        Ok(())
    }

    /// A response from the client: to `window/workDoneProgress/create`, it starts (or, if
    /// the warm-up already finished, starts and ends) that token's progress; others
    /// (`client/registerCapability`) need nothing.
    fn response(&mut self, r: Response) -> Io {
        let token = match serde_json::to_value(&r.id) {
            Ok(Value::String(s)) => s,
            _ => return Ok(()),
        };
        let Some(p) = self.indexing.get_mut(&token) else {
            return Ok(());
        };
        if r.response_result.is_err() {
            self.indexing.remove(&token);
            return Ok(());
        }
        p.begun = true;
        let (folder, done) = (p.folder.clone(), p.done);
        self.send(
            Notification::new(
                "$/progress".into(),
                serde_json::json!({"token": token, "value": {"kind": "begin",
                    "title": "idemlint: indexing the workspace folder",
                    "message": folder, "cancellable": false}}),
            )
            .into(),
        )?;
        if done {
            self.indexing.remove(&token);
            self.progress_end(&token)?;
        }
        Ok(())
    }

    fn progress_end(&mut self, token: &str) -> Io {
        self.send(
            Notification::new(
                "$/progress".into(),
                serde_json::json!({"token": token, "value": {"kind": "end",
                    "message": "indexed"}}),
            )
            .into(),
        )
    }

    /// The job that analyses document `key` as it is now. `texts` keeps each folder's
    /// snapshot of the open documents, so the jobs of one burst share one.
    fn job(&self, key: &str, texts: &mut HashMap<PathBuf, Texts>) -> Option<Job> {
        let doc = self.documents.get(key)?;
        let workspace = doc
            .path
            .as_ref()
            .and_then(|p| Some((self.root_of(p)?.clone(), p.clone())));
        let texts: Texts = match &workspace {
            Some((root, _)) => texts
                .entry(root.clone())
                .or_insert_with(|| {
                    std::sync::Arc::new(
                        self.documents
                            .values()
                            .filter(|d| d.supported)
                            .filter_map(|d| {
                                let p = d.path.as_ref()?;
                                p.starts_with(root)
                                    .then(|| (p.clone(), std::sync::Arc::from(d.text.as_str())))
                            })
                            .collect(),
                    )
                })
                .clone(),
            None => Default::default(),
        };
        Some(Job {
            key: key.to_string(),
            stamp: doc.stamp(),
            display: doc.display.clone(),
            text: doc.text.clone(),
            workspace,
            texts,
            warm: None,
        })
    }

    fn did_change(&mut self, p: DidChangeTextDocumentParams) {
        let key = p.text_document.uri.as_str().to_string();
        let encoding = self.encoding;
        let Some(doc) = self.documents.get_mut(&key) else {
            log(&format!("didChange for a document that is not open: {key}"));
            return;
        };
        for change in p.content_changes {
            match change.range {
                None => doc.text = change.text,
                Some(range) => {
                    let map = LineMap::new(&doc.text);
                    let a = map.offset(&doc.text, range.start, encoding);
                    let b = map.offset(&doc.text, range.end, encoding);
                    doc.text.replace_range(a.min(b)..a.max(b), &change.text);
                }
            }
        }
        doc.version = p.text_document.version;
        if doc.supported {
            let path = doc.path.clone();
            self.touch(Some(&key), path.as_deref());
        }
    }

    fn did_close(&mut self, p: DidCloseTextDocumentParams) -> Io {
        let key = p.text_document.uri.as_str().to_string();
        self.dirty.remove(&key);
        if let Ok(mut l) = self.latest.lock() {
            l.remove(&key);
        }
        if let Some(doc) = self.documents.remove(&key)
            && doc.supported
        {
            let uri = doc.uri.clone();
            // The folder's other documents now see the file as it is on disk.
            let path = doc.path.clone();
            drop(doc);
            // glibc keeps freed memory otherwise, so a closed 20 MB document would leave
            // its gigabyte of parse memory resident.
            crate::check::release_free_memory();
            if path.is_some() {
                self.touch(None, path.as_deref());
            }
            let params = PublishDiagnosticsParams {
                uri,
                diagnostics: Vec::new(),
                version: None,
            };
            return self.publish(params);
        }
        Ok(())
    }

    fn publish(&mut self, params: PublishDiagnosticsParams) -> Io {
        self.send(Notification::new("textDocument/publishDiagnostics".into(), params).into())
    }

    /// Hands every changed document to the analysis thread (or, without one, analyses
    /// and publishes it here); its diagnostics are published when the result arrives.
    fn publish_dirty(&mut self) -> Io {
        let mut texts = HashMap::new();
        for key in std::mem::take(&mut self.dirty) {
            if self.jobs.is_none() {
                self.publish_one(&key)?;
                continue;
            }
            let Some(doc) = self.documents.get(&key) else {
                continue;
            };
            let stamp = doc.stamp();
            if doc.queued_stamp == Some(stamp) || doc.published_stamp == Some(stamp) {
                continue;
            }
            if let Ok(mut l) = self.latest.lock() {
                l.insert(key.clone(), stamp);
            }
            let Some(job) = self.job(&key, &mut texts) else {
                continue;
            };
            if let Some(doc) = self.documents.get_mut(&key) {
                doc.queued_stamp = Some(stamp);
            }
            let sent = self.jobs.as_ref().is_some_and(|j| j.send(job).is_ok());
            if !sent {
                self.jobs = None;
                self.publish_one(&key)?;
            }
        }
        Ok(())
    }

    /// A result from the analysis thread: published when it is for the document's
    /// current version and that version has not been published yet; dropped otherwise.
    fn analysed(&mut self, a: Analysed) -> Io {
        let encoding = self.encoding;
        let Some(doc) = self.documents.get_mut(&a.key) else {
            return Ok(());
        };
        if doc.stamp() != a.stamp || doc.published_stamp == Some(a.stamp) {
            return Ok(());
        }
        self.store_and_publish(&a.key, a.findings, a.errors, a.config_error, encoding)
    }

    fn store_and_publish(
        &mut self,
        key: &str,
        findings: Vec<Finding>,
        errors: Vec<FileError>,
        config_error: Option<ConfigError>,
        encoding: Encoding,
    ) -> Io {
        let Some(doc) = self.documents.get_mut(key) else {
            return Ok(());
        };
        let (mut diagnostics, published) = to_diagnostics(doc, &findings, &errors, encoding);
        if let Some(e) = config_error {
            diagnostics.push(config_diagnostic(&e, encoding));
        }
        doc.published = published;
        doc.findings = findings;
        doc.published_stamp = Some(doc.stamp());
        let params = PublishDiagnosticsParams {
            uri: doc.uri.clone(),
            diagnostics,
            version: Some(doc.version),
        };
        self.publish(params)
    }

    /// Analyses `key` here, now, and publishes its diagnostics.
    fn publish_one(&mut self, key: &str) -> Io {
        let encoding = self.encoding;
        let Some(job) = self.job(key, &mut HashMap::new()) else {
            return Ok(());
        };
        for a in analyse_jobs(&self.catalogue, vec![job], None, None) {
            self.store_and_publish(&a.key, a.findings, a.errors, a.config_error, encoding)?;
        }
        Ok(())
    }

    /// Publishes `key`'s diagnostics now if the document changed since they were last
    /// computed, so a request sees the current text's findings.
    fn refresh(&mut self, key: &str) -> Io {
        let stale = self
            .documents
            .get(key)
            .is_some_and(|d| d.supported && d.published_stamp != Some(d.stamp()));
        self.dirty.remove(key);
        if stale {
            self.publish_one(key)?;
        }
        Ok(())
    }

    /// Quick fixes for the findings in the requested range (each finding's fix, unsafe
    /// ones labelled so), and a `source.fixAll.idemlint` action that applies every safe
    /// fix of the document, as `idemlint check --fix` would.
    fn code_actions(&mut self, p: &CodeActionParams) -> std::io::Result<Vec<CodeActionOrCommand>> {
        let key = p.text_document.uri.as_str().to_string();
        self.refresh(&key)?;
        let Some(doc) = self.documents.get(&key) else {
            return Ok(Vec::new());
        };
        let enc = self.encoding;
        let text = doc.text.as_str();
        let map = LineMap::new(text);
        let a = map.offset(text, p.range.start, enc);
        let b = map.offset(text, p.range.end, enc);
        let (lo, hi) = (a.min(b), a.max(b));
        let only = p.context.only.as_deref();
        let wanted = |kind: &str| {
            only.is_none_or(|o| {
                o.iter().any(|k| {
                    let k = k.as_str();
                    kind == k || kind.strip_prefix(k).is_some_and(|r| r.starts_with('.'))
                })
            })
        };
        let to_lsp = |start: usize, end: usize, content: &str| TextEdit {
            range: Range {
                start: map.position(text, start, enc),
                end: map.position(text, end, enc),
            },
            new_text: content.to_string(),
        };
        let mut actions = Vec::new();
        if wanted(CodeActionKind::QUICKFIX.as_str()) {
            for d in &doc.published {
                let Some(fix) = &d.fix else { continue };
                if !(d.start <= hi && lo <= d.end) {
                    continue;
                }
                let safe = fix.applicability == Applicability::Safe;
                let edits = fix
                    .edits
                    .iter()
                    .map(|e| to_lsp(e.start, e.end, &e.content))
                    .collect();
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: if safe {
                        format!("idemlint: {}", fix.message)
                    } else {
                        format!("idemlint: {} (unsafe fix: review the result)", fix.message)
                    },
                    kind: Some(CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![d.diagnostic.clone()]),
                    edit: Some(self.workspace_edit(&doc.uri, doc.version, edits)),
                    is_preferred: Some(safe),
                    ..CodeAction::default()
                }));
            }
        }
        if wanted(FIX_ALL_KIND) {
            let (fixed, rules) =
                crate::fix::apply::apply(text, &doc.findings, crate::fix::apply::Mode::Safe);
            if !rules.is_empty() && fixed != text {
                let n = rules.len();
                let edit = to_lsp(0, text.len(), &fixed);
                actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!(
                        "idemlint: apply {n} safe fix{}",
                        if n == 1 { "" } else { "es" }
                    ),
                    kind: Some(CodeActionKind::from(FIX_ALL_KIND)),
                    edit: Some(self.workspace_edit(&doc.uri, doc.version, vec![edit])),
                    ..CodeAction::default()
                }));
            }
        }
        Ok(actions)
    }

    /// Edits to one document, versioned when the client supports `documentChanges`.
    fn workspace_edit(&self, uri: &Uri, version: i32, edits: Vec<TextEdit>) -> WorkspaceEdit {
        if self.document_changes {
            WorkspaceEdit {
                document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
                    text_document: OptionalVersionedTextDocumentIdentifier {
                        uri: uri.clone(),
                        version: Some(version),
                    },
                    edits: edits.into_iter().map(OneOf::Left).collect(),
                }])),
                ..WorkspaceEdit::default()
            }
        } else {
            WorkspaceEdit {
                changes: Some(HashMap::from([(uri.clone(), edits)])),
                ..WorkspaceEdit::default()
            }
        }
    }

    fn hover(&mut self, p: &HoverParams) -> std::io::Result<Option<Hover>> {
        let key = p
            .text_document_position_params
            .text_document
            .uri
            .as_str()
            .to_string();
        self.refresh(&key)?;
        let Some(doc) = self.documents.get(&key) else {
            return Ok(None);
        };
        let map = LineMap::new(&doc.text);
        let at = map.offset(
            &doc.text,
            p.text_document_position_params.position,
            self.encoding,
        );
        let mut rules: Vec<&'static str> = Vec::new();
        let mut range = None;
        for d in &doc.published {
            let inside = d.start <= at && (at < d.end || d.start == d.end);
            if let (true, Some(rule)) = (inside, d.rule)
                && !rules.contains(&rule)
            {
                rules.push(rule);
                range.get_or_insert(d.range);
            }
        }
        let docs: Vec<String> = rules
            .iter()
            .filter_map(|id| crate::rules::rule(id))
            .map(|r| r.reader_doc().trim_end().to_string())
            .collect();
        if docs.is_empty() {
            return Ok(None);
        }
        Ok(Some(Hover {
            contents: HoverContents::Markup(MarkupContent {
                kind: if self.markdown {
                    MarkupKind::Markdown
                } else {
                    MarkupKind::PlainText
                },
                value: docs.join("\n\n---\n\n"),
            }),
            range,
        }))
    }
}

/// The path `check_text` gets for a document, and whether it is Rust, Java or Kotlin: a
/// `file:` URI's path (absolute), else the URI itself; when its extension names none of
/// the three but `language_id` (`rust`, `java`, `kotlin`) does, that language's extension
/// is appended.
fn display_path(uri: &str, language_id: &str) -> (String, bool) {
    let base = match uri::to_path(uri) {
        Some(p) => p.to_string_lossy().into_owned(),
        None => uri.to_string(),
    };
    if Language::from_path(Path::new(&base)).is_some() {
        return (base, true);
    }
    let ext = match language_id {
        "rust" => "rs",
        "java" => "java",
        "kotlin" => "kt",
        _ => return (base, false),
    };
    (format!("{base}.{ext}"), true)
}

/// The workspace folders of `initialize`'s parameters, absolute and canonical:
/// `workspaceFolders`, else `rootUri`, else `rootPath` (`file:` URIs only).
fn workspace_roots(params: &Value) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = params
        .get("workspaceFolders")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|f| f.get("uri").and_then(Value::as_str))
        .filter_map(uri::to_path)
        .collect();
    if roots.is_empty() {
        if let Some(p) = params
            .get("rootUri")
            .and_then(Value::as_str)
            .and_then(uri::to_path)
        {
            roots.push(p);
        } else if let Some(p) = params.get("rootPath").and_then(Value::as_str) {
            roots.push(PathBuf::from(p));
        }
    }
    let mut roots: Vec<PathBuf> = roots
        .iter()
        .filter(|r| r.is_absolute() && r.is_dir())
        .map(|r| crate::config::absolute_path(r))
        .collect();
    roots.sort();
    roots.dedup();
    roots
}

/// The href of a rule's documentation.
pub fn rule_docs_href(rule: &str) -> String {
    format!("{RULE_DOCS_BASE}{rule}.md")
}

fn severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Note => DiagnosticSeverity::INFORMATION,
    }
}

/// Converts the core's findings and errors for `doc` into LSP diagnostics (and what
/// hover needs to remember about them).
fn to_diagnostics(
    doc: &Document,
    findings: &[Finding],
    errors: &[FileError],
    enc: Encoding,
) -> (Vec<Diagnostic>, Vec<Published>) {
    let text = doc.text.as_str();
    let map = LineMap::new(text);
    let range = |start: usize, end: usize| Range {
        start: map.position(text, start, enc),
        end: map.position(text, end.max(start), enc),
    };
    let mut diagnostics = Vec::new();
    let mut published = Vec::new();
    for f in findings {
        let r = range(f.span.start, f.span.end);
        let related = f.boundary.as_ref().and_then(|b| {
            let location = match &b.path {
                None => Location {
                    uri: doc.uri.clone(),
                    range: range(b.span.start, b.span.end),
                },
                Some(path) => foreign_location(path, b.span.start, b.span.end, enc)?,
            };
            Some(vec![DiagnosticRelatedInformation {
                location,
                message: format!("{} {}", b.snippet_label(), b.label),
            }])
        });
        let message = if f.help.is_empty() {
            f.message.clone()
        } else {
            format!("{}\nhelp: {}", f.message, f.help)
        };
        let diagnostic = Diagnostic {
            range: r,
            severity: Some(severity(f.severity)),
            code: Some(NumberOrString::String(f.rule.to_string())),
            code_description: rule_docs_href(f.rule)
                .parse::<Uri>()
                .ok()
                .map(|href| CodeDescription { href }),
            source: Some("idemlint".into()),
            message,
            related_information: related,
            ..Diagnostic::default()
        };
        diagnostics.push(diagnostic.clone());
        published.push(Published {
            start: f.span.start,
            end: f.span.end.max(f.span.start),
            range: r,
            rule: Some(f.rule),
            diagnostic,
            fix: f.fix.clone(),
        });
    }
    let lines = LineIndex::new(text);
    for e in errors {
        let (start, end, code) = match (e.line, e.column) {
            (Some(line), Some(column)) => {
                let start = char_column_offset(text, &lines, line, column);
                let end = text
                    .get(start..)
                    .and_then(|rest| rest.chars().next())
                    .filter(|c| *c != '\n' && *c != '\r')
                    .map_or(start, |c| start + c.len_utf8());
                (start, end, PARSE_ERROR_CODE)
            }
            _ => (0, 0, INTERNAL_ERROR_CODE),
        };
        let r = range(start, end);
        let diagnostic = Diagnostic {
            range: r,
            severity: Some(DiagnosticSeverity::WARNING),
            code: Some(NumberOrString::String(code.into())),
            source: Some("idemlint".into()),
            message: e.message.clone(),
            ..Diagnostic::default()
        };
        diagnostics.push(diagnostic.clone());
        published.push(Published {
            start,
            end,
            range: r,
            rule: None,
            diagnostic,
            fix: None,
        });
    }
    (diagnostics, published)
}

/// A configuration file that cannot be used: reported on the document at its start (the
/// document is not analysed, as `check` refuses to run), with the place in the
/// configuration file as related information.
fn config_diagnostic(e: &ConfigError, enc: Encoding) -> Diagnostic {
    let mut message = e.to_string();
    if let Some(help) = &e.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let (start, end) = e.span.as_ref().map_or((0, 0), |s| (s.start, s.end));
    let related = foreign_location(&e.file, start, end, enc).map(|location| {
        vec![DiagnosticRelatedInformation {
            location,
            message: "the configuration".into(),
        }]
    });
    Diagnostic {
        range: Range::default(),
        severity: Some(DiagnosticSeverity::ERROR),
        code: Some(NumberOrString::String(CONFIG_ERROR_CODE.into())),
        source: Some("idemlint".into()),
        message,
        related_information: related,
        ..Diagnostic::default()
    }
}

/// Byte offset of 1-based `line` and 1-based char `column` (the core's convention for
/// [`FileError`]), clamped to the line.
fn char_column_offset(text: &str, lines: &LineIndex, line: usize, column: usize) -> usize {
    let Some(start) = lines.line_start(line) else {
        return text.len();
    };
    let rest = text.get(start..).unwrap_or("");
    let mut offset = start;
    for (n, c) in rest.chars().enumerate() {
        if n + 1 >= column || c == '\n' {
            break;
        }
        offset += c.len_utf8();
    }
    offset
}

/// A location in another file (a boundary found through the project index): its text is
/// read from disk to convert the byte span; `None` when it cannot be read.
fn foreign_location(path: &str, start: usize, end: usize, enc: Encoding) -> Option<Location> {
    let path = PathBuf::from(path);
    let text = std::fs::read_to_string(&path).ok()?;
    let map = LineMap::new(&text);
    let uri = uri::from_path(&path)?.parse::<Uri>().ok()?;
    Some(Location {
        uri,
        range: Range {
            start: map.position(&text, start, enc),
            end: map.position(&text, end.max(start), enc),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame(v: &Value) -> Vec<u8> {
        let body = v.to_string();
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    /// Runs the server in-process on `input`; returns the exit code and every message it
    /// wrote.
    fn run(input: Vec<u8>) -> (i32, Vec<Value>) {
        let (tx, rx) = mpsc::channel();
        spawn_reader(std::io::Cursor::new(input), tx);
        let mut out = Vec::new();
        let code = serve(rx, &mut out);
        let mut cursor = std::io::Cursor::new(out);
        let mut msgs = Vec::new();
        while let Some(body) = read_frame(&mut cursor).unwrap() {
            msgs.push(serde_json::from_slice(&body).unwrap());
        }
        (code, msgs)
    }

    fn init(encodings: &[&str]) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "capabilities": {"general": {"positionEncodings": encodings}}}})
    }

    const BAD: &str = "import java.util.UUID\n\nsuspend fun charge(api: Api): Charge {\n    val note = \"ü💳\"; return retryOnTransient { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }\n}\n";

    fn open(uri: &str, text: &str) -> Value {
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "kotlin", "version": 1, "text": text}}})
    }

    /// A hover request; it also makes the server publish the document's diagnostics
    /// first, so the test does not depend on when the queue runs empty.
    fn hover_at(uri: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": 50, "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}})
    }

    fn session(encodings: &[&str], body: &[Value]) -> (i32, Vec<Value>) {
        session_with(init(encodings), body)
    }

    fn session_with(init: Value, body: &[Value]) -> (i32, Vec<Value>) {
        let mut input = frame(&init);
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        ));
        for m in body {
            input.extend(frame(m));
        }
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}),
        ));
        input.extend(frame(&json!({"jsonrpc": "2.0", "method": "exit"})));
        run(input)
    }

    /// A two-file workspace folder: editing the helper (unsaved) makes a finding appear
    /// in the other open document, equal to `check ROOT --only FILE` on the same text.
    #[test]
    fn a_change_to_a_helper_in_the_workspace_republishes_the_other_document() {
        let dir = std::env::temp_dir().join(format!("idemlint-lsp-ws-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let once = "package shop\n\nfun <T> keepTrying(times: Int, block: () -> T): T {\n    return block()\n}\n";
        let retrying = "package shop\n\nfun <T> keepTrying(times: Int, block: () -> T): T {\n    var last: Exception? = null\n    repeat(times) {\n        try {\n            return block()\n        } catch (e: Exception) {\n            last = e\n        }\n    }\n    throw last!!\n}\n";
        let billing = "package shop\n\nimport java.util.UUID\n\nfun charge(api: Api) = keepTrying(3) { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }\n";
        std::fs::write(dir.join("Retry.kt"), once).unwrap();
        std::fs::write(dir.join("Billing.kt"), billing).unwrap();
        let root = crate::config::absolute_path(&dir);
        let root_uri = uri::from_path(&root).unwrap();
        let retry_uri = format!("{root_uri}/Retry.kt");
        let billing_uri = format!("{root_uri}/Billing.kt");
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": null, "capabilities": {},
            "workspaceFolders": [{"uri": root_uri, "name": "shop"}]}});
        let change = json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": retry_uri, "version": 2},
            "contentChanges": [{"text": retrying}]}});
        let (code, msgs) = session_with(
            init,
            &[
                open(&retry_uri, once),
                open(&billing_uri, billing),
                hover_at(&billing_uri),
                change,
                hover_at(&billing_uri),
            ],
        );
        assert_eq!(code, 0);
        let for_billing: Vec<&Value> = diagnostics(&msgs)
            .into_iter()
            .filter(|m| m["params"]["uri"] == billing_uri.as_str())
            .collect();
        assert!(
            for_billing
                .first()
                .is_some_and(|m| m["params"]["diagnostics"].as_array().unwrap().is_empty()),
            "{for_billing:#?}"
        );
        let last = &for_billing.last().unwrap()["params"]["diagnostics"];
        let got: Vec<(u64, String)> = last
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["range"]["start"]["line"].as_u64().unwrap() + 1,
                    d["code"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![(5, "key-in-retry-scope".to_string())],
            "{msgs:#?}"
        );
        // The same as `idemlint check ROOT --only Billing.kt` with the helper saved so.
        std::fs::write(dir.join("Retry.kt"), retrying).unwrap();
        let report = crate::check::run(
            &crate::check::Options {
                paths: vec![root.clone()],
                only: Some(crate::check::Only {
                    paths: vec![root.join("Billing.kt")],
                    named: true,
                }),
                ..crate::check::Options::default()
            },
            &Catalogue::builtin(),
        )
        .unwrap();
        let expected: Vec<(u64, String)> = report
            .findings
            .iter()
            .map(|f| (f.line as u64, f.rule.to_string()))
            .collect();
        assert_eq!(got, expected);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn diagnostics(msgs: &[Value]) -> Vec<&Value> {
        msgs.iter()
            .filter(|m| m["method"] == "textDocument/publishDiagnostics")
            .collect()
    }

    #[test]
    fn negotiates_the_encoding_and_converts_the_range() {
        // The source `UUID.randomUUID()` starts after `ü💳` on its line: char 81, UTF-16
        // unit 82, byte 85.
        for (offered, name, start) in [
            (vec![], "utf-16", 82),
            (vec!["utf-8", "utf-16"], "utf-8", 85),
            (vec!["utf-32"], "utf-32", 81),
            (vec!["utf-7", "utf-16"], "utf-16", 82),
        ] {
            let (code, msgs) = session(
                &offered,
                &[
                    open("file:///tmp/Bad.kt", BAD),
                    hover_at("file:///tmp/Bad.kt"),
                ],
            );
            assert_eq!(code, 0);
            assert_eq!(msgs[0]["result"]["capabilities"]["positionEncoding"], name);
            let d = diagnostics(&msgs);
            assert_eq!(d.len(), 1, "{msgs:?}");
            let diag = &d[0]["params"]["diagnostics"][0];
            assert_eq!(diag["code"], "key-in-retry-scope");
            assert_eq!(
                diag["range"]["start"],
                json!({"line": 3, "character": start})
            );
            let len = "UUID.randomUUID()".len();
            assert_eq!(
                diag["range"]["end"],
                json!({"line": 3, "character": start + len})
            );
        }
    }

    #[test]
    fn incremental_change_clears_and_close_clears() {
        let uri = "file:///tmp/Bad.kt";
        let src = "UUID.randomUUID().toString()";
        let line = BAD.lines().nth(3).unwrap();
        let col16 = line[..line.find(src).unwrap()].encode_utf16().count() as u32;
        let change = json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": 2},
            "contentChanges": [{"range": {
                "start": {"line": 3, "character": col16},
                "end": {"line": 3, "character": col16 + src.len() as u32}},
                "text": "stableKey"}]}});
        let hover = json!({"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": 3, "character": col16 + 2}}});
        let close = json!({"jsonrpc": "2.0", "method": "textDocument/didClose",
            "params": {"textDocument": {"uri": uri}}});
        let (code, msgs) = session(&[], &[open(uri, BAD), hover.clone(), change, hover, close]);
        assert_eq!(code, 0);
        let hovers: Vec<&Value> = msgs.iter().filter(|m| m["id"] == 5).collect();
        assert_eq!(hovers.len(), 2);
        let doc = crate::rules::rule("key-in-retry-scope")
            .unwrap()
            .reader_doc();
        let doc = doc.trim_end();
        assert_eq!(hovers[0]["result"]["contents"]["value"], doc);
        assert_eq!(hovers[0]["result"]["contents"]["kind"], "markdown");
        // After the edit there is no finding, so no hover.
        assert_eq!(hovers[1]["result"], Value::Null);
        let d = diagnostics(&msgs);
        assert_eq!(d.len(), 3, "{d:?}");
        assert_eq!(d[0]["params"]["diagnostics"].as_array().unwrap().len(), 1);
        assert_eq!(d[1]["params"]["version"], 2);
        assert_eq!(d[1]["params"]["diagnostics"], json!([]));
        assert_eq!(d[2]["params"]["diagnostics"], json!([]));
    }

    #[test]
    fn diagnostic_fields_and_parse_errors() {
        let broken = "fun f() {\n    val x = (1 +\n}\n";
        let (_, msgs) = session(
            &[],
            &[
                open("file:///tmp/Bad.kt", BAD),
                open("file:///tmp/Broken.kt", broken),
                hover_at("file:///tmp/Bad.kt"),
                hover_at("file:///tmp/Broken.kt"),
            ],
        );
        let d = diagnostics(&msgs);
        let bad = d
            .iter()
            .find(|m| m["params"]["uri"] == "file:///tmp/Bad.kt")
            .unwrap();
        let diag = &bad["params"]["diagnostics"][0];
        assert_eq!(diag["severity"], 1);
        assert_eq!(diag["source"], "idemlint");
        assert_eq!(
            diag["codeDescription"]["href"],
            "https://github.com/idemlint/idemlint/blob/main/rules/docs/key-in-retry-scope.md"
        );
        let cat = Catalogue::builtin();
        let (findings, _) = crate::check::check_text("/tmp/Bad.kt", BAD, &cat).unwrap();
        assert_eq!(
            diag["message"],
            format!("{}\nhelp: {}", findings[0].message, findings[0].help)
        );
        let rel = &diag["relatedInformation"][0];
        assert_eq!(rel["location"]["uri"], "file:///tmp/Bad.kt");
        // The boundary is anchored at the call name `retryOnTransient` (char 28 on line
        // 3, after the 2-unit `💳`: UTF-16 unit 29).
        assert_eq!(
            rel["location"]["range"]["start"],
            json!({"line": 3, "character": 29})
        );
        assert!(
            rel["message"]
                .as_str()
                .unwrap()
                .starts_with("retry boundary")
        );
        let broken = d
            .iter()
            .find(|m| m["params"]["uri"] == "file:///tmp/Broken.kt")
            .unwrap();
        let errs = broken["params"]["diagnostics"].as_array().unwrap();
        assert!(!errs.is_empty());
        assert!(
            errs.iter()
                .all(|e| e["code"] == "parse-error" && e["severity"] == 2)
        );
    }

    #[test]
    fn malformed_input_does_not_stop_the_server() {
        let mut input = b"garbage line\r\n\r\n".to_vec();
        input.extend(b"Content-Length: 9\r\n\r\n{not json");
        input.extend(b"Content-Length: abc\r\n\r\n");
        input.extend(frame(&json!({"jsonrpc": "2.0", "id": 7, "method": 3})));
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "id": 8, "method": "textDocument/hover"}),
        ));
        input.extend(frame(&init(&[])));
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover",
            "params": {"bogus": true}}),
        ));
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "id": 3, "method": "workspace/symbol",
            "params": {"query": ""}}),
        ));
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"nope": 1}}),
        ));
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}),
        ));
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "id": 5, "method": "textDocument/hover"}),
        ));
        input.extend(frame(&json!({"jsonrpc": "2.0", "method": "exit"})));
        let (code, msgs) = run(input);
        assert_eq!(code, 0);
        let err = |id: i32| {
            msgs.iter()
                .find(|m| m["id"] == id)
                .map(|m| m["error"]["code"].clone())
        };
        assert_eq!(err(7), Some(json!(-32600))); // invalid message with an id
        assert_eq!(err(8), Some(json!(-32002))); // before initialize
        assert_eq!(err(2), Some(json!(-32602))); // bad params
        assert_eq!(err(3), Some(json!(-32601))); // unknown method
        assert_eq!(err(5), Some(json!(-32600))); // after shutdown
        assert!(msgs.iter().any(|m| m["id"] == 4 && m["result"].is_null()));
    }

    #[test]
    fn exit_without_shutdown_or_end_of_input_is_code_one() {
        let mut input = frame(&init(&[]));
        input.extend(frame(&json!({"jsonrpc": "2.0", "method": "exit"})));
        assert_eq!(run(input).0, 1);
        assert_eq!(run(frame(&init(&[]))).0, 1);
        let mut input = frame(&init(&[]));
        input.extend(frame(
            &json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
        ));
        assert_eq!(run(input).0, 0);
    }

    /// Applies LSP text edits (UTF-16 positions, all relative to `text`) as a client does.
    fn apply_edits(text: &str, edits: &[Value]) -> String {
        let map = LineMap::new(text);
        let pos = |v: &Value| lsp_types::Position {
            line: v["line"].as_u64().unwrap() as u32,
            character: v["character"].as_u64().unwrap() as u32,
        };
        let mut spans: Vec<(usize, usize, &str)> = edits
            .iter()
            .map(|e| {
                (
                    map.offset(text, pos(&e["range"]["start"]), Encoding::Utf16),
                    map.offset(text, pos(&e["range"]["end"]), Encoding::Utf16),
                    e["newText"].as_str().unwrap(),
                )
            })
            .collect();
        spans.sort_by_key(|(a, b, _)| std::cmp::Reverse((*a, *b)));
        let mut out = text.to_string();
        for (a, b, t) in spans {
            out.replace_range(a..b, t);
        }
        out
    }

    fn code_action_request(id: i32, uri: &str, character: u32, only: Option<&[&str]>) -> Value {
        let mut context = json!({"diagnostics": []});
        if let Some(only) = only {
            context["only"] = json!(only);
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/codeAction", "params": {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 3, "character": character},
                      "end": {"line": 3, "character": character}},
            "context": context}})
    }

    #[test]
    fn code_actions_carry_the_fix() {
        let uri = "file:///tmp/Bad.kt";
        let cat = Catalogue::builtin();
        let (findings, _) = crate::check::check_text("/tmp/Bad.kt", BAD, &cat).unwrap();
        let (expected, rules) =
            crate::fix::apply::apply(BAD, &findings, crate::fix::apply::Mode::Safe);
        assert_eq!(rules, ["key-in-retry-scope"], "the sample has a safe fix");
        let (_, msgs) = session(
            &[],
            &[
                open(uri, BAD),
                code_action_request(6, uri, 85, None),
                code_action_request(7, uri, 85, Some(&["source.fixAll"])),
                code_action_request(8, uri, 0, Some(&["quickfix"])),
            ],
        );
        let result = |id: i32| msgs.iter().find(|m| m["id"] == id).unwrap()["result"].clone();
        let actions = result(6);
        let actions = actions.as_array().unwrap();
        assert_eq!(actions.len(), 2, "{actions:#?}");
        let quick = &actions[0];
        assert_eq!(quick["kind"], "quickfix");
        assert_eq!(quick["isPreferred"], true);
        assert_eq!(quick["diagnostics"][0]["code"], "key-in-retry-scope");
        let edits = quick["edit"]["changes"][uri].as_array().unwrap();
        let fixed = apply_edits(BAD, edits);
        assert_eq!(fixed, expected);
        let (after, _) = crate::check::check_text("/tmp/Bad.kt", &fixed, &cat).unwrap();
        assert!(after.is_empty(), "{after:#?}");
        // fixAll: one edit replacing the document with the same result.
        assert_eq!(actions[1]["kind"], FIX_ALL_KIND);
        let only_fix_all = result(7);
        assert_eq!(only_fix_all.as_array().unwrap().len(), 1);
        assert_eq!(only_fix_all[0]["kind"], FIX_ALL_KIND);
        let edits = only_fix_all[0]["edit"]["changes"][uri].as_array().unwrap();
        assert_eq!(apply_edits(BAD, edits), expected);
        // Outside the finding: no quick fix.
        assert_eq!(result(8), json!([]));
    }

    #[test]
    fn code_actions_use_versioned_document_changes_when_supported() {
        let uri = "file:///tmp/Bad.kt";
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "capabilities": {"workspace": {"workspaceEdit": {"documentChanges": true}}}}});
        let (_, msgs) = session_with(
            init,
            &[
                open(uri, BAD),
                code_action_request(6, uri, 85, Some(&["quickfix"])),
            ],
        );
        let actions = &msgs.iter().find(|m| m["id"] == 6).unwrap()["result"];
        let change = &actions[0]["edit"]["documentChanges"][0];
        assert_eq!(change["textDocument"], json!({"uri": uri, "version": 1}));
        assert_eq!(change["edits"].as_array().unwrap().len(), 2);
        assert!(actions[0]["edit"].get("changes").is_none());
    }

    #[test]
    fn display_paths() {
        assert_eq!(
            display_path("file:///tmp/A%20b.kt", "kotlin"),
            ("/tmp/A b.kt".to_string(), true)
        );
        assert_eq!(
            display_path("untitled:Untitled-1", "kotlin"),
            ("untitled:Untitled-1.kt".to_string(), true)
        );
        assert_eq!(
            display_path("file:///tmp/notes.txt", "plaintext"),
            ("/tmp/notes.txt".to_string(), false)
        );
    }

    #[test]
    fn parse_error_columns_are_chars() {
        let text = "ab\nü💳x\n";
        let lines = LineIndex::new(text);
        assert_eq!(
            char_column_offset(text, &lines, 2, 3),
            text.find('x').unwrap()
        );
        assert_eq!(char_column_offset(text, &lines, 2, 99), text.len() - 1);
        assert_eq!(char_column_offset(text, &lines, 9, 1), text.len());
    }
}
