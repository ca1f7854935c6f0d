//! What a newcomer meets: `scripts/install` (run by `make install`) puts `captions` on the PATH
//! with completions and man pages, and every command-line example of the README runs as
//! written, on a generated clip. The examples are read from the README itself, so the two
//! cannot drift apart.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;

use support::{captions_binary, espeak_wav, ffmpeg, h264_fast};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The lines of the README's command-line example block (the `sh` block after the
/// `cli-examples` marker), comments removed.
fn readme_examples() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let after = &readme[readme.find("<!-- cli-examples").expect("the marker")..];
    let block = after
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .unwrap();
    block
        .lines()
        .map(|l| l.split(" #").next().unwrap().trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

/// `text` spoken over a small portrait picture, as `path`.
fn clip(path: &Path, text: &str) {
    let wav = path.with_extension("wav");
    espeak_wav(&wav, 150, text);
    let picture = ["-f", "lavfi", "-i", "color=c=navy:s=270x480:r=24", "-i"];
    let audio = ["-shortest", "-c:a", "aac"];
    let wav = wav.to_str().unwrap();
    ffmpeg(
        &[
            &picture[..],
            &[wav],
            &audio,
            &h264_fast(),
            &[path.to_str().unwrap()],
        ]
        .concat(),
    );
    std::fs::remove_file(wav).unwrap();
}

/// `bash -c line` in `dir`, with `bin` first on the PATH.
fn shell(line: &str, dir: &Path, bin: &Path) -> Output {
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("bash")
        .args(["-c", line])
        .current_dir(dir)
        .env("PATH", path)
        // The English model keeps the test quick; the commands are the README's.
        .env("CAPTIONS_MODEL", "tiny.en")
        .output()
        .unwrap()
}

#[test]
fn install_puts_captions_on_the_path_with_completions_and_man_pages() {
    let prefix = tempfile::tempdir().unwrap();
    let out = Command::new(root().join("scripts/install"))
        .env("PREFIX", prefix.path())
        .env("CAPTIONS_BIN", captions_binary())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("is not on your PATH"), "{stdout}");
    // A new shell with the prefix on its PATH finds the command and its completion.
    let bin = prefix.path().join("bin");
    let bash = prefix
        .path()
        .join("share/bash-completion/completions/captions");
    let found = shell(
        &format!(
            "captions --version && source {} && complete -p captions",
            bash.display()
        ),
        prefix.path(),
        &bin,
    );
    let text = String::from_utf8_lossy(&found.stdout);
    assert!(found.status.success(), "{text}");
    assert!(text.starts_with("captions "), "{text}");
    assert!(text.contains("-F _captions captions"), "{text}");
    let zsh = std::fs::read_to_string(prefix.path().join("share/zsh/site-functions/_captions"));
    assert!(zsh.unwrap().starts_with("#compdef captions"));
    let fish = prefix
        .path()
        .join("share/fish/vendor_completions.d/captions.fish");
    assert!(std::fs::read_to_string(fish).unwrap().contains("burn"));
    let man = prefix.path().join("share/man/man1");
    for page in ["captions.1", "captions-burn.1", "captions-transcribe.1"] {
        let text = std::fs::read_to_string(man.join(page)).unwrap();
        assert!(
            text.starts_with(".ie \\n(.g .ds Aq") || text.contains(".TH"),
            "{page}"
        );
    }
    assert!(
        std::fs::read_to_string(man.join("captions-burn.1"))
            .unwrap()
            .contains("\\-\\-transcribe")
    );
}

#[test]
fn the_readme_command_line_examples_run_as_written() {
    let examples = readme_examples();
    assert!(examples.len() >= 10, "{examples:?}");
    assert!(examples.iter().all(|l| l.starts_with("captions ")));

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text = "Hello everyone, and welcome back. Today we test the captions tool.";
    clip(&d.join("talk.mp4"), text);
    std::fs::write(d.join("script.txt"), format!("{text}\n")).unwrap();
    std::fs::write(
        d.join("my-style.json"),
        r#"{"modes": {"effectType": "POP"}, "linesCount": 1}"#,
    )
    .unwrap();
    std::fs::create_dir(d.join("videos")).unwrap();
    clip(&d.join("videos/one.mp4"), "one small step");
    clip(&d.join("videos/two.mp4"), "good morning");
    let bin = d.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(captions_binary(), bin.join("captions")).unwrap();

    for line in &examples {
        let out = shell(line, d, &bin);
        assert!(
            out.status.success(),
            "{line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for made in [
        "talk.srt",
        "talk.vtt",
        "talk.json",
        "talk-captioned.mp4",
        "out.mp4",
        "captioned/one.mp4",
        "captioned/two.mp4",
        "frame.png",
    ] {
        let meta = std::fs::metadata(d.join(made)).unwrap_or_else(|e| panic!("{made}: {e}"));
        assert!(meta.len() > 0, "{made}");
    }
}
