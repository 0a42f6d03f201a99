//! Deterministic keys: the byte encoding, [`derive()`] and [`KeyBuilder`].

use crate::IdempotencyKey;
use sha2::{Digest, Sha256};
use std::fmt;

/// Domain tag that starts every message hashed by [`derive()`].
pub(crate) const DERIVE_TAG: &[u8] = b"idemkey/derive/v1";
/// Domain tag that starts every message hashed by [`Fingerprint::of`](crate::Fingerprint::of).
pub(crate) const FINGERPRINT_TAG: &[u8] = b"idemkey/fingerprint/v1";

/// Number of SHA-256 output bytes kept in a derived key: 16 bytes, which is 128 bits.
pub const DERIVED_KEY_BYTES: usize = 16;

/// Length of a derived or minted key in characters: 32 lowercase hex digits.
pub const KEY_HEX_LEN: usize = DERIVED_KEY_BYTES * 2;

/// Feeds one length-prefixed field into the hasher: the byte length as an unsigned
/// 64-bit big-endian integer, then the bytes.
pub(crate) fn frame(hasher: &mut Sha256, bytes: &[u8]) {
    let len = u64::try_from(bytes.len()).expect("a slice length fits in 64 bits");
    hasher.update(len.to_be_bytes());
    hasher.update(bytes);
}

/// Lowercase hex of `bytes`.
pub(crate) fn lower_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    out
}

/// Derives a deterministic key from a namespace and an ordered list of parts.
///
/// Use this when the intent has a **natural identity** that the business already defines,
/// such as "charge customer `cus_123` for billing period `2026-09`". Every retry, every
/// process restart and every replica that computes the key for that intent gets the same key,
/// with nothing stored. Don't use it when two identical-looking requests can be two real
/// intents: a user who taps "Pay" twice means to buy twice. Use [`mint`](crate::mint)
/// there (see the crate documentation, "Derive or mint?").
///
/// * `namespace` names the kind of intent, e.g. `"billing.monthly-charge"`. It keeps
///   equal parts from different operations apart.
/// * `parts` is the identity of the intent, **in a fixed order**. Only strings are
///   accepted, so choose a canonical text form for everything else (amounts as decimal
///   integers in minor units, dates as ISO 8601).
///
/// Never include anything that changes between attempts: a timestamp, an attempt number,
/// a random value, a host name.
///
/// # Encoding (a cross-language contract)
///
/// This exact byte layout is what [`derive()`] computes, and the Java helper
/// (`java/IdemKey.java`) and `vectors.json` check it. Changing it would change every key,
/// so any change needs a new tag (`v2`).
///
/// ```text
/// frame(b)  = u64be(len(b)) || b          len(b) = length of b in bytes, as 8 bytes,
///                                           unsigned, big-endian (most significant first)
/// message   = frame("idemkey/derive/v1")  the 17 ASCII bytes of this domain tag
///          || frame(utf8(namespace))
///          || frame(utf8(parts[0])) || frame(utf8(parts[1])) || ... || frame(utf8(parts[n-1]))
/// digest    = SHA-256(message)            32 bytes (FIPS 180-4)
/// key       = lowercase_hex(digest[0..16])  the first 16 bytes (128 bits), written as
///                                           32 characters [0-9a-f], high nibble first
/// ```
///
/// * Strings are UTF-8, exactly as given: no Unicode normalization, no trimming, no case
///   folding. `"café"` written with U+00E9 and with `e` + U+0301 give different keys.
/// * The number of parts is not written. No count is needed: every field is
///   length-prefixed and the message ends after the last field, so each message splits back
///   into exactly one (namespace, parts) pair. `("a:b", "c")` and `("a", "b:c")` differ, and
///   so do `[]`, `[""]` and `["", ""]`, and namespace `"ab"` with no parts versus namespace
///   `"a"` with part `"b"`.
/// * The leading tag keeps derived keys apart from [`Fingerprint`](crate::Fingerprint)s,
///   which use the tag `idemkey/fingerprint/v1` in the same framing.
///
/// Worked example: namespace `billing.monthly-charge`, parts `["cus_123", "2026-09"]`.
/// The message is 85 bytes:
///
/// ```text
/// 00000000 00000011 "idemkey/derive/v1"
/// 00000000 00000016 "billing.monthly-charge"
/// 00000000 00000007 "cus_123"
/// 00000000 00000007 "2026-09"
/// SHA-256 = a1512a14029000c7bafecb1ab9c3c723 bfa7f916cc0c4a8ea49aa5867be79427
/// key     = a1512a14029000c7bafecb1ab9c3c723
/// ```
///
/// ```
/// let key = idemkey::derive("billing.monthly-charge", ["cus_123", "2026-09"]);
/// assert_eq!(key.as_str(), "a1512a14029000c7bafecb1ab9c3c723");
///
/// // Separators inside parts cannot collide: the parts are length-prefixed.
/// assert_ne!(idemkey::derive("ns", ["a:b", "c"]), idemkey::derive("ns", ["a", "b:c"]));
///
/// // An empty list needs a type for its items.
/// let no_parts = idemkey::derive("checkout", std::iter::empty::<&str>());
/// assert_ne!(no_parts, idemkey::derive("checkout", [""]));
/// ```
///
/// This function cannot fail and does not allocate beyond the returned key. The hashing
/// takes time linear in the total input length.
pub fn derive<I>(namespace: &str, parts: I) -> IdempotencyKey
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    let mut builder = KeyBuilder::new(namespace);
    for part in parts {
        builder.push(part);
    }
    builder.finish()
}

