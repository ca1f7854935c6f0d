//! Cutting dead air and fillers out of a video: which spans go, and where the words land after.
//!
//! The plan is made from the words (with their `filler` marks) and the regions where the audio
//! has sound; whisper's guesses at pauses play no part.
//!
//! - Kept sound is the sound regions and the kept words, less the fillers being cut.
//! - Each stretch without kept sound (a *gap*) is cut when it holds a filler being cut or is
//!   longer than the pause limit `P`. What stays of it is the silence around its fillers, at
//!   most `P`, split evenly between its two edges; a gap at the start of the media keeps its
//!   silence just before the speech, one at the end just after it.
//! - Cuts are moved onto frame boundaries, their lengths rounded with the error carried from one
//!   cut to the next, so the output is shorter than the input by the planned amount to within a
//!   frame however many cuts there are.
//!
//! ```
//! use caption_core::{CutPlan, CutRules, Word};
//!
//! // "Hello" [1.5 s of silence] "um" [0.1 s] "world", at 25 frames a second.
//! let mut words = vec![
//!     Word::new(0.0, 0.5, "Hello"),
//!     Word::new(2.0, 2.3, "um"),
//!     Word::new(2.4, 3.0, "world"),
//! ];
//! words[1].filler = true;
//! let rules = CutRules { pause_s: Some(0.4), fillers: true };
//! let plan = CutPlan::plan(&words, &[], &rules, 0.02, 3.0);
//! // The gap from 0.5 to 2.4 s has 1.6 s of silence around its filler and keeps 0.4 s of it:
//! // 0.3 s after "Hello" (there is only 0.1 s before "world").
//! let cut = plan.cuts()[0];
//! assert!((cut.start_s - 0.8).abs() < 1e-9 && (cut.end_s - 2.3).abs() < 1e-9);
//! let retimed = plan.retime(&words);
//! let kept: Vec<&str> = retimed.iter().map(|w| w.word.as_str()).collect();
//! assert_eq!(kept, ["Hello", "world"]);
//! assert!((retimed[1].start - 0.9).abs() < 1e-9);
//! ```

use crate::config::Config;
use crate::word::Word;

/// A stretch of the media, seconds from its start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Start, seconds.
    pub start_s: f64,
    /// End, seconds; after `start_s`.
    pub end_s: f64,
}

impl Span {
    /// The span from `start_s` to `end_s`.
    pub fn new(start_s: f64, end_s: f64) -> Self {
        Self { start_s, end_s }
    }

    /// Its length, seconds.
    pub fn duration_s(&self) -> f64 {
        self.end_s - self.start_s
    }
}

/// What to cut.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CutRules {
    /// Pauses longer than this many seconds are shortened to it; `None` leaves pauses alone.
    pub pause_s: Option<f64>,
    /// Words marked `filler` are cut with their sound.
    pub fillers: bool,
}

impl CutRules {
    /// The config's `cutPausesS` and `cutFillers`.
    pub fn from_config(config: &Config) -> Self {
        Self {
            pause_s: config.cut_pauses_s.map(f64::from),
            fillers: config.cut_fillers,
        }
    }

    /// Whether nothing is to be cut.
    pub fn is_empty(&self) -> bool {
        self.pause_s.is_none() && !self.fillers
    }
}

/// The spans cut out of a media file, on its frame boundaries, sorted and apart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CutPlan {
    cuts: Vec<Span>,
}

/// A word inside cuts for at least this fraction of its length goes with them.
const DROP_INSIDE_FRACTION: f64 = 0.5;

impl CutPlan {
    /// The cuts `rules` ask for in a media file of `duration_s` seconds whose frames last
    /// `frame_s`, given its `words` (in time order) and the regions where it has `sound` (in
    /// time order; empty when unknown, then the words alone count as sound).
    pub fn plan(
        words: &[Word],
        sound: &[Span],
        rules: &CutRules,
        frame_s: f64,
        duration_s: f64,
    ) -> Self {
        if rules.is_empty() || duration_s.is_nan() || duration_s <= 0.0 {
            return Self::default();
        }
        let is_cut = |w: &Word| rules.fillers && w.filler;
        let fillers: Vec<Span> = words
            .iter()
            .filter(|w| is_cut(w) && w.end > w.start)
            .map(|w| Span::new(w.start, w.end))
            .collect();
        let kept_words = words
            .iter()
            .filter(|w| !is_cut(w) && w.end > w.start)
            .map(|w| Span::new(w.start, w.end));
        let mut kept = subtract(&union(sound.iter().copied()), &fillers);
        kept = union(kept.into_iter().chain(kept_words));
        let kept: Vec<Span> = kept
            .into_iter()
            .map(|s| Span::new(s.start_s.max(0.0), s.end_s.min(duration_s)))
            .filter(|s| s.end_s > s.start_s)
            .collect();

        let mut ideal = Vec::new();
        for gap in gaps(&kept, duration_s) {
            if let Some(cut) = gap_cut(gap, &fillers, rules, duration_s) {
                ideal.push(cut);
            }
        }
        Self {
            cuts: snap_to_frames(&ideal, frame_s, duration_s),
        }
    }

