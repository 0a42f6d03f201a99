//! A small in-memory [`KeyStore`] that shows the server-side reuse check.

use crate::{Fingerprint, IdempotencyKey};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// What to do with a request, given its key and its [`Fingerprint`]. Returned by
/// [`KeyStore::check_reuse`].
///
/// The HTTP statuses are the ones the IETF draft `draft-ietf-httpapi-idempotency-key-header`
/// recommends.
#[derive(Debug, PartialEq, Eq)]
pub enum Reuse<'a, R> {
    /// The key was not known. It is now recorded as *in flight* with this fingerprint. Execute
    /// the request, then call [`KeyStore::complete`] with its outcome, or
    /// [`KeyStore::release`] if it was not executed at all.
    New,
    /// Same key and same fingerprint, and the first request completed. This is a retry:
    /// return the stored outcome and do not execute again. The draft says to return the
    /// stored result, success or error, and Stripe replays 500s too.
    Replay(&'a R),
    /// Same key and same fingerprint, and the first request is still executing. Answer
    /// `409 Conflict`. The client may retry the same request later, unchanged.
    InFlight,
    /// Same key, **different** fingerprint: the key was reused for a different request.
    /// Answer `422 Unprocessable Content` and do not execute. This is a client bug; a
    /// replay would hide it.
    Conflict {
        /// The fingerprint recorded when the key was first seen.
        stored: Fingerprint,
    },
}

#[derive(Debug)]
struct Entry<R> {
    fingerprint: Fingerprint,
    outcome: Option<R>,
    first_seen: Instant,
}

/// An in-memory map from idempotency key to (fingerprint, outcome), for tests, examples and
/// single-process tools.
///
/// A production server keeps the same data in shared, durable storage: a table with a unique
/// constraint on the key, claimed with a conditional insert *before* the side effect, so
/// that concurrent retries on different replicas serialise. This type only shows the decision
/// rules, and it has no locking. Wrap it in a `Mutex` to share it between threads.
///
/// ```
/// use idemkey::{Fingerprint, KeyStore, Reuse};
///
/// let mut store: KeyStore<String> = KeyStore::new();
/// let key = idemkey::derive("billing.monthly-charge", ["cus_123", "2026-09"]);
/// let fp = Fingerprint::of(["9900", "usd", "cus_123"]);
///
/// // First attempt: execute, then record the outcome.
/// assert_eq!(store.check_reuse(&key, fp), Reuse::New);
/// // A concurrent retry while the first is executing: 409.
/// assert_eq!(store.check_reuse(&key, fp), Reuse::InFlight);
/// store.complete(&key, "ch_A".to_string());
///
/// // A retry after completion: the stored outcome, no second charge.
/// assert_eq!(store.check_reuse(&key, fp), Reuse::Replay(&"ch_A".to_string()));
///
/// // The same key with a different amount: refused (422).
/// let other = Fingerprint::of(["19900", "usd", "cus_123"]);
/// assert_eq!(store.check_reuse(&key, other), Reuse::Conflict { stored: fp });
/// ```
#[derive(Debug)]
pub struct KeyStore<R> {
    entries: HashMap<IdempotencyKey, Entry<R>>,
}

impl<R> Default for KeyStore<R> {
    fn default() -> Self {
        Self::new()
    }
}

impl<R> KeyStore<R> {
    /// An empty store.
    pub fn new() -> Self {
        Self {
            entries: HashMap::new(),
        }
    }

