//! Keys are valid HTTP header values, with or without the `http` feature.

use idemkey::{IdempotencyKey, KeyBuilder};

/// RFC 9110 field-value with no surrounding whitespace: VCHAR (0x21-0x7E), plus SP/HTAB
/// between visible characters, plus obs-text. We accept the strict subset: all bytes VCHAR.
fn is_strict_field_value(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

fn sample_keys() -> Vec<IdempotencyKey> {
    let mut keys = vec![
        idemkey::derive("billing.monthly-charge", ["cus_123", "2026-09"]),
        idemkey::derive("", std::iter::empty::<&str>()),
        KeyBuilder::new("unicode \u{1F4B3}").part("\r\n").finish(),
        idemkey::mint().unwrap(),
        IdempotencyKey::new("8e03978e-40d5-43e8-bc93-6894a57f9324").unwrap(),
        IdempotencyKey::new("~".repeat(IdempotencyKey::MAX_LEN)).unwrap(),
    ];
    // Every accepted character at least once.
    let all: String = (0x21u8..=0x7e).map(char::from).collect();
    keys.push(IdempotencyKey::new(all).unwrap());
    keys
}

#[test]
fn every_key_is_a_strict_field_value() {
    for key in sample_keys() {
        assert!(is_strict_field_value(key.as_str()), "{key:?}");
        assert!(key.len() <= 255);
    }
}

#[test]
fn header_injection_is_impossible() {
    for bad in ["k\r\nX-Evil: 1", "k\n", "k\0", " k", "k ", "k\u{85}"] {
        assert!(IdempotencyKey::new(bad).is_err(), "{bad:?}");
    }
}

#[cfg(feature = "http")]
mod with_http {
    use super::sample_keys;
    use http::{HeaderMap, HeaderValue};
    use idemkey::{IdempotencyKey, InvalidKey};

    #[test]
    fn converts_to_header_value_and_back() {
        for key in sample_keys() {
            // `TryFrom` is the documented entry point; it comes from the `From` impl.
            #[allow(clippy::unnecessary_fallible_conversions)]
            let value = HeaderValue::try_from(&key).expect("infallible");
            assert_eq!(value.to_str().unwrap(), key.as_str());
            assert_eq!(value, HeaderValue::from(key.clone()));
            assert_eq!(IdempotencyKey::try_from(&value).unwrap(), key);

            let mut headers = HeaderMap::new();
            headers.insert(IdempotencyKey::header_name(), value);
            let read = headers.get(idemkey::HEADER_NAME).unwrap();
            assert_eq!(read.as_bytes(), key.as_str().as_bytes());
        }
    }

    #[test]
    fn rejects_header_values_that_are_not_keys() {
        let spaced = HeaderValue::from_static("a b");
        assert_eq!(
            IdempotencyKey::try_from(&spaced),
            Err(InvalidKey::InvalidByte {
                index: 1,
                byte: b' '
            })
        );
        let obs_text = HeaderValue::from_bytes(b"caf\xe9").unwrap();
        assert_eq!(
            IdempotencyKey::try_from(&obs_text),
            Err(InvalidKey::InvalidByte {
                index: 3,
                byte: 0xe9
            })
        );
        let long = HeaderValue::from_str(&"k".repeat(256)).unwrap();
        assert_eq!(
            IdempotencyKey::try_from(&long),
            Err(InvalidKey::TooLong { len: 256 })
        );
    }
}
