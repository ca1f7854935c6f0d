//! Every command block (```` ```sh ````) of the README and of docs/ runs as written: the two
//! commands (`make run`, `make test`) are what CI runs, the command-line block is run by
//! `readme.rs`; the HTTP walkthrough, then the blocks of docs/http.md that follow it in the
//! same shell, run here against `captions serve` on loopback (the port the only change), and
//! docs/style.md's in a folder with a spoken `talk.mp4` and its words. A new command block that
//! no test runs fails here.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;

use support::{Service, captions_binary};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The ```sh blocks of `file` (relative to the repository), in order.
fn sh_blocks(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    text.split("```sh\n")
        .skip(1)
        .map(|rest| rest.split("\n```").next().unwrap().to_owned())
        .collect()
}

/// Every Markdown file of the README and docs/, relative to the repository.
fn documents() -> Vec<String> {
    let mut files = vec!["README.md".to_owned()];
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

#[test]
fn every_command_block_is_run_by_a_test() {
    for file in documents() {
        for (i, block) in sh_blocks(&file).iter().enumerate() {
            // The README's blocks: the two commands (CI runs them), the command line's
            // (readme.rs), the walkthrough, which docs/http.md's blocks follow (below).
            let run = match file.as_str() {
                "README.md" => i < 3,
                "docs/http.md" | "docs/style.md" => true,
                _ => false,
            };
            assert!(
                run,
                "{file}: command block {} is run by no test:\n{block}",
                i + 1
            );
        }
    }
    let text = std::fs::read_to_string(root().join("README.md")).unwrap();
    let marker = text.find("<!-- cli-examples").unwrap();
    let blocks = sh_blocks("README.md");
    assert!(blocks[0].starts_with("make run"), "{}", blocks[0]);
    let second = text.find(&blocks[1]).unwrap();
    assert!(
        marker < second,
        "the command-line block is no longer the README's second"
    );
    assert!(blocks[2].starts_with("BASE="), "{}", blocks[2]);
}

#[test]
fn the_http_walkthrough_and_its_follow_ups_run_as_written() {
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join(".local/share/captions");
    let service = Service::start(&data, &[]);
    service.banner();
    let port = service.base.rsplit(':').next().unwrap().to_owned();
    let readme = sh_blocks("README.md");
    // The README's third command block is the walkthrough.
    let walkthrough = &readme[2];
    assert!(
        walkthrough.contains("BASE=http://127.0.0.1:8080"),
        "{walkthrough}"
    );
    let mut script = String::from("set -euo pipefail\n");
    script.push_str(&walkthrough.replace("127.0.0.1:8080", &format!("127.0.0.1:{port}")));
    for block in sh_blocks("docs/http.md") {
        script.push_str("\necho '--- next block'\n");
        script.push_str(&block);
    }
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let out = Command::new("timeout")
        .args(["600", "bash", "-c", &script])
        .current_dir(&work)
        .env("HOME", home.path())
        .env_remove("XDG_DATA_HOME")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // What each step promises.
    assert!(stdout.contains("\"karaoke\""), "templates: {stdout}");
    // (The fonts' JSON ends without a newline: the upload's status closes its line.)
    assert!(
        stdout.lines().any(|l| l.ends_with("]204")),
        "upload: {stdout}"
    );
    assert!(stdout.contains("\"COMPLETED\""), "transcription: {stdout}");
    assert!(
        stdout.contains("duration="),
        "the captioned video: {stdout}"
    );
    let png = std::fs::read(work.join("frame.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG"), "the preview is not a PNG");
    let last = stdout.rsplit("--- next block").next().unwrap();
    assert!(
        last.contains("\"job_id\"") && last.contains("\"status\""),
        "the background generate: {last}"
    );
    service.terminate();
}

#[test]
fn the_style_pages_blocks_run_as_written() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path();
    caption_testkit::media::speech_video(
        &dir.join("talk.mp4"),
        "color=c=navy:s=270x480:r=24",
        "Start from a template, then make it your own.",
    )
    .unwrap();
    let bin = captions_binary();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let words = Command::new(&bin)
        .args(["transcribe", "talk.mp4", "-o", "talk.json"])
        .current_dir(dir)
        .env("CAPTIONS_MODEL", "tiny.en")
        .output()
        .unwrap();
    assert!(
        words.status.success(),
        "{}",
        String::from_utf8_lossy(&words.stderr)
    );
    for block in sh_blocks("docs/style.md") {
        let out = Command::new("bash")
            .args(["-c", &format!("set -euo pipefail\n{block}")])
            .current_dir(dir)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{block}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(std::fs::metadata(dir.join("out.mp4")).unwrap().len() > 1000);
    let style: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("my-style.json")).unwrap()).unwrap();
    assert_eq!(style["id"], "karaoke", "{style}");
}
