//! The validated [`IdempotencyKey`] newtype and its conversions.

use std::borrow::Borrow;
use std::fmt;
use std::str::FromStr;

/// The conventional request header that carries an idempotency key: `Idempotency-Key`.
///
/// Stripe reads this header, and so does the IETF draft
/// `draft-ietf-httpapi-idempotency-key-header`. HTTP field names are case-insensitive.
pub const HEADER_NAME: &str = "Idempotency-Key";

/// An idempotency key that is safe to put on the wire.
///
/// # What is accepted
///
/// * **Length:** [`MIN_LEN`](Self::MIN_LEN) to [`MAX_LEN`](Self::MAX_LEN) characters,
///   that is 1 to 255. Every accepted character is one byte, so this is the byte length as well.
///   The upper bound is Stripe's documented limit: "Idempotency keys are up to 255 characters
///   long" (<https://docs.stripe.com/api/idempotent_requests>). The IETF draft
///   (`draft-ietf-httpapi-idempotency-key-header`) sets no maximum. Some other APIs accept
///   much less, often only a UUID's 36 characters. Keys from [`derive`](fn@crate::derive)
///   and [`mint`](crate::mint) are always 32 characters, so they fit those APIs too.
/// * **Characters:** visible ASCII only, bytes `0x21..=0x7E`. That excludes spaces, tabs,
///   control characters and anything outside ASCII. Any such key is a valid HTTP field value
///   as it stands, and Stripe's keys and UUIDs both fit.
///
/// Values are compared exactly: byte for byte, case-sensitively, with no trimming.
///
/// # Where keys come from
///
/// Use [`derive`](fn@crate::derive) when the intent has a natural identity, such as a customer
/// plus a billing period. Use [`mint`](crate::mint) when it doesn't (a user pressing "Pay").
/// Use [`IdempotencyKey::new`] or [`str::parse`] to accept a key that you already hold,
/// for example one loaded from your database or read from a request header on a server.
///
/// ```
/// use idemkey::IdempotencyKey;
///
/// let key: IdempotencyKey = "8e03978e-40d5-43e8-bc93-6894a57f9324".parse()?;
/// assert_eq!(key.as_str(), "8e03978e-40d5-43e8-bc93-6894a57f9324");
/// assert_eq!(key.to_string(), key.as_str());
///
/// assert!("".parse::<IdempotencyKey>().is_err());
/// assert!("has space".parse::<IdempotencyKey>().is_err());
/// assert!("x".repeat(256).parse::<IdempotencyKey>().is_err());
/// # Ok::<(), idemkey::InvalidKey>(())
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// The shortest accepted key, in characters.
    pub const MIN_LEN: usize = 1;
    /// The longest accepted key, in characters (bytes, since only ASCII is accepted).
    /// Stripe documents this as its limit.
    pub const MAX_LEN: usize = 255;

    /// Validates `value` and wraps it.
    ///
    /// # Errors
    ///
    /// * [`InvalidKey::Empty`] if `value` is empty.
    /// * [`InvalidKey::InvalidByte`] for the first byte outside `0x21..=0x7E`: a space,
    ///   a control character, or part of a non-ASCII character.
    /// * [`InvalidKey::TooLong`] if `value` is longer than [`MAX_LEN`](Self::MAX_LEN).
    pub fn new(value: impl Into<String>) -> Result<Self, InvalidKey> {
        let value = value.into();
        validate(value.as_bytes())?;
        Ok(Self(value))
    }

    /// Wraps a string that this crate produced and knows to be valid.
    pub(crate) fn from_trusted(value: String) -> Self {
        debug_assert!(validate(value.as_bytes()).is_ok(), "{value:?}");
        Self(value)
    }

    /// The key as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Unwraps the key into its `String`.
    pub fn into_string(self) -> String {
        self.0
    }

    /// Length of the key in characters, which is also its length in bytes. Always between
    /// [`MIN_LEN`](Self::MIN_LEN) and [`MAX_LEN`](Self::MAX_LEN).
    #[allow(clippy::len_without_is_empty)] // a key is never empty
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The key written as a Structured Field String (RFC 8941), with double quotes around it
    /// and a backslash before any `"` or `\`.
    ///
    /// The IETF draft `draft-ietf-httpapi-idempotency-key-header` defines the header value as
    /// an sf-string (`Idempotency-Key: "abc"`). Stripe takes the bare value, which is what
    /// [`as_str`](Self::as_str), `Display` and the `http` conversion produce. Use this form
    /// only for servers that follow the draft.
    ///
    /// ```
    /// let key = idemkey::IdempotencyKey::new("order-42")?;
    /// assert_eq!(key.to_sf_string(), "\"order-42\"");
    /// # Ok::<(), idemkey::InvalidKey>(())
    /// ```
    pub fn to_sf_string(&self) -> String {
        let mut out = String::with_capacity(self.0.len() + 2);
        out.push('"');
        for c in self.0.chars() {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('"');
        out
    }
}

