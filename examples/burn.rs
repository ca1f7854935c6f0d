//! Run: `cargo run --release -p caption-engine --example burn -- INPUT WORDS.json TEMPLATE OUTPUT`
//!
//! Burns captions into a video with the engine as a library.
//!
//! WORDS.json is an array of words (`start`, `end`, `word`, `punctuated_word`), TEMPLATE the id
//! of a built-in template (`captions templates` lists them). The output container follows
//! OUTPUT's extension. Environment: `BURN_PRESET` and `BURN_CRF` (x264, default veryfast / 20),
//! `BURN_THREADS` (x264 threads, default 0: x264 chooses), `BURN_REFRAME` (`9:16`, `1:1` or
//! `4:5`: the output cropped to that shape around the speaker's face). Used by
//! scripts/bench-burn.

#![allow(clippy::print_stdout, reason = "an example program reports on stdout")]

use caption_engine::{BurnOptions, Captioner, Reframe, Task, Word};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, words, template, output] = args.as_slice() else {
        return Err("usage: burn INPUT WORDS.json TEMPLATE OUTPUT".into());
    };
    let words: Vec<Word> = serde_json::from_slice(&std::fs::read(words)?)?;

    let captioner = Captioner::builder().build()?;
    let config = captioner.template(template)?.config;

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
    if let Ok(shape) = std::env::var("BURN_REFRAME") {
        let reframe = Reframe::from_wire(&shape).ok_or("BURN_REFRAME: 9:16, 1:1 or 4:5")?;
        options = options.with_reframe(Some(reframe));
    }
    let report = captioner.burn_with(input, output, &words, &config, &options, &Task::default())?;
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
