//! Long inputs in bounded memory: audio pulled from a source, transcribed window by window.
//!
//! A whole hour of 16 kHz samples is 230 MB of `f32`; the model, the aligner and their buffers
//! together are less than that. So a long input is never held at once: samples are pulled into a
//! window of [`WINDOW_S`], the window is cut at its quietest moment near the end (a pause between
//! phrases, so that no word is split), the part before the cut is transcribed on its own with
//! times shifted by what came before, and the rest starts the next window. An input that ends
//! less than [`CUT_SEARCH_S`] after a window's end is transcribed whole in that window. Every window is timed
//! on its own audio, so the last minutes of an hour are timed as well as the first.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use crate::chunks;
use crate::error::{Error, Result};
use crate::speech::round_ms;
use crate::transcriber::{SAMPLE_RATE_HZ, TranscribeOptions, Transcriber, Transcript};

/// Audio per window. Five minutes: long enough that cuts are rare, short enough that the
/// window is small next to the model (19 MB of samples).
const WINDOW_S: f64 = 300.0;
/// The shortest window [`transcribe_source_in_windows`] takes.
pub const MIN_WINDOW_S: f64 = 30.0;
/// The cut is looked for in the last this-many seconds of a full window.
const CUT_SEARCH_S: f64 = 20.0;

/// A source of 16 kHz mono samples, pulled in order until it ends.
pub trait AudioSource {
    /// The next samples (any count), or `None` at the end of the input.
    fn next_samples(&mut self) -> Result<Option<Vec<f32>>>;

    /// The input's duration when known, for progress reporting.
    fn duration_s(&self) -> Option<f64> {
        None
    }
}

/// A source over an iterator of sample blocks; errors come from the caller's decoder, as text.
#[derive(Debug)]
pub struct BlockSource<I> {
    blocks: I,
    duration_s: Option<f64>,
}

impl<I> BlockSource<I> {
    /// Samples from `blocks`; `duration_s` (when known) drives progress.
    pub fn new(blocks: I, duration_s: Option<f64>) -> Self {
        Self { blocks, duration_s }
    }
}

impl<I, E> AudioSource for BlockSource<I>
where
    I: Iterator<Item = std::result::Result<Vec<f32>, E>>,
    E: std::fmt::Display,
{
    fn next_samples(&mut self) -> Result<Option<Vec<f32>>> {
        self.blocks
            .next()
            .transpose()
            .map_err(|e| Error::AudioSource {
                detail: e.to_string(),
            })
    }

    fn duration_s(&self) -> Option<f64> {
        self.duration_s
    }
}

fn seconds(samples: usize) -> f64 {
    samples as f64 / f64::from(SAMPLE_RATE_HZ)
}

fn samples(seconds: f64) -> usize {
    (seconds * f64::from(SAMPLE_RATE_HZ)).round() as usize
}

/// Where to cut `window` (a full one): its quietest moment within the last [`CUT_SEARCH_S`]
/// (less than [`MIN_WINDOW_S`]).
fn quietest_cut(window: &[f32]) -> usize {
    let end_s = seconds(window.len());
    samples(chunks::quietest_point(window, end_s - CUT_SEARCH_S, end_s)).min(window.len())
}

/// Transcribes everything `source` gives, window by window (see the module's docs), with the
/// same contract as [`Transcriber::transcribe`] on the whole input. The language detected in
/// the first window that has speech is kept for the rest.
///
/// ```
/// use caption_transcribe::{BlockSource, TranscribeOptions, WhisperTranscriber, transcribe_source};
///
/// // Three seconds of silence in blocks of a tenth of a second, as a decoder would give them.
/// let blocks = (0..30).map(|_| Ok::<_, std::io::Error>(vec![0.0_f32; 1_600]));
/// let mut source = BlockSource::new(blocks, Some(3.0));
/// let whisper = WhisperTranscriber::open_installed("tiny.en")?;
/// let transcript = transcribe_source(&whisper, &mut source, &TranscribeOptions::default())?;
/// assert!(transcript.words.is_empty(), "silence has no words");
/// # Ok::<(), caption_transcribe::Error>(())
/// ```
pub fn transcribe_source(
    transcriber: &dyn Transcriber,
    source: &mut dyn AudioSource,
    options: &TranscribeOptions,
) -> Result<Transcript> {
    transcribe_source_in_windows(transcriber, source, options, WINDOW_S)
}

