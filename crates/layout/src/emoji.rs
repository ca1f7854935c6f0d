//! The keyword → emoji lexicon: Unicode CLDR's emoji annotations (keywords people use for each
//! emoji, in English, Spanish, French, German, Portuguese and Italian; `data/`, rebuilt by
//! `scripts/update-emoji-keywords`), with the `emojis` crate's GitHub shortcodes and names as a
//! further English source, rather than a hand-made table.
//!
//! CLDR lists, for a keyword, the emoji of every sense and every spelling of it, in no order of
//! use: "first" is a moon ("first quarter moon") before a medal, "back" a face holding back
//! tears. So English words are first looked up by sense: a stop list of words that never get an
//! emoji (`data/stop-words-en.txt`), and the emoji of the sense common words have in creators'
//! videos, named by CLDR name (`data/emoji-senses-en.tsv`); CLDR's keywords cover the rest.

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use emojis::{Group, SkinTone};

/// Keywords shorter than this are too ambiguous ("a", "ok", "up").
const MIN_KEYWORD_CHARS: usize = 3;

/// A keyword CLDR gives to more emoji than this is a category ("face", "animal", "man"), not
/// a word worth an emoji.
const MAX_EMOJI_PER_KEYWORD: usize = 30;

/// The annotation files, by language (ISO 639-1).
const CLDR: &[(&str, &str)] = &[
    ("en", include_str!("../data/emoji-keywords-en.tsv")),
    ("es", include_str!("../data/emoji-keywords-es.tsv")),
    ("fr", include_str!("../data/emoji-keywords-fr.tsv")),
    ("de", include_str!("../data/emoji-keywords-de.tsv")),
    ("pt", include_str!("../data/emoji-keywords-pt.tsv")),
    ("it", include_str!("../data/emoji-keywords-it.tsv")),
];

/// English words that never get an emoji (function words, light verbs, vague words).
const STOP_WORDS_EN: &str = include_str!("../data/stop-words-en.txt");

/// English words with the CLDR name of the emoji of their sense in creators' videos, or `-`.
const SENSES_EN: &str = include_str!("../data/emoji-senses-en.tsv");

/// Frequent words of each language, to tell which language a transcript is in (a word list
/// carries no language of its own).
const MARKERS: &[(&str, &str)] = &[
    ("en", "the and you that is to of it this with"),
    ("es", "el los que y es por una con para pero"),
    ("fr", "le les et est une des pour pas vous avec"),
    ("de", "der die das und ist nicht ich mit ein sie"),
    ("pt", "o os não uma para com você mas isso em"),
    ("it", "il che di non per una sono questo gli con"),
];

/// Maps lower-case keywords to emoji, per language.
#[derive(Debug)]
pub struct EmojiLexicon {
    by_language: HashMap<&'static str, HashMap<String, &'static str>>,
    /// English words that never get an emoji.
    stop_words: HashSet<&'static str>,
    /// English words with the emoji of their sense (`None`: no emoji in any sense).
    senses: HashMap<&'static str, Option<&'static str>>,
}

/// The stop list's words.
fn stop_words(text: &'static str) -> HashSet<&'static str> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .flat_map(str::split_whitespace)
        .collect()
}

/// The sense table: each word with its emoji, found by CLDR name; the names that name no emoji
/// are returned apart (a broken table, which the tests refuse).
fn senses(
    text: &'static str,
) -> (
    HashMap<&'static str, Option<&'static str>>,
    Vec<&'static str>,
) {
    let by_name: HashMap<&'static str, &'static str> =
        emojis::iter().map(|e| (e.name(), e.as_str())).collect();
    let mut table = HashMap::new();
    let mut unknown = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let Some((word, name)) = line.split_once('\t') else {
            unknown.push(line);
            continue;
        };
        if name == "-" {
            table.insert(word, None);
        } else if let Some(&emoji) = by_name.get(name) {
            table.insert(word, Some(emoji));
        } else {
            unknown.push(name);
        }
    }
    (table, unknown)
}

static LEXICON: LazyLock<EmojiLexicon> = LazyLock::new(EmojiLexicon::build);

