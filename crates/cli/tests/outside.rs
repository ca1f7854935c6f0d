//! The library as a program outside this workspace uses it: a crate made in a temporary folder
//! depends on `captions` by path with default features off and no settings of its own (no
//! `[patch]`, no build environment), transcribes a spoken clip and burns its captions; its words
//! and times are the command line's on the same clip (the same whisper.cpp build), and
//! `cargo tree` shows nothing of a server. And the README's "As a library" lines are those of
//! `examples/library.rs`, which runs on a real clip.

#![allow(
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

use caption_testkit::media::{frame_rgb_at, speech_video};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The profile sections of the workspace's manifest: the outside crate builds its
/// dependencies as the workspace does (whisper.cpp optimised), and so shares their artifacts.
fn profiles(manifest: &str) -> String {
    let mut out = String::new();
    let mut keep = false;
    for line in manifest.lines() {
        if line.starts_with('[') {
            keep = line.starts_with("[profile.");
        }
        if keep {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// `cargo` in `dir`, as a user runs it: not through the lint driver `make test` compiles the
/// workspace with (its variables would lint the outside crate as one of ours).
fn cargo(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(dir)
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CLIPPY_ARGS");
    command
}

/// A crate named `name` in `dir` (outside this workspace) with one `dependency` line and
/// `main` as its main.rs; the workspace's profiles (whisper.cpp optimised, the shared target
/// folder's artifacts reused) and lock file (the same versions, nothing newer fetched). Each
/// test names its own: the binaries share the target folder.
fn new_crate(dir: &Path, name: &str, dependency: &str, main: &str) {
    std::fs::create_dir_all(dir.join("src")).expect("app folder");
    let root = root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("workspace manifest");
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2024\"\n\n\
             [dependencies]\n{dependency}\n\n[workspace]\n\n{}",
            profiles(&manifest)
        ),
    )
    .expect("app manifest");
    std::fs::write(dir.join("src/main.rs"), main).expect("app source");
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).expect("lock file");
}

fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

const MAIN: &str = r#"
use captions::{Captioner, ErrorCode, Stage, Task};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (video, output) = (&args[0], &args[1]);
    let captioner = Captioner::builder().model("tiny.en").build().unwrap();
    let stages = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = stages.clone();
    let task = Task::default().on_progress(move |p| seen.lock().unwrap().push((p.stage, p.percent)));
    let words = captioner.transcribe(video, &task).unwrap();
    let style = captioner.template("bold-highlight").unwrap().config;
    let report = captioner.burn(video, output, &words, &style, &task).unwrap();
    let missing = captioner.transcribe("no-such-file.mp4", &Task::default()).unwrap_err();
    assert_eq!(missing.code(), ErrorCode::InputNotFound);
    let stages = stages.lock().unwrap();
    let burned = stages.iter().filter(|(s, _)| *s == Stage::Burning).count();
    let heard = stages.iter().filter(|(s, _)| *s == Stage::Transcribing).count();
    let text: Vec<&str> = words.iter().map(|w| w.word.as_str()).collect();
    println!("{}\t{}\t{}\t{}", text.join(" "), report.frames, heard, burned);
    for word in &words {
        println!("{:.3}\t{:.3}\t{}", word.start, word.end, word.punctuated_word);
    }
}
"#;

/// One line per word, `start end word`, as the app above prints them.
fn timed_lines(words: &serde_json::Value) -> Vec<String> {
    words
        .as_array()
        .expect("a word list")
        .iter()
        .map(|w| {
            format!(
                "{:.3}\t{:.3}\t{}",
                w["start"].as_f64().expect("start"),
                w["end"].as_f64().expect("end"),
                w["punctuated_word"].as_str().expect("punctuated_word")
            )
        })
        .collect()
}

