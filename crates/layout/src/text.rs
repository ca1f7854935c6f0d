//! Word text rules: which form of a word shows, letter case, sentence ends, scripts written
//! without spaces.

use caption_core::CapitalizationType;
pub use caption_core::{joins_without_space, split_unspaced};

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
