//! The retry adapters against a real HTTP server on 127.0.0.1. The server fails the first
//! attempts with 503, and every attempt must carry the same `Idempotency-Key`.

#[path = "../examples/support/mini_http.rs"]
mod mini_http;

use idemkey::IdempotencyKey;
use mini_http::{ChargeServer, Response, post};
use std::io;
use std::net::SocketAddr;

const BODY: &str = "amount=9900&currency=usd&customer=cus_123";

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Treats 5xx as retryable errors, like a typical client.
fn retryable(response: Response) -> io::Result<Response> {
    if response.status >= 500 {
        Err(io::Error::other(format!("HTTP {}", response.status)))
    } else {
        Ok(response)
    }
}

fn assert_one_key(server: &ChargeServer, key: &IdempotencyKey, requests: usize) {
    let received = server.received();
    assert_eq!(received.len(), requests, "{received:#?}");
    for request in &received {
        assert_eq!(request.key.as_deref(), Some(key.as_str()), "{received:#?}");
    }
}

#[test]
fn async_adapter_sends_one_key_over_failing_attempts() {
    runtime().block_on(async {
        let server = ChargeServer::start(2).await.unwrap();
        let addr = server.addr();
        let key = idemkey::derive("billing.monthly-charge", ["cus_123", "2026-09"]);

        let response = idemkey::retry_with_key_async(&key, 5, |key, _attempt| async move {
            retryable(post(addr, "/v1/charges", Some(key), BODY).await?)
        })
        .await
        .unwrap();

        assert_eq!(response.status, 201);
        assert_eq!(response.body, "ch_1");
        assert_one_key(&server, &key, 3);
        let statuses: Vec<u16> = server.received().iter().map(|r| r.status).collect();
        assert_eq!(statuses, [503, 503, 201]);
        assert_eq!(server.charges_created(), 1);
    });
}

#[test]
fn async_adapter_returns_the_last_error_when_attempts_run_out() {
    runtime().block_on(async {
        let server = ChargeServer::start(10).await.unwrap();
        let addr = server.addr();
        let key = idemkey::mint().unwrap();

        let err = idemkey::retry_with_key_async(&key, 3, |key, _| async move {
            retryable(post(addr, "/v1/charges", Some(key), BODY).await?)
        })
        .await
        .unwrap_err();

        assert_eq!(err.to_string(), "HTTP 503");
        assert_one_key(&server, &key, 3);
        assert_eq!(server.charges_created(), 0);
    });
}

