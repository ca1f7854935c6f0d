//! The fontconfig-backed font source: template families resolve, missing glyphs fall back to a
//! face that has them, and captions render with system fonts alone.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

use std::sync::Arc;

use caption_core::{Catalog, Word};
use caption_layout::{FontSource, Shaper};
use caption_render::{CaptionRenderer, FrameSize, SystemFonts};

#[test]
fn template_families_resolve_on_the_system() {
    let fonts = SystemFonts::new().unwrap();
    for template in Catalog::builtin().unwrap().templates() {
        let c = &template.config;
        let file = fonts.resolve(&c.font, c.font_weight).unwrap();
        assert!(
            file.path.exists(),
            "{}: {}",
            template.id,
            file.path.display()
        );
    }
    assert!(fonts.emoji_font().is_some(), "no color emoji font");
}

#[test]
fn japanese_falls_back_from_a_latin_face() {
    let fonts: Arc<dyn FontSource> = Arc::new(SystemFonts::new().unwrap());
    let shaper = Shaper::new(fonts.clone(), "Inter", 700).unwrap();
    let shaped = shaper.shape("今日は", 40.0);
    assert!(!shaped.glyphs.is_empty());
    assert!(
        shaped.glyphs.iter().all(|g| g.face != 0 && g.glyph_id != 0),
        "{shaped:?}"
    );

    let words = vec![Word::new(0.0, 1.0, "今日はいい天気")];
    let config = Catalog::builtin().unwrap().default_config().clone();
    let renderer = CaptionRenderer::new(&words, &config, FrameSize::new(360, 640), fonts).unwrap();
    let overlay = renderer.render_at(0.5).expect("a caption");
    assert!(overlay.rgba.chunks_exact(4).any(|p| p[3] == 255));
}