/// Whether the emoji is one a caption should show for a word: not a symbol or flag (they
/// match ordinary words by accident: "on", "free", "top"), not a skin-tone variant.
fn drawable(emoji: &emojis::Emoji) -> bool {
    !matches!(emoji.group(), Group::Symbols | Group::Flags)
        && emoji
            .skin_tone()
            .is_none_or(|tone| tone == SkinTone::Default)
}

/// Keyword → emoji from one annotation file (`keyword<TAB>count<TAB>emoji…`).
fn parse_annotations(text: &'static str) -> HashMap<String, &'static str> {
    let mut out = HashMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let mut fields = line.split('\t');
        let (Some(keyword), Some(count), Some(emoji)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if count
            .parse::<usize>()
            .map_or(true, |n| n > MAX_EMOJI_PER_KEYWORD)
            || keyword.chars().count() < MIN_KEYWORD_CHARS
        {
            continue;
        }
        let pick = emoji
            .split(' ')
            .filter_map(|e| emojis::get(e).filter(|found| drawable(found)).map(|_| e))
            .next();
        if let Some(e) = pick {
            out.insert(keyword.to_owned(), e);
        }
    }
    out
}

impl EmojiLexicon {
    /// The shared lexicon (built once).
    pub fn get() -> &'static Self {
        &LEXICON
    }

    fn build() -> Self {
        let mut by_language: HashMap<&'static str, HashMap<String, &'static str>> = CLDR
            .iter()
            .map(|(lang, text)| (*lang, parse_annotations(text)))
            .collect();
        let english = by_language.entry("en").or_default();
        for emoji in emojis::iter().filter(|e| drawable(e)) {
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
                    english.entry(keyword.to_owned()).or_insert(emoji.as_str());
                }
            }
        }
        Self {
            by_language,
            stop_words: stop_words(STOP_WORDS_EN),
            senses: senses(SENSES_EN).0,
        }
    }

    /// The languages with keywords.
    pub fn languages(&self) -> Vec<&'static str> {
        let mut langs: Vec<&'static str> = self.by_language.keys().copied().collect();
        langs.sort_unstable();
        langs
    }

    /// The language a transcript is most likely in, by its frequent words; English when none
    /// stands out.
    pub fn guess_language<'w>(&self, words: impl IntoIterator<Item = &'w str>) -> &'static str {
        let mut counts = [0usize; MARKERS.len()];
        for word in words {
            let key = word
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase();
            for (k, (_, markers)) in MARKERS.iter().enumerate() {
                counts[k] += usize::from(markers.split(' ').any(|m| m == key));
            }
        }
        let (best, &n) = counts
            .iter()
            .enumerate()
            .max_by_key(|&(k, n)| (n, std::cmp::Reverse(k)))
            .unwrap_or((0, &0));
        if n == 0 { "en" } else { MARKERS[best].0 }
    }

    /// The emoji for an English word; see [`Self::lookup_in`].
    pub fn lookup(&self, word: &str) -> Option<&'static str> {
        self.lookup_in("en", word)
    }

    /// The emoji for a word of language `lang` (English keywords when `lang` has none),
    /// ignoring case and surrounding punctuation; tries a simple singular for plurals
    /// ("dogs" → "dog"). An English word is looked up by sense first: a stop word gets none,
    /// a word of the sense table its emoji there; CLDR's keywords cover the rest.
    pub fn lookup_in(&self, lang: &str, word: &str) -> Option<&'static str> {
        let key: String = word
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if key.chars().count() < MIN_KEYWORD_CHARS {
            return None;
        }
        let (lang, table) = match self.by_language.get_key_value(lang) {
            Some((lang, table)) => (*lang, table),
            None => ("en", self.by_language.get("en")?),
        };
        let singular = key
            .strip_suffix("es")
            .filter(|s| s.ends_with("sh") || s.ends_with("ch") || s.ends_with('x'))
            .or_else(|| key.strip_suffix('s'));
        let forms = std::iter::once(key.as_str()).chain(singular);
        if lang == "en" {
            for form in forms.clone() {
                if self.stop_words.contains(form) {
                    return None;
                }
                if let Some(&sense) = self.senses.get(form) {
                    return sense;
                }
            }
        }
        forms.filter_map(|form| table.get(form).copied()).next()
    }

    /// Keywords of every language.
    pub fn len(&self) -> usize {
        self.by_language.values().map(HashMap::len).sum()
    }

    /// Whether the lexicon has no keyword.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The emoji shown with an English word: the explicit one if given, else the lexicon's.
