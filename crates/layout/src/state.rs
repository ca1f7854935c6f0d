//! What the screen shows at one instant. Every value is quantised (positions in 1/64 px,
//! scale in 1/1000, opacity 0–255), so two instants that look the same compare equal and hash
//! equal: the renderer keys its overlay cache on [`FrameState`].

use caption_core::{Color, DisplayEmojis, DisplayMode, EffectMode, EffectType, SpokenMode};

use crate::timeline::{EFFECT_S, RectPx, Timeline};

const Q: f32 = 64.0;

fn q(px: f32) -> i32 {
    if px.is_finite() {
        (px * Q).round().clamp(-1.0e9, 1.0e9) as i32
    } else {
        0
    }
}

/// Pixels from a quantised value.
pub fn q_to_px(v: i32) -> f32 {
    v as f32 / Q
}

/// The soft black shadow used when a template has a shadow but no custom shadow color.
const SOFT_SHADOW: Color = Color::rgba(0, 0, 0, 170);

/// How a word (or box, or emoji) is moved, scaled and faded by an effect: a point `p` is drawn
/// at `origin + (p - origin) * scale + (dx, dy)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Transform {
    /// Scaling origin, x, in 1/64 px.
    pub origin_x_q: i32,
    /// Scaling origin, y, in 1/64 px.
    pub origin_y_q: i32,
    /// Scale in thousandths (1000 is unscaled).
    pub scale_milli: u32,
    /// Horizontal move, 1/64 px.
    pub dx_q: i32,
    /// Vertical move, 1/64 px (down is positive).
    pub dy_q: i32,
    /// Opacity, 0 (invisible) to 255.
    pub opacity: u8,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    /// No move, no scale, fully opaque.
    pub const IDENTITY: Self = Self {
        origin_x_q: 0,
        origin_y_q: 0,
        scale_milli: 1000,
        dx_q: 0,
        dy_q: 0,
        opacity: 255,
    };

    fn new(origin: (f32, f32), scale: f32, dx_px: f32, dy_px: f32, opacity: f32) -> Self {
        Self {
            origin_x_q: q(origin.0),
            origin_y_q: q(origin.1),
            scale_milli: (scale.clamp(0.0, 100.0) * 1000.0).round() as u32,
            dx_q: q(dx_px),
            dy_q: q(dy_px),
            opacity: (opacity.clamp(0.0, 1.0) * 255.0).round() as u8,
        }
    }

    /// The scale factor (1.0 is unscaled).
    pub fn scale(&self) -> f32 {
        self.scale_milli as f32 / 1000.0
    }

    /// Where the point `(x, y)` lands.
    pub fn apply(&self, x: f32, y: f32) -> (f32, f32) {
        let (ox, oy) = (q_to_px(self.origin_x_q), q_to_px(self.origin_y_q));
        let s = self.scale();
        (
            ox + (x - ox) * s + q_to_px(self.dx_q),
            oy + (y - oy) * s + q_to_px(self.dy_q),
        )
    }

    /// Where the rectangle `r` lands (scaled about the origin, then moved).
    pub fn apply_rect(&self, r: &RectPx) -> RectPx {
        let (x, y) = self.apply(r.x, r.y);
        let s = self.scale();
        RectPx {
            x,
            y,
            w: r.w * s,
            h: r.h * s,
        }
    }

    /// Fully transparent or scaled to nothing: nothing to draw.
    pub fn is_invisible(&self) -> bool {
        self.opacity == 0 || self.scale_milli == 0
    }
}

/// A word's place in the speech at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Visibility {
    /// Not drawn (PROGRESSIVE before the word is spoken).
    Hidden,
    /// Drawn, not yet spoken.
    Shown,
    /// Being spoken: `start <= t < end`.
    Active,
    /// Already spoken.
    Spoken,
}

/// One drawn word.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WordState {
    /// Index of the word in [`Timeline::words`].
    pub word: usize,
    /// Where the word is in the speech.
    pub visibility: Visibility,
    /// Fill color of the text.
    pub text_color: Color,
    /// Outline color, `None` without an outline.
    pub stroke_color: Option<Color>,
    /// Shadow color, `None` without a shadow.
    pub shadow_color: Option<Color>,
    /// The effect's move, scale and fade.
    pub transform: Transform,
    /// TYPEWRITER: only the glyphs of the first `n` bytes of the text show.
    pub visible_bytes: Option<u32>,
    /// Progress of the word's effect unit, 0–1000 (1000 when the effect is over or disabled).
    pub effect_milli: u16,
}

