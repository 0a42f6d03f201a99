//! Random per-intent keys: [`mint`].

use crate::IdempotencyKey;
use crate::derive::{DERIVED_KEY_BYTES, lower_hex};
use std::fmt;

/// Mints a fresh random key for **one** intent, from the operating system's CSPRNG.
///
/// **Call it once, when the intent is formed. Persist the key with the intent before the
/// first attempt, and reuse it for every retry.**
///
/// * *Once, when the intent is formed:* for example when the user confirms payment, or when
///   an order row is created. That is not where the request is built, and never inside a
///   retry loop, interceptor or middleware: each of those runs again on every attempt and
///   would mint a new key every time, so nothing is deduplicated.
/// * *Persist it before the first attempt:* store it in the same row or message as the
///   intent (a `pending_charges` row, an outbox entry, a job payload). A key kept only in
///   memory is lost when the process dies, which is exactly when a retry is needed.
/// * *Reuse it for every retry:* load it and send it again. [`retry_with_key`](crate::retry_with_key)
///   and the other adapters pass the same key to every attempt.
///
/// A second real intent (the user presses "Pay" again) gets a second call to `mint`.
///
/// The key is 16 random bytes (128 bits) written as 32 lowercase hex characters: the same
/// shape as a key from [`derive`](fn@crate::derive). That is more entropy than a version 4
/// UUID (122 random bits), which Stripe suggests.
///
/// # Errors
///
/// [`MintError`] if the operating system's random source cannot be read. On mainstream
/// platforms `getrandom` does not fail once the system is booted. Treat the error as fatal for
/// this intent, and never fall back to a weaker or time-based key.
///
/// ```
/// let key = idemkey::mint()?;
/// assert_eq!(key.len(), 32);
/// assert!(key.as_str().bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
/// assert_ne!(key, idemkey::mint()?); // a new intent, a new key
/// # Ok::<(), idemkey::MintError>(())
/// ```
pub fn mint() -> Result<IdempotencyKey, MintError> {
    let mut bytes = [0u8; DERIVED_KEY_BYTES];
    getrandom::fill(&mut bytes).map_err(MintError)?;
    Ok(IdempotencyKey::from_trusted(lower_hex(&bytes)))
}

/// The operating system's random source could not be read, so no key was minted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MintError(getrandom::Error);

impl fmt::Display for MintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "could not read the operating system's random source to mint an idempotency key: {}",
            self.0
        )
    }
}

impl std::error::Error for MintError {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn minted_keys_are_distinct_and_well_formed() {
        let keys: HashSet<_> = (0..1000).map(|_| mint().unwrap()).collect();
        assert_eq!(keys.len(), 1000);
        for key in &keys {
            assert_eq!(key.len(), 32);
            assert!(
                key.as_str()
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            );
        }
    }
}
