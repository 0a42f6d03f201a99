//! Retry adapters that take the key **before** the loop and hand it to every attempt.
//!
//! The bug that idemlint reports is a key computed inside the retried code:
//!
//! ```text
//! retry(|| send(Uuid::new_v4(), &charge))   // a new key per attempt: nothing is deduplicated
//! ```
//!
//! These adapters take the key as an argument and pass that same key to the closure on
//! every attempt. The closure has no reason to make one.
//!
//! The plain adapters retry every error, immediately, up to a maximum number of attempts.
//! They never sleep, so they work with any runtime, or none. For backoff, sleep at the start
//! of attempts after the first, or use [`with_key`] (feature `backon`), which adds
//! exponential or constant backoff, jitter, and a filter for which errors to retry.

use crate::IdempotencyKey;

/// Runs `attempt_fn` until it returns `Ok` or `max_attempts` attempts have failed, passing
/// the **same** `key` to every attempt.
///
/// * `max_attempts` counts all attempts, including the first. `0` is treated as `1`.
/// * `attempt_fn(key, attempt)` receives the key and the attempt number, starting at 1.
///
/// Returns the first `Ok`, or else the error of the last attempt. Errors from earlier
/// attempts are dropped; log them inside `attempt_fn` if you need them. Every error is
/// retried, so return `Ok` (for example `Ok(Err(e))`) for errors that must not be retried,
/// such as a `4xx` that needs a corrected request and a new key.
///
/// ```
/// use std::cell::RefCell;
///
/// let key = idemkey::derive("billing.monthly-charge", ["cus_123", "2026-09"]);
/// let seen = RefCell::new(Vec::new());
///
/// let result = idemkey::retry_with_key(&key, 5, |key, attempt| {
///     seen.borrow_mut().push(key.to_string());
///     if attempt < 3 { Err("503 Service Unavailable") } else { Ok("ch_A") }
/// });
///
/// assert_eq!(result, Ok("ch_A"));
/// assert_eq!(seen.borrow().len(), 3);
/// assert!(seen.borrow().iter().all(|k| k == key.as_str()));
/// ```
pub fn retry_with_key<T, E, F>(
    key: &IdempotencyKey,
    max_attempts: u32,
    mut attempt_fn: F,
) -> Result<T, E>
where
    F: FnMut(&IdempotencyKey, u32) -> Result<T, E>,
{
    let max_attempts = max_attempts.max(1);
    let mut attempt = 1;
    loop {
        match attempt_fn(key, attempt) {
            Ok(value) => return Ok(value),
            Err(error) if attempt >= max_attempts => return Err(error),
            Err(_) => attempt += 1,
        }
    }
}

/// The async form of [`retry_with_key`]: it awaits the future that `attempt_fn` returns,
/// and retries in the same way.
///
/// It needs no runtime of its own and never sleeps between attempts. The key reference lives
/// as long as the call (`'k`), so the returned future may borrow it:
/// `|key, attempt| async move { client.send(key).await }`.
///
/// ```
/// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// let key = idemkey::mint()?;
/// let attempts = std::cell::Cell::new(0);
///
/// let result: Result<u16, u16> = block_on(idemkey::retry_with_key_async(&key, 3, |key, attempt| {
///     attempts.set(attempts.get() + 1);
///     async move {
///         assert_eq!(key.len(), 32);
///         if attempt < 3 { Err(503) } else { Ok(201) }
///     }
/// }));
/// assert_eq!(result, Ok(201));
/// assert_eq!(attempts.get(), 3);
/// # Ok::<(), idemkey::MintError>(())
/// ```
pub async fn retry_with_key_async<'k, T, E, F, Fut>(
    key: &'k IdempotencyKey,
    max_attempts: u32,
    mut attempt_fn: F,
) -> Result<T, E>
where
    F: FnMut(&'k IdempotencyKey, u32) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    let max_attempts = max_attempts.max(1);
    let mut attempt = 1;
    loop {
        match attempt_fn(key, attempt).await {
            Ok(value) => return Ok(value),
            Err(error) if attempt >= max_attempts => return Err(error),
            Err(_) => attempt += 1,
        }
    }
}

/// Retries `attempt_fn` with a [backon](https://docs.rs/backon/1) backoff `policy`, passing
/// the **same** `key` to every attempt (feature `backon`).
///
/// This returns backon's [`Retry`](backon::Retry) future, so backon's options still chain
/// before `.await`: `.when(|e| ...)` decides which errors to retry, `.notify(...)` logs them
/// and `.sleep(...)` swaps the sleeper. The number of retries comes from the policy, e.g.
/// `ExponentialBuilder::default().with_max_times(3)` allows up to 3 retries after the first
/// attempt. Between attempts it sleeps with tokio's timer (backon's `tokio-sleep` feature), so
/// run it on a tokio runtime that has the `time` driver enabled, or pass another sleeper with
/// `.sleep(...)`.
///
/// ```
/// use backon::ConstantBuilder;
/// use std::time::Duration;
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let key = idemkey::derive("payout", ["po_77"]);
/// let policy = ConstantBuilder::default()
///     .with_delay(Duration::from_millis(1))
///     .with_max_times(4);
/// let seen = std::cell::RefCell::new(Vec::new());
///
/// let result: Result<&str, u16> = idemkey::with_key(&key, policy, |key| {
///     seen.borrow_mut().push(key.clone());
///     let attempt = seen.borrow().len();
///     async move { if attempt < 3 { Err(503) } else { Ok("paid") } }
/// })
/// .when(|status| *status >= 500) // retry 5xx only
/// .await;
///
/// assert_eq!(result, Ok("paid"));
/// assert_eq!(*seen.borrow(), vec![key.clone(), key.clone(), key.clone()]);
/// # });
/// ```
#[cfg(feature = "backon")]
pub fn with_key<'k, B, T, E, Fut, F>(
    key: &'k IdempotencyKey,
    policy: B,
    mut attempt_fn: F,
) -> backon::Retry<B::Backoff, T, E, Fut, impl FnMut() -> Fut>
where
    B: backon::BackoffBuilder,
    F: FnMut(&'k IdempotencyKey) -> Fut,
    Fut: Future<Output = Result<T, E>>,
{
    use backon::Retryable;
    (move || attempt_fn(key)).retry(policy)
}
