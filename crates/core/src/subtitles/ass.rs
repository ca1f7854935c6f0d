//! Advanced SubStation Alpha in the caption style: the video's resolution, the template's font,
//! colours, outline, shadow or box, and the caption pages, each an event whose words light up
//! one at a time as the burn lights them, so that libass draws what the burn draws as far as ASS
//! can say it. Effects (pop, bounce, ...) and emoji are not carried.
//!
//! A page is one event: its lines broken with `\N` where the burn breaks them, centred where
//! the burn centres them. Each word carries its karaoke time (`\k`, so the file reads back word
//! for word) and its colours over time: its look from the page's start, then a `\t(t,t,...)`
//! for each change (lit while spoken, then spoken or default again, shown or not). Primary and
//! secondary colours always change together, so `\k` itself colours nothing: words are never
//! filled in as a sweep.

use std::fmt::Write as _;

use super::clock::centisecond_clock;
use super::cues::{Group, cues};
use super::markup::{escape_ass, one_line};
use crate::script::joins_without_space;
use crate::{
    CapitalizationType, Color, ColorSet, Config, DisplayMode, EffectMode, REFERENCE_SHORT_SIDE_PX,
    SpokenMode, Word,
};

/// Captions laid out for one video: pages of lines of words, each word with how it looks over
/// time. caption-layout's `Timeline::caption_layout` gives the burn's own layout;
/// [`export_layout`] writes it as ASS.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaptionLayout {
    /// The video's display size, width and height in pixels.
    pub frame_size_px: (u32, u32),
    /// The ASS `Fontsize` that draws glyphs at the captions' em size. ASS sizes a font by its
    /// whole line height (libass and VSFilter take OS/2 winAscent + winDescent), not its em: a
    /// font whose line is 1.2 em tall takes 1.2 times the em size.
    pub font_size_px: f32,
    /// The advance of a space in the captions' font and size, pixels: where words stand
    /// further apart than that ([`CaptionWord::gap_px`]), the space between them is widened.
    pub space_px: f32,
    /// The pages in time order.
    pub pages: Vec<CaptionPage>,
}

/// A page: what the screen shows at once.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaptionPage {
    /// When the page appears, seconds.
    pub start_s: f64,
    /// When it goes, seconds.
    pub end_s: f64,
    /// Centre of its lines on the frame, pixels from the left and from the top.
    pub center_px: (f32, f32),
    /// Its lines from top to bottom, each its words in reading order.
    pub lines: Vec<Vec<CaptionWord>>,
}

/// A word of a page.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaptionWord {
    /// The text as drawn (form and case chosen).
    pub text: String,
    /// When it starts being spoken, seconds.
    pub start_s: f64,
    /// When it stops, seconds.
    pub end_s: f64,
    /// Its size against the captions' font size: below 1 when shrunk to fit its line, above for
    /// an emphasised word.
    pub scale: f32,
    /// The room between the word before it on its line and this one, pixels (a space, and the
    /// room the burn keeps for boxes and effects); 0 for the first word of a line, or to leave a
    /// plain space.
    pub gap_px: f32,
    /// How it looks: each look holds from its `from_s` until the next one's; the first holds
    /// from the page's start.
    pub looks: Vec<WordLook>,
}

/// How a word looks from one instant on.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WordLook {
    /// From when, seconds.
    pub from_s: f64,
    /// Its text colour; `None` while it is not drawn.
    pub text_color: Option<Color>,
    /// The box behind it (`wordHasBackground`), if one is drawn.
    pub box_color: Option<Color>,
    /// The box behind the space before it: a line's box runs on between its words, boxes of
    /// single words leave the space clear.
    pub space_box_color: Option<Color>,
}

/// `&HAABBGGRR`, where AA is transparency (ASS counts 00 as opaque).
fn ass_color(c: Color) -> String {
    format!("&H{:02X}{:02X}{:02X}{:02X}", 255 - c.a, c.b, c.g, c.r)
}

