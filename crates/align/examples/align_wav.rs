//! Run with `cargo run -p caption-align --release --example align_wav -- FILE.wav "the words" [LANG]`.
//!
//! Aligns the words (English, or in the language LANG: `es`, `fr`, `de`, ...) onto a 16 kHz
//! mono 16-bit WAV file and prints one line per word: `start_s end_s word`.

#![allow(
    clippy::print_stdout,
    reason = "a command-line example reports on stdout"
)]

use std::time::Instant;

use anyhow::{Context as _, bail};
use caption_align::Aligner;

/// The samples of a 16 kHz mono 16-bit PCM WAV file.
fn read_wav(bytes: &[u8]) -> anyhow::Result<Vec<f32>> {
    if bytes.len() < 12 || &bytes[..4] != b"RIFF" || &bytes[8..12] != b"WAVE" {
        bail!("not a WAV file");
    }
    let mut at = 12;
    while at + 8 <= bytes.len() {
        let id = &bytes[at..at + 4];
        let size = u32::from_le_bytes(bytes[at + 4..at + 8].try_into()?) as usize;
        let body = &bytes[at + 8..(at + 8 + size).min(bytes.len())];
        if id == b"fmt " {
            let channels = u16::from_le_bytes(body[2..4].try_into()?);
            let rate = u32::from_le_bytes(body[4..8].try_into()?);
            let bits = u16::from_le_bytes(body[14..16].try_into()?);
            if (channels, rate, bits) != (1, 16_000, 16) {
                bail!("want 16 kHz mono 16-bit, got {rate} Hz, {channels} channels, {bits} bits");
            }
        } else if id == b"data" {
            return Ok(body
                .chunks_exact(2)
                .map(|b| f32::from(i16::from_le_bytes([b[0], b[1]])) / 32768.0)
                .collect());
        }
        at += 8 + size + size % 2;
    }
    bail!("no data chunk")
}

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: align_wav FILE.wav \"the words\" [LANG]";
    let file = args.next().context(usage)?;
    let text = args.next().context(usage)?;
    let language = args.next().unwrap_or_else(|| "en".to_owned());
    let samples = read_wav(&std::fs::read(&file).with_context(|| format!("reading {file}"))?)?;
    let load = Instant::now();
    let aligner = Aligner::open_installed()?;
    let load_s = load.elapsed().as_secs_f64();
    let words: Vec<&str> = text.split_whitespace().collect();
    let started = Instant::now();
    let Some(aligner) = aligner.language(&language) else {
        bail!("no alignment for the language {language:?}");
    };
    let spans = aligner.align(&samples, &words)?;
    let align_s = started.elapsed().as_secs_f64();
    for (word, span) in words.iter().zip(&spans) {
        println!("{:.3} {:.3} {word}", span.start_s, span.end_s);
    }
    let duration_s = samples.len() as f64 / 16_000.0;
    println!(
        "# load {load_s:.3} s, align {align_s:.3} s, real-time factor {:.4}",
        align_s / duration_s
    );
    Ok(())
}
