//! Malicious trees: what a pull request can commit (symbolic links to secrets, toolchain
//! overrides, FIFOs, device files, hostile names) must not make idemlint run anything,
//! write outside the named outputs, print a secret, hang, or skip a file silently.
//! Unix only (symbolic links, FIFOs, non-UTF-8 names).
#![cfg(unix)]

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("security")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write(dir: &Path, rel: impl AsRef<Path>, text: &str) -> PathBuf {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

fn link(target: impl AsRef<Path>, at: impl AsRef<Path>) {
    std::os::unix::fs::symlink(target, at).unwrap();
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_bin(bin: &str, dir: &Path, args: &[&str], f: impl FnOnce(&mut Command)) -> Out {
    let mut c = Command::cargo_bin(bin).unwrap();
    c.current_dir(dir)
        .args(args)
        .timeout(Duration::from_secs(60));
    f(&mut c);
    let o = c.output().unwrap();
    Out {
        code: o.status.code().expect("idemlint was killed (hang?)"),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn run(dir: &Path, args: &[&str]) -> Out {
    run_bin("idemlint", dir, args, |_| {})
}

fn json(o: &Out) -> serde_json::Value {
    serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout))
}

const PAY: &str = r#"import java.util.UUID

class Pay {
    fun localKey(api: Api, amount: Long) {
        Retry.withRetry(3) {
            val key = UUID.randomUUID().toString()
            api.createCharge(idempotencyKey = key, amount = amount)
        }
    }
}
"#;

const RUST_BUG: &str = "pub async fn charge() {\n    backoff::future::retry(policy(), || async {\n        send(uuid::Uuid::new_v4()).await\n    }).await;\n}\nfn send(idempotency_key: uuid::Uuid) {}\n";

const SECRET: &str = "ghp_SuperSecretValue123";

/// Item 2: a discovered configuration file that is a symbolic link (to a secret) is never
/// read, and nothing of its target is printed.
#[test]
fn symlinked_configuration_is_not_read_or_echoed() {
    let root = scratch("config_link");
    write(
        &root,
        "outside/credentials",
        &format!(
            "[credential]\nhelper = store\nextraheader = AUTHORIZATION: basic {SECRET} idemlint\n"
        ),
    );
    for name in ["idemlint.toml", ".idemlint.toml", "Cargo.toml"] {
        let tree = root.join(format!("tree-{name}"));
        write(&tree, "Pay.kt", PAY);
        link(root.join("outside/credentials"), tree.join(name));
        let o = run(&tree, &["check", "."]);
        assert_eq!(o.code, 2, "{name}: {}", o.stderr);
        assert!(
            !o.stderr.contains(SECRET) && !o.stdout.contains(SECRET),
            "{name}: {}",
            o.stderr
        );
        assert!(o.stderr.contains("symbolic link"), "{}", o.stderr);
    }
    // Named with --config, a link is the user's choice; the error is still capped.
    let tree = root.join("tree-idemlint.toml");
    let o = run(&tree, &["check", ".", "--config", "../outside/credentials"]);
    assert_eq!(o.code, 2);
}

/// Items 2, 13, 15: configuration error snippets are one capped line with control
/// characters replaced; huge globs fail with a clear message and no echo.
#[test]
fn configuration_errors_are_capped_and_escaped() {
    let dir = scratch("config_caps");
    write(&dir, "Pay.kt", PAY);
    // The snippet is a window around the error, not the whole line.
    let long = format!("[rules]\nx = = {} \"{SECRET}\"\n", "a".repeat(20_000));
    write(&dir, "idemlint.toml", &long);
    let o = run(&dir, &["check", "."]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.len() < 3_000, "{} bytes of stderr", o.stderr.len());
    assert!(!o.stderr.contains(SECRET));
    write(
        &dir,
        "idemlint.toml",
        "[rules]\ntime-in-key = \"\u{1b}]0;PWNED\u{7}\"\n",
    );
    let o = run(&dir, &["check", "."]);
    assert_eq!(o.code, 2);
    assert!(
        !o.stderr.contains('\u{1b}') && !o.stderr.contains('\u{7}'),
        "{:?}",
        o.stderr
    );
    write(
        &dir,
        "idemlint.toml",
        &format!("include = [\"{}\"]\n", "a".repeat(200_000)),
    );
    let o = run(&dir, &["check", "."]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("at most 1000"), "{}", o.stderr);
    assert!(o.stderr.len() < 3_000, "{} bytes of stderr", o.stderr.len());
}

/// Item 3: `--workspace`, `--manifest-path` and `cargo idemlint` find the workspace
/// without running `cargo` (which would honour the tree's `rust-toolchain.toml`).
#[test]
fn workspace_flags_run_no_cargo() {
    let dir = scratch("no_cargo");
    let marker = dir.join("PWNED");
    let fake = format!("#!/bin/sh\necho \"$@\" > '{}'\nexit 1\n", marker.display());
    for bin in ["bin/cargo", "tc/bin/cargo", "tc/bin/rustc"] {
        let p = write(&dir, bin, &fake);
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let ws = dir.join("ws");
    write(
        &ws,
        "rust-toolchain.toml",
        &format!("[toolchain]\npath = \"{}\"\n", dir.join("tc").display()),
    );
    write(&ws, ".cargo/config.toml", "[alias]\nmetadata = \"build\"\n");
    write(
        &ws,
        "Cargo.toml",
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\n[workspace]\nmembers = [\"crates/*\"]\nexclude = [\"crates/old\"]\n",
    );
    write(&ws, "src/lib.rs", RUST_BUG);
    write(&ws, "crates/pay/Cargo.toml", "[package]\nname = \"pay\"\n");
    write(&ws, "crates/pay/src/lib.rs", RUST_BUG);
    write(&ws, "crates/old/Cargo.toml", "[package]\nname = \"old\"\n");
    write(&ws, "crates/old/src/lib.rs", RUST_BUG);
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = |c: &mut Command| {
        c.env("PATH", &path).env("CARGO", dir.join("bin/cargo"));
    };
    let paths = |o: &Out| -> Vec<String> {
        let mut p: Vec<String> = json(o)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect();
        p.dedup();
        p
    };
    let o = run_bin(
        "idemlint",
        &ws,
        &[
            "check",
            "--workspace",
            "--exclude",
            "app",
            "--format",
            "json",
        ],
        env,
    );
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(paths(&o), ["crates/pay/src/lib.rs"]);
    let o = run_bin(
        "idemlint",
        &dir,
        &[
            "check",
            "--manifest-path",
            "ws/crates/pay/Cargo.toml",
            "--format",
            "json",
        ],
        env,
    );
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(paths(&o).len(), 3, "{:?}", paths(&o));
    let o = run_bin(
        "cargo-idemlint",
        &ws.join("crates/pay"),
        &["idemlint", "--format", "json"],
        env,
    );
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(paths(&o).len(), 3);
    assert!(!marker.exists(), "a cargo from the tree or PATH ran");
}

/// Break-it: `--workspace` followed `members` out of the checkout (`"../outside"`, a
/// committed link `vendor -> ../outside`, a link a glob matches): `--show-files` listed the
/// outside file and `--fix` rewrote it. A member outside the workspace root (links
/// resolved) is neither listed, read nor fixed, and is reported in `errors`.
#[test]
fn workspace_members_outside_the_root_are_not_checked_or_fixed() {
    let root = scratch("workspace_outside");
    let victim = write(&root, "outside/src/Pay.kt", PAY);
    write(
        &root,
        "outside/Cargo.toml",
        "[package]\nname = \"victim\"\n",
    );
    let tree = root.join("tree");
    write(
        &tree,
        "Cargo.toml",
        "[workspace]\nmembers = [\"app\", \"vendor\", \"../outside\", \"crates/*\"]\n",
    );
    write(&tree, "app/Cargo.toml", "[package]\nname = \"app\"\n");
    write(&tree, "app/src/main.rs", "fn main() {}\n");
    link("../outside", tree.join("vendor"));
    std::fs::create_dir_all(tree.join("crates")).unwrap();
    link("../../outside", tree.join("crates/linked"));
    // A link inside the root is a member under its real name.
    link("../app", tree.join("crates/alias"));
    let before = std::fs::read(&victim).unwrap();
    let outside = ["../outside", "crates/linked", "vendor"];

    let o = run(&tree, &["check", "--workspace", "--show-files"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stdout, "app/src/main.rs\tbuilt-in defaults\n");
    for m in outside {
        assert!(
            o.stderr.contains(&format!(
                "warning: {m}: workspace member `{}`",
                if m == "crates/linked" { "crates/*" } else { m }
            )),
            "{m}: {}",
            o.stderr
        );
    }
    assert!(
        o.stderr.contains("outside the workspace root"),
        "{}",
        o.stderr
    );

    for (bin, args) in [
        (
            "idemlint",
            vec!["check", "--workspace", "--fix", "--format", "json"],
        ),
        (
            "cargo-idemlint",
            vec!["idemlint", "--workspace", "--fix", "--format", "json"],
        ),
    ] {
        let o = run_bin(bin, &tree, &args, |_| {});
        assert_eq!(o.code, 0, "{bin}: {}", o.stderr);
        let v = json(&o);
        assert_eq!(v["findings"], serde_json::json!([]), "{bin}: {v}");
        let mut errors: Vec<(&str, &str)> = v["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["path"].as_str().unwrap(), e["message"].as_str().unwrap()))
            .collect();
        errors.sort();
        assert_eq!(
            errors.iter().map(|e| e.0).collect::<Vec<_>>(),
            outside,
            "{bin}: {v}"
        );
        assert!(
            errors.iter().all(|e| e.1.contains("not checked or fixed")),
            "{bin}: {v}"
        );
        assert!(!o.stdout.contains("Pay.kt") && !o.stderr.contains("Pay.kt"));
        assert_eq!(std::fs::read(&victim).unwrap(), before, "{bin} rewrote it");
    }
    // --strict fails on them; the human report shows nothing of the outside code.
    let o = run(&tree, &["check", "--workspace", "--strict"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(!o.stdout.contains("localKey"), "{}", o.stdout);
    // An excluded outside member is simply left out.
    write(
        &tree,
        "Cargo.toml",
        "[workspace]\nmembers = [\"app\", \"vendor\"]\nexclude = [\"vendor\"]\n",
    );
    let o = run(&tree, &["check", "--workspace", "--strict", "--show-files"]);
    assert_eq!((o.code, o.stderr.as_str()), (0, ""));
    assert_eq!(o.stdout, "app/src/main.rs\tbuilt-in defaults\n");
    // `package.workspace` must name a directory that contains the manifest.
    write(
        &tree,
        "app/Cargo.toml",
        "[package]\nname = \"app\"\nworkspace = \"../vendor\"\n",
    );
    write(
        &root,
        "outside/Cargo.toml",
        "[workspace]\nmembers = [\"../tree/app\"]\n",
    );
    let o = run(
        &tree,
        &["check", "--manifest-path", "app/Cargo.toml", "--fix"],
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("does not contain it"), "{}", o.stderr);
    assert_eq!(std::fs::read(&victim).unwrap(), before);
}

/// Break-it: a committed `Evil.kt -> ../outside/Victim.kt` was refused by the walk but
/// followed when named: `git ls-files | xargs idemlint check --strict --` analysed the
/// outside file and printed its code, `--only` too (with a warning that said it was not
/// followed), and `--fix` could rewrite it. A named link is treated as the walk treats
/// links: not followed, reported unless its target is checked anyway.
#[test]
fn named_symbolic_links_are_not_followed() {
    let root = scratch("named_links");
    let victim = write(&root, "outside/Victim.kt", PAY);
    write(&root, "outside/dir/Other.kt", PAY);
    let tree = root.join("tree");
    write(&tree, "A.kt", "class A\n");
    write(&tree, "src/Real.kt", PAY);
    link("../outside/Victim.kt", tree.join("Evil.kt"));
    link("src/Real.kt", tree.join("Alias.kt"));
    link("../outside/dir", tree.join("Linked.kt"));
    link("src", tree.join("srclink"));
    write(&tree, "list", "Evil.kt\nA.kt\n");
    let before = std::fs::read(&victim).unwrap();
    let not_followed = "a symbolic link, named as a path; not followed";
    let errors_of = |o: &Out| -> Vec<(String, String)> {
        json(o)["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["path"].as_str().unwrap().to_string(),
                    e["message"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let findings_of = |o: &Out| -> Vec<String> {
        json(o)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap().to_string())
            .collect()
    };

    // The documented pipeline: as for the walk, --strict fails and nothing is analysed.
    let walk = run(&tree, &["check", ".", "--strict", "--format", "json"]);
    assert_eq!(walk.code, 2, "{}", walk.stderr);
    for args in [
        vec![
            "check", "--strict", "--format", "json", "--", "A.kt", "Evil.kt",
        ],
        vec![
            "check",
            "--strict",
            "--format",
            "json",
            "--files-from",
            "list",
        ],
        vec![
            "check", ".", "--strict", "--format", "json", "--only", "Evil.kt",
        ],
    ] {
        let o = run(&tree, &args);
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(findings_of(&o).iter().all(|p| p != "Evil.kt"), "{args:?}");
        let e = errors_of(&o);
        let evil: Vec<_> = e.iter().filter(|e| e.0 == "Evil.kt").collect();
        assert_eq!(evil.len(), 1, "{args:?}: reported once: {e:?}");
        assert!(evil[0].1.contains("not followed"), "{args:?}: {e:?}");
    }
    let o = run(&tree, &["check", "--", "A.kt", "Evil.kt"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stdout.contains("localKey"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains(&format!("warning: Evil.kt: {not_followed}")),
        "{}",
        o.stdout
    );
    // --only: no finding of the target, and no warning contradicting one.
    let o = run(
        &tree,
        &["check", ".", "--only", "Evil.kt", "--format", "short"],
    );
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert_eq!(o.stdout, "");
    // --show-files does not list it; --fix does not write through it.
    let o = run(&tree, &["check", "--show-files", "--", "A.kt", "Evil.kt"]);
    assert_eq!(o.stdout, "A.kt\tbuilt-in defaults\n");
    let o = run(&tree, &["check", "--fix", "--", "A.kt", "Evil.kt"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(std::fs::read(&victim).unwrap(), before);
    assert!(
        std::fs::symlink_metadata(tree.join("Evil.kt"))
            .unwrap()
            .is_symlink()
    );
    // A linked directory named as a path is not walked.
    let o = run(
        &tree,
        &[
            "check",
            "--strict",
            "--format",
            "json",
            "--",
            "A.kt",
            "Linked.kt",
        ],
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(findings_of(&o).is_empty(), "{}", o.stdout);
    assert!(
        errors_of(&o)
            .iter()
            .any(|e| e.0 == "Linked.kt" && e.1.contains("to a directory")),
        "{}",
        o.stdout
    );
    // A link inside the tree: silent when its target is checked anyway, reported when
    // only the link is named.
    for args in [
        vec![
            "check",
            "--strict",
            "--format",
            "json",
            "--",
            "Alias.kt",
            "src/Real.kt",
        ],
        vec![
            "check", "--strict", "--format", "json", "--", "srclink", ".",
        ],
        vec![
            "check", ".", "--strict", "--format", "json", "--only", "Alias.kt",
        ],
    ] {
        let o = run(&tree, &args);
        assert_eq!(findings_of(&o), ["src/Real.kt"], "{args:?}");
        assert!(
            errors_of(&o)
                .iter()
                .all(|e| !e.0.contains("Alias") && !e.0.contains("srclink")),
            "{args:?}: {}",
            o.stdout
        );
    }
    let o = run(
        &tree,
        &["check", "--strict", "--format", "json", "--", "Alias.kt"],
    );
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(findings_of(&o).is_empty());
    assert!(
        errors_of(&o)
            .iter()
            .any(|e| e.0 == "Alias.kt" && e.1.contains("not followed")),
        "{}",
        o.stdout
    );
}

/// Item 4: `--output` and `--write-baseline` replace a symbolic link instead of writing
/// through it, never create directories through a linked parent, and refuse a relative
/// path outside the working directory.
#[test]
fn outputs_do_not_follow_symbolic_links() {
    let root = scratch("output_links");
    let victim = write(&root, "outside/victim.txt", "precious\n");
    let tree = root.join("tree");
    write(&tree, "Pay.kt", PAY);
    link("../outside/victim.txt", tree.join("idemlint.sarif"));
    link("../outside/victim.txt", tree.join("idemlint-baseline.json"));
    link("../outside", tree.join("reports"));
    let o = run(
        &tree,
        &[
            "check",
            ".",
            "--format",
            "sarif",
            "--output",
            "idemlint.sarif",
        ],
    );
    assert_eq!(o.code, 1, "{}", o.stderr);
    let o = run(
        &tree,
        &["check", ".", "--write-baseline", "idemlint-baseline.json"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    for f in ["idemlint.sarif", "idemlint-baseline.json"] {
        let m = std::fs::symlink_metadata(tree.join(f)).unwrap();
        assert!(m.is_file(), "{f} is now the report itself");
    }
    for target in ["reports/new/x.txt", "reports/x.txt", "../outside/y.txt"] {
        let o = run(&tree, &["check", ".", "--output", target]);
        assert_eq!(o.code, 2, "{target}: {}", o.stderr);
        let o = run(&tree, &["check", ".", "--write-baseline", target]);
        assert_eq!(o.code, 2, "{target}: {}", o.stderr);
    }
    let mut left: Vec<_> = std::fs::read_dir(root.join("outside"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    left.sort();
    assert_eq!(left, ["victim.txt"], "nothing written outside the tree");
    // Missing directories inside the tree are still created.
    let o = run(&tree, &["check", ".", "--output", "out/deep/report.txt"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(tree.join("out/deep/report.txt").is_file());
}

/// A named output that is a link to a stream (`/dev/stdout` is a link to
/// `/proc/self/fd/1`) is refused, not replaced by a regular file: replacing it would break
/// that stream for every later program.
#[test]
fn outputs_never_replace_links_to_devices_or_pipes() {
    let root = scratch("output_device_links");
    write(&root, "Pay.kt", PAY);
    mkfifo(&root.join("pipe"));
    let dev = root.join("to-dev-null");
    let fifo = root.join("to-pipe");
    link("/dev/null", &dev);
    link(root.join("pipe"), &fifo);
    for out in [&dev, &fifo] {
        let abs = out.to_str().unwrap();
        let o = run(
            &root,
            &["check", "Pay.kt", "--format", "json", "--output", abs],
        );
        assert_eq!(o.code, 2, "{abs}: {}", o.stderr);
        assert!(o.stderr.contains("not a regular file"), "{}", o.stderr);
        let o = run(&root, &["check", "Pay.kt", "--write-baseline", abs]);
        assert_eq!(o.code, 2, "{abs}: {}", o.stderr);
        assert!(
            std::fs::symlink_metadata(out)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{abs} was replaced"
        );
    }
}

/// Item 5: files whose displayed names would coincide are both analysed, and `--fix`
/// writes each file at its real path.
#[test]
fn display_collisions_neither_hide_nor_misdirect() {
    let dir = scratch("display_collision");
    write(&dir, "Charge\\u{7}.kt", PAY);
    write(&dir, "Charge\u{7}.kt", PAY);
    let bad_a = std::ffi::OsStr::from_bytes(b"a\xfe.kt");
    let bad_b = std::ffi::OsStr::from_bytes(b"a\xff.kt");
    std::fs::write(dir.join(bad_a), PAY).unwrap();
    std::fs::write(dir.join(bad_b), PAY).unwrap();
    let o = run(&dir, &["check", ".", "--format", "json"]);
    assert_eq!(o.code, 1);
    let v = json(&o);
    let mut paths: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    paths.sort();
    paths.dedup();
    assert_eq!(paths.len(), 4, "{paths:?}");

    let dir = scratch("fix_real_path");
    let victim = "// the team's real code\nclass Billing { fun total() = 42 }\n";
    write(&dir, "Billing\\u{7}.kt", victim);
    write(&dir, "Billing\u{7}.kt", PAY);
    write(&dir, "Nl\nX.kt", PAY);
    let o = run(&dir, &["check", ".", "--fix", "--unsafe-fixes"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("Billing\\u{7}.kt")).unwrap(),
        victim
    );
    for f in ["Billing\u{7}.kt", "Nl\nX.kt"] {
        assert_ne!(
            std::fs::read_to_string(dir.join(f)).unwrap(),
            PAY,
            "{f:?} not fixed"
        );
    }
    assert!(
        !dir.join("Nl\\nX.kt").exists(),
        "no stray file at the display path"
    );
}

/// Items 4 and 8: `--fix` does not write through a symbolic link and keeps permissions.
#[test]
fn fix_writes_atomically_and_keeps_the_mode() {
    let dir = scratch("fix_atomic");
    let p = write(&dir, "Pay.kt", PAY);
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o640)).unwrap();
    let o = run(&dir, &["check", "Pay.kt", "--fix", "--unsafe-fixes"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let m = std::fs::metadata(&p).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777,
        0o640
    );
    assert_ne!(std::fs::read_to_string(&p).unwrap(), PAY);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("idemlint"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Item 6: ignore files and baselines that are devices, FIFOs or links to them are not
/// read (no hang, no unbounded memory); the other files are still checked.
#[test]
fn ignore_files_and_baselines_that_are_not_regular_files() {
    let dir = scratch("ignore_dos");
    write(&dir, "zero/Pay.kt", PAY);
    link("/dev/zero", dir.join("zero/.gitignore"));
    write(&dir, "fifo/Pay.kt", PAY);
    mkfifo(&dir.join("fifo/.ignore"));
    write(&dir, "big/Pay.kt", PAY);
    write(&dir, "big/.gitignore", &"x\n".repeat(1 << 20));
    let o = run(&dir, &["check", ".", "--format", "json"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let v = json(&o);
    assert_eq!(v["findings"].as_array().unwrap().len(), 3, "{v:#}");
    let errors: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        errors,
        ["big/.gitignore", "fifo/.ignore", "zero/.gitignore"]
    );
    // A regular ignore file still works.
    write(&dir, "ok/Pay.kt", PAY);
    write(&dir, "ok/.gitignore", "Pay.kt\n");
    let v = json(&run(&dir, &["check", "ok", "--format", "json"]));
    assert_eq!(v["findings"].as_array().unwrap().len(), 0);

    link("/dev/zero", dir.join("zero.json"));
    mkfifo(&dir.join("fifo.json"));
    for b in ["zero.json", "fifo.json"] {
        let o = run(&dir, &["check", "ok", "--baseline", b]);
        assert_eq!(o.code, 2, "{b}: {}", o.stderr);
        assert!(o.stderr.contains("regular file"), "{}", o.stderr);
    }
}

/// Item 7: after `--` every argument is a path, and the pre-commit hook passes `--only --`,
/// after which every argument is a file to report.
#[test]
fn arguments_after_double_dash_are_paths() {
    let dir = scratch("double_dash");
    let billing = "class Billing {\n    // real code\n}\n";
    write(&dir, "Billing.kt", billing);
    write(&dir, "--output=Billing.kt", PAY);
    write(&dir, "-", PAY);
    let o = run(
        &dir,
        &[
            "check",
            "--format",
            "short",
            "--",
            "--output=Billing.kt",
            "-",
        ],
    );
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("Billing.kt")).unwrap(),
        billing
    );
    assert_eq!(o.stdout.lines().count(), 1, "{}", o.stdout);
    // `-` after `--` is the file named `-`, not standard input.
    assert!(
        o.stderr.contains("-: not a Rust, Java or Kotlin file"),
        "{}",
        o.stderr
    );
    let hooks = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml"),
    )
    .unwrap();
    assert!(hooks.contains("args: [\"--only\", \"--\"]"), "{hooks}");
    // The hook's form: `--only --` makes every later argument a file to report.
    let o = run(
        &dir,
        &[
            "check",
            "--format",
            "short",
            "--only",
            "--",
            "--output=Billing.kt",
            "-",
        ],
    );
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.join("Billing.kt")).unwrap(),
        billing
    );
    assert_eq!(o.stdout.lines().count(), 1, "{}", o.stdout);
    assert!(o.stdout.starts_with("--output=Billing.kt:"), "{}", o.stdout);
}

/// Item 11: a NUL byte in a comment does not make a file "binary"; `--strict` exits 2
/// when a file could not be analysed.
#[test]
fn nul_in_comment_is_analysed_and_strict_fails_on_skips() {
    let dir = scratch("nul_strict");
    write(&dir, "nul.rs", &format!("// \0\n{RUST_BUG}"));
    write(
        &dir,
        "Nul.kt",
        &PAY.replace("class Pay {", "class Pay { /* \0 */"),
    );
    let o = run(&dir, &["check", ".", "--format", "json"]);
    assert_eq!(o.code, 1, "{}", o.stdout);
    assert_eq!(
        json(&o)["findings"].as_array().unwrap().len(),
        2,
        "{}",
        o.stdout
    );
    std::fs::write(dir.join("bad.rs"), b"fn a() {}\n\xff\n").unwrap();
    let o = run(&dir, &["check", "bad.rs"]);
    assert_eq!(o.code, 0);
    let o = run(&dir, &["check", "bad.rs", "--strict"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("--strict"), "{}", o.stderr);
}

/// Item 13: escape sequences from source text and file names never reach the output raw.
#[test]
fn terminal_escapes_are_neutralised() {
    let dir = scratch("escapes");
    let evil = "\u{1b}]0;PWNED\u{7}\u{1b}]52;c;ZWNobyBwd25lZA==\u{7}\u{9b}31m\u{202e}";
    write(
        &dir,
        "Pay.kt",
        &PAY.replace(".toString()", &format!(".toString() // {evil}")),
    );
    write(&dir, "E\u{1b}[2J.kt", PAY);
    std::fs::write(dir.join("Bin\u{1b}]0;X\u{7}.kt"), b"\xff\0").unwrap();
    for format in ["human", "short", "github"] {
        let o = run(&dir, &["check", ".", "--format", format]);
        assert_eq!(o.code, 1, "{format}");
        for out in [&o.stdout, &o.stderr] {
            assert!(
                !out.contains('\u{1b}')
                    && !out.contains('\u{7}')
                    && !out.contains('\u{9b}')
                    && !out.contains('\u{202e}'),
                "{format}: {out:?}"
            );
        }
    }
}

/// A committed configuration's `[[boundary]] label` is drawn in the human report's snippet
/// and printed by `idemlint catalogue`: its escapes and bidi overrides never reach the
/// terminal raw.
#[test]
fn configuration_labels_are_escaped_in_reports_and_catalogue() {
    let dir = scratch("label-escapes");
    write(
        &dir,
        "idemlint.toml",
        "[[boundary]]\ncallee = [\"withBackoff\"]\nform = \"lambda-arg\"\nkind = \"retry\"\nflavor = \"retry\"\nlabel = \"team \\u001b]0;PWNED\\u0007 \u{202e}kcab \\u0085\"\n",
    );
    write(
        &dir,
        "Pay.kt",
        &PAY.replace("Retry.withRetry(3)", "withBackoff"),
    );
    let clean = |out: &str| {
        !out.contains('\u{1b}')
            && !out.contains('\u{7}')
            && !out.contains('\u{85}')
            && !out.contains('\u{202e}')
    };
    let o = run(&dir, &["check", ".", "--color", "never"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stdout.contains("team "),
        "the label is drawn: {}",
        o.stdout
    );
    assert!(clean(&o.stdout) && clean(&o.stderr), "{:?}", o.stdout);
    let o = run(&dir, &["catalogue", ".", "--no-builtin"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("\\u202E"), "{}", o.stdout);
    assert!(clean(&o.stdout), "{:?}", o.stdout);
    // The escaped catalogue still reads back as the same configuration.
    let table: toml::Table = o.stdout.parse().expect("valid TOML");
    let label = table["boundary"][0]["label"].as_str().unwrap();
    assert!(
        label.contains('\u{202e}') && label.contains('\u{1b}'),
        "{label:?}"
    );
}

/// Item 17: `--stdin-filename` is escaped; standard input is checked for binary content.
#[test]
fn stdin_name_is_escaped_and_binary_stdin_is_reported() {
    let dir = scratch("stdin");
    let o = run_bin(
        "idemlint",
        &dir,
        &[
            "check",
            "--stdin-filename",
            "a\nb.kt",
            "-",
            "--format",
            "short",
        ],
        |c| {
            c.write_stdin(PAY);
        },
    );
    assert_eq!(o.code, 1);
    assert_eq!(o.stdout.lines().count(), 1, "{}", o.stdout);
    assert!(o.stdout.starts_with("a\\nb.kt:6:"), "{}", o.stdout);
    let o = run_bin(
        "idemlint",
        &dir,
        &[
            "check",
            "--stdin-filename",
            "x.kt",
            "-",
            "--format",
            "json",
            "--strict",
        ],
        |c| {
            c.write_stdin(&b"\x89PNG\0\0\xff"[..]);
        },
    );
    assert_eq!(o.code, 2);
    assert!(
        json(&o)["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("binary")
    );
}

/// Item 14: baseline counts are checked, duplicates merged, zero counts rejected, a BOM
/// named, and stale entries summarised.
#[test]
fn baseline_arithmetic_and_shape() {
    let dir = scratch("baseline_arith");
    write(&dir, "Pay.kt", PAY);
    let o = run(&dir, &["check", ".", "--write-baseline", "b.json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let b: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("b.json")).unwrap()).unwrap();
    let entry = b["entries"][0].clone();
    let with = |entries: Vec<serde_json::Value>| {
        let mut b = b.clone();
        b["entries"] = serde_json::Value::Array(entries);
        b.to_string()
    };
    let counted = |n: u64| {
        let mut e = entry.clone();
        e["count"] = n.into();
        e
    };
    // Overflowing counts: an error, not a wrapped number.
    write(
        &dir,
        "max.json",
        &with(vec![counted(u64::MAX), counted(u64::MAX)]),
    );
    let o = run(&dir, &["check", ".", "--baseline", "max.json"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(!o.stderr.contains("18446744073709551613"));
    // Duplicates merge: [1, 0] used to keep only the last entry (0) and hide nothing.
    write(&dir, "zero.json", &with(vec![counted(1), counted(0)]));
    let o = run(&dir, &["check", ".", "--baseline", "zero.json"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("count 0"), "{}", o.stderr);
    write(&dir, "dup.json", &with(vec![counted(1), counted(1)]));
    let o = run(
        &dir,
        &["check", ".", "--baseline", "dup.json", "--format", "json"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(json(&o)["baseline"]["stale"][0]["recorded"], 2);
    // BOM.
    write(
        &dir,
        "bom.json",
        &format!("\u{feff}{}", with(vec![counted(1)])),
    );
    let o = run(&dir, &["check", ".", "--baseline", "bom.json"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("byte-order mark"), "{}", o.stderr);
    // Many stale entries: a few lines and a summary, not one line each.
    let many: Vec<_> = (0..500)
        .map(|i| {
            let mut e = counted(1);
            e["fingerprint"] = format!("{i:032x}").into();
            e
        })
        .collect();
    write(&dir, "stale.json", &with(many));
    let o = run(&dir, &["check", ".", "--baseline", "stale.json", "--quiet"]);
    assert!(o.stderr.lines().count() < 10, "{}", o.stderr);
    assert!(
        o.stderr.contains("500 stale baseline entries"),
        "{}",
        o.stderr
    );
}

/// Item 9: a file over the size limit (default 10 MiB; `max-file-size`, `--max-file-size`)
/// is reported in `errors` with its path and the reason, quickly and without parsing it,
/// and the other files' findings survive; a dense file (one-character tokens) under the
/// byte limit is refused the same way instead of taking gigabytes.
#[test]
fn oversized_and_dense_files_are_reported_and_the_run_continues() {
    let dir = scratch("size-limit");
    write(&dir, "Pay.kt", PAY);
    write(&dir, "Big.kt", &"val x = 1\n".repeat((11 << 20) / 10));
    write(
        &dir,
        "Dense.kt",
        &format!("val idempotencyKey = listOf({}1)\n", "1,".repeat(3 << 20)),
    );
    let started = std::time::Instant::now();
    let o = run(&dir, &["check", ".", "--format", "json"]);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(o.code, 1, "{}", o.stderr);
    let v = json(&o);
    assert_eq!(v["findings"].as_array().unwrap().len(), 1, "{v}");
    let errors = v["errors"].as_array().unwrap();
    let msg = |p: &str| {
        errors
            .iter()
            .find(|e| e["path"] == p)
            .unwrap_or_else(|| panic!("no error for {p}: {v}"))["message"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(msg("Big.kt").contains("file too large") && msg("Big.kt").contains("10 MiB"));
    assert!(
        msg("Dense.kt").contains("file too dense"),
        "{}",
        msg("Dense.kt")
    );
    assert!(msg("Big.kt").contains("--max-file-size"));
    // --strict makes the refusal fail the run.
    assert_eq!(
        run(&dir, &["check", ".", "--strict", "--format", "json"]).code,
        2
    );

    // A smaller limit from the command line, and from the configuration.
    let o = run(
        &dir,
        &[
            "check",
            "Pay.kt",
            "--max-file-size",
            "100B",
            "--format",
            "json",
        ],
    );
    let v = json(&o);
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("100 bytes"),
        "{v}"
    );
    assert_eq!(v["findings"].as_array().unwrap().len(), 0);
    write(&dir, "idemlint.toml", "max-file-size = \"0.1KB\"\n");
    let v = json(&run(&dir, &["check", "Pay.kt", "--format", "json"]));
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("file too large"),
        "{v}"
    );
    // The flag overrides the configuration.
    let v = json(&run(
        &dir,
        &[
            "check",
            "Pay.kt",
            "--max-file-size",
            "1MiB",
            "--format",
            "json",
        ],
    ));
    assert_eq!(v["findings"].as_array().unwrap().len(), 1, "{v}");
    write(&dir, "idemlint.toml", "max-file-size = \"ten\"\n");
    let o = run(&dir, &["check", "Pay.kt"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("max-file-size"), "{}", o.stderr);
    assert_eq!(
        run(&dir, &["check", "Pay.kt", "--max-file-size", "10XB"]).code,
        2
    );

    // Standard input gets the same limit.
    std::fs::remove_file(dir.join("idemlint.toml")).unwrap();
    let o = run_bin(
        "idemlint",
        &dir,
        &[
            "check",
            "--max-file-size",
            "50",
            "--stdin-filename",
            "Pay.kt",
            "-",
            "--format",
            "json",
        ],
        |c| {
            c.write_stdin(PAY);
        },
    );
    assert!(
        o.stdout.contains("file too large"),
        "{} {}",
        o.stdout,
        o.stderr
    );
}

/// Receiver types were looked up among every binding of the same name in the file, so a
/// file of many functions with the same parameter name took time quadratic in its size.
#[test]
fn many_functions_with_the_same_parameter_names_stay_linear() {
    let dir = scratch("receiver-types");
    let mut text = String::from("use uuid::Uuid;\n");
    for i in 0..20_000 {
        text.push_str(&format!(
            "fn helper{i}(a: u32, b: &str) -> String {{ a.to_string() + b.trim() }}\n"
        ));
    }
    write(&dir, "many.rs", &text);
    let started = std::time::Instant::now();
    let o = run(
        &dir,
        &["check", "many.rs", "--no-prefilter", "--format", "json"],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
    // Seconds before the fix in a debug build; well under one after it.
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
}

/// Item 10: inputs that used to take super-linear time are analysed in linear time or
/// refused at once with a message: stacked suppression comments (quadratic before: 15 s
/// for 40,000 lines in a release build), a 1.2 MB Rust method chain (60 to 110 s before
/// it was refused).
#[test]
fn superlinear_inputs_are_linear_or_refused_fast() {
    let dir = scratch("superlinear");
    write(
        &dir,
        "Supp.kt",
        &format!(
            "import java.util.UUID\nsuspend fun f(api: Api) = retryOnTransient {{\n{}    api.send(idempotencyKey = UUID.randomUUID().toString())\n}}\n",
            "    // idemlint: allow(key-in-retry-scope)\n".repeat(40_000)
        ),
    );
    write(
        &dir,
        "chain.rs",
        &format!(
            "fn f() {{ let idempotency_key = uuid::Uuid::new_v4(){}; }}\n",
            ".to_string()".repeat(100_000)
        ),
    );
    // `format!` with 40,000 arguments (quadratic in the flow's getter lookup before) and a
    // Kotlin raw string with 40,000 templates.
    write(
        &dir,
        "fmt.rs",
        &format!(
            "fn f(x: u32) {{ let idempotency_key = format!(\"{{}}\"{}); }}\n",
            ", x.to_string()".repeat(40_000)
        ),
    );
    write(
        &dir,
        "Tpl.kt",
        &format!(
            "val idempotencyKey = \"\"\"{}\"\"\"\n",
            "${a}-".repeat(40_000)
        ),
    );
    let started = std::time::Instant::now();
    let o = run(&dir, &["check", ".", "--no-prefilter", "--format", "json"]);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let v = json(&o);
    // The finding is suppressed (and every stacked directive is used).
    assert_eq!(v["findings"].as_array().unwrap().len(), 0, "{v}");
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{v}");
    assert_eq!(errors[0]["path"], "chain.rs");
    let msg = errors[0]["message"].as_str().unwrap();
    assert!(msg.contains("nests more than 1000 levels"), "{msg}");
}

/// A construct nested past the walker's limit is reported where it is, says what is not
/// analysed (not "the file was skipped"), and does not disable the rest of the file; a
/// macro body nested too deep (`json!` objects in objects) is reported instead of being
/// dropped silently.
#[test]
fn nesting_limits_point_at_the_construct_and_say_the_consequence() {
    let dir = scratch("nesting-limits");
    let deep = format!("{}x{}", "(".repeat(1100), ")".repeat(1100));
    write(
        &dir,
        "deep.rs",
        &format!("fn a() {{}}\nfn f(x: u32) -> u32 {{\n    {deep}\n}}\n{RUST_BUG}"),
    );
    let nested = (0..9).fold("uuid::Uuid::new_v4()".to_string(), |acc, i| {
        format!("{{ \"k{i}\": {acc} }}")
    });
    write(
        &dir,
        "json.rs",
        &format!("fn a() {{}}\nfn f() {{\n    let body = serde_json::json!({nested});\n}}\n"),
    );
    let v = json(&run(
        &dir,
        &["check", ".", "--no-prefilter", "--format", "json"],
    ));
    let errors = v["errors"].as_array().unwrap();
    let deep_err = errors
        .iter()
        .find(|e| e["path"] == "deep.rs")
        .expect("deep.rs error");
    assert_eq!(deep_err["line"], 3, "{deep_err}");
    let m = deep_err["message"].as_str().unwrap();
    assert!(m.contains("not analysed") && !m.contains("skipped"), "{m}");
    // The rest of the file is analysed: RUST_BUG's finding after the deep construct.
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == "deep.rs"),
        "{v}"
    );
    let json_err = errors
        .iter()
        .find(|e| e["path"] == "json.rs")
        .expect("json.rs error");
    assert_eq!(json_err["line"], 3, "{json_err}");
    assert!(
        json_err["message"]
            .as_str()
            .unwrap()
            .contains("brace levels"),
        "{json_err}"
    );
}

/// Item 4: configuration discovery stops at the repository root (the nearest directory
/// with `.git`), or, outside a repository, at the working directory or the checked path:
/// a configuration above the checkout (a shared `/tmp`, the runner's home) is never read,
/// while the repository's own root configuration still applies to a subdirectory.
#[test]
fn configuration_discovery_stops_at_the_repository_root() {
    // Outside this project's git checkout, so the test controls every `.git`.
    let base = std::env::temp_dir().join(format!("idemlint-ceiling-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let off = "[rules]\nkey-in-retry-scope = \"off\"\n";
    // Above the checkout: an attacker's (or a stale) configuration turning the rule off.
    write(&base, "idemlint.toml", off);
    write(&base, "repo/src/Pay.kt", PAY);
    std::fs::create_dir_all(base.join("repo/.git")).unwrap();
    let repo = base.join("repo");
    let count = |dir: &Path, args: &[&str]| {
        let mut a = vec!["check"];
        a.extend_from_slice(args);
        a.extend_from_slice(&["--format", "json"]);
        json(&run(dir, &a))["findings"].as_array().unwrap().len()
    };
    assert_eq!(count(&repo, &["."]), 1);
    assert_eq!(count(&repo.join("src"), &["."]), 1);
    // Run from above the repository, naming it: still not read.
    assert_eq!(count(&base, &["repo"]), 1);
    // The repository's own root configuration applies below it.
    write(&repo, "idemlint.toml", off);
    assert_eq!(count(&repo.join("src"), &["."]), 0);
    std::fs::remove_file(repo.join("idemlint.toml")).unwrap();
    // --config names one explicitly: read.
    let above = base.join("idemlint.toml");
    assert_eq!(count(&repo, &[".", "--config", above.to_str().unwrap()]), 0);
    // Without a repository: the working directory (or the checked path) is the ceiling.
    std::fs::remove_dir_all(repo.join(".git")).unwrap();
    assert_eq!(count(&repo, &["."]), 1);
    assert_eq!(
        count(&base, &["repo"]),
        0,
        "cwd is the ceiling: its configuration applies"
    );
    let _ = std::fs::remove_dir_all(&base);
}

/// Item 5: tracked files matched by `.gitignore` / `.ignore` or in hidden directories are
/// not walked (as ripgrep, ruff and clippy users expect), but never silently: the summary
/// line counts them; `--no-ignore` checks them; a file named explicitly is always checked.
#[test]
fn ignored_and_hidden_files_are_counted_and_checkable() {
    let dir = scratch("ignored-policy");
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    write(&dir, ".gitignore", "gen/\n");
    write(&dir, ".ignore", "Dot.kt\n");
    write(&dir, "src/.cache/Hidden.kt", PAY);
    write(&dir, "src/gen/Ignored.kt", PAY);
    write(&dir, "src/Dot.kt", PAY);
    write(&dir, "src/Seen.kt", PAY);
    let o = run(&dir, &["check", ".", "--format", "json"]);
    assert_eq!(
        json(&o)["findings"].as_array().unwrap().len(),
        1,
        "{}",
        o.stdout
    );
    assert!(
        o.stderr
            .contains("not checked: 1 source file and 2 directories"),
        "{}",
        o.stderr
    );
    let o = run(&dir, &["check", ".", "--no-ignore", "--format", "json"]);
    assert_eq!(
        json(&o)["findings"].as_array().unwrap().len(),
        4,
        "{}",
        o.stdout
    );
    assert!(!o.stderr.contains("not checked"), "{}", o.stderr);
    let o = run(&dir, &["check", "src/gen/Ignored.kt", "--format", "json"]);
    assert_eq!(
        json(&o)["findings"].as_array().unwrap().len(),
        1,
        "{}",
        o.stdout
    );
    let o = run(&dir, &["check", ".", "--show-files", "--no-ignore"]);
    assert!(
        o.stdout.contains("Hidden.kt") && o.stdout.contains("Ignored.kt"),
        "{}",
        o.stdout
    );
}

/// Break-it: SARIF's `contextRegion` held the whole line of every finding, so one long
/// (minified) line with many findings multiplied the report by the line's length (277 KB
/// of Kotlin gave 56 MB of SARIF). The context is now a bounded window around the finding.
#[test]
fn sarif_context_is_bounded_on_long_lines() {
    let dir = scratch("sarif-long-line");
    let unit =
        "Retry.withRetry(3) { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }; ";
    write(
        &dir,
        "Long.kt",
        &format!(
            "import java.util.UUID\nfun f(api: Api) {{ {}{}}}\n",
            "val pad = 1; ".repeat(20_000),
            unit.repeat(100)
        ),
    );
    let o = run(&dir, &["check", "Long.kt", "--format", "sarif"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let results = v["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 100);
    assert!(
        o.stdout.len() < 2 << 20,
        "{} bytes of SARIF",
        o.stdout.len()
    );
    let ctx = &results[0]["locations"][0]["physicalLocation"]["contextRegion"];
    assert!(
        ctx["snippet"]["text"].as_str().unwrap().len() <= 2 * 512 + 200,
        "{ctx}"
    );
    assert!(ctx["startColumn"].as_u64().unwrap() > 1, "{ctx}");
}

/// Issue 12 leftover (b): every unused suppression and every finding looked up the scope
/// around it among all scopes of the file, so 80,000 `@Suppress("idemlint:…")` functions
/// in one Kotlin class took time quadratic in their number. The lookup is now a search
/// (`model::ScopeLookup`); what this checks is that it gives the same answers: for every
/// byte offset of every fixture, and (through fingerprints, which include the enclosing
/// names) for each suppression of a class with many of them, which must fingerprint as
/// it does alone.
#[test]
fn scope_lookup_agrees_with_the_linear_scan() {
    use idemlint::model::{Language, ScopeLookup};
    let mut files = Vec::new();
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if Language::from_path(&p).is_some() {
                files.push(p);
            }
        }
    }
    assert!(files.len() > 100, "{} fixtures", files.len());
    let mut compared = 0;
    for p in &files {
        let text = std::fs::read_to_string(p).unwrap();
        let m = idemlint::lang::lower(Language::from_path(p).unwrap(), &text);
        let fast = ScopeLookup::new(&m);
        for offset in 0..=text.len() + 1 {
            assert_eq!(
                fast.innermost(offset),
                m.innermost_scope_at(offset),
                "{} at {offset}",
                p.display()
            );
            compared += 1;
        }
    }
    assert!(compared > 100_000);

    let dir = scratch("many-suppressions");
    let one = |i: usize| {
        format!(
            "    @Suppress(\"idemlint:key-in-retry-scope\")\n    fun f{i}(a: Int): Int = a + {i}\n"
        )
    };
    let n = 3_000;
    let body: String = (0..n).map(one).collect();
    write(&dir, "Big.kt", &format!("class Big {{\n{body}}}\n"));
    let v = json(&run(
        &dir,
        &["check", "Big.kt", "--no-prefilter", "--format", "json"],
    ));
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), n, "one unused suppression each");
    let mut prints: Vec<&str> = findings
        .iter()
        .map(|f| f["fingerprint"].as_str().unwrap())
        .collect();
    prints.sort();
    prints.dedup();
    assert_eq!(prints.len(), n, "fingerprints name each function");
    for i in [0, 1, n / 2, n - 1] {
        write(&dir, "Big.kt", &format!("class Big {{\n{}}}\n", one(i)));
        let alone = json(&run(&dir, &["check", "Big.kt", "--format", "json"]));
        let fp = alone["findings"][0]["fingerprint"].as_str().unwrap();
        assert!(
            findings
                .iter()
                .any(|f| f["fingerprint"] == fp && f["line"] == 2 + 2 * i as u64),
            "f{i}: {fp}"
        );
    }
}

/// Issue 12 leftover (a): a macro's tokens are parsed when it is lowered, and that parse
/// covers every macro inside it, so macros nested in macros cost time quadratic in the
/// depth (1,600 nested `m! { fn a() { .. } }` took 3.8 s, 4,800 nested `format!` 3.5 s).
/// Nesting is now bounded: a key 10 macro levels deep is still found; past the bound the
/// construct is reported in `errors` where it starts, and the rest of the file (a finding
/// after it) is analysed.
#[test]
fn macros_nested_in_macros_are_bounded_and_reported() {
    let dir = scratch("macro-nesting");
    let nest = |d: usize, inner: &str| {
        (0..d).fold(inner.to_string(), |acc, _| {
            format!("std::convert::identity(format!(\"{{}}\", {acc}))")
        })
    };
    let bug = |d: usize| {
        format!(
            "pub async fn charge() {{\n    backoff::future::retry(policy(), || async {{\n        send({}).await\n    }}).await;\n}}\nfn send(idempotency_key: String) {{}}\n",
            nest(d, "uuid::Uuid::new_v4()")
        )
    };
    write(&dir, "shallow.rs", &bug(10));
    let items = (0..1_500).fold("x".to_string(), |acc, _| {
        format!("m! {{ fn a() {{ {acc} }} }}")
    });
    write(&dir, "deep.rs", &format!("{items}\n{RUST_BUG}"));
    write(&dir, "deep_fmt.rs", &bug(2_000));
    let v = json(&run(
        &dir,
        &["check", ".", "--no-prefilter", "--format", "json"],
    ));
    let found: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(found, ["deep.rs", "shallow.rs"], "{v}");
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 2, "{v}");
    for e in errors {
        let m = e["message"].as_str().unwrap();
        assert!(m.contains("macro invocations nested deeper than 16"), "{m}");
        assert!(m.contains("the rest of the file is"), "{m}");
    }
    let deep = errors.iter().find(|e| e["path"] == "deep.rs").unwrap();
    assert_eq!(deep["line"], 1, "{deep}");
    // --strict makes it fail the run.
    assert_eq!(
        run(&dir, &["check", ".", "--strict", "--no-prefilter"]).code,
        2
    );
}

/// Every regular file under `dir` (not following links): relative path -> bytes; links:
/// relative path -> their target text.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_path_buf();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.file_type().is_symlink() {
                let t = std::fs::read_link(&p).unwrap();
                out.insert(rel, [b"->".as_slice(), t.as_os_str().as_bytes()].concat());
            } else if m.is_dir() {
                out.insert(rel, b"<dir>".to_vec());
                stack.push(p);
            } else if m.is_file() {
                out.insert(rel, std::fs::read(&p).unwrap());
            } else {
                out.insert(rel, b"<special>".to_vec());
            }
        }
    }
    out
}

/// The done-when of issue 12 in one tree: a pull request commits links to secrets (as
/// configuration, ignore file, sources and report names), a toolchain override, cargo
/// aliases and a rustc wrapper, FIFOs and a device link named like sources, and hostile
/// names. Checking it (plain, with `--workspace`, with outputs) must start no process,
/// write no byte outside the named outputs, print no secret, and account for every
/// source-named entry: analysed (with its finding), or in `errors`.
#[test]
fn malicious_tree_end_to_end() {
    let root = scratch("malicious-tree");
    let outside = root.join("outside");
    let secret_file = write(
        &outside,
        "credentials",
        &format!("[credential]\nextraheader = AUTHORIZATION: basic {SECRET}\nidemlint\n"),
    );
    let marker = root.join("PWNED");
    let spy = format!(
        "#!/bin/sh\necho \"$0 $@\" >> '{}'\nexit 1\n",
        marker.display()
    );
    for bin in [
        "bin/cargo",
        "bin/rustc",
        "bin/git",
        "bin/rustup",
        "tree/tc/bin/cargo",
    ] {
        let p = write(&root, bin, &spy);
        std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let tree = root.join("tree");
    // Sources, each with one finding, some with hostile names.
    let names: Vec<std::ffi::OsString> = vec![
        "src/Pay.kt".into(),
        "src/Nl\nX.kt".into(),
        "src/E\u{1b}]0;T\u{7}.kt".into(),
        "src/--output=Pay.kt".into(),
        "src/-rf.kt".into(),
        std::ffi::OsStr::from_bytes(b"src/Bad\xff.kt").to_owned(),
    ];
    for n in &names {
        let p = tree.join(n);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, PAY).unwrap();
    }
    write(&tree, "src/lib.rs", RUST_BUG);
    write(
        &tree,
        "Cargo.toml",
        "[package]\nname = \"evil\"\nversion = \"0.1.0\"\nbuild = \"build.rs\"\n[workspace]\nmembers = [\".\"]\n",
    );
    write(&tree, "build.rs", "fn main() {}\n");
    write(
        &tree,
        "rust-toolchain.toml",
        &format!("[toolchain]\npath = \"{}\"\n", tree.join("tc").display()),
    );
    write(
        &tree,
        ".cargo/config.toml",
        &format!(
            "[alias]\nidemlint = \"build\"\nmetadata = \"build\"\n[build]\nrustc-wrapper = \"{}\"\n",
            root.join("bin/rustc").display()
        ),
    );
    // Links to the secret, FIFOs and devices where idemlint reads or walks.
    link(&secret_file, tree.join("src/Leak.kt"));
    link(&secret_file, tree.join("src/.gitignore"));
    link("/dev/zero", tree.join("src/Zero.rs"));
    mkfifo(&tree.join("src/Fifo.kt"));
    mkfifo(&tree.join(".ignore"));
    // Report names committed as links to a file outside.
    write(&outside, "victim.txt", "precious\n");
    link(outside.join("victim.txt"), tree.join("idemlint.sarif"));
    link(outside.join("victim.txt"), tree.join("baseline.json"));

    let path = format!(
        "{}:{}",
        root.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = |c: &mut Command| {
        c.env("PATH", &path)
            .env("CARGO", root.join("bin/cargo"))
            .env("RUSTC", root.join("bin/rustc"))
            .env("SECRET_TOKEN", SECRET);
    };
    let outside_before = snapshot(&outside);
    let tree_before = snapshot(&tree);
    let runs: Vec<Vec<&str>> = vec![
        vec!["check", ".", "--format", "json", "--no-prefilter"],
        vec!["check", "--workspace", "--format", "json"],
        vec!["check", ".", "--format", "human", "--strict"],
        vec![
            "check",
            ".",
            "--format",
            "sarif",
            "--output",
            "idemlint.sarif",
        ],
        vec!["check", ".", "--write-baseline", "baseline.json"],
    ];
    let mut outs = Vec::new();
    for args in &runs {
        let o = run_bin("idemlint", &tree, args, env);
        assert!(
            o.code == 1 || o.code == 2 || o.code == 0,
            "{args:?}: {}",
            o.stderr
        );
        outs.push((args.clone(), o));
    }
    let o = run_bin(
        "cargo-idemlint",
        &tree,
        &["idemlint", "--format", "json"],
        env,
    );
    outs.push((vec!["cargo-idemlint"], o));

    // No process: none of the spies (PATH, CARGO, RUSTC, the toolchain override, the
    // rustc wrapper) ran.
    assert!(
        !marker.exists(),
        "ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    // No secret in any output, and no raw control character.
    let report = std::fs::read_to_string(tree.join("idemlint.sarif")).unwrap();
    let baseline = std::fs::read_to_string(tree.join("baseline.json")).unwrap();
    for (args, o) in &outs {
        for text in [&o.stdout, &o.stderr] {
            assert!(!text.contains(SECRET), "{args:?} printed the secret");
            assert!(!text.contains('\u{1b}'), "{args:?}: raw ESC");
        }
    }
    assert!(!report.contains(SECRET) && !baseline.contains(SECRET));
    // No byte outside the named outputs: the outside directory is unchanged, and in the
    // tree only the two outputs changed (each link replaced by the file itself).
    assert_eq!(snapshot(&outside), outside_before);
    let mut tree_after = snapshot(&tree);
    for out in ["idemlint.sarif", "baseline.json"] {
        assert!(std::fs::symlink_metadata(tree.join(out)).unwrap().is_file());
        tree_after.remove(Path::new(out));
    }
    let mut expected = tree_before.clone();
    expected.remove(Path::new("idemlint.sarif"));
    expected.remove(Path::new("baseline.json"));
    assert_eq!(tree_after, expected, "a file in the tree changed");
    // Every source-named entry is accounted for: analysed with its finding, or in errors.
    let v = json(&outs[0].1);
    let mut found: Vec<String> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect();
    found.sort();
    found.dedup();
    assert_eq!(found.len(), names.len() + 1, "{found:?}");
    let errors: Vec<&str> = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    for p in [
        "src/Leak.kt",
        "src/Zero.rs",
        "src/Fifo.kt",
        "src/.gitignore",
        ".ignore",
    ] {
        assert!(errors.contains(&p), "{p} not accounted for: {errors:?}");
    }
    // --strict fails the run because of them.
    assert_eq!(outs[2].1.code, 2, "{}", outs[2].1.stderr);
    // The workspace run and cargo idemlint found the Rust file without running cargo.
    for i in [1, 5] {
        let v = json(&outs[i].1);
        assert!(
            v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["path"] == "src/lib.rs"),
            "{:?}: {v}",
            outs[i].0
        );
    }
}

/// Break-it: `--output` and `--write-baseline` replaced whatever they named, so a slip
/// (`--output Billing.kt`) replaced a source file with the report, `--output F
/// --write-baseline F` kept only one of them, and `--output` on the `--baseline` file
/// replaced the baseline with a report. All are refused before anything is analysed.
#[test]
fn outputs_never_replace_sources_or_each_other() {
    let dir = scratch("output-collisions");
    write(&dir, "Pay.kt", PAY);
    write(&dir, "lib.rs", RUST_BUG);
    let o = run(&dir, &["check", ".", "--write-baseline", "b.json"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let base = std::fs::read_to_string(dir.join("b.json")).unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["--output", "Pay.kt"],
        vec!["--output=./lib.rs"],
        vec!["--write-baseline", "Pay.kt"],
        vec!["--output", "New.java"],
        vec!["--output", "r.json", "--write-baseline", "./r.json"],
        vec!["--output", "b.json", "--baseline", "b.json"],
    ];
    for args in cases {
        let mut a = vec!["check", "."];
        a.extend(&args);
        let o = run(&dir, &a);
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(o.stderr.starts_with("error: "), "{args:?}: {}", o.stderr);
    }
    assert_eq!(std::fs::read_to_string(dir.join("Pay.kt")).unwrap(), PAY);
    assert_eq!(
        std::fs::read_to_string(dir.join("lib.rs")).unwrap(),
        RUST_BUG
    );
    assert_eq!(std::fs::read_to_string(dir.join("b.json")).unwrap(), base);
    assert!(!dir.join("New.java").exists() && !dir.join("r.json").exists());
    // Pruning a baseline in place stays allowed.
    let o = run(
        &dir,
        &[
            "check",
            ".",
            "--baseline",
            "b.json",
            "--write-baseline",
            "b.json",
        ],
    );
    assert_eq!(o.code, 0, "{}", o.stderr);
}

/// Break-it: `max-file-size` in a configuration file (which the checked tree may have
/// written) could lift the memory bound without limit (`"100GB"`, then a 200 MB file took
/// 21 GB). A configuration file may set at most 64 MiB; the command line is not limited.
#[test]
fn configuration_cannot_lift_the_file_size_bound() {
    let dir = scratch("config-size-ceiling");
    write(&dir, "Pay.kt", PAY);
    write(&dir, "idemlint.toml", "max-file-size = \"100GB\"\n");
    let o = run(&dir, &["check", "."]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("at most 64 MiB"), "{}", o.stderr);
    assert!(o.stderr.contains("--max-file-size"), "{}", o.stderr);
    write(&dir, "idemlint.toml", "max-file-size = \"64MiB\"\n");
    assert_eq!(run(&dir, &["check", "."]).code, 1);
    std::fs::remove_file(dir.join("idemlint.toml")).unwrap();
    assert_eq!(
        run(&dir, &["check", ".", "--max-file-size", "100GB"]).code,
        1
    );
}

/// Break-it: a committed baseline's entries are repeated in stale-entry warnings and in
/// the JSON report; 3 entries with 2 MB strings gave 12 MB of stderr and of JSON on every
/// run. The repeated texts are clipped (240 bytes and the full length).
#[test]
fn stale_baseline_texts_are_clipped() {
    let dir = scratch("stale-clipped");
    write(&dir, "Pay.kt", PAY);
    let entries: Vec<serde_json::Value> = (0..3)
        .map(|i| {
            serde_json::json!({"fingerprint": format!("f{i}"), "count": 1, "rule": "r",
                "path": "p".repeat(2 << 20), "source": "s".repeat(2 << 20)})
        })
        .collect();
    let b = serde_json::json!({"version": 1, "fingerprint": "idemlint/v1", "entries": entries});
    write(&dir, "b.json", &b.to_string());
    let o = run(
        &dir,
        &["check", ".", "--baseline", "b.json", "--format", "json"],
    );
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.len() < 10_000,
        "{} bytes of stderr",
        o.stderr.len()
    );
    assert!(o.stdout.len() < 20_000, "{} bytes of JSON", o.stdout.len());
    let v = json(&o);
    let path = v["baseline"]["stale"][0]["path"].as_str().unwrap();
    assert!(path.ends_with(&format!("({} bytes)", 2 << 20)), "{path}");
}

/// Break-it: `--diff` printed source lines with their raw ESC/OSC sequences (a comment in
/// a file under review retitled the terminal or wrote the clipboard with OSC 52). On a
/// terminal they are escaped; to a pipe or file the diff stays byte for byte (so `patch`
/// applies it).
#[test]
fn diff_on_a_terminal_escapes_controls() {
    let evil = "\u{1b}]0;PWNED\u{7}\u{1b}]52;c;ZZ\u{7}\u{202e}";
    let d = format!("--- a/X.kt\n+++ b/X.kt\n@@ -1 +1 @@\n-a // {evil}\n+b // {evil}\n");
    let shown = idemlint::cli::diff_for(d.clone(), true);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}') && !shown.contains('\u{202e}'),
        "{shown:?}"
    );
    assert_eq!(shown.lines().count(), d.lines().count());
    assert_eq!(idemlint::cli::diff_for(d.clone(), false), d);
    // Through a pipe, the real run keeps the bytes.
    let dir = scratch("diff-controls");
    write(
        &dir,
        "Esc.kt",
        &PAY.replace("class Pay {", &format!("class Pay {{ // {evil}"))
            .replace("amount = amount)", &format!("amount = amount) // {evil}")),
    );
    let o = run(&dir, &["check", ".", "--diff"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(o.stdout.contains(evil), "{:?}", o.stdout);
}

/// Break-it: the command SECURITY.md recommends for untrusted trees honoured the tree's
/// own ignore files, so a pull request adding `.ignore` with `*.kt` left every Kotlin
/// file out and the run passed. The recommended command (read from SECURITY.md) checks
/// them; hard links are not written through by `--fix` either (the rename replaces the
/// name, the other link keeps its content).
#[test]
fn the_recommended_untrusted_command_checks_ignored_files() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("SECURITY.md")).unwrap();
    let line = doc
        .lines()
        .find(|l| l.trim_start().starts_with("idemlint check"))
        .expect("a recommended command")
        .trim();
    let args: Vec<&str> = line.split_whitespace().skip(1).collect();
    assert!(args.contains(&"--output"), "{line}");
    let dir = scratch("recommended-command");
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    write(&dir, ".ignore", "*.kt\n");
    write(&dir, ".gitignore", "src/\n");
    write(&dir, "src/Pay.kt", PAY);
    let o = run(&dir, &args);
    assert_eq!(o.code, 1, "{line}: {}", o.stderr);
    let out = args[args.iter().position(|a| *a == "--output").unwrap() + 1];
    let sarif: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(out)).unwrap()).unwrap();
    assert_eq!(sarif["runs"][0]["results"].as_array().unwrap().len(), 1);

    let other = scratch("hard-link-outside");
    let outside = write(&other, "Pay.kt", PAY);
    std::fs::hard_link(&outside, dir.join("src/Linked.kt")).unwrap();
    let o = run(&dir, &["check", "src/Linked.kt", "--fix"]);
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_ne!(
        std::fs::read_to_string(dir.join("src/Linked.kt")).unwrap(),
        PAY
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), PAY);
}

/// Item 8: `--fix` writes every file it can, leaves a file alone that changed since it was
/// analysed (an edit saved meanwhile survives) or is read-only, and names each failure;
/// the CLI reports the failures and exits 2 after writing the others.
#[test]
fn fix_tries_every_file_and_keeps_edits_made_meanwhile() {
    use idemlint::check::{FixedFile, write_fixed};
    let dir = scratch("fix-partial");
    let fixed = |name: &str, old: &str| FixedFile {
        display: name.to_string(),
        path: dir.join(name),
        old: old.to_string(),
        new: format!("{old}// fixed\n"),
        rules: vec!["key-in-retry-scope"],
    };
    write(&dir, "A.kt", PAY);
    write(
        &dir,
        "B.kt",
        &format!("{PAY}// edit saved while idemlint ran\n"),
    );
    let ro = write(&dir, "C.kt", PAY);
    std::fs::set_permissions(&ro, std::os::unix::fs::PermissionsExt::from_mode(0o444)).unwrap();
    write(&dir, "D.kt", PAY);
    let files = vec![
        fixed("A.kt", PAY),
        fixed("B.kt", PAY),
        fixed("C.kt", PAY),
        fixed("D.kt", PAY),
    ];
    let failed = write_fixed(&files);
    let names: Vec<&str> = failed.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(names, ["B.kt", "C.kt"], "{failed:?}");
    assert!(
        failed[0].message.contains("changed"),
        "{}",
        failed[0].message
    );
    assert!(
        failed[1].message.contains("read-only"),
        "{}",
        failed[1].message
    );
    for ok in ["A.kt", "D.kt"] {
        assert!(
            std::fs::read_to_string(dir.join(ok))
                .unwrap()
                .ends_with("// fixed\n")
        );
    }
    assert!(
        std::fs::read_to_string(dir.join("B.kt"))
            .unwrap()
            .ends_with("// edit saved while idemlint ran\n")
    );
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), PAY);
    // Through the CLI: the writable files are fixed, the read-only one is named, exit 2.
    let cli = scratch("fix-partial-cli");
    for n in ["A", "B", "C"] {
        write(
            &cli,
            format!("{n}.kt"),
            &PAY.replace("class Pay", &format!("class Pay{n}")),
        );
    }
    std::fs::set_permissions(
        cli.join("B.kt"),
        std::os::unix::fs::PermissionsExt::from_mode(0o444),
    )
    .unwrap();
    let o = run(&cli, &["check", ".", "--fix"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr
            .contains("B.kt: could not write the fix: it is read-only"),
        "{}",
        o.stderr
    );
    for (n, changed) in [("A", true), ("B", false), ("C", true)] {
        let now = std::fs::read_to_string(cli.join(format!("{n}.kt"))).unwrap();
        assert_eq!(
            now != PAY.replace("class Pay", &format!("class Pay{n}")),
            changed,
            "{n}"
        );
    }
}

/// Found by a break-it helper: the walk read `.git/info/exclude` and git's global
/// excludes itself, so what they matched was neither counted nor walked by `--no-ignore`,
/// a configuration they matched was skipped (a symbolic link one unreported), and a FIFO
/// there hung the run. Only the tree's `.gitignore` / `.ignore` files count.
#[test]
fn git_excludes_outside_the_tree_files_hide_nothing() {
    let root = scratch("git_excludes");
    let home = root.join("home");
    let tree = root.join("tree");
    write(&tree, ".git/HEAD", "ref: refs/heads/main\n");
    write(&tree, "sub/Pay.kt", PAY);
    write(&tree, "Other.kt", PAY);
    // The configuration turns the rule off; both excludes name it and the other file.
    write(
        &tree,
        "sub/idemlint.toml",
        "[rules]\nkey-in-retry-scope = \"off\"\n",
    );
    write(&tree, ".git/info/exclude", "idemlint.toml\nOther.kt\n");
    write(&home, "git/ignore", "idemlint.toml\nOther.kt\n");
    // Git's global excludes file is found under these.
    let home_here = |c: &mut Command| {
        c.env("XDG_CONFIG_HOME", &home).env("HOME", &home);
    };
    let o = run_bin(
        "idemlint",
        &tree,
        &["check", ".", "--format", "json"],
        home_here,
    );
    let v = json(&o);
    let files: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, vec!["Other.kt"], "{}", o.stderr);
    // A configuration link the excludes name is still reported, not skipped.
    std::fs::remove_file(tree.join("sub/idemlint.toml")).unwrap();
    link("/etc/hostname", tree.join("sub/idemlint.toml"));
    let o = run_bin("idemlint", &tree, &["check", "."], home_here);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("symbolic link"), "{}", o.stderr);
}
