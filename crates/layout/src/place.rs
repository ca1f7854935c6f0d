//! Building a [`Timeline`]: sizes on this frame, word widths and the room between words,
//! pages and lines by the breaker, then each page's block placed on the frame and its lines
//! and words placed inside it.

use std::ops::Range;

use caption_core::{
    Config, DisplayEmojis, DisplayMode, EMPHASIS_SCALE, EffectMode, Emphasis, Word,
};
use unicode_bidi::{BidiInfo, Level};

use crate::breaks::{self, BreakWord, PageLimits, Widths};
use crate::emphasis::{self, Candidate, WordFrequencies};
use crate::prepare::{Prepared, prepare};
use crate::state::EffectReach;
use crate::text::joins_without_space;
use crate::timeline::{FrameSize, LaidLine, LaidPage, LaidWord, Measure, RectPx, Timeline};

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

fn finite_or(v: f32, default: f32) -> f32 {
    if v.is_finite() { v } else { default }
}

impl Timeline {
    /// Lays out `words` in `config` on a `frame`-sized video.
    pub fn build(words: &[Word], config: &Config, frame: FrameSize, measure: &dyn Measure) -> Self {
        let mut timeline = Self::sized(config, frame, measure);
        if frame.width_px == 0 || frame.height_px == 0 {
            return timeline;
        }
        let mut prepared = prepare(words, config);
        let mut spacing = Spacing::measure(&prepared, &timeline, measure);
        let mut page_lines = page_lines(&prepared, &spacing, &timeline);
        let automatic = config.emphasis != Emphasis::None
            && !prepared.is_empty()
            && prepared.iter().all(|p| p.emphasis.is_none());
        if automatic {
            let candidates: Vec<Candidate<'_>> = prepared
                .iter()
                .map(|p| Candidate {
                    key: &p.key,
                    capitalised: p.capitalised,
                    starts_sentence: p.starts_sentence,
                    filler: p.filler,
                })
                .collect();
            let scores = emphasis::scores(&candidates, WordFrequencies::installed());
            let pages = |page_lines: &[Vec<Range<usize>>]| -> Vec<Range<usize>> {
                page_lines
                    .iter()
                    .filter_map(|lines| Some(lines.first()?.start..lines.last()?.end))
                    .collect()
            };
            let marks = emphasis::choose(&scores, &pages(&page_lines));
            for (p, mark) in prepared.iter_mut().zip(marks) {
                p.emphasis = Some(mark);
            }
            if config.emphasis.grows() {
                // Bigger words may page differently: the marks are chosen again on the new
                // pages among the words already marked, so no page holds more than its share.
                spacing = Spacing::measure(&prepared, &timeline, measure);
                page_lines = self::page_lines(&prepared, &spacing, &timeline);
                let kept: Vec<Option<f32>> = scores
                    .iter()
                    .zip(&prepared)
                    .map(|(s, p)| s.filter(|_| p.emphasis == Some(true)))
                    .collect();
                let marks = emphasis::choose(&kept, &pages(&page_lines));
                for (p, mark) in prepared.iter_mut().zip(marks) {
                    p.emphasis = Some(mark);
                }
                spacing = Spacing::measure(&prepared, &timeline, measure);
            }
        }
        let placer = Placer::new(&timeline, config, &prepared, &spacing);
        for (page_index, lines) in page_lines.iter().enumerate() {
            placer.place_page(&mut timeline, page_index, lines);
        }
        timeline.hand_over_pages();
        timeline
    }

    /// An empty timeline with the config's sizes scaled to `frame`.
    fn sized(config: &Config, frame: FrameSize, measure: &dyn Measure) -> Self {
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
        let boxes = config.word_has_background;
        let pad_x_px = if boxes { BOX_PAD_X_EM * font_px } else { 0.0 };
        let pad_y_px = if boxes { BOX_PAD_Y_EM * font_px } else { 0.0 };
        let max_width = finite_or(config.max_width, 0.9).clamp(0.05, 1.0);
        let line_limit_px = (frame.width_px as f32 * max_width
            - 2.0 * pad_x_px
            - 2.0 * stroke_px
            - line_emoji_room(config, font_px, emoji_px))
        .max(1.0);
        Self {
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
            space_px: measure.width_px(" ", font_px).max(0.0),
            words: Vec::new(),
            lines: Vec::new(),
            pages: Vec::new(),
        }
    }

    /// A page gives way to the next one as soon as it starts.
    fn hand_over_pages(&mut self) {
        for i in 1..self.pages.len() {
            let next_start = self.pages[i].show_start_s;
            let prev = &mut self.pages[i - 1];
            prev.show_end_s = prev.show_end_s.min(next_start).max(prev.show_start_s);
        }
    }
}

