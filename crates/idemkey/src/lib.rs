//! Idempotency keys that belong to the **business intent**, not to the attempt.
//!
//! An idempotency key tells a server "this request is a retry of something you may already
//! have done". That only works if every attempt to fulfil one intent carries the same key. A
//! key generated where the request is built, in an interceptor, or inside a retry loop is new
//! on every attempt and deduplicates nothing. This is the bug `idemlint` reports, and this
//! crate is what its advice points to: make the key once, outside the retries, and hand it to
//! every attempt.
//!
//! * [`derive()`] / [`KeyBuilder`]: a deterministic key (SHA-256, length-prefixed encoding)
//!   from a namespace and the parts that identify the intent.
//! * [`mint`]: a random key from the OS CSPRNG, made once per intent and stored with it.
//! * [`IdempotencyKey`]: the validated key type (1 to 255 visible ASCII characters).
//! * [`retry_with_key`], [`retry_with_key_async`], and `with_key` (feature `backon`): retry
//!   adapters that pass the same key to every attempt.
//! * [`Fingerprint`] and [`KeyStore`]: detect a key reused for a *different* request, which
//!   the IETF draft answers with `422`.
//!
//! # Derive or mint?
//!
//! Which requests count as "the same" is a **product decision**. No hashing scheme can
//! answer it. Ask one question: *does this intent have a natural identity that the business
//! already names?*
//!
//! * **Yes: derive.** "Bill customer `cus_123` for September 2026" happens at most once, by
//!   definition. The identity (customer + billing period) is in the data, so every retry,
//!   every restarted process and every replica of a scheduled job can compute the key from it.
//!   Nothing has to be stored.
//!
//!   ```
//!   let key = idemkey::derive("billing.monthly-charge", ["cus_123", "2026-09"]);
//!   assert_eq!(key, idemkey::derive("billing.monthly-charge", ["cus_123", "2026-09"]));
//!   ```
//!
//!   Other examples: a payout for one invoice (`invoice id`), a welcome email (`user id`),
//!   shipping one order (`order id`).
//!
//! * **No: mint, persist, reuse.** A user who taps "Pay" twice for the same cart may well
//!   mean to buy twice: two coffees are two purchases. Nothing in the request separates a
//!   retry from a second decision. Only the moment the user decided does, so the key is
//!   minted *there*, once, stored with the pending intent *before the first attempt*, and
//!   loaded again for every retry, including after an app restart.
//!
//!   ```
//!   # struct PendingCharge { idempotency_key: idemkey::IdempotencyKey, amount_minor: u64 }
//!   // When the user confirms: one intent, one key, stored before anything is sent.
//!   let pending = PendingCharge { idempotency_key: idemkey::mint()?, amount_minor: 2500 };
//!   // db.insert(&pending)?;  then send, and on every retry reuse pending.idempotency_key
//!   # Ok::<(), idemkey::MintError>(())
//!   ```
//!
//! Rules of thumb:
//!
//! * Deriving from the *request content* (amount + cart) is the too-broad mistake: a genuine
//!   repeat purchase looks like a retry and is silently dropped. Derive only from an identity
//!   that the business says happens once.
//! * Any part that changes between attempts (a timestamp, even a rounded one, an attempt
//!   counter, a random value, a host or pod name) is the too-narrow mistake: every retry gets
//!   a new key.
//! * If you can't say in one sentence why two requests with the same parts are the same
//!   intent, mint.
//! * Write the decision down next to the code, with the key's expected lifetime. Stripe may
//!   prune keys once they are 24 hours old; after that, a reused key makes a new request.
//!
//! # Retrying with one key
//!
//! The adapters take the key as an argument, outside the loop, and give that same key to
//! every attempt, so the retried code has no reason to make one. [`retry_with_key`] and
//! [`retry_with_key_async`] retry every error immediately, up to a number of attempts. They
//! never sleep, so they work with any async runtime or none. For backoff, sleep at the start
//! of later attempts, or enable the `backon` feature and use `with_key`, which adds backoff,
//! jitter and a filter for which errors to retry.
//!
//! ```
//! let key = idemkey::derive("billing.monthly-charge", ["cus_123", "2026-09"]);
//! let mut sent = Vec::new();
//! let outcome = idemkey::retry_with_key(&key, 3, |key, attempt| {
//!     sent.push(key.clone()); // e.g. request.header("Idempotency-Key", key.as_str())
//!     if attempt < 3 { Err("503") } else { Ok("charged once") }
//! });
//! assert_eq!(outcome, Ok("charged once"));
//! assert!(sent.iter().all(|k| *k == key));
//! ```
//!
//! # Features
//!
//! * `serde`: `Serialize`/`Deserialize` for [`IdempotencyKey`] (validated when read) and
//!   [`Fingerprint`] (hex).
//! * `http`: `From<&IdempotencyKey>` for `http::HeaderValue` (so `HeaderValue::try_from`
//!   works), `TryFrom<&HeaderValue>` for [`IdempotencyKey`], and
//!   `IdempotencyKey::header_name()`.
//! * `backon`: `with_key(key, policy, |key| async { .. })` over backon 1.x.
//!
//! # Other languages
//!
//! The byte encoding of [`derive()`] is a documented contract, checked against
//! `vectors.json`. The crate ships a one-file Java 17 helper (`java/IdemKey.java`, JDK only)
//! that computes the same keys. See the README.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod derive;
mod fingerprint;
mod key;
mod mint;
mod retry;
mod store;

pub use derive::{DERIVED_KEY_BYTES, KEY_HEX_LEN, KeyBuilder, derive};
pub use fingerprint::{Fingerprint, ParseFingerprintError};
pub use key::{HEADER_NAME, IdempotencyKey, InvalidKey};
pub use mint::{MintError, mint};
#[cfg(feature = "backon")]
pub use retry::with_key;
pub use retry::{retry_with_key, retry_with_key_async};
pub use store::{KeyStore, Reuse};
