//! The command line shared by `idemlint` and `cargo idemlint`.
//!
//! Exit codes: 0 no finding, 1 at least one finding, 2 tool error (bad arguments, a
//! missing path, an unknown rule id, an invalid configuration or baseline). Files that
//! cannot be read or parsed are reported and do not change the exit code.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use crate::catalogue::Catalogue;
use crate::check::{Options, Report, ToolError, run, run_text};
use crate::config::RuleSelection;
use crate::finding::Severity;
use crate::report::{Format, RenderOptions};
use crate::rules::RULES;

/// Exit code: no finding.
pub const EXIT_CLEAN: i32 = 0;
/// Exit code: at least one finding.
pub const EXIT_FINDINGS: i32 = 1;
/// Exit code: the tool could not do its job.
pub const EXIT_TOOL_ERROR: i32 = 2;

/// `explain`'s rule argument: any text (matched case-insensitively, with suggestions, by
/// the command), offering the rule ids to shell completions and `--help`.
#[derive(Clone, Copy, Debug)]
struct RuleIdParser;

impl clap::builder::TypedValueParser for RuleIdParser {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            RULES
                .iter()
                .map(|r| clap::builder::PossibleValue::new(r.id)),
        ))
    }
}

/// Which severities make the exit code 1 (`--fail-on`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Only errors.
    Error,
    /// Errors and warnings (the default; notes never fail).
    Warning,
    /// Every finding, notes included.
    Note,
}

impl FailOn {
    fn fails(self, s: Severity) -> bool {
        let floor = match self {
            FailOn::Error => Severity::Error,
            FailOn::Warning => Severity::Warning,
            FailOn::Note => Severity::Note,
        };
        s >= floor
    }
}

/// `--message-format` (cargo's flag; `json-diagnostic-rendered-ansi` is accepted as
/// `json`, as rust-analyzer may pass it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MessageFormat {
    Json,
    JsonDiagnosticRenderedAnsi,
    Short,
    Human,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour on a terminal, unless `NO_COLOR` is set; `FORCE_COLOR` or `CLICOLOR_FORCE`
    /// force it elsewhere.
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour a stream that is (`terminal`) or is not a terminal.
    pub fn colour(self, terminal: bool) -> bool {
        let set = |name: &str| {
            std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0" && v != "false")
        };
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) => {
                false
            }
            ColorChoice::Auto if set("FORCE_COLOR") || set("CLICOLOR_FORCE") => true,
            ColorChoice::Auto => terminal,
        }
    }
}

/// `--version`: the package version and, when built from a git checkout, the commit.
const VERSION: &str = env!("IDEMLINT_VERSION");

#[derive(Parser, Debug)]
#[command(
    name = "idemlint",
    version = VERSION,
    // The command is optional (`check` is the default, see `main`'s argument rewrite).
    override_usage = "idemlint [COMMAND] [OPTIONS] [PATH]...",
    about = "Finds idempotency keys that are generated again on every retry attempt",
    long_about = "Finds idempotency keys that are generated again on every retry attempt.\n\n`check` is the default command: `idemlint src/` is `idemlint check src/`, and `idemlint` alone checks the current directory.",
    // `-h` shows `about` and `after_help`, `--help` `long_about` and `after_long_help`:
    // each says once that `check` is the default.
    after_help = "`check` is the default command: `idemlint src/` = `idemlint check src/`.\nExit codes: 0 no failing finding, 1 findings (see --fail-on), 2 tool error.\nDocumentation: https://github.com/idemlint/idemlint/tree/main/docs",
    after_long_help = "Exit codes: 0 no failing finding, 1 findings (see --fail-on), 2 tool error.\nDocumentation: https://github.com/idemlint/idemlint/tree/main/docs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// `Check` carries every flag; the value is parsed once per process, so its size is moot.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
