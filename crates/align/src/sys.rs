//! The few functions of PocketSphinx's C API the aligner calls (`include/pocketsphinx.h`,
//! version 5.1.1). Written by hand: a dozen declarations do not earn a bindgen step.

use std::ffi::{c_char, c_double, c_int, c_long};

/// `ps_config_t`.
#[repr(C)]
pub(crate) struct Config {
    _private: [u8; 0],
}

/// `ps_decoder_t`.
#[repr(C)]
pub(crate) struct Decoder {
    _private: [u8; 0],
}

/// `ps_seg_t`.
#[repr(C)]
pub(crate) struct Seg {
    _private: [u8; 0],
}

/// `ps_arg_t`, only ever passed as NULL (the decoder's own argument definitions).
#[repr(C)]
pub(crate) struct Arg {
    _private: [u8; 0],
}

/// `anytype_t`, only compared with NULL.
#[repr(C)]
pub(crate) struct AnyType {
    _private: [u8; 0],
}

unsafe extern "C" {
    pub(crate) fn ps_config_init(defn: *const Arg) -> *mut Config;
    pub(crate) fn ps_config_free(config: *mut Config) -> c_int;
    pub(crate) fn ps_config_set_str(
        config: *mut Config,
        name: *const c_char,
        val: *const c_char,
    ) -> *const AnyType;
    pub(crate) fn ps_config_set_float(
        config: *mut Config,
        name: *const c_char,
        val: c_double,
    ) -> *const AnyType;
    pub(crate) fn ps_config_set_int(
        config: *mut Config,
        name: *const c_char,
        val: c_long,
    ) -> *const AnyType;
    pub(crate) fn ps_config_set_bool(
        config: *mut Config,
        name: *const c_char,
        val: c_int,
    ) -> *const AnyType;

    pub(crate) fn ps_init(config: *mut Config) -> *mut Decoder;
    pub(crate) fn ps_free(ps: *mut Decoder) -> c_int;

    pub(crate) fn ps_lookup_word(ps: *mut Decoder, word: *const c_char) -> *mut c_char;
    pub(crate) fn ps_add_word(
        ps: *mut Decoder,
        word: *const c_char,
        phones: *const c_char,
        update: c_int,
    ) -> c_int;

    /// Added to the library by build.rs (`csrc/align_words.c`): as `ps_set_align_text`, the
    /// words in order, where a word whose `optional` flag is not 0 may be left out.
    pub(crate) fn ps_set_align_words(
        ps: *mut Decoder,
        words: *const *const c_char,
        optional: *const c_int,
        n_words: c_int,
    ) -> c_int;
    pub(crate) fn ps_start_utt(ps: *mut Decoder) -> c_int;
    pub(crate) fn ps_process_raw(
        ps: *mut Decoder,
        data: *const i16,
        n_samples: usize,
        no_search: c_int,
        full_utt: c_int,
    ) -> c_int;
    pub(crate) fn ps_end_utt(ps: *mut Decoder) -> c_int;

    pub(crate) fn ps_seg_iter(ps: *mut Decoder) -> *mut Seg;
    pub(crate) fn ps_seg_next(seg: *mut Seg) -> *mut Seg;
    pub(crate) fn ps_seg_word(seg: *mut Seg) -> *const c_char;
    pub(crate) fn ps_seg_frames(seg: *mut Seg, out_sf: *mut c_int, out_ef: *mut c_int);
    pub(crate) fn ps_seg_free(seg: *mut Seg);

    /// `ckd_free` releases strings the library allocated (`ps_lookup_word`'s result).
    pub(crate) fn ckd_free(ptr: *mut std::ffi::c_void);
}
