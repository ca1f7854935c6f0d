//! Memory a finished job freed, given back to the system.
//!
//! glibc's allocator keeps what a thread freed in that thread's arena for the next allocation
//! there. A burn's frames and a transcription's audio are large and allocated from many
//! threads (rayon's renderers, FFmpeg's, whisper's), so after a few hundred jobs each arena
//! can hold the high-water mark of whatever ran on it, and a service's resident memory creeps
//! up under steady load although no job keeps anything. Trimming when a job ends hands the
//! free pages of every arena back; but pages that still hold a few live blocks stay, in as many
//! arenas as threads ever ran at once (glibc allows eight a core). A process that serves caps
//! the arenas at two a core ([`cap_arenas`]): an hour's soak with the default held a dozen
//! arenas of 20-50 MiB each, and one process's resident memory rose 14 % from its minute 10.

/// Returns the allocator's free pages to the system (every arena's, not only the main heap's).
/// A no-op where the C library is not glibc.
pub(crate) fn give_back() {
    // glibc's malloc_trim releases the free memory at the top of the heap and, since 2.8, the
    // free pages inside every arena.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointer and is safe to call from any thread at any time; it
    // takes each arena's lock itself.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Caps glibc's malloc arenas at two a core, unless `MALLOC_ARENA_MAX` says otherwise. Call it
/// first thing in a process that serves, before its threads start. A no-op where the C
/// library is not glibc. The other allocator setting a long job wants,
/// [`caption_transcribe::return_large_blocks_when_freed`], every `captions` command makes.
pub fn cap_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        let arenas = std::ffi::c_int::try_from(2 * cores).unwrap_or(std::ffi::c_int::MAX);
        // SAFETY: mallopt takes two integers and no pointer; M_ARENA_MAX only bounds arenas
        // made from now on.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, arenas);
        }
    }
}
