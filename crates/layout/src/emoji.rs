//! The keyword → emoji lexicon, built from the `emojis` crate's CLDR names and GitHub
//! shortcodes rather than a hand-made table.

use std::collections::HashMap;
use std::sync::LazyLock;

use emojis::{Group, SkinTone};

/// Keywords shorter than this are too ambiguous ("a", "ok", "up").
const MIN_KEYWORD_CHARS: usize = 3;

/// Maps lower-case keywords to emoji.
#[derive(Debug)]
pub struct EmojiLexicon {
    by_keyword: HashMap<String, &'static str>,
}

static LEXICON: LazyLock<EmojiLexicon> = LazyLock::new(EmojiLexicon::build);

impl EmojiLexicon {
    /// The shared lexicon (built once).
    pub fn get() -> &'static Self {
        &LEXICON
    }

    fn build() -> Self {
        let mut by_keyword = HashMap::new();
        for emoji in emojis::iter() {
            // Symbols ("on", "free", "top", letters) and flags match ordinary words by accident.
            if matches!(emoji.group(), Group::Symbols | Group::Flags) {
                continue;
            }
            if emoji
                .skin_tone()
                .is_some_and(|tone| tone != SkinTone::Default)
            {
                continue;
            }
            let name = emoji.name().to_lowercase();
            let single_word_name = (!name.contains(' ')).then_some(name.as_str());
            let keywords = emoji
                .shortcodes()
                .filter(|code| !code.contains('_') && !code.contains('-'))
                .chain(single_word_name);
            for keyword in keywords {
                if keyword.chars().count() >= MIN_KEYWORD_CHARS
                    && keyword.chars().all(char::is_alphabetic)
                {
                    // The first emoji listed for a keyword wins (CLDR order: the common one).
                    by_keyword
                        .entry(keyword.to_owned())
                        .or_insert(emoji.as_str());
                }
            }
        }
        Self { by_keyword }
    }

    /// The emoji for a word, ignoring case and surrounding punctuation; tries a simple
    /// singular for plurals ("dogs" → "dog").
    pub fn lookup(&self, word: &str) -> Option<&'static str> {
        let key: String = word
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if key.chars().count() < MIN_KEYWORD_CHARS {
            return None;
        }
        if let Some(e) = self.by_keyword.get(&key) {
            return Some(e);
        }
        let singular = key
            .strip_suffix("es")
            .filter(|s| s.ends_with("sh") || s.ends_with("ch") || s.ends_with('x'))
            .or_else(|| key.strip_suffix('s'))?;
        self.by_keyword.get(singular).copied()
    }

    pub fn len(&self) -> usize {
        self.by_keyword.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_keyword.is_empty()
    }
}

/// The emoji shown with a word: the explicit one if given, else the lexicon's.
pub fn emoji_for_word(explicit: Option<&str>, bare_word: &str) -> Option<String> {
    match explicit {
        Some(e) if !e.trim().is_empty() => Some(e.trim().to_owned()),
        _ => EmojiLexicon::get().lookup(bare_word).map(str::to_owned),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn common_words_map_to_emoji() {
        let lex = EmojiLexicon::get();
        assert!(lex.len() > 500, "{}", lex.len());
        assert_eq!(lex.lookup("Fire!"), Some("🔥"));
        assert_eq!(lex.lookup("rocket"), Some("🚀"));
        assert_eq!(lex.lookup("pizza"), Some("🍕"));
        assert_eq!(lex.lookup("dogs"), Some("🐶"));
        for plain in ["the", "on", "free", "a", "and"] {
            assert_eq!(lex.lookup(plain), None, "{plain}");
        }
    }

    #[test]
    fn explicit_emoji_wins() {
        assert_eq!(emoji_for_word(Some("🎉"), "fire"), Some("🎉".into()));
        assert_eq!(emoji_for_word(None, "fire"), Some("🔥".into()));
        assert_eq!(emoji_for_word(Some(" "), "xyzzy"), None);
    }
}
