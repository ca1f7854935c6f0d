//! Snapping model word timings onto the speech regions of the signal.
//!
//! DTW gives every boundary between two words a time that is right to within a few hundred
//! milliseconds but often lands in the wrong place (a word's end in the following silence, the
//! next word's start before its onset). The signal knows exactly where sound starts and stops.
//! This module chooses, for every boundary, either a silence between two regions (the earlier
//! word ends at the silence's start, the next starts at its end) or a point inside a region
//! (words spoken without a pause), by dynamic programming over all boundaries at once: order is
//! kept, every word covers some sound, boundaries stay close to the model's estimates, and a
//! word may not swallow a long silence. Starts therefore sit on onsets, never inside silence.

use crate::speech::Region;

/// The model's guesses for one word, in seconds.
///
/// Ends come from DTW, which marks where the alignment moves on to the next token: measured on
/// exact-boundary speech, that is 0-0.6 s after the true end and almost never before it. A
/// start is either the previous token's DTW time (the same late bias) or, for a segment's first
/// word, whisper's timestamp token, which errs both ways.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Estimate {
    pub(crate) start_s: f64,
    pub(crate) end_s: f64,
    pub(crate) start_from_dtw: bool,
    /// Characters of the word (letters and digits): a floor on how short it can be spoken.
    pub(crate) letters: u32,
}

/// Tuning of [`align`]; every cost is in seconds of boundary displacement. The defaults were
/// chosen with `scripts/bench-transcribe`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AlignParams {
    /// Cost of putting a boundary inside a region rather than in a silence.
    pub(crate) inside_penalty_s: f64,
    /// Where inside a region a boundary goes: this much before the DTW estimate.
    pub(crate) inside_shift_s: f64,
    /// DTW estimates may be this much late for free.
    pub(crate) late_allowance_s: f64,
    /// DTW estimates may be this much early for free (frame jitter).
    pub(crate) early_allowance_s: f64,
    /// Cost per second of moving a boundary later than a DTW estimate (rarely right).
    pub(crate) early_weight: f64,
    /// Cost per second of moving a boundary earlier than a DTW estimate, beyond the allowance
    /// and up to `late_knee_s`.
    pub(crate) late_weight: f64,
    /// DTW is seldom later than this: moving a boundary further costs `far_late_weight`.
    pub(crate) late_knee_s: f64,
    pub(crate) far_late_weight: f64,
    /// Cost per second of displacement within the allowances: among otherwise equal choices,
    /// the nearest to the estimate wins.
    pub(crate) within_allowance_weight: f64,
    /// Silence a word may contain for free (stop closures, hesitations).
    pub(crate) free_inner_silence_s: f64,
    /// Cost per second of silence beyond that inside one word.
    pub(crate) inner_silence_weight: f64,
    /// Cost per second of sound left outside every word (before the first, after the last).
    pub(crate) uncovered_weight: f64,
    /// The same for sound within `free_inner_silence_s` of the first or last word.
    pub(crate) adjacent_uncovered_weight: f64,
    /// Shortest word produced.
    pub(crate) min_word_s: f64,
    /// A word shorter than this per letter (up to `plausible_cap_s`) is implausibly fast.
    pub(crate) plausible_s_per_letter: f64,
    /// The plausible length never asks for more than this.
    pub(crate) plausible_cap_s: f64,
    /// Cost per second a word falls short of its plausible length.
    pub(crate) too_short_weight: f64,
}

impl Default for AlignParams {
    fn default() -> Self {
        Self {
            inside_penalty_s: 0.4,
            inside_shift_s: 0.0,
            late_allowance_s: 0.15,
            early_allowance_s: 0.05,
            early_weight: 2.0,
            late_weight: 0.5,
            late_knee_s: 0.45,
            far_late_weight: 2.0,
            within_allowance_weight: 0.05,
            free_inner_silence_s: 0.12,
            inner_silence_weight: 4.0,
            uncovered_weight: 0.5,
            adjacent_uncovered_weight: 4.0,
            min_word_s: 0.04,
            plausible_s_per_letter: 0.045,
            plausible_cap_s: 0.35,
            too_short_weight: 4.0,
        }
    }
}