fn emoji_gap(font_px: f32) -> f32 {
    EMOJI_GAP_EM * font_px
}

/// The room a line keeps beside its text for the line's emoji under `displayEmojis: LINE`.
fn line_emoji_room(config: &Config, font_px: f32, emoji_px: f32) -> f32 {
    if config.modes.display_emojis == DisplayEmojis::Line && emoji_px > 0.0 {
        emoji_px + emoji_gap(font_px)
    } else {
        0.0
    }
}

/// Each word's width (shrunk to the line when wider) and the room kept between words.
struct Spacing {
    widths: Vec<f32>,
    scales: Vec<f32>,
    /// How far each word's effect reaches beside it at its peak.
    reaches: Vec<f32>,
    /// The room between word i - 1 and word i without the effect's reach.
    spaces: Vec<f32>,
    /// The room between word i - 1 and word i in reading order, reaches included.
    gaps: Vec<f32>,
}

impl Spacing {
    fn measure(prepared: &[Prepared], timeline: &Timeline, measure: &dyn Measure) -> Self {
        let (font_px, line_limit_px) = (timeline.font_px, timeline.line_limit_px);
        let (pad_x_px, stroke_px) = (timeline.pad_x_px, timeline.stroke_px);
        let modes = &timeline.config.modes;
        let space_px = timeline.space_px;
        let mut widths = Vec::with_capacity(prepared.len());
        let mut scales = Vec::with_capacity(prepared.len());
        let grows = timeline.config.emphasis.grows();
        for p in prepared {
            let size = if grows && p.emphasis == Some(true) {
                EMPHASIS_SCALE
            } else {
                1.0
            };
            let w = measure.width_px(&p.text, font_px).max(0.0) * size;
            let (w, k) = if w > line_limit_px {
                (line_limit_px, size * line_limit_px / w)
            } else {
                (w, size)
            };
            widths.push(w);
            scales.push(k);
        }
        let per_word_boxes =
            timeline.config.word_has_background && modes.effect_mode == EffectMode::Word;
        let box_gap = if per_word_boxes { 2.0 * pad_x_px } else { 0.0 };
        // A word that pops, bounces or shakes on its own must not run into its neighbours at
        // its peak: the room it can take is kept free beside it (and between lines below).
        let reach = EffectReach::of(modes.effect_type);
        let word_reach = |i: usize| {
            if modes.effect_mode != EffectMode::Word {
                return 0.0;
            }
            let half_w = widths[i] / 2.0 + pad_x_px + stroke_px;
            reach.grow * half_w + reach.dx_em * font_px
        };
        let reaches: Vec<f32> = (0..prepared.len()).map(word_reach).collect();
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
        Self {
            widths,
            scales,
            reaches,
            spaces,
            gaps,
        }
    }

    /// The room between two words side by side on screen (in a line that mixes directions
    /// these need not follow each other in reading order): their space and both reaches.
    fn visual_gap(&self, left: usize, right: usize) -> f32 {
        self.spaces[left.max(right)] + self.reaches[left] + self.reaches[right]
    }
}

/// Pages of lines: hard breaks at sentence ends, pauses and by displayWords, then as few
/// pages and lines as fit, filled evenly.
fn page_lines(
    prepared: &[Prepared],
    spacing: &Spacing,
    timeline: &Timeline,
) -> Vec<Vec<Range<usize>>> {
    let config = &timeline.config;
    let (lines_per_page, words_per_line) = match config.modes.display_mode {
        DisplayMode::Word => (1, 1),
        _ => (
            config.lines_count.clamp(1, 64) as usize,
            config.words_per_line_count.clamp(1, 64) as usize,
        ),
    };
    let capacity = lines_per_page * words_per_line;
    let break_words: Vec<BreakWord<'_>> = prepared
        .iter()
        .map(|p| BreakWord {
            text: &p.text,
            start_s: p.start_s,
            end_s: p.end_s,
            ends_clause: p.ends_clause,
            ends_sentence: p.ends_sentence,
        })
        .collect();
    let measured = Widths {
        words: &spacing.widths,
        gaps: &spacing.gaps,
    };
    let limits = PageLimits {
        lines: lines_per_page,
        words_per_line,
        line_px: timeline.line_limit_px,
    };
    breaks::hard_runs(&break_words, config.modes.display_words, capacity)
        .into_iter()
        .flat_map(|run| breaks::pages(&break_words, measured, run, limits))
        .collect()
}

