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

/// The family fontconfig itself picks for `name` (`fc-match`): an oracle independent of ours.
fn fc_match(name: &str) -> String {
    let out = std::process::Command::new("fc-match")
        .args([name, "-f", "%{family[0]}"])
        .output()
        .expect("fc-match (fontconfig)");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_missing_family_is_matched_by_spelling_then_by_the_look_of_the_family_meant() {
    let fonts = FontLibrary::new().unwrap();
    // Close in spelling to an installed family: that family first.
    let roboto = fonts.closest_families("Robotto").unwrap();
    assert_eq!(
        roboto.first().map(String::as_str),
        Some("Roboto"),
        "{roboto:?}"
    );
    // A misspelled family that is not installed either: what fontconfig puts in its place
    // (a sans for Helvetica, a serif for Times New Roman), not names that merely share letters.
    for (typed, meant) in [
        ("Helvetika", "Helvetica"),
        ("Tims New Roman", "Times New Roman"),
    ] {
        let closest = fonts.closest_families(typed).unwrap();
        assert_eq!(closest.len(), 3, "{closest:?}");
        assert_eq!(closest[0], fc_match(meant), "{typed}: {closest:?}");
        let rule = fonts.missing_family_rule(typed).unwrap().unwrap();
        assert!(
            rule.starts_with(&format!(
                "{typed:?} is not an installed font family (closest: {}",
                closest[0]
            )),
            "{rule}"
        );
    }
    assert_eq!(fonts.missing_family_rule("Inter").unwrap(), None);
    // A name no family can have is a family that is not installed, not a failure of the query.
    let rule = fonts.missing_family_rule("Inter\0Bold").unwrap().unwrap();
    assert!(
        rule.contains("is not an installed font family (closest: Inter"),
        "{rule}"
    );
}
