//! Frontends: one per language, each lowering its syntax tree into [`crate::model`].
//! Adding a language means adding a file here, a [`Language`] variant and catalogue entries.

pub mod java;
pub mod kotlin;
pub mod rust;

use crate::model::{FileModel, Language};

/// Parses and lowers one file's text. Never panics on any input (callers still guard
/// against panics, see `check`).
pub fn lower(language: Language, text: &str) -> FileModel {
    match language {
        Language::Rust => rust::lower(text),
        Language::Java => java::lower(text),
        Language::Kotlin => kotlin::lower(text),
    }
}