fn validate(bytes: &[u8]) -> Result<(), InvalidKey> {
    if bytes.is_empty() {
        return Err(InvalidKey::Empty);
    }
    if let Some(index) = bytes.iter().position(|b| !(0x21..=0x7e).contains(b)) {
        return Err(InvalidKey::InvalidByte {
            index,
            byte: bytes[index],
        });
    }
    if bytes.len() > IdempotencyKey::MAX_LEN {
        return Err(InvalidKey::TooLong { len: bytes.len() });
    }
    Ok(())
}

/// Why a string was refused as an [`IdempotencyKey`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InvalidKey {
    /// The value was empty.
    Empty,
    /// The value had more than [`IdempotencyKey::MAX_LEN`] (255) characters.
    TooLong {
        /// Length of the refused value, in bytes.
        len: usize,
    },
    /// The value had a byte outside visible ASCII (`0x21..=0x7E`).
    InvalidByte {
        /// Offset of the first bad byte, counted in bytes from the start.
        index: usize,
        /// The bad byte itself. For a non-ASCII character this is its first UTF-8 byte.
        byte: u8,
    },
}

impl fmt::Display for InvalidKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("idempotency key is empty"),
            Self::TooLong { len } => write!(
                f,
                "idempotency key is {len} characters long; the limit is {}",
                IdempotencyKey::MAX_LEN
            ),
            Self::InvalidByte { index, byte } => write!(
                f,
                "idempotency key has byte 0x{byte:02X} at offset {index}; \
                 only visible ASCII (0x21..=0x7E) is allowed"
            ),
        }
    }
}

impl std::error::Error for InvalidKey {}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("IdempotencyKey").field(&self.0).finish()
    }
}

