//! The timeline as subtitle pages: the burn's pages and lines, each word with how it looks
//! over time (read off [`Timeline::state_at`] between every word's start and end), for
//! caption-core to write as ASS.

use caption_core::{CaptionLayout, CaptionPage, CaptionWord, Color, EffectMode, WordLook};

use crate::state::{FrameState, WordState};
use crate::timeline::{RectPx, Timeline};

/// Times closer than this are one instant.
const SAME_INSTANT_S: f64 = 1e-6;

impl Timeline {
    /// The pages and lines as the burn lays them out, each word's look over time (drawn or
    /// not, its colour, its box), for [`caption_core::export_layout`]. `line_height_em` is the
    /// primary face's line height as ASS sizes fonts ([`FontData::line_height_em`](crate::FontData::line_height_em)),
    /// so that a player draws glyphs at the burn's size.
    ///
    /// ```
    /// use caption_core::{Catalog, Word, export_layout};
    /// use caption_layout::{FrameSize, MonoMeasure, Timeline};
    ///
    /// let words = [
    ///     Word::new(0.0, 0.4, "Hey"),
    ///     Word::new(0.4, 0.9, "everyone."),
    ///     Word::new(1.0, 1.4, "Welcome"),
    ///     Word::new(1.4, 2.0, "back."),
    /// ];
    /// let style = Catalog::builtin()?.get("karaoke").expect("a built-in template").config.clone();
    /// let timeline = Timeline::build(&words, &style, FrameSize::new(1080, 1920), &MonoMeasure::default());
    /// let layout = timeline.caption_layout(1.2);
    /// assert_eq!(layout.pages.len(), 2, "a page ends with its sentence");
    /// assert_eq!(layout.font_size_px, timeline.font_px * 1.2);
    /// // "everyone." is lit while it is spoken, from 0.4 s.
    /// let everyone = &layout.pages[0].lines[0][1];
    /// assert!(everyone.looks.iter().any(|l| l.from_s == 0.4 && l.text_color != everyone.looks[0].text_color));
    /// assert!(export_layout(&layout, &style).contains("\\t(400,400,"));
    /// # Ok::<(), caption_core::CatalogError>(())
    /// ```
    pub fn caption_layout(&self, line_height_em: f32) -> CaptionLayout {
        let line_height_em = if line_height_em.is_finite() && line_height_em > 0.0 {
            line_height_em
        } else {
            1.0
        };
        CaptionLayout {
            frame_size_px: (self.frame.width_px, self.frame.height_px),
            font_size_px: self.font_px * line_height_em,
            space_px: self.space_px,
            pages: (0..self.pages.len())
                .map(|p| self.caption_page(p))
                .collect(),
        }
    }

    fn caption_page(&self, p: usize) -> CaptionPage {
        let page = &self.pages[p];
        let (start_s, end_s) = (page.show_start_s, page.show_end_s.max(page.show_start_s));
        // A word's look changes only where some word of the page starts or stops being spoken.
        let mut cuts: Vec<f64> = vec![start_s];
        for w in &self.words[page.words.clone()] {
            cuts.extend([w.start_s, w.end_s]);
        }
        cuts.retain(|&t| t >= start_s && t < end_s);
        cuts.sort_by(f64::total_cmp);
        cuts.dedup_by(|b, a| *b - *a < SAME_INSTANT_S);
        let mut looks: Vec<Vec<WordLook>> = vec![Vec::new(); page.words.len()];
        for (k, &from_s) in cuts.iter().enumerate() {
            let until_s = cuts.get(k + 1).copied().unwrap_or(end_s);
            // Halfway, an effect that fades a word in has begun: the word shows.
            let state = self.state_at((from_s + until_s) / 2.0);
            for (offset, i) in page.words.clone().enumerate() {
                let look = self.look(&state, i, from_s);
                let seen = &mut looks[offset];
                if seen.last().is_none_or(|last| !same_look(last, &look)) {
                    seen.push(look);
                }
            }
        }
        let lines = self.lines[page.lines.clone()]
            .iter()
            .map(|line| {
                line.words
                    .clone()
                    .map(|i| {
                        let w = &self.words[i];
                        // The room the burn leaves between this word and the one before it.
                        let gap_px = if i == line.words.start {
                            0.0
                        } else {
                            let before = &self.words[i - 1].rect;
                            let gap = if line.rtl {
                                before.x - w.rect.right()
                            } else {
                                w.rect.x - before.right()
                            };
                            gap.max(0.0)
                        };
                        CaptionWord {
                            text: w.text.clone(),
                            start_s: w.start_s,
                            end_s: w.end_s,
                            scale: w.scale,
                            gap_px,
                            looks: std::mem::take(&mut looks[i - page.words.start]),
                        }
                    })
                    .collect()
            })
            .collect();
        let text = self.lines[page.lines.clone()]
            .iter()
            .map(|l| l.rect)
            .reduce(|a, b| a.union(&b))
            .unwrap_or(page.rect);
        CaptionPage {
            start_s,
            end_s,
            center_px: RectPx::center(&text),
            lines,
        }
    }

    /// How word `i` looks in `state` (the screen from `from_s` on), with the boxes the burn
    /// draws behind it and behind the space before it.
    fn look(&self, state: &FrameState, i: usize, from_s: f64) -> WordLook {
        let drawn: Option<&WordState> = state.words.iter().find(|s| s.word == i);
        let Some(drawn) = drawn else {
            return WordLook {
                from_s,
                ..WordLook::default()
            };
        };
        let c = &self.config;
        let w = &self.words[i];
        let (box_color, space_box_color) = if c.word_has_background {
            let colors = &c.colors;
            let per_word = c.modes.effect_mode == EffectMode::Word;
            let behind: Option<Color> = if per_word {
                colors.background_color.nth(w.index)
            } else {
                colors.background_color.nth(w.line)
            };
            let active = drawn.visibility == crate::Visibility::Active;
            let lit = colors.hilight_color.nth(w.index).filter(|_| active);
            (lit.or(behind), behind.filter(|_| !per_word))
        } else {
            (None, None)
        };
        WordLook {
            from_s,
            text_color: Some(drawn.text_color),
            box_color,
            space_box_color,
        }
    }
}

fn same_look(a: &WordLook, b: &WordLook) -> bool {
    a.text_color == b.text_color
        && a.box_color == b.box_color
        && a.space_box_color == b.space_box_color
}
