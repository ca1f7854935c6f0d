//! A PocketSphinx decoder set up for forced alignment, behind a safe interface.

use std::ffi::{CStr, CString, c_int};
use std::path::Path;
use std::ptr::NonNull;

use crate::error::{Error, Result};
use crate::sys;

/// Frames per second of PocketSphinx's features (its `frate` default, which the en-us model uses).
pub(crate) const FRAMES_PER_S: f64 = 100.0;

/// One aligned dictionary word, in frames (`end_frame` exclusive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Segment {
    pub(crate) word: String,
    pub(crate) start_frame: u32,
    pub(crate) end_frame: u32,
}

/// One decoder: the acoustic model and the dictionary, loaded once, aligning one utterance at a
/// time.
#[derive(Debug)]
pub(crate) struct Decoder {
    ps: NonNull<sys::Decoder>,
}

// SAFETY: a decoder owns all of its state (no thread-local or global state is touched by
// alignment apart from the random generator, which PocketSphinx keeps thread-local), and `&mut
// self` on every call means one thread uses it at a time.
unsafe impl Send for Decoder {}

fn c_string(what: &str, value: &str) -> Result<CString> {
    CString::new(value).map_err(|_| Error::Decoder {
        detail: format!("{what} {value:?} holds a NUL byte"),
    })
}

fn path_str(path: &Path) -> Result<&str> {
    path.to_str().ok_or_else(|| Error::Model {
        path: path.to_path_buf(),
        detail: "path is not UTF-8".into(),
    })
}

/// Settings of the search. Wide beams: with PocketSphinx's defaults some passages end in "final
/// result does not match the grammar" and give no alignment at all.
const BEAM: f64 = 1e-120;
const PBEAM: f64 = 1e-120;
const WBEAM: f64 = 1e-100;

/// What a decoder searches: read speech, or a song.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Search {
    /// PocketSphinx's own cost of a silence between two words.
    Speech,
    /// A silence between two words costs [`SONG_SILPROB`].
    Song,
}

/// The probability of a silence between two words in a song (PocketSphinx's `silprob`, 0.005
/// by default). A sung line runs on without pauses, and over its long vowels the model's
/// silence fits about as well as the vowel. Measured on the bench's tuning songs, each line
/// aligned on its own with its held notes cut to 0.08 s at each end (onsets within 0.3 s /
/// mean error): 0.005 86 % / 0.14 s, 1e-4 90 % / 0.11 s, 1e-8 93 % / 0.09 s (1e-30 as 1e-8).
const SONG_SILPROB: f64 = 1e-8;

