use std::path::PathBuf;

use caption_core::ErrorCode;

/// Everything that can go wrong in `caption-store`, with the object key or path it concerns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A key given from outside (a request, a job) is not one this store could have made.
    #[error("invalid object key {key:?}: {reason}")]
    InvalidKey {
        /// The key given (its first 200 characters).
        key: String,
        /// The rule it breaks.
        reason: &'static str,
    },

    /// No object under this key.
    #[error("object {key} not found")]
    NotFound {
        /// The key.
        key: String,
    },

    /// `put` never overwrites: the key is taken.
    #[error("object {key} already exists")]
    AlreadyExists {
        /// The key.
        key: String,
    },

    /// The body was larger than the put's `max_bytes`; nothing was stored.
    #[error("object {key}: body exceeds the limit of {max_bytes} bytes")]
    TooLarge {
        /// The key.
        key: String,
        /// The limit, bytes.
        max_bytes: u64,
    },

    /// The body was smaller than the put's `min_bytes`; nothing was stored.
    #[error("object {key}: body of {size_bytes} bytes is below the minimum of {min_bytes}")]
    TooSmall {
        /// The key.
        key: String,
        /// The body's size, bytes.
        size_bytes: u64,
        /// The minimum, bytes.
        min_bytes: u64,
    },

    /// The requested byte range does not overlap the object.
    #[error("object {key}: range not satisfiable for an object of {size_bytes} bytes")]
    RangeNotSatisfiable {
        /// The key.
        key: String,
        /// The object's size, bytes.
        size_bytes: u64,
    },

    /// The body stream given to `put` failed; nothing was stored.
    #[error("object {key}: reading the upload body failed: {source}")]
    Body {
        /// The key it was to be stored under.
        key: String,
        /// The stream's error.
        #[source]
        source: std::io::Error,
    },

    /// The configuration cannot work (bad URL, empty bucket, ...).
    #[error("storage configuration: {0}")]
    Config(String),

    /// The local data folder could not be created or read.
    #[error("data folder {path}: {source}")]
    DataDir {
        /// The folder.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },

    /// The local signing secret could not be read or created.
    #[error("signing secret {path}: {source}")]
    Secret {
        /// The secret's file.
        path: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },

    /// The backend (disk or S3) failed.
    #[error("storage backend, object {key}: {source}")]
    Backend {
        /// The key concerned.
        key: String,
        /// The backend's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The stable code of this error: a missing object is `not_found`; a key, size or range the
    /// caller got wrong is `invalid_request`; the backend failing (disk or bucket unreachable)
    /// is `storage_unavailable` (`disk_full` when the local disk has no space left), so that a
    /// caller may try again later; a store that cannot be
    /// set up, a taken key (keys are fresh) and a failing upload body are `internal`.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::NotFound { .. } => ErrorCode::NotFound,
            Self::InvalidKey { .. }
            | Self::TooLarge { .. }
            | Self::TooSmall { .. }
            | Self::RangeNotSatisfiable { .. } => ErrorCode::InvalidRequest,
            Self::Backend { source, .. } if ErrorCode::is_disk_full(source.as_ref()) => {
                ErrorCode::DiskFull
            }
            Self::DataDir { source, .. } if ErrorCode::is_disk_full(source) => ErrorCode::DiskFull,
            Self::Backend { .. } => ErrorCode::StorageUnavailable,
            Self::AlreadyExists { .. }
            | Self::Body { .. }
            | Self::Config(_)
            | Self::DataDir { .. }
            | Self::Secret { .. } => ErrorCode::Internal,
        }
    }

    /// Maps an object_store error for `key` into ours, keeping the cases callers act on.
    pub(crate) fn from_object_store(key: &str, error: object_store::Error) -> Self {
        match error {
            object_store::Error::NotFound { .. } => Self::NotFound {
                key: key.to_owned(),
            },
            object_store::Error::AlreadyExists { .. }
            | object_store::Error::Precondition { .. } => Self::AlreadyExists {
                key: key.to_owned(),
            },
            other => Self::Backend {
                key: key.to_owned(),
                source: Box::new(other),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt as _;

    use super::*;
    use crate::{GetOptions, LinkOptions, LocalStorage, ObjectKey, PutOptions, Storage as _};

    #[tokio::test]
    async fn codes_of_local_storage_errors() {
        let dir = tempfile::tempdir().unwrap();
        let store =
            LocalStorage::open(dir.path(), "http://127.0.0.1:1", LinkOptions::default()).unwrap();

        let bad_key = ObjectKey::parse("../etc/passwd").unwrap_err();
        assert_eq!(bad_key.code(), ErrorCode::InvalidRequest, "{bad_key}");

        let key = ObjectKey::new_upload("clip.mp4");
        let missing = store.get(&key, GetOptions::default()).await.unwrap_err();
        assert_eq!(missing.code(), ErrorCode::NotFound, "{missing}");

        let body = futures_util::stream::iter([Ok(bytes::Bytes::from_static(b"0123456789"))]);
        let too_large = store
            .put(&key, body.boxed(), PutOptions::size_range(1, 4))
            .await
            .unwrap_err();
        assert_eq!(too_large.code(), ErrorCode::InvalidRequest, "{too_large}");
    }

    #[tokio::test]
    async fn a_local_write_on_a_full_disk_is_disk_full() {
        let disk = match caption_testkit::Tmpfs::mount(1) {
            Ok(disk) => disk,
            Err(why) => {
                eprintln!("SKIPPED: {why}");
                return;
            }
        };
        let store =
            LocalStorage::open(disk.path(), "http://127.0.0.1:1", LinkOptions::default()).unwrap();
        disk.fill("filler");
        let body = futures_util::stream::iter([Ok(bytes::Bytes::from(vec![7_u8; 256 * 1024]))]);
        let key = ObjectKey::new_upload("clip.mp4");
        let full = store
            .put(&key, body.boxed(), PutOptions::default())
            .await
            .unwrap_err();
        assert_eq!(full.code(), ErrorCode::DiskFull, "{full}");
        // An upload form answered from it tells the S3 client to come back later.
        let reply = crate::S3Error::from_storage(&full);
        assert_eq!(
            reply.code,
            crate::S3ErrorCode::ServiceUnavailable,
            "{reply}"
        );
        assert_eq!(reply.code.status(), 503);
    }

    #[test]
    fn a_failing_backend_is_storage_unavailable() {
        let error = Error::from_object_store(
            "uploads/x",
            object_store::Error::Generic {
                store: "S3",
                source: "connection refused".into(),
            },
        );
        assert_eq!(error.code(), ErrorCode::StorageUnavailable);
    }
}
