//! A given text's lines: where the voice pauses.
//!
//! A plain text written in lines (a song's lyrics, a script cut into phrases) breaks its lines
//! where the singer or speaker pauses. The line breaks are kept with the words
//! ([`line_starts`]); a line's first or last word placed on the voice of the line beside it
//! goes back to its own line ([`keep_lines_whole`]); the alignment groups do not question a
//! cut at a line break ([`crate::groups::align_groups`]), and a text whisper heard little of is
//! laid on the voice line by line ([`crate::on_voice::lay_on_voice`]).

use caption_core::Word;

use crate::speech::{Region, round_ms};

/// For each word of `text` (as [`str::split_whitespace`] cuts it), whether it begins a line
/// after the first: a line break in a plain text (a song's lyrics, a script cut into phrases)
/// is where the voice pauses.
pub(crate) fn line_starts(text: &str) -> Vec<bool> {
    let mut out = Vec::new();
    for line in text.lines() {
        let begins = !out.is_empty();
        out.extend(
            line.split_whitespace()
                .enumerate()
                .map(|(k, _)| k == 0 && begins),
        );
    }
    out
}

/// The voiced stretch (of `stretches`, in order) holding the middle of `word`.
fn stretch_of(stretches: &[Region], word: &Word) -> Option<usize> {
    let middle = (word.start + word.end) / 2.0;
    let i = stretches.partition_point(|r| r.end_s < middle);
    (i < stretches.len() && stretches[i].start_s <= middle).then_some(i)
}

/// A word at least this long is laid at a line's edge when it moves there (whisper's time for a
/// word put on the wrong side of a pause is often a few tens of milliseconds).
const MOVED_EDGE_WORD_S: f64 = 0.2;

/// Puts back with its own line a word that a line break (`line_starts`, one per word) says
/// begins or ends a line, and that was placed in the voiced stretch (of `stretches`) of the
/// next line or the previous one while the rest of its line is in another: whisper puts the
/// first word of a line sung after a rest at the end of the line before (a song's "where",
/// 6 s early on the previous line's held note), and so may the aligner laying a text on the
/// voice (another's "the", 7 s early). A line's first word goes to the start of the stretch
/// after the one it was in; its last, to the end of the stretch before.
pub(crate) fn keep_lines_whole(words: &mut [Word], line_starts: &[bool], stretches: &[Region]) {
    let n = words.len().min(line_starts.len());
    let starts = |i: usize| i < n && line_starts[i];
    for i in 1..n.saturating_sub(1) {
        let (Some(before), Some(at), Some(after)) = (
            stretch_of(stretches, &words[i - 1]),
            stretch_of(stretches, &words[i]),
            stretch_of(stretches, &words[i + 1]),
        ) else {
            continue;
        };
        let length_s = (words[i].end - words[i].start).max(MOVED_EDGE_WORD_S);
        // Only where the word fits between its neighbours: times never go back.
        if starts(i)
            && !starts(i + 1)
            && before == at
            && after > at
            && stretches[at + 1].start_s <= words[i + 1].start
        {
            let next = &stretches[at + 1];
            let start_s = next.start_s;
            words[i].start = round_ms(start_s);
            words[i].end = round_ms((start_s + length_s).min(next.end_s).min(words[i + 1].start));
        } else if starts(i + 1)
            && !starts(i)
            && after == at
            && before < at
            && stretches[at - 1].end_s >= words[i - 1].end
        {
            let previous = &stretches[at - 1];
            let end_s = previous.end_s;
            words[i].end = round_ms(end_s);
            words[i].start = round_ms(
                (end_s - length_s)
                    .max(previous.start_s)
                    .max(words[i - 1].end),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::given::place_plain;
    use crate::given::tests::{heard, region};

    #[test]
    fn a_line_break_begins_a_line_and_blank_lines_are_none() {
        let starts = line_starts("the morning light\n\n  on the road \nand I\n");
        assert_eq!(
            starts,
            [false, false, false, true, false, false, true, false]
        );
        assert_eq!(line_starts("one line only"), [false, false, false]);
    }

    #[test]
    fn a_lines_first_word_heard_on_the_line_before_goes_back_to_its_line() {
        // Sung lines on 1-5 s and 8-12 s; whisper heard "where", the second line's first
        // word, in the last 40 ms of the first line's held note.
        let voiced = [region(1.0, 5.0), region(8.0, 12.0)];
        let heard = heard(&[
            ("on", 1.0, 2.0),
            ("the", 2.0, 2.5),
            ("road", 2.5, 4.9),
            ("where", 4.92, 4.96),
            ("the", 8.6, 9.0),
            ("birds", 9.0, 10.0),
        ]);
        let text = "on the road\nwhere the birds";
        let mut placed = place_plain(text, &heard, 13.0, &[region(0.0, 13.0)], &voiced, false);
        keep_lines_whole(&mut placed, &line_starts(text), &voiced);
        assert_eq!((placed[3].start, placed[3].end), (8.0, 8.2), "{placed:?}");
        assert_eq!((placed[2].start, placed[2].end), (2.5, 4.9));
        // One line: the same words stay where whisper heard them.
        let one_line = text.replace('\n', " ");
        let mut placed = place_plain(
            &one_line,
            &heard,
            13.0,
            &[region(0.0, 13.0)],
            &voiced,
            false,
        );
        keep_lines_whole(&mut placed, &line_starts(&one_line), &voiced);
        assert_eq!((placed[3].start, placed[3].end), (4.92, 4.96));

        // A line's last word heard at the start of the next line's voice goes back to the end
        // of its own line's.
        let heard = heard_later_last();
        let text = "we walk along\nthe river";
        let mut placed = place_plain(text, &heard, 13.0, &[region(0.0, 13.0)], &voiced, false);
        keep_lines_whole(&mut placed, &line_starts(text), &voiced);
        assert_eq!((placed[2].start, placed[2].end), (4.8, 5.0), "{placed:?}");
        // Not where it would go back past the word before it ("walk" heard on to 5.5 s, after
        // the voice found for its line ends).
        let mut late = heard_later_last();
        late[1] = Word::new(2.0, 5.5, "walk");
        let mut placed = place_plain(text, &late, 13.0, &[region(0.0, 13.0)], &voiced, false);
        keep_lines_whole(&mut placed, &line_starts(text), &voiced);
        assert_eq!((placed[2].start, placed[2].end), (8.0, 8.1), "{placed:?}");
        assert!(
            placed.windows(2).all(|w| w[0].end <= w[1].start),
            "{placed:?}"
        );
    }

    fn heard_later_last() -> Vec<Word> {
        heard(&[
            ("we", 1.0, 2.0),
            ("walk", 2.0, 4.5),
            ("along", 8.0, 8.1),
            ("the", 8.2, 9.0),
            ("river", 9.0, 10.0),
        ])
    }
}
