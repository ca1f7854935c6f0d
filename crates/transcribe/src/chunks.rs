//! Cutting long inputs into model-sized pieces at silences.
//!
//! Each piece is transcribed on its own (whisper sees at most 30 s at once). Cutting at the
//! longest silence keeps words whole, and pieces only cover audio with sound in it, so long
//! silences are never shown to the model at all.

use std::ops::Range;

use crate::speech::{Region, SAMPLE_RATE_HZ};

/// Longest piece, leaving whisper's 30 s window some room.
pub(crate) const MAX_CHUNK_S: f64 = 28.0;
/// Pieces are not cut before this much, so that the model has context.
const MIN_CUT_S: f64 = 12.0;
/// Audio kept around the outermost sounds of a piece.
const PAD_S: f64 = 0.3;

/// One piece: its time span and the regions it covers.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Chunk {
    pub(crate) start_s: f64,
    pub(crate) end_s: f64,
    pub(crate) regions: Range<usize>,
}

impl Chunk {
    pub(crate) fn samples(&self, total: usize) -> Range<usize> {
        let at = |t: f64| ((t * SAMPLE_RATE_HZ as f64).round().max(0.0) as usize).min(total);
        at(self.start_s)..at(self.end_s)
    }
}

/// Splits regions longer than a piece can hold at their quietest 100 ms, so every region fits.
pub(crate) fn split_long_regions(samples: &[f32], regions: Vec<Region>) -> Vec<Region> {
    let limit_s = MAX_CHUNK_S - 2.0 * PAD_S;
    let mut out = Vec::with_capacity(regions.len());
    for mut region in regions {
        while region.duration_s() > limit_s {
            let cut_s = quietest_point(
                samples,
                region.start_s + MIN_CUT_S,
                region.start_s + limit_s,
            );
            out.push(Region {
                start_s: region.start_s,
                end_s: cut_s,
            });
            region.start_s = cut_s;
        }
        out.push(region);
    }
    out
}

/// The middle of the quietest 100 ms of `samples` between `from_s` and `to_s`.
pub(crate) fn quietest_point(samples: &[f32], from_s: f64, to_s: f64) -> f64 {
    let window = SAMPLE_RATE_HZ / 10;
    let hop = SAMPLE_RATE_HZ / 100;
    let from = (from_s * SAMPLE_RATE_HZ as f64) as usize;
    let to = ((to_s * SAMPLE_RATE_HZ as f64) as usize).min(samples.len().saturating_sub(window));
    let mut best = (f32::INFINITY, to_s);
    let mut at = from;
    while at < to {
        let energy: f32 = samples[at..at + window].iter().map(|x| x * x).sum();
        if energy < best.0 {
            best = (energy, (at + window / 2) as f64 / SAMPLE_RATE_HZ as f64);
        }
        at += hop;
    }
    best.1
}

/// Groups `regions` (each at most `MAX_CHUNK_S - 2 * PAD_S` long) into pieces of at most
/// `MAX_CHUNK_S`, cutting at the longest silence once a piece has `MIN_CUT_S`.
pub(crate) fn plan(regions: &[Region], total_s: f64) -> Vec<Chunk> {
    let mut chunks = Vec::new();
    let mut first = 0;
    while first < regions.len() {
        let start_s = regions[first].start_s;
        let mut last = first;
        while last + 1 < regions.len()
            && regions[last + 1].end_s - start_s <= MAX_CHUNK_S - 2.0 * PAD_S
        {
            last += 1;
        }
        if last + 1 < regions.len() {
            // Cut at the longest silence after MIN_CUT_S (or anywhere, if none that late).
            let gap = |k: usize| regions[k + 1].start_s - regions[k].end_s;
            let late: Vec<usize> = (first..last)
                .filter(|&k| regions[k].end_s - start_s >= MIN_CUT_S)
                .collect();
            let candidates = if late.is_empty() {
                (first..last).collect()
            } else {
                late
            };
            let best = candidates
                .into_iter()
                .max_by(|&a, &b| gap(a).total_cmp(&gap(b)));
            if let Some(best) = best.filter(|&b| gap(b) > gap(last)) {
                last = best;
            }
        }
        chunks.push((first, last));
        first = last + 1;
    }

    chunks
        .iter()
        .map(|&(a, b)| {
            let before = if a == 0 {
                0.0
            } else {
                (regions[a - 1].end_s + regions[a].start_s) / 2.0
            };
            let after = regions
                .get(b + 1)
                .map_or(total_s, |next| (regions[b].end_s + next.start_s) / 2.0);
            Chunk {
                start_s: (regions[a].start_s - PAD_S).max(before),
                end_s: (regions[b].end_s + PAD_S).min(after),
                regions: a..b + 1,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_fit_and_cut_at_the_longest_silence() {
        // A word every 0.5 s for 60 s, with a 1.5 s pause at 20 s and 45 s.
        let mut regions = Vec::new();
        let mut t = 0.2;
        while t < 60.0 {
            regions.push(Region {
                start_s: t,
                end_s: t + 0.3,
            });
            t += if (19.9..20.4).contains(&t) || (44.9..45.4).contains(&t) {
                1.8
            } else {
                0.5
            };
        }
        let chunks = plan(&regions, 61.0);
        assert!(chunks.len() >= 3, "{chunks:?}");
        for (i, chunk) in chunks.iter().enumerate() {
            assert!(
                chunk.end_s - chunk.start_s <= MAX_CHUNK_S + 1e-9,
                "{chunk:?}"
            );
            if i > 0 {
                assert!(chunk.start_s >= chunks[i - 1].end_s, "{chunks:?}");
                assert_eq!(chunk.regions.start, chunks[i - 1].regions.end);
            }
        }
        assert_eq!(chunks.last().map(|c| c.regions.end), Some(regions.len()));
        let first_cut = regions[chunks[0].regions.end - 1].end_s;
        assert!((20.0..21.0).contains(&first_cut), "cut at {first_cut}");
    }

    #[test]
    fn long_regions_are_split() {
        let samples = vec![0.1f32; SAMPLE_RATE_HZ * 70];
        let regions = split_long_regions(
            &samples,
            vec![Region {
                start_s: 0.0,
                end_s: 70.0,
            }],
        );
        assert!(regions.len() >= 3);
        assert!(regions.iter().all(|r| r.duration_s() <= MAX_CHUNK_S));
        let chunks = plan(&regions, 70.0);
        assert!(
            chunks
                .iter()
                .all(|c| c.end_s - c.start_s <= MAX_CHUNK_S + 1e-9),
            "{chunks:?}"
        );
    }
}
