//! Run: `cargo run -p caption-engine --example transcribe -- fixtures/audio/jfk.wav [LANG] [MODEL]`
//!
//! Transcribes a local video or audio file with the engine as a library and prints the timed
//! words as JSON. The model (default `tiny.en`) must be installed (`captions model install`).

#![allow(clippy::print_stdout, reason = "an example program prints its result")]

use caption_engine::{Engine, EngineOptions};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let input = args.next().ok_or("usage: transcribe FILE [LANG] [MODEL]")?;
    let lang = args.next().unwrap_or_else(|| "auto".to_owned());
    let model = args.next().unwrap_or_else(|| "tiny.en".to_owned());

    // Direct transcription needs no storage or jobs; a scratch folder holds the local ones the
    // engine is built over.
    let scratch = tempfile::tempdir()?;
    let options = EngineOptions {
        data_dir: scratch.path().to_owned(),
        model,
        ..EngineOptions::default()
    };
    let engine = Engine::open_local(options, "http://127.0.0.1")?;

    let words = engine
        .transcribe_file(input.as_ref(), &lang, |percent| eprint!("\r{percent:3}%"))
        .await?;
    eprintln!();
    println!("{}", serde_json::to_string_pretty(&words)?);
    Ok(())
}
