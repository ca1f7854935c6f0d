//! The README's "As a library", as it is pasted into a program of yours: transcribe the speech
//! of `talk.mp4` (in the current folder) and burn word-by-word captions into
//! `talk-captioned.mp4`, with nothing but the `captions` crate (default features: no storage,
//! job store, async runtime or network). The model `tiny.en` must be installed (`make setup`
//! or `captions model install tiny.en`). Run: `cargo run -p captions --example library`.

// README: as a library (begin)
use captions::{Captioner, Task};

fn main() -> captions::Result<()> {
    let (video, output) = ("talk.mp4", "talk-captioned.mp4");
    let captioner = Captioner::builder().model("tiny.en").build()?;
    let task = Task::default().on_progress(|p| eprintln!("{} {}%", p.stage, p.percent));
    let words = captioner.transcribe(video, &task)?;
    let style = captioner.template("bold-highlight")?.config;
    captioner.burn(video, output, &words, &style, &task)?;
    Ok(())
}
