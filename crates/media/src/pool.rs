//! Writable copies of decoded frames in recycled buffers.
//!
//! A decoded frame shares its buffers with the decoder's reference pictures, so blending into
//! it needs a copy first. `av_frame_make_writable` allocates that copy fresh every frame, on
//! whichever rayon thread blends it, and the encoder thread frees it: glibc then keeps a
//! frame-sized free list in every thread's arena, which measured ~40 MB over a bare transcode's
//! peak on a 1080x1920 clip. A pool allocates the few buffers the pipeline has in flight once
//! and hands them round.

use std::sync::Mutex;

use ffmpeg::ffi;
use ffmpeg::frame;
use ffmpeg_next as ffmpeg;

/// Planes a frame of the formats the blender takes can have.
const MAX_PLANES: usize = 3;

/// One `AVBufferPool` per plane, for frames of one layout (line sizes and plane heights).
struct Pools {
    key: [(i32, usize); MAX_PLANES],
    pools: [*mut ffi::AVBufferPool; MAX_PLANES],
}

impl Drop for Pools {
    fn drop(&mut self) {
        for pool in &mut self.pools {
            if !pool.is_null() {
                // SAFETY: the pool came from av_buffer_pool_init and is released once here;
                // buffers still in use (frames in the encoder's queue) stay valid and the pool
                // is freed when the last one returns.
                unsafe { ffi::av_buffer_pool_uninit(pool) };
            }
        }
    }
}

/// Recycles the buffers of writable frame copies.
#[derive(Default)]
pub(crate) struct FramePool {
    pools: Mutex<Option<Pools>>,
}

// SAFETY: AVBufferPool is thread-safe (av_buffer_pool_get and the return of a buffer lock the
// pool's own mutex); the raw pointers are only replaced under `pools`' lock.
unsafe impl Send for FramePool {}
// SAFETY: as above.
unsafe impl Sync for FramePool {}

impl FramePool {
    /// Makes `frame` writable: a no-op when nothing else references its buffers, otherwise a
    /// copy (pixels and properties) into pooled buffers. `plane_rows[i]` is the height of
    /// plane `i` (0 for a plane the format does not have). Returns `false` when memory runs out.
    pub(crate) fn make_writable(
        &self,
        frame: &mut frame::Video,
        plane_rows: [usize; MAX_PLANES],
    ) -> bool {
        // SAFETY: `frame` is a valid frame we own.
        if unsafe { ffi::av_frame_is_writable(frame.as_mut_ptr()) } != 0 {
            return true;
        }
        // SAFETY: only the pointer is taken; it is read below while `frame` is alive.
        let src = unsafe { frame.as_ptr() };
        let mut key = [(0_i32, 0_usize); MAX_PLANES];
        for (i, slot) in key.iter_mut().enumerate() {
            // SAFETY: reading the line size array of a valid frame.
            let linesize = unsafe { (*src).linesize[i] };
            if plane_rows[i] > 0 && linesize <= 0 {
                return false;
            }
            *slot = (linesize, plane_rows[i]);
        }
        let mut copy = frame::Video::empty();
        {
            let Ok(mut guard) = self.pools.lock() else {
                return false;
            };
            if guard.as_ref().is_none_or(|p| p.key != key) {
                let mut pools = [std::ptr::null_mut(); MAX_PLANES];
                for (pool, &(linesize, rows)) in pools.iter_mut().zip(&key) {
                    if rows > 0 {
                        // Padding as FFmpeg's own frame buffers have, for SIMD readers.
                        let size =
                            linesize as usize * rows + ffi::AV_INPUT_BUFFER_PADDING_SIZE as usize;
                        // SAFETY: a plain constructor; NULL (out of memory) is checked below.
                        *pool = unsafe { ffi::av_buffer_pool_init(size, None) };
                    }
                }
                // Dropping the old pools lets their buffers go as the frames holding them do.
                *guard = Some(Pools { key, pools });
            }
            let Some(pools) = guard.as_ref() else {
                return false;
            };
            // SAFETY: only the pointer is taken; `copy` outlives its uses below.
            let dst = unsafe { copy.as_mut_ptr() };
            for (i, (&pool, &(linesize, rows))) in pools.pools.iter().zip(&key).enumerate() {
                if rows == 0 {
                    continue;
                }
                if pool.is_null() {
                    return false;
                }
                // SAFETY: `pool` is a live pool; the returned reference (or NULL) becomes the
                // frame's, and av_frame_unref (on drop) gives it back.
                unsafe {
                    let buf = ffi::av_buffer_pool_get(pool);
                    if buf.is_null() {
                        return false;
                    }
                    (*dst).buf[i] = buf;
                    (*dst).data[i] = (*buf).data;
                    (*dst).linesize[i] = linesize;
                }
            }
        }
        // SAFETY: `copy` has buffers of the source's line sizes and plane heights; the format
        // and size set here make av_frame_copy copy exactly those planes, and
        // av_frame_copy_props copies the metadata (timing, colour tags, side data).
        unsafe {
            let dst = copy.as_mut_ptr();
            (*dst).format = (*src).format;
            (*dst).width = (*src).width;
            (*dst).height = (*src).height;
            if ffi::av_frame_copy(dst, src) < 0 || ffi::av_frame_copy_props(dst, src) < 0 {
                return false;
            }
        }
        *frame = copy;
        true
    }
}