/// One time guess for a boundary and how it errs.
#[derive(Debug, Clone, Copy)]
struct Guess {
    time_s: f64,
    late_biased: bool,
}

impl Guess {
    /// Cost of the boundary lying anywhere in `[from, to]` (a point when `from == to`).
    fn cost(self, (from, to): (f64, f64), params: &AlignParams) -> f64 {
        if !self.late_biased {
            return distance_to(self.time_s, (from, to));
        }
        let slope = params.within_allowance_weight;
        if self.time_s < from {
            let early = from - self.time_s;
            (early - params.early_allowance_s).max(0.0) * params.early_weight
                + early.min(params.early_allowance_s) * slope
        } else if self.time_s > to {
            let late = self.time_s - to;
            (late.min(params.late_knee_s) - params.late_allowance_s).max(0.0) * params.late_weight
                + (late - params.late_knee_s).max(0.0) * params.far_late_weight
                + late.min(params.late_allowance_s) * slope
        } else {
            0.0
        }
    }

    fn centre(self, params: &AlignParams) -> f64 {
        if self.late_biased {
            self.time_s - params.inside_shift_s
        } else {
            self.time_s
        }
    }
}

/// Boundary positions: slot `2j` is the silence before region `j` (`2m` the one after the last
/// region), slot `2j + 1` a point inside region `j`.
struct Slots<'a> {
    regions: &'a [Region],
}

impl Slots<'_> {
    fn count(&self) -> usize {
        2 * self.regions.len() + 1
    }

    fn is_inside(slot: usize) -> bool {
        slot % 2 == 1
    }

    /// The silence of gap slot `slot`: from the end of the region before to the next onset.
    fn gap(&self, slot: usize) -> (f64, f64) {
        let j = slot / 2;
        let from = if j == 0 {
            f64::NEG_INFINITY
        } else {
            self.regions[j - 1].end_s
        };
        let to = self.regions.get(j).map_or(f64::INFINITY, |r| r.start_s);
        (from, to)
    }

    fn excess_silence(&self, slot: usize, params: &AlignParams) -> f64 {
        let (from, to) = self.gap(slot);
        if from.is_finite() && to.is_finite() {
            (to - from - params.free_inner_silence_s).max(0.0) * params.inner_silence_weight
        } else {
            0.0
        }
    }
}

fn distance_to(time: f64, (from, to): (f64, f64)) -> f64 {
    if time < from {
        from - time
    } else if time > to {
        time - to
    } else {
        0.0
    }
}

/// Which side(s) of a boundary exist: the first boundary only starts a word, the last only ends
/// one.
#[derive(Clone, Copy, PartialEq)]
enum Role {
    First,
    Between,
    Last,
}

