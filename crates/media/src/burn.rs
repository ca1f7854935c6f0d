//! The burn pipeline: demux and decode on the calling thread, overlay frames in parallel
//! batches with rayon, encode and mux on a writer thread, with bounded queues in between so
//! that memory stays flat whatever the input's length.
//!
//! - `frame_loop`: the calling thread's loop (demux, decode, batch, hand over);
//! - `decode`: the input's video stream and decoders;
//! - `colour`: each frame made the output's picture (even size, 8-bit BT.709, HDR tone-mapped,
//!   or HDR kept);
//! - `overlays` and `planes`: each frame's overlay, converted and cached, and the frame's
//!   planes it is blended into;
//! - `hdr_overlay`: captions re-coded for a picture that stays HDR;
//! - `audio` and `aac`: audio copied as it is, or re-encoded to AAC;
//! - `encode` and `writer`: opening the output, and the thread that encodes and muxes;
//! - `output`: the output file's container and the partial file it is written to.

mod aac;
mod audio;
mod colour;
mod cuts;
pub(crate) mod decode;
mod encode;
mod frame_loop;
mod hdr_overlay;
mod messages;
mod options;
mod output;
mod overlays;
mod planes;
mod writer;

use std::path::Path;
use std::time::Instant;

use frame_loop::Burner;
pub use options::{AudioOutcome, BurnOptions, BurnReport};
use output::PartialFile;
pub(crate) use output::output_muxer;

use crate::Result;
use crate::ff;
use crate::overlay::OverlaySource;

/// Decodes `input`, blends the overlay `overlays` gives for each frame's presentation time, and
/// encodes H.264 (libx264) into `output`, keeping size, timing (each frame's timestamp, so
/// variable frame rate survives), rotation and aspect ratio. The picture is made one that
/// plays everywhere: 8-bit 4:2:0 BT.709 limited range, an odd width or height cropped by a
/// pixel, HDR (HLG, PQ) tone-mapped to SDR before the captions are blended in; with
/// [`BurnOptions::keep_hdr`] an HDR input stays HDR, encoded as HEVC 10-bit (libx265) with
/// its colour tags. MP4 and MOV outputs are `faststart`. The audio is copied when the output
/// container accepts its codec and re-encoded to AAC otherwise.
///
/// The container follows `output`'s extension (`.mp4`, `.mov`, `.mkv`, ...). The output is
/// written to a temporary file beside it and renamed at the end: on any error, or when
/// cancelled, nothing is left behind.
///
/// # Errors
/// [`Error::NotFound`](crate::Error::NotFound) (missing input),
/// [`Error::Unreadable`](crate::Error::Unreadable) (corrupt input, an MP4 missing its index),
/// [`Error::Truncated`](crate::Error::Truncated) (cut off before the length it states),
/// [`Error::Empty`](crate::Error::Empty) (a 0-second video),
/// [`Error::TooLarge`](crate::Error::TooLarge) (a picture over
/// [`MAX_PICTURE_PIXELS`](crate::MAX_PICTURE_PIXELS)),
/// [`Error::NoVideo`](crate::Error::NoVideo) (audio-only),
/// [`Error::StillImage`](crate::Error::StillImage) (an image),
/// [`Error::UnsupportedOutput`](crate::Error::UnsupportedOutput) (an extension with no
/// H.264-capable container), [`Error::Decode`](crate::Error::Decode),
/// [`Error::Encode`](crate::Error::Encode), [`Error::Io`](crate::Error::Io),
/// [`Error::Cancelled`](crate::Error::Cancelled).
pub fn burn(
    input: impl AsRef<Path>,
    output: impl AsRef<Path>,
    overlays: &dyn OverlaySource,
    options: &BurnOptions,
) -> Result<BurnReport> {
    let started = Instant::now();
    let input = input.as_ref();
    let output = output.as_ref();
    let ictx = ff::open_input(input)?;
    let muxer = output_muxer(output)?;
    let partial = PartialFile::beside(output)?;
    let mut report = Burner::new(input, ictx, &muxer, partial.path(), overlays, options)?.run()?;
    partial.commit(output)?;
    report.elapsed_s = started.elapsed().as_secs_f64();
    tracing::info!(
        input = %input.display(),
        output = %output.display(),
        frames = report.frames,
        elapsed_s = report.elapsed_s,
        "burned"
    );
    Ok(report)
}
