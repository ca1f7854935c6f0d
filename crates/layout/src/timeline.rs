//! Pages, lines and word geometry: built once per video, queried per frame.

use std::ops::Range;

use caption_core::Config;

/// Length of the POP, BOUNCE, ZOOM, FADE, SLIDE and SHAKE animations.
pub const EFFECT_S: f64 = 0.25;

/// Measures text. Implemented by [`crate::Shaper`] (real fonts) and [`MonoMeasure`].
pub trait Measure {
    /// Advance width of `text` set at `font_px`.
    fn width_px(&self, text: &str, font_px: f32) -> f32;
    /// Ascent and descent (both positive) of the primary face at `font_px`.
    fn ascent_descent_px(&self, font_px: f32) -> (f32, f32);
}

/// A measurer where every character advances `advance_em` em; for tests and benches.
#[derive(Debug, Clone, Copy)]
pub struct MonoMeasure {
    /// Advance of every character, em (0.6 by default).
    pub advance_em: f32,
}

impl Default for MonoMeasure {
    fn default() -> Self {
        Self { advance_em: 0.6 }
    }
}

impl Measure for MonoMeasure {
    fn width_px(&self, text: &str, font_px: f32) -> f32 {
        text.chars().count() as f32 * self.advance_em * font_px
    }

    fn ascent_descent_px(&self, font_px: f32) -> (f32, f32) {
        (0.8 * font_px, 0.2 * font_px)
    }
}

/// Output frame size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameSize {
    /// Width, pixels.
    pub width_px: u32,
    /// Height, pixels.
    pub height_px: u32,
}

impl FrameSize {
    /// A frame of `width_px` x `height_px` pixels.
    pub fn new(width_px: u32, height_px: u32) -> Self {
        Self {
            width_px,
            height_px,
        }
    }

    /// Factor from reference pixels (1080 on the shorter side) to this frame's pixels.
    pub fn scale(self) -> f32 {
        self.width_px.min(self.height_px) as f32 / caption_core::REFERENCE_SHORT_SIDE_PX
    }
}

/// A rectangle in frame pixels.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RectPx {
    /// Left edge, pixels from the frame's left.
    pub x: f32,
    /// Top edge, pixels from the frame's top.
    pub y: f32,
    /// Width, pixels.
    pub w: f32,
    /// Height, pixels.
    pub h: f32,
}

impl RectPx {
    /// Right edge, `x + w`.
    pub fn right(&self) -> f32 {
        self.x + self.w
    }

    /// Bottom edge, `y + h`.
    pub fn bottom(&self) -> f32 {
        self.y + self.h
    }

    /// The centre point `(x, y)`.
    pub fn center(&self) -> (f32, f32) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }

    /// The smallest rectangle holding both.
    pub fn union(&self, other: &Self) -> Self {
        let x = self.x.min(other.x);
        let y = self.y.min(other.y);
        Self {
            x,
            y,
            w: self.right().max(other.right()) - x,
            h: self.bottom().max(other.bottom()) - y,
        }
    }

    /// Grown by `dx` on the left and right and `dy` on the top and bottom (pixels).
    pub fn inflate(&self, dx: f32, dy: f32) -> Self {
        Self {
            x: self.x - dx,
            y: self.y - dy,
            w: self.w + 2.0 * dx,
            h: self.h + 2.0 * dy,
        }
    }
}

/// A word placed on the frame.
#[derive(Debug, Clone, PartialEq)]
pub struct LaidWord {
    /// Position in the video's word list after sorting and splitting (the hilight cycle index).
    pub index: usize,
    /// The text drawn (form and case chosen).
    pub text: String,
    /// When it starts being spoken, seconds.
    pub start_s: f64,
    /// When it stops, seconds.
    pub end_s: f64,
    /// Index of its page in [`Timeline::pages`].
    pub page: usize,
    /// Index of its line in [`Timeline::lines`].
    pub line: usize,
    /// The text's advance box: line top to line bottom, `w` already scaled.
    pub rect: RectPx,
    /// The baseline, pixels from the frame's top.
    pub baseline_y_px: f32,
    /// Below 1 when the word alone is wider than a line may be and was shrunk to fit.
    pub scale: f32,
    /// The emoji that goes with the word, if any.
    pub emoji: Option<String>,
    /// Where the word's emoji goes under `displayEmojis: WORD`.
    pub emoji_rect: Option<RectPx>,
    /// The word's speaker, numbered by first appearance in the video (the index into the
    /// config's `speakerColors`, cycling).
    pub speaker: Option<usize>,
    /// For a word drawn emphasised, its turn among the video's emphasised words (the index
    /// into `hilightColor` it takes under `emphasis: COLOR`).
    pub emphasis: Option<usize>,
}

