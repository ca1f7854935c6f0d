//! Run: `cargo run -p captions --example library -- VIDEO OUTPUT`
//!
//! The README's "As a library": transcribe a video's speech and burn word-by-word captions
//! into it, with nothing but the `captions` crate (default features: no storage, job store,
//! async runtime or network). The model `tiny.en` must be installed (`make run` or
//! `captions model install tiny.en`).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [video, output] = args.as_slice() else {
        return Err("usage: library VIDEO OUTPUT".into());
    };
    // README: as a library (begin)
    use captions::{Captioner, Task};

    let captioner = Captioner::builder().model("tiny.en").build()?;
    let task = Task::default().on_progress(|p| eprintln!("{} {}%", p.stage, p.percent));
    let words = captioner.transcribe(video, &task)?;
    let style = captioner.template("bold-highlight")?.config;
    let report = captioner.burn(video, output, &words, &style, &task)?;
    // README: as a library (end)
    eprintln!("{} words, {} frames", words.len(), report.frames);
    Ok(())
}