/// A colour override's value, `&HBBGGRR&`.
fn rgb_tag(c: Color) -> String {
    format!("&H{:02X}{:02X}{:02X}&", c.b, c.g, c.r)
}

/// An alpha override's value, `&HAA&` (00 opaque).
fn alpha_tag(alpha: u8) -> String {
    format!("&H{:02X}&", 255 - alpha)
}

const WHITE: Color = Color::rgb(255, 255, 255);
const BLACK: Color = Color::rgb(0, 0, 0);
const SOFT_SHADOW: Color = Color::rgba(0, 0, 0, 153);

fn first(set: &ColorSet, fallback: Color) -> Color {
    set.nth(0).unwrap_or(fallback)
}

/// What every event shares: the style's outline or box and shadow.
struct Look {
    boxed: bool,
    outline: Color,
    outline_px: f32,
    shadow: Color,
    shadow_px: f32,
}

impl Look {
    fn of(config: &Config, scale: f32) -> Self {
        let c = config;
        let (boxed, outline, outline_px) = if c.word_has_background {
            // An opaque box in the outline colour, as wide as the outline.
            let boxed = first(&c.colors.background_color, BLACK);
            (true, boxed, (c.sizes.font_px * 0.12 * scale).max(1.0))
        } else {
            (
                false,
                first(&c.colors.stroke_color, BLACK),
                c.sizes.stroke_px * scale,
            )
        };
        let shadow = if c.word_has_custom_shadow_color {
            first(&c.colors.shadow_color, SOFT_SHADOW)
        } else {
            SOFT_SHADOW
        };
        let shadow_px = if c.word_has_shadow {
            (c.sizes.blur_px * scale / 3.0).max(1.0)
        } else {
            0.0
        };
        Self {
            boxed,
            outline,
            outline_px,
            shadow,
            shadow_px,
        }
    }

    /// The override tags of a word's look: its text colour and alpha (primary and secondary
    /// alike), its box or its outline, and its shadow; everything transparent when it is not
    /// drawn.
    fn word_tags(&self, look: &WordLook) -> String {
        let Some(text) = look.text_color else {
            return "\\alpha&HFF&".to_owned();
        };
        let (rgb, alpha) = (rgb_tag(text), alpha_tag(text.a));
        let mut out = format!("\\1c{rgb}\\2c{rgb}\\1a{alpha}\\2a{alpha}");
        if self.boxed {
            out.push_str(&self.box_tags(look.box_color));
        } else {
            let _ = write!(
                out,
                "\\3a{}\\4a{}",
                alpha_tag(self.outline.a),
                alpha_tag(self.shadow.a)
            );
        }
        out
    }

    /// The outline colour and alpha that draw a box (ASS's opaque box is drawn in the outline
    /// colour), and its shadow; neither without a box (an ASS box casts the shadow).
    fn box_tags(&self, color: Option<Color>) -> String {
        match color {
            Some(c) => format!(
                "\\3c{}\\3a{}\\4a{}",
                rgb_tag(c),
                alpha_tag(c.a),
                alpha_tag(self.shadow.a)
            ),
            None => "\\3a&HFF&\\4a&HFF&".to_owned(),
        }
    }
}

