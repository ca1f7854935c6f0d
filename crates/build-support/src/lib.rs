//! What the build scripts that compile C and C++ sources share: where `make setup` left the
//! sources, a copy of them under `OUT_DIR` to change, and the changes, each checked against the
//! released text so that a different release fails the build instead of going unchanged.
//!
//! Build scripts report problems by panicking with a message (cargo prints it), so these do too.

#![allow(
    clippy::print_stdout,
    reason = "build scripts speak to cargo on stdout (`cargo:` lines)"
)]

use std::env;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One change to a source file: (what the released source says, how many times, what it says
/// here).
pub type Change = (&'static str, usize, &'static str);

/// Where set-up unpacked `folder`: the directory `override_var` names if set, otherwise
/// `folder` in the cache (`CAPTIONS_CACHE`, by default `~/.cache/caption-engine`).
pub fn sources(override_var: &str, folder: &str) -> PathBuf {
    println!("cargo:rerun-if-env-changed={override_var}");
    println!("cargo:rerun-if-env-changed=CAPTIONS_CACHE");
    if let Some(dir) = env::var_os(override_var) {
        return PathBuf::from(dir);
    }
    env::var_os("CAPTIONS_CACHE")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/caption-engine")))
        .unwrap_or_else(|| PathBuf::from(".cache/caption-engine"))
        .join(folder)
}

/// A fresh copy of the tree `from` at `OUT_DIR/name`, to change and build; returns its path.
pub fn fresh_copy(from: &Path, name: &str) -> PathBuf {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_else(|| panic!("cargo sets OUT_DIR")));
    let root = out.join(name);
    if root.exists() {
        fs::remove_dir_all(&root).unwrap_or_else(|e| panic!("clearing {}: {e}", root.display()));
    }
    copy_tree(from, &root)
        .unwrap_or_else(|e| panic!("copying {} to {}: {e}", from.display(), root.display()));
    root
}

fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    let mut files = Vec::new();
    list_files(from, &mut files)?;
    for file in files {
        let target = to.join(file.strip_prefix(from).unwrap_or(&file));
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::copy(&file, &target)?;
    }
    Ok(())
}

/// Makes `changes` to the file at `path`, each only if the released text occurs exactly as many
/// times as expected; `release` names what the file should come from, for the message.
pub fn change_file(path: &Path, changes: impl IntoIterator<Item = Change>, release: &str) {
    let mut text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    for (released, expected, changed) in changes {
        let found = text.matches(released).count();
        assert!(
            found == expected,
            "{} has {found} copies of {released:?} where {expected} were expected: not {release}",
            path.display()
        );
        text = text.replace(released, changed);
    }
    fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

/// Replaces the text of the file at `path` from the one occurrence of `from` up to (not
/// including) the next occurrence of `until` with `with`: a whole function, named by its first
/// line and what follows it, without repeating the released body here.
pub fn replace_between(path: &Path, from: &str, until: &str, with: &str, release: &str) {
    let mut text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let found = text.matches(from).count();
    assert!(
        found == 1,
        "{} has {found} copies of {from:?} where 1 was expected: not {release}",
        path.display()
    );
    let start = text.find(from).unwrap_or_default();
    let Some(length) = text[start..].find(until) else {
        panic!(
            "{} has no {until:?} after {from:?}: not {release}",
            path.display()
        );
    };
    text.replace_range(start..start + length, with);
    fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

/// The variables a C or C++ build reads from the environment (the compilers, their flags, CMake's
/// own), for a key of what a build was made from: these names, watched so a change builds again,
/// and every name starting with one of the prefixes.
const BUILD_VARIABLES: [&str; 8] = [
    "CC", "CXX", "AR", "CFLAGS", "CXXFLAGS", "LDFLAGS", "TARGET", "HOST",
];
const BUILD_PREFIXES: [&str; 7] = [
    "CMAKE_",
    "GGML_",
    "CARGO_FEATURE_",
    "CC_",
    "CXX_",
    "CFLAGS_",
    "CXXFLAGS_",
];

/// A key for a build made from the tree `root` (its files' names and contents), the build script
/// at `script` (the changes it makes and the switches it sets) and the environment's compilers
/// and flags: two runs with the same key build the same libraries.
pub fn build_key(root: &Path, script: &Path) -> u64 {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut hasher = DefaultHasher::new();
    let mut files = Vec::new();
    list_files(root, &mut files).unwrap_or_else(|e| panic!("listing {}: {e}", root.display()));
    files.sort();
    for file in files.iter().map(PathBuf::as_path).chain([script]) {
        file.strip_prefix(root).unwrap_or(file).hash(&mut hasher);
        fs::read(file)
            .unwrap_or_else(|e| panic!("reading {}: {e}", file.display()))
            .hash(&mut hasher);
    }
    let mut environment: Vec<(String, String)> = env::vars()
        .filter(|(name, _)| {
            BUILD_VARIABLES.contains(&name.as_str())
                || BUILD_PREFIXES.iter().any(|prefix| name.starts_with(prefix))
        })
        .collect();
    environment.sort();
    environment.hash(&mut hasher);
    for name in BUILD_VARIABLES {
        println!("cargo:rerun-if-env-changed={name}");
    }
    hasher.finish()
}

fn list_files(dir: &Path, files: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            list_files(&entry.path(), files)?;
        } else {
            files.push(entry.path());
        }
    }
    Ok(())
}

/// The folder holding what `build` made from the inputs `key` names (see [`build_key`]), shared
/// by every build script run in this target directory: a dev and a release build, a crate outside
/// the workspace that depends on ours with other settings, all link the libraries one run
/// compiled, where each would otherwise compile them again in its own `OUT_DIR`. On a miss,
/// `build` fills the folder it is given, which then becomes the shared one; only a finished
/// build is ever shared. Outside a cargo target directory, the build goes to `OUT_DIR` as usual.
pub fn built_once(name: &str, key: u64, build: impl FnOnce(&Path)) -> PathBuf {
    let out = PathBuf::from(env::var_os("OUT_DIR").unwrap_or_else(|| panic!("cargo sets OUT_DIR")));
    // Cargo marks its target directory's root with CACHEDIR.TAG.
    let Some(target) = out
        .ancestors()
        .find(|dir| dir.join("CACHEDIR.TAG").is_file())
    else {
        let dir = out.join(format!("{name}-build"));
        build(&dir);
        return dir;
    };
    let shared = target.join("shared-builds").join(name);
    let done = shared.join(format!("{key:016x}"));
    let finished = |dir: &Path| dir.join(".finished").is_file();
    if finished(&done) {
        return done;
    }
    let partial = shared.join(format!("{key:016x}.{}", std::process::id()));
    if partial.exists() {
        fs::remove_dir_all(&partial)
            .unwrap_or_else(|e| panic!("clearing {}: {e}", partial.display()));
    }
    fs::create_dir_all(&partial).unwrap_or_else(|e| panic!("creating {}: {e}", partial.display()));
    build(&partial);
    fs::write(partial.join(".finished"), "")
        .unwrap_or_else(|e| panic!("writing {}: {e}", partial.display()));
    if let Err(e) = fs::rename(&partial, &done) {
        // Another run finished the same build first: use its folder.
        if !finished(&done) {
            panic!("moving {} to {}: {e}", partial.display(), done.display());
        }
        let _ = fs::remove_dir_all(&partial);
    }
    done
}
