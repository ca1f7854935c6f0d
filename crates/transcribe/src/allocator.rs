//! The C allocator's setting for long work in one process.

/// Makes the C allocator (glibc's) give every block of 1 MiB or more a mapping of its own,
/// returned to the system when the block is freed; elsewhere it does nothing.
///
/// glibc starts by doing so from 128 KiB, but each time such a block is freed it raises that
/// size to the block's (up to 32 MiB), and blocks under it then come from its arenas, which
/// keep the pages freed inside them. whisper.cpp's per-piece buffers (a piece's spectrogram,
/// DTW's matrices) and the graphs' scratch space are such blocks: over an hour of speech they
/// left 30 MB more resident than the work ever held at once (peak 490 MB against 457 MB with
/// this set, tiny.en; the same words and times, the same speed within 0.5 %). A setting of the
/// whole process, so the program decides: `captions` (every command) calls it first thing.
/// glibc's own `MALLOC_MMAP_THRESHOLD_` in the environment wins over it.
pub fn return_large_blocks_when_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
        // SAFETY: mallopt takes two integers and no pointer; any threshold is valid.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
        }
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    /// Whether glibc mapped `block`'s memory on its own: the IS_MMAPPED bit of the size word
    /// its chunk header keeps just before the block (glibc's malloc.c). Read from the block
    /// itself, not from the allocator's counters, which the tests running beside this one move.
    fn mapped_on_its_own(block: &[u8]) -> bool {
        const IS_MMAPPED: usize = 0x2;
        // SAFETY: every block glibc's malloc hands out is preceded by its chunk's size word.
        let size_word = unsafe { block.as_ptr().cast::<usize>().sub(1).read_unaligned() };
        size_word & IS_MMAPPED != 0
    }

    #[test]
    fn a_block_of_two_mib_gets_its_own_mapping_after_a_larger_one_was_freed() {
        return_large_blocks_when_freed();
        // Freeing a mapped 8 MiB block is what made glibc take blocks under 8 MiB from its
        // arenas from then on.
        drop(std::hint::black_box(vec![1_u8; 8 << 20]));
        let block = std::hint::black_box(vec![1_u8; 2 << 20]);
        assert!(
            mapped_on_its_own(&block),
            "the 2 MiB block came from an arena"
        );
        let small = std::hint::black_box(vec![1_u8; 64 << 10]);
        assert!(
            !mapped_on_its_own(&small),
            "a 64 KiB block was mapped on its own"
        );
    }
}
