//! Keyword emphasis: which words of a page carry its meaning.
//!
//! The rule, per page (as the layout pages the words):
//! - never a stop word (one of its language's [`STOP_WORDS`] most frequent words), a filler
//!   (`"filler": true`) or a word of fewer than three letters;
//! - a number (a word with a digit) scores [`NUMBER_SCORE`];
//! - any other word scores its rarity: minus the natural log of its probability in the
//!   language's word-frequency table (spaCy's lexeme probabilities, from the MIT-licensed
//!   `spacy-lookups-data` 1.0.5, installed by set-up for English, German, Spanish and Greek;
//!   a word the table lacks scores [`UNKNOWN_SCORE`]); a capitalised word inside a sentence (a
//!   name) scores [`NAME_BONUS`] more;
//! - a word qualifies from [`MIN_SCORE`] (rarer than about the 1,500 commonest English words);
//! - a page takes its best one qualifying word, or two when it has six words or more.
//!
//! Without a table for the language (or none installed), only numbers and names qualify.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

/// How many of a language's most frequent words count as stop words.
pub const STOP_WORDS: usize = 250;
/// Score of a word with a digit in it.
pub const NUMBER_SCORE: f32 = 20.0;
/// Rarity of a word the frequency table does not know.
pub const UNKNOWN_SCORE: f32 = 16.0;
/// Added for a capitalised word that does not start a sentence.
pub const NAME_BONUS: f32 = 2.0;
/// The least score that is emphasised.
pub const MIN_SCORE: f32 = 10.0;
/// Pages of at least this many words may take two emphasised words; shorter ones take one.
pub const TWO_FROM_WORDS: usize = 6;

/// One language's word probabilities: lower-case word → natural log probability.
#[derive(Debug, Clone, Default)]
pub struct FrequencyTable {
    logprob: HashMap<String, f32>,
    stop_below_rank: f32,
}

impl FrequencyTable {
    /// Reads `word<TAB>logprob` lines, likeliest first (the set-up's format).
    pub fn parse(tsv: &str) -> Self {
        let mut logprob = HashMap::new();
        let mut stop_below_rank = f32::INFINITY;
        for (rank, line) in tsv.lines().enumerate() {
            let Some((word, value)) = line.split_once('\t') else {
                continue;
            };
            let Ok(value) = value.trim().parse::<f32>() else {
                continue;
            };
            if rank < STOP_WORDS {
                stop_below_rank = stop_below_rank.min(value);
            }
            logprob.insert(word.to_owned(), value);
        }
        Self {
            logprob,
            stop_below_rank,
        }
    }

    fn is_stop_word(&self, key: &str) -> bool {
        self.logprob
            .get(key)
            .is_some_and(|&p| p >= self.stop_below_rank)
    }

    fn rarity(&self, key: &str) -> f32 {
        self.logprob.get(key).map_or(UNKNOWN_SCORE, |&p| -p)
    }

    fn knows(&self, key: &str) -> bool {
        self.logprob.contains_key(key)
    }
}

/// The frequency tables of every language installed.
#[derive(Debug, Clone, Default)]
pub struct WordFrequencies {
    tables: Vec<(String, FrequencyTable)>,
}

impl WordFrequencies {
    /// The tables in `dir` (`en.tsv`, `de.tsv`, ...); none when the folder is missing.
    pub fn load_dir(dir: &Path) -> Self {
        let mut tables = Vec::new();
        if let Ok(entries) = std::fs::read_dir(dir) {
            for entry in entries.flatten() {
                let path = entry.path();
                let (Some(lang), Some("tsv")) = (
                    path.file_stem().and_then(|s| s.to_str()),
                    path.extension().and_then(|s| s.to_str()),
                ) else {
                    continue;
                };
                if let Ok(text) = std::fs::read_to_string(&path) {
                    tables.push((lang.to_owned(), FrequencyTable::parse(&text)));
                }
            }
        }
        tables.sort_by(|a, b| a.0.cmp(&b.0));
        Self { tables }
    }

    /// A set of tables, by language code.
    pub fn from_tables(tables: Vec<(String, FrequencyTable)>) -> Self {
        Self { tables }
    }