/// A line of a page.
#[derive(Debug, Clone, PartialEq)]
pub struct LaidLine {
    /// Its index in [`Timeline::lines`].
    pub index: usize,
    /// Index of its page in [`Timeline::pages`].
    pub page: usize,
    /// Words in reading (logical) order.
    pub words: Range<usize>,
    /// Words from left to right.
    pub visual_order: Vec<usize>,
    /// Union of the words' advance boxes.
    pub rect: RectPx,
    /// The line runs right to left.
    pub rtl: bool,
    /// Start of its first word, seconds.
    pub start_s: f64,
    /// End of its last word, seconds.
    pub end_s: f64,
    /// Where the line's emoji goes under `displayEmojis: LINE`.
    pub emoji_rect: Option<RectPx>,
}

/// A page: what the screen shows at once.
#[derive(Debug, Clone, PartialEq)]
pub struct LaidPage {
    /// Its index in [`Timeline::pages`].
    pub index: usize,
    /// Its words, as indices into [`Timeline::words`].
    pub words: Range<usize>,
    /// Its lines, as indices into [`Timeline::lines`].
    pub lines: Range<usize>,
    /// The caption block (all lines and emoji bands, box padding included).
    pub rect: RectPx,
    /// The page is on screen during `[show_start_s, show_end_s)`.
    pub show_start_s: f64,
    /// See `show_start_s`.
    pub show_end_s: f64,
    /// Where the page's emoji goes under `displayEmojis: PAGE`.
    pub emoji_rect: Option<RectPx>,
}

/// The laid-out captions of a whole video.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// The frame the captions are laid out on.
    pub frame: FrameSize,
    /// The style.
    pub config: Config,
    /// Font size on this frame, pixels per em (the config's size scaled to the frame).
    pub font_px: f32,
    /// Outline width, pixels.
    pub stroke_px: f32,
    /// Shadow blur radius, pixels.
    pub blur_px: f32,
    /// Emoji size, pixels (0 when emoji are not shown).
    pub emoji_px: f32,
    /// Corner radius of the background boxes, pixels.
    pub radius_px: f32,
    /// Box padding left and right of the text, pixels.
    pub pad_x_px: f32,
    /// Box padding above and below the text, pixels.
    pub pad_y_px: f32,
    /// Ascent of the primary face at `font_px`, pixels.
    pub ascent_px: f32,
    /// Descent of the primary face at `font_px`, pixels (positive).
    pub descent_px: f32,
    /// Widest a line's text may be (max width minus box padding, outline and emoji room).
    pub line_limit_px: f32,
    /// Advance of a space of the primary face at `font_px`, pixels.
    pub space_px: f32,
    /// Every word in time order.
    pub words: Vec<LaidWord>,
    /// Every line, page by page.
    pub lines: Vec<LaidLine>,
    /// Every page in time order.
    pub pages: Vec<LaidPage>,
}

impl Timeline {
    /// The page on screen at `t_s`.
    pub fn page_at(&self, t_s: f64) -> Option<usize> {
        let after = self.pages.partition_point(|p| p.show_start_s <= t_s);
        let candidate = after.checked_sub(1)?;
        let page = &self.pages[candidate];
        (t_s < page.show_end_s).then_some(candidate)
    }

    /// The word being spoken at `t_s`: the one whose `[start, end)` holds `t_s` (the latest
    /// starting one if words overlap).
    pub fn active_word_at(&self, t_s: f64) -> Option<usize> {
        let after = self.words.partition_point(|w| w.start_s <= t_s);
        self.words[..after]
            .iter()
            .rev()
            .take(64)
            .find(|w| t_s < w.end_s)
            .map(|w| w.index)
    }

    /// End of the last page, seconds.
    pub fn duration_s(&self) -> f64 {
        self.pages.last().map_or(0.0, |p| p.show_end_s)
    }
}
