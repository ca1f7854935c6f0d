//! The video's words made ready to place: sorted, the shown form and case chosen, and words of
//! scripts written without spaces split into pieces that share the word's time.

use caption_core::{Config, Word};

use crate::emoji::{EmojiLexicon, emoji_for_word_in};
use crate::text::{capitalize, ends_clause, ends_sentence, split_unspaced};

/// A word after sorting, form/case selection and splitting, before placement.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub(crate) text: String,
    pub(crate) start_s: f64,
    pub(crate) end_s: f64,
    pub(crate) ends_clause: bool,
    pub(crate) ends_sentence: bool,
    pub(crate) emoji: Option<String>,
    /// The word's speaker, numbered by first appearance (the `speakerColors` index).
    pub(crate) speaker: Option<usize>,
    /// The caller's emphasis mark, or the automatic choice once made.
    pub(crate) emphasis: Option<bool>,
    /// The bare word in lower case (what word frequencies are looked up by).
    pub(crate) key: String,
    /// The word as transcribed starts with a capital letter.
    pub(crate) capitalised: bool,
    /// The first word of a sentence.
    pub(crate) starts_sentence: bool,
    /// A filler ("um", "uh"): never emphasised.
    pub(crate) filler: bool,
}

pub(crate) fn prepare(words: &[Word], config: &Config) -> Vec<Prepared> {
    let mut sorted: Vec<&Word> = words
        .iter()
        .filter(|w| w.start.is_finite() && w.end.is_finite())
        .collect();
    sorted.sort_by(|a, b| a.start.total_cmp(&b.start));
    let lang = EmojiLexicon::get().guess_language(sorted.iter().map(|w| w.word.as_str()));
    let mut out = Vec::with_capacity(sorted.len());
    let mut sentence_start = true;
    let mut speakers: Vec<&str> = Vec::new();
    for w in sorted {
        let speaker = w.speaker.as_deref().map(|name| {
            speakers.iter().position(|s| *s == name).unwrap_or_else(|| {
                speakers.push(name);
                speakers.len() - 1
            })
        });
        let start_s = w.start.max(0.0);
        let end_s = w.end.max(start_s);
        let shown = if config.word_has_punctuation && !w.punctuated_word.trim().is_empty() {
            w.punctuated_word.trim()
        } else if !w.word.trim().is_empty() {
            w.word.trim()
        } else {
            w.punctuated_word.trim()
        };
        let punctuated = if w.punctuated_word.trim().is_empty() {
            &w.word
        } else {
            &w.punctuated_word
        };
        let clause = ends_clause(punctuated);
        let sentence = ends_sentence(punctuated);
        let emoji = emoji_for_word_in(lang, w.emoji.as_deref(), &w.word);
        if shown.is_empty() {
            sentence_start |= sentence;
            continue;
        }
        let pieces = split_unspaced(shown);
        let total_chars: usize = pieces.iter().map(|p| p.chars().count()).sum();
        let mut chars_before = 0usize;
        let n = pieces.len();
        for (k, piece) in pieces.into_iter().enumerate() {
            let chars = piece.chars().count();
            let frac = |c: usize| c as f64 / total_chars.max(1) as f64;
            let p_start = start_s + (end_s - start_s) * frac(chars_before);
            chars_before += chars;
            let p_end = start_s + (end_s - start_s) * frac(chars_before);
            let last = k + 1 == n;
            out.push(Prepared {
                text: capitalize(piece, config.capitalization_type, sentence_start && k == 0),
                start_s: p_start,
                end_s: if last { end_s } else { p_end },
                ends_clause: last && clause,
                ends_sentence: last && sentence,
                emoji: if last { emoji.clone() } else { None },
                speaker,
                emphasis: w.emphasis,
                key: caption_core::bare_word(piece).to_lowercase(),
                capitalised: piece.chars().next().is_some_and(char::is_uppercase),
                starts_sentence: sentence_start && k == 0,
                filler: w.filler,
            });
        }
        sentence_start = sentence;
    }
    out
}
