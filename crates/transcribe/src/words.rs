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
        let text = String::from_utf8_lossy(&group.bytes);
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
