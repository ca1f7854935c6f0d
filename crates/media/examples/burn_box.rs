//! Burns a solid box into a video: `cargo run --release -p caption-media --example burn_box -- IN OUT [PRESET CRF]`.
//!
//! The overlay covers the lower middle of the frame (1000x300 on a 1080-wide frame, scaled
//! with the width), which is what a caption costs; used by scripts/bench-burn.

#![allow(clippy::print_stdout, reason = "an example program reports on stdout")]

use std::sync::Arc;

use caption_media::{BurnOptions, Overlay, OverlaySource, burn};

struct SolidBox {
    cached: std::sync::Mutex<Option<(u32, u32, Arc<Overlay>)>>,
}

impl OverlaySource for SolidBox {
    fn overlay_at(&self, _t_s: f64, frame_w: u32, frame_h: u32) -> Option<Arc<Overlay>> {
        let mut cached = self.cached.lock().ok()?;
        if let Some((w, h, overlay)) = cached.as_ref()
            && (*w, *h) == (frame_w, frame_h)
        {
            return Some(Arc::clone(overlay));
        }
        let box_w = frame_w * 1000 / 1080;
        let box_h = box_w * 3 / 10;
        let x = (frame_w - box_w) / 2;
        let y = frame_h * 3 / 4 - box_h / 2;
        let overlay = Arc::new(Overlay::solid(
            x as i32,
            y as i32,
            box_w,
            box_h,
            [200, 180, 20, 230],
        ));
        *cached = Some((frame_w, frame_h, Arc::clone(&overlay)));
        Some(overlay)
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(input), Some(output)) = (args.first(), args.get(1)) else {
        return Err("usage: burn_box IN OUT [PRESET CRF]".into());
    };
    let mut options = BurnOptions::default();
    if let Some(preset) = args.get(2) {
        options = options.with_preset(preset.clone());
    }
    if let Some(crf) = args.get(3) {
        options = options.with_crf(crf.parse()?);
    }
    let source = SolidBox {
        cached: std::sync::Mutex::new(None),
    };
    let report = burn(input, output, &source, &options)?;
    println!(
        "{} frames ({} with overlay) in {:.2} s, {:?}",
        report.frames, report.frames_with_overlay, report.elapsed_s, report.audio
    );
    Ok(())
}
