//! Checks on the files a command is given, made before any work starts, so that a mistake is
//! reported at once and in the user's words.

use std::path::{Path, PathBuf};

use anyhow::Result;
use caption_core::ErrorCode;

use crate::failure::{Failure, fail};

/// A file the user named as input must exist (and be a file, not a folder).
pub fn existing_file(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => fail(
            ErrorCode::UnreadableInput,
            path.display(),
            "is a folder, not a file",
        ),
        Ok(_) => Ok(()),
        Err(e) => Err(Failure::io(path, "cannot be read", &e).into()),
    }
}

/// The text of a file the user named, read whole.
pub fn read_text(path: &Path) -> Result<String> {
    existing_file(path)?;
    std::fs::read_to_string(path).map_err(|e| Failure::io(path, "cannot be read", &e).into())
}

/// Writes `bytes` to the output `path`.
pub fn write(path: &Path, bytes: impl AsRef<[u8]>) -> Result<()> {
    std::fs::write(path, bytes).map_err(|e| Failure::io(path, "cannot be written", &e).into())
}

/// The folder an output goes into must exist.
pub fn output_folder(output: &Path) -> Result<()> {
    match output.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) if !dir.is_dir() => fail(
            ErrorCode::InvalidRequest,
            output.display(),
            format!("the output folder {} does not exist", dir.display()),
        ),
        _ => Ok(()),
    }
}

/// Where `path` is once symbolic links and `..` are resolved; for a file not written yet, its
/// folder's resolved path joined with its name.
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let name = path.file_name()?;
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(dir) => dir.canonicalize().ok()?,
        None => std::env::current_dir().ok()?,
    };
    Some(dir.join(name))
}

/// Whether writing `output` would overwrite `input` (the same path, or another name of the
/// same file).
pub fn is_same_file(input: &Path, output: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(input), std::fs::metadata(output)) {
            return a.dev() == b.dev() && a.ino() == b.ino();
        }
    }
    match (resolved(input), resolved(output)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// A burn must never replace its own input.
pub fn not_the_input(input: &Path, output: &Path) -> Result<()> {
    if is_same_file(input, output) {
        return fail(
            ErrorCode::InvalidRequest,
            output.display(),
            "the output is the input video; choose another output name (the original would be lost)",
        );
    }
    Ok(())
}

/// The lower-case extension of `path`, if it has one.
pub fn extension(path: &Path) -> Option<String> {
    path.extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_file_under_two_names() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.mp4");
        std::fs::write(&file, b"x").unwrap();
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        assert!(is_same_file(&file, &sub.join("../a.mp4")));
        assert!(!is_same_file(&file, &dir.path().join("b.mp4")));
        assert!(not_the_input(&file, &file).is_err());
        #[cfg(unix)]
        {
            let link = dir.path().join("link.mp4");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            assert!(is_same_file(&file, &link));
        }
    }

    #[test]
    fn missing_inputs_and_folders_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("nothere.mp4");
        let e = existing_file(&missing).unwrap_err().to_string();
        assert!(e.starts_with("error[input_not_found]: "), "{e}");
        assert!(e.ends_with("nothere.mp4: file not found"), "{e}");
        let e = output_folder(&dir.path().join("no/out.mp4"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("the output folder"), "{e}");
        assert!(output_folder(Path::new("out.mp4")).is_ok());
    }
}