impl AsRef<str> for IdempotencyKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for IdempotencyKey {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl FromStr for IdempotencyKey {
    type Err = InvalidKey;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

impl TryFrom<String> for IdempotencyKey {
    type Error = InvalidKey;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl TryFrom<&str> for IdempotencyKey {
    type Error = InvalidKey;

    fn try_from(value: &str) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<IdempotencyKey> for String {
    fn from(key: IdempotencyKey) -> Self {
        key.0
    }
}

#[cfg(feature = "http")]
mod http_impls {
    use super::{IdempotencyKey, InvalidKey, validate};
    use http::HeaderValue;

    /// Every key is a valid header value, so this never fails. Because `From` is
    /// implemented, `HeaderValue::try_from(&key)` also works, with error type
    /// [`Infallible`](std::convert::Infallible).
    impl From<&IdempotencyKey> for HeaderValue {
        fn from(key: &IdempotencyKey) -> Self {
            HeaderValue::from_str(key.as_str())
                .expect("visible ASCII is always a valid header value")
        }
    }

    /// See the `From<&IdempotencyKey>` impl.
    impl From<IdempotencyKey> for HeaderValue {
        fn from(key: IdempotencyKey) -> Self {
            HeaderValue::from(&key)
        }
    }

    /// Reads a key from a received header value, for servers. The value is taken as it is:
    /// sf-string quotes are not removed.
    ///
    /// # Errors
    ///
    /// The same as [`IdempotencyKey::new`]. Header bytes that are not visible ASCII give
    /// [`InvalidKey::InvalidByte`].
    impl TryFrom<&HeaderValue> for IdempotencyKey {
        type Error = InvalidKey;

        fn try_from(value: &HeaderValue) -> Result<Self, Self::Error> {
            validate(value.as_bytes())?;
            let text = std::str::from_utf8(value.as_bytes())
                .expect("visible ASCII is valid UTF-8")
                .to_owned();
            Ok(IdempotencyKey(text))
        }
    }

    impl IdempotencyKey {
        /// The `Idempotency-Key` header name, ready for `http`'s header maps.
        pub fn header_name() -> http::HeaderName {
            http::HeaderName::from_static("idempotency-key")
        }
    }
}

#[cfg(feature = "serde")]
mod serde_impls {
    use super::IdempotencyKey;
    use serde::de::{self, Deserialize, Deserializer, Visitor};
    use serde::ser::{Serialize, Serializer};
    use std::fmt;

    /// Serialized as a plain string.
    impl Serialize for IdempotencyKey {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_str(self.as_str())
        }
    }

    /// Deserialized from a string and validated as [`IdempotencyKey::new`] does, so a stored
    /// value that is not a valid key fails with the deserializer's custom error.
    impl<'de> Deserialize<'de> for IdempotencyKey {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct KeyVisitor;

            impl Visitor<'_> for KeyVisitor {
                type Value = IdempotencyKey;

                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("an idempotency key: 1 to 255 visible ASCII characters")
                }

                fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                    IdempotencyKey::new(v).map_err(E::custom)
                }

                fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                    IdempotencyKey::new(v).map_err(E::custom)
                }
            }

            deserializer.deserialize_str(KeyVisitor)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_boundaries() {
        assert!(IdempotencyKey::new("!").is_ok());
        assert!(IdempotencyKey::new("~".repeat(255)).is_ok());
        assert_eq!(
            IdempotencyKey::new("a".repeat(256)),
            Err(InvalidKey::TooLong { len: 256 })
        );
    }

    #[test]
    fn rejects_bad_bytes_with_offsets() {
        assert_eq!(IdempotencyKey::new(""), Err(InvalidKey::Empty));
        assert_eq!(
            IdempotencyKey::new("ab c"),
            Err(InvalidKey::InvalidByte {
                index: 2,
                byte: b' '
            })
        );
        assert_eq!(
            IdempotencyKey::new("caf\u{e9}"),
            Err(InvalidKey::InvalidByte {
                index: 3,
                byte: 0xC3
            })
        );
        assert_eq!(
            IdempotencyKey::new("a\r\nInjected: 1"),
            Err(InvalidKey::InvalidByte {
                index: 1,
                byte: b'\r'
            })
        );
        assert!(IdempotencyKey::new("tab\t").is_err());
        assert!(IdempotencyKey::new("del\x7f").is_err());
    }

    #[test]
    fn sf_string_escapes_quote_and_backslash() {
        let key = IdempotencyKey::new(r#"a"b\c"#).unwrap();
        assert_eq!(key.to_sf_string(), r#""a\"b\\c""#);
    }

    #[test]
    fn error_messages_name_the_problem() {
        let err = IdempotencyKey::new("a b").unwrap_err().to_string();
        assert!(err.contains("0x20") && err.contains("offset 1"), "{err}");
        let err = IdempotencyKey::new("a".repeat(300))
            .unwrap_err()
            .to_string();
        assert!(err.contains("300") && err.contains("255"), "{err}");
    }
}
