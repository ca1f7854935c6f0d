//! Tests of the alignment groups: scripted aligners for the cuts and splits, Festival's
//! speech for the two halves.

use super::room::room_well_taken;
use super::*;
use caption_align::Aligner;

/// A word "w" from `start` to `end`.
pub(crate) fn word(start: f64, end: f64) -> Word {
    Word {
        start,
        end,
        word: "w".into(),
        punctuated_word: "w".into(),
        ..Default::default()
    }
}

/// An aligner that fails on more than `max_words` words and otherwise spreads the words
/// evenly over the audio; it records the words of every call.
fn aligner_up_to(max_words: usize, calls: &mut Vec<Vec<String>>) -> impl Align + '_ {
    move |audio: &[f32], texts: &[&str]| {
        calls.push(texts.iter().map(|t| (*t).to_owned()).collect());
        if texts.len() > max_words {
            return Err(caption_align::Error::Decoder {
                detail: format!("{} words: the beam lost the path", texts.len()),
            });
        }
        Ok(spread(audio, texts.len()))
    }
}

/// `words` spans, each as long, over all of `audio`.
fn spread(audio: &[f32], words: usize) -> Vec<Span> {
    let each_s = audio.len() as f64 / SAMPLE_RATE_HZ as f64 / words as f64;
    (0..words)
        .map(|i| Span {
            start_s: i as f64 * each_s,
            end_s: (i + 1) as f64 * each_s,
            shortest_s: 0.03,
        })
        .collect()
}

fn spoken(starts: &[f64]) -> Vec<Word> {
    starts
        .iter()
        .enumerate()
        .map(|(i, &start)| Word {
            punctuated_word: format!("w{i}"),
            ..word(start, start + 0.25)
        })
        .collect()
}

/// An aligner that lays the words 0.2 s long from the start of the audio, with a pause of
/// `pause_s` before the `pause_before`-th; each word is `shortest_s` at the least.
fn aligner_with_pause(pause_before: usize, pause_s: f64, shortest_s: f64) -> impl Align {
    move |_: &[f32], texts: &[&str]| {
        let mut t = 0.0;
        Ok((0..texts.len())
            .map(|i| {
                if i == pause_before {
                    t += pause_s;
                }
                t += 0.2;
                Span {
                    start_s: t - 0.2,
                    end_s: t,
                    shortest_s,
                }
            })
            .collect())
    }
}

/// A minute and more of read speech (Festival, whose word times are exact).
const PASSAGE: &str = "The fisherman mended his nets while the children watched the boats \
    return to the bay. Every morning the baker opened his shop before the sun came up. The \
    committee met on Tuesday morning to discuss the new budget for the public library. \
    Please remember to bring your passport when you visit the embassy on Friday afternoon. \
    The old lighthouse keeper climbed the narrow stairs to light the lamp at dusk. A strong \
    wind blew across the valley and bent the tall grass toward the river. The students \
    gathered in the hall to hear the visiting scientist talk about the stars. She planted \
    tomatoes and beans in the garden behind the house last spring. The train to the coast \
    leaves early, so we packed our bags the night before. After the storm the villagers \
    worked together to clear the fallen trees from the road. The museum opened a new room \
    for paintings from the northern islands. He wrote a long letter to his sister and \
    walked to the post office before dinner.";

