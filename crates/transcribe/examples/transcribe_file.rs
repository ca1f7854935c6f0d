//! Run with `cargo run -p caption-transcribe --release --example transcribe_file -- FILE
//! [--model tiny.en|base|PATH] [--lang auto|xx] [--threads N] [--text FILE] [--concurrent N]
//! [--whole-window] [--beam N]`.
//!
//! Decodes any audio or video file, transcribes it (or, with `--text`, times the words of a
//! plain text, SRT, WebVTT or ASS file on it) and prints one JSON object:
//! `{"language", "duration_s", "elapsed_s", "load_s", "words": [{start, end, word, punctuated_word}]}`.
//! With `--concurrent N`, N transcriptions of the file run at once on one loaded model, as a
//! service's jobs do, and `"elapsed_each_s"` lists how long each took.

#![allow(
    clippy::print_stdout,
    reason = "a command-line example reports on stdout"
)]

use std::path::Path;
use std::time::Instant;

use anyhow::Context as _;

use caption_transcribe::{
    BlockSource, GivenText, TranscribeOptions, Transcriber as _, Transcript, WhisperTranscriber,
    transcribe_source,
};

/// The text of `path` to align: plain words, or cues by the file's extension.
fn given_text(path: &Path) -> anyhow::Result<GivenText> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    GivenText::parse(&text, path.extension().and_then(|e| e.to_str()))
        .with_context(|| format!("reading {}", path.display()))
}

fn main() -> anyhow::Result<()> {
    // As `captions` does: long inputs hand freed buffers back.
    caption_transcribe::return_large_blocks_when_freed();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let mut args = std::env::args().skip(1);
    let (mut file, mut model, mut lang, mut threads, mut text, mut concurrent) =
        (None, "tiny.en".to_owned(), "auto".to_owned(), 0, None, 1);
    let mut short_window = true;
    let mut beam_size = 0;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--model" => model = args.next().context("--model needs a value")?,
            "--lang" => lang = args.next().context("--lang needs a value")?,
            "--threads" => threads = args.next().context("--threads needs a value")?.parse()?,
            "--text" => text = Some(args.next().context("--text needs a value")?),
            "--whole-window" => short_window = false,
            "--beam" => beam_size = args.next().context("--beam needs a value")?.parse()?,
            "--concurrent" => {
                concurrent = args.next().context("--concurrent needs a value")?.parse()?;
            }
            _ => file = Some(arg),
        }
    }
    let file = file.context(
        "usage: transcribe_file FILE [--model M] [--lang xx] [--threads N] [--text FILE] [--concurrent N] [--whole-window] [--beam N]",
    )?;
    let text = text.map(|t| given_text(Path::new(&t))).transpose()?;

    let load = Instant::now();
    let transcriber = if Path::new(&model).is_file() {
        WhisperTranscriber::open(Path::new(&model))?
    } else {
        WhisperTranscriber::open_installed(&model)?
    };
    let load_s = load.elapsed().as_secs_f64();
    let options = TranscribeOptions::default()
        .language(lang)
        .threads(threads)
        .short_window(short_window)
        .beam_size(beam_size);
    let file = Path::new(&file);
    let runs: Vec<anyhow::Result<(Transcript, f64, f64)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..concurrent.max(1))
            .map(|_| scope.spawn(|| run(&transcriber, file, text.as_ref(), &options)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a run panicked")))
            })
            .collect()
    });
    let runs = runs.into_iter().collect::<anyhow::Result<Vec<_>>>()?;
    let (transcript, duration_s, elapsed_s) = &runs[0];
    let output = serde_json::json!({
        "language": transcript.language,
        "duration_s": duration_s,
        "elapsed_s": elapsed_s,
        "elapsed_each_s": runs.iter().map(|r| r.2).collect::<Vec<_>>(),
        "load_s": load_s,
        "words": transcript.words,
    });
    println!("{output}");
    Ok(())
}

/// One transcription of `file` (or `text` timed on it): the words, the audio's length and the
/// time taken, decoding included.
fn run(
    transcriber: &WhisperTranscriber,
    file: &Path,
    text: Option<&GivenText>,
    options: &TranscribeOptions,
) -> anyhow::Result<(Transcript, f64, f64)> {
    let started = Instant::now();
    // A given text is matched against the whole input; a transcription streams the audio, so
    // an hour-long file is never held in memory whole.
    let (transcript, duration_s) = match text {
        Some(text) => {
            let samples = caption_media::decode_audio_16k_mono(file)?;
            let duration_s = samples.len() as f64 / 16_000.0;
            (transcriber.align_text(&samples, text, options)?, duration_s)
        }
        None => {
            let counted = std::cell::Cell::new(0usize);
            // Decoded in-process by FFmpeg's libraries, as the engine does.
            let blocks = caption_media::AudioReader::open(file)?.inspect(|block| {
                if let Ok(block) = block {
                    counted.set(counted.get() + block.len());
                }
            });
            let transcript =
                transcribe_source(transcriber, &mut BlockSource::new(blocks, None), options)?;
            (transcript, counted.get() as f64 / 16_000.0)
        }
    };
    Ok((transcript, duration_s, started.elapsed().as_secs_f64()))
}
