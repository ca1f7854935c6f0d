//! Punctuation around words: what a word's bare form leaves out.

/// Whether `c` is punctuation that sticks to a word: ASCII punctuation and the quotes, dashes
/// and full-width marks of other scripts.
pub fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(
            c,
            '¿' | '¡'
                | '«'
                | '»'
                | '…'
                | '“'
                | '”'
                | '‘'
                | '’'
                | '„'
                | '—'
                | '–'
                | '·'
                | '。'
                | '，'
                | '、'
                | '！'
                | '？'
                | '：'
                | '；'
                | '「'
                | '」'
                | '『'
                | '』'
                | '（'
                | '）'
                | '‹'
                | '›'
        )
}

/// A word without the punctuation at its ends (inner apostrophes and hyphens stay: "don't",
/// "well-known").
///
/// ```
/// assert_eq!(caption_core::bare_word("\"don't!\""), "don't");
/// assert_eq!(caption_core::bare_word("«well-known»,"), "well-known");
/// ```
pub fn bare_word(punctuated: &str) -> &str {
    punctuated.trim_matches(|c: char| is_punctuation(c) || c.is_whitespace())
}
