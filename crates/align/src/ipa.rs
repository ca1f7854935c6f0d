//! IPA phones (espeak-ng's, any language) as the nearest phones of PocketSphinx's en-us
//! acoustic model: cross-language forced alignment.
//!
//! A language without an acoustic model of its own is aligned with the English one, each of
//! its phones said as the English phone nearest to it. The boundaries between words come out
//! as well as in English (espeak-ng speech in es, fr, de, it, pt, nl: 12-17 ms mean error,
//! every clip on target), because a word boundary needs the acoustic model to tell one stretch
//! of sound from the next, not to know the language: a French /y/ scored as English IY still
//! lies between the /d/ before it and the /ʁ/ after it.
//!
//! The table below was measured against alternatives on the bench's tuning clips, one change
//! at a time: `r` sounds as D or HH and ʋ as W changed nothing; nasal vowels followed by N,
//! spirants as stops and e as EH did worse; the tap as R cost Spanish 3 ms.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Stress, syllable, linking and tie marks (and the "^" espeak-ng puts after a Russian final
/// soft sign's vowel, the joiner inside its affricates): not phones.
const IGNORED: &[char] = &[
    'ˈ', 'ˌ', '-', '.', '‿', '\u{361}', '|', '\'', '^', '\u{200D}',
];
/// Length marks: a long vowel is the same phone, longer.
const LENGTH: &[char] = &['ː', 'ˑ'];
/// Secondary articulations and diacritics other than nasalisation: the same phone.
const MODIFIERS: &[char] = &[
    'ʰ', 'ʲ', 'ʷ', 'ˠ', 'ˤ', '\u{325}', '\u{32c}', '\u{329}', '\u{32f}', '\u{31a}', '\u{31e}',
    '\u{31d}', '\u{308}', 'ᵝ', '\u{33a}', '\u{32a}', '\u{33b}',
];
/// The combining tilde of a nasal vowel.
const NASAL: char = '\u{303}';