#[test]
fn sync_adapter_sends_one_key_over_failing_attempts() {
    // The server runs on its own thread and runtime; the client side is blocking code.
    let (tx, rx) = std::sync::mpsc::channel::<SocketAddr>();
    let (stop_tx, stop_rx) = std::sync::mpsc::channel::<()>();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let server_thread = std::thread::spawn(move || {
        runtime().block_on(async {
            let server = ChargeServer::start(2).await.unwrap();
            tx.send(server.addr()).unwrap();
            // Serve until the client side is done (bounded: at most 10 s).
            for _ in 0..1000 {
                if stop_rx.try_recv().is_ok() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            done_tx
                .send((server.received(), server.charges_created()))
                .unwrap();
        });
    });
    let addr = rx.recv().unwrap();

    let client = runtime();
    let key = idemkey::mint().unwrap(); // minted once, before the loop
    let mut attempts = Vec::new();
    let response = idemkey::retry_with_key(&key, 4, |key, attempt| {
        attempts.push(attempt);
        retryable(client.block_on(post(addr, "/v1/charges", Some(key), BODY))?)
    })
    .unwrap();

    stop_tx.send(()).unwrap();
    let (received, charges) = done_rx.recv().unwrap();
    server_thread.join().unwrap();

    assert_eq!(response.status, 201);
    assert_eq!(attempts, [1, 2, 3]);
    assert_eq!(received.len(), 3);
    assert!(
        received
            .iter()
            .all(|r| r.key.as_deref() == Some(key.as_str()))
    );
    assert_eq!(charges, 1);
}

#[test]
fn server_replays_a_retry_and_refuses_a_reused_key() {
    runtime().block_on(async {
        let server = ChargeServer::start(0).await.unwrap();
        let addr = server.addr();
        let key = idemkey::derive("checkout", ["intent_42"]);

        let first = post(addr, "/v1/charges", Some(&key), BODY).await.unwrap();
        assert_eq!((first.status, first.replayed), (201, false));

        // The response was lost and the client retries the same intent: replayed.
        let retry = post(addr, "/v1/charges", Some(&key), BODY).await.unwrap();
        assert_eq!((retry.status, retry.replayed), (201, true));
        assert_eq!(retry.body, first.body);

        // The same key for a different request: 422, as the IETF draft says.
        let other = post(addr, "/v1/charges", Some(&key), "amount=1&currency=usd")
            .await
            .unwrap();
        assert_eq!(other.status, 422);

        // No key at all: 400.
        let none = post(addr, "/v1/charges", None, BODY).await.unwrap();
        assert_eq!(none.status, 400);

        assert_eq!(server.charges_created(), 1);
    });
}

#[test]
fn a_key_per_attempt_is_what_goes_wrong() {
    // The bug idemlint reports, for contrast: a key made inside the attempt closure.
    runtime().block_on(async {
        let server = ChargeServer::start(2).await.unwrap();
        let addr = server.addr();
        let unused = idemkey::derive("contrast", ["x"]);
        idemkey::retry_with_key_async(&unused, 5, |_, _| async move {
            let fresh = idemkey::mint().unwrap(); // wrong: new on every attempt
            retryable(post(addr, "/v1/charges", Some(&fresh), BODY).await?)
        })
        .await
        .unwrap();
        let mut keys: Vec<_> = server.received().into_iter().map(|r| r.key).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), 3, "three attempts, three unrelated keys");
    });
}

#[cfg(feature = "backon")]
#[test]
fn backon_adapter_sends_one_key_over_failing_attempts() {
    use backon::ExponentialBuilder;
    use std::time::Duration;

    runtime().block_on(async {
        let server = ChargeServer::start(2).await.unwrap();
        let addr = server.addr();
        let key = idemkey::derive("billing.monthly-charge", ["cus_9", "2026-10"]);
        let policy = ExponentialBuilder::default()
            .with_min_delay(Duration::from_millis(5))
            .with_max_delay(Duration::from_millis(50))
            .with_max_times(4);

        let mut notified = 0;
        let response = idemkey::with_key(&key, policy, |key| async move {
            retryable(post(addr, "/v1/charges", Some(key), BODY).await?)
        })
        .notify(|_, _| notified += 1)
        .await
        .unwrap();

        assert_eq!(response.status, 201);
        assert_eq!(notified, 2);
        assert_one_key(&server, &key, 3);
        assert_eq!(server.charges_created(), 1);
    });
}

#[cfg(feature = "backon")]
#[test]
fn backon_adapter_stops_on_errors_that_when_rejects() {
    use backon::ConstantBuilder;
    use std::time::Duration;

    runtime().block_on(async {
        let server = ChargeServer::start(5).await.unwrap();
        let addr = server.addr();
        let key = idemkey::mint().unwrap();
        let policy = ConstantBuilder::default()
            .with_delay(Duration::from_millis(1))
            .with_max_times(10);

        let err = idemkey::with_key(&key, policy, |key| async move {
            retryable(post(addr, "/v1/charges", Some(key), BODY).await?)
        })
        .when(|e| e.kind() != io::ErrorKind::Other)
        .await
        .unwrap_err();

        assert_eq!(err.to_string(), "HTTP 503");
        assert_one_key(&server, &key, 1);
    });
}