fn style_line(config: &Config, layout: &CaptionLayout) -> String {
    let c = config;
    let (width_px, height_px) = layout.frame_size_px;
    let scale = width_px.min(height_px) as f32 / REFERENCE_SHORT_SIDE_PX;
    let look = Look::of(config, scale);
    let text = first(&c.colors.default_color, WHITE);
    // Lines wider than the caption's width wrap there, should a player's fonts set them wider
    // than the burn's.
    let max_width = if c.max_width.is_finite() {
        c.max_width.clamp(0.05, 1.0)
    } else {
        0.9
    };
    let margin_px = (width_px as f32 * (1.0 - max_width) / 2.0).round();
    format!(
        "Style: Default,{font},{size:.0},{primary},{secondary},{outline},{back},{bold},0,0,0,100,100,0,0,{border_style},{outline_px:.1},{shadow_px:.1},5,{margin_px},{margin_px},0,1",
        // A comma would end the field early.
        font = c.font.replace(',', " "),
        size = layout.font_size_px,
        primary = ass_color(text),
        secondary = ass_color(text),
        outline = ass_color(look.outline),
        back = ass_color(look.shadow),
        bold = if c.font_weight >= 600 { -1 } else { 0 },
        border_style = if look.boxed { 3 } else { 1 },
        outline_px = look.outline_px,
        shadow_px = look.shadow_px,
    )
}

/// Centiseconds, the unit of ASS times and `\k`.
fn centiseconds(t_s: f64) -> i64 {
    (t_s.max(0.0) * 100.0).round() as i64
}

/// The tags of a word's looks in an event that starts at `start_cs`: the look the word has at
/// the start, then a `\t` at each change. (A `\t` needs an end after 0: libass reads `\t(0,0,...)`
/// as lasting the whole event.)
fn timed_tags(looks: &[WordLook], start_cs: i64, tags: impl Fn(&WordLook) -> String) -> String {
    let start_ms = start_cs * 10;
    let at_ms = |look: &WordLook| (look.from_s * 1000.0).round() as i64 - start_ms;
    let initial = looks.iter().rev().find(|l| at_ms(l) <= 0).or(looks.first());
    let mut out = initial.map(&tags).unwrap_or_default();
    let mut last = initial.map(&tags);
    for look in looks.iter().filter(|l| at_ms(l) > 0) {
        let now = tags(look);
        if last.as_ref() != Some(&now) {
            let t = at_ms(look);
            let _ = write!(out, "\\t({t},{t},{now})");
            last = Some(now);
        }
    }
    out
}

fn dialogue(page: &CaptionPage, config: &Config, look: &Look, space_px: f32) -> String {
    let (x, y) = (page.center_px.0.round(), page.center_px.1.round());
    let mut text = format!("{{\\an5\\pos({x},{y})");
    // Weights other than regular and bold (900 for Black) are asked for by number.
    if !matches!(config.font_weight, 400 | 700) {
        let _ = write!(text, "\\b{}", config.font_weight);
    }
    text.push('}');
    let start_cs = centiseconds(page.start_s);
    // \k durations are differences of times rounded once, so a word's karaoke start is never
    // more than half a centisecond from its own, however many words come before it; silences
    // get a \k of their own and light nothing.
    let mut at_cs = start_cs;
    let mut scale = 1.0f32;
    let mut spaced = false;
    for (l, line) in page.lines.iter().enumerate() {
        if l > 0 {
            text.push_str("\\N");
        }
        let mut previous: Option<&str> = None;
        for word in line {
            let shown = one_line(&word.text);
            if let Some(previous) = previous
                && !joins_without_space(previous, &shown)
            {
                let mut tags = String::new();
                if look.boxed {
                    tags = timed_tags(&word.looks, start_cs, |l| look.box_tags(l.space_box_color));
                }
                // Letter spacing after the space widens it to the burn's room between the
                // words (in the previous word's scale, which the space is drawn at).
                let extra_px = (word.gap_px - space_px) / scale;
                if word.gap_px > 0.0 && extra_px.abs() >= 0.5 {
                    let _ = write!(tags, "\\fsp{:.1}", extra_px);
                    spaced = true;
                }
                if !tags.is_empty() {
                    let _ = write!(text, "{{{tags}}}");
                }
                text.push(' ');
            }
            let lead_cs = centiseconds(word.start_s) - at_cs;
            if lead_cs > 0 {
                let _ = write!(text, "{{\\k{lead_cs}}}");
                at_cs += lead_cs;
            }
            let duration_cs = (centiseconds(word.end_s) - at_cs).max(1);
            let _ = write!(text, "{{\\k{duration_cs}");
            if spaced {
                text.push_str("\\fsp0");
                spaced = false;
            }
            let word_scale = if word.scale.is_finite() && word.scale > 0.0 {
                word.scale
            } else {
                1.0
            };
            if (word_scale - scale).abs() > 1e-3 {
                let percent = (word_scale * 100.0).round();
                let _ = write!(text, "\\fscx{percent}\\fscy{percent}");
                scale = word_scale;
            }
            text.push_str(&timed_tags(&word.looks, start_cs, |l| look.word_tags(l)));
            let _ = write!(text, "}}{}", escape_ass(&shown));
            at_cs += duration_cs;
            previous = Some(&word.text);
        }
    }
    format!(
        "Dialogue: 0,{},{},Default,,0,0,0,,{text}",
        centisecond_clock(page.start_s),
        centisecond_clock(page.end_s.max(page.start_s))
    )
}

