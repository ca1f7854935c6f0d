//! Pages, lines and word geometry: built once per video, queried per frame.

use std::ops::Range;

use caption_core::{Config, DisplayEmojis, DisplayMode, EffectMode, Word};
use unicode_bidi::{BidiInfo, Level};

use crate::breaks::{self, BreakWord, PageLimits, Widths};
use crate::emoji::{EmojiLexicon, emoji_for_word_in};
use crate::state::EffectReach;
use crate::text::{capitalize, ends_clause, ends_sentence, joins_without_space, split_unspaced};

/// Length of the POP, BOUNCE, ZOOM, FADE, SLIDE and SHAKE animations.
pub const EFFECT_S: f64 = 0.25;
/// How long a page stays after its last word when the next page does not follow at once.
const HOLD_S: f64 = 0.5;
/// Gap between lines, as a fraction of the font size.
const LINE_GAP_EM: f32 = 0.08;
/// Padding of word and line boxes, as fractions of the font size.
const BOX_PAD_X_EM: f32 = 0.18;
const BOX_PAD_Y_EM: f32 = 0.06;
/// Gap between an emoji and the text it belongs to.
const EMOJI_GAP_EM: f32 = 0.1;
/// Keeps the caption block this far (fraction of the shorter side) from the frame edges.
const FRAME_MARGIN: f32 = 0.02;

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
    pub width_px: u32,
    pub height_px: u32,
}

impl FrameSize {
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
    pub x: f32,
    pub y: f32,
    pub w: f32,
    pub h: f32,
}

impl RectPx {
    pub fn right(&self) -> f32 {
        self.x + self.w
    }

    pub fn bottom(&self) -> f32 {
        self.y + self.h
    }

    pub fn center(&self) -> (f32, f32) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }

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
    pub start_s: f64,
    pub end_s: f64,
    pub page: usize,
    pub line: usize,
    /// The text's advance box: line top to line bottom, `w` already scaled.
    pub rect: RectPx,
    pub baseline_y_px: f32,
    /// Below 1 when the word alone is wider than a line may be and was shrunk to fit.
    pub scale: f32,
    pub emoji: Option<String>,
    /// Where the word's emoji goes under `displayEmojis: WORD`.
    pub emoji_rect: Option<RectPx>,
}

/// A line of a page.
#[derive(Debug, Clone, PartialEq)]
pub struct LaidLine {
    pub index: usize,
    pub page: usize,
    /// Words in reading (logical) order.
    pub words: Range<usize>,
    /// Words from left to right.
    pub visual_order: Vec<usize>,
    /// Union of the words' advance boxes.
    pub rect: RectPx,
    pub rtl: bool,
    pub start_s: f64,
    pub end_s: f64,
    /// Where the line's emoji goes under `displayEmojis: LINE`.
    pub emoji_rect: Option<RectPx>,
}

/// A page: what the screen shows at once.
#[derive(Debug, Clone, PartialEq)]
pub struct LaidPage {
    pub index: usize,
    pub words: Range<usize>,
    pub lines: Range<usize>,
    /// The caption block (all lines and emoji bands, box padding included).
    pub rect: RectPx,
    /// The page is on screen during `[show_start_s, show_end_s)`.
    pub show_start_s: f64,
    pub show_end_s: f64,
    /// Where the page's emoji goes under `displayEmojis: PAGE`.
    pub emoji_rect: Option<RectPx>,
}

/// The laid-out captions of a whole video.
#[derive(Debug, Clone)]
pub struct Timeline {
    pub frame: FrameSize,
    pub config: Config,
    pub font_px: f32,
    pub stroke_px: f32,
    pub blur_px: f32,
    pub emoji_px: f32,
    pub radius_px: f32,
    pub pad_x_px: f32,
    pub pad_y_px: f32,
    pub ascent_px: f32,
    pub descent_px: f32,
    /// Widest a line's text may be (max width minus box padding, outline and emoji room).
    pub line_limit_px: f32,
    pub words: Vec<LaidWord>,
    pub lines: Vec<LaidLine>,
    pub pages: Vec<LaidPage>,
}

