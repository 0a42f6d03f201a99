//! Determinism across processes: the `idemkey` binary, run twice as separate processes with
//! different environments and working directories, prints the same derived keys.

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_idemkey");

/// Runs the binary with `args` in `dir`, with a cleared environment plus `env`.
fn run(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> String {
    let output = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_clear()
        .envs(env.iter().copied())
        .output()
        .expect("spawn the idemkey binary");
    assert!(
        output.status.success(),
        "idemkey {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

#[test]
fn derive_is_identical_in_two_processes() {
    let cases: &[&[&str]] = &[
        &["derive", "billing.monthly-charge", "cus_123", "2026-09"],
        &["derive", "ambiguity", "a:b", "c"],
        &["derive", "ambiguity", "a", "b:c"],
        &["derive", "checkout"],
        &["derive", "checkout", ""],
        &["derive", "unicode", "caf\u{e9}", "\u{1F4B3}"],
        &["fingerprint", "2500", "usd", "cus_123", "cart_9"],
    ];
    let tmp = std::env::temp_dir();
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    for args in cases {
        let first = run(args, here, &[("LANG", "C"), ("TZ", "UTC")]);
        let second = run(
            args,
            &tmp,
            &[("LANG", "tr_TR.UTF-8"), ("TZ", "Pacific/Kiritimati")],
        );
        assert_eq!(first, second, "{args:?}");
        // The value in another process is also the value in this one.
        let in_process = if args[0] == "derive" {
            idemkey::derive(args[1], &args[2..]).to_string()
        } else {
            idemkey::Fingerprint::of(&args[1..]).to_string()
        };
        assert_eq!(first.trim_end(), in_process, "{args:?}");
    }
    assert_eq!(
        run(cases[0], here, &[]).trim_end(),
        "a1512a14029000c7bafecb1ab9c3c723"
    );
    assert_ne!(run(cases[1], here, &[]), run(cases[2], here, &[]));
}

#[test]
fn mint_differs_between_processes() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let a = run(&["mint"], here, &[]);
    let b = run(&["mint"], here, &[]);
    assert_eq!(a.trim_end().len(), 32);
    assert_ne!(a, b);
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &[][..],
        &["derive"][..],
        &["mint", "extra"][..],
        &["nope"][..],
    ] {
        let status = Command::new(BIN).args(args).output().unwrap().status;
        assert_eq!(status.code(), Some(2), "{args:?}");
    }
}
