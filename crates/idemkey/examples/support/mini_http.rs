//! A tiny HTTP/1.1 server and client on tokio, for the example and the tests.
//!
//! This is not a general HTTP implementation. It handles one request per connection
//! (`Connection: close`), and bodies must have a `Content-Length`. That is enough to show
//! which `Idempotency-Key` a real server receives on each attempt, without pulling a full HTTP
//! stack into the build. Everything listens on and connects to 127.0.0.1 only.

#![allow(dead_code)] // the example and the tests each use a different subset

use idemkey::{Fingerprint, IdempotencyKey, KeyStore, Reuse};
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Upper bound for any single read or write, so a broken test fails instead of hanging.
const IO_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest request or response head plus body accepted, in bytes.
const MAX_MESSAGE: usize = 64 * 1024;

/// One request as the server received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    pub method: String,
    pub path: String,
    /// The `Idempotency-Key` header, if present.
    pub key: Option<String>,
    pub body: String,
    /// The status the server answered with.
    pub status: u16,
}

#[derive(Default)]
struct ServerState {
    /// Attempts still to be refused with 503 before the server starts working.
    fail_next: usize,
    received: Vec<Received>,
    store: KeyStore<String>,
    charges_created: usize,
}

/// A charge endpoint in the style of a payments API: `POST /v1/charges` needs an
/// `Idempotency-Key`. A new key creates a charge; a retry with the same key and body replays
/// it (`Idempotent-Replay: true`); the same key with a different body gets 422.
pub struct ChargeServer {
    addr: SocketAddr,
    state: Arc<Mutex<ServerState>>,
    task: tokio::task::JoinHandle<()>,
}

impl ChargeServer {
    /// Binds 127.0.0.1 on a free port. The first `fail_first` requests get
    /// `503 Service Unavailable` without being processed, like an overloaded upstream.
    pub async fn start(fail_first: usize) -> io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(ServerState {
            fail_next: fail_first,
            ..ServerState::default()
        }));
        let shared = Arc::clone(&state);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let shared = Arc::clone(&shared);
                tokio::spawn(async move {
                    // A malformed request just drops its connection.
                    let _ = serve_one(stream, &shared).await;
                });
            }
        });
        Ok(Self { addr, state, task })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order.
    pub fn received(&self) -> Vec<Received> {
        self.state.lock().unwrap().received.clone()
    }

    /// How many charges the server actually created.
    pub fn charges_created(&self) -> usize {
        self.state.lock().unwrap().charges_created
    }
}

impl Drop for ChargeServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve_one(mut stream: TcpStream, state: &Mutex<ServerState>) -> io::Result<()> {
    let message = read_message(&mut stream).await?;
    let (head, body) = message;
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default();
    let mut words = request_line.split(' ');
    let method = words.next().unwrap_or_default().to_owned();
    let path = words.next().unwrap_or_default().to_owned();
    let key = header(&head, "idempotency-key").map(str::to_owned);

    let (status, extra, reply) = {
        let mut state = state.lock().unwrap();
        let (status, extra, reply) = decide(&mut state, &method, &path, key.as_deref(), &body);
        state.received.push(Received {
            method,
            path,
            key,
            body,
            status,
        });
        (status, extra, reply)
    };

    let response = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{extra}Connection: close\r\n\r\n{reply}",
        reason(status),
        reply.len()
    );
    with_timeout(stream.write_all(response.as_bytes())).await?;
    with_timeout(stream.shutdown()).await
}

/// The server's decision for one request: status, extra header lines, body.
fn decide(
    state: &mut ServerState,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: &str,
) -> (u16, &'static str, String) {
    if method != "POST" || path != "/v1/charges" {
        return (404, "", "not found".into());
    }
    if state.fail_next > 0 {
        state.fail_next -= 1;
        return (503, "", "try again".into());
    }
    let Some(Ok(key)) = key.map(IdempotencyKey::new) else {
        return (400, "", "a valid Idempotency-Key header is required".into());
    };
    match state.store.check_reuse(&key, Fingerprint::of([body])) {
        Reuse::New => {
            state.charges_created += 1;
            let charge = format!("ch_{}", state.charges_created);
            state.store.complete(&key, charge.clone());
            (201, "", charge)
        }
        Reuse::Replay(charge) => (201, "Idempotent-Replay: true\r\n", charge.clone()),
        Reuse::InFlight => (409, "", "request in progress".into()),
        Reuse::Conflict { .. } => (422, "", "key reused for a different request".into()),
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        201 => "Created",
        400 => "Bad Request",
        404 => "Not Found",
        409 => "Conflict",
        422 => "Unprocessable Content",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// A response as the client received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// `true` if the server marked the response as a replay (`Idempotent-Replay: true`).
    pub replayed: bool,
    pub body: String,
}

/// Sends `POST {path}` to `addr` with an `Idempotency-Key` header (if `key` is given) and a
/// text body, on a fresh connection, and reads the whole response.
pub async fn post(
    addr: SocketAddr,
    path: &str,
    key: Option<&IdempotencyKey>,
    body: &str,
) -> io::Result<Response> {
    let mut stream = with_timeout(TcpStream::connect(addr)).await?;
    let key_line = key
        .map(|k| format!("{}: {k}\r\n", idemkey::HEADER_NAME))
        .unwrap_or_default();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\n{key_line}Content-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    with_timeout(stream.write_all(request.as_bytes())).await?;
    let (head, body) = read_message(&mut stream).await?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| invalid("response has no status code"))?;
    let replayed = header(&head, "idempotent-replay") == Some("true");
    Ok(Response {
        status,
        replayed,
        body,
    })
}

/// Reads one message: the head up to the blank line, then `Content-Length` bytes of body.
async fn read_message(stream: &mut TcpStream) -> io::Result<(String, String)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let n = with_timeout(stream.read(&mut chunk)).await?;
        if n == 0 {
            return Err(invalid("connection closed before the end of the head"));
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > MAX_MESSAGE {
            return Err(invalid("message too large"));
        }
    };
    let head =
        String::from_utf8(buf[..head_end].to_vec()).map_err(|_| invalid("head is not UTF-8"))?;
    let length: usize = header(&head, "content-length")
        .map(|v| v.parse().map_err(|_| invalid("bad Content-Length")))
        .transpose()?
        .unwrap_or(0);
    if length > MAX_MESSAGE {
        return Err(invalid("body too large"));
    }
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = with_timeout(stream.read(&mut chunk)).await?;
        if n == 0 {
            return Err(invalid("connection closed before the end of the body"));
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    let body = String::from_utf8(body).map_err(|_| invalid("body is not UTF-8"))?;
    Ok((head, body))
}

/// The value of the first header called `name` (compared case-insensitively), trimmed.
fn header<'h>(head: &'h str, name: &str) -> Option<&'h str> {
    head.split("\r\n").skip(1).find_map(|line| {
        let (field, value) = line.split_once(':')?;
        field.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

async fn with_timeout<T>(fut: impl Future<Output = io::Result<T>>) -> io::Result<T> {
    tokio::time::timeout(IO_TIMEOUT, fut)
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "mini_http: I/O timed out"))?
}

fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("mini_http: {message}"))
}
