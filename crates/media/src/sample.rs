//! A few frames a second of a video, made small and upright: what a face detector looks at
//! before a reframed burn.

use std::path::Path;

use ffmpeg::format::Pixel;
use ffmpeg::software::scaling;
use ffmpeg::{Packet, frame};
use ffmpeg_next as ffmpeg;

use crate::burn::decode::VideoInput;
use crate::ff;
use crate::{Error, Result};

/// One sampled frame: packed RGB, 3 bytes a pixel, rows top to bottom, upright (as a player
/// shows it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SampledFrame {
    /// The frame's time, milliseconds from the media's start.
    pub t_ms: u64,
    /// Width, pixels.
    pub width: u32,
    /// Height, pixels.
    pub height: u32,
    /// The pixels.
    pub rgb: Vec<u8>,
}

impl SampledFrame {
    /// The frame's time, seconds from the media's start.
    pub fn t_s(&self) -> f64 {
        #[allow(clippy::cast_precision_loss, reason = "milliseconds of a video")]
        let ms = self.t_ms as f64;
        ms / 1000.0
    }
}

/// What [`sample_frames`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SampleReport {
    /// Frames handed over.
    pub samples: u64,
    /// The video's display width (after rotation), pixels.
    pub display_width: u32,
    /// The video's display height, pixels.
    pub display_height: u32,
}

/// Decodes `input`'s video and hands `each` a frame every `every_s` seconds, reduced (by area
/// averaging) to fit `fit_px` x `fit_px`. Decoding skips the loop filter and the frames
/// nothing refers to, which a detector does not miss and which makes this pass cheap beside
/// the burn it prepares. Stops at the first error `each` returns.
///
/// # Errors
/// As [`burn`](fn@crate::burn) for the input; `each`'s own errors.
pub fn sample_frames<E: From<Error>>(
    input: impl AsRef<Path>,
    every_s: f64,
    fit_px: u32,
    mut each: impl FnMut(SampledFrame) -> Result<(), E>,
) -> Result<SampleReport, E> {
    let input = input.as_ref();
    let mut ictx = ff::open_input(input)?;
    let mut video = VideoInput::open(&ictx, input)?;
    // SAFETY: plain field writes on the open decoder's context; the decoders read them for
    // each frame they start (frame threads copy them from this context).
    unsafe {
        let context = video.decoder.as_mut_ptr();
        (*context).skip_loop_filter = ffmpeg::ffi::AVDiscard::AVDISCARD_ALL;
        (*context).skip_frame = ffmpeg::ffi::AVDiscard::AVDISCARD_NONREF;
    }
    let start_s = ff::input_start_s(&ictx);
    let mut sampler = Sampler {
        every_s: every_s.max(1e-3),
        fit_px: fit_px.max(1),
        rotation_cw_deg: video.rotation_cw_deg,
        next_s: f64::NEG_INFINITY,
        scaler: None,
        report: SampleReport {
            samples: 0,
            display_width: 0,
            display_height: 0,
        },
    };
    let mut decoded = frame::Video::empty();
    let mut drain = |video: &mut VideoInput, sampler: &mut Sampler| -> Result<(), E> {
        while video.decoder.receive_frame(&mut decoded).is_ok() {
            let Some(pts) = decoded.timestamp().or(decoded.pts()) else {
                continue;
            };
            let t_s = ff::ts_to_s(pts, video.time_base) - start_s;
            if let Some(sample) = sampler.take(&decoded, t_s, input)? {
                each(sample)?;
            }
        }
        Ok(())
    };
    loop {
        let mut packet = Packet::empty();
        match packet.read(&mut ictx) {
            Ok(()) => {}
            // The burn that follows reports damage; the frames read so far are the samples.
            Err(_) => break,
        }
        if packet.stream() != video.index {
            continue;
        }
        // A packet that does not decode is skipped, as the burn skips it.
        if video.decoder.send_packet(&packet).is_ok() {
            drain(&mut video, &mut sampler)?;
        }
    }
    if video.decoder.send_eof().is_ok() {
        drain(&mut video, &mut sampler)?;
    }
    Ok(sampler.report)
}

struct Sampler {
    every_s: f64,
    fit_px: u32,
    rotation_cw_deg: u32,
    next_s: f64,
    scaler: Option<(scaling::Context, (Pixel, u32, u32))>,
    report: SampleReport,
}

