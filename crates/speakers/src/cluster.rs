//! Segments' embeddings into speakers: average-linkage agglomeration of the segments long
//! enough to trust, then a few rounds of duration-weighted k-means over all of them.
//!
//! The number of speakers, when not given, is read from how much closer each segment comes to
//! its speaker's centroid as speakers are added ("fit": the duration-weighted mean cosine of a
//! segment to its centroid). Measured on the dialogues of `scripts/bench-speakers`: one voice
//! fits one centroid at 0.89–0.94, two or three voices at most 0.86, so 0.875 splits them.
//! Past the true count, a further speaker takes at most 0.19 of what was still unexplained
//! (two voices under music at 5 dB SNR), where a real third speaker took 0.27 or more; 0.23
//! splits them.

use crate::encoder::{EMBEDDING_DIM, Embedding, normalize};
use crate::mel::dot;

/// Segments shorter than this (seconds) join the clusters after they are formed: a short
/// segment's embedding strays too far to seed one.
const MIN_SEED_S: f64 = 1.0;
/// Fit with one centroid above which the clip has one voice.
const ONE_VOICE_FIT: f64 = 0.875;
/// Share of the remaining misfit a further speaker must take away to count.
const MIN_GAIN: f64 = 0.23;
/// Speech (seconds) each speaker must hold for a count to stand. With few segments a segment
/// alone fits its own centroid perfectly, and the fit's gain says nothing: an 8 s exchange of
/// two turns came out as four speakers, a 0.3 s word one of them.
const MIN_SPEAKER_S: f64 = 2.0;
/// Rounds of k-means after the agglomeration.
const REFINE_ROUNDS: usize = 5;

/// One stretch of speech with its embedding.
#[derive(Debug, Clone)]
pub(crate) struct Segment {
    pub(crate) embedding: Embedding,
    pub(crate) duration_s: f64,
}

/// Each segment's cluster, for `count` clusters (at most as many as segments).
pub(crate) fn cluster(segments: &[Segment], count: usize) -> Vec<usize> {
    assign(segments, count).0
}

/// The number of speakers the segments suggest, at most `max`.
pub(crate) fn estimate_count(segments: &[Segment], max: usize) -> usize {
    let max = max.min(segments.len());
    if max <= 1 {
        return 1;
    }
    let mut fit_prev = assign(segments, 1).1;
    tracing::debug!(fit = fit_prev, "one speaker");
    if fit_prev >= ONE_VOICE_FIT {
        return 1;
    }
    let mut count = 2;
    while count <= max {
        let (labels, fit) = assign(segments, count);
        let gain = (fit - fit_prev) / (1.0 - fit_prev).max(1e-6);
        let least_s = (0..count)
            .map(|k| {
                let in_k = labels.iter().zip(segments).filter(|&(&l, _)| l == k);
                in_k.map(|(_, s)| s.duration_s).sum::<f64>()
            })
            .fold(f64::INFINITY, f64::min);
        tracing::debug!(count, fit, gain, least_s, "speakers tried");
        if least_s < MIN_SPEAKER_S || (count > 2 && gain < MIN_GAIN) {
            return count - 1;
        }
        fit_prev = fit;
        count += 1;
    }
    max
}