enum Command {
    /// Analyse files and directories (the default command; default path: `.`; for
    /// `cargo idemlint`, the workspace root).
    #[command(override_usage = "idemlint check [OPTIONS] [PATH]...\n       \
        idemlint check [PATH]... --only FILE... [OPTIONS]   \
        (PATH first: --only takes every argument up to the next option or `--`)\n       \
        idemlint check [PATH]... [OPTIONS] --only -- FILE...")]
    Check {
        /// Files or directories; directories are walked honouring .gitignore. With --only,
        /// the project root(s) indexed, given before --only.
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, ignore_case = true, default_value = "human")]
        format: Format,
        /// cargo's spelling for `cargo idemlint` under rust-analyzer: `json` is
        /// `--format cargo` (cargo's JSON message stream), `short` and `human` the formats
        /// of those names.
        #[arg(long, value_enum, value_name = "FMT")]
        message_format: Option<MessageFormat>,
        /// Write the report to FILE instead of standard output (`-`: standard output).
        #[arg(long, short = 'o', value_name = "FILE")]
        output: Option<PathBuf>,
        /// Exit 0 even when there are findings (tool errors still exit 2).
        #[arg(long)]
        exit_zero: bool,
        /// The lowest severity that makes the exit code 1: `error`, `warning` (default:
        /// errors and warnings fail, notes never) or `note` (every finding).
        #[arg(
            long,
            value_enum,
            ignore_case = true,
            value_name = "SEVERITY",
            default_value = "warning"
        )]
        fail_on: FailOn,
        /// Colour in the human format: `auto` (a terminal, unless NO_COLOR is set;
        /// FORCE_COLOR or CLICOLOR_FORCE force it), `always`, `never`.
        #[arg(
            long,
            value_enum,
            ignore_case = true,
            value_name = "WHEN",
            default_value = "auto"
        )]
        color: ColorChoice,
        /// Print the number of findings per rule instead of the findings.
        #[arg(long, conflicts_with_all = ["fix", "diff"])]
        statistics: bool,
        /// Print the configuration that governs PATH (a file or directory) and where it
        /// comes from, then exit.
        #[arg(long, value_name = "PATH")]
        show_settings: Option<PathBuf>,
        /// Print the files that would be checked, one per line, with the configuration
        /// file that governs each, then exit.
        #[arg(long)]
        show_files: bool,
        /// Progress on standard error: `auto` (a bar on a terminal, never when `CI` is
        /// set), `always` (plain lines when not a terminal), `never`.
        #[arg(
            long,
            value_enum,
            ignore_case = true,
            value_name = "WHEN",
            default_value = "auto"
        )]
        progress: crate::progress::ProgressChoice,
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
        /// Print on standard error the files discovered, read and parsed per prefilter
        /// round, the project index's size, and each phase's time and the peak memory
        /// (RSS) at its end. `-vv` prints the same as `-v` (accepted, as many tools' CI
        /// configurations pass it).
        #[arg(long = "timings", visible_alias = "verbose", short = 'v', action = clap::ArgAction::Count)]
        stats: u8,
        /// Keep pass-1 results (each file's summary) in DIR, created when missing, keyed by
        /// the file's text, its configuration and idemlint's build: a later run parses for
        /// the project index only the files that changed. Keep DIR outside a checkout of
        /// untrusted code (whoever can write DIR decides what the analysis sees); delete
        /// it to clear the cache.
        #[arg(long, value_name = "DIR")]
        cache_dir: Option<PathBuf>,
        /// Parse every file, not only those the literal prefilter selects (same findings;
        /// also reports syntax errors in files that cannot matter).
        #[arg(long)]
        no_prefilter: bool,
        /// Analyse every parsed file, not only those that can have a finding (same
        /// findings, slower): the reference the selection is tested against.
        #[arg(long, hide = true)]
        check_every_file: bool,
        /// Check only shard I of N (1-based, e.g. `--shard 2/4`): a deterministic split of
        /// the files by path hash for CI matrices. Every shard reads the whole project.
        #[arg(long, value_name = "I/N")]
        shard: Option<crate::check::Shard>,
        /// Report findings only for these files (or the files under these directories),
        /// which must exist under PATH; the project index is still built from every file
        /// under PATH. Takes every argument up to the next option or `--`, so PATH goes
        /// first (`check . --only A.kt B.kt`). `--only -- FILE...`: every argument after
        /// `--` is such a file (the pre-commit hook's form).
        #[arg(long, value_name = "FILE", num_args = 1..)]
        only: Vec<PathBuf>,
        /// Like --only, with the files listed in FILE (`-`: standard input), one per line
        /// or separated by NUL bytes (as `git ... -z` prints them).
        #[arg(long, value_name = "FILE")]
        files_from: Option<PathBuf>,
        /// Like --only, with the files git says changed since the commit REV (and untracked
        /// files that are not ignored), under PATH.
        #[arg(long, value_name = "REV", conflicts_with_all = ["only", "files_from"])]
        changed_since: Option<String>,
        /// Report only findings on lines added or changed since the commit REV (per git),
        /// for adopting idemlint on existing code without a baseline file.
        #[arg(long, value_name = "REV", conflicts_with_all = ["changed_since", "write_baseline"])]
        new_since: Option<String>,
        /// Apply safe fixes in place, then report what remains.
        #[arg(long)]
        fix: bool,
        /// Insert a suppression comment with this reason (`""`: none) above every line with
        /// a finding, in the analysed files, then report what remains (ruff's --add-noqa).
        #[arg(long, value_name = "REASON", conflicts_with_all = ["fix", "diff", "statistics", "write_baseline"])]
        add_suppression: Option<String>,
        /// With --fix or --diff: also apply fixes marked unsafe.
        #[arg(long)]
        unsafe_fixes: bool,
        /// Print the fixes as a unified diff and change nothing, also together with --fix
        /// (as ruff's `--fix --diff`); exit code as without it, and 1 when the diff is not
        /// empty.
        #[arg(long, conflicts_with_all = ["write_baseline"])]
        diff: bool,
        /// Use this configuration file for every file instead of discovering idemlint.toml,
        /// .idemlint.toml or Cargo.toml metadata.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Run only these rules (comma-separated rule ids; repeatable).
        #[arg(long, value_name = "RULE-ID", value_delimiter = ',')]
        select: Option<Vec<String>>,
        /// Do not run these rules (comma-separated rule ids; repeatable).
        #[arg(long, value_name = "RULE-ID", value_delimiter = ',')]
        ignore: Vec<String>,
        /// Report only findings beyond those recorded in this baseline file, and the
        /// baseline's stale entries.
        #[arg(long, value_name = "FILE")]
        baseline: Option<PathBuf>,
        /// Record today's findings in this baseline file, then report against it (with
        /// --baseline: write that baseline pruned to what still exists).
        #[arg(long, value_name = "FILE")]
        write_baseline: Option<PathBuf>,
        /// Read the file to check from standard input (PATH `-`); NAME is its path for
        /// output, language and configuration.
        #[arg(long, value_name = "NAME")]
        stdin_filename: Option<PathBuf>,
        /// Check the cargo workspace of this Cargo.toml (its root; with --workspace, its
        /// members).
        #[arg(long, value_name = "PATH", conflicts_with = "paths")]
        manifest_path: Option<PathBuf>,
        /// Check every member of the cargo workspace (each member's directory).
        #[arg(long, conflicts_with = "paths")]
        workspace: bool,
        /// With --workspace: leave out this package (repeatable).
        #[arg(long, value_name = "PKG", requires = "workspace")]
        exclude: Vec<String>,
        /// Walk directories without .gitignore / .ignore and hidden-name rules (what they
        /// leave out is counted on the summary line otherwise). `.git` is never walked.
        #[arg(long)]
        no_ignore: bool,
        /// Largest source file analysed (bytes, or with a unit: 20MB, 64MiB; default 10MiB).
        /// A larger file is reported in `errors` and not analysed; overrides `max-file-size`.
        #[arg(long, value_name = "SIZE", value_parser = crate::fsio::parse_size)]
        max_file_size: Option<u64>,
        /// Exit 2 when any file could not be analysed (every entry of `errors`: unreadable,
        /// binary, not UTF-8, syntax errors, limits), even if there are no findings.
        #[arg(long)]
        strict: bool,
    },
    /// List every rule: id, default severity and summary.
    Rules,
    /// Print the catalogue idemlint knows (sources, sinks, boundaries, locks, ...) as TOML:
    /// the built-in entries and the additions of the configuration that governs PATH.
    Catalogue {
        /// The file or directory whose configuration's additions are shown.
        #[arg(default_value = ".")]
        path: PathBuf,
        /// Only these tables (`boundary`, `source`, `header_setter`, `lock`, ...;
        /// comma-separated, repeatable).
        #[arg(long, value_name = "TABLE", value_delimiter = ',')]
        table: Vec<String>,
        /// Use this configuration file instead of discovering one.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Only the configuration's additions, not the built-in entries.
        #[arg(long)]
        no_builtin: bool,
    },
    /// Print a rule's documentation (the id is case-insensitive).
    Explain {
        /// A rule id, e.g. key-in-retry-scope (shell completions offer them; without one,
        /// the known ids are printed as an error, exit code 2; `idemlint rules` lists
        /// them).
        #[arg(value_parser = RuleIdParser)]
        rule: Option<String>,
    },
    /// Write a commented starter idemlint.toml (never overwrites one).
    Init {
        /// The directory to write it in.
        #[arg(default_value = ".")]
        dir: PathBuf,
    },
    /// Print a shell completion script (e.g. `idemlint completions bash > /etc/bash_completion.d/idemlint`).
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on standard output (`idemlint man > idemlint.1`).
    Man,
    /// Run the language server on stdin/stdout (for editors; see docs/integrations.md).
    Lsp {
        /// Accepted and ignored: stdio is the only transport (some clients always pass it).
        #[arg(long)]
        stdio: bool,
    },
}

