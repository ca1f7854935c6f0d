use std::fmt;

use crate::error::{Error, Result};

/// Longest file name kept in a key; longer names keep their extension and lose the middle.
const MAX_FILE_NAME_CHARS: usize = 100;
/// S3's own limit on key length.
const MAX_KEY_BYTES: usize = 1024;
/// Longest file name on common file systems (ext4, APFS, NTFS).
const MAX_SEGMENT_BYTES: usize = 255;

/// The key of a stored object, e.g. `uploads/5f0c…/clip.mp4`.
///
/// Keys are made by the store ([`ObjectKey::new_upload`]) and only parsed back from outside
/// ([`ObjectKey::parse`]), so every key is `/`-separated segments of `[A-Za-z0-9._-]` with no
/// empty, `.` or `..` segment and no leading dot: no key can name a path outside the store or
/// a hidden staging file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey(String);

impl ObjectKey {
    /// A fresh key `uploads/<uuid v4>/<sanitised file name>` for a file the user names.
    pub fn new_upload(file_name: &str) -> Self {
        Self::new_under("uploads", file_name)
    }

    /// A fresh key `<prefix>/<uuid v4>/<sanitised file name>`; `prefix` is a fixed word of the
    /// caller (`uploads`, `outputs`), sanitised like a file name.
    pub fn new_under(prefix: &str, file_name: &str) -> Self {
        let prefix = sanitise_file_name(prefix);
        let id = uuid::Uuid::new_v4();
        Self(format!("{prefix}/{id}/{}", sanitise_file_name(file_name)))
    }

    /// Checks a key that came from outside (a form field, a URL, a job).
    ///
    /// ```
    /// use caption_store::ObjectKey;
    ///
    /// let key = ObjectKey::new_upload("My Talk (final).mp4");
    /// assert!(key.as_str().starts_with("uploads/"));
    /// assert_eq!(key.file_name(), "My_Talk_final_.mp4");
    /// assert_eq!(ObjectKey::parse(key.as_str())?, key);
    /// assert!(ObjectKey::parse("uploads/../secret").is_err());
    /// assert!(ObjectKey::parse("/etc/passwd").is_err());
    /// # Ok::<(), caption_store::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::InvalidKey`] naming the rule the key breaks.
    pub fn parse(key: &str) -> Result<Self> {
        let invalid = |reason| Error::InvalidKey {
            key: key.chars().take(200).collect(),
            reason,
        };
        if key.is_empty() {
            return Err(invalid("empty"));
        }
        if key.len() > MAX_KEY_BYTES {
            return Err(invalid("longer than 1024 bytes"));
        }
        for segment in key.split('/') {
            if segment.is_empty() {
                return Err(invalid("empty path segment"));
            }
            if segment.starts_with('.') {
                return Err(invalid("segment starts with a dot"));
            }
            // File systems refuse longer names; no key this store makes comes near it.
            if segment.len() > MAX_SEGMENT_BYTES {
                return Err(invalid("path segment longer than 255 bytes"));
            }
            if !segment.bytes().all(is_key_byte) {
                return Err(invalid("only A-Z a-z 0-9 . _ - and / are allowed"));
            }
        }
        Ok(Self(key.to_owned()))
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The last segment: the sanitised file name.
    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    pub(crate) fn to_path(&self) -> object_store::path::Path {
        // Every segment was checked to be a valid object_store path part, so `from` (which
        // would percent-encode anything odd) keeps the key byte for byte.
        object_store::path::Path::from(self.0.as_str())
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_key_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-')
}

/// Reduces a user's file name to one safe key segment: the last path component, ASCII letters,
/// digits, `.`, `_`, `-` kept, runs of anything else become one `_`, no leading dots, at most
/// 100 characters with the extension kept. Never empty (`file`).
pub fn sanitise_file_name(name: &str) -> String {
    // Browsers on Windows send `C:\Users\x\clip.mp4`; keep only the last component of either.
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let mut out = String::with_capacity(last.len());
    for ch in last.chars() {
        if ch.is_ascii() && is_key_byte(ch as u8) {
            out.push(ch);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    let trimmed = out.trim_start_matches(['.', '_']).trim_end_matches('_');
    let mut clean = trimmed.to_owned();
    if clean.len() > MAX_FILE_NAME_CHARS {
        let ext = clean
            .rfind('.')
            .map(|dot| clean[dot..].to_owned())
            .filter(|ext| ext.len() <= 16)
            .unwrap_or_default();
        clean.truncate(MAX_FILE_NAME_CHARS - ext.len());
        clean.push_str(&ext);
    }
    if clean.is_empty() || clean.bytes().all(|b| b == b'.') {
        return "file".to_owned();
    }
    clean
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitising_keeps_safe_names_and_neutralises_the_rest() {
        assert_eq!(sanitise_file_name("clip.mp4"), "clip.mp4");
        assert_eq!(sanitise_file_name("../../etc/passwd"), "passwd");
        assert_eq!(
            sanitise_file_name("C:\\Users\\me\\My Clip (1).mov"),
            "My_Clip_1_.mov"
        );
        assert_eq!(sanitise_file_name(".."), "file");
        assert_eq!(sanitise_file_name(""), "file");
        assert_eq!(sanitise_file_name(".hidden"), "hidden");
        assert_eq!(sanitise_file_name("vidéo été.mp4"), "vid_o_t_.mp4");
        assert_eq!(sanitise_file_name("a/"), "file");
        let long = format!("{}.mp4", "x".repeat(300));
        let clean = sanitise_file_name(&long);
        assert_eq!(clean.len(), 100);
        assert!(clean.ends_with(".mp4"));
    }

    #[test]
    fn new_keys_parse_back_and_hostile_keys_do_not() {
        let key = ObjectKey::new_upload("../x/../../y z.mp4");
        assert!(key.as_str().starts_with("uploads/"));
        assert_eq!(key.file_name(), "y_z.mp4");
        assert_eq!(ObjectKey::parse(key.as_str()).ok(), Some(key.clone()));
        assert_eq!(key.to_path().as_ref(), key.as_str());
        for bad in [
            "",
            "/abs",
            "a//b",
            "a/../b",
            "../a",
            "a/./b",
            "a/.staging",
            "a/b c",
            "a\\b",
            "a/%2e%2e",
            "uploads/x/",
        ] {
            assert!(ObjectKey::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert!(ObjectKey::parse(&format!("uploads/{}", "a".repeat(256))).is_err());
        assert!(ObjectKey::parse(&format!("uploads/{}", "a".repeat(255))).is_ok());
    }
}
