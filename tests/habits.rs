//! The command-line habits users bring from ruff, clippy, detekt and semgrep: `--fail-on`,
//! the summary line on standard error, `--color`, `--statistics`, `--show-settings`,
//! `--show-files`, `init`, `explain`, `rules`, `completions`, `man`, `--version`.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// `idemlint` with none of the colour variables of the environment the tests run in.
fn idemlint() -> Command {
    let mut c = Command::cargo_bin("idemlint").unwrap();
    for v in ["NO_COLOR", "FORCE_COLOR", "CLICOLOR_FORCE", "CLICOLOR"] {
        c.env_remove(v);
    }
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("habits")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A `key-in-retry-scope` error.
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

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Out {
    let mut c = idemlint();
    c.current_dir(dir).args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    Out {
        code: o.status.code().unwrap(),
        stdout: String::from_utf8(o.stdout).unwrap(),
        stderr: String::from_utf8(o.stderr).unwrap(),
    }
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
        "exclude = [\"gen\"]\n[rules]\ntime-in-key = \"off\"\n",
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
            if t.contains('=') || t.starts_with('[') {
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
    }
    let o = run(&d, &["explain", "Key-In-Retry-Scop"], &[]);
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("did you mean `key-in-retry-scope`?"),
        "{}",
        o.stderr
    );
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
    assert!(!o.stderr.contains("checking"), "{}", o.stderr);
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
        "idemlint: checking 2/2 files",
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
        !o.stdout.contains("checking"),
        "progress stays off standard output"
    );
    let o = run(
        &d,
        &["check", ".", "--progress", "never", "--format", "json"],
        &[],
    );
    assert!(!o.stderr.contains("checking"), "{}", o.stderr);
}