#[test]
fn two_halves_on_two_threads_time_the_words_as_one_thread_does() {
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("passage.wav");
    let truth = caption_testkit::speech::festival_sentence(PASSAGE, "kal", &wav).unwrap();
    let samples: Vec<f32> = caption_testkit::speech::read_wav_16k(&wav)
        .unwrap()
        .iter()
        .map(|&s| f32::from(s) / 32768.0)
        .collect();
    // Times as whisper's would be: each word 40 ms late.
    let heard: Vec<Word> = truth
        .iter()
        .map(|t| Word {
            start: t.start_s + 0.04,
            end: t.end_s + 0.04,
            word: t.word.clone(),
            punctuated_word: t.word.clone(),
            ..Default::default()
        })
        .collect();
    assert!(
        halfway(&heard, &groups(&heard)).is_some(),
        "not long enough to halve"
    );
    let timed = |threads: usize| {
        // A new aligner each: a decoder's noise estimate carries over from its last call.
        let aligner = Aligner::open_installed().unwrap();
        let mut words = heard.clone();
        let mut unfit = Vec::new();
        let english = aligner.language("en").unwrap();
        let failed = align_groups(&english, &samples, &mut words, &[], &mut unfit, threads);
        assert_eq!((failed, unfit.len()), (0, 0), "{threads} threads");
        words
    };
    let (one, two) = (timed(1), timed(2));
    for (a, b) in one.iter().zip(&two) {
        assert!(
            (a.start - b.start).abs() <= 0.01 && (a.end - b.end).abs() <= 0.01,
            "{:?}: {:.3}-{:.3} on one thread, {:.3}-{:.3} on two",
            a.word,
            a.start,
            a.end,
            b.start,
            b.end
        );
    }
    let mean_error = |words: &[Word]| {
        let sum: f64 = words
            .iter()
            .zip(&truth)
            .map(|(w, t)| (w.start - t.start_s).abs() + (w.end - t.end_s).abs())
            .sum();
        sum / (2 * words.len()) as f64
    };
    assert!(
        mean_error(&two) <= 0.03,
        "mean error {:.3} s",
        mean_error(&two)
    );
}

#[test]
fn a_cut_moves_where_the_words_around_it_aligned_together_pause() {
    // Whisper paused before w3, so the groups were cut there; aligned together, the words
    // pause before w4 and join w2 to w3.
    let samples = vec![0.0f32; 4 * SAMPLE_RATE_HZ];
    let spoken_at = [0.5, 0.75, 1.0, 1.75, 2.0, 2.25];
    let mut words = spoken(&spoken_at);
    let mut align = aligner_with_pause(4, 0.3, 0.06);
    assert_eq!(
        moved_cut(&mut align, &samples, &mut words, 0..6, 3),
        Some(4)
    );
    // The words took the joint times, from the audio's start: half of the 0.5 s before w0.
    let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
    assert!(near(words[0].start, 0.25) && near(words[3].end, 1.05));
    assert!(near(words[4].start, 1.35) && near(words[5].end, 1.75));

    // A joint pause too short to be a pause moves nothing; nor does a joint alignment that
    // squeezes a word to its shortest.
    for (pause_before, pause_s, shortest_s) in [(4, 0.05, 0.06), (4, 0.3, 0.19)] {
        let mut words = spoken(&spoken_at);
        let mut align = aligner_with_pause(pause_before, pause_s, shortest_s);
        assert_eq!(moved_cut(&mut align, &samples, &mut words, 0..6, 3), None);
        assert_eq!(words, spoken(&spoken_at));
    }

    // A joint pause at the cut itself moves nothing where the words keep near their times
    // (the joint alignment lays them 0.125 s earlier, from its audio's start) ...
    let near_joint = [0.25, 0.45, 0.65, 1.15, 1.35, 1.55];
    let mut words = spoken(&near_joint);
    let mut align = aligner_with_pause(3, 0.3, 0.06);
    assert_eq!(moved_cut(&mut align, &samples, &mut words, 0..6, 3), None);
    assert_eq!(words, spoken(&near_joint));
    // ... and keeps the cut, with the joint times, where it moves words far from theirs.
    let mut words = spoken(&spoken_at);
    assert_eq!(
        moved_cut(&mut align, &samples, &mut words, 0..6, 3),
        Some(3)
    );
    assert!(near(words[2].end, 0.85) && near(words[3].start, 1.15));
}

#[test]
fn words_that_run_on_across_a_cut_take_the_joint_times() {
    // Whisper put a second's pause before w3 (a sung line's last word, held, came out after a
    // pause of its own); aligned together, the words run on with no pause at all.
    let samples = vec![0.0f32; 4 * SAMPLE_RATE_HZ];
    let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
    let mut words = spoken(&[0.5, 0.75, 1.0, 2.5, 2.75, 3.0]);
    let mut align = aligner_with_pause(3, 0.0, 0.06);
    assert_eq!(
        moved_cut(&mut align, &samples, &mut words, 0..6, 3),
        Some(3)
    );
    // The cut stays, and the words took the joint times (from the audio's start, 0.25 s).
    assert!(near(words[2].end, 0.85) && near(words[3].start, 0.85));
    assert!(near(words[5].end, 1.45));
    // Words the joint alignment leaves near their times keep them.
    let near_joint = [0.25, 0.45, 0.65, 0.85, 1.05, 1.25];
    let mut words = spoken(&near_joint);
    assert_eq!(moved_cut(&mut align, &samples, &mut words, 0..6, 3), None);
    assert_eq!(words, spoken(&near_joint));
}

