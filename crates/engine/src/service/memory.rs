//! Memory a finished job freed, given back to the system.
//!
//! glibc's allocator keeps what a thread freed in that thread's arena for the next allocation
//! there. A burn's frames and a transcription's audio are large and allocated from many
//! threads (rayon's renderers, FFmpeg's, whisper's), so after a few hundred jobs each arena
//! can hold the high-water mark of whatever ran on it, and a service's resident memory creeps
//! up under steady load although no job keeps anything. Trimming when a job ends hands the
//! free pages of every arena back.

/// Returns the allocator's free pages to the system (every arena's, not only the main heap's).
/// A no-op where the C library is not glibc.
pub(crate) fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            /// glibc: releases free memory at the top of the heap and, since 2.8, the free
            /// pages inside every arena; `pad` bytes are kept at the top.
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: malloc_trim takes no pointer and is safe to call from any thread at any
        // time; it takes each arena's lock itself.
        unsafe {
            malloc_trim(0);
        }
    }
}
