//! The command line shared by `idemlint` and `cargo idemlint`.
//!
//! Exit codes: 0 no finding, 1 at least one finding, 2 tool error (bad arguments, a
//! missing path, an unknown rule id). Files that cannot be read or parsed are reported
//! and do not change the exit code.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};

use crate::catalogue::Catalogue;
use crate::check::{Options, run};
use crate::report::{Format, RenderOptions};
use crate::rules::RULES;

/// Exit code: no finding.
pub const EXIT_CLEAN: i32 = 0;
/// Exit code: at least one finding.
pub const EXIT_FINDINGS: i32 = 1;
/// Exit code: the tool could not do its job.
pub const EXIT_TOOL_ERROR: i32 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "idemlint",
    version,
    about = "Finds idempotency keys that are generated again on every retry attempt",
    after_help = "Exit codes: 0 no finding, 1 findings, 2 tool error."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Analyse files and directories (default: `.`; for `cargo idemlint`, the workspace root).
    Check {
        /// Files or directories; directories are walked honouring .gitignore.
        paths: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
        /// Write the report to FILE instead of standard output (`-`: standard output).
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
        /// Exit 0 even when there are findings (tool errors still exit 2).
        #[arg(long)]
        exit_zero: bool,
        /// Print only the findings: no summary, no file-problem lines (JSON and SARIF keep
        /// file errors).
        #[arg(long, short = 'q')]
        quiet: bool,
        /// Worker threads (default: one per core).
        #[arg(long, short = 'j')]
        jobs: Option<usize>,
        /// Only read and parse the files (measures the parsing floor); reports parse errors.
        #[arg(long)]
        parse_only: bool,
        /// Apply safe fixes in place, then report what remains.
        #[arg(long)]
        fix: bool,
        /// With --fix or --diff: also apply fixes marked unsafe.
        #[arg(long)]
        unsafe_fixes: bool,
        /// Print the fixes as a unified diff and change nothing (exit 1 when there is a diff).
        #[arg(long, conflicts_with = "fix")]
        diff: bool,
    },
    /// List every rule: id, default severity and summary.
    Rules,
    /// Print a rule's documentation.
    Explain {
        /// A rule id, e.g. key-in-retry-scope.
        rule: String,
    },
}

const SUBCOMMANDS: &[&str] = &[
    "check",
    "rules",
    "explain",
    "help",
    "-h",
    "--help",
    "-V",
    "--version",
];

/// Normalises argv: drops cargo's `idemlint` argument for `cargo idemlint`, and makes
/// `check` the default subcommand (`idemlint src/` = `idemlint check src/`).
fn normalise(mut args: Vec<OsString>, cargo: bool) -> (Vec<OsString>, bool) {
    if cargo && args.get(1).is_some_and(|a| a == "idemlint") {
        args.remove(1);
    }
    let mut defaulted_check = false;
    let first = args.get(1).and_then(|a| a.to_str()).map(str::to_owned);
    match first {
        Some(f) if SUBCOMMANDS.contains(&f.as_str()) => {}
        _ => {
            args.insert(1.min(args.len()), OsString::from("check"));
            defaulted_check = true;
        }
    }
    if args
        .first()
        .is_some_and(|a| a.to_string_lossy().contains("cargo-idemlint"))
    {
        args[0] = OsString::from("cargo idemlint");
    }
    (args, defaulted_check)
}

/// The cargo workspace root of the current directory, from `cargo locate-project`.
fn cargo_workspace_root() -> Option<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["locate-project", "--workspace", "--message-format", "plain"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let manifest = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    let root = manifest.parent()?.to_path_buf();
    // Show paths relative to the current directory when the root is an ancestor of it
    // (`../src/lib.rs` from a subdirectory), as cargo's own diagnostics do.
    let cwd = std::env::current_dir().ok()?;
    match cwd.strip_prefix(&root) {
        Ok(rest) if rest.as_os_str().is_empty() => Some(PathBuf::from(".")),
        Ok(rest) => Some(rest.components().map(|_| "..").collect::<PathBuf>()),
        _ => Some(root),
    }
}