/// What a [`BoxState`] is drawn behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BoxKind {
    /// `backgroundColor` behind one word (effectMode WORD).
    Word,
    /// `backgroundColor` behind a line (effectMode LINE or PAGE).
    Line,
    /// `hilightColor` behind the active word.
    Active,
}

/// A rounded box.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BoxState {
    /// What the box is behind.
    pub kind: BoxKind,
    /// Left edge, 1/64 px.
    pub x_q: i32,
    /// Top edge, 1/64 px.
    pub y_q: i32,
    /// Width, 1/64 px.
    pub w_q: i32,
    /// Height, 1/64 px.
    pub h_q: i32,
    /// Corner radius, 1/64 px.
    pub radius_q: i32,
    /// Fill color.
    pub color: Color,
    /// The effect's move, scale and fade.
    pub transform: Transform,
}

impl BoxState {
    /// The box in pixels, before its transform.
    pub fn rect(&self) -> RectPx {
        RectPx {
            x: q_to_px(self.x_q),
            y: q_to_px(self.y_q),
            w: q_to_px(self.w_q),
            h: q_to_px(self.h_q),
        }
    }
}

/// A drawn emoji, centred on its point.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EmojiState {
    /// The emoji's text.
    pub emoji: String,
    /// Centre, x, 1/64 px.
    pub center_x_q: i32,
    /// Centre, y, 1/64 px.
    pub center_y_q: i32,
    /// Size (height of the em square), 1/64 px.
    pub size_q: i32,
    /// The effect's move, scale and fade.
    pub transform: Transform,
}

/// Everything drawn at one instant, in drawing order (boxes, then words, then emoji).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct FrameState {
    /// The page on screen, `None` between pages.
    pub page: Option<usize>,
    /// Background boxes, drawn first.
    pub boxes: Vec<BoxState>,
    /// Words, drawn over the boxes.
    pub words: Vec<WordState>,
    /// Emoji, drawn last.
    pub emojis: Vec<EmojiState>,
}

impl FrameState {
    /// Nothing is drawn.
    pub fn is_empty(&self) -> bool {
        self.boxes.is_empty() && self.words.is_empty() && self.emojis.is_empty()
    }
}

fn ease_out(p: f32) -> f32 {
    1.0 - (1.0 - p).powi(3)
}

/// Effect progress of a unit that starts at `start_s`: `None` before it starts.
fn progress(t_s: f64, start_s: f64, duration_s: f64) -> Option<f32> {
    if t_s < start_s {
        None
    } else {
        Some(((t_s - start_s) / duration_s.max(1e-3)).clamp(0.0, 1.0) as f32)
    }
}

/// The transform of an effect unit centred at `origin`, at progress `p` (`None`: not started).
fn effect_transform(effect: EffectType, p: Option<f32>, origin: (f32, f32), em: f32) -> Transform {
    use std::f32::consts::PI;
    let t = |scale, dx, dy, opacity| Transform::new(origin, scale, dx, dy, opacity);
    match (effect, p) {
        (EffectType::Disabled | EffectType::Typewriter, _) => t(1.0, 0.0, 0.0, 1.0),
        // Emphasis effects rest until their unit is spoken.
        (EffectType::Pop | EffectType::Bounce | EffectType::Shake, None) => t(1.0, 0.0, 0.0, 1.0),
        // Entrance effects keep their unit out of sight until it is spoken.
        (EffectType::Zoom | EffectType::Fade | EffectType::Slide, None) => t(1.0, 0.0, 0.0, 0.0),
        (EffectType::Pop, Some(p)) => t(1.0 + 0.15 * (PI * p).sin(), 0.0, 0.0, 1.0),
        (EffectType::Bounce, Some(p)) => t(
            1.0,
            0.0,
            -0.3 * em * (2.0 * PI * p).sin().abs() * (1.0 - 0.5 * p),
            1.0,
        ),
        (EffectType::Zoom, Some(p)) => t(0.2 + 0.8 * ease_out(p), 0.0, 0.0, (3.0 * p).min(1.0)),
        (EffectType::Fade, Some(p)) => t(1.0, 0.0, 0.0, p),
        (EffectType::Slide, Some(p)) => t(1.0, 0.0, 0.6 * em * (1.0 - ease_out(p)), p.min(1.0)),
        (EffectType::Shake, Some(p)) => {
            t(1.0, 0.2 * em * (6.0 * PI * p).sin() * (1.0 - p), 0.0, 1.0)
        }
    }
}

