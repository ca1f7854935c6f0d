//! Persistent jobs: transcriptions, background generates and webhook deliveries.
//!
//! A job moves `IN_QUEUE` → `IN_PROGRESS` → `COMPLETED` | `FAILED`. Workers [`JobStore::claim`]
//! a job under a lease, renew it with [`JobStore::heartbeat`] while they work, and finish it
//! with [`JobStore::complete`] or [`JobStore::fail`]; a worker that lost its lease (it stalled,
//! or its process died and another took the job over) can no longer finish it, so a job's words
//! are written exactly once. A job whose lease expires goes back to the queue, up to a retry
//! limit, after which it fails with code `retries_exhausted`. A job can be cancelled (it fails
//! with code `cancelled`), and put back with a delay ([`JobStore::retry_later`], how webhook
//! deliveries back off). Each [`JobKind`] has its own workers.
//!
//! [`EmbeddedJobStore`] keeps jobs in a redb file in the data folder (one machine);
//! `PostgresJobStore` (feature `postgres`) in PostgreSQL, shared by several processes on several
//! machines. Both pass the same conformance suite (`tests/conformance.rs`).
//!
//! # Features
//!
//! - `embedded` (default): `EmbeddedJobStore`, on redb.
//! - `postgres`: `PostgresJobStore`, on tokio-postgres.
//!
//! With neither, the crate is the [`JobStore`] trait and the job records, for a store of your
//! own.

#![warn(missing_docs)]

#[cfg(feature = "embedded")]
mod embedded;
#[cfg(feature = "postgres")]
mod postgres;
mod record;
mod store;
#[cfg(feature = "postgres")]
mod tls;

#[cfg(feature = "embedded")]
pub use embedded::EmbeddedJobStore;
#[cfg(feature = "postgres")]
pub use postgres::PostgresJobStore;
pub use record::{JobKind, JobRecord, JobSpec, cancelled_error, now_ms};
pub use store::{ClaimOptions, JobStore};

/// Why a job store operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The database refused an operation (or could not be opened).
    #[error("job database {path}: {message}")]
    Database {
        /// The redb file, or the PostgreSQL URL without its password.
        path: String,
        /// The database's error.
        message: String,
    },
    /// The database cannot be reached or used for now: the PostgreSQL server is down or
    /// restarting, or an I/O error interrupted the embedded file (reopened on the next call).
    /// The same call may work later.
    #[error("job database {path} unavailable: {message}")]
    Unavailable {
        /// The redb file, or the PostgreSQL URL without its password.
        path: String,
        /// What failed.
        message: String,
    },
    /// The disk holding the embedded database is full; what was stored stays readable.
    #[error("job database {path}: the disk is full: {message}")]
    DiskFull {
        /// The redb file.
        path: String,
        /// The system's error.
        message: String,
    },
    /// A stored record does not decode.
    #[error("job {job_id}: stored record is corrupt: {message}")]
    Corrupt {
        /// The job's id.
        job_id: String,
        /// Why it does not decode.
        message: String,
    },
    /// The thread that ran a blocking database call panicked or was cancelled.
    #[error("job store task failed: {0}")]
    Task(String),
}

/// Result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The stable code of this error: a database that cannot be reached for now is
    /// `storage_unavailable` and a full disk `disk_full` (both may work later); anything else
    /// is `internal`, since every failure of a job store is the machine's, never the caller's
    /// (an unknown job is `Ok(None)`, not an error).
    pub fn code(&self) -> caption_core::ErrorCode {
        match self {
            Self::Unavailable { .. } => caption_core::ErrorCode::StorageUnavailable,
            Self::DiskFull { .. } => caption_core::ErrorCode::DiskFull,
            Self::Database { .. } | Self::Corrupt { .. } | Self::Task(_) => {
                caption_core::ErrorCode::Internal
            }
        }
    }
}

#[cfg(all(test, feature = "embedded"))]
mod tests {
    use super::*;

    #[test]
    fn a_job_database_that_cannot_be_opened_is_internal() {
        let dir = tempfile::tempdir().unwrap();
        // A folder where the database file should be.
        let error = EmbeddedJobStore::open(dir.path()).unwrap_err();
        assert_eq!(error.code(), caption_core::ErrorCode::Internal, "{error}");
    }
}