const SUBCOMMANDS: &[&str] = &[
    "check",
    "rules",
    "explain",
    "catalogue",
    "lsp",
    "init",
    "completions",
    "man",
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
    // `--only -- FILE...`: every argument after `--` is a file to report (`--only=FILE`,
    // so one that starts with `-` stays a file).
    if let Some(sep) = args.iter().position(|a| a == "--")
        && sep > 0
        && args[sep - 1] == "--only"
        && sep + 1 < args.len()
    {
        let files: Vec<OsString> = args.split_off(sep + 1);
        args.truncate(sep - 1);
        for f in files {
            let mut a = OsString::from("--only=");
            a.push(if f == "-" { OsString::from("./-") } else { f });
            args.push(a);
        }
    }
    // Every argument after `--` is a path (clap's rule), `-` included: a file named `-`
    // there is that file, not standard input.
    if let Some(sep) = args.iter().position(|a| a == "--") {
        for a in &mut args[sep + 1..] {
            if a == "-" {
                *a = OsString::from("./-");
            }
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

/// When `check` was supplied as the default and its first argument is no existing path but
/// close to a subcommand's name, or a prefix of one (`idemlint expl …`, `idemlint rul`,
/// `idemlint chek .`):
/// the "unknown command … did you mean" message, instead of "path not found".
fn mistyped_command(args: &[OsString]) -> Option<String> {
    let word = args.get(2)?.to_str()?;
    if word.starts_with('-') || word.contains(['/', '\\', '.']) || Path::new(word).exists() {
        return None;
    }
    let names: Vec<&str> = SUBCOMMANDS
        .iter()
        .copied()
        .filter(|s| !s.starts_with('-'))
        .collect();
    // Edit distance 2 from four characters on (`chekc`, `chek`), 1 below (`rul`, `mn`).
    let within = if word.chars().count() >= 4 { 2 } else { 1 };
    let s = crate::text::did_you_mean_within(word, &names, within)?;
    Some(format!(
        "unknown command `{}`; did you mean `idemlint {s}`? (a path of that name does not exist either)",
        crate::text::escape_controls(word)
    ))
}

/// The cargo workspace root of the current directory, read from the `Cargo.toml` files
/// (no `cargo` process; see [`crate::cargo`]).
fn cargo_workspace_root() -> Option<PathBuf> {
    let root = crate::cargo::workspace(None).ok()?.root;
    // Show paths relative to the current directory when the root is an ancestor of it
    // (`../src/lib.rs` from a subdirectory), as cargo's own diagnostics do.
    let cwd = std::env::current_dir().ok()?.canonicalize().ok()?;
    match cwd.strip_prefix(&root) {
        Ok(rest) if rest.as_os_str().is_empty() => Some(PathBuf::from(".")),
        Ok(rest) => Some(rest.components().map(|_| "..").collect::<PathBuf>()),
        _ => Some(root),
    }
}

/// Runs the CLI with `args` (including argv\[0\]); returns the process exit code.
pub fn main_with_args(args: Vec<OsString>, cargo: bool) -> i32 {
    let (args, defaulted_check) = normalise(args, cargo);
    if defaulted_check && let Some(msg) = mistyped_command(&args) {
        eprintln!("error: {msg}");
        return EXIT_TOOL_ERROR;
    }
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
        Command::Lsp { .. } => {
            // The server writes stdout from its own thread: release the lock first.
            drop(out);
            crate::lsp::run_stdio()
        }
        Command::Rules => {
            let _ = out.write_all(rules_table().as_bytes());
            EXIT_CLEAN
        }
        Command::Init { dir } => init(&dir),
        Command::Catalogue {
            path,
            table,
            config,
            no_builtin,
        } => print_catalogue(&path, &table, config.as_deref(), no_builtin, &mut out),
        Command::Completions { shell } => {
            // Generated into memory first: `clap_complete::generate` panics when a write
            // fails, and a reader that stops early (`| head`) closes the pipe.
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "idemlint", &mut buf);
            write_stdout(&mut out, &buf, "the completions")
        }
        Command::Man => {
            let mut buf = Vec::new();
            match clap_mangen::Man::new(Cli::command()).render(&mut buf) {
                Ok(()) => write_stdout(&mut out, &buf, "the man page"),
                Err(e) => {
                    eprintln!("error: could not render the man page: {e}");
                    EXIT_TOOL_ERROR
                }
            }
        }
        Command::Explain { rule } => {
            let Some(rule) = rule else {
                let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
                eprintln!(
                    "error: name a rule: `idemlint explain RULE`\n  known rules: {}\n  (`idemlint rules` describes each)",
                    ids.join(", ")
                );
                return EXIT_TOOL_ERROR;
            };
            // As `rules` lists it, or as a finding's header names it (`idemlint::RULE`).
            let wanted = rule.trim().to_ascii_lowercase().replace('_', "-");
            let wanted = wanted.strip_prefix("idemlint::").unwrap_or(&wanted);
            match crate::rules::rule(wanted) {
                Some(r) => {
                    let _ = out.write_all(r.reader_doc().as_bytes());
                    EXIT_CLEAN
                }
                None => {
                    let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
                    eprintln!(
                        "error: unknown rule `{rule}`{}\n  known rules: {}",
                        did_you_mean(wanted, &ids)
                            .map(|s| format!("; did you mean `{s}`?"))
                            .unwrap_or_default(),
                        ids.join(", ")
                    );
                    EXIT_TOOL_ERROR
                }
            }
        }
        Command::Check {
            paths,
            format,
            message_format,
            jobs,
            parse_only,
            stats,
            cache_dir,
            no_prefilter,
            check_every_file,
            max_file_size,
            no_ignore,
            shard,
            only,
            files_from,
            changed_since,
            new_since,
            fix,
            unsafe_fixes,
            diff,
            add_suppression,
            output,
            exit_zero,
            fail_on,
            color,
            statistics,
            show_settings,
            show_files,
            progress,
            quiet,
            config,
            select,
            ignore,
            baseline,
            write_baseline,
            stdin_filename,
            manifest_path,
            workspace,
            exclude,
            strict,
        } => {
            // `--fix --diff` shows the fixes and changes nothing (ruff's behaviour).
            let fix = fix && !diff;
            let format = match message_format {
                Some(MessageFormat::Json | MessageFormat::JsonDiagnosticRenderedAnsi) => {
                    Format::Cargo
                }
                Some(MessageFormat::Short) => Format::Short,
                Some(MessageFormat::Human) => Format::Human,
                None => format,
            };
            let findings_exit = if exit_zero { EXIT_CLEAN } else { EXIT_FINDINGS };
            let mut tool_failure = false;
            let selection = RuleSelection { select, ignore };
            if let Err(e) = selection.validate() {
                eprintln!("error: {e}");
                return EXIT_TOOL_ERROR;
            }
            if let Err(e) = check_output_paths(
                output.as_deref(),
                write_baseline.as_deref(),
                baseline.as_deref(),
            ) {
                eprintln!("error: {e}");
                return EXIT_TOOL_ERROR;
            }
            let stdin = stdin_filename.is_some() || paths.iter().any(|p| p == Path::new("-"));
            let cargo_paths = if stdin {
                None
            } else {
                match crate::cargo::check_paths(manifest_path.as_deref(), workspace, &exclude) {
                    Ok(p) => p,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return EXIT_TOOL_ERROR;
                    }
                }
            };
            let (paths, skip_dirs, path_problems) = match cargo_paths {
                Some(p) => (p.paths, p.skip_dirs, p.problems),
                None => (paths, Vec::new(), Vec::new()),
            };
            let paths = if paths.is_empty() && cargo {
                vec![cargo_workspace_root().unwrap_or_else(|| {
                    eprintln!(
                        "cargo idemlint: could not locate the cargo workspace (no Cargo.toml here or above); checking the current directory"
                    );
                    PathBuf::from(".")
                })]
            } else {
                paths
            };
            if stdin
                && (!only.is_empty()
                    || files_from.is_some()
                    || changed_since.is_some()
                    || new_since.is_some())
            {
                eprintln!(
                    "error: --only, --files-from, --changed-since and --new-since cannot be used with standard input"
                );
                return EXIT_TOOL_ERROR;
            }
            let (only, changed_lines) = match report_subset(
                &paths,
                only,
                files_from.as_deref(),
                changed_since.as_deref(),
                new_since.as_deref(),
            ) {
                Ok(x) => x,
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_TOOL_ERROR;
                }
            };
            let pass1_cache = match cache_dir.as_deref().map(crate::check::Pass1Cache::on_disk) {
                None => None,
                Some(Ok(c)) => Some(c),
                Some(Err(e)) => {
                    eprintln!(
                        "error: cannot use the cache directory {}: {e}",
                        cache_dir.as_deref().unwrap_or(Path::new("")).display()
                    );
                    return EXIT_TOOL_ERROR;
                }
            };
            let opts = Options {
                only,
                overlays: None,
                cancel: None,
                pass1_cache,
                changed_lines,
                paths,
                jobs,
                parse_only,
                no_prefilter,
                check_every_file,
                shard,
                config_file: config,
                selection,
                skip_dirs,
                path_problems,
                progress: None,
                max_file_size,
                no_ignore,
            };
            let catalogue = Catalogue::builtin();
            if let Some(path) = show_settings {
                return print_settings(&path, &opts, &catalogue, &mut out);
            }
            if show_files {
                // Not listed, and said so (`check` reports them in `errors`).
                for p in &opts.path_problems {
                    eprintln!("warning: {}: {}", p.path, p.message);
                }
                return match crate::check::list_files(&opts, &catalogue) {
                    Ok(files) => {
                        for (display, config) in files {
                            let origin = config
                                .origin
                                .as_deref()
                                .map(|p| crate::text::escape_controls(&p.display().to_string()))
                                .unwrap_or_else(|| "built-in defaults".into());
                            let _ = writeln!(out, "{display}\t{origin}");
                        }
                        EXIT_CLEAN
                    }
                    Err(ToolError::Config(e)) => {
                        eprint!("{}", crate::config::render_error(&e, stderr_colour(color)));
                        EXIT_TOOL_ERROR
                    }
                    Err(e) => {
                        eprintln!("error: {e}");
                        EXIT_TOOL_ERROR
                    }
                };
            }
            if stdin && (fix || diff || add_suppression.is_some()) {
                eprintln!(
                    "error: --fix, --diff and --add-suppression cannot be used with standard input"
                );
                return EXIT_TOOL_ERROR;
            }
            let result = if stdin {
                check_stdin(&opts, stdin_filename.as_deref(), &catalogue)
            } else {
                let counters = std::sync::Arc::new(crate::check::Progress::default());
                let display = if quiet && progress != crate::progress::ProgressChoice::Always {
                    None
                } else {
                    crate::progress::Display::start(progress, counters.clone())
                };
                let with_progress = Options {
                    progress: display.as_ref().map(|_| counters),
                    ..opts.clone()
                };
                let r = run(&with_progress, &catalogue);
                if let Some(d) = display {
                    d.finish();
                }
                r
            };
            let mut report = match result {
                Ok(r) => r,
                Err(ToolError::Config(e)) => {
                    eprint!("{}", crate::config::render_error(&e, stderr_colour(color)));
                    return EXIT_TOOL_ERROR;
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_TOOL_ERROR;
                }
            };
            if let Some(reason) = &add_suppression {
                if let Err(e) = adopt_baseline(&mut report, baseline.as_deref(), None, true) {
                    eprintln!("error: {e}");
                    return EXIT_TOOL_ERROR;
                }
                let (files, mut problems) =
                    crate::add_suppression::compute(&report, reason, &opts, &catalogue);
                let write_errors = crate::check::write_fixed(&files);
                let written: Vec<&crate::check::FixedFile> = files
                    .iter()
                    .filter(|f| !write_errors.iter().any(|e| e.path == f.display))
                    .collect();
                let n: usize = written.iter().map(|f| f.rules.len()).sum();
                if quiet {
                    print_file_problems(&problems);
                }
                print_file_problems(&write_errors);
                if !quiet {
                    eprintln!(
                        "idemlint: added {n} suppression{} in {} file{}{}",
                        if n == 1 { "" } else { "s" },
                        written.len(),
                        if written.len() == 1 { "" } else { "s" },
                        left_unchanged(problems.iter().chain(&write_errors))
                    );
                }
                tool_failure = !write_errors.is_empty();
                problems.extend(write_errors);
                report = match rerun_after_edits(&opts, new_since.as_deref(), &catalogue) {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return EXIT_TOOL_ERROR;
                    }
                };
                report.errors.extend(problems);
            }
            if stats > 0 {
                eprint!("{}", report.stats.render());
            }
            if fix || diff {
                let mode = if unsafe_fixes {
                    crate::fix::apply::Mode::All
                } else {
                    crate::fix::apply::Mode::Safe
                };
                // Only the reported findings are fixed: the baseline's are left alone
                // (`--diff` reports against it once, here; `--fix` quietly, and again
                // after its rerun).
                if let Err(e) = adopt_baseline(&mut report, baseline.as_deref(), None, quiet || fix)
                {
                    eprintln!("error: {e}");
                    return EXIT_TOOL_ERROR;
                }
                let (fixed, fix_errors) =
                    crate::check::compute_fixes(&report, mode, &opts, &catalogue);
                if quiet {
                    print_file_problems(&fix_errors);
                }
                if diff {
                    let d: String = fixed
                        .iter()
                        .map(|f| crate::fix::apply::unified_diff(&f.display, &f.old, &f.new))
                        .collect();
                    let to_terminal = output.as_deref().is_none_or(|p| p == Path::new("-"))
                        && std::io::IsTerminal::is_terminal(&std::io::stdout());
                    let d = diff_for(d, to_terminal);
                    if let Err(e) = write_report(output.as_deref(), &d, &mut out) {
                        eprintln!("error: {e}");
                        return EXIT_TOOL_ERROR;
                    }
                    let unfixable = report
                        .findings
                        .iter()
                        .filter(|f| !f.fix.as_ref().is_some_and(|x| mode.allows(x.applicability)))
                        .count();
                    // Nothing was changed, so every finding remains: the exit code follows
                    // check's rules (baseline, --fail-on, --strict, --exit-zero), and a
                    // non-empty diff alone also makes it 1, as ruff's `--diff` does.
                    report.errors.extend(fix_errors);
                    if !quiet {
                        // Why each unsafe fix needs review (and whether it is in the diff).
                        for f in &report.findings {
                            let Some(x) = &f.fix else { continue };
                            if x.applicability == crate::finding::Applicability::Safe {
                                continue;
                            }
                            let why = x.reason.as_deref().unwrap_or("it needs review");
                            eprintln!(
                                "idemlint: {}:{}: unsafe fix ({}){}",
                                crate::text::escape_controls(&f.path),
                                f.line,
                                crate::text::escape_controls(why),
                                if unsafe_fixes {
                                    ""
                                } else {
                                    "; not in the diff, add --unsafe-fixes"
                                }
                            );
                        }
                        // The summary counts the file problems as "reported above".
                        eprint!("{}", crate::report::human::render_errors(&report));
                        eprint!("{}", crate::report::human::summary(&report));
                        // What stays out of the diff, by why: a fix this mode leaves out
                        // (unsafe, without `--unsafe-fixes`) or no fix at all.
                        let left_out_unsafe = report
                            .findings
                            .iter()
                            .filter(|f| {
                                f.fix
                                    .as_ref()
                                    .is_some_and(|x| !mode.allows(x.applicability))
                            })
                            .count();
                        let no_fix = unfixable - left_out_unsafe;
                        let plural = |n: usize| if n == 1 { "" } else { "s" };
                        let mut out_of_diff = Vec::new();
                        if left_out_unsafe > 0 {
                            out_of_diff.push(format!(
                                "{left_out_unsafe} finding{} with an unsafe fix (add --unsafe-fixes)",
                                plural(left_out_unsafe)
                            ));
                        }
                        if no_fix > 0 {
                            out_of_diff
                                .push(format!("{no_fix} finding{} without a fix", plural(no_fix)));
                        }
                        eprintln!(
                            "idemlint: --diff: {} file{} would be changed{}",
                            fixed.len(),
                            plural(fixed.len()),
                            if out_of_diff.is_empty() {
                                String::new()
                            } else {
                                format!("; not in the diff: {}", out_of_diff.join(", "))
                            },
                        );
                    }
                    return exit_code(ExitInputs {
                        tool_failure: false,
                        strict_failure: strict && !report.errors.is_empty(),
                        failing: !fixed.is_empty()
                            || report.findings.iter().any(|f| fail_on.fails(f.severity)),
                        findings_exit,
                    });
                }
                let write_errors = crate::check::write_fixed(&fixed);
                print_file_problems(&write_errors);
                let written: Vec<&crate::check::FixedFile> = fixed
                    .iter()
                    .filter(|f| !write_errors.iter().any(|e| e.path == f.display))
                    .collect();
                let n: usize = written.iter().map(|f| f.rules.len()).sum();
                if !quiet {
                    eprintln!(
                        "idemlint: applied {n} fix{} in {} file{}{}",
                        if n == 1 { "" } else { "es" },
                        written.len(),
                        if written.len() == 1 { "" } else { "s" },
                        left_unchanged(fix_errors.iter().chain(&write_errors))
                    );
                    for f in &written {
                        eprintln!("  fixed {}", f.display);
                    }
                }
                let write_failed = !write_errors.is_empty();
                let fix_errors: Vec<_> = fix_errors.into_iter().chain(write_errors).collect();
                report = match rerun_after_edits(&opts, new_since.as_deref(), &catalogue) {
                    Ok(r) => r,
                    Err(e) => {
                        eprintln!("error: {e}");
                        return EXIT_TOOL_ERROR;
                    }
                };
                report.errors.extend(fix_errors);
                if write_failed {
                    tool_failure = true;
                }
            }
            if let Err(e) = adopt_baseline(
                &mut report,
                baseline.as_deref(),
                write_baseline.as_deref(),
                quiet,
            ) {
                eprintln!("error: {e}");
                return EXIT_TOOL_ERROR;
            }
            let to_stdout = output.as_deref().is_none_or(|p| p == Path::new("-"));
            // Nothing to check where the whole tree was walked (not a subset, a shard or
            // standard input).
            let no_sources = report.files == 0
                && report.errors.is_empty()
                && !stdin
                && opts.only.is_none()
                && shard.is_none();
            let code = exit_code(ExitInputs {
                tool_failure,
                strict_failure: strict && (!report.errors.is_empty() || no_sources),
                failing: report.findings.iter().any(|f| fail_on.fails(f.severity)),
                findings_exit,
            });
            let render_opts = RenderOptions {
                colour: match color {
                    ColorChoice::Auto => {
                        to_stdout && color.colour(std::io::IsTerminal::is_terminal(&out))
                    }
                    c => c.colour(false),
                },
                quiet,
                srcroot: std::env::current_dir().ok(),
                sarif_category: Some(crate::report::sarif::category(shard)),
                exit_code: Some(code),
                roots: opts
                    .paths
                    .iter()
                    .map(|p| crate::config::absolute_path(p))
                    .map(|p| {
                        if p.is_dir() {
                            p
                        } else {
                            p.parent().map(Path::to_path_buf).unwrap_or(p)
                        }
                    })
                    .chain(
                        std::env::current_dir()
                            .ok()
                            .map(|c| crate::config::absolute_path(&c)),
                    )
                    .collect(),
            };
            let mut rendered = crate::report::render(&report, format, &render_opts);
            if statistics {
                rendered.report = statistics_table(&report);
            }
            if let Err(e) = write_report(output.as_deref(), &rendered.report, &mut out) {
                eprintln!("error: {e}");
                return EXIT_TOOL_ERROR;
            }
            eprint!("{}", rendered.stderr);
            // Every format, and the human one written to a file or replaced by
            // --statistics, has its summary on standard error, so a failing CI step's log
            // always says why. (The human report on standard output ends with it.)
            let summary_in_report = format == Format::Human && to_stdout && !statistics;
            if !quiet && rendered.stderr.is_empty() && !summary_in_report {
                // The file problems are in the report (JSON, SARIF, the human report in a
                // file), except with --statistics, whose table only counts them: then
                // they are printed here first.
                let where_ = if statistics {
                    eprint!("{}", crate::report::human::render_errors(&report));
                    "reported above".to_string()
                } else {
                    match output.as_deref() {
                        Some(p) if p != std::path::Path::new("-") => format!(
                            "listed in {}",
                            crate::text::escape_controls(&p.display().to_string())
                        ),
                        _ => "listed in the report".to_string(),
                    }
                };
                eprint!(
                    "{}",
                    crate::report::human::summary_with_problems(&report, &where_)
                );
            }
            // A walk that found nothing to check is most often a wrong path (a build
            // directory, the parent of the project): said even with --quiet, as ruff does.
            if no_sources {
                let shown: Vec<String> = if opts.paths.is_empty() {
                    vec![".".into()]
                } else {
                    opts.paths
                        .iter()
                        .map(|p| crate::text::escape_controls(&p.display().to_string()))
                        .collect()
                };
                eprintln!(
                    "warning: no Rust, Java or Kotlin files found under {}{}",
                    shown.join(" "),
                    if strict { " (--strict: exit 2)" } else { "" }
                );
            }
            // Even with --quiet: a failing exit always says why, in one line.
            if strict && !report.errors.is_empty() {
                eprintln!("{}", strict_line(&report.errors));
            }
            code
        }
    }
}

