//! Run: `cargo run -p caption-engine --example transcribe -- fixtures/audio/jfk.wav [LANG] [MODEL]`
//!
//! Transcribes a local video or audio file with the engine as a library and prints the timed
//! words as JSON. The model (default `tiny.en`) must be installed (`captions model install`).

#![allow(clippy::print_stdout, reason = "an example program prints its result")]

use std::sync::Arc;

use caption_engine::{Engine, EngineOptions};
use caption_jobs::EmbeddedJobStore;
use caption_store::{LinkOptions, LocalStorage};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let input = args.next().ok_or("usage: transcribe FILE [LANG] [MODEL]")?;
    let lang = args.next().unwrap_or_else(|| "auto".to_owned());
    let model = args.next().unwrap_or_else(|| "tiny.en".to_owned());

    // Direct transcription needs no storage or jobs, but the engine is built over both; a
    // scratch folder holds them.
    let scratch = tempfile::tempdir()?;
    let storage = LocalStorage::open(
        &scratch.path().join("objects"),
        "http://127.0.0.1",
        LinkOptions::default(),
    )?;
    let jobs = EmbeddedJobStore::open(scratch.path().join("jobs.redb"))?;
    let options = EngineOptions {
        data_dir: scratch.path().to_owned(),
        model,
        ..EngineOptions::default()
    };
    let engine = Engine::new(options, Arc::new(storage), Arc::new(jobs))?;

    let words = engine
        .transcribe_file(input.as_ref(), &lang, |percent| eprint!("\r{percent:3}%"))
        .await?;
    eprintln!();
    println!("{}", serde_json::to_string_pretty(&words)?);
    Ok(())
}
