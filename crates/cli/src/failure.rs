//! How the command line says what went wrong: one line per problem,
//! `error[<code>]: <file>: <problem>`, with the stable code a program or the HTTP service gets,
//! the file (or flag, or template) named once, and the problem in the user's words. Warnings
//! read the same way: `warning: <file>: <problem>`.

use std::fmt;
use std::path::Path;

use caption_core::{ErrorCode, ValidationErrors};

/// A failure about one file (or flag, or template): its code and each problem found in it.
#[derive(Debug)]
pub struct Failure {
    code: ErrorCode,
    subject: String,
    problems: Vec<String>,
}

impl Failure {
    /// One problem of `subject`.
    pub fn new(code: ErrorCode, subject: impl fmt::Display, problem: impl Into<String>) -> Self {
        Self {
            code,
            subject: subject.to_string(),
            problems: vec![problem.into()],
        }
    }

    /// Every rule `problems` lists as broken in `subject`, each on its line.
    pub fn invalid(subject: impl fmt::Display, problems: &ValidationErrors) -> Self {
        Self {
            code: ErrorCode::InvalidRequest,
            subject: subject.to_string(),
            problems: problems.iter().map(ToString::to_string).collect(),
        }
    }

    /// An engine error met while working on `files` (the input first): its code, and its
    /// message said of the file it names (or of the first of `files`), that name said once.
    pub fn engine(files: &[&Path], error: &caption_engine::Error) -> Self {
        use caption_transcribe::Error as T;
        match error {
            caption_engine::Error::Invalid(problems) => {
                Self::invalid(shown(files.first().copied()), problems)
            }
            // What is wrong is the model or language asked for, not the file.
            caption_engine::Error::Transcribe(
                T::UnknownModel { .. } | T::ModelMissing { .. } | T::CannotTranslate { .. },
            ) => Self::new(error.code(), "--model", error.to_string()),
            caption_engine::Error::Transcribe(
                T::InvalidLanguage { .. } | T::LanguageNotSupported { .. },
            ) => Self::new(error.code(), "--lang", error.to_string()),
            _ => said_of(files, error.code(), &error.to_string()),
        }
    }

    /// A media error about `files`, as [`Failure::engine`] says it.
    pub fn media(files: &[&Path], error: &caption_media::Error) -> Self {
        said_of(files, error.code(), &error.to_string())
    }

    /// A file that could not be read or written: its code (`disk_full` when the disk is) and
    /// the system's reason in words, without its error number.
    pub fn io(path: &Path, doing: &str, error: &std::io::Error) -> Self {
        let code = match error.kind() {
            std::io::ErrorKind::NotFound => ErrorCode::InputNotFound,
            _ if ErrorCode::is_disk_full(error) => ErrorCode::DiskFull,
            _ if doing.starts_with("cannot be read") => ErrorCode::UnreadableInput,
            _ => ErrorCode::Internal,
        };
        let problem = match error.kind() {
            std::io::ErrorKind::NotFound if doing.starts_with("cannot be read") => {
                "file not found".to_owned()
            }
            _ => format!("{doing}: {}", io_reason(error)),
        };
        Self::new(code, path.display(), problem)
    }

    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The lines printed for it.
    pub fn lines(&self) -> Vec<String> {
        self.problems
            .iter()
            .map(|problem| match self.subject.as_str() {
                "" => format!("error[{}]: {problem}", self.code),
                subject => format!("error[{}]: {subject}: {problem}", self.code),
            })
            .collect()
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.lines().join("\n"))
    }
}

impl std::error::Error for Failure {}

/// A path as it is shown, or nothing.
fn shown(path: Option<&Path>) -> String {
    path.map(|p| p.display().to_string()).unwrap_or_default()
}

/// `message` said of the file it starts with (one of `files`), or of the first of `files`.
fn said_of(files: &[&Path], code: ErrorCode, message: &str) -> Failure {
    for file in files {
        let name = file.display().to_string();
        if let Some(rest) = message.strip_prefix(&format!("{name}: ")) {
            return Failure::new(code, name, rest);
        }
    }
    Failure::new(code, shown(files.first().copied()), message)
}

/// The system's reason for an I/O error, in words: "permission denied", not
/// "Permission denied (os error 13)".
pub fn io_reason(error: &std::io::Error) -> String {
    let text = error.to_string();
    let text = match text.find(" (os error ") {
        Some(at) => &text[..at],
        None => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `Err` of one problem of `subject`, for `?`.
pub fn fail<T>(
    code: ErrorCode,
    subject: impl fmt::Display,
    problem: impl Into<String>,
) -> anyhow::Result<T> {
    Err(Failure::new(code, subject, problem).into())
}

/// The warning lines of `warnings` found in `file`.
pub fn warning_lines(file: &Path, warnings: &ValidationErrors) -> Vec<String> {
    warnings
        .iter()
        .map(|w| format!("warning: {}: {w}", file.display()))
        .collect()
}

/// Whether `error` is a write to a reader that went away (`captions fonts | head -1`): the
/// reader has what it wanted, so the command ends quietly.
pub fn is_closed_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        reason = "test code: a panic is the failure report"
    )]

    use super::*;

    #[test]
    fn a_file_is_named_once_and_the_error_number_is_dropped() {
        let error = caption_media::Error::NoAudio {
            path: "talk.mp4".into(),
        };
        let failure = Failure::media(&[Path::new("talk.mp4")], &error);
        assert_eq!(
            failure.lines(),
            ["error[no_audio]: talk.mp4: has no audio stream"]
        );
        let denied = std::io::Error::from_raw_os_error(13);
        let failure = Failure::io(Path::new("out.srt"), "cannot be written", &denied);
        assert_eq!(
            failure.lines(),
            ["error[internal]: out.srt: cannot be written: permission denied"]
        );
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let failure = Failure::io(Path::new("a.json"), "cannot be read", &missing);
        assert_eq!(
            failure.lines(),
            ["error[input_not_found]: a.json: file not found"]
        );
    }
}
