//! Run with `cargo run -p caption-transcribe --release --example transcribe_file -- FILE
//! [--model tiny.en|base|PATH] [--lang auto|xx] [--threads N] [--text FILE]`.
//!
//! Decodes any audio or video file, transcribes it (or, with `--text`, times the words of a
//! plain text, SRT, WebVTT or ASS file on it) and prints one JSON object:
//! `{"language", "duration_s", "elapsed_s", "load_s", "words": [{start, end, word, punctuated_word}]}`.

#![allow(
    clippy::print_stdout,
    reason = "a command-line example reports on stdout"
)]

use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;

#[path = "../tests/support/audio.rs"]
mod audio;
use caption_transcribe::{GivenText, TranscribeOptions, Transcriber as _, WhisperTranscriber};

/// The text of `path` to align: plain words, or cues by the file's extension.
fn given_text(path: &Path) -> anyhow::Result<GivenText> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    GivenText::parse(&text, path.extension().and_then(|e| e.to_str()))
        .with_context(|| format!("reading {}", path.display()))
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let mut args = std::env::args().skip(1);
    let (mut file, mut model, mut lang, mut threads, mut text) =
        (None, "tiny.en".to_owned(), "auto".to_owned(), 0, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--model" => model = args.next().context("--model needs a value")?,
            "--lang" => lang = args.next().context("--lang needs a value")?,
            "--threads" => threads = args.next().context("--threads needs a value")?.parse()?,
            "--text" => text = Some(args.next().context("--text needs a value")?),
            _ => file = Some(arg),
        }
    }
    let file = file.context(
        "usage: transcribe_file FILE [--model M] [--lang xx] [--threads N] [--text FILE]",
    )?;
    let text = text.map(|t| given_text(Path::new(&t))).transpose()?;

    let samples = audio::decode_16k_mono(Path::new(&file))?;
    let load = Instant::now();
    let transcriber = if Path::new(&model).is_file() {
        WhisperTranscriber::open(Path::new(&model))?
    } else {
        WhisperTranscriber::open_installed(&model)?
    };
    let load_s = load.elapsed().as_secs_f64();
    let started = Instant::now();
    let options = TranscribeOptions::default().language(lang).threads(threads);
    let transcript = match &text {
        Some(text) => transcriber.align_text(&samples, text, &options)?,
        None => transcriber.transcribe(&samples, &options)?,
    };
    let output = serde_json::json!({
        "language": transcript.language,
        "duration_s": samples.len() as f64 / 16_000.0,
        "elapsed_s": started.elapsed().as_secs_f64(),
        "load_s": load_s,
        "words": transcript.words,
    });
    println!("{output}");
    Ok(())
}
