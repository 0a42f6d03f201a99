//! The documentation cannot drift from the code: `docs/rules.md` ends with the text of
//! `rules/docs/*.md`, the CLI reference names every flag `idemlint check` has, and the
//! relative links in README.md and docs/ lead to files that exist.
//!
//! After editing `rules/docs/*.md`, regenerate with
//! `IDEMLINT_BLESS=1 cargo test --test docs`.

use std::path::{Path, PathBuf};

const MARKER: &str = "<!-- Everything below is generated from rules/docs/*.md by tests/docs.rs: edit those files, then run `IDEMLINT_BLESS=1 cargo test --test docs`. -->\n";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A rule's document with every heading one level deeper (outside code fences), so the
/// rule's title is a `##` section of docs/rules.md.
fn demote(doc: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if !fenced && line.starts_with('#') {
            out.push('#');
        }
        // A rule's doc links from `rules/docs/` (`../../docs/x.md`); docs/rules.md sits
        // beside the target (`x.md`).
        out.push_str(&line.replace("](../../docs/", "]("));
        out.push('\n');
    }
    out
}

/// The generated part of docs/rules.md: every `rules/docs/<id>.md`, in id order.
fn generated() -> String {
    let dir = root().join("rules/docs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    let ids: Vec<String> = files
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let mut known: Vec<&str> = idemlint::rules::RULES.iter().map(|r| r.id).collect();
    known.sort();
    assert_eq!(ids, known, "rules/docs/*.md and the rule table differ");
    let mut out = String::from(MARKER);
    for f in &files {
        out.push('\n');
        out.push_str(&demote(&std::fs::read_to_string(f).unwrap()));
    }
    out
}

#[test]
fn rules_md_is_generated_from_rules_docs() {
    let path = root().join("docs/rules.md");
    let current = std::fs::read_to_string(&path).unwrap();
    let (head, tail) = match current.find(MARKER) {
        Some(i) => current.split_at(i),
        None => (current.as_str(), ""),
    };
    let want = generated();
    if tail != want {
        if std::env::var_os("IDEMLINT_BLESS").is_some() {
            std::fs::write(&path, format!("{head}{want}")).unwrap();
            return;
        }
        panic!(
            "docs/rules.md is out of date with rules/docs/*.md; run `IDEMLINT_BLESS=1 cargo test --test docs`"
        );
    }
    // Every rule has a section.
    for r in idemlint::rules::RULES {
        assert!(tail.contains(&format!("\n## {}\n", r.id)), "{}", r.id);
    }
}

#[test]
fn demote_leaves_code_fences_alone() {
    assert_eq!(
        demote("# a\n```rust\n#[derive(Debug)]\n```\n## b\n"),
        "## a\n```rust\n#[derive(Debug)]\n```\n### b\n"
    );
}

/// Every long flag of `idemlint check` and every subcommand appears in docs/cli.md.
#[test]
fn cli_reference_names_every_flag_and_subcommand() {
    let cli = std::fs::read_to_string(root().join("docs/cli.md")).unwrap();
    let bin = env!("CARGO_BIN_EXE_idemlint");
    let help = std::process::Command::new(bin)
        .args(["check", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let flags: Vec<&str> = help
        .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == '=')
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric()))
        .collect();
    assert!(flags.len() > 20, "{help}");
    for f in flags {
        if f == "--help" {
            continue;
        }
        assert!(
            cli.contains(&format!("`{f}")),
            "docs/cli.md does not document {f}"
        );
    }
    let top = std::process::Command::new(bin)
        .arg("--help")
        .output()
        .unwrap();
    let top = String::from_utf8(top.stdout).unwrap();
    let commands = top
        .split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap();
    for line in commands.lines() {
        let Some(name) = line.split_whitespace().next() else {
            continue;
        };
        if name == "help" {
            continue;
        }
        assert!(
            cli.contains(&format!("idemlint {name}")),
            "docs/cli.md does not document `idemlint {name}`"
        );
    }
}

/// Relative links in README.md and docs/*.md point at files that exist.
#[test]
fn relative_links_resolve() {
    let mut files = vec![root().join("README.md"), root().join("SECURITY.md")];
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        files.push(e.unwrap().path());
    }
    files.push(root().join("crates/idemkey/README.md"));
    // Each rule's doc is read on its own too (on a forge, from a checkout).
    for e in std::fs::read_dir(root().join("rules/docs")).unwrap() {
        files.push(e.unwrap().path());
    }
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for c in link.captures_iter(&text) {
            let target = &c[1];
            if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
                continue;
            }
            let path = target.split('#').next().unwrap();
            let resolved = file.parent().unwrap().join(path);
            assert!(
                Path::new(&resolved).exists(),
                "{}: link to {target} does not resolve",
                file.display()
            );
        }
    }
}

/// crates/idemkey/README.md is read on its own (crates.io, a git dependency): no machine
/// paths, and it shows a git dependency.
#[test]
fn idemkey_readme_stands_alone() {
    let text = std::fs::read_to_string(root().join("crates/idemkey/README.md")).unwrap();
    for bad in ["/work/", "/tmp/", "/home/", "../shared"] {
        assert!(
            !text.contains(bad),
            "crates/idemkey/README.md mentions {bad}"
        );
    }
    assert!(
        text.contains("git = \"https://"),
        "no git-dependency example"
    );
}

