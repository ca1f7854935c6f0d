//! `captions serve --bind --data-dir --config`: the flags a new user types first, winning over
//! the configuration file and the environment.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

mod support;

use std::process::{Command, Stdio};

use support::{captions_binary, free_port, wait_for_port};

#[test]
fn bind_and_data_dir_flags_win_over_the_file_and_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("from-flag");
    let file_port = free_port();
    let config = dir.path().join("captions.toml");
    std::fs::write(
        &config,
        format!(
            "bind = \"127.0.0.1:{file_port}\"\ndata_dir = \"{}\"\n",
            dir.path().join("from-file").display()
        ),
    )
    .unwrap();
    let port = free_port();
    let mut child = Command::new(captions_binary())
        .args(["serve", "--config"])
        .arg(&config)
        .args(["--bind", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(&data)
        .env("CAPTIONS_DATA_DIR", dir.path().join("from-env"))
        .env("CAPTIONS_MODEL", "tiny.en")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port, "captions serve --bind");
    let key = std::fs::read_to_string(data.join("api-key")).unwrap();
    assert!(!key.trim().is_empty());
    assert!(
        data.join("webhook-secret").is_file(),
        "the signing secret is kept beside the key"
    );
    assert!(!dir.path().join("from-env").exists());
    assert!(!dir.path().join("from-file").exists());
    let _ = child.kill();
    let _ = child.wait();

    let bad = Command::new(captions_binary())
        .args(["serve", "--bind", "not-an-address"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--bind"));
}

#[test]
fn the_start_up_log_counts_the_key_files_keys_and_has_no_colour_codes_in_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys");
    std::fs::write(&keys, "first-key\n\nsecond-key\n").unwrap();
    let port = free_port();
    let child = Command::new(captions_binary())
        .args([
            "serve",
            "--bind",
            &format!("127.0.0.1:{port}"),
            "--data-dir",
        ])
        .arg(dir.path().join("data"))
        .env("CAPTIONS_API_KEY_FILE", &keys)
        .env("CAPTIONS_MODEL", "tiny.en")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_port(port, "captions serve");
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    let ready = log
        .lines()
        .find(|l| l.contains("service ready"))
        .unwrap_or_else(|| panic!("no start-up line in {log}"));
    assert!(ready.contains("api_keys=2"), "{ready}");
    assert!(!ready.contains("first-key") && !ready.contains("second-key"));
    assert!(!log.contains('\u{1b}'), "colour codes in a pipe: {log:?}");
}
