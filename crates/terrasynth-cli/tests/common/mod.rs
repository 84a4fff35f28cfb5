//! Helpers shared by the CLI's end-to-end tests: run the built `terrasynth` binary, fresh
//! temporary folders, and reading what a run wrote. Each test file uses a part of them.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_terrasynth");

/// A fresh, empty temporary folder for one test, named after the test binary (so test files
/// running at the same time never share one), the process and `name`.
pub fn temp_dir(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let file = exe.file_stem().unwrap().to_string_lossy();
    let dir = std::env::temp_dir().join(format!("terrasynth-{file}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the binary with `args`, `stdin` as its standard input, and waits for it.
pub fn run_with_stdin(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start terrasynth");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

/// Runs the binary with `args` (empty standard input).
pub fn run(args: &[&str]) -> Output {
    run_with_stdin(args, "")
}

/// `terrasynth generate --quiet --out OUT EXTRA…`.
pub fn generate(out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["generate", "--quiet", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    run(&args)
}

/// The run's stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts the run succeeded, showing its stderr if not.
pub fn ok(o: &Output) {
    assert!(o.status.success(), "{}", stderr(o));
}

/// A JSON file.
pub fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
