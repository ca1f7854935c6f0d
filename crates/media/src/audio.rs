use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use ffmpeg::format::context::Input;
use ffmpeg::software::resampling;
use ffmpeg::{ChannelLayout, codec, frame, media};
use ffmpeg_next as ffmpeg;

use crate::ff;
use crate::health::{FileReach, StreamHealth};
use crate::{Error, Result};

/// The sample rate of the audio [`AudioReader`] produces: what whisper models expect.
pub const AUDIO_SAMPLE_RATE_HZ: u32 = 16_000;

/// How many decode errors in a row are tolerated (a damaged packet here and there still leaves
/// useful speech) before the input counts as unreadable.
const MAX_CONSECUTIVE_DECODE_ERRORS: u32 = 50;

/// Streams the main audio stream of any file FFmpeg reads as 16 kHz mono `f32` samples in
/// [-1, 1], chunk by chunk, so that long inputs never sit in memory whole.
///
/// Chunks have no fixed size (about one decoded frame each). Iterate with
/// [`AudioReader::next_chunk`] or as an [`Iterator`] of `Result<Vec<f32>>`.
///
/// ```
/// use std::process::Command;
///
/// // Ten seconds of a 48 kHz stereo tone in an MP4, made by the ffmpeg command line.
/// let dir = tempfile::tempdir()?;
/// let m4a = dir.path().join("tone.m4a");
/// let made = Command::new("ffmpeg")
///     .args(["-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=300:duration=10"])
///     .args(["-ar", "48000", "-ac", "2", "-c:a", "aac"])
///     .arg(&m4a)
///     .status()?;
/// assert!(made.success());
///
/// let mut reader = caption_media::AudioReader::open(&m4a)?;
/// let mut loudest = 0.0_f32;
/// while let Some(chunk) = reader.next_chunk()? {
///     assert!(chunk.len() < 16_000, "chunks are small, the input is never held whole");
///     loudest = chunk.iter().fold(loudest, |m, s| m.max(s.abs()));
/// }
/// assert!((reader.samples_read() as i64 - 160_000).abs() < 2_000, "{}", reader.samples_read());
/// assert!(loudest > 0.1 && loudest <= 1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct AudioReader {
    path: PathBuf,
    input: Input,
    stream_index: usize,
    decoder: ffmpeg::decoder::Audio,
    resampler: Option<Resampler>,
    ready: VecDeque<Vec<f32>>,
    duration_s: f64,
    finished: bool,
    consecutive_errors: u32,
    samples_out: u64,
    health: StreamHealth,
    /// How far the packets of every stream reached.
    reach: FileReach,
}

impl std::fmt::Debug for AudioReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AudioReader")
            .field("path", &self.path)
            .field("stream_index", &self.stream_index)
            .field("duration_s", &self.duration_s)
            .field("samples_out", &self.samples_out)
            .finish_non_exhaustive()
    }
}

struct Resampler {
    context: resampling::Context,
    from: (ffmpeg::format::Sample, u64, u32),
}

