//! Scripts written without spaces between words (Chinese, Japanese, Thai, ...): telling them
//! apart and cutting their text into words.

use icu_segmenter::WordSegmenter;
use icu_segmenter::options::WordBreakInvariantOptions;

/// Scripts written without spaces between words: Han, kana, Thai, Lao, Khmer, Myanmar.
pub fn is_unspaced_char(c: char) -> bool {
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