/// IPA symbols (and espeak-ng's multi-symbol units) and the en-us phones said for them.
const TABLE: &[(&str, &[&str])] = &[
    // Vowels.
    ("a", &["AA"]),
    ("ä", &["AA"]),
    ("ɑ", &["AA"]),
    ("æ", &["AE"]),
    ("ɐ", &["AH"]),
    ("ə", &["AH"]),
    ("ɜ", &["AH"]),
    ("ɚ", &["ER"]),
    ("ɝ", &["ER"]),
    ("ʌ", &["AH"]),
    ("e", &["EY"]),
    ("ɛ", &["EH"]),
    ("ɪ", &["IH"]),
    ("i", &["IY"]),
    ("ɨ", &["IH"]),
    ("o", &["OW"]),
    ("ɔ", &["AO"]),
    ("ɒ", &["AA"]),
    ("u", &["UW"]),
    ("ʊ", &["UH"]),
    ("ɯ", &["UW"]),
    ("ɤ", &["AH"]),
    ("ɘ", &["AH"]),
    ("ɵ", &["AH"]),
    // Front rounded vowels, which English lacks: as an English ear hears them (French 12.0 ->
    // 10.5 ms mean on the tuning clips against IY, EH, AH by the tongue).
    ("y", &["UW"]),
    ("ʏ", &["UH"]),
    ("ø", &["ER"]),
    ("œ", &["ER"]),
    ("ɶ", &["AH"]),
    ("ʉ", &["UW"]),
    // Diphthongs.
    ("aɪ", &["AY"]),
    ("ai", &["AY"]),
    ("aj", &["AY"]),
    ("ɑɪ", &["AY"]),
    ("aʊ", &["AW"]),
    ("au", &["AW"]),
    ("aw", &["AW"]),
    ("eɪ", &["EY"]),
    ("ei", &["EY"]),
    ("ej", &["EY"]),
    ("ɛɪ", &["EY"]),
    ("ɛi", &["EY"]),
    ("oɪ", &["OY"]),
    ("oi", &["OY"]),
    ("ɔɪ", &["OY"]),
    ("ɔø", &["OY"]),
    ("ɔʏ", &["OY"]),
    ("ɔy", &["OY"]),
    ("œy", &["AW"]),
    ("œʏ", &["OY"]),
    ("oʊ", &["OW"]),
    ("əʊ", &["OW"]),
    ("ou", &["OW"]),
    ("iʊ", &["IY", "UW"]),
    ("eʊ", &["EH", "UW"]),
    ("ɛʊ", &["EH", "UW"]),
    ("ɐʊ", &["AW"]),
    ("ɐ̃ʊ̃", &["AW"]),
    ("ɐɪ", &["EY"]),
    ("ɐ̃ɪ̃", &["EY"]),
    ("õɪ̃", &["OY"]),
    ("ũɪ̃", &["UW", "IY"]),
    ("ɪə", &["IY", "AH"]),
    // Nasal vowels (French, Portuguese): the oral vowel.
    ("ɑ̃", &["AA"]),
    ("ã", &["AA"]),
    ("ɐ̃", &["AH"]),
    ("ɛ̃", &["EH"]),
    ("ẽ", &["EY"]),
    ("ɔ̃", &["OW"]),
    ("õ", &["OW"]),
    ("œ̃", &["AH"]),
    ("ĩ", &["IY"]),
    ("ũ", &["UW"]),
    // Stops and affricates.
    ("p", &["P"]),
    ("b", &["B"]),
    ("t", &["T"]),
    ("d", &["D"]),
    ("k", &["K"]),
    ("ɡ", &["G"]),
    ("g", &["G"]),
    ("c", &["K", "Y"]),
    ("ɟ", &["G", "Y"]),
    ("q", &["K"]),
    ("ʔ", &[]),
    ("ts", &["T", "S"]),
    ("dz", &["D", "Z"]),
    ("tʃ", &["CH"]),
    ("dʒ", &["JH"]),
    ("tɕ", &["CH"]),
    ("tʂ", &["CH"]),
    ("dʑ", &["JH"]),
    ("ʈʂ", &["CH"]),
    ("pf", &["P", "F"]),
    ("ʈ", &["T"]),
    ("ɖ", &["D"]),
    // Fricatives.
    ("f", &["F"]),
    ("v", &["V"]),
    ("θ", &["TH"]),
    ("ð", &["DH"]),
    ("s", &["S"]),
    ("z", &["Z"]),
    ("ʃ", &["SH"]),
    ("ʒ", &["ZH"]),
    ("ɕ", &["SH"]),
    ("ʑ", &["ZH"]),
    ("ʂ", &["SH"]),
    ("ʐ", &["ZH"]),
    ("ç", &["HH"]),
    ("ʝ", &["Y"]),
    ("x", &["HH"]),
    ("ɣ", &["G"]),
    ("χ", &["HH"]),
    ("ʁ", &["R"]),
    ("ħ", &["HH"]),
    ("ʕ", &["HH"]),
    ("h", &["HH"]),
    ("ɦ", &["HH"]),
    ("β", &["V"]),
    ("ɸ", &["F"]),
    // Nasals.
    ("m", &["M"]),
    ("n", &["N"]),
    ("ŋ", &["NG"]),
    ("ɲ", &["N", "Y"]),
    ("ɱ", &["M"]),
    ("ɳ", &["N"]),
    ("ɴ", &["NG"]),
    // Liquids; a tap is closest to the flapped T/D of American English.
    ("l", &["L"]),
    ("ɫ", &["L"]),
    ("ʎ", &["L", "Y"]),
    ("ɭ", &["L"]),
    ("ʟ", &["L"]),
    ("r", &["R"]),
    ("ɾ", &["D"]),
    ("ɹ", &["R"]),
    ("ɻ", &["R"]),
    ("ʀ", &["R"]),
    ("ɽ", &["D"]),
    ("ɺ", &["L"]),
    // Glides.
    ("j", &["Y"]),
    ("w", &["W"]),
    ("ɥ", &["Y"]),
    ("ʋ", &["V"]),
    ("ɰ", &["W"]),
];

/// Phones of one language said otherwise than by [`TABLE`]: Dutch ɣ is a voiceless velar
/// fricative in most speech, nearer HH than G.
const BY_LANGUAGE: &[(&str, &str, &[&str])] = &[("nl", "ɣ", &["HH"])];

