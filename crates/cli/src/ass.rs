//! Advanced SubStation Alpha export in the caption style: the video's resolution, the
//! template's font, colours, outline, shadow or box and position, and per-word karaoke timing,
//! so that libass draws what `captions burn` draws as far as ASS can say it.

use std::fmt::Write as _;

use caption_core::{CapitalizationType, Color, Config, REFERENCE_SHORT_SIDE_PX, Word};

use crate::cues::{Cue, cues};

/// What an ASS file is styled from.
#[derive(Debug, Clone)]
pub struct AssStyle {
    /// The video's display size (PlayResX, PlayResY); a portrait 1080x1920 when not known.
    pub width_px: u32,
    pub height_px: u32,
    pub config: Config,
}

/// `&HAABBGGRR`, where AA is transparency (ASS counts 00 as opaque).
fn ass_color(c: Color) -> String {
    format!("&H{:02X}{:02X}{:02X}{:02X}", 255 - c.a, c.b, c.g, c.r)
}

/// ASS time: `H:MM:SS.cc`.
pub fn ass_clock(t_s: f64) -> String {
    let cs = (t_s.max(0.0) * 100.0).round() as u64;
    format!(
        "{}:{:02}:{:02}.{:02}",
        cs / 360_000,
        cs / 6000 % 60,
        cs / 100 % 60,
        cs % 100
    )
}

/// The text a caption shows for a word: its punctuated or bare form, capitalised as the
/// config says (SENTENCE keeps the transcript's own capitals).
fn shown(word: &Word, config: &Config) -> String {
    let text = if config.word_has_punctuation {
        &word.punctuated_word
    } else {
        &word.word
    };
    let text = text.replace(['{', '}', '\\'], "");
    match config.capitalization_type {
        CapitalizationType::Uppercase => text.to_uppercase(),
        CapitalizationType::Lowercase => text.to_lowercase(),
        CapitalizationType::Capitalize => {
            let mut chars = text.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_uppercase().chain(chars).collect()
            })
        }
        _ => text,
    }
}

fn style_line(style: &AssStyle) -> String {
    let c = &style.config;
    let scale = style.width_px.min(style.height_px) as f32 / REFERENCE_SHORT_SIDE_PX;
    let first = |set: &caption_core::ColorSet, fallback: Color| set.nth(0).unwrap_or(fallback);
    let white = Color::rgb(255, 255, 255);
    let black = Color::rgb(0, 0, 0);
    // With \k, a word turns from the secondary colour to the primary one when it is spoken.
    let spoken = first(&c.colors.hilight_color, white);
    let unspoken = first(&c.colors.default_color, white);
    let (border_style, outline_color, outline_px) = if c.word_has_background {
        // An opaque box in the outline colour, as wide as the outline.
        let boxed = first(&c.colors.background_color, black);
        (3, boxed, (c.sizes.font_px * 0.12 * scale).max(1.0))
    } else {
        (
            1,
            first(&c.colors.stroke_color, black),
            c.sizes.stroke_px * scale,
        )
    };
    let shadow_color = if c.word_has_custom_shadow_color {
        first(&c.colors.shadow_color, Color::rgba(0, 0, 0, 153))
    } else {
        Color::rgba(0, 0, 0, 153)
    };
    let shadow_px = if c.word_has_shadow {
        (c.sizes.blur_px * scale / 3.0).max(1.0)
    } else {
        0.0
    };
    format!(
        "Style: Default,{font},{size:.0},{primary},{secondary},{outline},{back},{bold},0,0,0,100,100,0,0,{border_style},{outline_px:.1},{shadow_px:.1},5,0,0,0,1",
        font = c.font,
        size = c.sizes.font_px * scale,
        primary = ass_color(spoken),
        secondary = ass_color(unspoken),
        outline = ass_color(outline_color),
        back = ass_color(shadow_color),
        bold = if c.font_weight >= 600 { -1 } else { 0 },
    )
}

fn dialogue(cue: &Cue<'_>, style: &AssStyle) -> String {
    let c = &style.config;
    let x = (c.position.x * style.width_px as f32).round();
    let y = (c.position.y * style.height_px as f32).round();
    let mut text = format!("{{\\an5\\pos({x},{y})}}");
    let mut at = cue.start_s;
    let per_line = cue.lines.iter().map(|l| l.split(' ').count());
    let mut line_ends: Vec<usize> = per_line
        .scan(0, |sum, n| {
            *sum += n;
            Some(*sum)
        })
        .collect();
    line_ends.pop();
    for (k, w) in cue.words.iter().enumerate() {
        if line_ends.contains(&k) {
            text.push_str("\\N");
        } else if k > 0 {
            text.push(' ');
        }
        // \k durations run from the previous word's end, so silences stay unlit.
        let lead = ((w.start - at) * 100.0).round().max(0.0) as u64;
        if lead > 0 {
            let _ = write!(text, "{{\\k{lead}}}");
        }
        let dur = ((w.end - w.start) * 100.0).round().max(1.0) as u64;
        let _ = write!(text, "{{\\k{dur}}}{}", shown(w, c));
        at = w.end;
    }
    format!(
        "Dialogue: 0,{},{},Default,,0,0,0,,{text}",
        ass_clock(cue.start_s),
        ass_clock(cue.end_s)
    )
}

/// The whole ASS file.
pub fn render(words: &[Word], style: &AssStyle) -> String {
    let mut out = format!(
        "[Script Info]\nScriptType: v4.00+\nPlayResX: {}\nPlayResY: {}\nScaledBorderAndShadow: yes\nWrapStyle: 2\n\n",
        style.width_px, style.height_px
    );
    out.push_str(
        "[V4+ Styles]\nFormat: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, \
         OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, \
         Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding\n",
    );
    out.push_str(&style_line(style));
    out.push_str(
        "\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n",
    );
    for cue in cues(words) {
        out.push_str(&dialogue(&cue, style));
        out.push('\n');
    }
    out
}
