//! action.yml's script (scripts/action.sh) run as GitHub runs it: with GITHUB_ACTION_PATH,
//! GITHUB_WORKSPACE, RUNNER_TEMP, GITHUB_OUTPUT and the inputs as INPUT_* variables. The
//! binary is placed where the action's cache would restore it, so no install runs here.

use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("action")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const BILLING: &str = "import java.util.UUID\n\nsuspend fun charge(api: Api) =\n    retryOnTransient { api.createCharge(idempotencyKey = UUID.randomUUID().toString()) }\n";

struct Run {
    code: i32,
    stdout: String,
    outputs: String,
    sarif: Option<serde_json::Value>,
}

fn git(dir: &Path, args: &[&str]) {
    let ok = std::process::Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok, "git {args:?}");
}

/// A project with one finding, committed; the cached binary in place.
fn setup(name: &str) -> (PathBuf, PathBuf) {
    let base = scratch(name);
    let ws = base.join("workspace");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/Billing.kt"), BILLING).unwrap();
    git(&ws, &["init", "--quiet"]);
    git(&ws, &["add", "-A"]);
    git(&ws, &["commit", "--quiet", "--no-verify", "-m", "init"]);
    let bin = base.join("cache/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_idemlint"), bin.join("idemlint")).unwrap();
    (base, ws)
}

fn action(base: &Path, ws: &Path, inputs: &[(&str, &str)]) -> Run {
    let temp = base.join("runner-temp");
    let _ = std::fs::remove_dir_all(&temp);
    std::fs::create_dir_all(&temp).unwrap();
    let outputs = temp.join("github-output");
    std::fs::write(&outputs, "").unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/action.sh");
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(script)
        .current_dir(base)
        .env("GITHUB_ACTION_PATH", env!("CARGO_MANIFEST_DIR"))
        .env("GITHUB_WORKSPACE", ws)
        .env("RUNNER_TEMP", &temp)
        .env("GITHUB_OUTPUT", &outputs)
        .env("GITHUB_ACTIONS", "true")
        .env("CI", "true")
        .env("IDEMLINT_INSTALL_ROOT", base.join("cache"));
    for (k, v) in inputs {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let sarif = std::fs::read_to_string(temp.join("idemlint.sarif"))
        .ok()
        .map(|s| serde_json::from_str(&s).unwrap());
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        outputs: std::fs::read_to_string(&outputs).unwrap(),
        sarif,
    }
}

#[test]
fn the_action_reports_uploads_and_annotates() {
    let (base, ws) = setup("findings");
    let r = action(
        &base,
        &ws,
        &[("INPUT_PATHS", "."), ("INPUT_FAIL_ON", "warning")],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    let sarif = r.sarif.expect("the SARIF log is written");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(
        results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "src/Billing.kt"
    );
    assert!(r.outputs.contains("findings=1\n"), "{}", r.outputs);
    let sarif_line = r.outputs.lines().find(|l| l.starts_with("sarif=")).unwrap();
    assert!(sarif_line.ends_with("/idemlint.sarif"), "{sarif_line}");
    assert!(
        r.stdout.contains("::error file=src/Billing.kt,line=4"),
        "annotations: {}",
        r.stdout
    );
    // No annotations when asked; fail-on error still fails on an error.
    let r = action(
        &base,
        &ws,
        &[("INPUT_ANNOTATE", "false"), ("INPUT_FAIL_ON", "error")],
    );
    assert_eq!(r.code, 1);
    assert!(!r.stdout.contains("::error file="), "{}", r.stdout);
}

#[test]
fn new_since_reports_only_changed_lines_and_bad_inputs_fail() {
    let (base, ws) = setup("new_since");
    // Nothing changed since HEAD: clean, and an empty log uploaded.
    let r = action(&base, &ws, &[("INPUT_NEW_SINCE", "HEAD")]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(r.outputs.contains("findings=0\n"), "{}", r.outputs);
    assert_eq!(
        r.sarif.unwrap()["runs"][0]["results"]
            .as_array()
            .unwrap()
            .len(),
        0
    );
    // A new file with the defect is reported.
    std::fs::write(
        ws.join("src/Refund.kt"),
        BILLING.replace("charge", "refund"),
    )
    .unwrap();
    let r = action(&base, &ws, &[("INPUT_NEW_SINCE", "HEAD")]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("::error file=src/Refund.kt"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("file=src/Billing.kt"), "{}", r.stdout);
    let r = action(&base, &ws, &[("INPUT_FAIL_ON", "sometimes")]);
    assert_eq!(r.code, 2);
    assert!(r.stdout.contains("fail-on must be error, warning or note"));
    let r = action(&base, &ws, &[("INPUT_NEW_SINCE", "no-such-commit")]);
    assert_eq!(r.code, 2, "{}", r.stdout);
}

#[test]
fn action_yml_runs_the_script_with_its_inputs() {
    let yml =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    assert!(yml.contains("using: composite"));
    assert!(yml.contains("bash \"$GITHUB_ACTION_PATH/scripts/action.sh\""));
    for input in ["paths", "fail-on", "new-since", "upload-sarif", "annotate"] {
        assert!(yml.contains(&format!("\n  {input}:\n")), "input {input}");
    }
    for var in [
        "INPUT_PATHS",
        "INPUT_FAIL_ON",
        "INPUT_NEW_SINCE",
        "INPUT_ANNOTATE",
    ] {
        assert!(yml.contains(var), "{var}");
    }
    assert!(yml.contains("github/codeql-action/upload-sarif@"));
}
