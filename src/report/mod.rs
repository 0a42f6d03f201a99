//! Output formats. Every module renders the same [`crate::check::Report`].

pub mod human;
pub mod json;

/// The formats `--format` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// miette's graphical report (colour only on a terminal and never with `NO_COLOR`).
    Human,
    /// One JSON object: `{"version": 1, "findings": [...], "errors": [...]}`.
    Json,
}
