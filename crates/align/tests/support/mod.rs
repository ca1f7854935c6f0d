//! What the aligner's test files share: samples as the aligner takes them, and how far its
//! spans are from the truth.

use caption_align::Span;
use caption_testkit::speech::TimedWord;

/// 16-bit samples as the aligner's floats.
pub fn to_f32(samples: &[i16]) -> Vec<f32> {
    samples.iter().map(|&s| f32::from(s) / 32768.0).collect()
}

/// Mean error and share within 50 ms over every start and end.
pub fn boundary_errors(truth: &[TimedWord], spans: &[Span]) -> (f64, f64) {
    assert_eq!(truth.len(), spans.len());
    let errors: Vec<f64> = truth
        .iter()
        .zip(spans)
        .flat_map(|(t, s)| [(t.start_s - s.start_s).abs(), (t.end_s - s.end_s).abs()])
        .collect();
    let mean = errors.iter().sum::<f64>() / errors.len() as f64;
    let within = errors.iter().filter(|e| **e <= 0.05).count() as f64 / errors.len() as f64;
    (mean, within)
}
