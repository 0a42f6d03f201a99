//! A keyed request through a retrying client, against a local test server.
//!
//! ```text
//! cargo run -p idemkey --example retrying_client
//! ```
//!
//! The server (127.0.0.1, a free port) answers the first two attempts with
//! `503 Service Unavailable` and creates the charge on the third. The key is derived once,
//! before the retry loop, so the server sees the same `Idempotency-Key` on all three attempts.
//! A later retry of the same intent is replayed instead of charging again.
//!
//! The HTTP client is a few lines over a tokio `TcpStream` (see `support/mini_http.rs`). A
//! real service would use reqwest or hyper; the key handling is the same, and a full HTTP
//! stack would make this crate's cold build several times slower.

#[path = "support/mini_http.rs"]
mod mini_http;

use idemkey::IdempotencyKey;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

/// Up to 4 attempts with 20, 40, 80 ms of backoff between them.
const MAX_ATTEMPTS: u32 = 4;

/// Sends one charge with the given key, retrying 5xx and connection errors. The key is a
/// parameter: this function cannot invent a new one per attempt.
async fn charge_with_retries(
    addr: SocketAddr,
    key: &IdempotencyKey,
    body: &str,
) -> io::Result<mini_http::Response> {
    idemkey::retry_with_key_async(key, MAX_ATTEMPTS, |key, attempt| async move {
        if attempt > 1 {
            tokio::time::sleep(Duration::from_millis(20 << (attempt - 2))).await;
        }
        let response = mini_http::post(addr, "/v1/charges", Some(key), body).await?;
        println!(
            "client: attempt {attempt} sent Idempotency-Key: {key} -> HTTP {}",
            response.status
        );
        if response.status >= 500 {
            Err(io::Error::other(format!("HTTP {}", response.status)))
        } else {
            Ok(response)
        }
    })
    .await
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> io::Result<()> {
    let server = mini_http::ChargeServer::start(2).await?;
    let addr = server.addr();

    // The intent has a natural identity (customer + billing period), so derive the key.
    // Every retry, restart or replica computes the same value.
    let key = idemkey::derive("billing.monthly-charge", ["cus_123", "2026-09"]);
    let body = "amount=9900&currency=usd&customer=cus_123";
    println!("intent: bill cus_123 for 2026-09, key {key}");

    let response = charge_with_retries(addr, &key, body).await?;
    println!("client: result {} {}", response.status, response.body);

    // The same intent retried later (say the response was lost): replayed, not charged again.
    let again = charge_with_retries(addr, &key, body).await?;
    println!(
        "client: retried later -> {} {} (replayed: {})",
        again.status, again.body, again.replayed
    );

    let received = server.received();
    for (i, request) in received.iter().enumerate() {
        println!(
            "server: request {} Idempotency-Key: {} -> {}",
            i + 1,
            request.key.as_deref().unwrap_or("(none)"),
            request.status
        );
    }
    let mut distinct: Vec<_> = received.iter().map(|r| r.key.clone()).collect();
    distinct.sort();
    distinct.dedup();
    println!(
        "server: {} requests, {} distinct key(s), {} charge(s) created",
        received.len(),
        distinct.len(),
        server.charges_created()
    );

    if distinct.len() != 1 || server.charges_created() != 1 || !again.replayed {
        return Err(io::Error::other("expected one key and one charge"));
    }
    Ok(())
}
