//! Against the fonts set-up installs (Noto, Noto CJK, Noto Color Emoji, Inter, ...).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use caption_core::Catalog;
use caption_fonts::{Error, FontLibrary};

#[test]
fn japanese_lists_cjk_families_and_differs_from_english() {
    let fonts = FontLibrary::new().unwrap();
    let ja = fonts.families(Some("ja")).unwrap();
    let en = fonts.families(Some("en")).unwrap();
    assert!(ja.iter().any(|f| f.contains("CJK")), "{ja:?}");
    assert!(!en.iter().any(|f| f.contains("CJK JP")) || ja != en);
    assert_ne!(ja, en);
    assert!(en.iter().any(|f| f == "Inter"), "{en:?}");
    let mut sorted = ja.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted, ja, "sorted and deduplicated");
}

#[test]
fn tags_and_bare_codes() {
    let fonts = FontLibrary::new().unwrap();
    let zh_cn = fonts.families(Some("zh-CN")).unwrap();
    assert!(zh_cn.iter().any(|f| f.contains("CJK SC")), "{zh_cn:?}");
    let zh = fonts.families(Some("zh")).unwrap();
    assert!(zh.len() >= zh_cn.len());
    let all = fonts.families(None).unwrap();
    assert!(all.len() > zh.len());
    assert!(
        fonts
            .families(Some("ar"))
            .unwrap()
            .iter()
            .any(|f| f.contains("Arabic"))
    );
}

#[test]
fn unknown_language_is_an_error() {
    let fonts = FontLibrary::new().unwrap();
    for bad in ["xx", "klingon", "", "e"] {
        match fonts.families(Some(bad)) {
            Err(Error::UnknownLanguage { code }) => assert_eq!(code, bad),
            other => panic!("{bad}: {other:?}"),
        }
    }
}

#[test]
fn resolve_picks_the_nearest_upright_weight() {
    let fonts = FontLibrary::new().unwrap();
    let black = fonts.resolve("Inter", 900).unwrap();
    assert!(
        black.path.to_string_lossy().contains("Inter-Black"),
        "{black:?}"
    );
    let regular = fonts.resolve("inter", 400).unwrap();
    assert!(
        regular
            .path
            .to_string_lossy()
            .ends_with("Inter-Regular.otf"),
        "{regular:?}"
    );
    let cjk = fonts.resolve("Noto Sans CJK JP", 700).unwrap();
    assert!(cjk.path.extension().is_some_and(|e| e == "ttc"));
    assert!(matches!(
        fonts.resolve("No Such Family 123", 400),
        Err(Error::FamilyNotFound { .. })
    ));
}

#[test]
fn every_builtin_template_font_resolves_to_an_installed_file() {
    let fonts = FontLibrary::new().unwrap();
    for template in Catalog::builtin().unwrap().templates() {
        let config = &template.config;
        let face = fonts
            .resolve(&config.font, config.font_weight)
            .unwrap_or_else(|e| panic!("template {}: {e}", template.id));
        assert!(face.path.is_file(), "template {}: {face:?}", template.id);
        assert!(
            face.family.eq_ignore_ascii_case(&config.font),
            "{} resolved to {face:?}",
            template.id
        );
    }
}

#[test]
fn fallbacks_cover_scripts_and_emoji_is_color() {
    let fonts = FontLibrary::new().unwrap();
    let ja = fonts.fallbacks_for('日', 700).unwrap();
    assert!(
        ja.iter().take(3).any(|f| f.family.contains("CJK")),
        "{ja:?}"
    );
    let emoji = fonts.emoji().unwrap();
    assert_eq!(emoji.family, "Noto Color Emoji");
}
