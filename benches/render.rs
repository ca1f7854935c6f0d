//! Overlay rendering at 1080x1920: one frame per template cold (fresh caches), with warm glyphs
//! (a new visual state), the next frame of a video (the previous one's shadows cached), and warm
//! (cached state); and 60 s at 30 fps serially and with rayon. Then glyph filling, the
//! renderer's tiny-skia fill against fontdue's rasterizer at caption sizes, Latin and CJK, with
//! their difference in coverage printed before the timings.
//! Run: `cargo bench -p caption-render --bench render` (`-- glyph-fill` for the comparison).
#![allow(
    clippy::expect_used,
    reason = "a bench without its fixtures cannot run"
)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use caption_core::{Catalog, Color, ColorSet, Config, DisplayEmojis, Word};
use caption_render::{CaptionRenderer, DirFonts, FontFile, FontSource, FrameSize, SystemFonts};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

const FRAME: FrameSize = FrameSize {
    width_px: 1080,
    height_px: 1920,
};

const VOCABULARY: &[&str] = &[
    "welcome",
    "back",
    "everyone!",
    "today",
    "we",
    "build",
    "a",
    "rocket.",
    "it",
    "runs",
    "on",
    "pizza",
    "and",
    "fire!",
    "captions",
    "make",
    "videos",
    "easier",
    "to",
    "follow,",
];

fn words(seconds: usize) -> Vec<Word> {
    (0..seconds * 5 / 2)
        .map(|i| {
            let start = i as f64 * 0.4;
            let text = VOCABULARY[i % VOCABULARY.len()];
            let mut w = Word::new(start, start + 0.35, text.trim_end_matches(['.', ',', '!']));
            w.punctuated_word = text.to_owned();
            w
        })
        .collect()
}

fn fonts() -> Arc<dyn FontSource> {
    let emoji = SystemFonts::new()
        .expect("fontconfig")
        .emoji_font()
        .expect("color emoji font");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/fonts");
    Arc::new(
        DirFonts::open(&dir)
            .expect("fixture fonts")
            .with_emoji_font(emoji),
    )
}

/// Outline, blurred shadow, word boxes, active box and emoji at once.
fn heaviest(catalog: &Catalog) -> Config {
    let mut c = catalog.get("emoji-hype").expect("template").config.clone();
    c.word_has_background = true;
    c.colors.background_color = ColorSet::one(Color::rgba(0, 0, 0, 150));
    c.sizes.background_radius_px = 20.0;
    c.modes.display_emojis = DisplayEmojis::Word;
    c.lines_count = 2;
    c.words_per_line_count = 3;
    c
}