/// The finding README.md shows is what `idemlint check` prints for the code above it.
#[test]
fn readme_finding_is_what_idemlint_prints() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let code = readme
        .split("```java\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("a Java block in README.md");
    let shown = readme
        .split("$ idemlint check ChargeJob.java\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("the output block in README.md");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("readme-finding");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("ChargeJob.java"), code).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_idemlint"))
        .current_dir(&dir)
        .args(["check", "ChargeJob.java"])
        .env_remove("FORCE_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(String::from_utf8(o.stdout).unwrap(), shown);
}

/// The first fenced block of `lang` in `text` that contains `needle`.
fn block<'a>(text: &'a str, lang: &str, needle: &str) -> &'a str {
    text.split(&format!("```{lang}\n"))
        .skip(1)
        .map(|s| s.split("```").next().unwrap())
        .find(|b| b.contains(needle))
        .unwrap_or_else(|| panic!("no ```{lang} block with {needle}"))
}

/// README.md and docs/integrations.md show the same GitHub Actions workflow (both with
/// `--strict`) and the same pre-commit snippet.
#[test]
fn readme_and_integrations_agree() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let integ = std::fs::read_to_string(root().join("docs/integrations.md")).unwrap();
    let wf = block(&readme, "yaml", "upload-sarif");
    assert_eq!(wf, block(&integ, "yaml", "upload-sarif"));
    assert!(wf.contains("idemlint check . --strict"), "{wf}");
    assert_eq!(
        block(&readme, "yaml", "pre-commit-config"),
        block(&integ, "yaml", "pre-commit-config")
    );
}

/// The pre-commit snippet names a hook that `.pre-commit-hooks.yaml` defines and a `rev`
/// that exists: a branch this repository's links use, or a tag / commit of the local git
/// checkout. (pre-commit resolves `rev` in the clone it makes; offline, the local
/// repository is the best witness.)
#[test]
fn pre_commit_snippet_names_what_exists() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let snippet = block(&readme, "yaml", "pre-commit-config");
    let field = |name: &str| {
        snippet
            .lines()
            .find_map(|l| l.trim().trim_start_matches("- ").strip_prefix(name))
            .map(|v| v.split('#').next().unwrap().trim().to_string())
            .unwrap_or_else(|| panic!("no {name} in {snippet}"))
    };
    let hooks = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml")).unwrap();
    let id = field("id:");
    assert!(
        hooks.lines().any(|l| l.trim() == format!("- id: {id}")),
        "hook id {id} is not in .pre-commit-hooks.yaml"
    );
    let repo = field("repo:");
    let rev = field("rev:");
    let hex = rev.len() == 40 && rev.chars().all(|c| c.is_ascii_hexdigit());
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .current_dir(root())
            .args(args)
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    let in_git = root().join(".git").exists();
    if hex {
        if in_git {
            assert!(
                git(&["cat-file", "-e", &format!("{rev}^{{commit}}")]),
                "rev {rev} is not a commit of this repository"
            );
        }
        return;
    }
    // A branch: the one the documentation's own links are on (…/blob/<rev>/…).
    let integ = std::fs::read_to_string(root().join("docs/integrations.md")).unwrap();
    let is_branch = integ.contains(&format!("{repo}/blob/{rev}/"));
    // A tag: must exist locally (a fresh clone fetches every tag).
    let is_tag = in_git
        && git(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/tags/{rev}"),
        ]);
    assert!(
        is_branch || is_tag,
        "rev `{rev}` is neither the branch the docs link to nor a tag of this repository"
    );
    if is_branch && in_git {
        // The checkout knows that branch (locally or as a remote-tracking branch), unless
        // it is a detached CI checkout that fetched a single commit.
        let known = git(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/heads/{rev}"),
        ]) || git(&[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("refs/remotes/origin/{rev}"),
        ]);
        let shallow = std::process::Command::new("git")
            .current_dir(root())
            .args(["rev-parse", "--is-shallow-repository"])
            .output()
            .is_ok_and(|o| o.stdout.starts_with(b"true"));
        assert!(
            known || shallow,
            "rev `{rev}`: no branch of that name in this repository"
        );
    }
    // The snippet tells the user how to pin it.
    assert!(snippet.contains("pre-commit autoupdate"), "{snippet}");
}

/// docs/catalogue.md names every catalogue table and every key each one accepts.
#[test]
fn catalogue_reference_names_every_table_and_key() {
    let doc = std::fs::read_to_string(root().join("docs/catalogue.md")).unwrap();
    for (table, keys) in idemlint::catalogue::table_keys() {
        assert!(
            doc.contains(&format!("`[[{table}]]`")) || doc.contains(&format!("`[{table}]`")),
            "docs/catalogue.md does not document the `{table}` table"
        );
        for k in keys.iter().chain(idemlint::catalogue::CALL_KEYS) {
            assert!(
                doc.contains(&format!("| `{k}` |")),
                "docs/catalogue.md does not document `{k}` (of `{table}`)"
            );
        }
    }
}