/// Labels for `count` clusters and their fit (duration-weighted mean cosine of a segment to its
/// centroid).
fn assign(segments: &[Segment], count: usize) -> (Vec<usize>, f64) {
    let count = count.clamp(1, segments.len().max(1));
    let mut seeds: Vec<usize> = (0..segments.len())
        .filter(|&i| segments[i].duration_s >= MIN_SEED_S)
        .collect();
    if seeds.len() < count {
        seeds = (0..segments.len()).collect();
    }
    let seed_labels = agglomerate(segments, &seeds, count);
    let mut centroids = vec![[0f32; EMBEDDING_DIM]; count];
    for (&i, &label) in seeds.iter().zip(&seed_labels) {
        add(&mut centroids[label], &segments[i].embedding, 1.0);
    }
    let mut labels = vec![0; segments.len()];
    for _ in 0..=REFINE_ROUNDS {
        centroids.iter_mut().for_each(|c| normalize(c));
        for (label, segment) in labels.iter_mut().zip(segments) {
            *label = nearest(&centroids, &segment.embedding);
        }
        let mut sums = vec![[0f32; EMBEDDING_DIM]; count];
        for (&label, segment) in labels.iter().zip(segments) {
            add(
                &mut sums[label],
                &segment.embedding,
                segment.duration_s as f32,
            );
        }
        // A centroid that lost every segment keeps its place.
        for (centroid, sum) in centroids.iter_mut().zip(sums) {
            if sum.iter().any(|&v| v != 0.0) {
                *centroid = sum;
            }
        }
    }
    centroids.iter_mut().for_each(|c| normalize(c));
    let total_s: f64 = segments.iter().map(|s| s.duration_s).sum();
    let fit = labels
        .iter()
        .zip(segments)
        .map(|(&l, s)| f64::from(dot(&centroids[l], &s.embedding)) * s.duration_s)
        .sum::<f64>()
        / total_s.max(1e-9);
    (labels, fit)
}

fn add(sum: &mut Embedding, v: &Embedding, weight: f32) {
    sum.iter_mut().zip(v).for_each(|(s, x)| *s += weight * x);
}

fn nearest(centroids: &[Embedding], v: &Embedding) -> usize {
    (0..centroids.len())
        .max_by(|&a, &b| dot(&centroids[a], v).total_cmp(&dot(&centroids[b], v)))
        .unwrap_or(0)
}

/// Average-linkage agglomeration of `members` (indices into `segments`) down to `count`
/// clusters; returns each member's cluster, numbered 0.. in no particular order.
fn agglomerate(segments: &[Segment], members: &[usize], count: usize) -> Vec<usize> {
    let n = members.len();
    let sim: Vec<f64> = members
        .iter()
        .flat_map(|&a| {
            members
                .iter()
                .map(move |&b| f64::from(dot(&segments[a].embedding, &segments[b].embedding)))
        })
        .collect();
    let mut clusters: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
    while clusters.len() > count.max(1) {
        let mut best = (f64::NEG_INFINITY, 0, 1);
        for a in 0..clusters.len() {
            for b in a + 1..clusters.len() {
                let total: f64 = clusters[a]
                    .iter()
                    .flat_map(|&i| clusters[b].iter().map(move |&j| (i, j)))
                    .map(|(i, j)| sim[i * n + j])
                    .sum();
                let linkage = total / (clusters[a].len() * clusters[b].len()) as f64;
                if linkage > best.0 {
                    best = (linkage, a, b);
                }
            }
        }
        let (_, a, b) = best;
        let merged = clusters.swap_remove(b);
        clusters[a].extend(merged);
    }
    let mut labels = vec![0; n];
    for (label, cluster) in clusters.iter().enumerate() {
        for &i in cluster {
            labels[i] = label;
        }
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A voice's direction plus noise spread over every value, as real embeddings scatter.
    fn segment(direction: usize, seed: u64, duration_s: f64) -> Segment {
        let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let mut embedding = [0f32; EMBEDDING_DIM];
        for v in embedding.iter_mut() {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            *v = ((state >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.06;
        }
        embedding[direction] += 1.0;
        normalize(&mut embedding);
        Segment {
            embedding,
            duration_s,
        }
    }

    #[test]
    fn two_directions_make_two_clusters() {
        let segments: Vec<Segment> = (0..10).map(|i| segment(i % 2, i as u64, 2.0)).collect();
        assert_eq!(estimate_count(&segments, 8), 2);
        let labels = cluster(&segments, 2);
        assert!((0..10).all(|i| labels[i] == labels[i % 2]), "{labels:?}");
        assert_ne!(labels[0], labels[1]);
    }

    #[test]
    fn one_direction_is_one_speaker() {
        let segments: Vec<Segment> = (0..6).map(|i| segment(0, i, 2.0)).collect();
        assert_eq!(estimate_count(&segments, 8), 1);
    }
}
