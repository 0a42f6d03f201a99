//! [`Fingerprint`]: what "the same request" means, as a digest.

use crate::derive::{FINGERPRINT_TAG, frame, lower_hex};
use sha2::{Digest, Sha256};
use std::fmt;
use std::str::FromStr;

/// A SHA-256 digest of the request fields that define "the same request", such as amount,
/// currency, customer and cart.
///
/// An idempotency key says *which intent* a request belongs to, and the fingerprint says
/// *what was asked*. Store the fingerprint next to the key when a key is first seen.
/// A later request with the same key and the **same** fingerprint is a retry: replay the
/// stored outcome. One with the same key and a **different** fingerprint is a client bug,
/// such as a key reused for another purchase or a request changed between retries. Refuse it
/// rather than guess. The IETF draft `draft-ietf-httpapi-idempotency-key-header` says a server
/// SHOULD answer such a request with `422 Unprocessable Content`, and Stripe answers it with an
/// `idempotency_error`. [`KeyStore`](crate::KeyStore) shows the check.
///
/// Choose the fields deliberately and keep their order fixed. Leave out what may legitimately
/// change between retries, such as a request timestamp, a trace id or an auth token.
///
/// # Encoding
///
/// The framing is the one [`derive`](fn@crate::derive) uses, with a different domain tag and no
/// namespace. All 32 digest bytes are kept:
///
/// ```text
/// message     = frame("idemkey/fingerprint/v1") || frame(utf8(parts[0])) || ... || frame(utf8(parts[n-1]))
/// fingerprint = SHA-256(message)    32 bytes; Display writes 64 lowercase hex characters
/// ```
///
/// ```
/// use idemkey::Fingerprint;
///
/// let first = Fingerprint::of(["2500", "usd", "cus_123", "cart_9"]);
/// let retry = Fingerprint::of(["2500", "usd", "cus_123", "cart_9"]);
/// let changed = Fingerprint::of(["2600", "usd", "cus_123", "cart_9"]);
/// assert_eq!(first, retry);
/// assert_ne!(first, changed);
///
/// // Store it as text, read it back.
/// let stored = first.to_string();
/// assert_eq!(stored.len(), 64);
/// assert_eq!(stored.parse::<Fingerprint>()?, first);
/// # Ok::<(), idemkey::ParseFingerprintError>(())
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fingerprint([u8; 32]);

impl Fingerprint {
    /// Length of a fingerprint in bytes (32). Its hex form is twice as long (64 characters).
    pub const LEN: usize = 32;

    /// Digests an ordered list of request fields. See the type's documentation for the exact
    /// encoding. This cannot fail.
    pub fn of<I>(parts: I) -> Self
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let mut hasher = Sha256::new();
        frame(&mut hasher, FINGERPRINT_TAG);
        for part in parts {
            frame(&mut hasher, part.as_ref().as_bytes());
        }
        let mut out = [0u8; Self::LEN];
        out.copy_from_slice(&hasher.finalize());
        Self(out)
    }

    /// Wraps 32 bytes that were stored earlier, for example in a `BYTEA` column.
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The 32 digest bytes.
    pub const fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Display for Fingerprint {
    /// Writes 64 lowercase hex characters.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&lower_hex(&self.0))
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

impl FromStr for Fingerprint {
    type Err = ParseFingerprintError;

    /// Parses the 64-character hex form that `Display` writes. Upper-case digits are
    /// accepted too.
    ///
    /// # Errors
    ///
    /// [`ParseFingerprintError`] if `s` is not exactly 64 hex digits.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bytes = s.as_bytes();
        if bytes.len() != Self::LEN * 2 {
            return Err(ParseFingerprintError { _private: () });
        }
        let mut out = [0u8; Self::LEN];
        for (slot, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            let hi = hex_value(pair[0]).ok_or(ParseFingerprintError { _private: () })?;
            let lo = hex_value(pair[1]).ok_or(ParseFingerprintError { _private: () })?;
            *slot = (hi << 4) | lo;
        }
        Ok(Self(out))
    }
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// A string was not a fingerprint: it must be exactly 64 hex digits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseFingerprintError {
    _private: (),
}

impl fmt::Display for ParseFingerprintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a fingerprint must be exactly 64 hex digits")
    }
}

impl std::error::Error for ParseFingerprintError {}

#[cfg(feature = "serde")]
mod serde_impls {
    use super::Fingerprint;
    use serde::de::{self, Deserialize, Deserializer, Visitor};
    use serde::ser::{Serialize, Serializer};
    use std::fmt;

    /// Serialized as its 64-character lowercase hex string.
    impl Serialize for Fingerprint {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.collect_str(self)
        }
    }

    /// Deserialized from the 64-character hex string.
    impl<'de> Deserialize<'de> for Fingerprint {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct FpVisitor;

            impl Visitor<'_> for FpVisitor {
                type Value = Fingerprint;

                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a fingerprint: 64 hex digits")
                }

                fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                    v.parse().map_err(E::custom)
                }
            }

            deserializer.deserialize_str(FpVisitor)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_errors() {
        let fp = Fingerprint::of(["a"]);
        let text = fp.to_string();
        assert_eq!(text.parse::<Fingerprint>().unwrap(), fp);
        assert_eq!(text.to_uppercase().parse::<Fingerprint>().unwrap(), fp);
        assert!(text[..63].parse::<Fingerprint>().is_err());
        assert!(format!("{}g", &text[..63]).parse::<Fingerprint>().is_err());
        assert_eq!(Fingerprint::from_bytes(*fp.as_bytes()), fp);
    }

    #[test]
    fn boundaries_between_fields_matter() {
        assert_ne!(
            Fingerprint::of(["2500", "usd"]),
            Fingerprint::of(["250", "0usd"])
        );
    }

    #[test]
    fn fingerprint_and_derived_key_are_domain_separated() {
        // Same framing, different tags: the fingerprint of [ns, part] never equals the
        // digest behind derive(ns, [part]).
        let key = crate::derive("ns", ["p"]);
        let fp = Fingerprint::of(["ns", "p"]);
        assert!(!fp.to_string().starts_with(key.as_str()));
    }
}
