//! Shared helpers of the fuzz targets.

use idemlint::model::Language;

/// Runs `f` on a thread with the analysis stack size (`check::STACK_SIZE`), as the
/// pipeline does, and re-raises its panic so libFuzzer records the crash.
pub fn on_big_stack(f: impl FnOnce() + Send + 'static) {
    let handle = std::thread::Builder::new()
        .stack_size(idemlint::check::STACK_SIZE)
        .spawn(f)
        .expect("spawn");
    if let Err(p) = handle.join() {
        std::panic::resume_unwind(p);
    }
}

/// Lowers `text` and checks the model's invariants: spans inside the text, on char
/// boundaries, parents before children.
pub fn lower_checked(language: Language, text: &str) {
    let text = text.to_string();
    on_big_stack(move || {
        let m = idemlint::lang::lower(language, &text);
        let ok = |s: idemlint::model::Span| {
            s.start <= s.end
                && s.end <= text.len()
                && text.is_char_boundary(s.start)
                && text.is_char_boundary(s.end)
        };
        for (i, s) in m.scopes.iter().enumerate() {
            assert!(ok(s.span), "scope {i} span {:?}", s.span);
            if i > 0 {
                assert!(s.parent.is_some_and(|p| p < i), "scope {i} parent");
            }
        }
        for c in &m.calls {
            assert!(ok(c.span) && ok(c.name_span), "call {} spans", c.callee);
            assert!(c.scope < m.scopes.len());
        }
        for v in &m.values {
            assert!(ok(v.span), "value span {:?}", v.span);
        }
        for e in &m.errors {
            assert!(e.span.start <= text.len(), "error span {:?}", e.span);
        }
    });
}