impl AudioReader {
    /// Opens `path` and its best audio stream.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is no file, [`Error::Unreadable`] if it cannot be opened as
    /// media, [`Error::Truncated`] and [`Error::TooLarge`] as [`probe`](crate::probe) says,
    /// [`Error::NoAudio`] if it has no audio stream, [`Error::Decode`] if no decoder opens for
    /// that stream.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_owned();
        let input = ff::open_input(&path)?;
        let Some(stream_index) = ff::best_stream(&input, media::Type::Audio) else {
            return Err(Error::NoAudio { path });
        };
        let decode_err = |err: ffmpeg::Error| Error::Decode {
            path: path.clone(),
            stream: "audio",
            reason: ff::describe(&err),
        };
        let parameters = input
            .stream(stream_index)
            .map(|s| s.parameters())
            .ok_or_else(|| Error::NoAudio { path: path.clone() })?;
        let time_base = input
            .stream(stream_index)
            .map_or(ffmpeg::Rational::new(1, 1), |s| s.time_base());
        let decoder = codec::context::Context::from_parameters(parameters)
            .map_err(decode_err)?
            .decoder()
            .audio()
            .map_err(decode_err)?;
        let duration_s = ff::input_duration_s(&input);
        Ok(Self {
            path,
            input,
            stream_index,
            decoder,
            resampler: None,
            ready: VecDeque::new(),
            duration_s,
            finished: false,
            consecutive_errors: 0,
            samples_out: 0,
            health: StreamHealth::new("audio", time_base),
            reach: FileReach::default(),
        })
    }

    /// The input's duration as its container states it (0 when unknown); useful for progress.
    pub fn duration_s(&self) -> f64 {
        self.duration_s
    }

    /// How many 16 kHz samples have been handed out so far.
    pub fn samples_read(&self) -> u64 {
        self.samples_out
    }

    /// The next chunk of 16 kHz mono samples, or `None` at the end of the stream.
    ///
    /// # Errors
    /// [`Error::Unreadable`] when the container cannot be read further (corrupt) or the
    /// stream's packets keep failing to decode; [`Error::Truncated`] at the end of a file cut
    /// off before the length its header states; [`Error::Empty`] at the end of an audio
    /// stream with no samples; [`Error::Decode`] if resampling fails.
    pub fn next_chunk(&mut self) -> Result<Option<Vec<f32>>> {
        loop {
            if let Some(chunk) = self.ready.pop_front() {
                self.samples_out += chunk.len() as u64;
                return Ok(Some(chunk));
            }
            if self.finished {
                return Ok(None);
            }
            self.pump()?;
        }
    }

    /// Reads packets until at least one chunk is ready or the input ends.
    fn pump(&mut self) -> Result<()> {
        let mut packet = ffmpeg::Packet::empty();
        match packet.read(&mut self.input) {
            Ok(()) => {
                self.reach.packet(&packet, &self.input);
                if packet.stream() != self.stream_index {
                    return Ok(());
                }
                self.health.packet(&packet);
                match self.decoder.send_packet(&packet) {
                    Ok(()) => self.consecutive_errors = 0,
                    Err(err) => self.note_decode_error(&err)?,
                }
                self.drain_decoder()
            }
            Err(ffmpeg::Error::Eof) => {
                // Flushing a decoder that saw no valid packet can fail harmlessly.
                if self.decoder.send_eof().is_ok() {
                    self.drain_decoder()?;
                }
                self.flush_resampler()?;
                self.finished = true;
                if let Some(warning) = self.health.warning(
                    ff::input_start_s(&self.input),
                    "what decoded around it was used",
                ) {
                    tracing::warn!(path = %self.path.display(), "{warning}");
                }
                self.health.check_complete(
                    &self.input,
                    self.stream_index,
                    &self.path,
                    &self.reach,
                )?;
                if self.samples_out == 0 && self.ready.iter().all(Vec::is_empty) {
                    if self.health.packets == 0 {
                        return Err(Error::Empty {
                            path: self.path.clone(),
                            stream: "audio",
                        });
                    }
                    return Err(Error::Unreadable {
                        path: self.path.clone(),
                        reason: "no audio sample could be decoded".to_owned(),
                    });
                }
                Ok(())
            }
            Err(err) => Err(Error::Unreadable {
                path: self.path.clone(),
                reason: ff::describe(&err),
            }),
        }
    }

    fn note_decode_error(&mut self, err: &ffmpeg::Error) -> Result<()> {
        self.consecutive_errors += 1;
        self.health.damage();
        tracing::warn!(path = %self.path.display(), %err, "skipping an audio packet that does not decode");
        if self.consecutive_errors > MAX_CONSECUTIVE_DECODE_ERRORS {
            return Err(Error::Unreadable {
                path: self.path.clone(),
                reason: format!("the audio stream does not decode: {}", ff::describe(err)),
            });
        }
        Ok(())
    }

    fn drain_decoder(&mut self) -> Result<()> {
        let mut decoded = frame::Audio::empty();
        loop {
            match self.decoder.receive_frame(&mut decoded) {
                Ok(()) => self.resample(&mut decoded)?,
                Err(ffmpeg::Error::Eof) => return Ok(()),
                Err(ffmpeg::Error::Other { errno }) if errno == ffmpeg::ffi::EAGAIN => {
                    return Ok(());
                }
                Err(err) => {
                    self.note_decode_error(&err)?;
                    return Ok(());
                }
            }
        }
    }

    fn resample(&mut self, decoded: &mut frame::Audio) -> Result<()> {
        if decoded.samples() == 0 {
            return Ok(());
        }
        // Decoded frames may carry a channel count but no layout; the resampler needs one.
        let mut layout = decoded.channel_layout();
        if layout.is_empty() {
            layout = ChannelLayout::default(i32::from(decoded.channels()));
            decoded.set_channel_layout(layout);
        }
        let from = (decoded.format(), layout.bits(), decoded.rate());
        if self.resampler.as_ref().is_none_or(|r| r.from != from) {
            // A mid-stream format change (rare: concatenated files) restarts the resampler;
            // the few samples held in the old one are not worth a flush.
            let context = resampling::Context::get(
                from.0,
                layout,
                from.2,
                ffmpeg::format::Sample::F32(ffmpeg::format::sample::Type::Packed),
                ChannelLayout::MONO,
                AUDIO_SAMPLE_RATE_HZ,
            )
            .map_err(|err| self.resample_error(&err))?;
            self.resampler = Some(Resampler { context, from });
        }
        let capacity = output_capacity(decoded.samples(), from.2);
        let mut out = frame::Audio::new(
            ffmpeg::format::Sample::F32(ffmpeg::format::sample::Type::Packed),
            capacity,
            ChannelLayout::MONO,
        );
        let result = match self.resampler.as_mut() {
            Some(r) => r.context.run(decoded, &mut out),
            None => return Ok(()),
        };
        result.map_err(|err| self.resample_error(&err))?;
        self.push(&out);
        Ok(())
    }

    fn flush_resampler(&mut self) -> Result<()> {
        loop {
            let Some(resampler) = self.resampler.as_mut() else {
                return Ok(());
            };
            let mut out = frame::Audio::new(
                ffmpeg::format::Sample::F32(ffmpeg::format::sample::Type::Packed),
                4096,
                ChannelLayout::MONO,
            );
            let result = resampler.context.flush(&mut out);
            result.map_err(|err| self.resample_error(&err))?;
            if out.samples() == 0 {
                return Ok(());
            }
            self.push(&out);
        }
    }

    fn push(&mut self, out: &frame::Audio) {
        let samples = out.samples();
        if samples == 0 {
            return;
        }
        let plane: &[f32] = out.plane(0);
        self.ready
            .push_back(plane[..samples.min(plane.len())].to_vec());
    }

    fn resample_error(&self, err: &ffmpeg::Error) -> Error {
        Error::Decode {
            path: self.path.clone(),
            stream: "audio",
            reason: format!("resampling to 16 kHz mono failed: {}", ff::describe(err)),
        }
    }
}