/// Places pages on the frame: what every page of one timeline shares.
struct Placer<'a> {
    config: &'a Config,
    prepared: &'a [Prepared],
    spacing: &'a Spacing,
    frame_w: f32,
    frame_h: f32,
    margin: f32,
    line_h: f32,
    line_gap: f32,
    pad_x_px: f32,
    pad_y_px: f32,
    ascent_px: f32,
    emoji_px: f32,
    emoji_gap: f32,
    /// The height an emoji takes above its word, or above the page, gap included.
    emoji_band: f32,
    line_emoji_room: f32,
    /// For each emphasised word, how many emphasised words come before it (its colour's turn).
    emphasis_ordinals: Vec<Option<usize>>,
}

/// A page's lines stacked, before the block is placed, and the block's size.
struct Stack {
    lines: Vec<StackedLine>,
    block_w: f32,
    block_h: f32,
}

/// A line in its page's stack.
struct StackedLine {
    /// From the block's top.
    top: f32,
    /// Its words from left to right (offsets into the line), and its direction.
    order: Vec<usize>,
    rtl: bool,
    text_w: f32,
}

impl<'a> Placer<'a> {
    /// `config` is the one `timeline` was sized with.
    fn new(
        timeline: &Timeline,
        config: &'a Config,
        prepared: &'a [Prepared],
        spacing: &'a Spacing,
    ) -> Self {
        let (font_px, stroke_px) = (timeline.font_px, timeline.stroke_px);
        let (pad_y_px, emoji_px) = (timeline.pad_y_px, timeline.emoji_px);
        let frame_w = timeline.frame.width_px as f32;
        let frame_h = timeline.frame.height_px as f32;
        let line_h = (timeline.ascent_px + timeline.descent_px).max(1.0);
        let reach = EffectReach::of(config.modes.effect_type);
        let line_reach = match config.modes.effect_mode {
            EffectMode::Page => 0.0,
            EffectMode::Word | EffectMode::Line => {
                reach.grow * (line_h + 2.0 * pad_y_px + 2.0 * stroke_px) + reach.dy_em * font_px
            }
        };
        Self {
            config,
            prepared,
            spacing,
            frame_w,
            frame_h,
            margin: FRAME_MARGIN * frame_w.min(frame_h),
            line_h,
            line_gap: LINE_GAP_EM * font_px + 2.0 * pad_y_px + line_reach,
            pad_x_px: timeline.pad_x_px,
            pad_y_px,
            ascent_px: timeline.ascent_px,
            emoji_px,
            emoji_gap: emoji_gap(font_px),
            emoji_band: emoji_px + emoji_gap(font_px),
            line_emoji_room: line_emoji_room(config, font_px, emoji_px),
            emphasis_ordinals: prepared
                .iter()
                .scan(0, |count, p| {
                    Some((p.emphasis == Some(true)).then(|| {
                        *count += 1;
                        *count - 1
                    }))
                })
                .collect(),
        }
    }

    fn has_emoji(&self, words: &Range<usize>) -> bool {
        self.prepared[words.clone()]
            .iter()
            .any(|p| p.emoji.is_some())
    }

    fn shows(&self, mode: DisplayEmojis) -> bool {
        self.config.modes.display_emojis == mode && self.emoji_px > 0.0
    }

    /// The room a line keeps for its emoji, if it has one.
    fn room(&self, line: &Range<usize>) -> f32 {
        if self.has_emoji(line) {
            self.line_emoji_room
        } else {
            0.0
        }
    }

