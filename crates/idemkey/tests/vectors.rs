//! The cross-language test vectors in `vectors.json` (also checked by `java/check.sh`).

use idemkey::{Fingerprint, KeyBuilder, derive};
use serde_json::Value;
use std::collections::HashMap;

fn vectors() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/vectors.json");
    let text = std::fs::read_to_string(path).expect("read vectors.json");
    serde_json::from_str(&text).expect("vectors.json is valid JSON")
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("parts is an array")
        .iter()
        .map(|p| p.as_str().expect("each part is a string").to_owned())
        .collect()
}

#[test]
fn derive_vectors_match() {
    let all = vectors();
    let cases = all["derive"].as_array().expect("derive is an array");
    assert!(cases.len() >= 20, "expected the full vector set");
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let namespace = case["namespace"].as_str().unwrap();
        let parts = strings(&case["parts"]);
        let expected = case["key"].as_str().unwrap();

        let key = derive(namespace, &parts);
        assert_eq!(key.as_str(), expected, "vector {name:?}");

        let mut builder = KeyBuilder::new(namespace);
        for part in &parts {
            builder.push(part);
        }
        assert_eq!(builder.finish(), key, "builder, vector {name:?}");
    }
}

#[test]
fn fingerprint_vectors_match() {
    let all = vectors();
    for case in all["fingerprint"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let fp = Fingerprint::of(strings(&case["parts"]));
        assert_eq!(
            fp.to_string(),
            case["fingerprint"].as_str().unwrap(),
            "vector {name:?}"
        );
    }
}

#[test]
fn vectors_cover_the_required_edge_cases() {
    let all = vectors();
    let cases = all["derive"].as_array().unwrap();
    let by_parts: HashMap<(String, Vec<String>), String> = cases
        .iter()
        .map(|c| {
            (
                (
                    c["namespace"].as_str().unwrap().to_owned(),
                    strings(&c["parts"]),
                ),
                c["key"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let get = |ns: &str, parts: &[&str]| -> String {
        let input = (ns.to_owned(), parts.iter().map(|p| p.to_string()).collect());
        by_parts
            .get(&input)
            .unwrap_or_else(|| panic!("missing vector {input:?}"))
            .clone()
    };

    // The ambiguity pair is present and its keys differ.
    assert_ne!(
        get("ambiguity", &["a:b", "c"]),
        get("ambiguity", &["a", "b:c"])
    );
    // Empty parts list, an empty string, two empty strings.
    let empties = [
        get("checkout", &[]),
        get("checkout", &[""]),
        get("checkout", &["", ""]),
    ];
    assert_ne!(empties[0], empties[1]);
    assert_ne!(empties[1], empties[2]);
    // Unicode: NFC and NFD differ, astral characters work.
    assert_ne!(
        get("unicode", &["caf\u{e9}"]),
        get("unicode", &["cafe\u{301}"])
    );
    get("unicode", &["\u{1F4B3}"]);
    // A part longer than 255 bytes, so the length prefix uses two bytes.
    assert!(
        cases
            .iter()
            .any(|c| strings(&c["parts"]).iter().any(|p| p.len() > 255))
    );

    // Different inputs never share a key across the whole set.
    let mut seen: HashMap<&String, &(String, Vec<String>)> = HashMap::new();
    for (input, key) in &by_parts {
        if let Some(other) = seen.insert(key, input) {
            panic!("{input:?} and {other:?} share key {key}");
        }
    }
}
