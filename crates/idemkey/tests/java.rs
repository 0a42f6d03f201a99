//! Runs the Java helper against `vectors.json` through `java/check.sh` when a JDK is
//! installed. Without `javac` the script prints that it skipped and this test passes.

use std::path::Path;
use std::process::Command;

fn has_javac() -> bool {
    Command::new("javac")
        .arg("-version")
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn java_helper_matches_the_vectors() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = dir.join("java/check.sh");
    let output = Command::new("bash")
        .arg(&script)
        .output()
        .expect("run bash java/check.sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(
        output.status.success(),
        "java/check.sh failed:\n{stdout}\n{stderr}"
    );
    if has_javac() {
        assert!(stdout.contains("vectors OK"), "{stdout}");
    } else {
        assert!(
            stdout.contains("skipped: no JDK (javac not found)"),
            "{stdout}"
        );
        println!("java_helper_matches_the_vectors: skipped, javac not found");
    }
}