/// Builds the same key as [`derive()`], one part at a time.
///
/// Useful when the parts come from different places or need formatting first:
///
/// ```
/// use idemkey::KeyBuilder;
///
/// let customer = "cus_123";
/// let (year, month) = (2026, 9);
/// let key = KeyBuilder::new("billing.monthly-charge")
///     .part(customer)
///     .part(format!("{year:04}-{month:02}"))
///     .finish();
/// assert_eq!(key, idemkey::derive("billing.monthly-charge", ["cus_123", "2026-09"]));
/// ```
#[derive(Clone)]
pub struct KeyBuilder {
    hasher: Sha256,
    parts: usize,
}

impl KeyBuilder {
    /// Starts a key in `namespace`, with no parts yet.
    pub fn new(namespace: &str) -> Self {
        let mut hasher = Sha256::new();
        frame(&mut hasher, DERIVE_TAG);
        frame(&mut hasher, namespace.as_bytes());
        Self { hasher, parts: 0 }
    }

    /// Appends the next part and returns the builder, for chaining.
    #[must_use = "the builder is returned, not modified in place; use `push` in loops"]
    pub fn part(mut self, part: impl AsRef<str>) -> Self {
        self.push(part);
        self
    }

    /// Appends the next part in place, for loops.
    pub fn push(&mut self, part: impl AsRef<str>) -> &mut Self {
        frame(&mut self.hasher, part.as_ref().as_bytes());
        self.parts += 1;
        self
    }

    /// Computes the key: 32 lowercase hex characters.
    pub fn finish(self) -> IdempotencyKey {
        let digest = self.hasher.finalize();
        IdempotencyKey::from_trusted(lower_hex(&digest[..DERIVED_KEY_BYTES]))
    }
}

impl fmt::Debug for KeyBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyBuilder")
            .field("parts", &self.parts)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example_matches_the_documentation() {
        let key = derive("billing.monthly-charge", ["cus_123", "2026-09"]);
        assert_eq!(key.as_str(), "a1512a14029000c7bafecb1ab9c3c723");
        assert_eq!(key.len(), KEY_HEX_LEN);
    }

    #[test]
    fn separators_inside_parts_do_not_collide() {
        assert_ne!(derive("ns", ["a:b", "c"]), derive("ns", ["a", "b:c"]));
        assert_ne!(derive("ns", ["ab", "c"]), derive("ns", ["a", "bc"]));
        assert_ne!(derive("ns", ["a:b:c"]), derive("ns", ["a", "b", "c"]));
    }

    #[test]
    fn namespace_is_framed_separately_from_parts() {
        let none: [&str; 0] = [];
        assert_ne!(derive("a", ["b"]), derive("ab", none));
        assert_ne!(derive("", ["a", "b"]), derive("a", ["b"]));
        assert_ne!(derive("", ["checkout"]), derive("checkout", none));
    }

    #[test]
    fn empty_lists_and_empty_strings_are_distinct() {
        let none: [&str; 0] = [];
        let keys = [derive("x", none), derive("x", [""]), derive("x", ["", ""])];
        assert_ne!(keys[0], keys[1]);
        assert_ne!(keys[1], keys[2]);
        assert_ne!(keys[0], keys[2]);
    }

    #[test]
    fn builder_matches_derive_and_accepts_many_item_types() {
        let owned = vec![String::from("cus_1"), String::from("2026-09")];
        let a = derive("ns", &owned);
        let b = derive("ns", owned.iter().map(String::as_str));
        let mut c = KeyBuilder::new("ns");
        for p in &owned {
            c.push(p);
        }
        assert_eq!(a, b);
        assert_eq!(a, c.finish());
    }

    #[test]
    fn hex_is_lowercase_and_complete() {
        assert_eq!(lower_hex(&[0x00, 0x0f, 0xa0, 0xff]), "000fa0ff");
    }
}
