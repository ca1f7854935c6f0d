use std::sync::Arc;

use crate::{Error, Result};

/// A picture to lay over a video frame: premultiplied RGBA8 pixels in a box whose top-left
/// corner is at (`x`, `y`) in the frame's display coordinates (the frame as a player shows it,
/// after rotation). The box may reach past the frame's edges; what falls outside is ignored.
#[derive(Clone, PartialEq, Eq)]
pub struct Overlay {
    x: i32,
    y: i32,
    width: u32,
    height: u32,
    rgba: Vec<u8>,
}

impl std::fmt::Debug for Overlay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Overlay")
            .field("x", &self.x)
            .field("y", &self.y)
            .field("width", &self.width)
            .field("height", &self.height)
            .finish_non_exhaustive()
    }
}

impl Overlay {
    /// Wraps `rgba` (row-major, `width * height * 4` bytes, premultiplied alpha: no channel
    /// exceeds its pixel's alpha).
    ///
    /// # Errors
    /// [`Error::InvalidOverlay`] when the buffer length does not match the size.
    ///
    /// ```
    /// use caption_media::Overlay;
    ///
    /// let red = Overlay::new(4, 2, 2, 1, vec![255, 0, 0, 255, 128, 0, 0, 128])?;
    /// assert_eq!((red.x(), red.y(), red.width(), red.height()), (4, 2, 2, 1));
    /// assert!(Overlay::new(0, 0, 2, 2, vec![0; 4]).is_err(), "2x2 needs 16 bytes");
    /// # Ok::<(), caption_media::Error>(())
    /// ```
    pub fn new(x: i32, y: i32, width: u32, height: u32, rgba: Vec<u8>) -> Result<Self> {
        let expected = width as usize * height as usize * 4;
        if rgba.len() != expected {
            return Err(Error::InvalidOverlay {
                t_s: f64::NAN,
                reason: format!(
                    "{width}x{height} overlay needs {expected} RGBA bytes, got {}",
                    rgba.len()
                ),
            });
        }
        Ok(Self {
            x,
            y,
            width,
            height,
            rgba,
        })
    }

    /// A box of one premultiplied colour: handy for tests and benchmarks.
    pub fn solid(x: i32, y: i32, width: u32, height: u32, premultiplied_rgba: [u8; 4]) -> Self {
        let rgba = premultiplied_rgba.repeat(width as usize * height as usize);
        Self {
            x,
            y,
            width,
            height,
            rgba,
        }
    }

    /// Left edge in the frame's display coordinates, pixels (may be negative).
    pub fn x(&self) -> i32 {
        self.x
    }

    /// Top edge in the frame's display coordinates, pixels (may be negative).
    pub fn y(&self) -> i32 {
        self.y
    }

    /// Width of the box, pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height of the box, pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The premultiplied RGBA8 pixels, row-major, `width * 4` bytes a row.
    pub fn rgba(&self) -> &[u8] {
        &self.rgba
    }

    /// The same picture as the coded frame stores it, for a frame that players rotate
    /// `rotation_cw_deg` clockwise to show; `coded_w` x `coded_h` is the coded frame's size.
    pub(crate) fn to_coded_orientation(
        &self,
        rotation_cw_deg: u32,
        coded_w: u32,
        coded_h: u32,
    ) -> Overlay {
        if rotation_cw_deg == 0 {
            return self.clone();
        }
        let (cw, ch) = (i64::from(coded_w), i64::from(coded_h));
        // Coded (xc, yc) -> display (xd, yd), as players rotate the picture.
        let to_display = |xc: i64, yc: i64| -> (i64, i64) {
            match rotation_cw_deg {
                90 => (ch - 1 - yc, xc),
                180 => (cw - 1 - xc, ch - 1 - yc),
                _ => (yc, cw - 1 - xc),
            }
        };
        // Display -> coded, the inverse map, to find the box in coded space.
        let to_coded = |xd: i64, yd: i64| -> (i64, i64) {
            match rotation_cw_deg {
                90 => (yd, ch - 1 - xd),
                180 => (cw - 1 - xd, ch - 1 - yd),
                _ => (cw - 1 - yd, xd),
            }
        };
        let (x0, y0) = (i64::from(self.x), i64::from(self.y));
        let (x1, y1) = (
            x0 + i64::from(self.width) - 1,
            y0 + i64::from(self.height) - 1,
        );
        let (ax, ay) = to_coded(x0, y0);
        let (bx, by) = to_coded(x1, y1);
        let (left, top) = (ax.min(bx), ay.min(by));
        let (out_w, out_h) = if rotation_cw_deg == 180 {
            (self.width, self.height)
        } else {
            (self.height, self.width)
        };
        let mut rgba = vec![0_u8; out_w as usize * out_h as usize * 4];
        for row in 0..i64::from(out_h) {
            for col in 0..i64::from(out_w) {
                let (xd, yd) = to_display(left + col, top + row);
                let (sx, sy) = (xd - x0, yd - y0);
                let src = ((sy * i64::from(self.width) + sx) * 4) as usize;
                let dst = ((row * i64::from(out_w) + col) * 4) as usize;
                rgba[dst..dst + 4].copy_from_slice(&self.rgba[src..src + 4]);
            }
        }
        Overlay {
            x: i32::try_from(left).unwrap_or(i32::MAX),
            y: i32::try_from(top).unwrap_or(i32::MAX),
            width: out_w,
            height: out_h,
            rgba,
        }
    }
}

