//! Whisper tokens to words.
//!
//! Token text is raw bytes, and a character can be split across tokens, so a word's tokens are
//! joined as bytes before UTF-8 decoding. A token starting with a space starts a word;
//! punctuation sticks to the word it is written against (closing marks to the word before,
//! opening marks to the word after).

pub(crate) use caption_core::{bare_word, is_punctuation};

use crate::align::Estimate;

/// One text token of a segment, times in seconds from the start of the whole input.
#[derive(Debug, Clone)]
pub(crate) struct Token {
    pub(crate) bytes: Vec<u8>,
    pub(crate) t0_s: f64,
    pub(crate) t1_s: f64,
    /// Where DTW moves past this token (about its end); `None` when DTW gave no time.
    pub(crate) dtw_s: Option<f64>,
    /// The probability the model gave this token when it chose it.
    pub(crate) probability: f32,
}

/// A word with the model's timing estimate, before snapping to the signal.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawWord {
    pub(crate) word: String,
    pub(crate) punctuated: String,
    pub(crate) estimate: Estimate,
    /// The probability of the word's least probable token that carries letters or digits.
    pub(crate) confidence: f32,
}

fn is_opening(c: char) -> bool {
    matches!(
        c,
        '(' | '['
            | '{'
            | '"'
            | '\''
            | '¿'
            | '¡'
            | '«'
            | '“'
            | '‘'
            | '„'
            | '「'
            | '『'
            | '（'
            | '‹'
    )
}

struct Group {
    bytes: Vec<u8>,
    /// Indices of the tokens that carry letters or digits (they time the word).
    core: Vec<usize>,
    only_opening: bool,
}

/// Words of one segment's text tokens.
pub(crate) fn assemble(tokens: &[Token]) -> Vec<RawWord> {
    let mut groups: Vec<Group> = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        let text = String::from_utf8_lossy(&token.bytes);
        let trimmed = text.trim();
        let punct_only = !trimmed.is_empty() && trimmed.chars().all(is_punctuation);
        let has_core = !trimmed.is_empty() && !punct_only;
        let starts_word = token.bytes.first() == Some(&b' ');
        let continue_current = match groups.last() {
            None => false,
            Some(g) if g.only_opening => true,
            Some(_) if !starts_word => true,
            // " -" or " ..." written after a word belongs to it; an opening mark starts the next.
            Some(_) => punct_only && !trimmed.chars().all(is_opening),
        };
        if !continue_current {
            groups.push(Group {
                bytes: Vec::new(),
                core: Vec::new(),
                only_opening: true,
            });
        }
        let Some(group) = groups.last_mut() else {
            continue;
        };
        group.bytes.extend_from_slice(&token.bytes);
        if has_core {
            group.core.push(i);
        }
        group.only_opening &= punct_only && trimmed.chars().all(is_opening);
    }

    let last_core = groups.iter().rev().find_map(|g| g.core.last().copied());
    let mut words: Vec<RawWord> = Vec::new();
    for group in groups {
        // Bytes that are no character (half of one whisper split, see
        // `carry_split_characters`) are left out rather than shown as U+FFFD.
        let text = String::from_utf8_lossy(&group.bytes).replace('\u{FFFD}', "");
        let punctuated = text.trim().to_owned();
        let (Some(&first), Some(&last)) = (group.core.first(), group.core.last()) else {
            // Pure punctuation (a lone dash, a closing quote after a space): keep it visible.
            if let Some(prev) = words.last_mut() {
                prev.punctuated.push_str(&punctuated);
            }
            continue;
        };
        // DTW marks where the previous token ends, which is where this word can begin.
        let previous_dtw = first.checked_sub(1).and_then(|prev| tokens[prev].dtw_s);
        let start_s = previous_dtw.unwrap_or(tokens[first].t0_s);
        let mut end_s = tokens[last].dtw_s.unwrap_or(tokens[last].t1_s);
        if Some(last) == last_core {
            // DTW cannot place the end of a segment's last token (nothing follows it), and
            // often stops short; the segment's closing timestamp bounds it from after.
            end_s = end_s.max(tokens[last].t1_s);
        }
        let end_s = end_s.max(start_s);
        let word = bare_word(&punctuated).to_owned();
        if word.is_empty() {
            continue;
        }
        let estimate = Estimate {
            start_s,
            end_s,
            start_from_dtw: previous_dtw.is_some(),
            letters: word.chars().filter(|c| c.is_alphanumeric()).count() as u32,
        };
        let confidence = group
            .core
            .iter()
            .map(|&i| tokens[i].probability)
            .fold(1.0, f32::min);
        words.push(RawWord {
            word,
            punctuated,
            estimate,
            confidence,
        });
    }
    words
}

/// How many bytes at the end of `bytes` begin a UTF-8 character they do not finish.
fn unfinished_character(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let byte = bytes[bytes.len() - back];
        if byte & 0xC0 == 0x80 {
            continue; // a continuation byte: the character began further back
        }
        let length = match byte {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        return if length > back { back } else { 0 };
    }
    0
}

