//! A moving crop window: which part of each frame a reframed burn keeps.

use ffmpeg::frame;
use ffmpeg_next as ffmpeg;

use crate::{Error, Result};

/// Where the crop window's top-left corner is at one time, in display pixels (the frame as a
/// player shows it, after rotation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CropKey {
    /// Seconds from the media's start (of the input: before any cuts).
    pub t_s: f64,
    /// Left edge, pixels.
    pub x: u32,
    /// Top edge, pixels.
    pub y: u32,
}

/// A crop window of one size whose position changes with time: each frame keeps the window
/// of the key nearest its time. Made for every frame, it is the path a reframe planned.
///
/// ```
/// use caption_media::{CropKey, CropPath};
///
/// let keys = vec![
///     CropKey { t_s: 0.0, x: 100, y: 0 },
///     CropKey { t_s: 1.0, x: 300, y: 0 },
/// ];
/// let path = CropPath::new(608, 1080, keys)?;
/// assert_eq!(path.origin_at(0.2), Some((100, 0)));
/// assert_eq!(path.origin_at(0.9), Some((300, 0)));
/// assert!(CropPath::new(607, 1080, Vec::new()).is_err(), "4:2:0 needs even sizes");
/// # Ok::<(), caption_media::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CropPath {
    width: u32,
    height: u32,
    keys: Vec<CropKey>,
}

impl CropPath {
    /// A `width` x `height` window (even sizes, as 4:2:0 video needs) at `keys` (in time
    /// order; none keeps the window at the frame's centre). Odd corners are moved a pixel left
    /// or up.
    ///
    /// # Errors
    /// [`Error::InvalidCrop`] for an odd or zero size, or keys out of order or not finite.
    pub fn new(width: u32, height: u32, keys: Vec<CropKey>) -> Result<Self> {
        let bad = |reason: String| Err(Error::InvalidCrop { reason });
        if width < 2 || height < 2 || width % 2 == 1 || height % 2 == 1 {
            return bad(format!(
                "a {width}x{height} window: sides must be even and at least 2"
            ));
        }
        if keys.iter().any(|k| !k.t_s.is_finite()) {
            return bad("a key's time is not finite".to_owned());
        }
        if keys.windows(2).any(|w| w[1].t_s < w[0].t_s) {
            return bad("keys are not in time order".to_owned());
        }
        let keys = keys
            .into_iter()
            .map(|k| CropKey {
                x: k.x & !1,
                y: k.y & !1,
                ..k
            })
            .collect();
        Ok(Self {
            width,
            height,
            keys,
        })
    }

    /// The window's width, pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// The window's height, pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The window's top-left corner at `t_s`: the nearest key's; `None` without keys.
    pub fn origin_at(&self, t_s: f64) -> Option<(u32, u32)> {
        let after = self.keys.partition_point(|k| k.t_s <= t_s);
        let candidates = [after.checked_sub(1), Some(after)];
        candidates
            .into_iter()
            .flatten()
            .filter_map(|i| self.keys.get(i))
            .min_by(|a, b| (a.t_s - t_s).abs().total_cmp(&(b.t_s - t_s).abs()))
            .map(|k| (k.x, k.y))
    }

    /// Crops `frame` (a decoded frame of a 4:2:0 format whose players rotate it
    /// `rotation_cw_deg`) to the window at `t_s`, without copying pixels: the frame's planes
    /// are pointed at the window. A window larger than the frame is cut to it; one past its
    /// edge is moved inside.
    pub(crate) fn apply(
        &self,
        frame: &mut frame::Video,
        t_s: f64,
        rotation_cw_deg: u32,
    ) -> Result<()> {
        let (coded_w, coded_h) = (frame.width(), frame.height());
        let turned = rotation_cw_deg % 180 == 90;
        let (display_w, display_h) = if turned {
            (coded_h, coded_w)
        } else {
            (coded_w, coded_h)
        };
        let (w, h) = (
            self.width.min(display_w & !1),
            self.height.min(display_h & !1),
        );
        let (x, y) = self
            .origin_at(t_s)
            .unwrap_or(((display_w - w) / 2, (display_h - h) / 2));
        let (x, y) = (x.min(display_w - w) & !1, y.min(display_h - h) & !1);
        // The display window in the coded picture: (left, top, width, height).
        let (left, top, cw, ch) = match rotation_cw_deg {
            90 => (y, coded_h - x - w, h, w),
            180 => (coded_w - x - w, coded_h - y - h, w, h),
            270 => (coded_w - y - h, x, h, w),
            _ => (x, y, w, h),
        };
        // SAFETY: plain field writes on a frame we own, then FFmpeg's own cropping, which only
        // moves the plane pointers and shrinks the size within the frame's buffers (the
        // window lies inside the picture: its size and corner are bounded above).
        let status = unsafe {
            let raw = frame.as_mut_ptr();
            (*raw).crop_left = left as usize;
            (*raw).crop_top = top as usize;
            (*raw).crop_right = (coded_w - left - cw) as usize;
            (*raw).crop_bottom = (coded_h - top - ch) as usize;
            ffmpeg::ffi::av_frame_apply_cropping(raw, ffmpeg::ffi::AV_FRAME_CROP_UNALIGNED as i32)
        };
        if status < 0 || (frame.width(), frame.height()) != (cw, ch) {
            return Err(Error::InvalidCrop {
                reason: format!(
                    "a {cw}x{ch} window at ({left}, {top}) of a {coded_w}x{coded_h} frame at {t_s:.3} s did not apply"
                ),
            });
        }
        Ok(())
    }
}
