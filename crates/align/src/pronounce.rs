//! How the written words of a language are said in the acoustic model's phones: the one part
//! of alignment that knows the language ([`Pronounce`]).

use crate::decoder::Decoder;
use crate::error::{Error, Result};
use crate::g2p::G2p;
use crate::spoken::spoken_words;
use crate::{espeak, ipa, japanese};

/// Says written tokens in the acoustic model's phones.
pub(crate) trait Pronounce {
    /// The spoken words of `token` (as written: "$25", "Hello,", "comité") as the decoder's
    /// dictionary names them, each with how many phones it has; empty when nothing of it is
    /// spoken (a dash, an emoji). Adds the words the dictionary lacks to it.
    fn pronounce(&self, decoder: &mut Decoder, token: &str) -> Result<Vec<(String, usize)>>;

    /// The first phone of `token`, `None` when it has none or cannot be said.
    fn first_phone(&self, decoder: &mut Decoder, token: &str) -> Option<String> {
        let (first, _) = self.pronounce(decoder, token).ok()?.into_iter().next()?;
        decoder.phones(&first)?.into_iter().next()
    }
}

/// English: the CMU dictionary, a g2p network for the words it lacks, and English spoken forms
/// of numbers and symbols ("$25" is "twenty five dollars").
pub(crate) struct English<'a> {
    pub(crate) g2p: Option<&'a G2p>,
}

impl Pronounce for English<'_> {
    fn pronounce(&self, decoder: &mut Decoder, token: &str) -> Result<Vec<(String, usize)>> {
        let mut out = Vec::new();
        for word in spoken_words(token) {
            let phones = match decoder.phones(&word) {
                Some(phones) => phones.len(),
                None => {
                    let phones = self.g2p.map(|g2p| g2p.phones(&word)).unwrap_or_default();
                    if phones.is_empty() {
                        return Err(Error::Unpronounceable { word });
                    }
                    tracing::debug!(word, phones = %phones.join(" "), "pronunciation from the g2p network");
                    decoder.add_word(&word, &phones.join(" "))?;
                    phones.len()
                }
            };
            out.push((word, phones));
        }
        Ok(out)
    }
}

/// Another language: espeak-ng's IPA in its voice, each phone said as the nearest English one
/// (see [`ipa`]). A token is one dictionary word, named `voice:word`, whatever espeak-ng reads
/// it as ("25" in Spanish is "veinticinco").
pub(crate) struct Espeak {
    pub(crate) voice: &'static str,
}

impl Pronounce for Espeak {
    fn pronounce(&self, decoder: &mut Decoder, token: &str) -> Result<Vec<(String, usize)>> {
        let written: String = token
            .chars()
            .filter(|c| c.is_alphanumeric() || matches!(c, '\'' | '’' | '-'))
            .flat_map(char::to_lowercase)
            .collect();
        let written = written.trim_matches(['\'', '’', '-']);
        if written.is_empty() {
            return Ok(Vec::new());
        }
        let name = format!("{}:{written}", self.voice);
        say_as_english(decoder, name, self.voice, || {
            espeak::ipa_phones(self.voice, written)
        })
    }
}

/// The dictionary word `name` (added to the decoder when it lacks it) with the phones of
/// `language` that `ipa` gives, each said as the nearest English one ([`ipa::english_phones`]);
/// nothing when they are no phone at all. `ipa` is asked only for a word not yet added.
fn say_as_english(
    decoder: &mut Decoder,
    name: String,
    language: &str,
    ipa: impl FnOnce() -> Result<Vec<String>>,
) -> Result<Vec<(String, usize)>> {
    if let Some(phones) = decoder.phones(&name) {
        return Ok(vec![(name, phones.len())]);
    }
    let mut phones: Vec<&str> = Vec::new();
    for ipa_phone in ipa()? {
        let Some(said) = ipa::english_phones(language, &ipa_phone) else {
            tracing::debug!(
                word = name,
                phone = ipa_phone,
                "an IPA phone with no English phone near it"
            );
            return Err(Error::Unpronounceable { word: name });
        };
        phones.extend(said);
    }
    if phones.is_empty() {
        return Ok(Vec::new());
    }
    decoder.add_word(&name, &phones.join(" "))?;
    Ok(vec![(name, phones.len())])
}

/// Mandarin: each hanzi's pinyin (the `pinyin` crate's readings), said by espeak-ng's pinyin
/// voice, each phone said as the nearest English one. espeak-ng's own Mandarin voice reads many
/// hanzi as pinyin spelled out in English ("你" as "ni three"), so the readings come from
/// elsewhere. A token is one dictionary word, named `zh:` and its hanzi; what is not a hanzi
/// in it (Latin letters, digits) is not said.
pub(crate) struct Mandarin;

/// espeak-ng's voice that reads pinyin with tone numbers.
const PINYIN_VOICE: &str = "cmn-latn-pinyin";