fn render(c: &mut Criterion) {
    let catalog = Catalog::builtin().expect("catalog");
    let fonts = fonts();
    let words = words(60);
    // 11.7 s: "pizza" is being spoken (has an emoji), mid-effect.
    let t = 11.65;
    let mut configs: Vec<(String, Config)> = catalog
        .templates()
        .iter()
        .map(|t| (t.id.clone(), t.config.clone()))
        .collect();
    configs.push(("heaviest".into(), heaviest(&catalog)));

    let mut group = c.benchmark_group("overlay-1080x1920");
    for (id, config) in &configs {
        group.bench_function(format!("{id}/cold"), |b| {
            b.iter_batched(
                || CaptionRenderer::new(&words, config, FRAME, fonts.clone()).expect("renderer"),
                |r| r.render_at(t),
                BatchSize::PerIteration,
            );
        });
        let renderer =
            CaptionRenderer::new(&words, config, FRAME, fonts.clone()).expect("renderer");
        let state = renderer.timeline().state_at(t);
        let next = renderer.timeline().state_at(t + 1.0 / 30.0);
        renderer.render_at(t);
        renderer.render_at(t + 1.0 / 30.0);
        // A state never drawn: every shadow blurred anew, glyphs rasterized already.
        group.bench_function(format!("{id}/new-state-warm-glyphs"), |b| {
            b.iter_batched(
                || renderer.forget_frames(),
                |()| renderer.render_state(&state),
                BatchSize::PerIteration,
            );
        });
        // The next frame of a video: the previous frame's shadows are cached, so only what
        // changed (the word that pops, the emoji that moves) is drawn anew.
        group.bench_function(format!("{id}/next-frame"), |b| {
            b.iter_batched(
                || {
                    renderer.forget_frames();
                    renderer.render_state(&state);
                },
                |()| renderer.render_state(&next),
                BatchSize::PerIteration,
            );
        });
        group.bench_function(format!("{id}/warm"), |b| b.iter(|| renderer.render_at(t)));
    }
    group.finish();

    let times: Vec<f64> = (0..60 * 30).map(|f| f as f64 / 30.0).collect();
    let mut group = c.benchmark_group("video-60s-30fps");
    group.sample_size(10);
    for (id, config) in configs
        .iter()
        .filter(|(id, _)| id == "heaviest" || id == "bold-highlight")
    {
        group.bench_function(format!("{id}/serial"), |b| {
            b.iter_batched(
                || CaptionRenderer::new(&words, config, FRAME, fonts.clone()).expect("renderer"),
                |r| {
                    times
                        .iter()
                        .map(|&t| r.render_at(t))
                        .filter(Option::is_some)
                        .count()
                },
                BatchSize::PerIteration,
            );
        });
        group.bench_function(format!("{id}/rayon"), |b| {
            b.iter_batched(
                || CaptionRenderer::new(&words, config, FRAME, fonts.clone()).expect("renderer"),
                |r| r.render_many(&times).iter().filter(|o| o.is_some()).count(),
                BatchSize::PerIteration,
            );
        });
    }
    group.finish();
}

/// Caption sizes on a 1080-wide frame: small subtitles, the templates' usual, a big pop.
const FILL_SIZES_PX: [f32; 3] = [40.0, 64.0, 96.0];

/// A face's bytes and the glyphs of a caption line set in it.
struct FillFace {
    name: &'static str,
    bytes: Vec<u8>,
    index: u32,
    glyphs: Vec<u16>,
}

impl FillFace {
    fn load(name: &'static str, file: &FontFile, text: &str) -> Self {
        let bytes = std::fs::read(&file.path).expect("font file");
        let face = ttf_parser::Face::parse(&bytes, file.index).expect("font face");
        let mut glyphs: Vec<u16> = text
            .chars()
            .filter(|c| !c.is_whitespace())
            .filter_map(|c| face.glyph_index(c))
            .map(|g| g.0)
            .collect();
        glyphs.sort_unstable();
        glyphs.dedup();
        Self {
            name,
            index: file.index,
            glyphs,
            bytes,
        }
    }

    fn parsed(&self) -> ttf_parser::Face<'_> {
        ttf_parser::Face::parse(&self.bytes, self.index).expect("font face")
    }

    fn fontdue(&self) -> fontdue::Font {
        let settings = fontdue::FontSettings {
            collection_index: self.index,
            ..fontdue::FontSettings::default()
        };
        fontdue::Font::from_bytes(self.bytes.as_slice(), settings).expect("fontdue face")
    }
}

/// One glyph's coverage; `left` and `top` place its top-left pixel from the glyph origin
/// (y down).
struct Coverage {
    left: i32,
    top: i32,
    width: usize,
    height: usize,
    alpha: Vec<u8>,
}

impl Coverage {
    fn at(&self, x: i32, y: i32) -> u8 {
        let (cx, cy) = (x - self.left, y - self.top);
        if cx < 0 || cy < 0 || cx as usize >= self.width || cy as usize >= self.height {
            return 0;
        }
        self.alpha[cy as usize * self.width + cx as usize]
    }
}

struct PathSink(tiny_skia::PathBuilder, f32);