/// The most an effect moves its unit away from where it is laid out, so that layout can keep
/// that much room free around it: growth as a fraction of the unit's size (each side grows by
/// half of it), and sideways and upward travel in em.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct EffectReach {
    pub grow: f32,
    pub dx_em: f32,
    pub dy_em: f32,
}

impl EffectReach {
    /// Kept in step with [`effect_transform`] (a unit test samples it). ZOOM never grows past
    /// full size; SLIDE comes up from below while fading in, and FADE and TYPEWRITER do not
    /// move.
    pub(crate) fn of(effect: EffectType) -> Self {
        match effect {
            EffectType::Pop => Self {
                grow: 0.15,
                ..Self::default()
            },
            EffectType::Bounce => Self {
                dy_em: 0.3,
                ..Self::default()
            },
            EffectType::Shake => Self {
                dx_em: 0.2,
                ..Self::default()
            },
            _ => Self::default(),
        }
    }
}

impl Timeline {
    /// What the screen shows at `t_s` (seconds).
    pub fn state_at(&self, t_s: f64) -> FrameState {
        let Some(page_index) = self.page_at(t_s) else {
            return FrameState::default();
        };
        let page = &self.pages[page_index];
        let c = &self.config;
        let colors = &c.colors;
        let modes = &c.modes;
        let em = self.font_px;
        let effect = modes.effect_type;
        let mut state = FrameState {
            page: Some(page_index),
            ..FrameState::default()
        };

        // Effect unit of each word: (start, duration, origin, typewriter char offset and total).
        let page_p = progress(t_s, page.show_start_s, EFFECT_S);
        let page_t = effect_transform(effect, page_p, page.rect.center(), em);
        let mut line_transforms = Vec::new();
        for line in &self.lines[page.lines.clone()] {
            let p = progress(t_s, line.start_s, EFFECT_S);
            line_transforms.push(effect_transform(effect, p, line.rect.center(), em));
        }

        // TYPEWRITER over a line or page reveals characters in reading order across words.
        let typewriter_chars = |range: std::ops::Range<usize>, start_s: f64, end_s: f64| -> usize {
            let total: usize = self.words[range]
                .iter()
                .map(|w| w.text.chars().count())
                .sum();
            let frac = progress(t_s, start_s, end_s - start_s).unwrap_or(0.0);
            (total as f32 * frac).ceil() as usize
        };

        for w in &self.words[page.words.clone()] {
            let line_k = w.line - page.lines.start;
            let line = &self.lines[w.line];
            let visibility = if t_s >= w.start_s && t_s < w.end_s {
                Visibility::Active
            } else if t_s >= w.end_s {
                Visibility::Spoken
            } else if modes.display_mode == DisplayMode::Progressive {
                Visibility::Hidden
            } else {
                Visibility::Shown
            };
            if visibility == Visibility::Hidden {
                continue;
            }
            let (transform, effect_p) = match modes.effect_mode {
                EffectMode::Word => {
                    let p = progress(t_s, w.start_s, EFFECT_S);
                    (effect_transform(effect, p, w.rect.center(), em), p)
                }
                EffectMode::Line => (
                    line_transforms[line_k],
                    progress(t_s, line.start_s, EFFECT_S),
                ),
                EffectMode::Page => (page_t, page_p),
            };
            let visible_bytes = (effect == EffectType::Typewriter).then(|| {
                let shown_chars = match modes.effect_mode {
                    EffectMode::Word => {
                        let n = w.text.chars().count();
                        let frac = progress(t_s, w.start_s, w.end_s - w.start_s).unwrap_or(0.0);
                        (n as f32 * frac).ceil() as usize
                    }
                    EffectMode::Line | EffectMode::Page => {
                        let (range, start_s, end_s) = if modes.effect_mode == EffectMode::Line {
                            (line.words.clone(), line.start_s, line.end_s)
                        } else {
                            let last_end = self.words[page.words.clone()]
                                .iter()
                                .map(|w| w.end_s)
                                .fold(page.show_start_s, f64::max);
                            (page.words.clone(), page.show_start_s, last_end)
                        };
                        let before: usize = self.words[range.start..w.index]
                            .iter()
                            .map(|w| w.text.chars().count())
                            .sum();
                        typewriter_chars(range, start_s, end_s).saturating_sub(before)
                    }
                };
                w.text
                    .char_indices()
                    .nth(shown_chars)
                    .map_or(w.text.len(), |(b, _)| b) as u32
            });
            if transform.is_invisible() || visible_bytes == Some(0) {
                continue;
            }

            let spoken = match modes.spoken_mode {
                SpokenMode::None => false,
                SpokenMode::Word => visibility == Visibility::Spoken,
                SpokenMode::Line => t_s >= line.start_s,
            };
            let n = w.index;
            // A known speaker's colour stands for both the default and the spoken colour.
            let speaker_color = w
                .speaker
                .and_then(|k| c.speaker_colors.get(k % c.speaker_colors.len().max(1)))
                .copied();
            let base = if let Some(color) = speaker_color {
                Some(color)
            } else if spoken {
                colors
                    .spoken_color
                    .nth(n)
                    .or_else(|| colors.default_color.nth(n))
            } else {
                colors.default_color.nth(n)
            }
            .unwrap_or(Color::WHITE);
            let active = visibility == Visibility::Active;
            let text_color = if active && !c.word_has_background {
                colors.hilight_color.nth(n).unwrap_or(base)
            } else if let (Some(k), true) = (w.emphasis, c.emphasis.colors()) {
                colors.hilight_color.nth(k).unwrap_or(base)
            } else {
                base
            };
            let stroke_color = if self.stroke_px > 0.0 {
                colors.stroke_color.nth(n)
            } else {
                None
            };
            let shadow_color = c.word_has_shadow.then(|| {
                if c.word_has_custom_shadow_color {
                    colors.shadow_color.nth(n).unwrap_or(SOFT_SHADOW)
                } else {
                    SOFT_SHADOW
                }
            });

            let boxed = |kind, r: RectPx, color, transform| BoxState {
                kind,
                x_q: q(r.x - self.pad_x_px),
                y_q: q(r.y - self.pad_y_px),
                w_q: q(r.w + 2.0 * self.pad_x_px),
                h_q: q(r.h + 2.0 * self.pad_y_px),
                radius_q: q(self.radius_px),
                color,
                transform,
            };
            if c.word_has_background {
                if modes.effect_mode == EffectMode::Word {
                    if let Some(color) = colors.background_color.nth(n) {
                        state
                            .boxes
                            .push(boxed(BoxKind::Word, w.rect, color, transform));
                    }
                } else if let Some(color) = colors.background_color.nth(line.index) {
                    // One box per line, grown over the words drawn so far.
                    match state
                        .boxes
                        .iter_mut()
                        .rev()
                        .find(|b| b.kind == BoxKind::Line)
                    {
                        Some(b)
                            if b.y_q == q(w.rect.y - self.pad_y_px) && b.transform == transform =>
                        {
                            let r = b
                                .rect()
                                .union(&w.rect.inflate(self.pad_x_px, self.pad_y_px));
                            b.x_q = q(r.x);
                            b.w_q = q(r.w);
                        }
                        _ => state
                            .boxes
                            .push(boxed(BoxKind::Line, w.rect, color, transform)),
                    }
                }
                if let (true, Some(color)) = (active, colors.hilight_color.nth(n)) {
                    state
                        .boxes
                        .push(boxed(BoxKind::Active, w.rect, color, transform));
                }
            }

            state.words.push(WordState {
                word: w.index,
                visibility,
                text_color,
                stroke_color,
                shadow_color,
                transform,
                visible_bytes: visible_bytes.filter(|&b| (b as usize) < w.text.len()),
                effect_milli: (effect_p.unwrap_or(1.0) * 1000.0).round() as u16,
            });
        }
        // Active boxes go above every background box.
        state.boxes.sort_by_key(|b| b.kind == BoxKind::Active);

        self.emoji_states(t_s, page_index, &mut state);
        state
    }