/// The line `--strict` prints when files could not be analysed fully: distinct files,
/// and the problems when there are more of them (one file can have several).
fn strict_line(errors: &[crate::finding::FileError]) -> String {
    let files = errors
        .iter()
        .map(|e| e.path.as_str())
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    let problems = if errors.len() == files {
        String::new()
    } else {
        format!(" ({} problems)", errors.len())
    };
    // Named even with `--quiet`, which hides the report's list of problems.
    let first = errors
        .first()
        .map(|e| {
            let at = e.line.map(|l| format!(":{l}")).unwrap_or_default();
            format!(
                "{}: {}{at}: {}",
                if files == 1 { "" } else { "; the first" },
                crate::text::escape_controls(&e.path),
                crate::text::escape_controls(&e.message)
            )
        })
        .unwrap_or_default();
    format!(
        "idemlint: --strict: {files} file{}{problems} could not be analysed fully{first}",
        plural(files)
    )
}

/// Largest `--files-from` list read, bytes.
const MAX_FILES_FROM_BYTES: u64 = 64 << 20;

/// What `check` reports on: [`Options::only`] and [`Options::changed_lines`].
type Subset = (
    Option<crate::check::Only>,
    Option<std::sync::Arc<crate::git::ChangedLines>>,
);

/// The `--only` set and `--new-since` lines of a `check`: from `--only` and `--files-from`
/// (named files), or from git (`--changed-since`, `--new-since`, run in the first of
/// `paths`, or `.`). `--new-since` with named files keeps them and adds the line filter.
/// Errors are messages for standard error (exit 2).
fn report_subset(
    paths: &[PathBuf],
    only: Vec<PathBuf>,
    files_from: Option<&Path>,
    changed_since: Option<&str>,
    new_since: Option<&str>,
) -> Result<Subset, String> {
    check_only_paths(paths, &only)?;
    let mut named = only;
    if let Some(list) = files_from {
        named.extend(read_file_list(list)?);
    }
    let root = paths.first().cloned().unwrap_or_else(|| PathBuf::from("."));
    let mut changed_lines = None;
    let only = if !named.is_empty() || files_from.is_some() {
        Some(crate::check::Only {
            paths: named,
            named: true,
        })
    } else if let Some(rev) = changed_since {
        let repo = crate::git::Repo::open(&root, "--changed-since").map_err(|e| e.to_string())?;
        let files = repo
            .changed_files(rev, "--changed-since")
            .map_err(|e| e.to_string())?;
        Some(crate::check::Only {
            paths: files,
            named: false,
        })
    } else {
        None
    };
    let only = match new_since {
        Some(rev) => {
            let repo = crate::git::Repo::open(&root, "--new-since").map_err(|e| e.to_string())?;
            let lines = repo
                .changed_lines(rev, "--new-since")
                .map_err(|e| e.to_string())?;
            let only = only.unwrap_or(crate::check::Only {
                paths: lines.files(),
                named: false,
            });
            changed_lines = Some(std::sync::Arc::new(lines));
            Some(only)
        }
        None => only,
    };
    Ok((only, changed_lines))
}

