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
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
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
