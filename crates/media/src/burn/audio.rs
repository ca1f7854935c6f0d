//! The audio of a burn: copied packet for packet when the output container holds its codec,
//! else decoded here and re-encoded to AAC (see [`super::aac`]).

use std::ffi::CString;
use std::path::Path;

use ffmpeg::format::context::{Input, Output};
use ffmpeg::{Packet, Rational, codec, encoder, frame, media};
use ffmpeg_next as ffmpeg;

use super::aac::AudioEncoder;
use super::cuts::Cuts;
use super::decode::open_audio_decoder;
use super::options::AudioOutcome;
use crate::Result;
use crate::ff;

/// What the reading side does with the input's audio.
pub(super) enum AudioPlan {
    None,
    Copy {
        codec: String,
    },
    Encode {
        codec: String,
        decoder: ffmpeg::decoder::Audio,
    },
}

impl AudioPlan {
    /// The input's best audio stream, if any, and what to do with it for `muxer`; `cut`
    /// (spans are cut out) asks for decoding, since packets cannot be cut to the sample.
    pub(super) fn for_input(
        ictx: &Input,
        muxer: &str,
        cut: bool,
        input_path: &Path,
    ) -> Result<(Option<usize>, Self)> {
        let audio_index = ff::best_stream(ictx, media::Type::Audio);
        let plan = match audio_index.and_then(|i| ictx.stream(i)) {
            None => Self::None,
            Some(stream) => {
                let id = stream.parameters().id();
                let codec = ffmpeg::decoder::find(id)
                    .map_or_else(|| format!("{id:?}"), |c| c.name().to_owned());
                if !cut && muxer_accepts(muxer, id) {
                    Self::Copy { codec }
                } else {
                    let decoder = open_audio_decoder(&stream)
                        .map_err(|err| ff::decode_error(input_path, "audio", &err))?;
                    Self::Encode { codec, decoder }
                }
            }
        };
        Ok((audio_index, plan))
    }

    pub(super) fn outcome(&self) -> AudioOutcome {
        match self {
            Self::None => AudioOutcome::None,
            Self::Copy { codec } => AudioOutcome::Copied {
                codec: codec.clone(),
            },
            Self::Encode { codec, .. } => AudioOutcome::Reencoded {
                from_codec: codec.clone(),
            },
        }
    }
}

/// Whether the named muxer stores `id` as is, in a way players read.
///
/// FFmpeg's own answer is too generous for the MP4 family (it writes Vorbis into MP4, which
/// hardly any player plays), so there only the codecs players know are copied.
fn muxer_accepts(muxer: &str, id: codec::Id) -> bool {
    use codec::Id;
    if matches!(muxer, "mp4" | "mov" | "ipod" | "3gp" | "3g2" | "psp") {
        let playable = matches!(
            id,
            Id::AAC | Id::MP3 | Id::ALAC | Id::OPUS | Id::FLAC | Id::AC3 | Id::EAC3
        ) || (muxer == "mov"
            && matches!(
                id,
                Id::PCM_S16LE | Id::PCM_S16BE | Id::PCM_S24LE | Id::PCM_F32LE
            ));
        if !playable {
            return false;
        }
    }
    let Ok(name) = CString::new(muxer) else {
        return false;
    };
    // SAFETY: av_guess_format returns a static muxer description or NULL;
    // avformat_query_codec only reads it.
    unsafe {
        let format =
            ffmpeg::ffi::av_guess_format(name.as_ptr(), std::ptr::null(), std::ptr::null());
        !format.is_null()
            && ffmpeg::ffi::avformat_query_codec(
                format,
                id.into(),
                ffmpeg::ffi::FF_COMPLIANCE_NORMAL,
            ) == 1
    }
}

/// The writer's side of the audio: the output stream it goes to, and the encoder if any.
pub(super) enum WriterAudio {
    None,
    Copy {
        in_tb: Rational,
        out_index: usize,
        out_tb: Rational,
    },
    Encode(Box<AudioEncoder>),
}

impl WriterAudio {
    /// Adds the audio stream `plan` asks for (from the input stream `ist`) to `octx`, whose
    /// header is not written yet; re-encoded audio leaves `cuts` out.
    pub(super) fn add_stream(
        plan: &AudioPlan,
        ist: Option<ffmpeg::format::stream::Stream<'_>>,
        octx: &mut Output,
        global_header: bool,
        cuts: (&Cuts, f64),
        path: &Path,
    ) -> Result<Self> {
        Ok(match (plan, ist) {
            (AudioPlan::Copy { .. }, Some(ist)) => {
                let mut ost = octx
                    .add_stream(encoder::find(codec::Id::None))
                    .map_err(|err| ff::encode_error(path, &err))?;
                ost.set_parameters(ist.parameters());
                ost.set_time_base(ist.time_base());
                ost.set_metadata(ist.metadata().to_owned());
                // SAFETY: the copied parameters belong to `ost`; a codec tag from another
                // container would be wrong here, 0 lets the muxer pick its own.
                unsafe {
                    (*(*ost.as_mut_ptr()).codecpar).codec_tag = 0;
                }
                Self::Copy {
                    in_tb: ist.time_base(),
                    out_index: ost.index(),
                    out_tb: Rational::new(0, 1),
                }
            }
            (AudioPlan::Encode { decoder, .. }, Some(ist)) => Self::Encode(Box::new(
                AudioEncoder::open(decoder, &ist, octx, global_header, cuts, path)?,
            )),
            _ => Self::None,
        })
    }

    /// Takes the time base the muxer chose for the stream when it wrote the header.
    pub(super) fn header_written(&mut self, octx: &Output) {
        match self {
            Self::Copy {
                out_index, out_tb, ..
            } => {
                *out_tb = octx
                    .stream(*out_index)
                    .map_or(Rational::new(1, 1000), |s| s.time_base());
            }
            Self::Encode(enc) => enc.header_written(octx),
            Self::None => {}
        }
    }

    /// Writes a copied packet.
    pub(super) fn write_packet(
        &self,
        mut packet: Packet,
        octx: &mut Output,
        path: &Path,
    ) -> Result<()> {
        let Self::Copy {
            in_tb,
            out_index,
            out_tb,
        } = *self
        else {
            return Ok(());
        };
        packet.set_stream(out_index);
        packet.set_position(-1);
        packet.rescale_ts(in_tb, out_tb);
        packet
            .write_interleaved(octx)
            .map_err(|e| ff::encode_error(path, &e))
    }

    /// Encodes a decoded frame.
    pub(super) fn encode(
        &mut self,
        frame: frame::Audio,
        octx: &mut Output,
        path: &Path,
    ) -> Result<()> {
        match self {
            Self::Encode(enc) => enc.encode(frame, octx, path),
            _ => Ok(()),
        }
    }

    /// Flushes the encoder, if any, at the end of the input.
    pub(super) fn finish(&mut self, octx: &mut Output, path: &Path) -> Result<()> {
        match self {
            Self::Encode(enc) => enc.finish(octx, path),
            _ => Ok(()),
        }
    }
}