impl Decoder {
    /// Loads the acoustic model folder `hmm` and the pronouncing dictionary `dict`.
    pub(crate) fn open(hmm: &Path, dict: &Path, search: Search) -> Result<Self> {
        // PocketSphinx exits the process on some load failures; check the files first.
        for path in [hmm.join("mdef"), hmm.join("means"), dict.to_path_buf()] {
            if !path.is_file() {
                return Err(Error::ModelMissing { path });
            }
        }
        let hmm_c = c_string("model path", path_str(hmm)?)?;
        let dict_c = c_string("dictionary path", path_str(dict)?)?;
        // SAFETY: a NULL definition list selects the decoder's own arguments.
        let config = unsafe { sys::ps_config_init(std::ptr::null()) };
        if config.is_null() {
            return Err(Error::Decoder {
                detail: "cannot create a configuration".into(),
            });
        }
        let set = || -> Result<()> {
            let check = |ok: *const sys::AnyType, name: &str| {
                if ok.is_null() {
                    Err(Error::Decoder {
                        detail: format!("cannot set {name}"),
                    })
                } else {
                    Ok(())
                }
            };
            // SAFETY: `config` is a live configuration; names and values are NUL-terminated
            // strings that outlive the calls (the library copies them).
            unsafe {
                check(
                    sys::ps_config_set_str(config, c"hmm".as_ptr(), hmm_c.as_ptr()),
                    "hmm",
                )?;
                check(
                    sys::ps_config_set_str(config, c"dict".as_ptr(), dict_c.as_ptr()),
                    "dict",
                )?;
                check(
                    sys::ps_config_set_str(config, c"loglevel".as_ptr(), c"FATAL".as_ptr()),
                    "loglevel",
                )?;
                check(
                    sys::ps_config_set_int(config, c"samprate".as_ptr(), 16_000),
                    "samprate",
                )?;
                // With bestpath the last word swallows trailing silence and some utterances fail.
                check(
                    sys::ps_config_set_bool(config, c"bestpath".as_ptr(), 0),
                    "bestpath",
                )?;
                check(
                    sys::ps_config_set_float(config, c"beam".as_ptr(), BEAM),
                    "beam",
                )?;
                check(
                    sys::ps_config_set_float(config, c"pbeam".as_ptr(), PBEAM),
                    "pbeam",
                )?;
                check(
                    sys::ps_config_set_float(config, c"wbeam".as_ptr(), WBEAM),
                    "wbeam",
                )?;
                if search == Search::Song {
                    check(
                        sys::ps_config_set_float(config, c"silprob".as_ptr(), SONG_SILPROB),
                        "silprob",
                    )?;
                }
            }
            Ok(())
        };
        let configured = set();
        // SAFETY: `config` is live; ps_init takes its own reference to it.
        let ps = configured.and_then(|()| {
            NonNull::new(unsafe { sys::ps_init(config) }).ok_or_else(|| Error::Decoder {
                detail: format!(
                    "PocketSphinx could not load the model {} with {}",
                    hmm.display(),
                    dict.display()
                ),
            })
        });
        // SAFETY: our reference to the configuration is released exactly once.
        unsafe { sys::ps_config_free(config) };
        Ok(Self { ps: ps? })
    }

    /// The phones the dictionary gives `word` (lower case, as the dictionary writes it), or
    /// `None` when it does not have it.
    pub(crate) fn phones(&mut self, word: &str) -> Option<Vec<String>> {
        let word_c = CString::new(word).ok()?;
        // SAFETY: the decoder is live and the word NUL-terminated; the result is ours to free.
        unsafe {
            let phones = sys::ps_lookup_word(self.ps.as_ptr(), word_c.as_ptr());
            if phones.is_null() {
                None
            } else {
                let list = CStr::from_ptr(phones)
                    .to_string_lossy()
                    .split_ascii_whitespace()
                    .map(str::to_owned)
                    .collect();
                sys::ckd_free(phones.cast());
                Some(list)
            }
        }
    }

    /// Adds `word` with `phones` (space-separated, the model's phone set) to the dictionary.
    pub(crate) fn add_word(&mut self, word: &str, phones: &str) -> Result<()> {
        let word_c = c_string("word", word)?;
        let phones_c = c_string("phones", phones)?;
        // SAFETY: the decoder is live and both strings NUL-terminated (the library copies them).
        let id =
            unsafe { sys::ps_add_word(self.ps.as_ptr(), word_c.as_ptr(), phones_c.as_ptr(), 1) };
        if id < 0 {
            return Err(Error::Decoder {
                detail: format!("cannot add {word:?} as /{phones}/"),
            });
        }
        Ok(())
    }