/// The `--only` files against the checked `paths` (`.` when none): each must exist and lie
/// under one of them, and none may be a checked path itself: `check --only a.kt .` gives
/// `.` to `--only` (it takes every argument up to the next option or `--`), which would
/// report every file instead of `a.kt`; the error says to put the path first.
fn check_only_paths(paths: &[PathBuf], only: &[PathBuf]) -> Result<(), String> {
    let dot = [PathBuf::from(".")];
    let roots = if paths.is_empty() { &dot[..] } else { paths };
    let esc = |p: &Path| crate::text::escape_controls(&p.display().to_string());
    let roots_shown = roots.iter().map(|r| esc(r)).collect::<Vec<_>>().join(" ");
    let abs_roots: Vec<PathBuf> = roots
        .iter()
        .map(|r| crate::config::absolute_path(r))
        .collect();
    for f in only {
        if std::fs::symlink_metadata(f).is_err() {
            return Err(format!("path not found: {} (named by --only)", esc(f)));
        }
        let abs = crate::config::absolute_path(f);
        if abs.is_dir() && abs_roots.contains(&abs) {
            let named: Vec<String> = only
                .iter()
                .filter(|o| crate::config::absolute_path(o) != abs)
                .map(|o| esc(o))
                .collect();
            return Err(format!(
                "--only {}: that is the checked path itself, so --only would report every file; \
                 --only takes every argument up to the next option or `--`, so give the path \
                 first: `idemlint check {} --only {}`",
                esc(f),
                esc(f),
                if named.is_empty() {
                    "FILE...".to_string()
                } else {
                    named.join(" ")
                }
            ));
        }
        // Under a root as written (a link inside the tree to elsewhere is the walk's to
        // report) or once resolved.
        let lexical = |p: &Path| {
            let joined = match std::env::current_dir() {
                Ok(cwd) if p.is_relative() => cwd.join(p),
                _ => p.to_path_buf(),
            };
            crate::fsio::lexical_normal(&joined)
        };
        let (lex, lex_roots): (PathBuf, Vec<PathBuf>) =
            (lexical(f), roots.iter().map(|r| lexical(r)).collect());
        if !abs_roots.iter().any(|r| abs.starts_with(r))
            && !lex_roots.iter().any(|r| lex.starts_with(r))
        {
            return Err(format!(
                "--only {}: not under the checked path{} {roots_shown}; --only reports on files \
                 of the project that PATH names (`idemlint check ROOT --only FILE...`)",
                esc(f),
                if roots.len() == 1 { "" } else { "s" },
            ));
        }
    }
    Ok(())
}

