//! `idemlint`: see `idemlint --help` and README.md.
fn main() {
    let code = idemlint::cli::main_with_args(std::env::args_os().collect(), false);
    std::process::exit(code);
}