impl ttf_parser::OutlineBuilder for PathSink {
    fn move_to(&mut self, x: f32, y: f32) {
        self.0.move_to(x * self.1, -y * self.1);
    }
    fn line_to(&mut self, x: f32, y: f32) {
        self.0.line_to(x * self.1, -y * self.1);
    }
    fn quad_to(&mut self, x1: f32, y1: f32, x: f32, y: f32) {
        let s = self.1;
        self.0.quad_to(x1 * s, -y1 * s, x * s, -y * s);
    }
    fn curve_to(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, x: f32, y: f32) {
        let s = self.1;
        self.0
            .cubic_to(x1 * s, -y1 * s, x2 * s, -y2 * s, x * s, -y * s);
    }
    fn close(&mut self) {
        self.0.close();
    }
}

/// The renderer's fill (crates/render/src/raster.rs, at a whole-pixel origin): the outline as
/// a tiny-skia path, filled anti-aliased with the winding rule into a mask one pixel larger
/// than its bounds.
fn fill_tiny_skia(face: &ttf_parser::Face<'_>, glyph: u16, size_px: f32) -> Option<Coverage> {
    let mut sink = PathSink(
        tiny_skia::PathBuilder::new(),
        size_px / f32::from(face.units_per_em()),
    );
    face.outline_glyph(ttf_parser::GlyphId(glyph), &mut sink)?;
    let path = sink.0.finish()?;
    let b = path.bounds();
    let (left, top) = (
        (b.left() - 1.0).floor() as i32,
        (b.top() - 1.0).floor() as i32,
    );
    let width = ((b.right() + 1.0).ceil() as i32 - left).max(1) as u32;
    let height = ((b.bottom() + 1.0).ceil() as i32 - top).max(1) as u32;
    let mut mask = tiny_skia::Mask::new(width, height)?;
    let shift = tiny_skia::Transform::from_translate(-left as f32, -top as f32);
    mask.fill_path(&path, tiny_skia::FillRule::Winding, true, shift);
    Some(Coverage {
        left,
        top,
        width: width as usize,
        height: height as usize,
        alpha: mask.data().to_vec(),
    })
}

fn fill_fontdue(font: &fontdue::Font, glyph: u16, size_px: f32) -> Coverage {
    let (m, alpha) = font.rasterize_indexed(glyph, size_px);
    Coverage {
        left: m.xmin,
        top: -(m.ymin + m.height as i32),
        width: m.width,
        height: m.height,
        alpha,
    }
}

/// How far fontdue's coverage is from tiny-skia's over every glyph of `face` at `size_px`:
/// mean absolute alpha difference over the union of both glyph boxes (in 1/255), largest
/// single difference, and total coverage of fontdue relative to tiny-skia.
fn fill_difference(face: &FillFace, font: &fontdue::Font, size_px: f32) -> (f64, u8, f64) {
    let parsed = face.parsed();
    let (mut abs_sum, mut pixels, mut max) = (0_u64, 0_u64, 0_u8);
    let (mut skia_sum, mut fontdue_sum) = (0_u64, 0_u64);
    for &glyph in &face.glyphs {
        let Some(a) = fill_tiny_skia(&parsed, glyph, size_px) else {
            continue;
        };
        let b = fill_fontdue(font, glyph, size_px);
        let x0 = a.left.min(b.left);
        let y0 = a.top.min(b.top);
        let x1 = (a.left + a.width as i32).max(b.left + b.width as i32);
        let y1 = (a.top + a.height as i32).max(b.top + b.height as i32);
        for y in y0..y1 {
            for x in x0..x1 {
                let (p, q) = (a.at(x, y), b.at(x, y));
                abs_sum += u64::from(p.abs_diff(q));
                max = max.max(p.abs_diff(q));
                skia_sum += u64::from(p);
                fontdue_sum += u64::from(q);
                pixels += 1;
            }
        }
    }
    let mean = abs_sum as f64 / pixels.max(1) as f64;
    let coverage = fontdue_sum as f64 / skia_sum.max(1) as f64 - 1.0;
    (mean, max, coverage)
}

