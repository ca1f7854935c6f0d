//! Filler words: the "um"s and "uh"s a speaker fills pauses with.
//!
//! The rule:
//! - a hesitation sound is always a filler: um, umm, uh, uhh, erm, er, ah, eh, hmm, mm;
//! - "like" is a filler when a comma sets it off (", like" or "like,") and the word before it
//!   is not one that makes it a verb ("I like," "would like,"): "It was, like, huge" and "like,
//!   we went" have one; "I like it" and "looks like rain" do not.
//!
//! ```
//! use caption_core::{Word, mark_fillers};
//!
//! let mut words: Vec<Word> = ["So,", "um,", "it", "was,", "like,", "huge.", "I", "like", "it."]
//!     .iter()
//!     .enumerate()
//!     .map(|(i, w)| {
//!         let mut word = Word::new(i as f64, i as f64 + 0.5, caption_core::bare_word(w));
//!         word.punctuated_word = (*w).to_owned();
//!         word
//!     })
//!     .collect();
//! mark_fillers(&mut words);
//! let marked: Vec<&str> = words.iter().filter(|w| w.filler).map(|w| w.word.as_str()).collect();
//! assert_eq!(marked, ["um", "like"]);
//! ```

use crate::word::Word;

/// Hesitation sounds, always fillers.
const HESITATIONS: &[&str] = &[
    "um", "umm", "uh", "uhh", "erm", "er", "ah", "eh", "hmm", "mm",
];

/// Words after which "like" is a verb or part of one, not a filler.
const LIKE_AS_VERB_AFTER: &[&str] = &[
    "i", "you", "we", "they", "would", "i'd", "you'd", "we'd", "they'd", "do", "don't", "did",
    "didn't", "really", "also",
];

/// Sets `filler` on each word the rule above names a filler; other words are left as they are
/// (a mark the caller set stays).
pub fn mark_fillers(words: &mut [Word]) {
    for i in 0..words.len() {
        let key = words[i].word.to_lowercase();
        let filler = if HESITATIONS.contains(&key.as_str()) {
            true
        } else if key == "like" {
            let set_off_after = words[i].punctuated_word.trim_end().ends_with(',');
            let before = i.checked_sub(1).map(|k| &words[k]);
            let set_off_before =
                before.is_some_and(|w| w.punctuated_word.trim_end().ends_with(','));
            let verb = before
                .is_some_and(|w| LIKE_AS_VERB_AFTER.contains(&w.word.to_lowercase().as_str()));
            (set_off_after || set_off_before) && !verb
        } else {
            false
        };
        if filler {
            words[i].filler = true;
        }
    }
}
