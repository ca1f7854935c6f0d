//! Fixture helpers shared by the integration tests: real media files made by the ffmpeg CLI
//! in a temporary directory. A missing ffmpeg fails the test; nothing is skipped.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs the ffmpeg CLI with `args` (quiet and overwriting), panicking with its stderr when it
/// fails.
pub fn ffmpeg(args: &[&str]) {
    caption_testkit::media::ffmpeg(args).unwrap_or_else(|e| panic!("{e:#}"));
}

/// Runs ffprobe and returns its stdout.
pub fn ffprobe(args: &[&str]) -> String {
    let output = Command::new("ffprobe")
        .args(["-hide_banner", "-loglevel", "error"])
        .args(args)
        .output()
        .expect("ffprobe must be installed");
    assert!(
        output.status.success(),
        "ffprobe {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

pub fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

pub fn path(dir: &Path, name: &str) -> PathBuf {
    dir.join(name)
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}