/// Supplies the overlay for each video frame; implemented by the caption renderer.
///
/// Contract:
/// - `overlay_at` is called once per frame, from several threads at once and not in time
///   order (frames are rendered in parallel), so it must be a pure function of its arguments.
/// - `t_s` is the frame's presentation time in seconds from the start of the media;
///   `frame_w` x `frame_h` is the frame's display size (after rotation).
/// - Return `None` when nothing is to be drawn. Returning the same `Arc` for consecutive
///   frames whose picture did not change lets the pipeline reuse its converted copy.
pub trait OverlaySource: Send + Sync {
    /// The picture for the frame shown at `t_s` seconds, of display size `frame_w` x
    /// `frame_h` pixels, or `None` to leave the frame as it is.
    fn overlay_at(&self, t_s: f64, frame_w: u32, frame_h: u32) -> Option<Arc<Overlay>>;
}

/// No overlay at all: a plain transcode through the same pipeline.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoOverlay;

impl OverlaySource for NoOverlay {
    fn overlay_at(&self, _t_s: f64, _frame_w: u32, _frame_h: u32) -> Option<Arc<Overlay>> {
        None
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn numbered(w: u32, h: u32) -> Overlay {
        let rgba = (0..w * h).flat_map(|i| [i as u8, 0, 0, 255]).collect();
        Overlay::new(5, 7, w, h, rgba).unwrap()
    }

    #[test]
    fn a_quarter_turn_maps_display_corners_to_coded_corners() {
        // Coded 40x30 shown rotated 90 cw: display is 30x40.
        let o = numbered(3, 2);
        let c = o.to_coded_orientation(90, 40, 30);
        assert_eq!((c.width(), c.height()), (2, 3));
        // Display (5,7) is coded (7, 30-1-5) = (7, 24); the box spans yc 22..=24.
        assert_eq!((c.x(), c.y()), (7, 22));
        // Display top-left pixel (value 0) sits at coded (7,24): bottom-left of the coded box.
        assert_eq!(c.rgba()[(2 * 2) * 4], 0);
        // Display top-right pixel (value 2) is coded (7,22): the coded box's top-left.
        assert_eq!(c.rgba()[0], 2);
    }

    #[test]
    fn half_and_three_quarter_turns_round_trip() {
        let o = numbered(4, 3);
        let c180 = o.to_coded_orientation(180, 50, 40);
        assert_eq!((c180.x(), c180.y()), (50 - 1 - 8, 40 - 1 - 9));
        assert_eq!(c180.rgba()[0], 11);
        let c270 = o.to_coded_orientation(270, 50, 40);
        assert_eq!((c270.width(), c270.height()), (3, 4));
        // Display (5,7) -> coded (50-1-7, 5) = (42, 5), which is the box's top-right.
        assert_eq!((c270.x(), c270.y()), (40, 5));
        assert_eq!(c270.rgba()[2 * 4], 0);
    }

    #[test]
    fn wrong_buffer_size_is_an_error() {
        assert!(Overlay::new(0, 0, 2, 2, vec![0; 15]).is_err());
    }
}