    /// The tables set-up installed (`word-frequencies/` in `$CAPTIONS_MODELS`, or in
    /// `~/.cache/caption-engine/models`), read once per process.
    pub fn installed() -> &'static Self {
        static INSTALLED: OnceLock<WordFrequencies> = OnceLock::new();
        INSTALLED.get_or_init(|| {
            caption_core::models_dir().map_or_else(Self::default, |d| {
                Self::load_dir(&d.join("word-frequencies"))
            })
        })
    }

    /// The languages with a table.
    pub fn languages(&self) -> Vec<&str> {
        self.tables.iter().map(|(l, _)| l.as_str()).collect()
    }

    /// The table of the language most of `keys` belong to: the one that knows most of them.
    fn table_for<'a>(
        &self,
        keys: impl Iterator<Item = &'a str> + Clone,
    ) -> Option<&FrequencyTable> {
        self.tables
            .iter()
            .map(|(_, t)| (t, keys.clone().filter(|k| t.knows(k)).count()))
            .filter(|&(_, known)| known > 0)
            .max_by_key(|&(_, known)| known)
            .map(|(t, _)| t)
    }
}

/// What the rule needs of a word.
pub(crate) struct Candidate<'a> {
    /// The bare word, lower case.
    pub(crate) key: &'a str,
    /// The word as written starts with a capital.
    pub(crate) capitalised: bool,
    pub(crate) starts_sentence: bool,
    pub(crate) filler: bool,
}

/// Each word's score, or `None` when it can never be emphasised.
pub(crate) fn scores(words: &[Candidate<'_>], frequencies: &WordFrequencies) -> Vec<Option<f32>> {
    let table = frequencies.table_for(words.iter().map(|w| w.key));
    words
        .iter()
        .map(|w| {
            let letters = w.key.chars().filter(|c| c.is_alphanumeric()).count();
            if w.filler || letters < 3 {
                return None;
            }
            if w.key.chars().any(|c| c.is_ascii_digit()) {
                return Some(NUMBER_SCORE);
            }
            let name = w.capitalised && !w.starts_sentence;
            let bonus = if name { NAME_BONUS } else { 0.0 };
            match table {
                Some(t) if t.is_stop_word(w.key) => None,
                Some(t) => Some(t.rarity(w.key) + bonus),
                None if name => Some(MIN_SCORE + bonus),
                None => None,
            }
        })
        .collect()
}

/// The words to emphasise: on each page, its best qualifying words, at most one (two from
/// [`TWO_FROM_WORDS`] words on).
pub(crate) fn choose(scores: &[Option<f32>], pages: &[Range<usize>]) -> Vec<bool> {
    let mut marks = vec![false; scores.len()];
    for page in pages {
        let allowed = if page.len() >= TWO_FROM_WORDS { 2 } else { 1 };
        let mut ranked: Vec<(usize, f32)> = page
            .clone()
            .filter_map(|i| scores.get(i).copied().flatten().map(|s| (i, s)))
            .filter(|&(_, s)| s >= MIN_SCORE)
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        for &(i, _) in ranked.iter().take(allowed) {
            marks[i] = true;
        }
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> WordFrequencies {
        let mut tsv = String::new();
        for i in 0..STOP_WORDS {
            // Letters only: "commonaa", "commonab", ...
            let (a, b) = (b'a' + (i / 26) as u8, b'a' + (i % 26) as u8);
            let word = format!("common{}{}", a as char, b as char);
            tsv.push_str(&format!("{word}\t-{}\n", 3.0 + i as f32 * 0.01));
        }
        tsv.push_str("the\t-2.0\nrocket\t-11.1\nhouse\t-8.0\n");
        WordFrequencies::from_tables(vec![("en".into(), FrequencyTable::parse(&tsv))])
    }

    fn word(key: &str) -> Candidate<'_> {
        Candidate {
            key,
            capitalised: false,
            starts_sentence: false,
            filler: false,
        }
    }

    #[test]
    fn rare_words_and_numbers_win_stop_words_and_fillers_never() {
        let words = [
            word("commonaa"),
            word("rocket"),
            word("house"),
            word("2026"),
            Candidate {
                filler: true,
                ..word("ummmm")
            },
            word("zyxwv"),
        ];
        let s = scores(&words, &table());
        assert_eq!(s[0], None, "a stop word");
        assert_eq!(s[4], None, "a filler");
        assert_eq!(s[3], Some(NUMBER_SCORE));
        assert_eq!(s[5], Some(UNKNOWN_SCORE));
        let marks = choose(&s, &[Range { start: 0, end: 6 }]);
        // Six words: two marks, the number and the unknown word (rarer than "rocket").
        assert_eq!(marks, [false, false, false, true, false, true]);
        // A short page takes one; "house" is too common to qualify at all.
        assert_eq!(
            choose(&s, &[Range { start: 1, end: 3 }]),
            [false, true, false, false, false, false]
        );
    }
}