#[test]
fn a_cut_is_in_doubt_beside_a_squeezed_word_or_a_word_moved_far() {
    // "morning to | discuss": whisper heard "to" at 2.28-2.38.
    let heard = [(1.59, 2.1), (2.28, 2.38), (2.38, 2.9), (2.9, 3.0)];
    let aligned = |to: (f64, f64)| {
        [
            word(1.59, to.0),
            word(to.0, to.1),
            word(2.38, 2.9),
            word(2.9, 3.0),
        ]
    };
    let none = [false; 4];
    // The aligner fitted "to" onto the end of "morning", 0.3 s early: in doubt.
    assert!(cut_in_doubt(&aligned((1.98, 2.1)), &heard, &none, 0..4, 2));
    // Within 0.2 s of whisper's time, nothing squeezed: not in doubt.
    assert!(!cut_in_doubt(
        &aligned((2.27, 2.37)),
        &heard,
        &none,
        0..4,
        2
    ));
    // A squeezed word near the cut: in doubt.
    let squeezed = [false, false, false, true];
    assert!(cut_in_doubt(
        &aligned((2.27, 2.37)),
        &heard,
        &squeezed,
        0..4,
        2
    ));
}

#[test]
fn a_failed_group_is_aligned_again_in_halves_cut_at_its_widest_pause() {
    // Eight words with pauses of 0.25 s, the widest (0.5 s) before the sixth.
    let mut words = spoken(&[0.5, 1.0, 1.5, 2.0, 2.5, 3.25, 3.75, 4.25]);
    let samples = vec![0.0f32; 5 * SAMPLE_RATE_HZ];
    let mut calls = Vec::new();
    let failed = align_range(
        &mut aligner_up_to(5, &mut calls),
        &samples,
        &mut words,
        0..8,
        0,
        &mut Found::new(8),
    );
    assert_eq!(failed, 0);
    let sizes: Vec<usize> = calls.iter().map(Vec::len).collect();
    assert_eq!(sizes, [8, 5, 3]);
    assert_eq!(calls[1], ["w0", "w1", "w2", "w3", "w4"]);
    // Every word got the aligner's time. The first piece took half the widest pause (up to
    // 3.0 s); the second begins half of what is left before w5.
    assert_eq!(words[4].end, 3.0);
    assert_eq!(words[5].start, 3.125);
    assert!(words.windows(2).all(|w| w[0].end <= w[1].start));
}

/// An aligner that needs `per_word_s` of audio a word, and spreads the words evenly.
fn aligner_needing(per_word_s: f64) -> impl Align {
    move |audio: &[f32], texts: &[&str]| {
        let audio_s = audio.len() as f64 / SAMPLE_RATE_HZ as f64;
        if audio_s < per_word_s * texts.len() as f64 {
            return Err(caption_align::Error::Decoder {
                detail: "a word's sound is not in the audio".into(),
            });
        }
        Ok(spread(audio, texts.len()))
    }
}

/// Five words placed roughly in two groups (three, then two), on 4 s of audio, each group
/// aligned on its own by an aligner that needs 0.45 s a word.
struct EachAlone {
    samples: Vec<f32>,
    ranges: Vec<std::ops::Range<usize>>,
    words: Vec<Word>,
    found: Found,
    /// How many pieces of each group failed.
    failed: Vec<usize>,
}

fn each_group_alone(rough: &[Word]) -> EachAlone {
    let samples = vec![0.0f32; 4 * SAMPLE_RATE_HZ];
    let ranges = groups(rough);
    assert_eq!(ranges, vec![0..3, 3..5]);
    let mut words = rough.to_vec();
    let mut found = Found::new(5);
    let failed = align_all(
        &mut aligner_needing(0.45),
        &samples,
        &mut words,
        &ranges,
        &mut found,
    );
    EachAlone {
        samples,
        ranges,
        words,
        found,
        failed,
    }
}

