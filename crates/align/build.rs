//! Compiles PocketSphinx's C library from the source distribution that `scripts/setup-pocketsphinx`
//! (run by `make setup`) unpacks, and links it statically.

use std::env;
use std::path::PathBuf;

const VERSION: &str = "5.1.1";

fn source_dir() -> PathBuf {
    if let Some(dir) = env::var_os("CAPTIONS_POCKETSPHINX_SRC") {
        return PathBuf::from(dir);
    }
    let cache = env::var_os("CAPTIONS_CACHE")
        .map(PathBuf::from)
        .or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/caption-engine")))
        .unwrap_or_else(|| PathBuf::from(".cache/caption-engine"));
    cache.join(format!("pocketsphinx-{VERSION}"))
}

fn main() {
    println!("cargo:rerun-if-env-changed=CAPTIONS_POCKETSPHINX_SRC");
    println!("cargo:rerun-if-env-changed=CAPTIONS_CACHE");
    let src = source_dir();
    if !src.join("include/pocketsphinx.h").is_file() {
        panic!(
            "the PocketSphinx {VERSION} sources are not in {}: run scripts/setup-pocketsphinx \
             (make setup does), or point CAPTIONS_POCKETSPHINX_SRC at an unpacked source distribution",
            src.display()
        );
    }
    println!("cargo:rerun-if-changed={}", src.join("src").display());
    let out = cmake::Config::new(&src)
        .define("BUILD_SHARED_LIBS", "OFF")
        .define("BUILD_TESTING", "OFF")
        .define("CMAKE_POSITION_INDEPENDENT_CODE", "ON")
        // Optimised whatever the profile: the search is the aligner's whole cost.
        .profile("Release")
        .build_target("pocketsphinx")
        .build();
    println!(
        "cargo:rustc-link-search=native={}",
        out.join("build").display()
    );
    println!("cargo:rustc-link-lib=static=pocketsphinx");
    println!("cargo:rustc-link-lib=m");
}
