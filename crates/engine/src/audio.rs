//! A file's audio, decoded as the transcriber asks for it.

use std::path::Path;

use caption_transcribe::{TranscribeOptions, Transcriber};

use crate::{Error, Result};

/// A file's audio fed to the transcriber as it is decoded, so that long inputs are never held
/// whole; a decoding failure keeps its own error (and so its code).
pub(crate) struct DecodedAudio {
    pub(crate) reader: caption_media::AudioReader,
    failure: Option<caption_media::Error>,
}

impl DecodedAudio {
    pub(crate) fn open(path: &Path) -> Result<Self> {
        Ok(Self {
            reader: caption_media::AudioReader::open(path)?,
            failure: None,
        })
    }

    pub(crate) fn transcribe(
        &mut self,
        transcriber: &dyn Transcriber,
        options: &TranscribeOptions,
    ) -> Result<caption_transcribe::Transcript> {
        caption_transcribe::transcribe_source(transcriber, self, options)
            .map_err(|e| self.failure.take().map_or_else(|| e.into(), Error::from))
    }

    #[cfg(feature = "service")]
    pub(crate) fn decoded_s(&self) -> f64 {
        #[allow(
            clippy::cast_precision_loss,
            reason = "a sample count far below 2^52 is exact in f64"
        )]
        let samples = self.reader.samples_read() as f64;
        samples / f64::from(caption_transcribe::SAMPLE_RATE_HZ)
    }
}

impl caption_transcribe::AudioSource for DecodedAudio {
    fn next_samples(&mut self) -> caption_transcribe::Result<Option<Vec<f32>>> {
        self.reader.next_chunk().map_err(|e| {
            let detail = e.to_string();
            self.failure = Some(e);
            caption_transcribe::Error::AudioSource { detail }
        })
    }

    fn duration_s(&self) -> Option<f64> {
        Some(self.reader.duration_s())
    }
}