impl Sampler {
    /// `decoded` reduced and upright, when its time has come.
    fn take(
        &mut self,
        decoded: &frame::Video,
        t_s: f64,
        input: &Path,
    ) -> Result<Option<SampledFrame>> {
        let (w, h) = (decoded.width(), decoded.height());
        if w == 0 || h == 0 || t_s + 1e-3 < self.next_s {
            return Ok(None);
        }
        self.next_s = t_s + self.every_s;
        let turned = self.rotation_cw_deg % 180 == 90;
        (self.report.display_width, self.report.display_height) =
            if turned { (h, w) } else { (w, h) };
        let scale = f64::from(self.fit_px) / f64::from(w.max(h));
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "at most fit_px, at least 1"
        )]
        let fit = |n: u32| ((f64::from(n) * scale).round() as u32).clamp(1, n);
        let (tw, th) = (fit(w), fit(h));
        let key = (decoded.format(), w, h);
        if self.scaler.as_ref().is_none_or(|(_, k)| *k != key) {
            let context = scaling::Context::get(
                decoded.format(),
                w,
                h,
                Pixel::RGB24,
                tw,
                th,
                scaling::Flags::AREA,
            )
            .map_err(|err| ff::decode_error(input, "video", &err))?;
            self.scaler = Some((context, key));
        }
        let Some((scaler, _)) = self.scaler.as_mut() else {
            return Ok(None);
        };
        let mut rgb = frame::Video::empty();
        scaler
            .run(decoded, &mut rgb)
            .map_err(|err| ff::decode_error(input, "video", &err))?;
        let (tw_us, th_us) = (tw as usize, th as usize);
        let stride = rgb.stride(0);
        let data = rgb.data(0);
        let mut packed = Vec::with_capacity(tw_us * th_us * 3);
        for y in 0..th_us {
            packed.extend_from_slice(&data[y * stride..][..tw_us * 3]);
        }
        let (width, height, rgb) = upright(packed, tw, th, self.rotation_cw_deg);
        self.report.samples += 1;
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "a frame's time, clamped at 0"
        )]
        let t_ms = (t_s.max(0.0) * 1000.0).round() as u64;
        Ok(Some(SampledFrame {
            t_ms,
            width,
            height,
            rgb,
        }))
    }
}

/// A coded picture (`w` x `h` RGB) turned as players show it (`rotation_cw_deg` clockwise).
fn upright(rgb: Vec<u8>, w: u32, h: u32, rotation_cw_deg: u32) -> (u32, u32, Vec<u8>) {
    let (cw, ch) = (w as usize, h as usize);
    let at = |xc: usize, yc: usize| &rgb[(yc * cw + xc) * 3..][..3];
    let mut out = Vec::with_capacity(rgb.len());
    match rotation_cw_deg {
        90 => {
            // Display (xd, yd) shows coded (yd, ch - 1 - xd).
            for yd in 0..cw {
                for xd in 0..ch {
                    out.extend_from_slice(at(yd, ch - 1 - xd));
                }
            }
            (h, w, out)
        }
        180 => {
            for yd in 0..ch {
                for xd in 0..cw {
                    out.extend_from_slice(at(cw - 1 - xd, ch - 1 - yd));
                }
            }
            (w, h, out)
        }
        270 => {
            // Display (xd, yd) shows coded (cw - 1 - yd, xd).
            for yd in 0..cw {
                for xd in 0..ch {
                    out.extend_from_slice(at(cw - 1 - yd, xd));
                }
            }
            (h, w, out)
        }
        _ => (w, h, rgb),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quarter_turn_puts_the_left_column_on_top() {
        // 2x1 coded: red, green. Turned 90 clockwise: 1x2, the left (red) pixel at the top.
        let (w, h, rgb) = upright(vec![255, 0, 0, 0, 255, 0], 2, 1, 90);
        assert_eq!((w, h), (1, 2));
        assert_eq!(rgb, [255, 0, 0, 0, 255, 0]);
        let (_, _, rgb) = upright(vec![255, 0, 0, 0, 255, 0], 2, 1, 270);
        assert_eq!(rgb, [0, 255, 0, 255, 0, 0]);
    }
}
