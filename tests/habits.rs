//! The command-line habits users bring from ruff, clippy, detekt and semgrep: `--fail-on`,
//! the summary line on standard error, `--color`, `--statistics`, `--show-settings`,
//! `--show-files`, `init`, `explain`, `rules`, `completions`, `man`, `--version`, `--diff`
//! exit codes, "did you mean" prefixes, help built from the operation, one finding per bug,
//! `extend`, `[[overrides]]`, `--add-suppression` and `catalogue`.

mod common;

use std::path::{Path, PathBuf};

use common::Out;

/// `idemlint` with none of the colour variables of the environment the tests run in.
fn scratch(name: &str) -> PathBuf {
    common::scratch("habits", name)
}

const RETRY_BUG: &str = r#"
import java.util.UUID

suspend fun charge(api: Api, body: Body): Charge =
    retryOnTransient {
        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)
    }
"#;

/// A `time-in-key` warning and nothing else.
const TIME_KEY: &str = r#"
fun charge(api: Api, body: Body): Charge =
    api.createCharge(idempotencyKey = "c-${System.currentTimeMillis()}", body = body)
"#;

fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    common::run_env(dir, args, env)
}

#[test]
fn fail_on_picks_the_severities_that_fail() {
    let d = scratch("fail-on");
    std::fs::write(d.join("Time.kt"), TIME_KEY).unwrap();
    // A warning fails by default and with --fail-on warning/note, not with --fail-on error.
    assert_eq!(run(&d, &["check", "Time.kt"], &[]).code, 1);
    assert_eq!(
        run(&d, &["check", "Time.kt", "--fail-on", "warning"], &[]).code,
        1
    );
    assert_eq!(
        run(&d, &["check", "Time.kt", "--fail-on", "note"], &[]).code,
        1
    );
    let o = run(&d, &["check", "Time.kt", "--fail-on", "error"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    // Values are case-insensitive, as users type them.
    let upper = run(
        &d,
        &[
            "check",
            "Time.kt",
            "--fail-on",
            "ERROR",
            "--format",
            "SHORT",
        ],
        &[],
    );
    assert_eq!(upper.code, 0, "{}", upper.stderr);
    assert!(
        o.stdout.contains("time-in-key"),
        "still reported: {}",
        o.stdout
    );

    // A note never fails by default; --fail-on note makes it fail. The summary counts it
    // as a note.
    std::fs::write(d.join("idemlint.toml"), "[rules]\ntime-in-key = \"note\"\n").unwrap();
    let o = run(&d, &["check", "Time.kt", "--format", "short"], &[]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("note[time-in-key]"), "{}", o.stdout);
    assert!(
        o.stderr
            .contains("1 finding (0 errors, 0 warnings, 1 note)"),
        "{}",
        o.stderr
    );
    assert_eq!(
        run(&d, &["check", "Time.kt", "--fail-on", "note"], &[]).code,
        1
    );

    // An error fails under every setting; --exit-zero still wins.
    std::fs::write(d.join("Retry.kt"), RETRY_BUG).unwrap();
    assert_eq!(
        run(&d, &["check", "Retry.kt", "--fail-on", "error"], &[]).code,
        1
    );
    assert_eq!(
        run(
            &d,
            &["check", "Retry.kt", "--fail-on", "error", "--exit-zero"],
            &[]
        )
        .code,
        0
    );
    let o = run(&d, &["check", "Retry.kt", "--fail-on", "fatal"], &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("--fail-on"), "{}", o.stderr);
}

#[test]
fn summary_line_on_stderr_in_every_format_and_with_output() {
    let d = scratch("summary");
    std::fs::write(d.join("Retry.kt"), RETRY_BUG).unwrap();
    let summary = "idemlint: 1 finding (1 error, 0 warnings) in 1 file checked";
    for format in ["json", "sarif", "github", "short"] {
        let o = run(&d, &["check", "Retry.kt", "--format", format], &[]);
        assert_eq!(o.code, 1);
        assert!(o.stderr.contains(summary), "{format}: {}", o.stderr);
        assert!(
            !o.stdout.contains(summary),
            "{format}: summary in the report"
        );
        let o = run(&d, &["check", "Retry.kt", "--format", format, "-q"], &[]);
        assert_eq!(o.stderr, "", "{format} --quiet");
    }
    for format in ["human", "json", "sarif", "github", "short"] {
        let file = format!("report.{format}");
        let o = run(
            &d,
            &["check", "Retry.kt", "--format", format, "--output", &file],
            &[],
        );
        assert_eq!(o.code, 1);
        assert_eq!(o.stdout, "", "{format}");
        assert!(
            o.stderr.contains(summary),
            "{format} --output: {}",
            o.stderr
        );
        let o = run(
            &d,
            &[
                "check", "Retry.kt", "--format", format, "--output", &file, "--quiet",
            ],
            &[],
        );
        assert_eq!(o.stderr, "", "{format} --output --quiet");
    }
    // The human report on standard output ends with the summary (and its fixes line),
    // printed once.
    let o = run(&d, &["check", "Retry.kt"], &[]);
    let tail: Vec<&str> = o.stdout.trim_end().lines().rev().take(2).collect();
    assert!(tail[0].starts_with("idemlint: fixes: "), "{}", o.stdout);
    assert!(summary.starts_with(tail[1]), "{}", o.stdout);
    assert!(!o.stderr.contains(summary), "{}", o.stderr);
}

#[test]
fn color_flag_and_environment() {
    let d = scratch("color");
    std::fs::write(d.join("Retry.kt"), RETRY_BUG).unwrap();
    let esc = |args: &[&str], env: &[(&str, &str)]| {
        let mut a = vec!["check", "Retry.kt"];
        a.extend_from_slice(args);
        let o = run(&d, &a, env);
        assert_eq!(o.code, 1, "{}", o.stderr);
        o.stdout.contains('\u{1b}')
    };
    // Standard output is a pipe here: auto means no colour...
    assert!(!esc(&[], &[]));
    assert!(!esc(&["--color", "auto"], &[]));
    // ...unless forced, by the flag or the environment.
    assert!(esc(&["--color", "always"], &[]));
    assert!(esc(&[], &[("FORCE_COLOR", "1")]));
    assert!(esc(&[], &[("CLICOLOR_FORCE", "1")]));
    assert!(!esc(&[], &[("FORCE_COLOR", "0")]));
    // NO_COLOR wins over the forcing variables; the flag wins over everything.
    assert!(!esc(&[], &[("NO_COLOR", "1"), ("FORCE_COLOR", "1")]));
    assert!(!esc(&["--color", "never"], &[("FORCE_COLOR", "1")]));
    assert!(esc(&["--color", "always"], &[("NO_COLOR", "1")]));
    // A report written to a file is plain unless --color always.
    let o = run(
        &d,
        &["check", "Retry.kt", "-o", "r.txt"],
        &[("FORCE_COLOR", "1")],
    );
    assert_eq!(o.code, 1);
    assert!(
        !std::fs::read_to_string(d.join("r.txt"))
            .unwrap()
            .contains('\u{1b}')
    );
    assert_eq!(
        run(&d, &["check", "Retry.kt", "--color", "sometimes"], &[]).code,
        2
    );
}

#[test]
fn statistics_counts_findings_per_rule() {
    let d = scratch("statistics");
    std::fs::write(d.join("Retry.kt"), RETRY_BUG).unwrap();
    std::fs::write(
        d.join("Retry2.kt"),
        RETRY_BUG.replace("charge(", "charge2("),
    )
    .unwrap();
    std::fs::write(d.join("Time.kt"), TIME_KEY).unwrap();
    let o = run(&d, &["check", ".", "--statistics"], &[]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let lines: Vec<Vec<&str>> = o
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines,
        vec![
            vec!["count", "rule", "severity"],
            vec!["2", "key-in-retry-scope", "error"],
            vec!["1", "time-in-key", "warning"],
        ],
        "{}",
        o.stdout
    );
    assert!(o.stderr.contains("idemlint: 3 findings"), "{}", o.stderr);
    // No findings: only the header.
    let clean = scratch("statistics-clean");
    let o = run(&clean, &["check", ".", "--statistics"], &[]);
    assert_eq!(o.code, 0);
    assert_eq!(o.stdout.lines().count(), 1);
}

#[test]
fn show_settings_names_the_configuration_and_its_effect() {
    let d = scratch("show-settings");
    std::fs::create_dir_all(d.join("svc/gen")).unwrap();
    std::fs::write(
        d.join("svc/idemlint.toml"),
        "exclude = [\"gen\"]\n[rules]\ntime-in-key = \"off\"\n\n[[boundary]]\ncallee = [\"persist\"]\nreceiver = [\"Patiently\"]\nlabel = \"Acme patient retry\"\n",
    )
    .unwrap();
    std::fs::write(d.join("svc/A.kt"), TIME_KEY).unwrap();
    std::fs::write(d.join("svc/gen/B.kt"), TIME_KEY).unwrap();
    std::fs::write(d.join("Top.kt"), TIME_KEY).unwrap();

    let o = run(&d, &["check", "--show-settings", "svc/A.kt"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout
            .contains("svc/idemlint.toml (the nearest configuration file)"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("analysed: yes"), "{}", o.stdout);
    let rule_line = |out: &str, rule: &str| {
        out.lines()
            .find(|l| l.split_whitespace().next() == Some(rule))
            .unwrap()
            .split_whitespace()
            .skip(1)
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(
        rule_line(&o.stdout, "time-in-key"),
        "off (configuration [rules])"
    );
    assert_eq!(
        rule_line(&o.stdout, "key-in-retry-scope"),
        "error (default)"
    );

    // The configuration's catalogue additions are named, with where they come from.
    assert!(
        o.stdout.contains("  [[boundary]] × 1  (from ") && o.stdout.contains("svc/idemlint.toml)"),
        "{}",
        o.stdout
    );

    let o = run(&d, &["check", "--show-settings", "svc/gen/B.kt"], &[]);
    assert!(o.stdout.contains("analysed: no"), "{}", o.stdout);

    let o = run(
        &d,
        &[
            "check",
            "--show-settings",
            "Top.kt",
            "--ignore",
            "key-in-retry-scope",
        ],
        &[],
    );
    assert!(o.stdout.contains("built-in defaults"), "{}", o.stdout);
    assert!(
        o.stdout.contains("catalogue additions: none"),
        "{}",
        o.stdout
    );
    assert_eq!(
        rule_line(&o.stdout, "key-in-retry-scope"),
        "off (--select/--ignore)"
    );
    assert_eq!(rule_line(&o.stdout, "time-in-key"), "warning (default)");

    let o = run(
        &d,
        &[
            "check",
            "--show-settings",
            "Top.kt",
            "--config",
            "svc/idemlint.toml",
        ],
        &[],
    );
    assert!(o.stdout.contains("(given with --config)"), "{}", o.stdout);

    std::fs::write(d.join("svc/idemlint.toml"), "[rules]\nbogus = \"off\"\n").unwrap();
    assert_eq!(
        run(&d, &["check", "--show-settings", "svc/A.kt"], &[]).code,
        2
    );
}

#[test]
fn show_files_lists_what_would_be_checked() {
    let d = scratch("show-files");
    std::fs::create_dir_all(d.join("svc/gen")).unwrap();
    std::fs::write(d.join("svc/idemlint.toml"), "exclude = [\"gen\"]\n").unwrap();
    std::fs::write(d.join("svc/A.kt"), TIME_KEY).unwrap();
    std::fs::write(d.join("svc/gen/B.kt"), TIME_KEY).unwrap();
    std::fs::write(d.join("Top.java"), "class Top {}").unwrap();
    std::fs::write(d.join("notes.txt"), "not source").unwrap();
    let o = run(&d, &["check", ".", "--show-files"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let files: Vec<(&str, &str)> = o
        .stdout
        .lines()
        .map(|l| l.split_once('\t').unwrap())
        .collect();
    assert_eq!(files.len(), 2, "{}", o.stdout);
    assert_eq!(files[0], ("Top.java", "built-in defaults"));
    assert_eq!(files[1].0, "svc/A.kt");
    assert!(files[1].1.ends_with("svc/idemlint.toml"), "{}", files[1].1);
    // A shard lists only its own files; together they are all of them.
    let mut all = Vec::new();
    for s in ["1/2", "2/2"] {
        let o = run(&d, &["check", ".", "--show-files", "--shard", s], &[]);
        all.extend(o.stdout.lines().map(str::to_owned));
    }
    all.sort();
    assert_eq!(all, o.stdout.lines().map(str::to_owned).collect::<Vec<_>>());
}

#[test]
fn init_writes_a_starter_configuration_and_never_overwrites() {
    let d = scratch("init");
    let o = run(&d, &["init"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let written = std::fs::read_to_string(d.join("idemlint.toml")).unwrap();
    assert!(written.starts_with("# idemlint configuration"));
    assert!(written.contains("[rules]"));
    // It is a valid configuration: a check under it runs and the file is found.
    std::fs::write(d.join("Retry.kt"), RETRY_BUG).unwrap();
    let o = run(&d, &["check", "--show-settings", "Retry.kt"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("idemlint.toml (the nearest"),
        "{}",
        o.stdout
    );
    assert_eq!(run(&d, &["check", "Retry.kt"], &[]).code, 1);
    // Every commented-out setting is valid too once uncommented.
    let uncommented: String = written
        .lines()
        .map(|l| {
            let t = l.strip_prefix("# ").unwrap_or(l);
            // `extend` names a file that need not exist here.
            if (t.contains('=') || t.starts_with('[')) && !t.starts_with("extend") {
                t
            } else {
                ""
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let full = scratch("init-full");
    std::fs::write(full.join("idemlint.toml"), uncommented).unwrap();
    std::fs::write(full.join("Retry.kt"), RETRY_BUG).unwrap();
    let o = run(&full, &["check", "--show-settings", "Retry.kt"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("require-suppression-reason: true"),
        "{}",
        o.stdout
    );

    // A second init refuses and leaves the file alone.
    std::fs::write(d.join("idemlint.toml"), "# mine\n").unwrap();
    let o = run(&d, &["init"], &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("already exists"), "{}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(d.join("idemlint.toml")).unwrap(),
        "# mine\n"
    );
    // So does an init next to a .idemlint.toml, and one into another directory works.
    let hidden = scratch("init-hidden");
    std::fs::write(hidden.join(".idemlint.toml"), "").unwrap();
    assert_eq!(run(&hidden, &["init"], &[]).code, 2);
    assert!(!hidden.join("idemlint.toml").exists());
    std::fs::create_dir_all(d.join("sub")).unwrap();
    assert_eq!(run(&d, &["init", "sub"], &[]).code, 0);
    assert!(d.join("sub/idemlint.toml").is_file());
}

#[test]
fn explain_is_case_insensitive_and_suggests() {
    let d = scratch("explain");
    for id in [
        "key-in-retry-scope",
        "Key-In-Retry-Scope",
        "KEY_IN_RETRY_SCOPE",
    ] {
        let o = run(&d, &["explain", id], &[]);
        assert_eq!(o.code, 0, "{id}: {}", o.stderr);
        assert!(o.stdout.starts_with("# key-in-retry-scope\n"), "{id}");
        // Links to the project's docs are paths from the repository root, not relative
        // to a file the terminal reader does not have open.
        assert!(
            o.stdout.contains("](docs/configuration.md#suppressions)")
                && !o.stdout.contains("](../"),
            "{id}"
        );
    }
    let o = run(&d, &["explain", "Key-In-Retry-Scop"], &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("did you mean `key-in-retry-scope`?"),
        "{}",
        o.stderr
    );
    // Without a rule: the known rules, not a bare usage error.
    let o = run(&d, &["explain"], &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("known rules: interceptor-mints-key, "),
        "{}",
        o.stderr
    );
    // Shell completions offer the rule ids for `explain`.
    let o = run(&d, &["completions", "bash"], &[]);
    assert!(o.stdout.contains("key-in-retry-scope"), "{}", o.stdout);
}

#[test]
fn help_says_check_is_the_default() {
    let d = scratch("help");
    let o = run(&d, &["--help"], &[]);
    assert_eq!(o.code, 0);
    assert!(
        o.stdout.contains("`check` is the default command"),
        "{}",
        o.stdout
    );
    let o = run(&d, &["help"], &[]);
    assert!(o.stdout.contains("the default command"), "{}", o.stdout);
}

#[test]
fn rules_are_aligned() {
    let d = scratch("rules");
    let o = run(&d, &["rules"], &[]);
    assert_eq!(o.code, 0);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 1 + idemlint::rules::RULES.len());
    // The severity and summary columns start at the same offset on every line: the
    // first two places where a word follows a run of spaces.
    let starts = |l: &str| {
        let b = l.as_bytes();
        let cols: Vec<usize> = (1..b.len())
            .filter(|&i| b[i] != b' ' && b[i - 1] == b' ')
            .take(2)
            .collect();
        (cols[0], cols[1])
    };
    let first = starts(lines[0]);
    for l in &lines {
        assert_eq!(starts(l), first, "{l}");
    }
}

#[test]
fn completions_and_man_page() {
    let d = scratch("completions");
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = run(&d, &["completions", shell], &[]);
        assert_eq!(o.code, 0, "{shell}: {}", o.stderr);
        assert!(o.stdout.contains("idemlint"), "{shell}");
        assert!(
            o.stdout.contains("fail-on"),
            "{shell}: flags of check are completed"
        );
    }
    assert_eq!(run(&d, &["completions", "tcsh"], &[]).code, 2);
    let o = run(&d, &["man"], &[]);
    assert_eq!(o.code, 0);
    assert!(
        o.stdout.contains(".TH idemlint 1"),
        "{}",
        &o.stdout[..200.min(o.stdout.len())]
    );
    assert!(o.stdout.contains("check"));
}

#[test]
fn version_shows_the_commit_when_built_from_git() {
    let d = scratch("version");
    let o = run(&d, &["--version"], &[]);
    assert_eq!(o.code, 0);
    let v = o.stdout.trim();
    let prefix = format!("idemlint {}", env!("CARGO_PKG_VERSION"));
    assert!(v.starts_with(&prefix), "{v}");
    if Path::new(env!("CARGO_MANIFEST_DIR")).join(".git").exists() {
        let re = regex::Regex::new(r"^idemlint \S+ \([0-9a-f]{12}\)$").unwrap();
        assert!(re.is_match(v), "{v}");
    } else {
        assert_eq!(v, prefix);
    }
}

#[test]
fn progress_only_on_a_terminal_unless_asked() {
    let d = scratch("progress");
    std::fs::write(d.join("Retry.kt"), RETRY_BUG).unwrap();
    std::fs::write(d.join("Time.kt"), TIME_KEY).unwrap();
    // Standard error is a pipe here (a CI log): no progress by default.
    let o = run(&d, &["check", ".", "--format", "short"], &[]);
    let summary_lines = o
        .stderr
        .lines()
        .filter(|l| !l.starts_with("idemlint: fixes: "))
        .count();
    assert_eq!(summary_lines, 1, "{}", o.stderr);
    let o = run(&d, &["check", ".", "--progress", "auto"], &[("CI", "true")]);
    assert!(!o.stderr.contains("analysing"), "{}", o.stderr);
    // Asked for: plain lines, ending with the last phase's count, before the summary.
    let o = run(
        &d,
        &["check", ".", "--format", "short", "--progress", "always"],
        &[],
    );
    assert_eq!(o.code, 1);
    let lines: Vec<&str> = o
        .stderr
        .lines()
        .filter(|l| !l.starts_with("idemlint: fixes: "))
        .collect();
    assert_eq!(
        lines[lines.len() - 2],
        "idemlint: analysing 2/2 files that can have a finding",
        "{}",
        o.stderr
    );
    assert!(
        lines[lines.len() - 1].starts_with("idemlint: 2 findings"),
        "{}",
        o.stderr
    );
    assert!(
        !o.stderr.contains('\u{1b}'),
        "no terminal codes in a log: {}",
        o.stderr
    );
    assert!(
        !o.stdout.contains("analysing"),
        "progress stays off standard output"
    );
    let o = run(
        &d,
        &["check", ".", "--progress", "never", "--format", "json"],
        &[],
    );
    assert!(!o.stderr.contains("analysing"), "{}", o.stderr);
}

/// `--diff` follows check's exit-code rules (findings at or above `--fail-on` give 1,
/// `--exit-zero` 0) and also exits 1 whenever the diff is not empty; the summary line is on
/// standard error, after the diff's own line.
#[test]
fn diff_exits_like_check_and_keeps_the_summary() {
    let d = scratch("diff-exit");
    // An expression-bodied retry: an error with no fix, so the diff is empty.
    std::fs::write(d.join("Retry.kt"), RETRY_BUG).unwrap();
    let o = run(&d, &["check", "--diff", "Retry.kt"], &[]);
    assert_eq!(o.code, 1, "an error remains: {}", o.stderr);
    assert_eq!(o.stdout, "", "no diff");
    assert!(
        o.stderr
            .contains("idemlint: 1 finding (1 error, 0 warnings) in 1 file checked"),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains(
            "idemlint: --diff: 0 files would be changed; not in the diff: 1 finding without a fix\n"
        ),
        "{}",
        o.stderr
    );
    assert_eq!(
        run(&d, &["check", "--diff", "Retry.kt", "--exit-zero"], &[]).code,
        0
    );
    assert_eq!(
        run(&d, &["check", "--diff", "Retry.kt", "-q"], &[]).stderr,
        ""
    );
    // A warning without a fix fails by default, not with --fail-on error.
    std::fs::write(d.join("Time.kt"), TIME_KEY).unwrap();
    assert_eq!(run(&d, &["check", "--diff", "Time.kt"], &[]).code, 1);
    assert_eq!(
        run(
            &d,
            &["check", "--diff", "Time.kt", "--fail-on", "error"],
            &[]
        )
        .code,
        0
    );
    // A file problem is printed too, not only counted as "reported above".
    // (Not UTF-8: reported whatever the prefilter reads.)
    std::fs::write(d.join("Broken.kt"), b"fun f() = \xff\xfe\n").unwrap();
    let o = run(&d, &["check", "--diff", "Broken.kt", "Time.kt"], &[]);
    assert!(
        o.stderr.contains("1 problem in 1 file reported above"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("Broken.kt"), "{}", o.stderr);
    // With a machine-readable report the problems are in it, and the summary says so
    // rather than pointing "above" at nothing.
    let o = run(
        &d,
        &["check", "Broken.kt", "--format", "json", "-o", "out.json"],
        &[],
    );
    assert!(
        o.stderr.contains("1 problem in 1 file listed in out.json") && !o.stderr.contains("above"),
        "{}",
        o.stderr
    );
    assert!(
        std::fs::read_to_string(d.join("out.json"))
            .unwrap()
            .contains("Broken.kt")
    );
    let o = run(&d, &["check", "Broken.kt", "--format", "sarif"], &[]);
    assert!(
        o.stderr
            .contains("1 problem in 1 file listed in the report"),
        "{}",
        o.stderr
    );
    std::fs::remove_file(d.join("out.json")).unwrap();
    std::fs::remove_file(d.join("Broken.kt")).unwrap();
    // A fixable finding: the diff on standard output, exit 1 even under --fail-on error's
    // threshold being met anyway; the file is unchanged.
    let fixable = "import java.util.UUID\n\nsuspend fun charge(api: Api, body: Body): Charge {\n    return retryOnTransient {\n        api.createCharge(idempotencyKey = UUID.randomUUID().toString(), body = body)\n    }\n}\n";
    std::fs::write(d.join("Fixable.kt"), fixable).unwrap();
    let o = run(&d, &["check", "--diff", "Fixable.kt"], &[]);
    assert_eq!(o.code, 1);
    assert!(o.stdout.starts_with("--- a/Fixable.kt\n"), "{}", o.stdout);
    assert!(o.stderr.contains("1 file would be changed"), "{}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(d.join("Fixable.kt")).unwrap(),
        fixable
    );
    // With the rule at note level, the finding no longer fails, but a non-empty diff does.
    std::fs::write(
        d.join("idemlint.toml"),
        "[rules]\nkey-in-retry-scope = \"note\"\n",
    )
    .unwrap();
    assert_eq!(run(&d, &["check", "Fixable.kt"], &[]).code, 0);
    assert_eq!(run(&d, &["check", "--diff", "Fixable.kt"], &[]).code, 1);
    std::fs::remove_file(d.join("idemlint.toml")).unwrap();
    // Clean: exit 0, no diff.
    std::fs::write(d.join("Clean.kt"), "fun ok() = 1\n").unwrap();
    let o = run(&d, &["check", "--diff", "Clean.kt"], &[]);
    assert_eq!((o.code, o.stdout.as_str()), (0, ""));
    assert!(o.stderr.contains("0 findings"), "{}", o.stderr);
    // --diff changes nothing, so it cannot write a baseline.
    assert_eq!(
        run(
            &d,
            &["check", "--diff", "Retry.kt", "--write-baseline", "b.json"],
            &[]
        )
        .code,
        2
    );
    assert!(!d.join("b.json").exists());
}

#[test]
fn help_says_each_sentence_once() {
    let d = scratch("help-once");
    for flag in ["--help", "-h"] {
        let o = run(&d, &[flag], &[]);
        assert_eq!(o.code, 0);
        assert_eq!(
            o.stdout.matches("`check` is the default command").count(),
            1,
            "{flag}: {}",
            o.stdout
        );
        let mut seen = std::collections::HashSet::new();
        for line in o.stdout.lines().map(str::trim).filter(|l| l.len() > 20) {
            assert!(seen.insert(line), "{flag} repeats {line:?}");
        }
    }
}

/// "Did you mean" takes plain prefixes too: of rule ids (`explain`, `--select`, the
/// configuration's `[rules]`), of flags (clap's), and of subcommands.
#[test]
fn did_you_mean_takes_prefixes() {
    let d = scratch("did-you-mean");
    std::fs::write(d.join("Time.kt"), TIME_KEY).unwrap();
    let o = run(&d, &["explain", "key-in-retry"], &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("did you mean `key-in-retry-scope`?"),
        "{}",
        o.stderr
    );
    let o = run(&d, &["check", "--select", "time", "Time.kt"], &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("did you mean `time-in-key`?"),
        "{}",
        o.stderr
    );
    let o = run(&d, &["check", "--stat", "Time.kt"], &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("'--statistics'"), "{}", o.stderr);
    for (typed, meant) in [
        ("expl", "explain"),
        ("rul", "rules"),
        ("exlpain", "explain"),
    ] {
        let o = run(&d, &[typed, "key-in-retry-scope"], &[]);
        assert_eq!(o.code, 2, "{typed}");
        assert!(
            o.stderr
                .contains(&format!("did you mean `idemlint {meant}`?")),
            "{typed}: {}",
            o.stderr
        );
    }
    // A path that exists is checked, whatever it is called; one that does not exist and
    // resembles no command is "path not found".
    std::fs::write(d.join("rul"), "").unwrap();
    assert_eq!(run(&d, &["rul"], &[]).code, 0);
    let o = run(&d, &["src"], &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("path not found: src"), "{}", o.stderr);
    std::fs::write(d.join("idemlint.toml"), "[rules]\ntime-in = \"off\"\n").unwrap();
    let o = run(&d, &["check", "Time.kt"], &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("did you mean `time-in-key`?"),
        "{}",
        o.stderr
    );
}

fn help_of(dir: &Path, file: &str, text: &str) -> Vec<String> {
    std::fs::write(dir.join(file), text).unwrap();
    let o = run(dir, &["check", file, "--format", "json"], &[]);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["help"].as_str().unwrap().to_string())
        .collect()
}

/// The help's `derive(…)` names the operation at hand: the enclosing function and the
/// parameters that identify it, or placeholders when the code does not say.
#[test]
fn help_derives_from_the_operations_own_identity() {
    let d = scratch("help-identity");
    let refund = "import java.util.UUID\n\nsuspend fun refund(api: Api, refundId: String, amount: Long): Refund {\n    return retryOnTransient {\n        api.createRefund(idempotencyKey = UUID.randomUUID().toString(), refundId = refundId)\n    }\n}\n";
    let h = help_of(&d, "Refund.kt", refund);
    assert_eq!(h.len(), 1);
    assert!(
        h[0].contains("`IdemKey.derive(\"refund\", refundId)`"),
        "{}",
        h[0]
    );
    assert!(!h[0].contains("billingPeriod"), "{}", h[0]);
    // And says where `IdemKey` comes from, once.
    assert_eq!(
        h[0].matches("copy `crates/idemkey/java/IdemKey.java`")
            .count(),
        1,
        "{}",
        h[0]
    );
    // Java, a leading verb dropped, two identifiers.
    let java = "class Billing {\n  Charge createCharge(Api api, String customerId, String billingPeriod) {\n    return retryTemplate.execute(ctx -> api.charge(UUID.randomUUID().toString(), customerId));\n  }\n  interface Api { @POST(\"c\") Charge charge(@Header(\"Idempotency-Key\") String key, String c); }\n}\n";
    let h = help_of(&d, "Billing.java", java);
    assert!(
        h[0].contains("IdemKey.derive(\"charge\", customerId, billingPeriod)"),
        "{}",
        h[0]
    );
    // Rust.
    let rust = "fn settle_payout(client: &Client, payout_id: &str) {\n    backoff::retry(policy, || {\n        client.post(URL).header(\"Idempotency-Key\", uuid::Uuid::new_v4().to_string()).send()\n    });\n}\n";
    let h = help_of(&d, "payout.rs", rust);
    assert!(
        h[0].contains("idemkey::derive(\"settle-payout\", [payout_id])"),
        "{}",
        h[0]
    );
    // Nothing identifies the operation: the help says so instead of inventing fields.
    let h = help_of(&d, "Retry.kt", RETRY_BUG);
    assert!(
        h[0].contains("IdemKey.derive(\"charge\", <what identifies this charge>)"),
        "{}",
        h[0]
    );
}

/// The fix summary gives the true reason when the function is expression-bodied.
#[test]
fn no_fix_reason_for_an_expression_body() {
    let d = scratch("expression-body");
    std::fs::write(
        d.join("ChargeRetry.kt"),
        r#"import io.github.resilience4j.retry.Retry
import java.util.UUID

class ChargeService(private val retry: Retry, private val api: ChargesApi) {
    fun charge(orderId: String, amountCents: Long): Charge =
        retry.executeSupplier {
            val key = UUID.randomUUID().toString()
            api.createCharge(key, orderId, amountCents)
        }
}

interface ChargesApi {
    fun createCharge(idempotencyKey: String, orderId: String, amountCents: Long): Charge
}
"#,
    )
    .unwrap();
    let o = run(&d, &["check", "ChargeRetry.kt"], &[]);
    assert_eq!(o.code, 1);
    let line = o
        .stdout
        .lines()
        .find(|l| l.starts_with("idemlint: fixes: "))
        .unwrap();
    assert!(line.contains("the function is expression-bodied"), "{line}");
    assert!(!line.contains("own line"), "{line}");
}

/// One bug, one finding: a clock inside a retry scope is one `key-in-retry-scope` finding
/// that gives the `time-in-key` reason too; different sources on one line stay apart, and
/// a clock outside a retry is `time-in-key` alone.
#[test]
fn one_finding_per_bug() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture = "fixtures/kotlin/key-in-retry-scope/clock_in_retry_is_one_finding.kt";
    let o = run(root, &["check", fixture, "--format", "json"], &[]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let got: Vec<(u64, &str, &str, Vec<&str>)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["line"].as_u64().unwrap(),
                f["rule"].as_str().unwrap(),
                f["source"].as_str().unwrap(),
                f["also"]
                    .as_array()
                    .map(|a| a.iter().map(|x| x["rule"].as_str().unwrap()).collect())
                    .unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                11,
                "key-in-retry-scope",
                "System.currentTimeMillis()",
                vec!["time-in-key"]
            ),
            (18, "key-in-retry-scope", "UUID.randomUUID()", vec![]),
            (
                18,
                "key-in-retry-scope",
                "System.nanoTime()",
                vec!["time-in-key"]
            ),
            (25, "time-in-key", "System.currentTimeMillis()", vec![]),
        ]
    );
    let first = &v["findings"][0];
    let msg = first["message"].as_str().unwrap();
    assert!(
        msg.contains("evaluated again on every attempt")
            && msg.contains("it is also a `time-in-key` finding: ")
            && msg.contains("contains a clock reading"),
        "{msg}"
    );
    // The other direction: with key-in-retry-scope off (or suppressed), the clock is still
    // reported, as time-in-key on its own.
    let d = scratch("one-per-bug");
    std::fs::copy(root.join(fixture), d.join("R.kt")).unwrap();
    std::fs::write(
        d.join("idemlint.toml"),
        "[rules]\nkey-in-retry-scope = \"off\"\n",
    )
    .unwrap();
    let o = run(&d, &["check", "R.kt", "--format", "short"], &[]);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", o.stdout);
    assert!(
        lines.iter().all(|l| l.contains("warning[time-in-key]")),
        "{}",
        o.stdout
    );
    std::fs::remove_file(d.join("idemlint.toml")).unwrap();
    let suppressed = std::fs::read_to_string(d.join("R.kt")).unwrap().replacen(
        "subscriptionId = subscriptionId)\n        }\n    }\n\n    suspend fun renewTwo",
        "subscriptionId = subscriptionId) // idemlint: allow(key-in-retry-scope)\n        }\n    }\n\n    suspend fun renewTwo",
        1,
    );
    std::fs::write(d.join("R.kt"), suppressed).unwrap();
    let o = run(&d, &["check", "R.kt", "--format", "short"], &[]);
    let on_11: Vec<&str> = o
        .stdout
        .lines()
        .filter(|l| l.starts_with("R.kt:11:"))
        .collect();
    assert_eq!(on_11.len(), 1, "{}", o.stdout);
    assert!(on_11[0].contains("warning[time-in-key]"), "{}", o.stdout);
    assert!(!o.stdout.contains("unused-suppression"), "{}", o.stdout);
}

/// A scratch directory that is its own checkout (holds `.git`), so `extend` may reach any
/// file inside it.
fn checkout(name: &str) -> PathBuf {
    let d = scratch(name);
    std::fs::create_dir_all(d.join(".git")).unwrap();
    d
}

/// `extend = "path"` inherits another configuration: relative to the file, the extending
/// file's settings on top, catalogue tables added up; cycles, targets outside the checkout
/// and symbolic links are configuration errors.
#[test]
fn extend_inherits_another_configuration() {
    let d = checkout("extend");
    std::fs::create_dir_all(d.join("team")).unwrap();
    std::fs::create_dir_all(d.join("svc/gen")).unwrap();
    std::fs::write(
        d.join("team/idemlint.toml"),
        r#"exclude = ["gen"]
[rules]
time-in-key = "error"
interceptor-mints-key = "off"
[[boundary]]
id = "team.with-backoff"
kind = "retry"
form = "lambda-arg"
langs = ["kotlin"]
callee = ["withBackoff"]
flavor = "retry"
label = "team `withBackoff`"
"#,
    )
    .unwrap();
    std::fs::write(
        d.join("svc/idemlint.toml"),
        "extend = \"../team/idemlint.toml\"\n[rules]\ninterceptor-mints-key = \"note\"\n",
    )
    .unwrap();
    std::fs::write(d.join("svc/Time.kt"), TIME_KEY).unwrap();
    std::fs::write(d.join("svc/gen/Time.kt"), TIME_KEY).unwrap();
    std::fs::write(
        d.join("svc/Backoff.kt"),
        "suspend fun charge(api: Api) { withBackoff { api.createCharge(idempotencyKey = java.util.UUID.randomUUID().toString()) } }\n",
    )
    .unwrap();
    let o = run(&d, &["check", "svc", "--format", "short"], &[]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let lines: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", o.stdout);
    // The base's catalogue entry and rule level apply; its exclude (relative to the base's
    // own directory, team/) does not reach svc/gen.
    assert!(lines[0].starts_with("svc/Backoff.kt:1:"), "{}", o.stdout);
    assert!(
        lines[1].starts_with("svc/Time.kt:") && lines[1].contains("error[time-in-key]"),
        "{}",
        o.stdout
    );
    // The snippet names the team's helper by the entry's label.
    let o = run(&d, &["check", "svc/Backoff.kt"], &[]);
    assert!(
        o.stdout.contains("team `withBackoff` (retry boundary)"),
        "{}",
        o.stdout
    );
    let o = run(&d, &["check", "--show-settings", "svc/Time.kt"], &[]);
    assert!(o.stdout.contains("extends: "), "{}", o.stdout);
    assert!(o.stdout.contains("team/idemlint.toml"), "{}", o.stdout);
    assert!(
        o.stdout
            .lines()
            .any(|l| l.contains("interceptor-mints-key") && l.contains("note")),
        "the extending file wins: {}",
        o.stdout
    );

    // A cycle.
    std::fs::write(
        d.join("team/idemlint.toml"),
        "extend = \"../svc/idemlint.toml\"\n",
    )
    .unwrap();
    let o = run(&d, &["check", "svc"], &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("`extend` cycle"), "{}", o.stderr);
    // Outside the checkout.
    std::fs::write(
        d.join("svc/idemlint.toml"),
        "extend = \"../../outside.toml\"\n",
    )
    .unwrap();
    let o = run(&d, &["check", "svc"], &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("is outside the"), "{}", o.stderr);
    // Missing, and not a string.
    std::fs::write(d.join("svc/idemlint.toml"), "extend = \"nope.toml\"\n").unwrap();
    let o = run(&d, &["check", "svc"], &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("does not exist"), "{}", o.stderr);
    std::fs::write(d.join("svc/idemlint.toml"), "extend = 3\n").unwrap();
    assert_eq!(run(&d, &["check", "svc"], &[]).code, 2);
    // A symbolic link is never read, even inside the checkout.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/etc/hostname", d.join("team/link.toml")).unwrap();
        std::fs::write(
            d.join("svc/idemlint.toml"),
            "extend = \"../team/link.toml\"\n",
        )
        .unwrap();
        let o = run(&d, &["check", "svc"], &[]);
        assert_eq!(o.code, 2);
        assert!(o.stderr.contains("symbolic link"), "{}", o.stderr);
    }
}

/// `[[overrides]]`: rule levels for the files matching globs, relative to the
/// configuration's directory; later entries win; `--select`/`--ignore` still win.
#[test]
fn overrides_set_rule_levels_per_glob() {
    let d = checkout("overrides");
    std::fs::create_dir_all(d.join("src/generated")).unwrap();
    std::fs::write(
        d.join("idemlint.toml"),
        r#"[rules]
time-in-key = "error"

[[overrides]]
files = ["src/generated/**", "*Fixture.kt"]
rules = { time-in-key = "off" }

[[overrides]]
files = ["*Fixture.kt"]
rules = { time-in-key = "note" }
"#,
    )
    .unwrap();
    std::fs::write(d.join("src/Time.kt"), TIME_KEY).unwrap();
    std::fs::write(d.join("src/generated/TimeGen.kt"), TIME_KEY).unwrap();
    std::fs::write(d.join("src/TimeFixture.kt"), TIME_KEY).unwrap();
    let o = run(&d, &["check", ".", "--format", "short"], &[]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let got: Vec<&str> = o.stdout.lines().collect();
    assert_eq!(got.len(), 2, "{}", o.stdout);
    assert!(got[0].starts_with("src/Time.kt:") && got[0].contains("error[time-in-key]"));
    assert!(
        got[1].starts_with("src/TimeFixture.kt:") && got[1].contains("note[time-in-key]"),
        "{}",
        o.stdout
    );
    let o = run(
        &d,
        &["check", "--show-settings", "src/generated/TimeGen.kt"],
        &[],
    );
    assert!(
        o.stdout
            .contains("override applies: files = [\"src/generated/**\", \"*Fixture.kt\"]"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .lines()
            .any(|l| l.contains("time-in-key") && l.contains("off") && l.contains("[[overrides]]")),
        "{}",
        o.stdout
    );
    // --select wins over an override that turns the rule off.
    let o = run(
        &d,
        &[
            "check",
            "src/generated",
            "--select",
            "time-in-key",
            "--format",
            "short",
        ],
        &[],
    );
    assert_eq!(o.stdout.lines().count(), 1, "{}", o.stdout);
    // Shape errors point into the file.
    std::fs::write(
        d.join("idemlint.toml"),
        "[[overrides]]\nfile = [\"x\"]\nrules = {}\n",
    )
    .unwrap();
    let o = run(&d, &["check", "."], &[]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("did you mean `files`?"), "{}", o.stderr);
    std::fs::write(
        d.join("idemlint.toml"),
        "[[overrides]]\nfiles = [\"x\"]\nrules = { time-in-kee = \"off\" }\n",
    )
    .unwrap();
    let o = run(&d, &["check", "."], &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("did you mean `time-in-key`?"),
        "{}",
        o.stderr
    );
}

/// `--add-suppression REASON` inserts a suppression comment for every current finding in
/// the files checked (and only there), after which the run is clean; a file where the
/// comment would not work is left unchanged and reported.
#[test]
fn add_suppression_inserts_comments_for_current_findings() {
    let d = scratch("add-suppression");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(
        root.join("fixtures/kotlin/key-in-retry-scope/clock_in_retry_is_one_finding.kt"),
        d.join("R.kt"),
    )
    .unwrap();
    std::fs::copy(root.join("examples/rust/payouts.rs"), d.join("payouts.rs")).unwrap();
    std::fs::create_dir_all(d.join("other")).unwrap();
    std::fs::write(d.join("other/Time.kt"), TIME_KEY).unwrap();
    let o = run(
        &d,
        &[
            "check",
            "R.kt",
            "payouts.rs",
            "--add-suppression",
            "legacy, PAY-12",
        ],
        &[],
    );
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stderr.contains("idemlint: added "), "{}", o.stderr);
    let r = std::fs::read_to_string(d.join("R.kt")).unwrap();
    assert!(
        r.contains("            // idemlint: allow(key-in-retry-scope, time-in-key) -- legacy, PAY-12\n            api.renew("),
        "{r}"
    );
    assert_eq!(r.matches("// idemlint: allow(").count(), 3, "{r}");
    let p = std::fs::read_to_string(d.join("payouts.rs")).unwrap();
    assert!(
        p.contains("// idemlint: allow(unlocked-scheduled-job) -- legacy, PAY-12\n            let key = Uuid::new_v4()"),
        "{p}"
    );
    // Files not named are untouched; the named ones are now clean.
    assert_eq!(
        std::fs::read_to_string(d.join("other/Time.kt")).unwrap(),
        TIME_KEY
    );
    assert_eq!(run(&d, &["check", "R.kt", "payouts.rs"], &[]).code, 0);
    assert_eq!(run(&d, &["check", "other"], &[]).code, 1);
    // A finding inside a multi-line string cannot be suppressed by a line above it.
    let raw = "import java.util.UUID\nsuspend fun charge(api: Api): Charge {\n    return retryOnTransient {\n        api.createCharge(idempotencyKey = \"\"\"\n${UUID.randomUUID()}\"\"\")\n    }\n}\n";
    std::fs::write(d.join("Raw.kt"), raw).unwrap();
    let o = run(&d, &["check", "Raw.kt", "--add-suppression", ""], &[]);
    assert_eq!(o.code, 1);
    // Said once, with the file problems (it was printed twice, as `error:` and again as
    // `warning:`: a new user's report, thirty-sixth session), and counted on the summary.
    let all = format!("{}{}", o.stdout, o.stderr);
    assert_eq!(all.matches("suppressions not added").count(), 1, "{all}");
    assert!(
        o.stderr
            .contains("added 0 suppressions in 0 files; 1 file left unchanged"),
        "{}",
        o.stderr
    );
    // With --quiet the report leaves file problems out: the refusal is printed instead.
    let q = run(&d, &["check", "Raw.kt", "--add-suppression", "", "-q"], &[]);
    let all = format!("{}{}", q.stdout, q.stderr);
    assert_eq!(all.matches("suppressions not added").count(), 1, "{all}");
    assert_eq!(std::fs::read_to_string(d.join("Raw.kt")).unwrap(), raw);
    // Not with --fix, --diff or standard input.
    assert_eq!(
        run(
            &d,
            &["check", "R.kt", "--add-suppression", "x", "--fix"],
            &[]
        )
        .code,
        2
    );
}

/// A finding whose rule depends on the other files (an OkHttp interceptor is
/// `key-in-interceptor` with a project retry of HTTP calls beside it, and
/// `interceptor-mints-key` alone) is suppressed: the file's new text is checked alone, and
/// only the suppressed rule still reported on its line would mean the comment failed (a
/// new user's case, thirty-sixth session).
#[test]
fn add_suppression_of_a_finding_that_depends_on_other_files() {
    let d = scratch("add-suppression-context");
    let interceptor = "import java.io.IOException;\nimport java.util.UUID;\nimport okhttp3.Interceptor;\nimport okhttp3.OkHttpClient;\nimport okhttp3.Request;\nimport okhttp3.Response;\n\npublic class KeyInterceptor implements Interceptor {\n    @Override\n    public Response intercept(Chain chain) throws IOException {\n        Request req = chain.request().newBuilder()\n                .header(\"Idempotency-Key\", UUID.randomUUID().toString())\n                .build();\n        return chain.proceed(req);\n    }\n\n    static OkHttpClient client() {\n        return new OkHttpClient.Builder().addInterceptor(new KeyInterceptor()).build();\n    }\n}\n";
    let retry = "import org.springframework.retry.support.RetryTemplate;\n\npublic class Charges {\n    private final RetryTemplate retryTemplate = RetryTemplate.builder().maxAttempts(3).build();\n\n    Charge charge(PaymentsApi api, String orderId) {\n        return retryTemplate.execute(ctx -> api.createCharge(orderId));\n    }\n}\ninterface PaymentsApi {\n    @retrofit2.http.POST(\"v1/charges\")\n    Charge createCharge(@retrofit2.http.Body String body);\n}\nclass Charge {}\n";
    std::fs::write(d.join("KeyInterceptor.java"), interceptor).unwrap();
    std::fs::write(d.join("Charges.java"), retry).unwrap();
    let rules = |args: &[&str]| -> Vec<String> {
        let o = run(
            &d,
            &[args, &["--format", "json", "--exit-zero"]].concat(),
            &[],
        );
        let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect()
    };
    // The premise: the rule differs with and without the other file.
    assert_eq!(rules(&["check", "."]), ["key-in-interceptor"]);
    assert_eq!(
        rules(&["check", "KeyInterceptor.java"]),
        ["interceptor-mints-key"]
    );
    let o = run(&d, &["check", ".", "--add-suppression", "legacy"], &[]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(!o.stderr.contains("not added"), "{}", o.stderr);
    let t = std::fs::read_to_string(d.join("KeyInterceptor.java")).unwrap();
    assert!(
        t.contains("// idemlint: allow(key-in-interceptor) -- legacy\n                .header("),
        "{t}"
    );
    assert_eq!(run(&d, &["check", "."], &[]).code, 0);
}

/// `idemlint catalogue` prints the built-in catalogue and a configuration's additions as
/// TOML that parses back.
#[test]
fn catalogue_lists_what_idemlint_knows() {
    let d = checkout("catalogue");
    let o = run(&d, &["catalogue"], &[]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("# ── built-in: rules/okhttp.toml ──"),
        "{}",
        &o.stdout[..300]
    );
    assert!(o.stdout.contains("resilience4j.decorate"));
    assert!(o.stdout.contains("no configuration"));
    std::fs::write(
        d.join("idemlint.toml"),
        "[[boundary]]\nid = \"team.retry\"\nkind = \"retry\"\nform = \"lambda-arg\"\ncallee = [\"withBackoff\"]\nflavor = \"retry\"\nlabel = \"team `withBackoff`\"\n",
    )
    .unwrap();
    let o = run(
        &d,
        &["catalogue", "--table", "boundary", "--no-builtin"],
        &[],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("# ── configuration: idemlint.toml ──"),
        "{}",
        o.stdout
    );
    let t: toml::Table = o.stdout.parse().unwrap();
    let b = t["boundary"].as_array().unwrap();
    assert_eq!(b.len(), 1);
    assert_eq!(b[0]["callee"][0].as_str(), Some("withBackoff"));
    // Only the requested tables of the built-in files.
    let o = run(&d, &["catalogue", "--table", "lock"], &[]);
    let t: toml::Table = o.stdout.parse().unwrap_or_else(|e| panic!("{e}"));
    assert!(t["lock"].as_array().is_some_and(|l| !l.is_empty()));
    assert!(!o.stdout.contains("[[boundary]]"), "{}", o.stdout);
    assert!(o.stdout.contains("[[lock]]"), "{}", o.stdout);
    let o = run(&d, &["catalogue", "--table", "boundry"], &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("did you mean `boundary`?"),
        "{}",
        o.stderr
    );
}

/// The team's retry helper in two lines: the other `[[boundary]]` fields follow, the
/// label names the helper in the finding, and every missing field is reported at once.
#[test]
fn retry_helper_in_two_lines_with_its_label() {
    let d = checkout("two-lines");
    std::fs::write(
        d.join("idemlint.toml"),
        "[[boundary]]\ncallee = [\"withBackoff\"]\nlabel = \"the team's retry helper\"\n",
    )
    .unwrap();
    std::fs::write(
        d.join("Pay.kt"),
        "class Pay {\n    fun charge(api: Api) {\n        withBackoff {\n            api.createCharge(idempotencyKey = java.util.UUID.randomUUID().toString())\n        }\n    }\n}\n",
    )
    .unwrap();
    let o = run(&d, &["check", ".", "--format", "short"], &[]);
    assert_eq!(o.code, 1, "{}\n{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("Pay.kt:4:"), "{}", o.stdout);
    assert!(o.stdout.contains("key-in-retry-scope"), "{}", o.stdout);
    assert!(
        o.stdout.contains("(the team's retry helper)"),
        "{}",
        o.stdout
    );

    std::fs::write(
        d.join("idemlint.toml"),
        "[[boundary]]\nform = \"method-of-type\"\n",
    )
    .unwrap();
    let o = run(&d, &["check", "."], &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("missing `supertypes`, `methods`"),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("idemlint.toml:1:1"), "{}", o.stderr);
}
