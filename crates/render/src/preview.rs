//! Still images for people: one frame, or a contact sheet of one frame per word.

use caption_core::Color;
use tiny_skia::{FilterQuality, Pixmap, PixmapPaint, Transform};

use crate::{CaptionRenderer, Error, Result};

fn backdrop(width: u32, height: u32, background: Color) -> Result<Pixmap> {
    let mut pixmap = Pixmap::new(width, height).ok_or(Error::FrameSize {
        width_px: width,
        height_px: height,
    })?;
    pixmap.fill(tiny_skia::Color::from_rgba8(
        background.r,
        background.g,
        background.b,
        background.a,
    ));
    Ok(pixmap)
}

fn frame_pixmap(renderer: &CaptionRenderer, t_s: f64, background: Color) -> Result<Pixmap> {
    let frame = renderer.frame();
    let mut pixmap = backdrop(frame.width_px, frame.height_px, background)?;
    if let Some(overlay) = renderer.render_at(t_s) {
        overlay.blend_into(pixmap.data_mut(), frame.width_px);
    }
    Ok(pixmap)
}

/// The frame at `t_s`: the caption over a plain `background`, as PNG bytes.
pub fn frame_png(renderer: &CaptionRenderer, t_s: f64, background: Color) -> Result<Vec<u8>> {
    frame_pixmap(renderer, t_s, background)?
        .encode_png()
        .map_err(|e| Error::Png(e.to_string()))
}

/// A grid of frames, one in the middle of each word, each scaled to `tile_width_px` wide, as
/// PNG bytes. `columns` is clamped to at least 1; at most 200 tiles are drawn.
pub fn contact_sheet_png(
    renderer: &CaptionRenderer,
    columns: u32,
    tile_width_px: u32,
    background: Color,
) -> Result<Vec<u8>> {
    let frame = renderer.frame();
    let times: Vec<f64> = renderer
        .timeline()
        .words
        .iter()
        .take(200)
        .map(|w| (w.start_s + w.end_s) / 2.0)
        .collect();
    let columns = columns.max(1);
    let tile_w = tile_width_px.clamp(16, frame.width_px.max(16));
    let scale = tile_w as f32 / frame.width_px as f32;
    let tile_h = ((frame.height_px as f32 * scale).round() as u32).max(1);
    let gap = 4;
    let rows = (times.len() as u32).div_ceil(columns).max(1);
    let mut sheet = backdrop(
        columns * (tile_w + gap) + gap,
        rows * (tile_h + gap) + gap,
        Color::rgb(16, 16, 16),
    )?;
    for (i, &t) in times.iter().enumerate() {
        let tile = frame_pixmap(renderer, t, background)?;
        let (col, row) = (i as u32 % columns, i as u32 / columns);
        let x = (gap + col * (tile_w + gap)) as f32;
        let y = (gap + row * (tile_h + gap)) as f32;
        sheet.draw_pixmap(
            0,
            0,
            tile.as_ref(),
            &PixmapPaint {
                quality: FilterQuality::Bilinear,
                ..PixmapPaint::default()
            },
            Transform::from_scale(scale, scale).post_translate(x, y),
            None,
        );
    }
    sheet.encode_png().map_err(|e| Error::Png(e.to_string()))
}