    /// The plan that cuts exactly `cuts` (sorted and merged here; empty ones dropped).
    pub fn from_cuts(cuts: &[Span]) -> Self {
        Self {
            cuts: union(cuts.iter().copied().filter(|s| s.end_s > s.start_s)),
        }
    }

    /// The spans cut, in order.
    pub fn cuts(&self) -> &[Span] {
        &self.cuts
    }

    /// Whether nothing is cut.
    pub fn is_empty(&self) -> bool {
        self.cuts.is_empty()
    }

    /// Seconds removed in all.
    pub fn removed_s(&self) -> f64 {
        self.cuts.iter().map(Span::duration_s).sum()
    }

    /// Where the input's time `t_s` lands in the output; a time inside a cut lands where the
    /// cut was.
    pub fn map(&self, t_s: f64) -> f64 {
        let removed: f64 = self
            .cuts
            .iter()
            .take_while(|c| c.start_s < t_s)
            .map(|c| c.end_s.min(t_s) - c.start_s)
            .sum();
        t_s - removed
    }

    /// `words` on the output's timeline: a word at least half inside cuts goes, the others
    /// move back by what was cut before them (and shrink by what was cut inside them).
    pub fn retime(&self, words: &[Word]) -> Vec<Word> {
        words
            .iter()
            .filter(|w| {
                let inside: f64 = self
                    .cuts
                    .iter()
                    .map(|c| (c.end_s.min(w.end) - c.start_s.max(w.start)).max(0.0))
                    .sum();
                let length = w.end - w.start;
                if length > 0.0 {
                    inside < DROP_INSIDE_FRACTION * length
                } else {
                    !self
                        .cuts
                        .iter()
                        .any(|c| c.start_s < w.start && w.start < c.end_s)
                }
            })
            .map(|w| {
                let mut word = w.clone();
                word.start = self.map(w.start);
                word.end = self.map(w.end).max(word.start);
                word
            })
            .collect()
    }
}

/// `spans` merged where they overlap or touch, in order.
fn union(spans: impl Iterator<Item = Span>) -> Vec<Span> {
    let mut sorted: Vec<Span> = spans
        .filter(|s| s.start_s.is_finite() && s.end_s.is_finite() && s.end_s > s.start_s)
        .collect();
    sorted.sort_by(|a, b| a.start_s.total_cmp(&b.start_s));
    let mut merged: Vec<Span> = Vec::with_capacity(sorted.len());
    for span in sorted {
        match merged.last_mut() {
            Some(last) if span.start_s <= last.end_s => last.end_s = last.end_s.max(span.end_s),
            _ => merged.push(span),
        }
    }
    merged
}

/// The parts of `spans` (merged, in order) outside every one of `holes`.
fn subtract(spans: &[Span], holes: &[Span]) -> Vec<Span> {
    let holes = union(holes.iter().copied());
    let mut out = Vec::new();
    for span in spans {
        let mut from = span.start_s;
        for hole in holes
            .iter()
            .filter(|h| h.end_s > span.start_s && h.start_s < span.end_s)
        {
            if hole.start_s > from {
                out.push(Span::new(from, hole.start_s));
            }
            from = from.max(hole.end_s);
        }
        if span.end_s > from {
            out.push(Span::new(from, span.end_s));
        }
    }
    out
}

/// The stretches of `0..duration_s` outside `kept` (merged, in order).
fn gaps(kept: &[Span], duration_s: f64) -> Vec<Span> {
    let mut out = Vec::new();
    let mut from = 0.0;
    for span in kept {
        if span.start_s > from {
            out.push(Span::new(from, span.start_s));
        }
        from = from.max(span.end_s);
    }
    if duration_s > from {
        out.push(Span::new(from, duration_s));
    }
    out
}