fn fill_faces() -> Vec<FillFace> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/fonts");
    let latin = FontFile {
        path: dir.join("Inter-Bold.otf"),
        index: 0,
    };
    let mut faces = vec![FillFace::load(
        "latin",
        &latin,
        "Captions make videos easier to follow!",
    )];
    // The system's CJK face (Noto Sans CJK where installed), else the Japanese fixture face.
    let cjk = SystemFonts::new()
        .ok()
        .and_then(|s| s.fallback_for('字', 700))
        .filter(|f| Path::new(&f.path).exists())
        .unwrap_or(FontFile {
            path: dir.join("sawarabi-gothic-medium.ttf"),
            index: 0,
        });
    faces.push(FillFace::load("cjk", &cjk, "字幕让视频更容易理解和分享"));
    faces
}

/// tiny-skia's fill against fontdue's. fontdue fills 8-15x faster, yet the renderer keeps
/// tiny-skia: fontdue sets a glyph on whole pixels only (the renderer places glyphs to a
/// quarter pixel, so words that slide or zoom do not jitter), its coverage is off by 1-3/255
/// on average and by up to half the range on single pixels, it parses every outline of a face
/// when it loads it (a second for a CJK face), and a glyph is filled once per size and
/// position and then cached. The README gives the numbers.
fn glyph_fill(c: &mut Criterion) {
    let faces = fill_faces();
    // fontdue parses every glyph of a face up front, so faces are loaded on first use and kept:
    // a CJK face is paid once, and only when a CJK glyph is filled.
    let fontdue_faces: Vec<OnceLock<fontdue::Font>> =
        faces.iter().map(|_| OnceLock::new()).collect();
    let fontdue_of = |i: usize| fontdue_faces[i].get_or_init(|| faces[i].fontdue());

    for (i, face) in faces.iter().enumerate() {
        for size_px in FILL_SIZES_PX {
            let (mean, max, coverage) = fill_difference(face, fontdue_of(i), size_px);
            eprintln!(
                "glyph-fill quality {}/{size_px}px ({} glyphs): fontdue vs tiny-skia mean |alpha diff| {mean:.2}/255 over the glyph boxes, max {max}/255, total coverage {:+.2}%",
                face.name,
                face.glyphs.len(),
                coverage * 100.0
            );
        }
    }

    let mut group = c.benchmark_group("glyph-fill");
    for (i, face) in faces.iter().enumerate() {
        let parsed = face.parsed();
        for size_px in FILL_SIZES_PX {
            let id = format!("{}/{size_px}px", face.name);
            group.bench_function(format!("tiny-skia/{id}"), |b| {
                b.iter(|| {
                    face.glyphs
                        .iter()
                        .filter_map(|&g| fill_tiny_skia(&parsed, g, size_px))
                        .map(|m| m.alpha.len())
                        .sum::<usize>()
                });
            });
            let font = fontdue_of(i);
            group.bench_function(format!("fontdue/{id}"), |b| {
                b.iter(|| {
                    face.glyphs
                        .iter()
                        .map(|&g| fill_fontdue(font, g, size_px).alpha.len())
                        .sum::<usize>()
                });
            });
        }
    }
    group.finish();

    // What a face costs before its first glyph: ttf-parser (tiny-skia's source of outlines)
    // reads tables in place, fontdue parses every glyph's outline.
    let mut group = c.benchmark_group("glyph-face-load");
    group.sample_size(10);
    for face in &faces {
        group.bench_function(format!("ttf-parser/{}", face.name), |b| {
            b.iter(|| face.parsed().number_of_glyphs());
        });
        group.bench_function(format!("fontdue/{}", face.name), |b| {
            b.iter(|| face.fontdue().glyph_count());
        });
    }
    group.finish();
}

criterion_group!(benches, render, glyph_fill);
criterion_main!(benches);