/// The report of `check` run again after `--fix` or `--add-suppression` edited files:
/// edits move lines, so `--new-since` asks git again for the changed lines first.
fn rerun_after_edits(
    opts: &Options,
    new_since: Option<&str>,
    catalogue: &crate::catalogue::Catalogue,
) -> Result<Report, String> {
    let opts = refresh_changed_lines(opts, new_since)?;
    run(&opts, catalogue).map_err(|e| e.to_string())
}

/// `opts` with `--new-since REV`'s changed lines read again (after `--fix` or
/// `--add-suppression` edited files); `opts` itself without `--new-since`.
fn refresh_changed_lines(opts: &Options, new_since: Option<&str>) -> Result<Options, String> {
    let Some(rev) = new_since else {
        return Ok(opts.clone());
    };
    let root = opts
        .paths
        .first()
        .cloned()
        .unwrap_or_else(|| PathBuf::from("."));
    let repo = crate::git::Repo::open(&root, "--new-since").map_err(|e| e.to_string())?;
    let lines = repo
        .changed_lines(rev, "--new-since")
        .map_err(|e| e.to_string())?;
    Ok(Options {
        changed_lines: Some(std::sync::Arc::new(lines)),
        ..opts.clone()
    })
}

/// The paths of a `--files-from` list: NUL-separated when it contains a NUL byte,
/// otherwise one per line (`\r\n` accepted, blank lines skipped). `-` is standard input.
fn read_file_list(list: &Path) -> Result<Vec<PathBuf>, String> {
    let shown = crate::text::escape_controls(&list.display().to_string());
    let bytes = if list == Path::new("-") {
        let mut b = Vec::new();
        std::io::stdin()
            .lock()
            .take(MAX_FILES_FROM_BYTES + 1)
            .read_to_end(&mut b)
            .map_err(|e| format!("--files-from -: could not read standard input: {e}"))?;
        if b.len() as u64 > MAX_FILES_FROM_BYTES {
            return Err(format!(
                "--files-from -: the list is over {}",
                crate::fsio::human_size(MAX_FILES_FROM_BYTES)
            ));
        }
        b
    } else {
        crate::fsio::read_regular(list, MAX_FILES_FROM_BYTES, true)
            .map_err(|e| format!("--files-from {shown}: could not read the list: {e}"))?
    };
    let parts: Vec<&[u8]> = if bytes.contains(&0) {
        bytes.split(|b| *b == 0).collect()
    } else {
        bytes
            .split(|b| *b == b'\n')
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
            .collect()
    };
    Ok(parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(crate::git::path_of_bytes)
        .collect())
}

/// What decides `check`'s exit code (see docs/cli.md, "Exit codes").
struct ExitInputs {
    /// A file could not be written (`--fix`).
    tool_failure: bool,
    /// `--strict` and some file could not be analysed.
    strict_failure: bool,
    /// A finding at or above `--fail-on` remains (with `--diff`: or the diff is not empty).
    failing: bool,
    /// [`EXIT_FINDINGS`], or [`EXIT_CLEAN`] under `--exit-zero`.
    findings_exit: i32,
}

/// The exit code of `check` (and of `check --diff`): 2 for tool failures, then 1 (or 0
/// under `--exit-zero`) when something fails, else 0.
/// The end of `--fix`'s or `--add-suppression`'s summary line: how many files with
/// `problems` were left as they were (their reasons are among the file problems), or
/// nothing.
fn left_unchanged<'a>(problems: impl IntoIterator<Item = &'a crate::finding::FileError>) -> String {
    let files: std::collections::BTreeSet<&str> =
        problems.into_iter().map(|e| e.path.as_str()).collect();
    match files.len() {
        0 => String::new(),
        1 => "; 1 file left unchanged (why: with the file problems)".to_string(),
        k => format!("; {k} files left unchanged (why: with the file problems)"),
    }
}

/// Prints, as errors on standard error, files `--fix` or `--add-suppression` did not
/// change. A file left alone on purpose (the edit would not parse, or would not take
/// effect) is printed only with `--quiet`: otherwise it joins the report's file
/// problems, which every format shows once, and printing it here too would say it twice.
/// A file that could not be written (exit code 2) is printed always, and is in the
/// report too.
fn print_file_problems<'a>(problems: impl IntoIterator<Item = &'a crate::finding::FileError>) {
    for e in problems {
        eprintln!(
            "error: {}: {}",
            crate::text::escape_controls(&e.path),
            crate::text::escape_controls(&e.message)
        );
    }
}

fn exit_code(e: ExitInputs) -> i32 {
    if e.tool_failure || e.strict_failure {
        EXIT_TOOL_ERROR
    } else if e.failing {
        e.findings_exit
    } else {
        EXIT_CLEAN
    }
}

/// `idemlint rules`: one aligned line per rule.
fn rules_table() -> String {
    let id_w = RULES.iter().map(|r| r.id.len()).max().unwrap_or(4).max(4);
    let sev_w = "severity".len();
    let mut s = format!("{:<id_w$}  {:<sev_w$}  summary\n", "rule", "severity");
    for r in RULES {
        s.push_str(&format!(
            "{:<id_w$}  {:<sev_w$}  {}\n",
            r.id,
            r.severity.name(),
            r.summary()
        ));
    }
    s
}

/// `--statistics`: findings per rule, most frequent first.
fn statistics_table(report: &Report) -> String {
    let mut counts: std::collections::BTreeMap<(&str, &str), usize> = Default::default();
    for f in &report.findings {
        *counts.entry((f.rule, f.severity.name())).or_default() += 1;
    }
    let mut rows: Vec<((&str, &str), usize)> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let n_w = rows
        .iter()
        .map(|r| r.1.to_string().len())
        .max()
        .unwrap_or(1)
        .max("count".len());
    let id_w = rows.iter().map(|r| r.0.0.len()).max().unwrap_or(4).max(4);
    let mut s = format!("{:>n_w$}  {:<id_w$}  severity\n", "count", "rule");
    for ((rule, sev), n) in rows {
        s.push_str(&format!("{n:>n_w$}  {rule:<id_w$}  {sev}\n"));
    }
    s
}