/// Room for one decoded frame converted to 16 kHz, plus the resampler's filter delay.
fn output_capacity(in_samples: usize, in_rate_hz: u32) -> usize {
    let rate = u64::from(in_rate_hz.max(1));
    let scaled = (in_samples as u64 * u64::from(AUDIO_SAMPLE_RATE_HZ)).div_ceil(rate);
    usize::try_from(scaled).unwrap_or(usize::MAX / 2) + 256
}

impl Iterator for AudioReader {
    type Item = Result<Vec<f32>>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_chunk() {
            Ok(Some(chunk)) => Some(Ok(chunk)),
            Ok(None) => None,
            Err(err) => {
                // After an error the reader is spent; ending the iteration avoids repeating it.
                self.finished = true;
                self.ready.clear();
                Some(Err(err))
            }
        }
    }
}

/// Decodes the whole audio of `path` to 16 kHz mono `f32` samples: the convenience form of
/// [`AudioReader`] for inputs that fit in memory (one hour is about 230 MB).
///
/// # Errors
/// As [`AudioReader::open`] and [`AudioReader::next_chunk`]: [`Error::NotFound`] for a missing
/// file, [`Error::Unreadable`] for corrupt or truncated ones, [`Error::NoAudio`] when there is no audio stream.
///
/// ```
/// use std::process::Command;
///
/// // One second of a 440 Hz tone at 44.1 kHz stereo, made by the ffmpeg command line.
/// let dir = tempfile::tempdir()?;
/// let wav = dir.path().join("tone.wav");
/// let made = Command::new("ffmpeg")
///     .args(["-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1"])
///     .args(["-ar", "44100", "-ac", "2"])
///     .arg(&wav)
///     .status()?;
/// assert!(made.success());
///
/// let samples = caption_media::decode_audio_16k_mono(&wav)?;
/// assert!((samples.len() as i64 - 16_000).abs() < 100, "{}", samples.len());
/// assert!(samples.iter().all(|s| s.abs() <= 1.0));
/// assert!(samples.iter().any(|s| s.abs() > 0.05), "the tone is there");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn decode_audio_16k_mono(path: impl AsRef<Path>) -> Result<Vec<f32>> {
    let mut reader = AudioReader::open(path)?;
    let expected = (reader.duration_s() * f64::from(AUDIO_SAMPLE_RATE_HZ)) as usize;
    let mut samples = Vec::with_capacity(expected.min(1 << 28));
    while let Some(chunk) = reader.next_chunk()? {
        samples.extend_from_slice(&chunk);
    }
    Ok(samples)
}
