//! Spans cut out of a burn's output: the frames that start inside one are dropped and the
//! frames after it move earlier by its length; the audio loses the same samples, with a short
//! equal-power crossfade across each cut so that nothing clicks.

use caption_core::{CutPlan, Span};

/// The crossfade across a cut, seconds: long enough that a cut through sound does not click,
/// short enough that no syllable is smeared into the next.
const FADE_S: f64 = 0.015;
/// Slack for frame times that land a hair before a cut's edge through time-base rounding.
const EDGE_SLACK_S: f64 = 1e-4;

/// Spans in seconds from the media's start, sorted, apart, each longer than zero.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Cuts {
    spans: Vec<(f64, f64)>,
}

impl Cuts {
    /// `spans` sorted and merged where they touch; empty, reversed or non-finite ones dropped
    /// (as [`CutPlan::from_cuts`] does), and none before the media's start.
    pub(super) fn new(spans: &[(f64, f64)]) -> Self {
        let spans: Vec<Span> = spans
            .iter()
            // Before `max`, which would turn a NaN start into 0.
            .filter(|(a, b)| a.is_finite() && b.is_finite())
            .map(|&(a, b)| Span::new(a.max(0.0), b))
            .collect();
        Self {
            spans: CutPlan::from_cuts(&spans)
                .cuts()
                .iter()
                .map(|s| (s.start_s, s.end_s))
                .collect(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// For a frame starting at `t_s`: `None` when a cut drops it, else the seconds removed
    /// before it (what its time moves back by).
    pub(super) fn frame(&self, t_s: f64) -> Option<f64> {
        let mut before = 0.0;
        for &(a, b) in &self.spans {
            if t_s + EDGE_SLACK_S < a {
                break;
            }
            if t_s + EDGE_SLACK_S < b {
                return None;
            }
            before += b - a;
        }
        Some(before)
    }

    /// The seconds removed before `t_s` (all of a cut `t_s` is inside counts up to `t_s`).
    pub(super) fn removed_before(&self, t_s: f64) -> f64 {
        self.spans
            .iter()
            .take_while(|(a, _)| *a < t_s)
            .map(|&(a, b)| b.min(t_s) - a)
            .sum()
    }
}

/// One cut in samples, with the length of its crossfade.
#[derive(Debug, Clone, Copy)]
struct SampleCut {
    start: i64,
    end: i64,
    fade: i64,
}

/// [`Cuts`] applied to planar audio as it streams past.
///
/// The `fade` samples before a cut are held back and mixed, equal-power, with the last `fade`
/// samples inside it: the output loses exactly the cut's length, and the sound on either side
/// meets without a step.
pub(super) struct AudioCutter {
    cuts: Vec<SampleCut>,
    next: usize,
    /// Samples from the media's start of the next sample to come.
    pos: i64,
    /// Per channel, the samples held before the current cut.
    held: Vec<Vec<f32>>,
}

impl AudioCutter {
    /// `cuts` at `rate` samples a second, for `channels` channels.
    pub(super) fn new(cuts: &Cuts, rate: u32, channels: usize) -> Self {
        let rate = f64::from(rate);
        let fade_max = (FADE_S * rate).round() as i64;
        let mut samples: Vec<SampleCut> = Vec::with_capacity(cuts.spans.len());
        let mut previous_end = 0;
        for &(a, b) in &cuts.spans {
            let start = (a * rate).round() as i64;
            let end = (b * rate).round() as i64;
            if end <= start {
                continue;
            }
            let fade = fade_max.min(end - start).min(start - previous_end).max(0);
            samples.push(SampleCut { start, end, fade });
            previous_end = end;
        }
        Self {
            cuts: samples,
            next: 0,
            pos: 0,
            held: vec![Vec::new(); channels],
        }
    }

    /// Places the stream's next sample at `pos` (samples from the media's start): the first
    /// frame's time.
    pub(super) fn seek(&mut self, pos: i64) {
        self.pos = pos;
    }

    /// Passes `planes` (one slice per channel, all as long) through the cuts, appending what
    /// stays to `out`.
    pub(super) fn process(&mut self, planes: &[&[f32]], out: &mut [Vec<f32>]) {
        let len = planes.first().map_or(0, |p| p.len());
        let mut i = 0;
        while i < len {
            let pos = self.pos + i as i64;
            let Some(cut) = self.cuts.get(self.next).copied() else {
                append(planes, i..len, out);
                break;
            };
            let hold_from = cut.start - cut.fade;
            let mix_from = cut.end - cut.fade;
            let until = |edge: i64| i + usize::try_from(edge - pos).unwrap_or(0).min(len - i);
            if pos < hold_from {
                let stop = until(hold_from);
                append(planes, i..stop, out);
                i = stop;
            } else if pos < cut.start {
                let stop = until(cut.start);
                for (held, plane) in self.held.iter_mut().zip(planes) {
                    held.extend_from_slice(&plane[i..stop]);
                }
                i = stop;
            } else if pos < mix_from {
                i = until(mix_from);
            } else if pos < cut.end {
                let stop = until(cut.end);
                for k in i..stop {
                    let j = (pos + (k - i) as i64 - mix_from) as usize;
                    let theta = (j as f64 + 0.5) / cut.fade as f64 * std::f64::consts::FRAC_PI_2;
                    let (fade_in, fade_out) = (theta.sin() as f32, theta.cos() as f32);
                    for ((o, held), plane) in out.iter_mut().zip(&self.held).zip(planes) {
                        let before = held.get(j).copied().unwrap_or(0.0);
                        o.push(before * fade_out + plane[k] * fade_in);
                    }
                }
                i = stop;
            } else {
                self.held.iter_mut().for_each(Vec::clear);
                self.next += 1;
            }
        }
        self.pos += len as i64;
    }

    /// At the end of the stream: samples held before a cut that runs past the end fade out
    /// instead of being lost.
    pub(super) fn finish(&mut self, out: &mut [Vec<f32>]) {
        let fade = self.held.first().map_or(0, Vec::len);
        for (o, held) in out.iter_mut().zip(&mut self.held) {
            for (j, x) in held.drain(..).enumerate() {
                let theta = (j as f64 + 0.5) / fade as f64 * std::f64::consts::FRAC_PI_2;
                o.push(x * theta.cos() as f32);
            }
        }
    }
}

fn append(planes: &[&[f32]], range: std::ops::Range<usize>, out: &mut [Vec<f32>]) {
    for (o, plane) in out.iter_mut().zip(planes) {
        o.extend_from_slice(&plane[range.clone()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_sorted_merged_and_cleaned() {
        let cuts = Cuts::new(&[
            (3.0, 4.0),
            (1.0, 2.0),
            (1.5, 2.5),
            (5.0, 5.0),
            (f64::NAN, 9.0),
        ]);
        assert_eq!(cuts.spans, vec![(1.0, 2.5), (3.0, 4.0)]);
        assert!((cuts.removed_before(f64::INFINITY) - 2.5).abs() < 1e-12);
    }

    #[test]
    fn frames_inside_a_cut_drop_and_later_ones_move_back() {
        let cuts = Cuts::new(&[(1.0, 2.0), (3.0, 3.5)]);
        assert_eq!(cuts.frame(0.5), Some(0.0));
        assert_eq!(cuts.frame(1.0), None);
        assert_eq!(
            cuts.frame(1.999_99),
            Some(1.0),
            "a hair before the edge counts as after"
        );
        assert_eq!(cuts.frame(1.96), None);
        assert_eq!(cuts.frame(2.0), Some(1.0));
        assert_eq!(cuts.frame(4.0), Some(1.5));
        assert!((cuts.removed_before(1.25) - 0.25).abs() < 1e-12);
        assert!((cuts.removed_before(10.0) - 1.5).abs() < 1e-12);
    }

    /// Runs `input` through the cutter in chunks of `chunk` samples.
    fn cut(cuts: &[(f64, f64)], rate: u32, input: &[f32], chunk: usize) -> Vec<f32> {
        let mut cutter = AudioCutter::new(&Cuts::new(cuts), rate, 1);
        let mut out = vec![Vec::new()];
        for piece in input.chunks(chunk) {
            cutter.process(&[piece], &mut out);
        }
        cutter.finish(&mut out);
        out.pop().unwrap()
    }

    #[test]
    fn the_output_loses_exactly_the_cut_whatever_the_chunking() {
        let rate = 1000;
        let input: Vec<f32> = (0..5000).map(|i| (i as f32 * 0.01).sin()).collect();
        let whole = cut(&[(1.0, 2.0), (3.0, 3.2)], rate, &input, input.len());
        assert_eq!(whole.len(), 5000 - 1000 - 200);
        for chunk in [1, 7, 64, 999] {
            assert_eq!(cut(&[(1.0, 2.0), (3.0, 3.2)], rate, &input, chunk), whole);
        }
        // Before the first fade the signal is untouched; after the cut it is the input's
        // later part.
        assert_eq!(&whole[..985], &input[..985]);
        assert_eq!(&whole[1000..1500], &input[2000..2500]);
    }

    #[test]
    fn a_constant_signal_crosses_a_cut_without_a_step() {
        let input = vec![0.5_f32; 48_000];
        let out = cut(&[(0.2, 0.6)], 48_000, &input, 1024);
        assert_eq!(out.len(), 48_000 - 19_200);
        // Equal-power: the sum dips at most to 1/sqrt(2) of the level mid-fade, never a click
        // (a jump between neighbours).
        let step = out
            .windows(2)
            .map(|w| (w[1] - w[0]).abs())
            .fold(0.0_f32, f32::max);
        assert!(step < 0.01, "largest step {step}");
        assert!(out.iter().all(|&x| x > 0.35 && x < 0.71 + 1e-6));
    }

    #[test]
    fn a_cut_past_the_end_fades_the_held_samples_out() {
        let input = vec![1.0_f32; 1000];
        let out = cut(&[(0.9, 5.0)], 1000, &input, 100);
        assert_eq!(out.len(), 900);
        assert!(out[899] < 0.2 && out[880] > 0.9);
    }
}
