//! Lowering arbitrary text with the Rust frontend must not panic, overflow the stack or
//! produce spans outside the text.
#![no_main]

use idemlint::model::Language;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        idemlint_fuzz_support::lower_checked(Language::Rust, text);
    }
});