/// What to cut of `gap`, if anything.
fn gap_cut(gap: Span, fillers: &[Span], rules: &CutRules, duration_s: f64) -> Option<Span> {
    let inside: Vec<&Span> = fillers
        .iter()
        .filter(|f| f.end_s > gap.start_s && f.start_s < gap.end_s)
        .collect();
    let at_start = gap.start_s <= 0.0;
    let at_end = gap.end_s >= duration_s;
    if at_start && at_end {
        // No sound at all: nothing to tighten around.
        return None;
    }
    // The silence at the gap's two edges, outside its fillers (all of it is both when it
    // holds none), and how much of it stays.
    let (left, right, silence) = match (inside.first(), inside.last()) {
        (Some(first), Some(last)) => {
            let left = (first.start_s - gap.start_s).max(0.0);
            let right = (gap.end_s - last.end_s).max(0.0);
            (left, right, left + right)
        }
        _ => (gap.duration_s(), gap.duration_s(), gap.duration_s()),
    };
    let keep = rules.pause_s.map_or(silence, |p| silence.min(p));
    if gap.duration_s() - keep <= 1e-9 {
        return None;
    }
    let (keep_left, keep_right) = if at_start {
        let keep_right = right.min(keep);
        (left.min(keep - keep_right), keep_right)
    } else if at_end {
        let keep_left = left.min(keep);
        (keep_left, right.min(keep - keep_left))
    } else {
        let keep_left = left.min(keep / 2.0);
        let keep_right = right.min(keep - keep_left);
        (left.min(keep - keep_right), keep_right)
    };
    let cut = Span::new(gap.start_s + keep_left, gap.end_s - keep_right);
    (cut.duration_s() > 1e-9).then_some(cut)
}

