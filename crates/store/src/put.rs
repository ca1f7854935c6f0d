//! Streaming a body into object_store with size bounds, shared by the backends.

use bytes::Bytes;
use futures_util::StreamExt as _;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt as _, WriteMultipart};

use crate::error::{Error, Result};
use crate::key::ObjectKey;
use crate::storage::{ByteStream, PutOptions};

/// Part size of multipart uploads; S3's minimum is 5 MiB.
pub(crate) const PART_BYTES: usize = 8 * 1024 * 1024;
/// Parts in flight at once: memory stays near `PART_BYTES * (MAX_PARTS_IN_FLIGHT + 1)`.
const MAX_PARTS_IN_FLIGHT: usize = 2;

/// Adds `chunk` to the running size, refusing to pass `max_bytes`.
pub(crate) fn count(
    key: &ObjectKey,
    size_bytes: &mut u64,
    chunk: &Bytes,
    options: &PutOptions,
) -> Result<()> {
    *size_bytes += chunk.len() as u64;
    match options.max_bytes {
        Some(max_bytes) if *size_bytes > max_bytes => Err(Error::TooLarge {
            key: key.to_string(),
            max_bytes,
        }),
        _ => Ok(()),
    }
}

pub(crate) fn check_min(key: &ObjectKey, size_bytes: u64, options: &PutOptions) -> Result<()> {
    if size_bytes < options.min_bytes {
        return Err(Error::TooSmall {
            key: key.to_string(),
            size_bytes,
            min_bytes: options.min_bytes,
        });
    }
    Ok(())
}

/// Streams `head` then `body` into a multipart upload at `path`, which becomes visible only
/// when the upload completes. Any failure (body error, size out of bounds) aborts the upload.
/// Returns the size written.
pub(crate) async fn stream_multipart(
    store: &dyn ObjectStore,
    path: &Path,
    key: &ObjectKey,
    head: Vec<Bytes>,
    mut body: ByteStream,
    options: &PutOptions,
) -> Result<u64> {
    let upload = store
        .put_multipart(path)
        .await
        .map_err(|e| Error::from_object_store(key.as_str(), e))?;
    let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
    let mut size_bytes = 0_u64;
    let mut head = head.into_iter();
    let outcome: Result<()> = loop {
        let chunk = match head.next() {
            Some(chunk) => chunk,
            None => match body.next().await {
                Some(Ok(chunk)) => chunk,
                Some(Err(source)) => {
                    break Err(Error::Body {
                        key: key.to_string(),
                        source,
                    });
                }
                None => break check_min(key, size_bytes, options),
            },
        };
        if let Err(error) = count(key, &mut size_bytes, &chunk, options) {
            break Err(error);
        }
        if let Err(error) = writer.wait_for_capacity(MAX_PARTS_IN_FLIGHT).await {
            break Err(Error::from_object_store(key.as_str(), error));
        }
        writer.put(chunk);
    };
    match outcome {
        Ok(()) => {
            writer
                .finish()
                .await
                .map_err(|e| Error::from_object_store(key.as_str(), e))?;
            Ok(size_bytes)
        }
        Err(error) => {
            if let Err(abort_error) = writer.abort().await {
                tracing::warn!(key = %key, error = %abort_error, "aborting a refused upload failed");
            }
            Err(error)
        }
    }
}
