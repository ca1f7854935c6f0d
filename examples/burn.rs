//! Run: `cargo run --release -p caption-engine --example burn -- INPUT WORDS.json TEMPLATE OUTPUT`
//!
//! Burns captions into a video with the engine as a library.
//!
//! WORDS.json is an array of words (`start`, `end`, `word`, `punctuated_word`), TEMPLATE the id
//! of a built-in template (`captions templates` lists them). The output container follows
//! OUTPUT's extension. Environment: `BURN_PRESET` and `BURN_CRF` (x264, default veryfast / 20),
//! `BURN_THREADS` (x264 threads, default 0: x264 chooses). Used by scripts/bench-burn.

#![allow(clippy::print_stdout, reason = "an example program reports on stdout")]

use std::path::PathBuf;
use std::sync::Arc;

use caption_core::Word;
use caption_engine::{BurnOptions, Engine, EngineOptions};
use caption_jobs::EmbeddedJobStore;
use caption_store::{LinkOptions, LocalStorage};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, words, template, output] = args.as_slice() else {
        return Err("usage: burn INPUT WORDS.json TEMPLATE OUTPUT".into());
    };
    let words: Vec<Word> = serde_json::from_slice(&std::fs::read(words)?)?;

    // The engine wants storage and a job store; burning a local file uses neither, so both
    // live in a scratch folder that goes away at the end.
    let scratch = tempfile::tempdir()?;
    let storage = LocalStorage::open(
        &scratch.path().join("objects"),
        "http://127.0.0.1:9",
        LinkOptions::default(),
    )?;
    let jobs = EmbeddedJobStore::open(scratch.path().join("jobs.redb"))?;
    let engine = Engine::new(
        EngineOptions {
            data_dir: scratch.path().to_owned(),
            ..EngineOptions::default()
        },
        Arc::new(storage),
        Arc::new(jobs),
    )?;
    let config = engine.template(template)?.config;

    let mut options = BurnOptions::default();
    if let Ok(preset) = std::env::var("BURN_PRESET") {
        options = options.with_preset(preset);
    }
    if let Ok(crf) = std::env::var("BURN_CRF") {
        options = options.with_crf(crf.parse()?);
    }
    if let Ok(threads) = std::env::var("BURN_THREADS") {
        options.encoder_threads = threads.parse()?;
    }
    let report = engine.burn_file(
        &PathBuf::from(input),
        &PathBuf::from(output),
        &words,
        &config,
        &options,
    )?;
    println!(
        "{} frames ({} with captions), {}x{} {}, audio {:?}, {:.2} s",
        report.frames,
        report.frames_with_overlay,
        report.display_width,
        report.display_height,
        report.pixel_format,
        report.audio,
        report.elapsed_s
    );
    Ok(())
}