/// A word after sorting, form/case selection and splitting, before placement.
#[derive(Debug, Clone)]
struct Prepared {
    text: String,
    start_s: f64,
    end_s: f64,
    ends_clause: bool,
    emoji: Option<String>,
}

fn finite_or(v: f32, default: f32) -> f32 {
    if v.is_finite() { v } else { default }
}

fn prepare(words: &[Word], config: &Config) -> Vec<Prepared> {
    let mut sorted: Vec<&Word> = words
        .iter()
        .filter(|w| w.start.is_finite() && w.end.is_finite())
        .collect();
    sorted.sort_by(|a, b| a.start.total_cmp(&b.start));
    let lang = EmojiLexicon::get().guess_language(sorted.iter().map(|w| w.word.as_str()));
    let mut out = Vec::with_capacity(sorted.len());
    let mut sentence_start = true;
    for w in sorted {
        let start_s = w.start.max(0.0);
        let end_s = w.end.max(start_s);
        let shown = if config.word_has_punctuation && !w.punctuated_word.trim().is_empty() {
            w.punctuated_word.trim()
        } else if !w.word.trim().is_empty() {
            w.word.trim()
        } else {
            w.punctuated_word.trim()
        };
        let punctuated = if w.punctuated_word.trim().is_empty() {
            &w.word
        } else {
            &w.punctuated_word
        };
        let clause = ends_clause(punctuated);
        let sentence = ends_sentence(punctuated);
        let emoji = emoji_for_word_in(lang, w.emoji.as_deref(), &w.word);
        if shown.is_empty() {
            sentence_start |= sentence;
            continue;
        }
        let pieces = split_unspaced(shown);
        let total_chars: usize = pieces.iter().map(|p| p.chars().count()).sum();
        let mut chars_before = 0usize;
        let n = pieces.len();
        for (k, piece) in pieces.into_iter().enumerate() {
            let chars = piece.chars().count();
            let frac = |c: usize| c as f64 / total_chars.max(1) as f64;
            let p_start = start_s + (end_s - start_s) * frac(chars_before);
            chars_before += chars;
            let p_end = start_s + (end_s - start_s) * frac(chars_before);
            let last = k + 1 == n;
            out.push(Prepared {
                text: capitalize(piece, config.capitalization_type, sentence_start && k == 0),
                start_s: p_start,
                end_s: if last { end_s } else { p_end },
                ends_clause: last && clause,
                emoji: if last { emoji.clone() } else { None },
            });
        }
        sentence_start = sentence;
    }
    out
}

/// Left-to-right order of a line's words by the Unicode bidi algorithm (rule L2 applied to
/// whole words: each word takes the embedding level of its first strong character).
fn visual_order(texts: &[&str]) -> (Vec<usize>, bool) {
    let joined = texts.join(" ");
    let info = BidiInfo::new(&joined, None);
    let rtl = info.paragraphs.first().is_some_and(|p| p.level.is_rtl());
    if !info.has_rtl() {
        return ((0..texts.len()).collect(), false);
    }
    let mut levels: Vec<Level> = Vec::with_capacity(texts.len());
    let mut offset = 0;
    for t in texts {
        let level = t
            .char_indices()
            .find(|(_, c)| c.is_alphanumeric())
            .and_then(|(b, _)| info.levels.get(offset + b).copied())
            .or_else(|| info.levels.get(offset).copied())
            .unwrap_or_else(Level::ltr);
        levels.push(level);
        offset += t.len() + 1;
    }
    (BidiInfo::reorder_visual(&levels), rtl)
}

