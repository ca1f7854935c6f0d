//! Speakers on transcribed words: caption-speakers' diarizer, loaded once per captioner.

use std::path::Path;
use std::sync::Arc;

use caption_core::{SpeakerCount, Word};
use caption_speakers::{Diarizer, WordSpan};

use crate::captioner::{Captioner, loaded_once};
use crate::task::Task;
use crate::{Error, Result};

impl Captioner {
    /// The voice encoder, loaded on first use and kept.
    ///
    /// # Errors
    ///
    /// [`ErrorCode::ModelMissing`](crate::ErrorCode::ModelMissing) when it is not installed.
    pub(crate) fn diarizer(&self) -> Result<Arc<Diarizer>> {
        loaded_once(self.diarizer_lock(), || Ok(Diarizer::open_installed()?))
    }

    /// Gives `words` their speakers when `task` asks for them, decoding `media`'s audio again
    /// (the transcription streamed it).
    pub(crate) fn label_speakers(
        &self,
        media: &Path,
        words: &mut [Word],
        task: &Task,
    ) -> Result<()> {
        let Some(count) = task.speaker_count() else {
            return Ok(());
        };
        if words.is_empty() {
            return Ok(());
        }
        let samples = caption_media::decode_audio_16k_mono(media)?;
        label(&*self.diarizer()?, &samples, words, count)
    }

    /// As [`Captioner::label_speakers`], on `samples`, the words' audio already decoded
    /// (16 kHz mono).
    pub(crate) fn label_speakers_in(
        &self,
        samples: &[f32],
        words: &mut [Word],
        task: &Task,
    ) -> Result<()> {
        match task.speaker_count() {
            Some(count) if !words.is_empty() => label(&*self.diarizer()?, samples, words, count),
            _ => Ok(()),
        }
    }
}

/// Sets each word's `speaker` to "S1", "S2", … (in order of first speech) from `samples`, the
/// words' 16 kHz mono audio.
fn label(
    diarizer: &Diarizer,
    samples: &[f32],
    words: &mut [Word],
    count: SpeakerCount,
) -> Result<()> {
    let spans: Vec<WordSpan> = words
        .iter()
        .map(|w| WordSpan {
            start_s: w.start,
            end_s: w.end,
        })
        .collect();
    let speakers = diarizer
        .speakers(samples, &spans, count)
        .map_err(Error::from)?;
    for (word, speaker) in words.iter_mut().zip(speakers) {
        word.speaker = Some(format!("S{}", speaker + 1));
    }
    Ok(())
}
