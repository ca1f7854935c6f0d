//! Run: `cargo run -p caption-engine --example transcribe -- fixtures/audio/jfk.wav [LANG] [MODEL]`
//!
//! Transcribes a local video or audio file with the engine as a library and prints the timed
//! words as JSON. The model (default `tiny.en`) must be installed (`captions model install`).

#![allow(clippy::print_stdout, reason = "an example program prints its result")]

use caption_engine::{Captioner, Task};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let input = args.next().ok_or("usage: transcribe FILE [LANG] [MODEL]")?;
    let lang = args.next().unwrap_or_else(|| "auto".to_owned());
    let model = args.next().unwrap_or_else(|| "tiny.en".to_owned());

    let captioner = Captioner::builder().model(model).build()?;
    let task = Task::default()
        .language(lang)
        .on_progress(|p| eprint!("\r{} {:3}%", p.stage, p.percent));
    let words = captioner.transcribe(&input, &task)?;
    eprintln!();
    println!("{}", serde_json::to_string_pretty(&words)?);
    Ok(())
}
