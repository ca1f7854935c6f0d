//! Pipeline benches: `cargo bench -p caption-media --bench pipeline`.
//!
//! The per-frame cost the burn adds over a bare transcode: blending a caption-sized overlay
//! (1000x300) into a portrait 1080x1920 yuv420p frame with the overlay already converted (the
//! common case: captions change a few times a second), and converting an overlay to the frame's
//! YUV format, which animated effects (pop, bounce, zoom, fade, slide, shake) need every frame
//! while they run: for a caption-like overlay (mostly transparent), a fully opaque one (the
//! worst case) and a fully transparent one, in yuv420p and 10-bit.

use std::hint::black_box;

use caption_media::{Colorimetry, FrameMut, Overlay, PlaneLayout, PreparedOverlay, YuvMatrix};
use criterion::{Criterion, criterion_group, criterion_main};

const W: u32 = 1080;
const H: u32 = 1920;

struct Planes {
    y: Vec<u8>,
    u: Vec<u8>,
    v: Vec<u8>,
}

impl Planes {
    fn new() -> Self {
        let (w, h) = (W as usize, H as usize);
        Self {
            y: vec![90; w * h],
            u: vec![128; w * h / 4],
            v: vec![128; w * h / 4],
        }
    }

    fn view(&mut self) -> FrameMut<'_> {
        FrameMut {
            layout: PlaneLayout::Yuv420p,
            width: W,
            height: H,
            planes: [&mut self.y, &mut self.u, &mut self.v],
            strides: [W as usize, W as usize / 2, W as usize / 2],
        }
    }
}

/// A caption-like overlay: mostly transparent, with opaque "glyph" bars and soft edges.
fn caption_overlay() -> Overlay {
    let (w, h) = (1000_u32, 300_u32);
    let mut rgba = vec![0_u8; (w * h * 4) as usize];
    for y in 0..h {
        for x in 0..w {
            let a: u8 = match (x / 25) % 3 {
                0 if (60..240).contains(&y) => 255,
                1 if (60..240).contains(&y) => 128,
                _ => 0,
            };
            let i = ((y * w + x) * 4) as usize;
            let premul = |c: u8| (u16::from(c) * u16::from(a) / 255) as u8;
            rgba[i..i + 4].copy_from_slice(&[premul(255), premul(220), premul(0), a]);
        }
    }
    Overlay::new(40, 1300, w, h, rgba).unwrap_or_else(|_| Overlay::solid(40, 1300, w, h, [0; 4]))
}

fn opaque_overlay() -> Overlay {
    Overlay::solid(40, 1300, 1000, 300, [200, 30, 30, 255])
}

fn transparent_overlay() -> Overlay {
    Overlay::solid(40, 1300, 1000, 300, [0, 0, 0, 0])
}

fn blend(c: &mut Criterion) {
    let overlay = caption_overlay();
    let colorimetry = Colorimetry {
        matrix: YuvMatrix::Bt709,
        full_range: false,
    };
    let mut frame = Planes::new();
    let prepared = PreparedOverlay::new(&overlay, PlaneLayout::Yuv420p, colorimetry, W, H);
    c.bench_function("blend 1000x300 into 1080x1920 yuv420p (prepared)", |b| {
        b.iter(|| {
            if let Some(p) = &prepared {
                p.blend_into(&mut frame.view());
            }
            black_box(&frame.y);
        });
    });
    let mut group = c.benchmark_group("prepare 1000x300 overlay");
    for (name, overlay) in [
        ("caption-like", &overlay),
        ("opaque", &opaque_overlay()),
        ("transparent", &transparent_overlay()),
    ] {
        for (layout_name, layout) in [
            ("yuv420p", PlaneLayout::Yuv420p),
            ("yuv420p10", PlaneLayout::Yuv420p10),
        ] {
            group.bench_function(format!("{name} {layout_name}"), |b| {
                b.iter(|| {
                    black_box(PreparedOverlay::new(
                        black_box(overlay),
                        layout,
                        colorimetry,
                        W,
                        H,
                    ))
                });
            });
        }
    }
    group.finish();
    // What an animated frame costs the pipeline: a new overlay converted and blended.
    c.bench_function("prepare + blend 1000x300 caption-like, yuv420p", |b| {
        b.iter(|| {
            if let Some(p) =
                PreparedOverlay::new(black_box(&overlay), PlaneLayout::Yuv420p, colorimetry, W, H)
            {
                p.blend_into(&mut frame.view());
            }
            black_box(&frame.y);
        });
    });
}

criterion_group!(benches, blend);
criterion_main!(benches);