    /// Aligns `words` (all in the dictionary) onto 16 kHz `samples`: one segment per word, in
    /// order, silences and fillers left out but where `words` asks for one (`<sil>`). A word
    /// whose `optional` flag is set (a filler) may be left out by the search, and is not among
    /// the segments whether it was taken or not.
    pub(crate) fn align(
        &mut self,
        samples: &[i16],
        words: &[String],
        optional: &[bool],
    ) -> Result<Vec<Segment>> {
        let names = words
            .iter()
            .map(|word| c_string("word", word))
            .collect::<Result<Vec<_>>>()?;
        let pointers: Vec<*const std::ffi::c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let flags: Vec<c_int> = (0..words.len())
            .map(|i| c_int::from(optional.get(i).copied().unwrap_or(false)))
            .collect();
        let n_words = c_int::try_from(words.len()).map_err(|_| Error::Decoder {
            detail: format!("{} words are too many to align at once", words.len()),
        })?;
        let words: Vec<&String> = words
            .iter()
            .zip(&flags)
            .filter_map(|(word, &optional)| (optional == 0).then_some(word))
            .collect();
        let ps = self.ps.as_ptr();
        let fail = |what: &str| Error::Decoder {
            detail: format!("{what} failed"),
        };
        // SAFETY: the decoder is live; the words are NUL-terminated strings and both arrays hold
        // `n_words` entries, all alive for the call (the library copies what it keeps);
        // `samples` is a valid slice for the length passed.
        unsafe {
            if sys::ps_set_align_words(ps, pointers.as_ptr(), flags.as_ptr(), n_words) < 0 {
                return Err(fail("setting the words to align"));
            }
            if sys::ps_start_utt(ps) < 0 {
                return Err(fail("starting an utterance"));
            }
            let processed = sys::ps_process_raw(ps, samples.as_ptr(), samples.len(), 0, 1);
            let ended = sys::ps_end_utt(ps);
            if processed < 0 || ended < 0 {
                return Err(fail("decoding"));
            }
        }
        let mut segments = Vec::with_capacity(words.len());
        // SAFETY: the iterator belongs to the decoder's last utterance; it is advanced until it
        // ends (ps_seg_next frees it then) or freed when left early. Word strings are copied
        // before the iterator moves on.
        unsafe {
            let mut seg = sys::ps_seg_iter(ps);
            while !seg.is_null() {
                let name = sys::ps_seg_word(seg);
                let (mut sf, mut ef): (c_int, c_int) = (0, 0);
                sys::ps_seg_frames(seg, &mut sf, &mut ef);
                if !name.is_null() {
                    let name = CStr::from_ptr(name).to_string_lossy();
                    let asked = words.get(segments.len()).is_some_and(|w| **w == name);
                    if let Some(word) = dictionary_word(&name).or(asked.then_some(&*name)) {
                        segments.push(Segment {
                            word: word.to_owned(),
                            start_frame: sf.max(0) as u32,
                            end_frame: (ef.max(sf) + 1).max(0) as u32,
                        });
                    }
                }
                if segments.len() > words.len() {
                    sys::ps_seg_free(seg);
                    break;
                }
                seg = sys::ps_seg_next(seg);
            }
        }
        let matches = segments.len() == words.len()
            && segments.iter().zip(&words).all(|(s, w)| s.word == **w);
        if !matches {
            return Err(Error::Decoder {
                detail: format!(
                    "the alignment has {} words where {} were asked for",
                    segments.len(),
                    words.len()
                ),
            });
        }
        Ok(segments)
    }
}

/// The dictionary word of a segment: `None` for silences and fillers (`<sil>`, `[NOISE]`) and
/// for a word left out (`(NULL)`, the null arc beside an optional word), alternative
/// pronunciations (`word(2)`) reduced to the word.
fn dictionary_word(name: &str) -> Option<&str> {
    if name.starts_with(['<', '[', '+', '(']) {
        return None;
    }
    Some(name.split_once('(').map_or(name, |(word, _)| word))
}

impl Drop for Decoder {
    fn drop(&mut self) {
        // SAFETY: the decoder is released once, here.
        unsafe { sys::ps_free(self.ps.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fillers_and_silences_are_not_words() {
        assert_eq!(dictionary_word("<sil>"), None);
        assert_eq!(dictionary_word("</s>"), None);
        assert_eq!(dictionary_word("[NOISE]"), None);
        assert_eq!(dictionary_word("+UH+"), None);
        assert_eq!(dictionary_word("(NULL)"), None);
        assert_eq!(dictionary_word("read(2)"), Some("read"));
        assert_eq!(dictionary_word("hello"), Some("hello"));
    }
}