/// Start and end times for `words` (in order), snapped onto `regions` (in order, disjoint).
///
/// Returns `None` when there are words but no regions: the model heard words in silence.
pub(crate) fn align(
    words: &[Estimate],
    regions: &[Region],
    params: &AlignParams,
) -> Option<Vec<(f64, f64)>> {
    if words.is_empty() {
        return Some(Vec::new());
    }
    if regions.is_empty() {
        return None;
    }
    let slots = Slots { regions };
    let n_slots = slots.count();
    let n_bounds = words.len() + 1;

    // cumulative[s]: excess silence of all gap slots before slot s.
    let mut cumulative = vec![0.0; n_slots + 1];
    for s in 0..n_slots {
        let own = if Slots::is_inside(s) {
            0.0
        } else {
            slots.excess_silence(s, params)
        };
        cumulative[s + 1] = cumulative[s] + own;
    }

    // Sound before region j (prefix sums), for the cost of sound no word covers.
    let mut sound_before = vec![0.0; regions.len() + 1];
    for (j, r) in regions.iter().enumerate() {
        sound_before[j + 1] = sound_before[j] + r.duration_s();
    }
    let total_sound = sound_before[regions.len()];

    let estimates_of = |b: usize| -> (Role, Vec<Guess>) {
        let end = |w: &Estimate| Guess {
            time_s: w.end_s,
            late_biased: true,
        };
        let start = |w: &Estimate| Guess {
            time_s: w.start_s,
            late_biased: w.start_from_dtw,
        };
        if b == 0 {
            (Role::First, vec![start(&words[0])])
        } else if b == words.len() {
            (Role::Last, vec![end(&words[b - 1])])
        } else {
            (Role::Between, vec![end(&words[b - 1]), start(&words[b])])
        }
    };
    let uncovered = |role: Role, slot: usize| -> f64 {
        let j = slot / 2;
        let seconds = match role {
            Role::First => sound_before[j],
            Role::Last if Slots::is_inside(slot) => total_sound - sound_before[j + 1],
            Role::Last => total_sound - sound_before[j],
            Role::Between => 0.0,
        };
        // Sound just past the first or last word, across a pause no longer than a word's own
        // (a release burst, a trailing fricative), is almost surely part of that word.
        let adjacent = match role {
            Role::First if !Slots::is_inside(slot) && j >= 1 => Some(j - 1),
            Role::Last if !Slots::is_inside(slot) && j < regions.len() && j >= 1 => Some(j),
            _ => None,
        };
        let adjacent_s = adjacent.map_or(0.0, |k| {
            let pause = if k < j {
                regions[j].start_s - regions[k].end_s
            } else {
                regions[k].start_s - regions[j - 1].end_s
            };
            if pause <= params.free_inner_silence_s {
                regions[k].duration_s()
            } else {
                0.0
            }
        });
        seconds * params.uncovered_weight
            + adjacent_s * (params.adjacent_uncovered_weight - params.uncovered_weight)
    };
    let boundary_cost = |b: usize, slot: usize| -> Option<(f64, f64)> {
        let (role, estimates) = estimates_of(b);
        if Slots::is_inside(slot) {
            let region = regions[slot / 2];
            let centre =
                estimates.iter().map(|g| g.centre(params)).sum::<f64>() / estimates.len() as f64;
            let t = centre.clamp(region.start_s, region.end_s);
            let cost = estimates
                .iter()
                .map(|g| g.cost((t, t), params))
                .sum::<f64>()
                + params.inside_penalty_s
                + uncovered(role, slot);
            return Some((cost, t));
        }
        let j = slot / 2;
        let valid = match role {
            Role::First => j < regions.len(),
            Role::Between => j >= 1 && j < regions.len(),
            Role::Last => j >= 1,
        };
        if !valid {
            return None;
        }
        let gap = slots.gap(slot);
        let cost =
            estimates.iter().map(|g| g.cost(gap, params)).sum::<f64>() + uncovered(role, slot);
        Some((cost, f64::NAN))
    };

    // (end of the word before, start of the word after) for boundary b at slot s.
    let sides = |b: usize, s: usize, inside_time: &[Vec<f64>]| -> (f64, f64) {
        if Slots::is_inside(s) {
            (inside_time[b][s], inside_time[b][s])
        } else {
            slots.gap(s)
        }
    };
    let too_short = |word: &Estimate, seconds: f64| -> f64 {
        let plausible =
            (f64::from(word.letters) * params.plausible_s_per_letter).min(params.plausible_cap_s);
        (plausible - seconds).max(0.0) * params.too_short_weight
    };

    // cost[b][s]: best total with boundary b at slot s; back[b][s]: the slot of boundary b-1.
    // Word b-1 lies between boundaries b-1 and b, so its length depends on both slots: the
    // transition looks at every earlier slot (and the same one, for words sharing a region).
    let mut cost = vec![vec![f64::INFINITY; n_slots]; n_bounds];
    let mut back = vec![vec![usize::MAX; n_slots]; n_bounds];
    let mut inside_time = vec![vec![f64::NAN; n_slots]; n_bounds];
    for s in 0..n_slots {
        if let Some((c, t)) = boundary_cost(0, s) {
            cost[0][s] = c;
            inside_time[0][s] = t;
        }
    }
    for b in 1..n_bounds {
        let word = &words[b - 1];
        for s in 0..n_slots {
            let Some((c, t)) = boundary_cost(b, s) else {
                continue;
            };
            inside_time[b][s] = t;
            let end = sides(b, s, &inside_time).0;
            let last_prev = if Slots::is_inside(s) { s + 1 } else { s };
            let mut best = (f64::INFINITY, usize::MAX);
            for prev in 0..last_prev {
                let before = cost[b - 1][prev];
                if !before.is_finite() {
                    continue;
                }
                let start = sides(b - 1, prev, &inside_time).1;
                let total =
                    before + cumulative[s] - cumulative[prev + 1] + too_short(word, end - start);
                if total < best.0 {
                    best = (total, prev);
                }
            }
            if best.1 != usize::MAX {
                cost[b][s] = c + best.0;
                back[b][s] = best.1;
            }
        }
    }

    let last = n_bounds - 1;
    let mut slot = (0..n_slots)
        .filter(|&s| cost[last][s].is_finite())
        .min_by(|&a, &b| cost[last][a].total_cmp(&cost[last][b]))?;
    let mut chosen = vec![0; n_bounds];
    for b in (0..n_bounds).rev() {
        chosen[b] = slot;
        if b > 0 {
            slot = back[b][slot];
        }
    }

    let at: Vec<(f64, f64)> = chosen
        .iter()
        .enumerate()
        .map(|(b, &s)| sides(b, s, &inside_time))
        .collect();
    let mut times: Vec<(f64, f64)> = (0..words.len()).map(|i| (at[i].1, at[i + 1].0)).collect();
    enforce_min_length(&mut times, params.min_word_s);
    Some(times)
}

