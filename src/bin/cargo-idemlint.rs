//! `cargo idemlint`: cargo runs `cargo-idemlint idemlint ARGS`; the extra argument is
//! dropped and, without paths, the cargo workspace root is checked.
fn main() {
    let code = idemlint::cli::main_with_args(std::env::args_os().collect(), true);
    std::process::exit(code);
}