/// The ASS file of captions laid out in `layout`, styled by `config`.
///
/// ```
/// use caption_core::{CaptionLayout, CaptionPage, CaptionWord, Catalog, Color, WordLook, export_layout};
///
/// let config = Catalog::builtin()?.get("karaoke").expect("a built-in template").config.clone();
/// let white = Some(Color::rgb(255, 255, 255));
/// let word = |text: &str, start_s: f64, end_s: f64| CaptionWord {
///     text: text.to_owned(),
///     start_s,
///     end_s,
///     scale: 1.0,
///     gap_px: 0.0,
///     looks: vec![
///         WordLook { from_s: 0.0, text_color: white, ..WordLook::default() },
///         WordLook { from_s: start_s, text_color: Some(Color::rgb(255, 230, 0)), ..WordLook::default() },
///         WordLook { from_s: end_s, text_color: white, ..WordLook::default() },
///     ],
/// };
/// let layout = CaptionLayout {
///     frame_size_px: (1080, 1920),
///     font_size_px: 86.0,
///     space_px: 20.0,
///     pages: vec![CaptionPage {
///         start_s: 0.5,
///         end_s: 1.5,
///         center_px: (540.0, 1440.0),
///         lines: vec![vec![word("Fish", 0.5, 0.9)], vec![word("chips.", 1.0, 1.4)]],
///     }],
/// };
/// let ass = export_layout(&layout, &config);
/// let event = ass.lines().find(|l| l.starts_with("Dialogue:")).expect("an event");
/// assert!(event.starts_with("Dialogue: 0,0:00:00.50,0:00:01.50,Default,,0,0,0,,{\\an5\\pos(540,1440)"));
/// // "chips." turns yellow 0.5 s into the event, and back to white 0.4 s later.
/// assert!(event.contains("\\N{\\k10}{\\k40\\1c&HFFFFFF&"), "{event}");
/// assert!(event.contains("\\t(500,500,\\1c&H00E6FF&\\2c&H00E6FF&"), "{event}");
/// assert!(event.contains("\\t(900,900,\\1c&HFFFFFF&"), "{event}");
/// # Ok::<(), caption_core::CatalogError>(())
/// ```
pub fn export_layout(layout: &CaptionLayout, config: &Config) -> String {
    let (width_px, height_px) = layout.frame_size_px;
    // WrapStyle 0: a line wider than the style's margins leave is wrapped there, evenly; the
    // burn's lines fit, so only a player setting them wider than the burn does wraps them.
    let mut out = format!(
        "[Script Info]\nScriptType: v4.00+\nPlayResX: {width_px}\nPlayResY: {height_px}\nScaledBorderAndShadow: yes\nWrapStyle: 0\n\n",
    );
    out.push_str(
        "[V4+ Styles]\nFormat: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, \
         OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, \
         Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding\n",
    );
    out.push_str(&style_line(config, layout));
    out.push_str(
        "\n\n[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n",
    );
    let scale = width_px.min(height_px) as f32 / REFERENCE_SHORT_SIDE_PX;
    let look = Look::of(config, scale);
    for page in &layout.pages {
        out.push_str(&dialogue(page, config, &look, layout.space_px));
        out.push('\n');
    }
    out
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

/// How the `n`-th word of the video, spoken over `start_s..end_s`, looks by the config's
/// colour rules: lit while spoken (its text, or its box when words have boxes), then in the
/// spoken colour if the config has one; not drawn before it is spoken under PROGRESSIVE.
fn looks_by_config(config: &Config, n: usize, start_s: f64, end_s: f64) -> Vec<WordLook> {
    let colors = &config.colors;
    let default = colors.default_color.nth(n).unwrap_or(WHITE);
    let spoken = match config.modes.spoken_mode {
        SpokenMode::None => default,
        _ => colors.spoken_color.nth(n).unwrap_or(default),
    };
    let boxed = config.word_has_background;
    let background = if boxed {
        colors.background_color.nth(n)
    } else {
        None
    };
    let space = background.filter(|_| config.modes.effect_mode != EffectMode::Word);
    let hilight = colors.hilight_color.nth(n);
    let lit = if boxed {
        WordLook {
            from_s: start_s,
            text_color: Some(default),
            box_color: hilight.or(background),
            space_box_color: space,
        }
    } else {
        WordLook {
            from_s: start_s,
            text_color: Some(hilight.unwrap_or(default)),
            box_color: None,
            space_box_color: None,
        }
    };
    let before = if config.modes.display_mode == DisplayMode::Progressive {
        WordLook::default()
    } else {
        WordLook {
            from_s: 0.0,
            text_color: Some(default),
            box_color: background,
            space_box_color: space,
        }
    };
    let after = WordLook {
        from_s: end_s,
        text_color: Some(spoken),
        box_color: background,
        space_box_color: space,
    };
    vec![before, lit, after]
}

/// Subtitle cues as pages, laid out without fonts: each cue one line, which the player wraps
/// within the caption's width (WrapStyle 0), centred on the configured position.
fn layout_without_fonts(
    words: &[Word],
    config: &Config,
    width_px: u32,
    height_px: u32,
) -> CaptionLayout {
    let scale = width_px.min(height_px) as f32 / REFERENCE_SHORT_SIDE_PX;
    let position = |v: f32, fallback: f32| if v.is_finite() { v } else { fallback };
    let center_px = (
        position(config.position.x, 0.5) * width_px as f32,
        position(config.position.y, 0.75) * height_px as f32,
    );
    let mut n = 0;
    let pages = cues(words)
        .iter()
        .map(|cue: &Group<'_>| {
            let line = cue
                .words
                .iter()
                .map(|w| {
                    let word = CaptionWord {
                        text: shown(w, config),
                        start_s: w.start,
                        end_s: w.end,
                        scale: 1.0,
                        gap_px: 0.0,
                        looks: looks_by_config(config, n, w.start, w.end),
                    };
                    n += 1;
                    word
                })
                .collect();
            CaptionPage {
                start_s: cue.start_s,
                end_s: cue.end_s,
                center_px,
                lines: vec![line],
            }
        })
        .collect();
    CaptionLayout {
        frame_size_px: (width_px, height_px),
        font_size_px: config.sizes.font_px * scale,
        space_px: 0.0,
        pages,
    }
}

/// The whole ASS file of `words` (in time order), styled by `config` on a `width_px` x
/// `height_px` frame, without the burn's fonts: cues by subtitle practice, which the player
/// wraps within the caption's width.
pub(crate) fn write_ass(words: &[Word], config: &Config, width_px: u32, height_px: u32) -> String {
    export_layout(
        &layout_without_fonts(words, config, width_px, height_px),
        config,
    )
}
