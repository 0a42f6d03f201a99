//! `idemkey`: compute idempotency keys from the command line.
//!
//! ```text
//! idemkey derive <namespace> [part]...   print the derived key
//! idemkey fingerprint [part]...          print the fingerprint (64 hex characters)
//! idemkey mint                           print a fresh random key
//! ```
//!
//! Arguments must be valid UTF-8. Exit status: 0 on success, 1 if minting failed,
//! 2 on a usage error.

use std::process::ExitCode;

const USAGE: &str = "usage:
  idemkey derive <namespace> [part]...   print the key derived from namespace and parts
  idemkey fingerprint [part]...          print the fingerprint of the parts
  idemkey mint                           print a fresh random key (once per intent)";

fn main() -> ExitCode {
    let mut args = Vec::new();
    for arg in std::env::args_os().skip(1) {
        match arg.into_string() {
            Ok(arg) => args.push(arg),
            Err(bad) => {
                eprintln!("idemkey: argument is not valid UTF-8: {bad:?}");
                return ExitCode::from(2);
            }
        }
    }
    match args.split_first() {
        Some((cmd, rest)) if cmd == "derive" && !rest.is_empty() => {
            println!("{}", idemkey::derive(&rest[0], &rest[1..]));
            ExitCode::SUCCESS
        }
        Some((cmd, rest)) if cmd == "fingerprint" => {
            println!("{}", idemkey::Fingerprint::of(rest));
            ExitCode::SUCCESS
        }
        Some((cmd, rest)) if cmd == "mint" && rest.is_empty() => match idemkey::mint() {
            Ok(key) => {
                println!("{key}");
                ExitCode::SUCCESS
            }
            Err(err) => {
                eprintln!("idemkey: {err}");
                ExitCode::from(1)
            }
        },
        Some((cmd, _)) if cmd == "--help" || cmd == "-h" || cmd == "help" => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
