//! Word text rules: which form of a word shows, letter case, sentence ends, scripts written
//! without spaces.

use caption_core::CapitalizationType;
use icu_segmenter::WordSegmenter;
use icu_segmenter::options::WordBreakInvariantOptions;

/// Characters that end a sentence (Latin, CJK full-width, Arabic, Devanagari danda).
const SENTENCE_END: &[char] = &['.', '!', '?', '…', '。', '！', '？', '؟', '।', '॥'];
/// Characters that end a clause but not a sentence.
const CLAUSE_END: &[char] = &[',', ';', ':', '、', '，', '；', '：', '،', '؛', '—'];
/// Closing marks that may follow the final punctuation (`"Stop!"`, `(yes.)`).
const CLOSERS: &[char] = &['"', '\'', ')', ']', '}', '»', '”', '’', '」', '』', '）'];

fn last_meaningful(text: &str) -> Option<char> {
    text.trim_end()
        .trim_end_matches(|c| CLOSERS.contains(&c))
        .chars()
        .next_back()
}

/// Whether a punctuated word ends a sentence.
pub fn ends_sentence(punctuated: &str) -> bool {
    last_meaningful(punctuated).is_some_and(|c| SENTENCE_END.contains(&c))
}

/// Whether a punctuated word ends a sentence or a clause (the PUNCTUATION page rule).
pub fn ends_clause(punctuated: &str) -> bool {
    last_meaningful(punctuated)
        .is_some_and(|c| SENTENCE_END.contains(&c) || CLAUSE_END.contains(&c))
}

/// Scripts written without spaces between words: Han, kana, Thai, Lao, Khmer, Myanmar.
fn is_unspaced_char(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x303F   // CJK punctuation
        | 0x3040..=0x30FF // hiragana, katakana
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xF900..=0xFAFF
        | 0xFF00..=0xFF60 // full-width forms
        | 0x20000..=0x2FA1F
        | 0x0E00..=0x0E7F // Thai
        | 0x0E80..=0x0EFF // Lao
        | 0x1000..=0x109F // Myanmar
        | 0x1780..=0x17FF // Khmer
    )
}

/// Whether two adjacent words join with no space: both sides of the joint are in a script that
/// writes no spaces between words (so a Japanese line never gets invented spaces).
pub fn joins_without_space(left: &str, right: &str) -> bool {
    let l = left.chars().next_back();
    let r = right.chars().next();
    matches!((l, r), (Some(l), Some(r)) if is_unspaced_char(l) && is_unspaced_char(r))
}

/// Splits a token of a script without spaces into its words (dictionary/LSTM segmentation from
/// ICU4X), keeping punctuation on the word before it. Other text comes back whole.
pub fn split_unspaced(text: &str) -> Vec<&str> {
    if text.chars().count() < 2 || !text.chars().any(is_unspaced_char) {
        return vec![text];
    }
    let segmenter = WordSegmenter::new_auto(WordBreakInvariantOptions::default());
    // Byte ranges of the pieces; a piece that is not word-like (punctuation, spaces) extends
    // the piece before it so it stays glued to its word.
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let mut iter = segmenter.segment_str(text);
    let mut prev = iter.next().unwrap_or(0);
    while let Some(next) = iter.next() {
        match ranges.last_mut() {
            Some(last) if !iter.is_word_like() => last.1 = next,
            _ => ranges.push((prev, next)),
        }
        prev = next;
    }
    if ranges.is_empty() {
        return vec![text];
    }
    ranges.iter().map(|&(a, b)| &text[a..b]).collect()
}

/// Applies a capitalization rule to one word; `starts_sentence` says whether it is the first
/// word of a sentence (for SENTENCE).
pub(crate) fn capitalize(text: &str, rule: CapitalizationType, starts_sentence: bool) -> String {
    match rule {
        CapitalizationType::None => text.to_owned(),
        CapitalizationType::Uppercase => text.to_uppercase(),
        CapitalizationType::Lowercase => text.to_lowercase(),
        CapitalizationType::Capitalize => upper_first(text),
        CapitalizationType::Sentence => {
            // Acronyms and "I" keep their capitals; everything else follows sentence case.
            let letters: Vec<char> = text.chars().filter(|c| c.is_alphabetic()).collect();
            let all_caps = !letters.is_empty()
                && letters.iter().all(|c| c.is_uppercase())
                && (letters.len() > 1 || letters == ['I']);
            if all_caps {
                text.to_owned()
            } else if starts_sentence {
                upper_first(&text.to_lowercase())
            } else {
                text.to_lowercase()
            }
        }
    }
}

fn upper_first(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut done = false;
    for c in text.chars() {
        if !done && c.is_alphabetic() {
            out.extend(c.to_uppercase());
            done = true;
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn sentence_and_clause_ends() {
        assert!(ends_sentence("done."));
        assert!(ends_sentence("\"Stop!\""));
        assert!(ends_sentence("終わり。"));
        assert!(!ends_sentence("well,"));
        assert!(ends_clause("well,"));
        assert!(!ends_clause("word"));
    }

    #[test]
    fn capitalization_rules() {
        use CapitalizationType as C;
        assert_eq!(capitalize("hello", C::Uppercase, false), "HELLO");
        assert_eq!(capitalize("HeLLo", C::Lowercase, false), "hello");
        assert_eq!(capitalize("'hello", C::Capitalize, false), "'Hello");
        assert_eq!(capitalize("hello", C::Sentence, true), "Hello");
        assert_eq!(capitalize("World", C::Sentence, false), "world");
        assert_eq!(capitalize("NASA", C::Sentence, false), "NASA");
        assert_eq!(capitalize("I", C::Sentence, false), "I");
    }

    #[test]
    fn japanese_splits_into_words_without_spaces() {
        let parts = split_unspaced("今日はいい天気ですね。");
        assert!(parts.len() >= 3, "{parts:?}");
        assert_eq!(parts.concat(), "今日はいい天気ですね。");
        assert!(parts.last().is_some_and(|p| p.ends_with('。')));
        assert_eq!(split_unspaced("hello"), vec!["hello"]);
        assert!(joins_without_space("今日", "は"));
        assert!(!joins_without_space("hello", "は"));
    }
}