impl EachAlone {
    /// [`together`] on the two groups, with an aligner that needs `per_word_s` a word.
    fn together(&mut self, per_word_s: f64) -> bool {
        together(
            &mut aligner_needing(per_word_s),
            &self.samples,
            &mut self.words,
            &self.ranges,
            0,
            &mut self.found,
        )
    }
}

#[test]
fn a_failed_group_is_aligned_again_with_the_next() {
    // Three words placed roughly in 0.6 s, their audio 1.1 s with its margins: too short
    // for an aligner that needs 0.45 s a word. The next group (two words) fits.
    let rough = [
        word(1.0, 1.2),
        word(1.2, 1.4),
        word(1.4, 1.6),
        word(2.4, 2.65),
        word(2.65, 2.9),
    ];
    let mut pass = each_group_alone(&rough);
    assert_eq!(pass.failed, [1, 0]);
    let alone = pass.words.clone();
    // Together, on 0.75-3.4 s (the next group aligned to 3.15 s, and its margin): every
    // word fits, spread over the joint audio.
    assert!(pass.together(0.45));
    assert_eq!((pass.words[0].start, pass.words[4].end), (0.75, 3.4));
    // An aligner that needs more keeps both groups as they were.
    pass.words = alone.clone();
    assert!(!pass.together(0.6));
    assert_eq!(pass.words, alone);
}

#[test]
fn a_failed_group_is_aligned_again_with_the_one_before() {
    // Whisper's "to fold the | drafts when" for "two photographs when": the first group fits,
    // the second is placed roughly in 0.3 s (0.775 s with its margins), too short for two
    // words of 0.45 s. Aligned as one, on 0.5-3.15 s (the first group aligned from 0.75 s, and
    // its margin), every word fits.
    let rough = [
        word(1.0, 1.3),
        word(1.3, 1.6),
        word(1.6, 1.9),
        word(2.6, 2.75),
        word(2.75, 2.9),
    ];
    let mut pass = each_group_alone(&rough);
    assert_eq!(pass.failed, [0, 1]);
    assert_eq!(&pass.words[3..], &rough[3..]);
    assert!(pass.together(0.45));
    let words = &pass.words;
    assert_eq!((words[0].start, words[4].end), (0.5, 3.15));
    assert!(words.windows(2).all(|w| w[0].end <= w[1].start));
}

#[test]
fn pieces_that_still_fail_keep_their_times() {
    let starts = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0];
    let mut words = spoken(&starts);
    let samples = vec![0.0f32; 5 * SAMPLE_RATE_HZ];
    let mut calls = Vec::new();
    let mut found = Found::new(8);
    let failed = align_range(
        &mut aligner_up_to(0, &mut calls),
        &samples,
        &mut words,
        0..8,
        0,
        &mut found,
    );
    assert!(found.unfit.is_empty(), "{:?}", found.unfit);
    // Equal pauses: cut in the middle. 8 words, then 4 + 4, then four pieces of 2 that are
    // not cut again.
    assert_eq!(failed, 4);
    assert_eq!(calls.len(), 7);
    let kept: Vec<f64> = words.iter().map(|w| w.start).collect();
    assert_eq!(kept, starts);
}

#[test]
fn pieces_too_short_for_their_phones_are_unfit() {
    // Whisper's "Thank you for watching" twice over, in two seconds: the whole group and
    // every piece of it are too short for their phones.
    let mut words = spoken(&[0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75]);
    let samples = vec![0.0f32; 2 * SAMPLE_RATE_HZ];
    let mut too_short = |audio: &[f32], texts: &[&str]| {
        Err(caption_align::Error::TooShort {
            phones: 4 * texts.len(),
            needed_s: 0.12 * texts.len() as f64,
            audio_s: audio.len() as f64 / SAMPLE_RATE_HZ as f64,
        })
    };
    let mut found = Found::new(8);
    let failed = align_range(&mut too_short, &samples, &mut words, 0..8, 0, &mut found);
    assert_eq!(failed, 4);
    assert_eq!(found.unfit, (0..8).collect::<Vec<_>>());
}

