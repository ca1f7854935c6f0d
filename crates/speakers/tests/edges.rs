//! Inputs at the edges: no words, a word of no length, words past the end of the audio, a
//! count larger than the segments, spans that are not spans.

use caption_speakers::{Diarizer, Error, SpeakerCount, WordSpan};

fn span(start_s: f64, end_s: f64) -> WordSpan {
    WordSpan { start_s, end_s }
}

#[test]
fn degenerate_inputs_get_an_answer_or_an_error_never_a_panic() -> anyhow::Result<()> {
    let diarizer = Diarizer::open_installed()?;
    let tone: Vec<f32> = (0..32_000)
        .map(|n| 0.3 * (std::f32::consts::TAU * 220.0 * n as f32 / 16_000.0).sin())
        .collect();
    assert!(
        diarizer
            .speakers(&tone, &[], SpeakerCount::Auto)?
            .is_empty()
    );
    assert_eq!(
        diarizer.speakers(&tone, &[span(0.5, 0.5)], SpeakerCount::Auto)?,
        [0]
    );
    assert_eq!(
        diarizer.speakers(&[], &[span(0.0, 1.0)], SpeakerCount::Auto)?,
        [0]
    );
    let past_the_end = [span(0.1, 0.4), span(1.5, 2.5), span(3.0, 4.0)];
    let labels = diarizer.speakers(&tone, &past_the_end, SpeakerCount::Exactly(8))?;
    assert_eq!(labels.len(), 3);
    assert_eq!(labels[0], 0, "the first word's speaker is the first");
    for bad in [span(1.0, 0.5), span(-1.0, 0.5), span(f64::NAN, 1.0)] {
        let refused = diarizer.speakers(&tone, &[span(0.0, 0.2), bad], SpeakerCount::Auto);
        assert!(
            matches!(refused, Err(Error::BadSpan { index: 1, .. })),
            "{refused:?}"
        );
    }
    Ok(())
}