///
/// ```
/// use caption_layout::emoji_for_word;
///
/// assert_eq!(emoji_for_word(None, "pizza").as_deref(), Some("🍕"));
/// assert_eq!(emoji_for_word(Some("🔥"), "pizza").as_deref(), Some("🔥"));
/// assert_eq!(emoji_for_word(None, "the"), None);
/// ```
pub fn emoji_for_word(explicit: Option<&str>, bare_word: &str) -> Option<String> {
    emoji_for_word_in("en", explicit, bare_word)
}

/// The emoji shown with a word of language `lang`: the explicit one if given, else the
/// lexicon's.
pub fn emoji_for_word_in(lang: &str, explicit: Option<&str>, bare_word: &str) -> Option<String> {
    match explicit {
        Some(e) if !e.trim().is_empty() => Some(e.trim().to_owned()),
        _ => EmojiLexicon::get()
            .lookup_in(lang, bare_word)
            .map(str::to_owned),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests fail loudly")]
mod tests {
    use super::*;

    #[test]
    fn common_words_map_to_emoji() {
        let lex = EmojiLexicon::get();
        assert!(lex.len() > 10_000, "{}", lex.len());
        assert_eq!(lex.lookup("Fire!"), Some("🔥"));
        assert_eq!(lex.lookup("rocket"), Some("🚀"));
        assert_eq!(lex.lookup("pizza"), Some("🍕"));
        assert_eq!(lex.lookup("dogs"), Some("🐕"));
        for word in ["love", "money", "great", "subscribe"] {
            assert!(lex.lookup(word).is_some(), "{word}");
        }
        for plain in ["the", "on", "free", "a", "and", "face", "right"] {
            assert_eq!(lex.lookup(plain), None, "{plain}");
        }
    }

    #[test]
    fn every_sense_names_an_emoji_and_no_word_is_both_stopped_and_sensed() {
        let (table, unknown) = senses(SENSES_EN);
        assert!(unknown.is_empty(), "names of no emoji: {unknown:?}");
        assert!(table.len() > 50, "{}", table.len());
        let stopped = stop_words(STOP_WORDS_EN);
        let both: Vec<_> = table.keys().filter(|w| stopped.contains(*w)).collect();
        assert!(both.is_empty(), "{both:?}");
    }

    #[test]
    fn senses_and_stop_words_reach_plurals_and_stay_english() {
        let lex = EmojiLexicon::get();
        assert_eq!(lex.lookup("Goals!"), lex.lookup("goal"));
        assert_eq!(lex.lookup("goal"), Some("🎯"));
        assert_eq!(lex.lookup("things"), None);
        // The English stop list does not silence another language's keywords.
        assert_eq!(lex.lookup_in("fr", "pain"), Some("🍞"));
    }

    #[test]
    fn other_languages_have_their_own_keywords() {
        let lex = EmojiLexicon::get();
        assert_eq!(lex.languages(), ["de", "en", "es", "fr", "it", "pt"]);
        assert_eq!(lex.lookup_in("es", "fuego"), Some("🔥"));
        assert_eq!(lex.lookup_in("fr", "fusée"), Some("🚀"));
        assert_eq!(lex.lookup_in("de", "Feuer"), Some("🔥"));
        // French "pain" is bread; English "pain" is not.
        assert_eq!(lex.lookup_in("fr", "pain"), Some("🍞"));
        assert_ne!(lex.lookup("pain"), Some("🍞"));
        let spanish = "el fuego y la pizza que me gusta".split(' ');
        assert_eq!(lex.guess_language(spanish), "es");
        assert_eq!(
            lex.guess_language("the fire and the rocket".split(' ')),
            "en"
        );
        assert_eq!(lex.guess_language(["pizza"]), "en");
    }

    #[test]
    fn explicit_emoji_wins() {
        assert_eq!(emoji_for_word(Some("🎉"), "fire"), Some("🎉".into()));
        assert_eq!(emoji_for_word(None, "fire"), Some("🔥".into()));
        assert_eq!(emoji_for_word(Some(" "), "xyzzy"), None);
    }
}
