//! The frame the blender writes into: its plane layout, its YUV colorimetry, and a mutable
//! view of its planes.

/// The YUV plane layouts the blender writes natively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PlaneLayout {
    /// Three planes, chroma halved both ways (`yuv420p`, `yuvj420p`).
    Yuv420p,
    /// Three planes, chroma halved horizontally (`yuv422p`, `yuvj422p`).
    Yuv422p,
    /// Three planes, full-size chroma (`yuv444p`, `yuvj444p`).
    Yuv444p,
    /// Luma plane plus one interleaved U/V plane, chroma halved both ways (`nv12`).
    Nv12,
    /// 10-bit little-endian samples in 16-bit words, otherwise as [`Self::Yuv420p`]
    /// (`yuv420p10le`).
    Yuv420p10,
    /// 10-bit as [`Self::Yuv420p10`], chroma halved horizontally (`yuv422p10le`).
    Yuv422p10,
    /// 10-bit as [`Self::Yuv420p10`], full-size chroma (`yuv444p10le`).
    Yuv444p10,
}

impl PlaneLayout {
    /// log2 of the horizontal and vertical chroma subsampling.
    pub(super) fn chroma_shift(self) -> (u32, u32) {
        match self {
            Self::Yuv420p | Self::Nv12 | Self::Yuv420p10 => (1, 1),
            Self::Yuv422p | Self::Yuv422p10 => (1, 0),
            Self::Yuv444p | Self::Yuv444p10 => (0, 0),
        }
    }

    pub(super) fn bit_depth(self) -> u32 {
        match self {
            Self::Yuv420p10 | Self::Yuv422p10 | Self::Yuv444p10 => 10,
            _ => 8,
        }
    }
}

/// The YUV matrix (luma coefficients) of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum YuvMatrix {
    /// ITU-R BT.601: standard definition video.
    Bt601,
    /// ITU-R BT.709: HD video.
    Bt709,
    /// ITU-R BT.2020 (non-constant luminance): UHD and HDR video.
    Bt2020,
}

impl YuvMatrix {
    /// What players assume for untagged video: BT.709 from 720 lines up, BT.601 below.
    pub fn default_for_height(height: u32) -> Self {
        if height >= 720 {
            Self::Bt709
        } else {
            Self::Bt601
        }
    }

    pub(super) fn kr_kb(self) -> (f32, f32) {
        match self {
            Self::Bt601 => (0.299, 0.114),
            Self::Bt709 => (0.2126, 0.0722),
            Self::Bt2020 => (0.2627, 0.0593),
        }
    }
}

/// How a frame's YUV values relate to RGB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Colorimetry {
    /// The luma coefficients.
    pub matrix: YuvMatrix,
    /// Full range (0-255, "JPEG") instead of limited range (16-235 luma, 16-240 chroma).
    pub full_range: bool,
}

/// A mutable view of a YUV frame's planes.
///
/// `planes[i]` starts at the top-left sample of plane `i` and holds `strides[i]` bytes a row;
/// for [`PlaneLayout::Nv12`] plane 1 is the interleaved U/V plane and plane 2 is unused
/// (an empty slice).
#[derive(Debug)]
pub struct FrameMut<'a> {
    /// How the planes are arranged.
    pub layout: PlaneLayout,
    /// Width of the luma plane, pixels.
    pub width: u32,
    /// Height of the luma plane, pixels.
    pub height: u32,
    /// The planes: Y, U, V (or Y, UV for NV12).
    pub planes: [&'a mut [u8]; 3],
    /// Bytes from one row of each plane to the next (at least its row's width in bytes).
    pub strides: [usize; 3],
}
