//! Phones of a word in any of espeak-ng's languages, as IPA, from libespeak-ng (Debian's
//! `libespeak-ng1`; `libespeak-ng-dev` to link it).
//!
//! espeak-ng keeps its language, voice and translator in process-wide state, so every call
//! goes through one lock, and a word's phones are kept once asked for (an hour of speech says
//! the same few thousand words again and again).

use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::{Mutex, PoisonError};

use crate::error::{Error, Result};

/// `AUDIO_OUTPUT_SYNCHRONOUS`: no sound device, nothing played.
const AUDIO_OUTPUT_SYNCHRONOUS: c_int = 2;
/// `espeakINITIALIZE_DONT_EXIT`: a missing data folder is an error code, not `exit()`.
const INITIALIZE_DONT_EXIT: c_int = 0x8000;
/// `espeakCHARS_UTF8`.
const CHARS_UTF8: c_int = 1;
/// `phonememode` of `espeak_TextToPhonemes`: IPA (bit 1), the phones of a word parted by
/// [`PHONE_SEPARATOR`] (bits 8-23); words are parted by spaces.
const IPA_PARTED: c_int = 0x02 | ((PHONE_SEPARATOR as c_int) << 8);
const PHONE_SEPARATOR: char = '_';

unsafe extern "C" {
    fn espeak_Initialize(
        output: c_int,
        buflength: c_int,
        path: *const c_char,
        options: c_int,
    ) -> c_int;
    fn espeak_SetVoiceByName(name: *const c_char) -> c_int;
    fn espeak_TextToPhonemes(
        textptr: *mut *const c_void,
        textmode: c_int,
        phonememode: c_int,
    ) -> *const c_char;
}

/// What the process-wide lock guards: whether espeak-ng is up, the voice it has now, and the
/// phones already asked for, by (voice, word).
#[derive(Default)]
struct State {
    ready: bool,
    voice: String,
    known: HashMap<(String, String), Vec<String>>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

impl State {
    /// Starts espeak-ng if it is not up, and makes `voice` its voice.
    fn use_voice(&mut self, voice: &str) -> Result<()> {
        if !self.ready {
            // SAFETY: no pointer is passed; the caller holds the lock, so no other call of
            // espeak-ng runs.
            let rate = unsafe {
                espeak_Initialize(
                    AUDIO_OUTPUT_SYNCHRONOUS,
                    0,
                    std::ptr::null(),
                    INITIALIZE_DONT_EXIT,
                )
            };
            if rate <= 0 {
                return Err(Error::Phonemizer {
                    detail: "espeak-ng did not start (is its data folder installed? make setup \
                             installs espeak-ng)"
                        .into(),
                });
            }
            self.ready = true;
        }
        if self.voice != voice {
            let name = CString::new(voice).map_err(|_| Error::Phonemizer {
                detail: format!("voice {voice:?} holds a NUL byte"),
            })?;
            // SAFETY: `name` is a NUL-terminated string alive for the call; the caller holds
            // the lock.
            if unsafe { espeak_SetVoiceByName(name.as_ptr()) } != 0 {
                return Err(Error::Phonemizer {
                    detail: format!("espeak-ng has no voice for the language {voice:?}"),
                });
            }
            self.voice = voice.to_owned();
        }
        Ok(())
    }
}

/// Whether espeak-ng has a voice named `voice` (and starts).
pub(crate) fn has_voice(voice: &str) -> bool {
    let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    guard
        .get_or_insert_with(State::default)
        .use_voice(voice)
        .is_ok()
}

/// The IPA phones of `word` (one written word: "comité", "Dienstagmorgen") as espeak-ng says it
/// in `voice` (a language code it knows: `es`, `fr`, `de`, `pt`, `nl`, `it`, ...). Stress and
/// length marks stay on the phones ("ˈe", "aː"); a word espeak-ng reads as several (a number,
/// an abbreviation) gives all their phones in order. Empty for a word with nothing to say
/// (punctuation).
///
/// # Errors
///
/// [`Error::Phonemizer`] when espeak-ng cannot start (its data folder is missing) or has no
/// voice `voice`.
pub(crate) fn ipa_phones(voice: &str, word: &str) -> Result<Vec<String>> {
    let mut guard = STATE.lock().unwrap_or_else(PoisonError::into_inner);
    let state = guard.get_or_insert_with(State::default);
    let key = (voice.to_owned(), word.to_owned());
    if let Some(phones) = state.known.get(&key) {
        return Ok(phones.clone());
    }
    state.use_voice(voice)?;
    // A NUL inside the word would end the text early; no spoken word holds one.
    let text = CString::new(word.replace('\0', " ")).unwrap_or_default();
    let mut phones = Vec::new();
    let mut cursor: *const c_void = text.as_ptr().cast();
    // espeak-ng translates one clause a call and moves the cursor past it, to NULL at the end.
    while !cursor.is_null() {
        // SAFETY: `cursor` points into `text`, NUL-terminated and alive until the loop ends;
        // the returned string is espeak-ng's own buffer, read before the next call, under the
        // lock.
        let clause = unsafe {
            let out = espeak_TextToPhonemes(&mut cursor, CHARS_UTF8, IPA_PARTED);
            if out.is_null() {
                break;
            }
            CStr::from_ptr(out).to_string_lossy().into_owned()
        };
        phones.extend(
            without_language_switches(&clause)
                .split([PHONE_SEPARATOR, ' '])
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_owned),
        );
    }
    state.known.insert(key, phones.clone());
    Ok(phones)
}

/// `phones` without espeak-ng's marks of a switch to another language's voice ("(en)", "(ja)"),
/// which it puts around a word it reads in another language (Latin letters in Japanese text).
fn without_language_switches(phones: &str) -> String {
    let mut out = String::with_capacity(phones.len());
    let mut rest = phones;
    while let Some(open) = rest.find('(') {
        out.push_str(&rest[..open]);
        match rest[open..].find(')') {
            Some(close) => rest = &rest[open + close + 1..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_switch_marks_are_no_phones() {
        assert_eq!(
            without_language_switches("(en)_e_b_i_(ja)_k_a"),
            "_e_b_i__k_a"
        );
        assert_eq!(without_language_switches("k_a"), "k_a");
    }

    #[test]
    fn words_come_out_as_ipa_phones_in_each_language() -> Result<()> {
        assert_eq!(
            ipa_phones("es", "largo")?,
            ["l", "ˈa", "ɾ", "ɣ", "o"],
            "Spanish"
        );
        assert_eq!(ipa_phones("fr", "pêcheur")?, ["p", "ɛ", "ʃ", "ˈœ", "ʁ"]);
        let german = ipa_phones("de", "zurückkehren")?;
        assert_eq!(german.first().map(String::as_str), Some("ts"), "{german:?}");
        // Asked again, from what was kept.
        assert_eq!(ipa_phones("es", "largo")?, ["l", "ˈa", "ɾ", "ɣ", "o"]);
        assert!(ipa_phones("es", ",")?.is_empty());
        Ok(())
    }

    #[test]
    fn an_unknown_language_is_an_error_naming_it() {
        let error = ipa_phones("xx-nowhere", "word")
            .err()
            .map(|e| e.to_string());
        assert!(
            error.as_deref().is_some_and(|e| e.contains("xx-nowhere")),
            "{error:?}"
        );
    }
}