/// `cuts` (in order, apart) moved onto the frame grid of `frame_s`, each centred where it was,
/// their lengths rounded to whole frames with the rounding error carried to the next.
fn snap_to_frames(cuts: &[Span], frame_s: f64, duration_s: f64) -> Vec<Span> {
    if frame_s.is_nan() || frame_s <= 0.0 {
        return cuts.to_vec();
    }
    let mut out: Vec<Span> = Vec::with_capacity(cuts.len());
    let mut ideal_total = 0.0;
    let mut snapped_total = 0.0;
    for cut in cuts {
        ideal_total += cut.duration_s();
        let frames = ((ideal_total - snapped_total) / frame_s).round().max(0.0);
        if frames < 1.0 {
            continue;
        }
        let length = frames * frame_s;
        let centre = (cut.start_s + cut.end_s) / 2.0;
        let floor = out.last().map_or(0.0, |c| c.end_s);
        let mut start = ((centre - length / 2.0) / frame_s).round() * frame_s;
        // A cut that reaches the media's end ends there.
        if cut.end_s >= duration_s {
            start = ((duration_s - length) / frame_s).round() * frame_s;
        }
        let start = start.max(floor).max(0.0);
        let end = (start + length).min(duration_s);
        if end > start {
            snapped_total += end - start;
            out.push(Span::new(start, end));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(start: f64, end: f64, text: &str, filler: bool) -> Word {
        let mut w = Word::new(start, end, text);
        w.filler = filler;
        w
    }

    fn approx(spans: &[Span]) -> Vec<(f64, f64)> {
        spans
            .iter()
            .map(|s| {
                (
                    (s.start_s * 1e6).round() / 1e6,
                    (s.end_s * 1e6).round() / 1e6,
                )
            })
            .collect()
    }

    const PAUSES: CutRules = CutRules {
        pause_s: Some(0.4),
        fillers: false,
    };

    #[test]
    fn nothing_to_cut_gives_an_empty_plan() {
        let words = [word(0.0, 1.0, "a", false), word(1.2, 2.0, "b", false)];
        assert!(CutPlan::plan(&words, &[], &CutRules::default(), 0.04, 2.0).is_empty());
        assert!(CutPlan::plan(&words, &[], &PAUSES, 0.04, 2.0).is_empty());
    }

    #[test]
    fn long_pauses_keep_the_limit_split_across_their_edges() {
        let words = [word(1.0, 2.0, "a", false), word(4.0, 5.0, "b", false)];
        let plan = CutPlan::plan(&words, &[], &PAUSES, 0.04, 7.0);
        // Leading 1 s keeps 0.4 before the speech; the 2 s pause keeps 0.2 + 0.2; the trailing
        // 2 s keep 0.4 after it.
        assert_eq!(approx(plan.cuts()), [(0.0, 0.6), (2.2, 3.8), (5.4, 7.0)]);
        assert!((plan.removed_s() - 3.8).abs() < 1e-9);
        let retimed = plan.retime(&words);
        assert!((retimed[0].start - 0.4).abs() < 1e-9);
        assert!((retimed[1].start - 1.8).abs() < 1e-9);
        assert!((retimed[1].end - 2.8).abs() < 1e-9);
    }

    #[test]
    fn sound_without_words_is_kept() {
        // A laugh between the words at 2.4–3.0 s: the pauses on either side are not too long.
        let words = [word(1.0, 2.0, "a", false), word(3.3, 4.0, "b", false)];
        let sound = [
            Span::new(1.0, 2.0),
            Span::new(2.4, 3.0),
            Span::new(3.3, 4.0),
        ];
        let plan = CutPlan::plan(&words, &sound, &PAUSES, 0.04, 4.0);
        assert_eq!(approx(plan.cuts()), [(0.0, 0.6)]);
    }

    #[test]
    fn fillers_go_with_the_silence_beyond_the_limit() {
        let words = [
            word(0.0, 1.0, "so", false),
            word(1.1, 1.5, "um", true),
            word(1.6, 2.0, "uh", true),
            word(2.1, 3.0, "yes", false),
        ];
        let fillers = CutRules {
            pause_s: None,
            fillers: true,
        };
        // Without a pause limit, the silence at the gap's edges stays (0.1 + 0.1), the fillers
        // and the silence between them go.
        let plan = CutPlan::plan(&words, &[], &fillers, 0.01, 3.0);
        assert_eq!(approx(plan.cuts()), [(1.1, 2.0)]);
        let kept: Vec<String> = plan.retime(&words).into_iter().map(|w| w.word).collect();
        assert_eq!(kept, ["so", "yes"]);
        // A filler the rules keep is sound.
        let plan = CutPlan::plan(&words, &[], &PAUSES, 0.01, 3.0);
        assert!(plan.is_empty(), "{plan:?}");
    }

    #[test]
    fn a_filler_inside_sound_regions_still_goes() {
        let words = [
            word(0.0, 1.0, "so", false),
            word(1.0, 1.4, "um", true),
            word(1.4, 2.0, "yes", false),
        ];
        let rules = CutRules {
            pause_s: Some(0.4),
            fillers: true,
        };
        let plan = CutPlan::plan(&words, &[Span::new(0.0, 2.0)], &rules, 0.02, 2.0);
        assert_eq!(approx(plan.cuts()), [(1.0, 1.4)]);
    }

    #[test]
    fn frame_rounding_does_not_add_up() {
        // Forty pauses of 0.415 s each lose 0.015 s: 0.6 s in all, which is 15 frames of 0.04 s
        // although each alone rounds to 0.
        let mut words = Vec::new();
        for i in 0..41 {
            let start = f64::from(i) * 1.415;
            words.push(word(start, start + 1.0, "w", false));
        }
        let duration = words.last().unwrap().end;
        let plan = CutPlan::plan(&words, &[], &PAUSES, 0.04, duration);
        assert!(
            (plan.removed_s() - 0.6).abs() < 0.02 + 1e-9,
            "{}",
            plan.removed_s()
        );
        for cut in plan.cuts() {
            let frames = cut.start_s / 0.04;
            assert!((frames - frames.round()).abs() < 1e-6, "{cut:?}");
            let frames = cut.duration_s() / 0.04;
            assert!((frames - frames.round()).abs() < 1e-6, "{cut:?}");
        }
    }

    #[test]
    fn map_sends_cut_times_to_the_cut() {
        let plan = CutPlan::from_cuts(&[Span::new(1.0, 2.0), Span::new(3.0, 3.5)]);
        assert_eq!(plan.map(0.5), 0.5);
        assert_eq!(plan.map(1.5), 1.0);
        assert_eq!(plan.map(2.5), 1.5);
        assert_eq!(plan.map(4.0), 2.5);
        let words = [word(0.8, 1.4, "half", false), word(0.5, 1.1, "most", false)];
        let kept: Vec<String> = plan.retime(&words).into_iter().map(|w| w.word).collect();
        assert_eq!(kept, ["most"]);
    }
}
