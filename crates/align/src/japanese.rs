//! How Japanese is said: MeCab (Debian's `libmecab2`, with the IPA dictionary of
//! `mecab-ipadic-utf8`) reads kanji and kana as katakana pronunciation ("今日は" is "キョー ワ"),
//! which espeak-ng's Japanese voice says: it reads kana only, and a kanji as "Chinese letter".
//!
//! A MeCab tagger is not to be used by two threads at once; one lock guards the one tagger.

use std::ffi::{CStr, CString, c_char, c_void};
use std::sync::{Mutex, PoisonError};

use crate::error::{Error, Result};

/// The IPA dictionary as Debian installs it (not the system's default dictionary, which another
/// package may have made another one).
const DICTIONARY: &str = "/var/lib/mecab/dic/ipadic-utf8";
/// Each morpheme as its pronunciation (the dictionary's ninth feature: "ワ" for the particle
/// "は", "キョー" for "今日"), or as written when the dictionary does not know it, apart by
/// spaces.
const ARGUMENTS: &str = "--node-format=%pS%f[8]\\s --unk-format=%M\\s --eos-format=";

unsafe extern "C" {
    fn mecab_new2(arg: *const c_char) -> *mut c_void;
    fn mecab_sparse_tostr(mecab: *mut c_void, text: *const c_char) -> *const c_char;
    fn mecab_strerror(mecab: *mut c_void) -> *const c_char;
}

/// The tagger, made on first use.
struct Tagger(*mut c_void);

// SAFETY: the tagger is only used under `TAGGER`'s lock, one thread at a time, and MeCab keeps
// no thread-local state.
unsafe impl Send for Tagger {}

static TAGGER: Mutex<Option<Tagger>> = Mutex::new(None);

/// The katakana pronunciation of Japanese `text`, a morpheme a word ("キョー ワ トーキョー").
///
/// # Errors
///
/// [`Error::Phonemizer`] when MeCab or its dictionary is not installed (`make setup` installs
/// them), or `text` holds a NUL byte.
pub(crate) fn pronunciation(text: &str) -> Result<String> {
    let mut guard = TAGGER.lock().unwrap_or_else(PoisonError::into_inner);
    let tagger = match guard.as_ref() {
        Some(tagger) => tagger.0,
        None => {
            let tagger = new_tagger()?;
            *guard = Some(Tagger(tagger));
            tagger
        }
    };
    let text = CString::new(text).map_err(|_| Error::Phonemizer {
        detail: format!("{text:?} holds a NUL byte"),
    })?;
    // SAFETY: `tagger` is live (never freed) and used under the lock; `text` is NUL-terminated
    // and alive for the call; the result is MeCab's own buffer, copied before the lock goes.
    let out = unsafe { mecab_sparse_tostr(tagger, text.as_ptr()) };
    if out.is_null() {
        return Err(Error::Phonemizer {
            detail: "MeCab could not read the text".into(),
        });
    }
    // SAFETY: as above.
    Ok(unsafe { CStr::from_ptr(out) }
        .to_string_lossy()
        .trim()
        .to_owned())
}

/// A MeCab tagger on [`DICTIONARY`] with [`ARGUMENTS`].
fn new_tagger() -> Result<*mut c_void> {
    let arguments =
        CString::new(format!("-d {DICTIONARY} {ARGUMENTS}")).map_err(|_| Error::Phonemizer {
            detail: "MeCab's arguments hold a NUL byte".into(),
        })?;
    // SAFETY: a NUL-terminated string alive for the call.
    let tagger = unsafe { mecab_new2(arguments.as_ptr()) };
    if tagger.is_null() {
        // SAFETY: MeCab's error of a failed construction, asked with NULL; a NUL-terminated
        // string of its own.
        let why = unsafe { CStr::from_ptr(mecab_strerror(std::ptr::null_mut())) };
        return Err(Error::Phonemizer {
            detail: format!(
                "MeCab could not start with {DICTIONARY} (Debian's mecab-ipadic-utf8; make \
                 setup installs it): {}",
                why.to_string_lossy()
            ),
        });
    }
    Ok(tagger)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kanji_and_kana_are_read_as_they_are_said() -> Result<()> {
        assert_eq!(
            pronunciation("今日は東京に行きます")?,
            "キョー ワ トーキョー ニ イキ マス"
        );
        assert_eq!(pronunciation("天気")?, "テンキ");
        assert_eq!(pronunciation("コンピューター")?, "コンピューター");
        Ok(())
    }
}