/// `--show-settings PATH`: the configuration that governs PATH and where it came from.
fn print_settings(path: &Path, opts: &Options, cat: &Catalogue, out: &mut dyn Write) -> i32 {
    let resolve = |selection: RuleSelection| {
        crate::config::Resolver::new(cat, opts.config_file.as_deref(), selection)
            .and_then(|mut r| r.for_path(path))
    };
    let (config, plain) = match (
        resolve(opts.selection.clone()),
        resolve(RuleSelection::default()),
    ) {
        (Ok(c), Ok(p)) => (c, p),
        (Err(e), _) | (_, Err(e)) => {
            eprint!("{}", crate::config::render_error(&e, false));
            return EXIT_TOOL_ERROR;
        }
    };
    let esc = |p: &Path| crate::text::escape_controls(&p.display().to_string());
    let mut s = format!("settings for {}\n", esc(path));
    match &config.origin {
        Some(o) if opts.config_file.is_some() => {
            s.push_str(&format!("configuration: {} (given with --config)\n", esc(o)))
        }
        Some(o) => s.push_str(&format!(
            "configuration: {} (the nearest configuration file)\n",
            esc(o)
        )),
        None => s.push_str(
            "configuration: none found (no idemlint.toml, .idemlint.toml or Cargo.toml metadata here or above): built-in defaults\n",
        ),
    }
    if config.origin.is_some() {
        s.push_str(&format!("globs relative to: {}\n", esc(&config.root)));
    }
    if !config.extends.is_empty() {
        let chain: Vec<String> = config.extends.iter().map(|p| esc(p)).collect();
        s.push_str(&format!(
            "extends: {} (their settings apply under this file's; their globs are relative to their own directories)\n",
            chain.join(" → ")
        ));
    }
    for &i in &config.applied_overrides {
        let o = &config.overrides[i];
        s.push_str(&format!(
            "override applies: files = [{}] (from {})\n",
            o.patterns
                .iter()
                .map(|p| format!("\"{}\"", crate::text::escape_controls(p)))
                .collect::<Vec<_>>()
                .join(", "),
            esc(&o.origin)
        ));
    }
    let (inc, exc) = config.has_globs();
    s.push_str(&format!(
        "analysed: {}{}\n",
        if path.is_dir() || config.includes(path) {
            "yes"
        } else {
            "no (excluded by include/exclude)"
        },
        match (inc, exc) {
            (false, false) => String::new(),
            (true, false) => " (include globs set)".into(),
            (false, true) => " (exclude globs set)".into(),
            (true, true) => " (include and exclude globs set)".into(),
        }
    ));
    s.push_str(&format!(
        "require-suppression-reason: {}\n",
        config.require_suppression_reason
    ));
    s.push_str("rules:\n");
    let id_w = RULES.iter().map(|r| r.id.len()).max().unwrap_or(4);
    for r in RULES {
        let level = config.severity(r.id).map(Severity::name).unwrap_or("off");
        let from = if config.severity(r.id) != plain.severity(r.id) {
            "--select/--ignore".to_string()
        } else if let Some(o) = plain.override_for(r.id) {
            format!(
                "[[overrides]] files = [{}]",
                o.patterns
                    .iter()
                    .map(|p| format!("\"{}\"", crate::text::escape_controls(p)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else if plain.sets_level(r.id) {
            "configuration [rules]".to_string()
        } else {
            "default".to_string()
        };
        s.push_str(&format!("  {:<id_w$}  {level:<7}  ({from})\n", r.id));
    }
    // The catalogue tables the configuration adds (`[[boundary]]`, ...), by file.
    if config.additions.iter().all(|(_, t)| t.is_empty()) {
        s.push_str("catalogue additions: none\n");
    } else {
        s.push_str("catalogue additions (`idemlint catalogue --no-builtin` prints them):\n");
        for (origin, table) in &config.additions {
            for (name, v) in table {
                // An array of tables (`[[boundary]]`) counts its entries; a table (`[keys]`)
                // is one.
                let header = match v.as_array() {
                    Some(a) => format!("[[{}]] × {}", crate::text::escape_controls(name), a.len()),
                    None => format!("[{}]", crate::text::escape_controls(name)),
                };
                s.push_str(&format!("  {header}  (from {})\n", esc(origin)));
            }
        }
    }
    let _ = out.write_all(s.as_bytes());
    EXIT_CLEAN
}

/// `idemlint catalogue`: the built-in catalogue files (verbatim, comments included; only
/// the requested tables, re-serialised, with `--table`) and the catalogue tables of the
/// configuration that governs `path` (and of the files it extends), as TOML a user could
/// paste into an `idemlint.toml`. Exit 2 for an unknown table or an invalid configuration.
fn print_catalogue(
    path: &Path,
    tables: &[String],
    config_file: Option<&Path>,
    no_builtin: bool,
    out: &mut dyn Write,
) -> i32 {
    let known = crate::catalogue::table_names();
    for t in tables {
        if !known.contains(&t.as_str()) {
            eprintln!(
                "error: unknown catalogue table `{}`{}\n  known tables: {}",
                crate::text::escape_controls(t),
                did_you_mean(t, &known)
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default(),
                known.join(", ")
            );
            return EXIT_TOOL_ERROR;
        }
    }
    let builtin = Catalogue::builtin();
    let config = match crate::config::Resolver::new(&builtin, config_file, RuleSelection::default())
        .and_then(|mut r| r.for_path(path))
    {
        Ok(c) => c,
        Err(e) => {
            eprint!("{}", crate::config::render_error(&e, false));
            return EXIT_TOOL_ERROR;
        }
    };
    let keep = |t: &toml::Table| -> Option<String> {
        let kept: toml::Table = t
            .iter()
            .filter(|(k, _)| tables.is_empty() || tables.contains(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if kept.is_empty() {
            return None;
        }
        toml::to_string(&kept).ok()
    };
    let mut s = String::from(
        "# The idemlint catalogue: the built-in entries (rules/*.toml, compiled in), then the\n# additions of the configuration that governs the path. Entries have the shape a\n# configuration file's catalogue tables take (docs/configuration.md).\n",
    );
    if !no_builtin {
        for (name, text) in crate::catalogue::BUILTIN {
            let body = if tables.is_empty() {
                Some(text.to_string())
            } else {
                text.parse::<toml::Table>().ok().as_ref().and_then(keep)
            };
            if let Some(body) = body {
                s.push_str(&format!("\n# ── built-in: rules/{name} ──\n\n{}", body));
                if !s.ends_with('\n') {
                    s.push('\n');
                }
            }
        }
    }
    let esc = |p: &Path| crate::text::escape_controls(&crate::config::display_path(p));
    if config.additions.is_empty() {
        s.push_str(&format!(
            "\n# ── {}: no catalogue additions ──\n",
            match &config.origin {
                Some(o) => format!("configuration {}", esc(o)),
                None => "no configuration".to_string(),
            }
        ));
    }
    for (file, table) in &config.additions {
        if let Some(body) = keep(table) {
            s.push_str(&format!("\n# ── configuration: {} ──\n\n{body}", esc(file)));
        }
    }
    // A committed configuration's strings may hold bidi overrides (which reorder what a
    // reader sees); control characters are escaped by the TOML writer already.
    let _ = out.write_all(crate::text::escape_controls_toml(&s).as_bytes());
    EXIT_CLEAN
}

/// Writes `bytes` to standard output: a reader that closed the pipe early (`| head`) is
/// not an error, as for `check`'s report; any other write error is (exit 2).
fn write_stdout(out: &mut dyn Write, bytes: &[u8], what: &str) -> i32 {
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => EXIT_CLEAN,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => EXIT_CLEAN,
        Err(e) => {
            eprintln!("error: could not write {what}: {e}");
            EXIT_TOOL_ERROR
        }
    }
}

/// The file `idemlint init` writes.
const STARTER: &str = include_str!("starter.toml");

/// `idemlint init DIR`: writes DIR/idemlint.toml unless a configuration is already there.
fn init(dir: &Path) -> i32 {
    let target = dir.join("idemlint.toml");
    for existing in ["idemlint.toml", ".idemlint.toml"] {
        let p = dir.join(existing);
        if std::fs::symlink_metadata(&p).is_ok() {
            eprintln!(
                "error: {} already exists; not overwriting it",
                crate::text::escape_controls(&p.display().to_string())
            );
            return EXIT_TOOL_ERROR;
        }
    }
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&target)
        .and_then(|mut f| f.write_all(STARTER.as_bytes()));
    match written {
        Ok(()) => {
            eprintln!(
                "idemlint: wrote {}; `idemlint check --show-settings {}` shows what it sets",
                crate::text::escape_controls(&target.display().to_string()),
                crate::text::escape_controls(&dir.display().to_string())
            );
            EXIT_CLEAN
        }
        Err(e) => {
            eprintln!(
                "error: could not write {}: {e}",
                crate::text::escape_controls(&target.display().to_string())
            );
            EXIT_TOOL_ERROR
        }
    }
}

/// The `--diff` text as written: on a terminal, control characters from the source
/// (ESC, OSC, bidi overrides; not tab or newline) are escaped, so a file under review
/// cannot retitle the terminal or write the clipboard; to a file or a pipe it stays byte
/// for byte, so `patch` and `git apply` take it.
pub fn diff_for(diff: String, terminal: bool) -> String {
    if terminal {
        crate::text::escape_controls_multiline(&diff)
    } else {
        diff
    }
}

/// Refuses, before anything is analysed, outputs that would destroy an input: a report or
/// baseline written over a Rust, Java or Kotlin file (`--output Billing.kt`, a slip or a
/// name smuggled in as an argument, replaced the source with the report), the report and
/// the new baseline on one file (one silently replaced the other), and the report over
/// the `--baseline` it is read with. (`--baseline F --write-baseline F`, pruning in place,
/// is the documented way to update a baseline and stays allowed.)
fn check_output_paths(
    output: Option<&Path>,
    write_baseline: Option<&Path>,
    baseline: Option<&Path>,
) -> Result<(), String> {
    let output = output.filter(|p| *p != Path::new("-"));
    let show = |p: &Path| crate::text::escape_controls(&p.display().to_string());
    for (flag, p) in [("--output", output), ("--write-baseline", write_baseline)] {
        if let Some(p) = p
            && crate::model::Language::from_path(p).is_some()
        {
            return Err(format!(
                "{flag} `{}` names a Rust, Java or Kotlin source file; idemlint does not write its reports over source files (choose another name)",
                show(p)
            ));
        }
    }
    let same = |a: &Path, b: &Path| {
        if crate::fsio::lexical_normal(a) == crate::fsio::lexical_normal(b) {
            return true;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
                return x.dev() == y.dev() && x.ino() == y.ino();
            }
        }
        false
    };
    if let (Some(o), Some(w)) = (output, write_baseline)
        && same(o, w)
    {
        return Err(format!(
            "--output and --write-baseline both name `{}`; one would replace the other",
            show(o)
        ));
    }
    if let (Some(o), Some(b)) = (output, baseline)
        && same(o, b)
    {
        return Err(format!(
            "--output `{}` is the --baseline file; the report would replace the baseline",
            show(o)
        ));
    }
    Ok(())
}

/// Writes a rendered report to `output` (through a temporary file renamed over it, see
/// [`crate::fsio::write_atomic`]) or, when `output` is `None` or `-`, to `stdout`. The
/// error names the file.
/// Writes the report to `output` or standard output. A reader that went away (`| head`,
/// a pager quit early: `EPIPE`) is not an error: the rest is dropped silently, as grep and
/// ruff do, and the run exits with the code it would have had.
fn write_report(output: Option<&Path>, text: &str, stdout: &mut dyn Write) -> Result<(), String> {
    match output {
        Some(path) if path != Path::new("-") => crate::fsio::write_atomic(
            path,
            text.as_bytes(),
            crate::fsio::WriteTarget::Named,
            None,
        )
        .map_err(|e| {
            format!(
                "could not write the report to `{}`: {e} (`-o -` writes to standard output)",
                crate::text::escape_controls(&path.display().to_string())
            )
        }),
        _ => match stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
        {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            r => r.map_err(|e| format!("could not write the report to standard output: {e}")),
        },
    }
}

/// Most bytes read from standard input without `--max-file-size` (1 GiB); the
/// configuration's `max-file-size` (default 10 MiB) then applies.
const MAX_STDIN_BYTES: u64 = 1 << 30;

/// `check --stdin-filename NAME -`: reads standard input and checks it as `NAME`.
fn check_stdin(
    opts: &Options,
    name: Option<&Path>,
    catalogue: &Catalogue,
) -> Result<Report, ToolError> {
    let Some(name) = name else {
        return Err(ToolError::Usage(
            "reading standard input (`-`) needs --stdin-filename NAME; its extension picks the language".into(),
        ));
    };
    if opts.paths.iter().any(|p| p != Path::new("-")) {
        return Err(ToolError::Usage(
            "with --stdin-filename, the only PATH allowed is `-`".into(),
        ));
    }
    // Bounded: the configuration's `max-file-size` is applied once it is known; this is
    // the most any configuration could ask for without `--max-file-size`.
    let cap = opts.max_file_size.unwrap_or(MAX_STDIN_BYTES);
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::Usage(format!("cannot read standard input: {e}")))?;
    let display = crate::text::escape_controls(&name.to_string_lossy().replace('\\', "/"));
    if bytes.len() as u64 > cap {
        return Ok(Report {
            errors: vec![crate::finding::FileError {
                path: display,
                line: None,
                column: None,
                message: format!(
                    "standard input: {}",
                    crate::check::too_large_message(None, cap)
                ),
            }],
            files: 1,
            ..Report::default()
        });
    }
    match crate::check::decode_source(bytes) {
        Ok(text) => run_text(&display, &text, opts, catalogue),
        Err(e) => Ok(Report {
            errors: vec![crate::finding::FileError {
                path: display,
                line: e.position.map(|p| p.0),
                column: e.position.map(|p| p.1),
                message: format!("standard input: {}", e.message),
            }],
            files: 1,
            ..Report::default()
        }),
    }
}

/// `--baseline` / `--write-baseline` over a finished report. Notes go to stderr (not with
/// `--quiet`); stale entries are warned about on stderr always.
fn adopt_baseline(
    report: &mut Report,
    read: Option<&Path>,
    write: Option<&Path>,
    quiet: bool,
) -> Result<(), String> {
    if read.is_none() && write.is_none() {
        return Ok(());
    }
    let findings = std::mem::take(&mut report.findings);
    let scope = crate::baseline::Scope::of(report.scope.as_ref());
    let adopted = crate::baseline::adopt(findings, read, write, &scope)?;
    if write.is_some() && read.is_none() && scope.partial() && !quiet {
        eprintln!(
            "idemlint: the baseline records the findings of the files this run reports on (--only, --files-from, --changed-since, --shard or standard input), not the project's"
        );
    }
    report.findings = adopted.findings;
    if let Some((file, entries, findings, dropped)) = adopted.written.as_ref().filter(|_| !quiet) {
        eprintln!(
            "idemlint: wrote {file}: {entries} entr{} for {findings} finding{}{}",
            if *entries == 1 { "y" } else { "ies" },
            if *findings == 1 { "" } else { "s" },
            if *dropped > 0 {
                format!(" ({dropped} no longer found, dropped)")
            } else {
                String::new()
            }
        );
    }
    if let Some(o) = &adopted.outcome {
        if o.matched > 0 && !quiet {
            eprintln!(
                "idemlint: {} finding{} recorded in {} not shown",
                o.matched,
                if o.matched == 1 { "" } else { "s" },
                o.file
            );
        }
        // The first few stale entries one per line, then one summary line.
        const SHOWN: usize = 5;
        let esc = crate::text::escape_controls;
        for s in o.stale.iter().take(SHOWN) {
            eprintln!(
                "warning: stale baseline entry in {}: {} `{}` in {} (recorded {}, found {})",
                o.file,
                esc(&s.rule),
                esc(&s.source),
                esc(&s.path),
                s.recorded,
                s.found
            );
        }
        if !o.stale.is_empty() {
            let more = o.stale.len().saturating_sub(SHOWN);
            eprintln!(
                "warning: {} stale baseline entr{} in {}{}; rewrite the baseline with --baseline {} --write-baseline {} to drop {}",
                o.stale.len(),
                if o.stale.len() == 1 { "y" } else { "ies" },
                o.file,
                if more > 0 {
                    format!(" ({more} not listed; the JSON output's `baseline.stale` has them all)")
                } else {
                    String::new()
                },
                o.file,
                o.file,
                if o.stale.len() == 1 { "it" } else { "them" }
            );
        }
    }
    report.baseline = adopted.outcome;
    Ok(())
}

/// Colour on stderr, by `--color`.
fn stderr_colour(choice: ColorChoice) -> bool {
    use std::io::IsTerminal;
    choice.colour(std::io::stderr().is_terminal())
}

/// The closest candidate within edit distance 3, for "did you mean" (see
/// [`crate::text::did_you_mean`]).
pub use crate::text::did_you_mean;

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