/// Moves the bytes of a character whisper split between two segments (its first bytes ending
/// one, the rest opening the next) into the next segment, so that neither holds half a
/// character (read as U+FFFD: a Japanese clip gave a word "�" and another "\u{FFFD}う").
/// A piece's last segment ending inside a character loses those bytes: nothing finishes it.
pub(crate) fn carry_split_characters(segments: &mut [Vec<Token>]) {
    for k in 0..segments.len() {
        let bytes: Vec<u8> = segments[k]
            .iter()
            .flat_map(|t| t.bytes.iter().copied())
            .collect();
        let mut carried = unfinished_character(&bytes);
        if carried == 0 {
            continue;
        }
        let mut moved: Vec<u8> = Vec::with_capacity(carried);
        while carried > 0 {
            let Some(last) = segments[k].last_mut() else {
                break;
            };
            let take = carried.min(last.bytes.len());
            let at = last.bytes.len() - take;
            moved.splice(0..0, last.bytes.drain(at..));
            carried -= take;
            if last.bytes.is_empty() {
                segments[k].pop();
            }
        }
        if let Some(first) = segments.get_mut(k + 1).and_then(|next| next.first_mut()) {
            first.bytes.splice(0..0, moved);
        }
    }
}

/// Whether `c` cannot begin a word: it belongs to the syllable before it (a small kana, the
/// long-vowel mark, a voicing mark) or is a combining mark.
fn leans_on_the_character_before(c: char) -> bool {
    matches!(c,
        'ぁ' | 'ぃ' | 'ぅ' | 'ぇ' | 'ぉ' | 'っ' | 'ゃ' | 'ゅ' | 'ょ' | 'ゎ' | 'ゕ' | 'ゖ'
        | 'ァ' | 'ィ' | 'ゥ' | 'ェ' | 'ォ' | 'ッ' | 'ャ' | 'ュ' | 'ョ' | 'ヮ' | 'ヵ' | 'ヶ'
        | 'ー' | 'ｰ' | '゛' | '゜' | 'ﾞ' | 'ﾟ'
        | '\u{31F0}'..='\u{31FF}' // small katakana for Ainu
        | '\u{0300}'..='\u{036F}' // combining diacritical marks
        | '\u{3099}'..='\u{309A}' // combining voicing marks
        | '\u{1AB0}'..='\u{1AFF}'
        | '\u{20D0}'..='\u{20FF}'
        | '\u{FE20}'..='\u{FE2F}')
}

/// Joins a word that opens on a character that cannot begin one (a small kana, "ー", a
/// combining mark: whisper cut "きょう" as "き" | "ょう" at a segment's end) to the word
/// before it, which then ends where it ended.
pub(crate) fn join_leaning_words(words: Vec<caption_core::Word>) -> Vec<caption_core::Word> {
    let mut out: Vec<caption_core::Word> = Vec::with_capacity(words.len());
    for word in words {
        let leans = word
            .punctuated_word
            .chars()
            .next()
            .is_some_and(leans_on_the_character_before);
        match out.last_mut() {
            Some(before) if leans => {
                before.word.push_str(&word.word);
                before.punctuated_word.push_str(&word.punctuated_word);
                before.end = before.end.max(word.end);
                before.confidence = match (before.confidence, word.confidence) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
            }
            _ => out.push(word),
        }
    }
    out
}