/// [`TABLE`] by symbol, in composed form (NFC as espeak-ng writes it, and a few decomposed
/// spellings of the same).
fn table() -> &'static HashMap<&'static str, &'static [&'static str]> {
    static TABLE_BY_SYMBOL: OnceLock<HashMap<&str, &[&str]>> = OnceLock::new();
    TABLE_BY_SYMBOL.get_or_init(|| TABLE.iter().copied().collect())
}

/// The longest symbol of [`TABLE`], in characters.
fn longest_symbol() -> usize {
    static LONGEST: OnceLock<usize> = OnceLock::new();
    *LONGEST.get_or_init(|| {
        TABLE
            .iter()
            .map(|(symbol, _)| symbol.chars().count())
            .max()
            .unwrap_or(1)
    })
}

/// The en-us phones for one of espeak-ng's IPA phones (`"ˈe"`, `"aː"`, `"ts"`, `"ɐ̃ʊ̃"`) in
/// `language`; `None` for a symbol this table does not know (the word then cannot be
/// aligned, and keeps its coarser time).
pub(crate) fn english_phones(language: &str, ipa: &str) -> Option<Vec<&'static str>> {
    let bare: String = ipa.chars().filter(|c| !IGNORED.contains(c)).collect();
    if bare.is_empty() {
        return Some(Vec::new());
    }
    let lookup = |symbol: &str| -> Option<&'static [&'static str]> {
        BY_LANGUAGE
            .iter()
            .find(|(lang, s, _)| *lang == language && *s == symbol)
            .map(|(_, _, phones)| *phones)
            .or_else(|| table().get(symbol).copied())
    };
    let short: String = bare.chars().filter(|c| !LENGTH.contains(c)).collect();
    let plain: String = short.chars().filter(|c| !MODIFIERS.contains(c)).collect();
    for candidate in [&bare, &short, &plain] {
        if let Some(phones) = lookup(candidate) {
            return Some(phones.to_vec());
        }
    }
    // A unit the table does not hold whole: the longest known symbols from the left.
    let chars: Vec<char> = plain.chars().collect();
    let mut out = Vec::new();
    let mut at = 0;
    'symbols: while at < chars.len() {
        for len in (1..=longest_symbol().min(chars.len() - at)).rev() {
            let symbol: String = chars[at..at + len].iter().collect();
            if let Some(phones) = lookup(&symbol) {
                out.extend_from_slice(phones);
                at += len;
                continue 'symbols;
            }
        }
        if chars[at] == NASAL {
            // A nasal vowel the table lacks: its oral vowel came just before.
            at += 1;
            continue;
        }
        return None;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phones(language: &str, ipa: &str) -> Option<Vec<&'static str>> {
        english_phones(language, ipa)
    }

    #[test]
    fn stress_and_length_do_not_change_a_phone() {
        assert_eq!(phones("es", "ˈe"), Some(vec!["EY"]));
        assert_eq!(phones("de", "ˌeː"), Some(vec!["EY"]));
        assert_eq!(phones("nl", "aː"), Some(vec!["AA"]));
        assert_eq!(phones("fr", "ˈœ"), Some(vec!["ER"]));
    }

    #[test]
    fn units_and_diphthongs_become_one_or_more_phones() {
        assert_eq!(phones("de", "ts"), Some(vec!["T", "S"]));
        assert_eq!(phones("de", "ˈaɪ"), Some(vec!["AY"]));
        assert_eq!(phones("es", "ɲ"), Some(vec!["N", "Y"]));
        assert_eq!(phones("pt", "ɐ̃ʊ̃"), Some(vec!["AW"]));
        // Not a unit of the table: its symbols from the left.
        assert_eq!(phones("pt", "ɐ̃j"), Some(vec!["AH", "Y"]));
    }

    #[test]
    fn a_language_may_say_a_phone_its_own_way() {
        assert_eq!(phones("nl", "ɣ"), Some(vec!["HH"]));
        assert_eq!(phones("es", "ɣ"), Some(vec!["G"]));
    }

    #[test]
    fn marks_alone_are_no_phone_and_unknown_symbols_are_none() {
        assert_eq!(phones("fr", "-"), Some(vec![]));
        assert_eq!(phones("ru", "ɪ^"), Some(vec!["IH"]));
        assert_eq!(phones("ru", "t\u{200D}ʃʲ"), Some(vec!["CH"]));
        assert_eq!(phones("es", "ʘ"), None);
    }
}
