//! Output formats. Every module renders the same [`crate::check::Report`]; [`render`] picks
//! one and says what goes to standard output (or `--output FILE`) and what to standard
//! error.

pub mod cargo_json;
pub mod checkstyle;
pub mod github;
pub mod gitlab;
pub mod human;
pub mod json;
pub mod junit;
pub mod merge;
pub mod sarif;
pub mod short;
mod xml;

use std::path::PathBuf;

use crate::check::Report;

/// The formats `--format` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// miette's graphical report (colour only on a terminal and never with `NO_COLOR`).
    Human,
    /// One JSON object: `{"version": 1, "findings": [...], "errors": [...]}`.
    Json,
    /// A SARIF 2.1.0 log for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// GitHub Actions workflow commands (`::error file=…,line=…::…`): annotations.
    Github,
    /// One `path:line:col: severity[rule-id] message` line per finding.
    Short,
    /// A GitLab Code Quality report (JSON array of issues).
    Gitlab,
    /// A JUnit XML report: one test case per rule per file with findings.
    Junit,
    /// A Checkstyle XML report (Jenkins warnings-ng, SonarQube, reviewdog).
    Checkstyle,
    /// cargo's JSON message stream (`compiler-message` lines), for rust-analyzer.
    Cargo,
}

/// Each finding's unique fingerprint for SARIF and GitLab: its fingerprint, with `/N`
/// appended to the N-th (N ≥ 2) finding sharing it, in order.
pub fn unique_fingerprints(findings: &[crate::finding::Finding]) -> Vec<String> {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    findings
        .iter()
        .map(|f| {
            let n = seen.entry(f.fingerprint.as_str()).or_insert(0);
            *n += 1;
            if *n == 1 {
                f.fingerprint.clone()
            } else {
                format!("{}/{n}", f.fingerprint)
            }
        })
        .collect()
}

/// How to render.
#[derive(Clone, Debug, Default)]
pub struct RenderOptions {
    /// Colour in the human format (only when writing to a terminal).
    pub colour: bool,
    /// Only findings: no summary line, no file-problem lines in the human, short and
    /// github formats (JSON and SARIF always keep file errors: they are data there).
    pub quiet: bool,
    /// The directory SARIF's `%SRCROOT%` stands for (absolute; the current directory).
    pub srcroot: Option<PathBuf>,
    /// SARIF's category (`runAutomationDetails.id` is `CATEGORY/`; `None`: `idemlint`);
    /// see [`sarif::category`].
    pub sarif_category: Option<String>,
    /// The run's exit code when known: SARIF records it (`invocations[0].exitCode`) and
    /// sets `executionSuccessful` from it.
    pub exit_code: Option<i32>,
    /// The checked paths and the current directory, absolute: `--format cargo` looks for
    /// no `Cargo.toml` above them outside a git repository.
    pub roots: Vec<PathBuf>,
}

/// A rendered report: `report` is the format's output proper (standard output, or the
/// `--output` file); `stderr` is the human-facing rest (the short and github formats'
/// file problems and summary), empty for the other formats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rendered {
    pub report: String,
    pub stderr: String,
}

/// Renders `report` in `format`.
pub fn render(report: &Report, format: Format, opts: &RenderOptions) -> Rendered {
    let tail = |r: &Report| {
        if opts.quiet {
            String::new()
        } else {
            human::render_errors(r) + &human::summary(r)
        }
    };
    match format {
        Format::Human if opts.quiet => Rendered {
            report: human::render_findings(report, opts.colour),
            stderr: String::new(),
        },
        Format::Human => Rendered {
            report: human::render(report, opts.colour),
            stderr: String::new(),
        },
        Format::Json => Rendered {
            report: json::render(report),
            stderr: String::new(),
        },
        Format::Sarif => Rendered {
            report: sarif::render(
                report,
                opts.srcroot.as_deref(),
                opts.sarif_category.as_deref(),
                opts.exit_code,
            ),
            stderr: String::new(),
        },
        Format::Github => Rendered {
            report: github::render(report, opts.quiet),
            stderr: if opts.quiet {
                String::new()
            } else {
                human::summary(report)
            },
        },
        Format::Short => Rendered {
            report: short::render(report),
            stderr: tail(report),
        },
        Format::Gitlab => Rendered {
            report: gitlab::render(report),
            stderr: tail(report),
        },
        Format::Junit => Rendered {
            report: junit::render(report),
            stderr: String::new(),
        },
        Format::Checkstyle => Rendered {
            report: checkstyle::render(report),
            stderr: String::new(),
        },
        Format::Cargo => Rendered {
            report: cargo_json::render(report, &opts.roots),
            stderr: String::new(),
        },
    }
}
