//! Room before a word whisper may have misheard: a pause the aligner may take there, so that the
//! sound the word's phones do not match goes to the word rather than to its neighbours.

use caption_align::Span;

use super::{APART_S, Align};

/// A word whisper heard with less confidence than this (its least probable token's
/// probability) is aligned with a pause allowed before it ([`caption_align::MAYBE_PAUSE`]): it
/// may be a misheard word whose phones are not the audio's, and its neighbours must not take
/// the sound they do not match. On the word-timing bench's 123 clips (tiny.en), half the words
/// below 0.2 were wrong (14 of 28), a third of those from 0.2 to 0.3 and 4 % of those above
/// 0.8. At 0.2, "fund a medical path" (for "bicycle") kept "fund" and "a" on their own sounds
/// (that clip's boundaries within 50 ms: 75 % to 87.5 %, mean 27 to 14 ms); at 0.3, "debate"
/// (0.29) got a pause too and the clip stayed at 83 %.
pub(super) const UNSURE_BELOW: f64 = 0.2;

/// Aligns `texts` on `audio` with a [`caption_align::MAYBE_PAUSE`] before each text that
/// `unsure` marks; returns the spans of `texts` alone.
///
/// A pause the aligner takes is kept only where it took sound the words had stretched over
/// when aligned without it (see [`room_well_taken`]); one that is not is left out and the
/// words aligned again. A pause kept is sound whisper heard as the word after it, which its
/// phones do not match: the word starts where the pause does (the highlight of "medical" comes
/// on with the "bi" of "bicycle", not after it). Where the words do not fit the audio without
/// room, whatever pauses fit them are kept as pauses.
pub(super) fn align_leaving_room(
    align: &mut impl Align,
    audio: &[f32],
    texts: &[&str],
    unsure: &[bool],
) -> caption_align::Result<Vec<Span>> {
    let plain = align(audio, texts);
    let mut room = unsure.to_vec();
    while room.contains(&true) {
        let mut with_room = Vec::with_capacity(texts.len() * 2);
        for (&text, &room) in texts.iter().zip(&room) {
            if room {
                with_room.push(caption_align::MAYBE_PAUSE);
            }
            with_room.push(text);
        }
        let Ok(spans) = align(audio, &with_room) else {
            break;
        };
        // The spans of the texts, and before which text each pause is.
        let mut own = Vec::with_capacity(texts.len());
        let mut pauses = Vec::new();
        for (span, token) in spans.into_iter().zip(&with_room) {
            if *token == caption_align::MAYBE_PAUSE {
                pauses.push((own.len(), span));
            } else {
                own.push(span);
            }
        }
        let Ok(plain) = &plain else {
            // Without a pause the words do not fit at all: any room helps.
            return Ok(own);
        };
        let mut kept = true;
        for &(before, pause) in &pauses {
            if !room_well_taken(plain, &own, before, &pause) {
                room[before] = false;
                kept = false;
            }
        }
        if kept {
            for (before, pause) in pauses {
                if let Some(word) = own.get_mut(before) {
                    word.start_s = word.start_s.min(pause.start_s);
                }
            }
            return Ok(own);
        }
    }
    plain
}

/// Whether the pause `pause` that an alignment with room (`with`, the words' spans) took before
/// word `before` took sound the words had stretched over when aligned without it (`plain`):
/// no pause of `plain` lies in it (it did not move a silence the speaker made), and the word
/// before it ends no later than in `plain` (it did not push that word onto the next one's
/// sound). A pause not taken (empty) changes nothing and is kept.
///
/// "fund a medical path" for "fund a bicycle path" (tiny.en): without room "fund" and "a" end
/// 110 and 80 ms late over the "bi" that "medical" does not match; the pause takes that "bi"
/// and "a" ends earlier. "the labyrinth" for "the old barn" (base, under noise): the pause went
/// into "barn" and "the" stretched over "old", 200 ms later. "a pass" for "path", after a
/// pause (base): the pause went into the speaker's own silence and "a" with it.
pub(super) fn room_well_taken(plain: &[Span], with: &[Span], before: usize, pause: &Span) -> bool {
    let (from_s, to_s) = (pause.start_s, pause.end_s);
    if to_s <= from_s {
        return true;
    }
    let ends_no_later = before == 0
        || with
            .get(before - 1)
            .zip(plain.get(before - 1))
            .is_none_or(|(with, plain)| with.end_s <= plain.end_s + FRAME_S / 2.0);
    // The plain alignment's silences: before its first word, between words at least
    // APART_S apart, after its last.
    let silences = std::iter::once((f64::NEG_INFINITY, plain.first().map_or(0.0, |w| w.start_s)))
        .chain(
            plain
                .windows(2)
                .filter(|w| w[1].start_s - w[0].end_s >= APART_S)
                .map(|w| (w[0].end_s, w[1].start_s)),
        )
        .chain(std::iter::once((
            plain.last().map_or(0.0, |w| w.end_s),
            f64::INFINITY,
        )));
    let in_silence = silences
        .into_iter()
        .any(|(a, b)| a.max(from_s) < b.min(to_s) - FRAME_S / 2.0);
    ends_no_later && !in_silence
}

/// The aligner's frame, seconds.
const FRAME_S: f64 = 0.01;