#[test]
fn a_crate_outside_the_workspace_transcribes_and_burns_with_default_features_off() {
    let root = root().canonicalize().expect("workspace root");
    let work = tempfile::tempdir().expect("temporary folder");
    let app = work.path().join("app");
    let dependency = format!(
        "captions = {{ path = {:?}, default-features = false }}",
        root.join("crates/captions").display().to_string()
    );
    new_crate(&app, "outside-app", &dependency, MAIN);

    let tree = cargo(&app)
        .args(["tree", "-e", "normal", "--prefix", "none"])
        .output()
        .expect("cargo tree");
    assert!(tree.status.success(), "cargo tree: {}", stderr(&tree));
    let tree = String::from_utf8_lossy(&tree.stdout);
    let crates: std::collections::BTreeSet<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    for server_part in [
        "axum",
        "object_store",
        "tokio-postgres",
        "redb",
        "tokio",
        "hyper",
    ] {
        assert!(
            !crates.contains(server_part),
            "{server_part} is linked with default features off"
        );
    }
    // whisper.cpp as this workspace builds it, through the dependency alone.
    assert!(crates.contains("caption-whisper-sys"), "{crates:?}");
    assert!(!crates.contains("whisper-rs-sys"), "{crates:?}");
    println!("{} crates with default features off", crates.len());

    let video = speech_video(
        &work.path().join("clip.mp4"),
        "color=c=0x3050a0:s=480x270:r=25",
        "Hello world, this is a test of the captions.",
    )
    .expect("spoken clip");
    let output = work.path().join("out.mp4");
    let run = cargo(&app)
        .args(["run", "--quiet", "--"])
        .arg(&video)
        .arg(&output)
        .output()
        .expect("cargo run");
    assert!(run.status.success(), "the app failed: {}", stderr(&run));
    let stdout = String::from_utf8_lossy(&run.stdout);
    let mut lines = stdout.lines();
    let fields: Vec<&str> = lines.next().unwrap_or_default().split('\t').collect();
    let app_words: Vec<String> = lines.map(str::to_owned).collect();
    let [text, frames, heard, burned] = fields.as_slice() else {
        panic!("unexpected output {stdout:?}");
    };
    // The command line on the same clip: the same whisper.cpp, so the same words and times.
    let json = work.path().join("cli.json");
    let cli = Command::new(env!("CARGO_BIN_EXE_captions"))
        .arg("transcribe")
        .arg(&video)
        .arg("-o")
        .arg(&json)
        .env("CAPTIONS_MODEL", "tiny.en")
        .output()
        .expect("captions transcribe");
    assert!(
        cli.status.success(),
        "captions transcribe: {}",
        stderr(&cli)
    );
    let cli_words: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).expect("the CLI's words")).expect("JSON");
    assert_eq!(
        app_words,
        timed_lines(&cli_words),
        "the app and the CLI differ"
    );
    let text = text.to_lowercase();
    // (tiny.en hears espeak-ng's "Hello" as "the low": the words are the CLI's, checked above.)
    assert!(
        text.contains("world") && text.contains("test") && text.contains("captions"),
        "heard {text:?}"
    );
    assert!(frames.parse::<u64>().expect("frames") > 50);
    assert!(
        heard.parse::<u32>().expect("reports") > 0,
        "no transcription progress"
    );
    assert!(
        burned.parse::<u32>().expect("reports") > 0,
        "no burn progress"
    );
    // The captions are in the picture: the burned frame differs from the input's.
    let before = frame_rgb_at(&video, 1.0).expect("input frame");
    let after = frame_rgb_at(&output, 1.0).expect("output frame");
    let changed = before
        .chunks(3)
        .zip(after.chunks(3))
        .filter(|(a, b)| a.iter().zip(*b).any(|(x, y)| x.abs_diff(*y) > 40))
        .count();
    assert!(
        changed > 500,
        "only {changed} pixels changed by the captions"
    );
}

/// The first fenced block of `lang` after `## As a library` in the README.
fn library_block(lang: &str) -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let section = &readme[readme.find("## As a library").expect("section")..];
    section
        .split(&format!("```{lang}\n"))
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap_or_else(|| panic!("a {lang} block in the section"))
        .to_owned()
}

#[test]
fn the_readme_library_snippet_runs_as_pasted_into_a_new_crate() {
    let root = root().canonicalize().expect("workspace root");
    let (toml, rust) = (library_block("toml"), library_block("rust"));
    let example = std::fs::read_to_string(root.join("examples/library.rs")).expect("example");
    let marked = example
        .split("// README: as a library (begin)\n")
        .nth(1)
        .expect("begin mark");
    assert_eq!(rust, marked, "README and examples/library.rs differ");
    assert!(rust.lines().count() <= 12, "{} lines", rust.lines().count());

    // A new crate: the README's dependency line (pointing at this clone) and its main.rs.
    let work = tempfile::tempdir().expect("temporary folder");
    let app = work.path().join("app");
    let line = toml.replace(
        "../caption-engine/crates/captions",
        &root.join("crates/captions").display().to_string(),
    );
    assert_ne!(
        line, toml,
        "the dependency line names no path to replace: {toml}"
    );
    new_crate(&app, "readme-app", line.trim_end(), &rust);
    let video = speech_video(
        &app.join("talk.mp4"),
        "color=c=0x206040:s=320x180:r=25",
        "Captions make videos easy to follow, and this one is a little longer than that.",
    )
    .expect("spoken clip");
    let run = cargo(&app)
        .args(["run", "--quiet"])
        .output()
        .expect("cargo run");
    assert!(run.status.success(), "the snippet failed: {}", stderr(&run));
    let output = app.join("talk-captioned.mp4");
    let after = frame_rgb_at(&output, 1.0).expect("the captioned video");
    assert_eq!(after.len(), frame_rgb_at(&video, 1.0).expect("input").len());

    // Progress: each stage from 0 % to 100 %, in order, a line only when the number moves.
    let lines: Vec<(String, u8)> = stderr(&run)
        .lines()
        .filter_map(|line| {
            let (stage, percent) = line.split_once(' ')?;
            Some((stage.to_owned(), percent.strip_suffix('%')?.parse().ok()?))
        })
        .collect();
    let stages: Vec<&str> =
        lines
            .iter()
            .map(|(stage, _)| stage.as_str())
            .fold(Vec::new(), |mut seen, stage| {
                if seen.last() != Some(&stage) {
                    seen.push(stage);
                }
                seen
            });
    assert_eq!(stages, ["transcribing", "burning"], "{lines:?}");
    for stage in stages {
        let percents: Vec<u8> = lines
            .iter()
            .filter(|(s, _)| s == stage)
            .map(|(_, p)| *p)
            .collect();
        assert_eq!(percents.first(), Some(&0), "{stage}: {percents:?}");
        assert_eq!(percents.last(), Some(&100), "{stage}: {percents:?}");
        assert!(
            percents.windows(2).all(|w| w[0] < w[1]),
            "{stage} repeats or goes back: {percents:?}"
        );
    }
}