    /// Looks up `key`. If it is new, it is recorded as in flight with `fingerprint`.
    ///
    /// The fingerprint is compared first, so a reused key with a different request is
    /// [`Reuse::Conflict`] whether or not the first request finished.
    pub fn check_reuse(&mut self, key: &IdempotencyKey, fingerprint: Fingerprint) -> Reuse<'_, R> {
        if !self.entries.contains_key(key) {
            self.entries.insert(
                key.clone(),
                Entry {
                    fingerprint,
                    outcome: None,
                    first_seen: Instant::now(),
                },
            );
            return Reuse::New;
        }
        let entry = &self.entries[key];
        if entry.fingerprint != fingerprint {
            Reuse::Conflict {
                stored: entry.fingerprint,
            }
        } else {
            match &entry.outcome {
                Some(outcome) => Reuse::Replay(outcome),
                None => Reuse::InFlight,
            }
        }
    }

    /// Records the outcome of the request that [`check_reuse`](Self::check_reuse) answered
    /// with [`Reuse::New`]. Later requests with the same key and fingerprint get it as
    /// [`Reuse::Replay`].
    ///
    /// Returns `false`, and stores nothing, if `key` is unknown (never checked, released or
    /// pruned). Returns `true` otherwise; an earlier outcome is replaced.
    pub fn complete(&mut self, key: &IdempotencyKey, outcome: R) -> bool {
        match self.entries.get_mut(key) {
            Some(entry) => {
                entry.outcome = Some(outcome);
                true
            }
            None => false,
        }
    }

    /// Forgets `key`, for a request that was refused before it executed (for example it
    /// failed validation). Nothing happened, so a corrected retry may use the key again.
    /// Stripe does the same for validation failures. Returns `true` if the key was known.
    pub fn release(&mut self, key: &IdempotencyKey) -> bool {
        self.entries.remove(key).is_some()
    }

    /// Removes every key first seen more than `max_age` ago and returns how many were removed.
    ///
    /// Stripe may prune keys once they are at least 24 hours old
    /// (`Duration::from_secs(24 * 60 * 60)`). After that, a reused key makes a new request.
    /// Choose `max_age` from how long one intent can still be retried, not from the usual
    /// retry delay.
    pub fn prune_older_than(&mut self, max_age: Duration) -> usize {
        let before = self.entries.len();
        self.entries
            .retain(|_, entry| entry.first_seen.elapsed() <= max_age);
        before - self.entries.len()
    }

    /// Number of keys held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` if no key is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> IdempotencyKey {
        IdempotencyKey::new(s).unwrap()
    }

    #[test]
    fn conflict_wins_over_in_flight() {
        let mut store: KeyStore<u32> = KeyStore::new();
        let a = Fingerprint::of(["a"]);
        let b = Fingerprint::of(["b"]);
        assert_eq!(store.check_reuse(&key("k"), a), Reuse::New);
        assert_eq!(
            store.check_reuse(&key("k"), b),
            Reuse::Conflict { stored: a }
        );
        assert_eq!(store.check_reuse(&key("k"), a), Reuse::InFlight);
    }

    #[test]
    fn release_allows_a_corrected_retry() {
        let mut store: KeyStore<u32> = KeyStore::new();
        let bad = Fingerprint::of(["-5"]);
        let good = Fingerprint::of(["5"]);
        assert_eq!(store.check_reuse(&key("k"), bad), Reuse::New);
        assert!(store.release(&key("k")));
        assert_eq!(store.check_reuse(&key("k"), good), Reuse::New);
        assert!(store.complete(&key("k"), 5));
        assert_eq!(store.check_reuse(&key("k"), good), Reuse::Replay(&5));
    }

    #[test]
    fn complete_unknown_key_is_refused() {
        let mut store: KeyStore<u32> = KeyStore::default();
        assert!(!store.complete(&key("nope"), 1));
        assert!(store.is_empty());
    }

    #[test]
    fn prune_removes_old_entries() {
        let mut store: KeyStore<u32> = KeyStore::new();
        store.check_reuse(&key("a"), Fingerprint::of(["a"]));
        store.check_reuse(&key("b"), Fingerprint::of(["b"]));
        assert_eq!(store.prune_older_than(Duration::from_secs(3600)), 0);
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(store.prune_older_than(Duration::ZERO), 2);
        assert_eq!(store.len(), 0);
    }
}