impl Pronounce for Mandarin {
    fn pronounce(&self, decoder: &mut Decoder, token: &str) -> Result<Vec<(String, usize)>> {
        use pinyin::ToPinyin as _;
        // Each hanzi as its pinyin; digits as they are, which the pinyin voice reads in
        // Mandarin ("194" as "yi bai jiu shi si"): whisper writes numbers in digits, and a
        // word without phones had no time of its own.
        let mut spoken = String::new();
        let mut kept = String::new();
        for c in token.chars() {
            if let Some(syllable) = c.to_pinyin() {
                spoken.push(' ');
                spoken.push_str(syllable.with_tone_num_end());
                spoken.push(' ');
            } else if c.is_ascii_digit() {
                spoken.push(c);
            } else {
                continue;
            }
            kept.push(c);
        }
        if kept.is_empty() {
            return Ok(Vec::new());
        }
        let name = format!("zh:{kept}");
        say_as_english(decoder, name, "zh", || {
            let ipa = espeak::ipa_phones(PINYIN_VOICE, spoken.trim())?;
            Ok(ipa.iter().map(|phone| mandarin_ipa(phone)).collect())
        })
    }
}

/// espeak-ng's pinyin phones in plain IPA: without its tone marks (the digits, and "ɜ" after a
/// vowel), with the retroflex sounds it writes with a dot ("ts.", "s.") and the aspirated ones
/// it writes with an "h" ("tsh", "tɕh") spelled as IPA spells them.
fn mandarin_ipa(phone: &str) -> String {
    let mut out: String = phone.chars().filter(|c| !c.is_ascii_digit()).collect();
    if out.chars().count() > 1 {
        out = out.trim_end_matches('ɜ').to_owned();
    }
    for (espeak, ipa) in [
        ("ts.h", "tʂʰ"),
        ("ts.", "tʂ"),
        ("s.", "ʂ"),
        ("tsh", "tsʰ"),
        ("tɕh", "tɕʰ"),
        ("i.", "ɨ"),
    ] {
        out = out.replace(espeak, ipa);
    }
    out
}

/// Japanese: MeCab's pronunciation of the token in katakana (kanji read in context: "今日" is
/// "キョー"), said by espeak-ng's Japanese voice, each phone said as the nearest English one.
/// A token is one dictionary word, named `ja:` and the token.
pub(crate) struct Japanese;

impl Pronounce for Japanese {
    fn pronounce(&self, decoder: &mut Decoder, token: &str) -> Result<Vec<(String, usize)>> {
        let written: String = token.chars().filter(|c| c.is_alphanumeric()).collect();
        if written.is_empty() {
            return Ok(Vec::new());
        }
        let name = format!("ja:{written}");
        say_as_english(decoder, name, "ja", || {
            espeak::ipa_phones("ja", &japanese::pronunciation(&written)?)
        })
    }
}

/// Whisper's languages written without spaces between words that have no reading here by the
/// character: Thai, Lao, Khmer, Burmese, Tibetan and Cantonese.
const UNSPACED: [&str; 6] = ["th", "lo", "km", "my", "bo", "yue"];

/// espeak-ng's voice for whisper's language code `language`, when it has one and the language
/// is written with spaces.
pub(crate) fn espeak_voice(language: &str) -> Option<&'static str> {
    if UNSPACED.contains(&language) {
        return None;
    }
    // Whisper's codes that espeak-ng names otherwise, then those it names alike.
    let voice = match language {
        "no" | "nn" => "nb",
        other => WHISPER_LANGUAGES
            .iter()
            .copied()
            .find(|&code| code == other)?,
    };
    espeak::has_voice(voice).then_some(voice)
}

/// Whisper's language codes (its `g_lang` table) that are written with spaces.
const WHISPER_LANGUAGES: [&str; 90] = [
    "de", "es", "ru", "ko", "fr", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it", "id", "hi", "fi",
    "vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "ur", "hr", "bg", "lt", "la", "mi",
    "ml", "cy", "sk", "te", "fa", "lv", "bn", "sr", "az", "sl", "kn", "et", "mk", "br", "eu", "is",
    "hy", "ne", "mn", "bs", "kk", "sq", "sw", "gl", "mr", "pa", "si", "sn", "yo", "so", "af", "oc",
    "ka", "be", "tg", "sd", "gu", "am", "yi", "uz", "fo", "ht", "ps", "tk", "mt", "sa", "lb", "tl",
    "mg", "as", "tt", "ln", "ha", "ba", "su", "en", "nb", "haw",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mandarin_phones_lose_their_tones_and_spell_retroflexes_as_ipa() {
        assert_eq!(mandarin_ipa("ˈonɡ5"), "ˈonɡ");
        assert_eq!(mandarin_ipa("ˈuoɜ"), "ˈuo");
        assert_eq!(mandarin_ipa("ts."), "tʂ");
        assert_eq!(mandarin_ipa("ts.h"), "tʂʰ");
        assert_eq!(mandarin_ipa("s."), "ʂ");
        assert_eq!(mandarin_ipa("tɕh"), "tɕʰ");
        // Every syllable's phones have English ones.
        for syllables in [
            "zhong1 guo2",
            "xue2 xi2",
            "chuan1 shuang1",
            "ri4 si4 ci2 zi3",
            "er2 nv3 lve4",
        ] {
            for phone in espeak::ipa_phones(PINYIN_VOICE, syllables).unwrap() {
                let said = ipa::english_phones("zh", &mandarin_ipa(&phone));
                assert!(said.is_some(), "{syllables}: {phone:?}");
            }
        }
    }

    #[test]
    fn languages_written_without_spaces_have_no_espeak_voice_here() {
        assert_eq!(espeak_voice("th"), None);
        assert_eq!(espeak_voice("yue"), None);
        assert_eq!(espeak_voice("es"), Some("es"));
        assert_eq!(espeak_voice("no"), Some("nb"));
        assert_eq!(espeak_voice("xx"), None);
    }
}
