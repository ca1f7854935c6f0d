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