#[test]
fn groups_break_at_pauses() {
    let words = [
        word(0.0, 0.3),
        word(0.3, 0.6),
        word(1.0, 1.2),
        word(1.3, 1.5),
        word(1.5, 1.9),
    ];
    assert_eq!(groups(&words), vec![0..2, 2..5]);
    assert_eq!(groups(&[]), Vec::<std::ops::Range<usize>>::new());
}

fn span(start_s: f64, end_s: f64) -> Span {
    Span {
        start_s,
        end_s,
        shortest_s: 0.03,
    }
}

#[test]
fn a_pause_put_a_word_or_two_after_where_it_was_expected_moves_there() {
    // "long debate, they agreed": the aligner joined "debate," to "they" and paused after
    // "they" (on the second syllable of "debate"); with a pause required after the comma it
    // puts "they" after the pause.
    let late = vec![
        span(0.4, 0.54),
        span(0.54, 0.75),
        span(0.75, 1.088),
        span(1.234, 1.75),
    ];
    let texts = ["long", "debate,", "they", "agreed"];
    let expected = texts.map(ends_a_clause);
    assert_eq!(expected, [false, true, false, false]);
    assert_eq!(late_pause(&expected, &late), Some((1, (1.088, 1.234))));
    // No pause expected, a pause already after it, or the pause three words on: nothing to
    // move.
    assert_eq!(late_pause(&[false; 4], &late), None);
    let mut apart = late.clone();
    apart[2].start_s = 0.8;
    assert_eq!(late_pause(&expected, &apart), None);
    let far = [
        late[0],
        late[1],
        span(0.75, 0.85),
        span(0.85, 0.95),
        span(0.95, 1.088),
        span(1.234, 1.75),
    ];
    assert_eq!(
        late_pause(&[false, true, false, false, false, false], &far),
        None
    );

    // The words are aligned again with the pause token where it was expected, after the
    // comma or where whisper heard it ("debate | may be", heard for "debate | they agreed"),
    // and keep that alignment when its pause covers the late one's middle.
    for (texts, heard_starts) in [
        (["long", "debate,", "they", "agreed"], [0.4, 0.6, 0.8, 1.0]),
        (["long", "debate", "may", "be"], [0.4, 0.6, 0.95, 1.15]),
    ] {
        let mut calls = Vec::new();
        let mut aligner = |_: &[f32], texts: &[&str]| {
            calls.push(texts.join(" "));
            Ok(if texts.contains(&caption_align::PAUSE) {
                vec![
                    span(0.4, 0.61),
                    span(0.61, 1.03),
                    span(1.03, 1.12),
                    span(1.24, 1.38),
                    span(1.38, 1.75),
                ]
            } else {
                late.clone()
            })
        };
        let mut words: Vec<Word> = texts
            .iter()
            .zip(heard_starts)
            .map(|(text, start)| Word {
                punctuated_word: (*text).to_owned(),
                ..word(start, start + 0.2)
            })
            .collect();
        let samples = vec![0.0f32; 3 * SAMPLE_RATE_HZ];
        let mut found = Found::new(4);
        let from_s = audio_bounds(&samples, &words, 0..4).0;
        assert_eq!(
            align_range(&mut aligner, &samples, &mut words, 0..4, 0, &mut found),
            0
        );
        let [long, debate, after, last] = texts;
        assert_eq!(
            calls,
            [
                format!("{long} {debate} {after} {last}"),
                format!("{long} {debate} <sil> {after} {last}")
            ]
        );
        let starts: Vec<f64> = words.iter().map(|w| round_ms(w.start - from_s)).collect();
        assert_eq!(starts, [0.4, 0.61, 1.24, 1.38]);
    }
}