/// [`transcribe_source`] with windows of `window_s` seconds (at least [`MIN_WINDOW_S`]) in
/// place of five minutes: less memory, more cuts.
pub fn transcribe_source_in_windows(
    transcriber: &dyn Transcriber,
    source: &mut dyn AudioSource,
    options: &TranscribeOptions,
    window_s: f64,
) -> Result<Transcript> {
    let total_s = source.duration_s().filter(|d| *d > 0.0);
    let reported = Arc::new(AtomicU8::new(0));
    let report = |percent: u8| {
        if let Some(progress) = &options.progress
            && reported.fetch_max(percent, Ordering::Relaxed) < percent
        {
            progress(percent);
        }
    };
    report(0);

    let window_len = samples(window_s.max(MIN_WINDOW_S));
    let mut window: Vec<f32> = Vec::with_capacity(window_len + samples(CUT_SEARCH_S));
    let mut offset = 0usize;
    let mut ended = false;
    let mut words = Vec::new();
    let mut language: Option<String> = None;
    let mut options = options.clone();
    options.carry = Some(Arc::default());
    while !ended || !window.is_empty() {
        // Read up to a cut's search span past the window: an input that ends there is taken
        // whole, rather than leaving its last seconds a window (and a pass of every model) of
        // their own.
        while !ended && window.len() < window_len + samples(CUT_SEARCH_S) {
            match source.next_samples()? {
                Some(block) => {
                    // The block that crosses the window's end grows it by that block, not by
                    // doubling (a second window's worth of samples, 20 MB, never used).
                    window.reserve_exact(block.len());
                    window.extend_from_slice(&block);
                }
                None => ended = true,
            }
        }
        if options.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let cut = if ended {
            window.len()
        } else {
            quietest_cut(&window[..window_len])
        };
        let offset_s = seconds(offset);
        let mut piece_options = options.clone();
        if let (Some(total_s), Some(progress)) = (total_s, options.progress.clone()) {
            let piece_s = seconds(cut);
            let shared = reported.clone();
            piece_options.progress = Some(Arc::new(move |percent: u8| {
                let done_s = offset_s + piece_s * f64::from(percent) / 100.0;
                let overall = ((done_s / total_s * 100.0) as u8).min(99);
                if shared.fetch_max(overall, Ordering::Relaxed) < overall {
                    progress(overall);
                }
            }));
        } else {
            piece_options.progress = None;
        }
        let piece = transcriber
            .transcribe(&window[..cut], &piece_options)
            .map_err(|e| match e {
                Error::NonFiniteAudio { index } => Error::NonFiniteAudio {
                    index: index + offset,
                },
                other => other,
            })?;
        if language.is_none()
            && let Some(detected) = &piece.language
        {
            options.language.clone_from(detected);
            language = Some(detected.clone());
        }
        words.extend(piece.words.into_iter().map(|mut w| {
            w.start = round_ms(w.start + offset_s);
            w.end = round_ms(w.end + offset_s);
            w
        }));
        window.drain(..cut);
        offset += cut;
        if total_s.is_none() {
            tracing::debug!(done_s = seconds(offset), "transcribed a window");
        }
    }
    report(100);
    Ok(Transcript { words, language })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cut_falls_in_the_quietest_stretch_near_the_end() {
        let n = samples(WINDOW_S);
        let mut window: Vec<f32> = (0..n).map(|i| 0.3 * (i as f32 * 0.05).sin()).collect();
        // A 0.4 s pause 8 s before the end, and a quieter-than-speech dip 15 s before it.
        let pause = n - samples(8.0);
        window[pause..pause + samples(0.4)].fill(0.0);
        let dip = n - samples(15.0);
        for x in &mut window[dip..dip + samples(0.4)] {
            *x *= 0.1;
        }
        let cut = quietest_cut(&window);
        assert!(
            cut > pause && cut < pause + samples(0.4),
            "cut at {:.3} s, pause {:.3}..{:.3} s",
            seconds(cut),
            seconds(pause),
            seconds(pause + samples(0.4))
        );
    }

    /// Records the length of every window it is given; hears nothing.
    #[derive(Debug, Default)]
    struct Windows(std::sync::Mutex<Vec<usize>>);

    impl Transcriber for Windows {
        fn transcribe(&self, samples: &[f32], _: &TranscribeOptions) -> Result<Transcript> {
            self.0.lock().unwrap().push(samples.len());
            Ok(Transcript {
                words: Vec::new(),
                language: None,
            })
        }

        fn align_text(
            &self,
            samples: &[f32],
            _: &crate::GivenText,
            options: &TranscribeOptions,
        ) -> Result<Transcript> {
            self.transcribe(samples, options)
        }

        fn voice_regions(&self, _: &[f32]) -> Result<Vec<caption_core::Span>> {
            Ok(Vec::new())
        }

        fn is_multilingual(&self) -> bool {
            false
        }

        fn model_name(&self) -> &str {
            "windows"
        }
    }

    /// The windows an input of `seconds` is transcribed in, with windows of [`MIN_WINDOW_S`].
    fn windows_of(input_s: f64) -> Vec<f64> {
        let mut blocks = vec![0.1_f32; samples(input_s)]
            .chunks(1_600)
            .map(|b| Ok::<_, std::convert::Infallible>(b.to_vec()))
            .collect::<Vec<_>>()
            .into_iter();
        let windows = Windows::default();
        transcribe_source_in_windows(
            &windows,
            &mut BlockSource::new(&mut blocks, None),
            &TranscribeOptions::default(),
            MIN_WINDOW_S,
        )
        .unwrap();
        windows
            .0
            .into_inner()
            .unwrap()
            .into_iter()
            .map(seconds)
            .collect()
    }

    #[test]
    fn an_input_ending_soon_after_a_window_is_taken_whole() {
        // Ending 15 s after the window: one window, not a last one of 15 s.
        assert_eq!(windows_of(45.0), vec![45.0]);
        // Ending 25 s after it: cut within the window's last 20 s, the rest a window.
        let windows = windows_of(55.0);
        assert_eq!(windows.len(), 2, "{windows:?}");
        assert!(
            windows[0] >= MIN_WINDOW_S - CUT_SEARCH_S && windows[0] <= MIN_WINDOW_S,
            "{windows:?}"
        );
        assert!(
            (windows.iter().sum::<f64>() - 55.0).abs() < 1e-9,
            "{windows:?}"
        );
    }

    #[test]
    fn a_window_of_silence_is_cut_near_its_end() {
        let window = vec![0.0; samples(WINDOW_S)];
        let cut = quietest_cut(&window);
        assert!(
            window.len() - cut <= samples(CUT_SEARCH_S),
            "cut at {}",
            seconds(cut)
        );
    }
}
