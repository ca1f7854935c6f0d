/// The caption's pixels for one frame: premultiplied RGBA8 rows of `width` pixels, to be
/// blended at `(x, y)` of the frame (source over). `x`/`y` are never negative and the box never
/// leaves the frame.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Overlay {
    /// Left edge on the frame, pixels from the left.
    pub x: i32,
    /// Top edge on the frame, pixels from the top.
    pub y: i32,
    /// Width of the box, pixels.
    pub width: u32,
    /// Height of the box, pixels.
    pub height: u32,
    /// `width * height * 4` bytes: premultiplied RGBA8, rows top to bottom.
    pub rgba: Vec<u8>,
}

impl Overlay {
    /// `(x, y, width, height, premultiplied rgba)`, the fields of the video pipeline's overlay.
    pub fn into_parts(self) -> (i32, i32, u32, u32, Vec<u8>) {
        (self.x, self.y, self.width, self.height, self.rgba)
    }

    /// Blends this overlay over a full RGBA8 frame buffer (premultiplied or opaque), source
    /// over. Used for previews and tests; the video pipeline blends into YUV itself.
    pub fn blend_into(&self, frame_rgba: &mut [u8], frame_width: u32) {
        let fw = frame_width as usize;
        for row in 0..self.height as usize {
            let fy = self.y as usize + row;
            let src =
                &self.rgba[row * self.width as usize * 4..(row + 1) * self.width as usize * 4];
            let start = (fy * fw + self.x as usize) * 4;
            let Some(dst) = frame_rgba.get_mut(start..start + src.len()) else {
                return;
            };
            for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
                let inv = 255 - u32::from(s[3]);
                for c in 0..4 {
                    d[c] = (u32::from(s[c]) + div255(u32::from(d[c]) * inv)) as u8;
                }
            }
        }
    }
}

/// `v / 255` rounded, exact for `v <= 255 * 255`.
#[inline]
pub(crate) fn div255(v: u32) -> u32 {
    (v + 128 + ((v + 128) >> 8)) >> 8
}
