//! GPT-2 byte-level BPE strings back to the raw bytes whisper.cpp stores.
//!
//! CTranslate2's `vocabulary.txt` holds each token in GPT-2's printable byte alphabet (`Ġ` for a
//! space, `Ċ` for a newline). whisper.cpp wants the raw bytes, and many tokens are partial UTF-8
//! sequences, so they must never pass through a lossy UTF-8 conversion.

use std::collections::HashMap;

use crate::error::{Error, Result};

/// Bytes printed as themselves in GPT-2's alphabet; every other byte maps to U+0100 and up.
fn printable(byte: u8) -> bool {
    matches!(byte, b'!'..=b'~' | 0xa1..=0xac | 0xae..=0xff)
}

fn char_to_byte_map() -> HashMap<char, u8> {
    let mut map = HashMap::with_capacity(256);
    let mut next_extra = 0u32;
    for byte in 0..=255u8 {
        let code = if printable(byte) {
            u32::from(byte)
        } else {
            next_extra += 1;
            255 + next_extra
        };
        if let Some(ch) = char::from_u32(code) {
            map.insert(ch, byte);
        }
    }
    map
}

/// The first `count` tokens of `vocabulary.txt` (one per line) as raw bytes.
pub(crate) fn decode_vocabulary(text: &str, count: usize) -> Result<Vec<Vec<u8>>> {
    let map = char_to_byte_map();
    let lines: Vec<&str> = text.split('\n').collect();
    if lines.len() < count {
        return Err(Error::Ct2Format {
            what: "vocabulary.txt".into(),
            detail: format!("{} lines, need at least {count}", lines.len()),
        });
    }
    lines[..count]
        .iter()
        .enumerate()
        .map(|(id, line)| {
            line.chars()
                .map(|ch| map.get(&ch).copied())
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| Error::Ct2Format {
                    what: "vocabulary.txt".into(),
                    detail: format!(
                        "token {id} {line:?} has a character outside the byte alphabet"
                    ),
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_spaces_newlines_and_partial_utf8() {
        // "Ġthe", "Ċ", and "Ã" + "©" (the two bytes of "é"), and a lone lead byte "Ã".
        let vocab = decode_vocabulary("Ġthe\nĊ\nÃ©\nÃ\n<|endoftext|>\n", 5).unwrap();
        assert_eq!(vocab[0], b" the");
        assert_eq!(vocab[1], b"\n");
        assert_eq!(vocab[2], "é".as_bytes());
        assert_eq!(vocab[3], [0xc3]);
        assert_eq!(vocab[4], b"<|endoftext|>");
    }

    #[test]
    fn every_byte_has_one_character() {
        let map = char_to_byte_map();
        assert_eq!(map.len(), 256);
        let mut bytes: Vec<u8> = map.values().copied().collect();
        bytes.sort_unstable();
        bytes.dedup();
        assert_eq!(bytes.len(), 256);
        assert_eq!(map[&'Ġ'], b' ');
    }

    #[test]
    fn rejects_short_or_foreign_vocabularies() {
        assert!(decode_vocabulary("a\nb", 3).is_err());
        assert!(decode_vocabulary("日本\n", 1).is_err());
    }
}