/// Runs the CLI with `args` (including argv\[0\]); returns the process exit code.
pub fn main_with_args(args: Vec<OsString>, cargo: bool) -> i32 {
    let (args, _) = normalise(args, cargo);
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                EXIT_TOOL_ERROR
            } else {
                EXIT_CLEAN
            };
            let _ = e.print();
            return code;
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match cli.command {
        Command::Rules => {
            let _ = writeln!(out, "{:<24} {:<8} summary", "rule", "severity");
            for r in RULES {
                let _ = writeln!(out, "{:<24} {:<8} {}", r.id, r.severity.name(), r.summary());
            }
            EXIT_CLEAN
        }
        Command::Explain { rule } => match crate::rules::rule(&rule) {
            Some(r) => {
                let _ = out.write_all(r.doc.as_bytes());
                EXIT_CLEAN
            }
            None => {
                let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
                eprintln!(
                    "error: unknown rule `{rule}`{}\n  known rules: {}",
                    did_you_mean(&rule, &ids)
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default(),
                    ids.join(", ")
                );
                EXIT_TOOL_ERROR
            }
        },
        Command::Check {
            paths,
            format,
            jobs,
            parse_only,
            fix,
            unsafe_fixes,
            diff,
            output,
            exit_zero,
            quiet,
        } => {
            let findings_exit = if exit_zero { EXIT_CLEAN } else { EXIT_FINDINGS };
            let paths = if paths.is_empty() && cargo {
                vec![cargo_workspace_root().unwrap_or_else(|| {
                    eprintln!(
                        "cargo idemlint: could not locate the cargo workspace (`cargo locate-project --workspace` failed); checking the current directory"
                    );
                    PathBuf::from(".")
                })]
            } else {
                paths
            };
            let opts = Options {
                paths,
                jobs,
                parse_only,
            };
            let catalogue = Catalogue::builtin();
            let mut report = match run(&opts, &catalogue) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_TOOL_ERROR;
                }
            };
            if fix || diff {
                let mode = if unsafe_fixes {
                    crate::fix::apply::Mode::All
                } else {
                    crate::fix::apply::Mode::Safe
                };
                let (fixed, fix_errors) = crate::check::compute_fixes(&report, mode, &catalogue);
                for e in &fix_errors {
                    eprintln!("error: {}: {}", e.path, e.message);
                }
                if diff {
                    let d: String = fixed
                        .iter()
                        .map(|f| crate::fix::apply::unified_diff(&f.display, &f.old, &f.new))
                        .collect();
                    if let Err(e) = write_report(output.as_deref(), &d, &mut out) {
                        eprintln!("error: {e}");
                        return EXIT_TOOL_ERROR;
                    }
                    let unfixable = report
                        .findings
                        .iter()
                        .filter(|f| !f.fix.as_ref().is_some_and(|x| mode.allows(x.applicability)))
                        .count();
                    if !quiet {
                        eprintln!(
                            "idemlint: {} file{} would be changed; {unfixable} finding{} without an applicable fix",
                            fixed.len(),
                            if fixed.len() == 1 { "" } else { "s" },
                            if unfixable == 1 { "" } else { "s" },
                        );
                    }
                    return if fixed.is_empty() && fix_errors.is_empty() {
                        EXIT_CLEAN
                    } else if fixed.is_empty() {
                        EXIT_TOOL_ERROR
                    } else {
                        findings_exit
                    };
                }
                if let Err(e) = crate::check::write_fixed(&fixed) {
                    eprintln!("error: {e}");
                    return EXIT_TOOL_ERROR;
                }
                let n: usize = fixed.iter().map(|f| f.rules.len()).sum();
                if !quiet {
                    eprintln!(
                        "idemlint: applied {n} fix{} in {} file{}",
                        if n == 1 { "" } else { "es" },
                        fixed.len(),
                        if fixed.len() == 1 { "" } else { "s" }
                    );
                }
                report = match run(&opts, &catalogue) {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return EXIT_TOOL_ERROR;
                    }
                };
                report.errors.extend(fix_errors);
            }
            let to_stdout = output.as_deref().is_none_or(|p| p == Path::new("-"));
            let render_opts = RenderOptions {
                colour: to_stdout && crate::report::human::use_colour(),
                quiet,
                srcroot: std::env::current_dir().ok(),
            };
            let rendered = crate::report::render(&report, format, &render_opts);
            if let Err(e) = write_report(output.as_deref(), &rendered.report, &mut out) {
                eprintln!("error: {e}");
                return EXIT_TOOL_ERROR;
            }
            eprint!("{}", rendered.stderr);
            if report.findings.is_empty() {
                EXIT_CLEAN
            } else {
                findings_exit
            }
        }
    }
}

/// Writes a rendered report to `output` (created or truncated, parent directories created)
/// or, when `output` is `None` or `-`, to `stdout`. The error names the file.
fn write_report(output: Option<&Path>, text: &str, stdout: &mut dyn Write) -> Result<(), String> {
    match output {
        Some(path) if path != Path::new("-") => {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| {
                    format!(
                        "could not write the report to `{}`: could not create `{}`: {e}",
                        path.display(),
                        dir.display()
                    )
                })?;
            }
            std::fs::write(path, text)
                .map_err(|e| format!("could not write the report to `{}`: {e}", path.display()))
        }
        _ => stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("could not write the report to standard output: {e}")),
    }
}

/// The closest candidate within edit distance 3, for "did you mean".
pub fn did_you_mean<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|c| (levenshtein(word, c), *c))
        .filter(|(d, _)| *d <= 3)
        .min()
        .map(|(_, c)| c)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_argument_is_stripped_and_check_is_default() {
        let (a, d) = normalise(
            vec!["cargo-idemlint".into(), "idemlint".into(), "src".into()],
            true,
        );
        assert_eq!(a[1], "check");
        assert_eq!(a[2], "src");
        assert!(d);
        let (a, _) = normalise(vec!["idemlint".into(), "rules".into()], false);
        assert_eq!(a[1], "rules");
    }

    #[test]
    fn suggestions() {
        let ids = ["key-in-retry-scope", "time-in-key"];
        assert_eq!(
            did_you_mean("key-in-retry-scop", &ids),
            Some("key-in-retry-scope")
        );
        assert_eq!(did_you_mean("zzz", &ids), None);
    }
}