impl Timeline {
    /// Lays out `words` in `config` on a `frame`-sized video.
    pub fn build(words: &[Word], config: &Config, frame: FrameSize, measure: &dyn Measure) -> Self {
        let scale = frame.scale();
        let s = &config.sizes;
        let font_px = (finite_or(s.font_px, 64.0) * scale).clamp(1.0, 4096.0);
        let stroke_px = (finite_or(s.stroke_px, 0.0) * scale).clamp(0.0, font_px);
        let blur_px = (finite_or(s.blur_px, 0.0) * scale).clamp(0.0, 4.0 * font_px);
        let emoji_px = match config.modes.display_emojis {
            DisplayEmojis::None => 0.0,
            _ => (finite_or(s.emoji_px, 0.0) * scale).clamp(0.0, 4096.0),
        };
        let radius_px = (finite_or(s.background_radius_px, 0.0) * scale).max(0.0);
        let (ascent_px, descent_px) = measure.ascent_descent_px(font_px);
        let line_h = (ascent_px + descent_px).max(1.0);
        let boxes = config.word_has_background;
        let pad_x_px = if boxes { BOX_PAD_X_EM * font_px } else { 0.0 };
        let pad_y_px = if boxes { BOX_PAD_Y_EM * font_px } else { 0.0 };
        let per_word_boxes = boxes && config.modes.effect_mode == EffectMode::Word;
        let emoji_gap = EMOJI_GAP_EM * font_px;
        let line_emoji_room =
            if config.modes.display_emojis == DisplayEmojis::Line && emoji_px > 0.0 {
                emoji_px + emoji_gap
            } else {
                0.0
            };
        let max_width = finite_or(config.max_width, 0.9).clamp(0.05, 1.0);
        let line_limit_px = (frame.width_px as f32 * max_width
            - 2.0 * pad_x_px
            - 2.0 * stroke_px
            - line_emoji_room)
            .max(1.0);

        let mut timeline = Self {
            frame,
            config: config.clone(),
            font_px,
            stroke_px,
            blur_px,
            emoji_px,
            radius_px,
            pad_x_px,
            pad_y_px,
            ascent_px,
            descent_px,
            line_limit_px,
            words: Vec::new(),
            lines: Vec::new(),
            pages: Vec::new(),
        };
        if frame.width_px == 0 || frame.height_px == 0 {
            return timeline;
        }

        let prepared = prepare(words, config);
        let space_px = measure.width_px(" ", font_px).max(0.0);
        let mut widths = Vec::with_capacity(prepared.len());
        let mut scales = Vec::with_capacity(prepared.len());
        for p in &prepared {
            let w = measure.width_px(&p.text, font_px).max(0.0);
            let (w, k) = if w > line_limit_px {
                (line_limit_px, line_limit_px / w)
            } else {
                (w, 1.0)
            };
            widths.push(w);
            scales.push(k);
        }
        let box_gap = if per_word_boxes { 2.0 * pad_x_px } else { 0.0 };
        // A word that pops, bounces or shakes on its own must not run into its neighbours at
        // its peak: the room it can take is kept free beside it (and between lines below).
        let reach = EffectReach::of(config.modes.effect_type);
        let word_reach = |i: usize| {
            if config.modes.effect_mode != EffectMode::Word {
                return 0.0;
            }
            let half_w = widths[i] / 2.0 + pad_x_px + stroke_px;
            reach.grow * half_w + reach.dx_em * font_px
        };
        let reaches: Vec<f32> = (0..prepared.len()).map(word_reach).collect();
        // The room between word i - 1 and word i without the effect's reach.
        let spaces: Vec<f32> = (0..prepared.len())
            .map(|i| {
                if i == 0 {
                    0.0
                } else if joins_without_space(&prepared[i - 1].text, &prepared[i].text) {
                    box_gap
                } else {
                    space_px + box_gap
                }
            })
            .collect();
        let gaps: Vec<f32> = (0..prepared.len())
            .map(|i| {
                if i == 0 {
                    0.0
                } else {
                    spaces[i] + reaches[i - 1] + reaches[i]
                }
            })
            .collect();
        // The room between two words side by side on screen (in a line that mixes directions
        // these need not follow each other in reading order): their space and both reaches.
        let visual_gap =
            |left: usize, right: usize| spaces[left.max(right)] + reaches[left] + reaches[right];

        let (lines_per_page, words_per_line) = match config.modes.display_mode {
            DisplayMode::Word => (1, 1),
            _ => (
                config.lines_count.clamp(1, 64) as usize,
                config.words_per_line_count.clamp(1, 64) as usize,
            ),
        };
        let capacity = lines_per_page * words_per_line;

        // Pages of lines: hard breaks by displayWords, then as few pages and lines as fit,
        // filled evenly.
        let break_words: Vec<BreakWord<'_>> = prepared
            .iter()
            .map(|p| BreakWord {
                text: &p.text,
                start_s: p.start_s,
                end_s: p.end_s,
                ends_clause: p.ends_clause,
            })
            .collect();
        let measured = Widths {
            words: &widths,
            gaps: &gaps,
        };
        let limits = PageLimits {
            lines: lines_per_page,
            words_per_line,
            line_px: line_limit_px,
        };
        let page_lines: Vec<Vec<Range<usize>>> =
            breaks::hard_runs(&break_words, config.modes.display_words, capacity)
                .into_iter()
                .flat_map(|run| breaks::pages(&break_words, measured, run, limits))
                .collect();

        let frame_w = frame.width_px as f32;
        let frame_h = frame.height_px as f32;
        let margin = FRAME_MARGIN * frame_w.min(frame_h);
        let line_reach = match config.modes.effect_mode {
            EffectMode::Page => 0.0,
            EffectMode::Word | EffectMode::Line => {
                reach.grow * (line_h + 2.0 * pad_y_px + 2.0 * stroke_px) + reach.dy_em * font_px
            }
        };
        let line_gap = LINE_GAP_EM * font_px + 2.0 * pad_y_px + line_reach;
        let emoji_band = emoji_px + emoji_gap;
        for (page_index, lines) in page_lines.iter().enumerate() {
            let has_emoji =
                |r: &Range<usize>| prepared[r.clone()].iter().any(|p| p.emoji.is_some());
            let page_range =
                lines.first().map_or(0, |l| l.start)..lines.last().map_or(0, |l| l.end);
            let page_band = if config.modes.display_emojis == DisplayEmojis::Page
                && emoji_px > 0.0
                && has_emoji(&page_range)
            {
                emoji_band
            } else {
                0.0
            };
            // Heights first, to place the block.
            let mut line_tops = Vec::with_capacity(lines.len());
            let mut y = page_band + pad_y_px;
            let mut block_w: f32 = 0.0;
            let mut line_ws = Vec::with_capacity(lines.len());
            for (k, line) in lines.iter().enumerate() {
                if k > 0 {
                    y += line_gap;
                }
                if config.modes.display_emojis == DisplayEmojis::Word
                    && emoji_px > 0.0
                    && has_emoji(line)
                {
                    y += emoji_band;
                }
                line_tops.push(y);
                y += line_h;
                let texts: Vec<&str> = prepared[line.clone()]
                    .iter()
                    .map(|p| p.text.as_str())
                    .collect();
                let (order, _) = visual_order(&texts);
                let w = order
                    .iter()
                    .enumerate()
                    .map(|(v, &local)| {
                        let i = line.start + local;
                        let gap = if v == 0 {
                            0.0
                        } else {
                            visual_gap(line.start + order[v - 1], i)
                        };
                        gap + widths[i]
                    })
                    .sum::<f32>();
                let room = if has_emoji(line) {
                    line_emoji_room
                } else {
                    0.0
                };
                line_ws.push(w);
                block_w = block_w.max(w + room);
            }
            let block_h = y + pad_y_px;
            let block_w = block_w + 2.0 * pad_x_px;
            let cx = finite_or(config.position.x, 0.5) * frame_w;
            let cy = finite_or(config.position.y, 0.75) * frame_h;
            let clamp = |c: f32, size: f32, total: f32| {
                let lo = margin + size / 2.0;
                let hi = total - margin - size / 2.0;
                if lo > hi {
                    total / 2.0
                } else {
                    c.clamp(lo, hi)
                }
            };
            let cx = clamp(cx, block_w, frame_w);
            let cy = clamp(cy, block_h, frame_h);
            let block = RectPx {
                x: cx - block_w / 2.0,
                y: cy - block_h / 2.0,
                w: block_w,
                h: block_h,
            };
            let first_line = timeline.lines.len();
            for (k, line) in lines.iter().enumerate() {
                let line_index = timeline.lines.len();
                let texts: Vec<&str> = prepared[line.clone()]
                    .iter()
                    .map(|p| p.text.as_str())
                    .collect();
                let (order, rtl) = visual_order(&texts);
                let top = block.y + line_tops[k];
                let room = if has_emoji(line) {
                    line_emoji_room
                } else {
                    0.0
                };
                let text_w = line_ws[k];
                let left = cx - (text_w + room) / 2.0 + if rtl { room } else { 0.0 };
                let mut x = left;
                let mut placed: Vec<(usize, RectPx)> = Vec::with_capacity(order.len());
                for (v, &local) in order.iter().enumerate() {
                    let i = line.start + local;
                    if v > 0 {
                        x += visual_gap(line.start + order[v - 1], i);
                    }
                    placed.push((
                        i,
                        RectPx {
                            x,
                            y: top,
                            w: widths[i],
                            h: line_h,
                        },
                    ));
                    x += widths[i];
                }
                placed.sort_by_key(|(i, _)| *i);
                let line_rect = RectPx {
                    x: left,
                    y: top,
                    w: text_w,
                    h: line_h,
                };
                let emoji_rect = (room > 0.0).then(|| RectPx {
                    x: if rtl {
                        left - room
                    } else {
                        left + text_w + emoji_gap
                    },
                    y: top + (line_h - emoji_px) / 2.0,
                    w: emoji_px,
                    h: emoji_px,
                });
                let start_s = prepared[line.start].start_s;
                let end_s = prepared[line.clone()]
                    .iter()
                    .map(|p| p.end_s)
                    .fold(start_s, f64::max);
                for (i, rect) in placed {
                    let p = &prepared[i];
                    let word_emoji_rect = (config.modes.display_emojis == DisplayEmojis::Word
                        && emoji_px > 0.0
                        && p.emoji.is_some())
                    .then(|| RectPx {
                        x: rect.x + rect.w / 2.0 - emoji_px / 2.0,
                        y: top - emoji_band,
                        w: emoji_px,
                        h: emoji_px,
                    });
                    timeline.words.push(LaidWord {
                        index: i,
                        text: p.text.clone(),
                        start_s: p.start_s,
                        end_s: p.end_s,
                        page: page_index,
                        line: line_index,
                        rect,
                        baseline_y_px: top + ascent_px,
                        scale: scales[i],
                        emoji: p.emoji.clone(),
                        emoji_rect: word_emoji_rect,
                    });
                }
                timeline.lines.push(LaidLine {
                    index: line_index,
                    page: page_index,
                    words: line.clone(),
                    visual_order: order.iter().map(|&l| line.start + l).collect(),
                    rect: line_rect,
                    rtl,
                    start_s,
                    end_s,
                    emoji_rect,
                });
            }
            let show_start_s = prepared.get(page_range.start).map_or(0.0, |p| p.start_s);
            let last_end = prepared[page_range.clone()]
                .iter()
                .map(|p| p.end_s)
                .fold(show_start_s, f64::max);
            timeline.pages.push(LaidPage {
                index: page_index,
                words: page_range,
                lines: first_line..timeline.lines.len(),
                rect: block,
                show_start_s,
                show_end_s: last_end + HOLD_S,
                emoji_rect: (page_band > 0.0).then(|| RectPx {
                    x: cx - emoji_px / 2.0,
                    y: block.y + pad_y_px,
                    w: emoji_px,
                    h: emoji_px,
                }),
            });
        }
        // A page gives way to the next one as soon as it starts.
        for i in 1..timeline.pages.len() {
            let next_start = timeline.pages[i].show_start_s;
            let prev = &mut timeline.pages[i - 1];
            prev.show_end_s = prev.show_end_s.min(next_start).max(prev.show_start_s);
        }
        timeline
    }

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

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn bidi_reverses_arabic_words() {
        let (order, rtl) = visual_order(&["مرحبا", "بكم", "جميعا"]);
        assert!(rtl);
        assert_eq!(order, vec![2, 1, 0]);
        let (order, rtl) = visual_order(&["hello", "world"]);
        assert!(!rtl);
        assert_eq!(order, vec![0, 1]);
    }
}