/// Cuts words of scripts written without spaces (whisper gives a Chinese or Japanese phrase as
/// one "word") into dictionary words, sharing each phrase's time by characters. Other words
/// pass through.
pub(crate) fn split_unspaced_words(words: Vec<caption_core::Word>) -> Vec<caption_core::Word> {
    let mut out = Vec::with_capacity(words.len());
    for word in words {
        let pieces = caption_core::split_unspaced(&word.punctuated_word);
        if pieces.len() < 2 {
            out.push(word);
            continue;
        }
        let weight = |p: &str| bare_word(p).chars().count().max(1) as f64;
        let total: f64 = pieces.iter().map(|p| weight(p)).sum();
        let span_s = word.end - word.start;
        let mut at_s = word.start;
        for (i, piece) in pieces.iter().enumerate() {
            let end_s = if i + 1 == pieces.len() {
                word.end
            } else {
                at_s + span_s * weight(piece) / total
            };
            let bare = bare_word(piece);
            out.push(caption_core::Word {
                start: (at_s * 1000.0).round() / 1000.0,
                end: (end_s * 1000.0).round() / 1000.0,
                word: if bare.is_empty() { piece } else { bare }.to_owned(),
                punctuated_word: (*piece).to_owned(),
                emoji: None,
                ..Default::default()
            });
            at_s = end_s;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(text: &[u8], at: f64) -> Token {
        Token {
            bytes: text.to_vec(),
            t0_s: at,
            t1_s: at + 0.1,
            dtw_s: Some(at + 0.1),
            probability: 0.9,
        }
    }

    fn texts(words: &[RawWord]) -> Vec<(&str, &str)> {
        words
            .iter()
            .map(|w| (w.word.as_str(), w.punctuated.as_str()))
            .collect()
    }

    #[test]
    fn joins_subword_tokens_and_attaches_punctuation() {
        let tokens = [
            tok(b" And", 0.0),
            tok(b" so", 0.1),
            tok(b",", 0.2),
            tok(b" Amer", 0.3),
            tok(b"icans", 0.4),
            tok(b" (", 0.5),
            tok(b"yes", 0.6),
            tok(b").", 0.7),
        ];
        let words = assemble(&tokens);
        assert_eq!(
            texts(&words),
            vec![
                ("And", "And"),
                ("so", "so,"),
                ("Americans", "Americans"),
                ("yes", "(yes).")
            ]
        );
        assert_eq!(
            words[2].estimate,
            Estimate {
                start_s: 0.30000000000000004,
                end_s: 0.5,
                start_from_dtw: true,
                letters: 9,
            }
        );
        assert_eq!(
            words[0].estimate.start_s, 0.0,
            "the first word starts at its own t0"
        );
    }

    #[test]
    fn a_character_split_between_segments_is_carried_whole_into_the_next() {
        // "今日は" | "きょう": the three bytes of "き" split 1 | 2 across the segments.
        let kyo = "きょう".as_bytes();
        let mut segments = vec![
            vec![tok("今日は".as_bytes(), 0.0), tok(&kyo[..1], 0.5)],
            vec![tok(&kyo[1..], 0.6), tok("です".as_bytes(), 0.9)],
        ];
        carry_split_characters(&mut segments);
        assert_eq!(segments[0].len(), 1, "the token left empty is dropped");
        let first = assemble(&segments[0]);
        let second = assemble(&segments[1]);
        assert_eq!(texts(&first), vec![("今日は", "今日は")]);
        assert_eq!(texts(&second), vec![("きょうです", "きょうです")]);
        // A last segment ending inside a character loses the half, and no word holds U+FFFD.
        let mut last = vec![vec![tok("はい".as_bytes(), 0.0), tok(&kyo[..2], 0.3)]];
        carry_split_characters(&mut last);
        assert_eq!(texts(&assemble(&last[0])), vec![("はい", "はい")]);
        let stray = assemble(&[tok(&[0xe3, 0x81], 0.0), tok("あ".as_bytes(), 0.1)]);
        assert!(
            stray.iter().all(|w| !w.punctuated.contains('\u{FFFD}')),
            "{stray:?}"
        );
    }

    #[test]
    fn small_kana_and_marks_join_the_word_before() {
        let words = vec![
            caption_core::Word::new(0.0, 0.4, "き"),
            caption_core::Word::new(0.4, 0.7, "ょう"),
            caption_core::Word::new(0.7, 1.0, "は"),
            caption_core::Word::new(1.0, 1.2, "ー"),
        ];
        let joined = join_leaning_words(words);
        let got: Vec<(&str, f64, f64)> = joined
            .iter()
            .map(|w| (w.punctuated_word.as_str(), w.start, w.end))
            .collect();
        assert_eq!(got, vec![("きょう", 0.0, 0.7), ("はー", 0.7, 1.2)]);
        // Nothing before it: a leaning word stays a word.
        let alone = join_leaning_words(vec![caption_core::Word::new(0.0, 0.3, "ょ")]);
        assert_eq!(alone.len(), 1);
    }

    #[test]
    fn characters_split_across_tokens_decode_whole() {
        // "¿Mañana?" with the two bytes of "ñ" in different tokens.
        let tokens = [
            tok(" ¿Ma".as_bytes(), 0.0),
            tok(&[0xc3], 0.1),
            tok(&[0xb1, b'a', b'n', b'a', b'?'], 0.2),
        ];
        let words = assemble(&tokens);
        assert_eq!(texts(&words), vec![("Mañana", "¿Mañana?")]);
    }

    #[test]
    fn unspaced_phrases_become_words_sharing_the_time() {
        let phrase = caption_core::Word {
            start: 1.0,
            end: 2.2,
            word: "我们今天去公园".into(),
            punctuated_word: "我们今天去公园。".into(),
            emoji: None,
            ..Default::default()
        };
        let english = caption_core::Word::new(2.3, 2.6, "park");
        let words = split_unspaced_words(vec![phrase, english.clone()]);
        let texts: Vec<&str> = words.iter().map(|w| w.punctuated_word.as_str()).collect();
        assert_eq!(texts, ["我们", "今天", "去", "公园。", "park"]);
        assert_eq!(words[3].word, "公园");
        assert_eq!((words[0].start, words[3].end), (1.0, 2.2));
        assert!(
            words
                .windows(2)
                .all(|w| w[0].end <= w[1].start && w[0].start < w[0].end)
        );
        assert_eq!(words[4], english);
    }
}
