//! Each frame's overlay: asked of the overlay source, converted for the frame's pixel format
//! and orientation, and cached for the frames that follow.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ffmpeg::{Rational, frame};
use ffmpeg_next as ffmpeg;

use super::colour::is_hdr;
use super::hdr_overlay::to_hdr_signal;
use super::planes::{colorimetry_of, layout_of};
use crate::blend::{Colorimetry, PlaneLayout, PreparedOverlay};
use crate::ff;
use crate::overlay::{Overlay, OverlaySource};
use crate::{Error, Result};

/// Converted overlays, kept while the source keeps returning the same `Arc`: captions change
/// a few times a second, frames come 30-60 times a second.
type CacheEntry = (Arc<Overlay>, Colorimetry, Arc<PreparedOverlay>);

#[derive(Default)]
pub(super) struct OverlayCache {
    entries: Mutex<Vec<CacheEntry>>,
}

/// Frames reach the cache nearly in time order, a batch at a time, so the last few overlays are
/// all that can hit again; each entry holds a converted copy of a caption-sized box.
const CACHE_ENTRIES: usize = 3;

impl OverlayCache {
    fn prepared(
        &self,
        overlay: &Arc<Overlay>,
        colorimetry: Colorimetry,
        build: impl FnOnce() -> Option<PreparedOverlay>,
    ) -> Option<Arc<PreparedOverlay>> {
        let lookup = |entries: &Vec<CacheEntry>| {
            entries
                .iter()
                .find(|(o, c, _)| Arc::ptr_eq(o, overlay) && *c == colorimetry)
                .map(|(_, _, p)| Arc::clone(p))
        };
        if let Ok(entries) = self.entries.lock()
            && let Some(hit) = lookup(&entries)
        {
            return Some(hit);
        }
        // Built outside the lock: two threads may race to build the same one, which only
        // costs a duplicate conversion.
        let prepared = Arc::new(build()?);
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= CACHE_ENTRIES {
                entries.remove(0);
            }
            entries.push((Arc::clone(overlay), colorimetry, Arc::clone(&prepared)));
        }
        Some(prepared)
    }
}

/// What a batch's parallel workers share to prepare each frame's overlay.
pub(super) struct BlendJob<'a> {
    pub(super) overlays: &'a dyn OverlaySource,
    pub(super) cache: &'a OverlayCache,
    pub(super) video_tb: Rational,
    pub(super) start_s: f64,
    pub(super) rotation_cw_deg: u32,
    pub(super) overlaid: &'a AtomicU64,
}

impl BlendJob<'_> {
    /// The overlay of `frame`, converted for it (and cached for the frames that follow).
    pub(super) fn prepare(
        &self,
        frame: &frame::Video,
    ) -> Result<Option<(PlaneLayout, Arc<PreparedOverlay>)>> {
        let (coded_w, coded_h) = (frame.width(), frame.height());
        let (display_w, display_h) = if self.rotation_cw_deg % 180 == 90 {
            (coded_h, coded_w)
        } else {
            (coded_w, coded_h)
        };
        let t_s = ff::ts_to_s(frame.pts().unwrap_or(0), self.video_tb) - self.start_s;
        let Some(overlay) = self.overlays.overlay_at(t_s, display_w, display_h) else {
            return Ok(None);
        };
        let expected = overlay.width() as usize * overlay.height() as usize * 4;
        if overlay.rgba().len() != expected {
            return Err(Error::InvalidOverlay {
                t_s,
                reason: "RGBA buffer size does not match".to_owned(),
            });
        }
        let Some(layout) = layout_of(frame.format()) else {
            return Ok(None);
        };
        let colorimetry = colorimetry_of(frame);
        let rotation = self.rotation_cw_deg;
        let transfer = frame.color_transfer_characteristic();
        let prepared = self.cache.prepared(&overlay, colorimetry, || {
            // Only a kept HDR picture is still HDR here: the others were tone-mapped.
            let hdr;
            let overlay = if is_hdr(transfer) {
                hdr = to_hdr_signal(&overlay, transfer).ok()?;
                &hdr
            } else {
                &*overlay
            };
            if rotation == 0 {
                PreparedOverlay::new(overlay, layout, colorimetry, coded_w, coded_h)
            } else {
                let coded = overlay.to_coded_orientation(rotation, coded_w, coded_h);
                PreparedOverlay::new(&coded, layout, colorimetry, coded_w, coded_h)
            }
        });
        if prepared.is_some() {
            self.overlaid.fetch_add(1, Ordering::Relaxed);
        }
        Ok(prepared.map(|p| (layout, p)))
    }
}