    fn place_page(&self, timeline: &mut Timeline, page_index: usize, lines: &[Range<usize>]) {
        let page_range = lines.first().map_or(0, |l| l.start)..lines.last().map_or(0, |l| l.end);
        let page_band = if self.shows(DisplayEmojis::Page) && self.has_emoji(&page_range) {
            self.emoji_band
        } else {
            0.0
        };
        let stack = self.stack(lines, page_band);
        let (cx, block) = self.block_rect(stack.block_w, stack.block_h);
        let first_line = timeline.lines.len();
        for (line, stacked) in lines.iter().zip(&stack.lines) {
            self.place_line(timeline, page_index, line, stacked, (cx, block.y));
        }
        let prepared = self.prepared;
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
                x: cx - self.emoji_px / 2.0,
                y: block.y + self.pad_y_px,
                w: self.emoji_px,
                h: self.emoji_px,
            }),
        });
    }

    /// Heights first, to place the block: each line's top, order and width.
    fn stack(&self, lines: &[Range<usize>], page_band: f32) -> Stack {
        let mut stacked = Vec::with_capacity(lines.len());
        let mut y = page_band + self.pad_y_px;
        let mut block_w: f32 = 0.0;
        for (k, line) in lines.iter().enumerate() {
            if k > 0 {
                y += self.line_gap;
            }
            if self.shows(DisplayEmojis::Word) && self.has_emoji(line) {
                y += self.emoji_band;
            }
            let top = y;
            y += self.line_h;
            let texts: Vec<&str> = self.prepared[line.clone()]
                .iter()
                .map(|p| p.text.as_str())
                .collect();
            let (order, rtl) = visual_order(&texts);
            let w = order
                .iter()
                .enumerate()
                .map(|(v, &local)| {
                    let i = line.start + local;
                    let gap = if v == 0 {
                        0.0
                    } else {
                        self.spacing.visual_gap(line.start + order[v - 1], i)
                    };
                    gap + self.spacing.widths[i]
                })
                .sum::<f32>();
            block_w = block_w.max(w + self.room(line));
            stacked.push(StackedLine {
                top,
                order,
                rtl,
                text_w: w,
            });
        }
        Stack {
            lines: stacked,
            block_w: block_w + 2.0 * self.pad_x_px,
            block_h: y + self.pad_y_px,
        }
    }

    /// The caption block centred on the configured position, kept inside the frame's margin;
    /// with its centre's x.
    fn block_rect(&self, block_w: f32, block_h: f32) -> (f32, RectPx) {
        let cx = finite_or(self.config.position.x, 0.5) * self.frame_w;
        let cy = finite_or(self.config.position.y, 0.75) * self.frame_h;
        let clamp = |c: f32, size: f32, total: f32| {
            let lo = self.margin + size / 2.0;
            let hi = total - self.margin - size / 2.0;
            if lo > hi {
                total / 2.0
            } else {
                c.clamp(lo, hi)
            }
        };
        let cx = clamp(cx, block_w, self.frame_w);
        let cy = clamp(cy, block_h, self.frame_h);
        let block = RectPx {
            x: cx - block_w / 2.0,
            y: cy - block_h / 2.0,
            w: block_w,
            h: block_h,
        };
        (cx, block)
    }

    /// Places one line's words from left to right, centred on the block's centre `cx`, its
    /// emoji beside it.
    fn place_line(
        &self,
        timeline: &mut Timeline,
        page_index: usize,
        line: &Range<usize>,
        stacked: &StackedLine,
        (cx, block_y): (f32, f32),
    ) {
        let StackedLine {
            ref order,
            rtl,
            text_w,
            ..
        } = *stacked;
        let top = block_y + stacked.top;
        let (line_h, emoji_px) = (self.line_h, self.emoji_px);
        let line_index = timeline.lines.len();
        let room = self.room(line);
        let left = cx - (text_w + room) / 2.0 + if rtl { room } else { 0.0 };
        let mut x = left;
        let mut placed: Vec<(usize, RectPx)> = Vec::with_capacity(order.len());
        for (v, &local) in order.iter().enumerate() {
            let i = line.start + local;
            if v > 0 {
                x += self.spacing.visual_gap(line.start + order[v - 1], i);
            }
            let w = self.spacing.widths[i];
            placed.push((
                i,
                RectPx {
                    x,
                    y: top,
                    w,
                    h: line_h,
                },
            ));
            x += w;
        }
        placed.sort_by_key(|(i, _)| *i);
        let emoji_rect = (room > 0.0).then(|| RectPx {
            x: if rtl {
                left - room
            } else {
                left + text_w + self.emoji_gap
            },
            y: top + (line_h - emoji_px) / 2.0,
            w: emoji_px,
            h: emoji_px,
        });
        let start_s = self.prepared[line.start].start_s;
        let end_s = self.prepared[line.clone()]
            .iter()
            .map(|p| p.end_s)
            .fold(start_s, f64::max);
        for (i, rect) in placed {
            let p = &self.prepared[i];
            let word_emoji_rect =
                (self.shows(DisplayEmojis::Word) && p.emoji.is_some()).then(|| RectPx {
                    x: rect.x + rect.w / 2.0 - emoji_px / 2.0,
                    y: top - self.emoji_band,
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
                baseline_y_px: top + self.ascent_px,
                scale: self.spacing.scales[i],
                emoji: p.emoji.clone(),
                emoji_rect: word_emoji_rect,
                speaker: p.speaker,
                emphasis: self.emphasis_ordinals[i],
            });
        }
        timeline.lines.push(LaidLine {
            index: line_index,
            page: page_index,
            words: line.clone(),
            visual_order: order.iter().map(|&l| line.start + l).collect(),
            rect: RectPx {
                x: left,
                y: top,
                w: text_w,
                h: line_h,
            },
            rtl,
            start_s,
            end_s,
            emoji_rect,
        });
    }
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