    fn emoji_states(&self, t_s: f64, page_index: usize, state: &mut FrameState) {
        if self.emoji_px <= 0.0 {
            return;
        }
        let page = &self.pages[page_index];
        let drawn = |i: usize| state.words.iter().any(|s| s.word == i);
        let mut out = Vec::new();
        let mut push = |emoji: &str, rect: RectPx, since_s: f64, unit: Transform| {
            let (cx, cy) = rect.center();
            let mut transform = Transform {
                origin_x_q: q(cx),
                origin_y_q: q(cy),
                ..unit
            };
            // The emoji follows its unit's fade but not its scale: it has its own animation.
            transform.scale_milli = 1000;
            transform.dx_q = unit.dx_q;
            transform.dy_q = unit.dy_q;
            if self.config.emoji_animated {
                let age = (t_s - since_s).max(0.0) as f32;
                let p = (age / 0.3).min(1.0);
                let pop = if p < 1.0 {
                    0.3 + 0.7 * ease_out(p) + 0.25 * (std::f32::consts::PI * p).sin()
                } else {
                    1.0
                };
                // Whole pixels: a sub-pixel drift would make every frame a new overlay.
                let float = ((age * std::f32::consts::TAU / 2.0).sin() * 0.05 * rect.h).round();
                transform.scale_milli = (pop * 1000.0).round() as u32;
                transform.dy_q += q(float);
            }
            out.push(EmojiState {
                emoji: emoji.to_owned(),
                center_x_q: q(cx),
                center_y_q: q(cy),
                size_q: q(rect.h),
                transform,
            });
        };
        let unit_of = |i: usize| {
            state
                .words
                .iter()
                .find(|s| s.word == i)
                .map(|s| s.transform)
        };
        match self.config.modes.display_emojis {
            DisplayEmojis::None => {}
            DisplayEmojis::Word => {
                for w in &self.words[page.words.clone()] {
                    if let (Some(e), Some(r), true, Some(unit)) =
                        (&w.emoji, w.emoji_rect, t_s >= w.start_s, unit_of(w.index))
                    {
                        push(e, r, w.start_s, unit);
                    }
                }
            }
            DisplayEmojis::Line => {
                for line in &self.lines[page.lines.clone()] {
                    let latest = self.words[line.words.clone()]
                        .iter()
                        .rev()
                        .find(|w| w.emoji.is_some() && t_s >= w.start_s && drawn(w.index));
                    if let (Some(w), Some(r)) = (latest, line.emoji_rect)
                        && let (Some(e), Some(unit)) = (&w.emoji, unit_of(w.index))
                    {
                        push(e, r, w.start_s, unit);
                    }
                }
            }
            DisplayEmojis::Page => {
                let latest = self.words[page.words.clone()]
                    .iter()
                    .rev()
                    .find(|w| w.emoji.is_some() && t_s >= w.start_s && drawn(w.index));
                if let (Some(w), Some(r)) = (latest, page.emoji_rect)
                    && let (Some(e), Some(unit)) = (&w.emoji, unit_of(w.index))
                {
                    push(e, r, w.start_s, unit);
                }
            }
        }
        state.emojis = out;
    }
}

#[cfg(test)]
mod reach_tests {
    use super::*;

    #[test]
    fn effects_stay_within_their_reach() {
        for effect in EffectType::ALL {
            let reach = EffectReach::of(*effect);
            for k in 0..=100 {
                let p = k as f32 / 100.0;
                let t = effect_transform(*effect, Some(p), (0.0, 0.0), 10.0);
                if t.opacity == 0 {
                    continue;
                }
                assert!(t.scale() <= 1.0 + reach.grow + 1e-3, "{effect:?} at {p}");
                assert!(
                    q_to_px(t.dx_q).abs() <= reach.dx_em * 10.0 + 0.01,
                    "{effect:?}"
                );
                // Upward travel only: SLIDE's downward start is faded in.
                assert!(-q_to_px(t.dy_q) <= reach.dy_em * 10.0 + 0.01, "{effect:?}");
            }
        }
    }
}