/// Words sharing a region can come out too short or reversed: give each the minimum length,
/// pushing later boundaries forward (never before the word's own start).
fn enforce_min_length(times: &mut [(f64, f64)], min_word_s: f64) {
    for i in 0..times.len() {
        if i > 0 && times[i].0 < times[i - 1].1 {
            times[i].0 = times[i - 1].1;
        }
        if times[i].1 < times[i].0 + min_word_s {
            times[i].1 = times[i].0 + min_word_s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start_s: f64, end_s: f64) -> Region {
        Region { start_s, end_s }
    }

    fn e(start_s: f64, end_s: f64) -> Estimate {
        Estimate {
            start_s,
            end_s,
            start_from_dtw: true,
            letters: 3,
        }
    }

    #[test]
    fn snaps_late_ends_into_the_right_silences() {
        let regions = [r(0.5, 0.9), r(1.0, 1.3), r(1.8, 2.4)];
        // DTW-like: each end late into the next word, first start early.
        let words = [e(0.2, 1.05), e(1.05, 1.5), e(1.5, 2.6)];
        let times = align(&words, &regions, &AlignParams::default()).unwrap();
        assert_eq!(times, vec![(0.5, 0.9), (1.0, 1.3), (1.8, 2.4)]);
    }

    #[test]
    fn words_without_a_pause_share_a_region() {
        let regions = [r(0.5, 1.5)];
        let words = [e(0.5, 0.9), e(0.9, 1.5)];
        let times = align(&words, &regions, &AlignParams::default()).unwrap();
        let expected = [(0.5, 0.9), (0.9, 1.5)];
        for (got, want) in times.iter().zip(expected) {
            assert!(
                (got.0 - want.0).abs() < 1e-9 && (got.1 - want.1).abs() < 1e-9,
                "{times:?}"
            );
        }
    }

    #[test]
    fn a_word_does_not_swallow_a_long_pause() {
        // The second word's estimate starts 2 s early, in the silence.
        let regions = [r(0.0, 0.4), r(3.0, 3.5)];
        let words = [e(0.0, 0.5), e(1.0, 3.6)];
        let times = align(&words, &regions, &AlignParams::default()).unwrap();
        assert_eq!(times, vec![(0.0, 0.4), (3.0, 3.5)]);
    }

    fn close(got: &[(f64, f64)], want: &[(f64, f64)]) -> bool {
        got.len() == want.len()
            && got
                .iter()
                .zip(want)
                .all(|(g, w)| (g.0 - w.0).abs() < 1e-9 && (g.1 - w.1).abs() < 1e-9)
    }

    fn lettered(start_s: f64, end_s: f64, letters: u32) -> Estimate {
        Estimate {
            letters,
            ..e(start_s, end_s)
        }
    }

    #[test]
    fn a_late_estimate_does_not_squeeze_a_long_word_into_a_sliver() {
        // "for the public library": DTW puts the end of "the" inside "public", whose stop
        // closure leaves a 40 ms sliver of sound that a six-letter word cannot be.
        let regions = [
            r(8.284, 8.649),
            r(8.715, 8.967),
            r(9.45, 9.781),
            r(9.821, 9.866),
            r(9.973, 10.551),
        ];
        let words = [
            lettered(8.341, 8.901, 3),
            lettered(8.901, 9.721, 3),
            lettered(9.721, 10.061, 6),
            lettered(10.061, 10.661, 7),
        ];
        let times = align(&words, &regions, &AlignParams::default()).unwrap();
        let want = [
            (8.284, 8.649),
            (8.715, 8.967),
            (9.45, 9.866),
            (9.973, 10.551),
        ];
        assert!(close(&times, &want), "{times:?}");
    }

    #[test]
    fn of_two_pauses_equally_cheap_the_nearer_to_the_estimate_wins() {
        // "bicycle path": a 38 ms closure inside "bicycle", a 48 ms pause after it.
        let regions = [r(6.229, 6.599), r(6.637, 6.798), r(6.846, 7.159)];
        let words = [lettered(6.2, 6.78, 7), lettered(6.78, 7.2, 4)];
        let times = align(&words, &regions, &AlignParams::default()).unwrap();
        assert!(
            close(&times, &[(6.229, 6.798), (6.846, 7.159)]),
            "{times:?}"
        );
    }

    #[test]
    fn a_release_burst_after_the_last_word_belongs_to_it() {
        // "lunch": the affricate's burst follows a 38 ms closure; the estimate stops before it.
        let regions = [r(8.07, 8.507), r(8.937, 9.208), r(9.246, 9.335)];
        let words = [lettered(7.9, 8.6, 6), lettered(8.6, 9.201, 5)];
        let times = align(&words, &regions, &AlignParams::default()).unwrap();
        assert!(close(&times, &[(8.07, 8.507), (8.937, 9.335)]), "{times:?}");
    }

    #[test]
    fn a_word_is_not_pulled_a_second_back_across_a_pause() {
        // JFK twice with a 1 s pause: room noise makes each take one region; DTW starts the
        // second take's "And" at the first one's last word and ends it 0.65 s into the second.
        let regions = [r(0.072, 11.0), r(12.072, 23.0)];
        let words = [
            lettered(9.92, 10.22, 4),
            lettered(10.22, 10.74, 7),
            lettered(10.74, 12.72, 3),
            lettered(12.72, 13.06, 2),
        ];
        let times = align(&words, &regions, &AlignParams::default()).unwrap();
        assert!((times[2].0 - 12.072).abs() < 1e-9, "{times:?}");
        assert!((times[1].1 - 11.0).abs() < 1e-9, "{times:?}");
    }

    #[test]
    fn never_zero_length_and_no_words_without_sound() {
        let regions = [r(1.0, 1.05)];
        let words = [e(1.0, 1.0), e(1.0, 1.0), e(1.0, 1.0)];
        let times = align(&words, &regions, &AlignParams::default()).unwrap();
        for (i, &(s, t)) in times.iter().enumerate() {
            assert!(t - s >= 0.04 - 1e-9, "{times:?}");
            if i > 0 {
                assert!(s >= times[i - 1].1 - 1e-9, "{times:?}");
            }
        }
        assert_eq!(align(&words, &[], &AlignParams::default()), None);
    }
}