#[test]
fn a_pause_is_allowed_before_a_word_heard_with_little_confidence() {
    let mut words = spoken(&[0.5, 0.8, 1.1]);
    words[0].confidence = Some(0.9);
    words[1].confidence = Some(UNSURE_BELOW / 2.0);
    // A given text's words carry no confidence: they were not heard.
    words[2].confidence = None;
    let samples = vec![0.0; 2 * SAMPLE_RATE_HZ];
    let mut calls = Vec::new();
    let (_, spans) = align_on_audio(&mut aligner_up_to(10, &mut calls), &samples, &words, 0..3);
    let spans = spans.unwrap();
    // Aligned without, then with the pause, which took sound the words had (the scripted
    // aligner spreads the words over the audio) and is kept.
    assert_eq!(
        calls,
        [
            vec!["w0", "w1", "w2"],
            vec!["w0", caption_align::MAYBE_PAUSE, "w1", "w2"]
        ]
    );
    // The spans of the words alone, the aligner's first, third and fourth, the pause (its
    // second) given to the word after it.
    let each_s = spans[0].end_s - spans[0].start_s;
    let slots: Vec<(f64, f64)> = spans
        .iter()
        .map(|s| (s.start_s / each_s, s.end_s / each_s))
        .collect();
    assert_eq!(slots.len(), 3);
    for (got, want) in slots.iter().zip([(0.0, 1.0), (1.0, 3.0), (3.0, 4.0)]) {
        assert!(
            (got.0 - want.0).abs() < 1e-9 && (got.1 - want.1).abs() < 1e-9,
            "{slots:?}"
        );
    }
}

#[test]
fn a_pause_is_kept_only_where_it_took_sound_the_words_had_stretched_over() {
    let spans =
        |list: &[(f64, f64)]| -> Vec<Span> { list.iter().map(|&(a, b)| span(a, b)).collect() };
    // "fund a medical" for "fund a bicycle": the pause takes the "bi" that "fund" and "a" had
    // stretched over.
    let plain = spans(&[(1.86, 2.27), (2.27, 2.32), (2.32, 2.73)]);
    let with = spans(&[(1.86, 2.16), (2.16, 2.24), (2.40, 2.73)]);
    assert!(room_well_taken(&plain, &with, 2, &span(2.24, 2.40)));
    // Not taken: nothing changed by it.
    assert!(room_well_taken(&plain, &plain, 2, &span(2.32, 2.32)));
    // "the labyrinth" for "the old barn": "the" stretched over "old" to make way for it.
    let plain = spans(&[(4.06, 4.20), (4.20, 4.82)]);
    let with = spans(&[(4.06, 4.40), (4.49, 4.82)]);
    assert!(!room_well_taken(&plain, &with, 1, &span(4.40, 4.49)));
    // "bicycle a pass" for "bicycle path" with a pause before "path": the pause took the
    // speaker's silence and "a" went into it.
    let plain = spans(&[(6.49, 7.06), (7.61, 7.64), (7.64, 7.92)]);
    let with = spans(&[(6.49, 7.06), (7.38, 7.41), (7.61, 7.92)]);
    assert!(!room_well_taken(&plain, &with, 2, &span(7.41, 7.61)));
    // Before the first word, in the silence before it.
    let plain = spans(&[(0.30, 0.60)]);
    assert!(!room_well_taken(
        &plain,
        &spans(&[(0.45, 0.60)]),
        0,
        &span(0.20, 0.45)
    ));
}

#[test]
fn a_pause_badly_taken_is_left_out() {
    // The scripted aligner puts the allowed pause in the silence before the words: without it
    // the words are aligned as they are, once more not needed.
    let mut words = spoken(&[0.5, 0.8]);
    words[0].confidence = Some(0.05);
    let samples = vec![0.0; 2 * SAMPLE_RATE_HZ];
    let mut calls: Vec<Vec<String>> = Vec::new();
    let mut align = |_: &[f32], texts: &[&str]| {
        calls.push(texts.iter().map(|t| (*t).to_owned()).collect());
        let mut t = 0.5;
        Ok(texts
            .iter()
            .map(|&text| {
                if text == caption_align::MAYBE_PAUSE {
                    return span(0.25, 0.5);
                }
                t += 0.25;
                span(t - 0.25, t)
            })
            .collect())
    };
    let (_, spans) = align_on_audio(&mut align, &samples, &words, 0..2);
    assert_eq!(spans.unwrap(), [span(0.5, 0.75), span(0.75, 1.0)]);
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1][0], caption_align::MAYBE_PAUSE);
}
