//! Advanced SubStation Alpha in the caption style: the video's resolution, the template's font,
//! colours, outline, shadow or box and position, and per-word karaoke timing, so that libass
//! draws what the burn draws as far as ASS can say it.

use std::fmt::Write as _;

use super::clock::centisecond_clock;
use super::cues::{Group, cues};
use super::markup::{escape_ass, one_line};
use crate::script::joins_without_space;
use crate::{CapitalizationType, Color, ColorSet, Config, REFERENCE_SHORT_SIDE_PX, Word};

/// `&HAABBGGRR`, where AA is transparency (ASS counts 00 as opaque).
fn ass_color(c: Color) -> String {
    format!("&H{:02X}{:02X}{:02X}{:02X}", 255 - c.a, c.b, c.g, c.r)
}

/// The text a caption shows for a word: its punctuated or bare form, capitalised as the
/// config says (SENTENCE keeps the transcript's own capitals), on one line.
fn shown(word: &Word, config: &Config) -> String {
    let text = if config.word_has_punctuation {
        &word.punctuated_word
    } else {
        &word.word
    };
    let text = one_line(text);
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

fn style_line(config: &Config, width_px: u32, height_px: u32) -> String {
    let c = config;
    let scale = width_px.min(height_px) as f32 / REFERENCE_SHORT_SIDE_PX;
    let first = |set: &ColorSet, fallback: Color| set.nth(0).unwrap_or(fallback);
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
        // A comma would end the field early.
        font = c.font.replace(',', " "),
        size = c.sizes.font_px * scale,
        primary = ass_color(spoken),
        secondary = ass_color(unspoken),
        outline = ass_color(outline_color),
        back = ass_color(shadow_color),
        bold = if c.font_weight >= 600 { -1 } else { 0 },
    )
}

/// Centiseconds, the unit of ASS times and `\k`.
fn centiseconds(t_s: f64) -> i64 {
    (t_s.max(0.0) * 100.0).round() as i64
}

fn dialogue(cue: &Group<'_>, config: &Config, width_px: u32, height_px: u32) -> String {
    let x = (config.position.x * width_px as f32).round();
    let y = (config.position.y * height_px as f32).round();
    let mut text = format!("{{\\an5\\pos({x},{y})}}");
    // \k durations are differences of times rounded once, so a word's karaoke start is never
    // more than half a centisecond from its own, however many words come before it; silences
    // get a \k of their own and stay unlit.
    let mut at_cs = centiseconds(cue.start_s);
    let mut previous: Option<String> = None;
    for (k, w) in cue.words.iter().enumerate() {
        let word = shown(w, config);
        if cue.second_line == Some(k) {
            text.push_str("\\N");
        } else if let Some(previous) = &previous
            && !joins_without_space(previous, &word)
        {
            text.push(' ');
        }
        let lead_cs = centiseconds(w.start) - at_cs;
        if lead_cs > 0 {
            let _ = write!(text, "{{\\k{lead_cs}}}");
            at_cs += lead_cs;
        }
        let duration_cs = (centiseconds(w.end) - at_cs).max(1);
        let _ = write!(text, "{{\\k{duration_cs}}}{}", escape_ass(&word));
        at_cs += duration_cs;
        previous = Some(word);
    }
    format!(
        "Dialogue: 0,{},{},Default,,0,0,0,,{text}",
        centisecond_clock(cue.start_s),
        centisecond_clock(cue.end_s)
    )
}

/// The whole ASS file of `words` (in time order), styled by `config` on a `width_px` x
/// `height_px` frame.
pub(crate) fn write_ass(words: &[Word], config: &Config, width_px: u32, height_px: u32) -> String {
    let mut out = format!(
        "[Script Info]\nScriptType: v4.00+\nPlayResX: {width_px}\nPlayResY: {height_px}\nScaledBorderAndShadow: yes\nWrapStyle: 2\n\n",
    );
    out.push_str(
        "[V4+ Styles]\nFormat: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, \
         OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, \
         Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding\n",
    );
    out.push_str(&style_line(config, width_px, height_px));
    out.push_str(
        "\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n",
    );
    for cue in cues(words) {
        out.push_str(&dialogue(&cue, config, width_px, height_px));
        out.push('\n');
    }
    out
}
