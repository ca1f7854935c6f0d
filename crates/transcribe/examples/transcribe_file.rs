//! Run with `cargo run -p caption-transcribe --release --example transcribe_file -- FILE
//! [--model tiny.en|base|PATH] [--lang auto|xx] [--threads N]`.
//!
//! Decodes any audio or video file, transcribes it and prints one JSON object:
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
use caption_transcribe::{TranscribeOptions, Transcriber as _, WhisperTranscriber};

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let mut args = std::env::args().skip(1);
    let (mut file, mut model, mut lang, mut threads) =
        (None, "tiny.en".to_owned(), "auto".to_owned(), 0);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--model" => model = args.next().context("--model needs a value")?,
            "--lang" => lang = args.next().context("--lang needs a value")?,
            "--threads" => threads = args.next().context("--threads needs a value")?.parse()?,
            _ => file = Some(arg),
        }
    }
    let file = file.context("usage: transcribe_file FILE [--model M] [--lang xx] [--threads N]")?;

    let samples = audio::decode_16k_mono(Path::new(&file))?;
    let load = Instant::now();
    let transcriber = if Path::new(&model).is_file() {
        WhisperTranscriber::open(Path::new(&model))?
    } else {
        WhisperTranscriber::open_installed(&model)?
    };
    let load_s = load.elapsed().as_secs_f64();
    let started = Instant::now();
    let transcript = transcriber.transcribe(
        &samples,
        &TranscribeOptions::default().language(lang).threads(threads),
    )?;
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
