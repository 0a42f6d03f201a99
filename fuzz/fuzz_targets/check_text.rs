//! The whole single-file analysis (`check::check_text`) on arbitrary text, in the language
//! the first byte picks, plus the prefilter's soundness on one file: a file with a finding
//! must contain a source word and a sink word, or mention idemlint (a suppression).
#![no_main]

use idemlint::catalogue::Catalogue;
use idemlint::model::Language;
use idemlint::prefilter::Prefilter;
use libfuzzer_sys::fuzz_target;

fn catalogue() -> &'static (Catalogue, Prefilter) {
    static CAT: std::sync::OnceLock<(Catalogue, Prefilter)> = std::sync::OnceLock::new();
    CAT.get_or_init(|| {
        let c = Catalogue::builtin();
        let p = Prefilter::new(&c);
        (c, p)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let (path, lang) = match first % 3 {
        0 => ("fuzz.rs", Language::Rust),
        1 => ("Fuzz.java", Language::Java),
        _ => ("Fuzz.kt", Language::Kotlin),
    };
    let text = text.to_string();
    idemlint_fuzz_support::on_big_stack(move || {
        let (cat, prefilter) = catalogue();
        let (findings, errors) =
            idemlint::check::check_text(path, &text, cat).expect("supported extension");
        for e in &errors {
            assert!(
                !e.message.contains("internal error"),
                "panic inside the analysis: {}",
                e.message
            );
        }
        if !findings.is_empty() {
            let words = prefilter.scan(
                lang,
                &text,
                &mut idemlint::prefilter::ScanScratch::default(),
            );
            assert!(
                (words.sink && words.source) || words.suppression,
                "the prefilter would skip a file with findings: {words:?} {findings:#?}"
            );
        }
        for f in &findings {
            assert!(f.span.start <= f.span.end && f.span.end <= text.len());
        }
    });
});
