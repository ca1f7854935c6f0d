//! Decoded FFmpeg frames as the blender sees them: which pixel formats it writes natively,
//! their colorimetry, and their planes as a [`FrameMut`].

use ffmpeg::format::Pixel;
use ffmpeg::frame;
use ffmpeg_next as ffmpeg;

use crate::blend::{Colorimetry, FrameMut, PlaneLayout, PreparedOverlay, YuvMatrix};
use crate::pool::FramePool;

pub(super) fn layout_of(format: Pixel) -> Option<PlaneLayout> {
    Some(match format {
        Pixel::YUV420P | Pixel::YUVJ420P => PlaneLayout::Yuv420p,
        Pixel::YUV422P | Pixel::YUVJ422P => PlaneLayout::Yuv422p,
        Pixel::YUV444P | Pixel::YUVJ444P => PlaneLayout::Yuv444p,
        Pixel::NV12 => PlaneLayout::Nv12,
        Pixel::YUV420P10LE => PlaneLayout::Yuv420p10,
        Pixel::YUV422P10LE => PlaneLayout::Yuv422p10,
        Pixel::YUV444P10LE => PlaneLayout::Yuv444p10,
        _ => return None,
    })
}

pub(super) fn colorimetry_of(frame: &frame::Video) -> Colorimetry {
    use ffmpeg::color::Space;
    let matrix = match frame.color_space() {
        Space::BT709 => YuvMatrix::Bt709,
        Space::BT470BG | Space::SMPTE170M | Space::FCC => YuvMatrix::Bt601,
        Space::BT2020NCL | Space::BT2020CL => YuvMatrix::Bt2020,
        _ => YuvMatrix::default_for_height(frame.height()),
    };
    let full_range = frame.color_range() == ffmpeg::color::Range::JPEG
        || matches!(
            frame.format(),
            Pixel::YUVJ420P | Pixel::YUVJ422P | Pixel::YUVJ444P
        );
    Colorimetry { matrix, full_range }
}

/// Blends `overlay` into `frame`, copying the frame first (into `pool`'s buffers) when the
/// decoder still references its pictures: the blend must never alter a picture the decoder
/// predicts later frames from.
pub(super) fn blend_frame(
    frame: &mut frame::Video,
    layout: PlaneLayout,
    overlay: &PreparedOverlay,
    pool: &FramePool,
) -> bool {
    if !pool.make_writable(frame, plane_rows(layout, frame.height())) {
        return false;
    }
    if let Some(mut view) = frame_view(frame, layout) {
        overlay.blend_into(&mut view);
    }
    true
}

/// The height of each plane of a `layout` frame `height` rows high (0: no such plane).
fn plane_rows(layout: PlaneLayout, height: u32) -> [usize; 3] {
    let h = height as usize;
    let chroma = match layout {
        PlaneLayout::Yuv420p | PlaneLayout::Nv12 | PlaneLayout::Yuv420p10 => h.div_ceil(2),
        _ => h,
    };
    if layout == PlaneLayout::Nv12 {
        [h, chroma, 0]
    } else {
        [h, chroma, chroma]
    }
}

/// Borrows a writable frame's planes as a [`FrameMut`], or `None` for bottom-up (negative
/// stride) frames, which decoders do not produce.
fn frame_view(frame: &mut frame::Video, layout: PlaneLayout) -> Option<FrameMut<'_>> {
    let (w, h) = (frame.width(), frame.height());
    let rows = plane_rows(layout, h);
    // SAFETY: only the pointer is taken here; it is dereferenced below under the same borrow.
    let raw = unsafe { frame.as_mut_ptr() };
    let mut planes: [&mut [u8]; 3] = [&mut [], &mut [], &mut []];
    let mut strides = [0_usize; 3];
    for (i, slot) in planes.iter_mut().enumerate() {
        if rows[i] == 0 {
            continue;
        }
        // SAFETY: `raw` is a valid, writable AVFrame of this pixel format (checked by the
        // caller), so data[i] points at a plane of at least linesize[i] * rows bytes. The
        // planes are distinct allocations (or disjoint parts of one), and the returned view
        // borrows `frame` mutably, so nothing else touches them meanwhile.
        unsafe {
            let stride = usize::try_from((*raw).linesize[i]).ok()?;
            let data = (*raw).data[i];
            if data.is_null() {
                return None;
            }
            *slot = std::slice::from_raw_parts_mut(data, stride * rows[i]);
            strides[i] = stride;
        }
    }
    Some(FrameMut {
        layout,
        width: w,
        height: h,
        planes,
        strides,
    })
}
