//! `serde` support (feature `serde`): keys are validated when deserialized.
#![cfg(feature = "serde")]

use idemkey::{Fingerprint, IdempotencyKey};

#[test]
fn key_round_trips_as_a_string() {
    let key = idemkey::derive("billing.monthly-charge", ["cus_123", "2026-09"]);
    let json = serde_json::to_string(&key).unwrap();
    assert_eq!(json, "\"a1512a14029000c7bafecb1ab9c3c723\"");
    assert_eq!(serde_json::from_str::<IdempotencyKey>(&json).unwrap(), key);
}

#[test]
fn invalid_stored_keys_are_refused() {
    for bad in ["\"\"", "\"has space\"", "42", "null"] {
        assert!(
            serde_json::from_str::<IdempotencyKey>(bad).is_err(),
            "{bad}"
        );
    }
    let long = format!("\"{}\"", "k".repeat(256));
    let err = serde_json::from_str::<IdempotencyKey>(&long).unwrap_err();
    assert!(err.to_string().contains("255"), "{err}");
}

#[test]
fn fingerprint_round_trips_as_hex() {
    let fp = Fingerprint::of(["2500", "usd", "cus_123", "cart_9"]);
    let json = serde_json::to_string(&fp).unwrap();
    assert_eq!(
        json,
        "\"11ac755dc986b747f9a3ec3f2fc594f975f0498fc6c24902bcf5dc9de5f8f567\""
    );
    assert_eq!(serde_json::from_str::<Fingerprint>(&json).unwrap(), fp);
    assert!(serde_json::from_str::<Fingerprint>("\"abc\"").is_err());
}
