//! Frontends: one per language, each lowering its syntax tree into [`crate::model`].
//! Adding a language means adding a file here, a [`Language`] variant and catalogue entries.

pub mod java;
pub mod kotlin;
pub mod rust;

use crate::model::{FileModel, Language};

/// Parses and lowers one file's text. Never panics on any input (callers still guard
/// against panics, see `check`).
pub fn lower(language: Language, text: &str) -> FileModel {
    let mut m = match language {
        Language::Rust => rust::lower(text),
        Language::Java => java::lower(text),
        Language::Kotlin => kotlin::lower(text),
    };
    if language == Language::Kotlin {
        m.aliases.extend(kotlin_import_aliases(text));
    }
    normalize_identifiers(&mut m);
    m
}

/// `import a.b.C as D` lines of a Kotlin file: `(D, C)`.
fn kotlin_import_aliases(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("import ") else {
            continue;
        };
        let Some((path, alias)) = rest.split_once(" as ") else {
            continue;
        };
        let original = path
            .trim()
            .rsplit('.')
            .next()
            .unwrap_or("")
            .replace('`', "");
        let alias = alias.trim().trim_end_matches(';').trim().replace('`', "");
        if !original.is_empty() && !alias.is_empty() && alias.chars().all(is_ident_char) {
            out.push((alias, original));
        }
    }
    out
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// One spelling per identifier, whatever the source wrote: Kotlin backticks
/// (`` `randomUUID` ``) and Rust raw identifiers (`r#new_v4`) are removed, and import
/// aliases are replaced by the name they stand for in callees, Rust paths and the first
/// segment of receivers, so the catalogue and the index compare names by meaning. Every
/// resulting name is still a token of the text (the original of an alias appears in its
/// import), which the prefilter relies on.
fn normalize_identifiers(m: &mut FileModel) {
    fn clean(s: &mut String) {
        if s.contains('`') {
            s.retain(|c| c != '`');
        }
        if s.contains("r#") {
            *s = strip_raw(s);
        }
    }
    fn strip_raw(s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let at_start = i == 0 || !is_ident_char(s[..i].chars().next_back().unwrap_or(' '));
            if at_start && b[i] == b'r' && b.get(i + 1) == Some(&b'#') {
                i += 2;
                continue;
            }
            let c = s[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
        out
    }
    let alias = |name: &str| -> Option<String> {
        m.aliases
            .iter()
            .find(|(a, _)| a == name)
            .map(|(_, o)| o.clone())
    };
    let mut calls = std::mem::take(&mut m.calls);
    for c in &mut calls {
        clean(&mut c.callee);
        for p in &mut c.path {
            clean(p);
        }
        if let Some(r) = &mut c.receiver {
            clean(r);
        }
        if !m.aliases.is_empty() {
            if let Some(o) = alias(&c.callee) {
                c.callee = o;
            }
            if let Some(first) = c.path.first_mut()
                && let Some(o) = alias(first)
            {
                *first = o;
            }
            if let Some(r) = &mut c.receiver {
                let end = r.find(|ch: char| !is_ident_char(ch)).unwrap_or(r.len());
                if let Some(o) = alias(&r[..end]) {
                    r.replace_range(..end, &o);
                }
            }
        }
    }
    m.calls = calls;
    for b in &mut m.bindings {
        clean(&mut b.name);
    }
    for a in &mut m.assigns {
        clean(&mut a.name);
    }
    for f in &mut m.field_inits {
        clean(&mut f.name);
    }
    for v in &mut m.values {
        for a in &mut v.atoms {
            if let crate::model::Atom::Name { name, .. } = a {
                clean(name);
            }
        }
        if let Some(i) = &mut v.ident {
            clean(i);
        }
    }
    for s in &mut m.scopes {
        match &mut s.kind {
            crate::model::ScopeKind::Function(f) => {
                clean(&mut f.name);
                for p in &mut f.params {
                    clean(&mut p.name);
                }
            }
            crate::model::ScopeKind::Lambda(l) => {
                for p in &mut l.params {
                    clean(&mut p.name);
                }
            }
            _ => {}
        }
    }
}
