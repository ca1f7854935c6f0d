use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use caption_core::{JobError, JobStatus, Word};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};

use crate::{ClaimOptions, Error, JobRecord, JobSpec, JobStore, Result, cancelled_error, now_ms};

/// Job id → JSON record.
const JOBS: TableDefinition<&str, &[u8]> = TableDefinition::new("jobs");
/// Queue position → job id, for `IN_QUEUE` jobs; the smallest position is claimed first.
const QUEUE: TableDefinition<u64, &str> = TableDefinition::new("queue");
/// Job id → lease end (ms), for `IN_PROGRESS` jobs.
const RUNNING: TableDefinition<&str, u64> = TableDefinition::new("running");
/// Counters.
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const NEXT_POSITION: &str = "next_queue_position";

/// Jobs in one redb file: durable (every change is committed with fsync before the call
/// returns) and crash-safe (redb's copy-on-write commits), for a single process.
///
/// ```
/// use caption_core::{JobStatus, Word};
/// use caption_jobs::{ClaimOptions, EmbeddedJobStore, JobKind, JobSpec, JobStore};
///
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// let dir = tempfile::tempdir()?;
/// let jobs = EmbeddedJobStore::open(dir.path().join("jobs.redb"))?;
/// let job = jobs.submit(JobSpec::transcribe("uploads/1/talk.mp4", "en")).await?;
/// assert_eq!(job.status, JobStatus::InQueue);
///
/// let claimed = jobs.claim(&ClaimOptions::new("worker-1", JobKind::Transcribe)).await?;
/// assert_eq!(claimed.map(|j| j.id), Some(job.id.clone()));
/// let words = vec![Word::new(0.0, 0.4, "Hello")];
/// assert!(jobs.complete(&job.id, "worker-1", words.clone()).await?);
/// assert!(!jobs.complete(&job.id, "worker-2", words).await?, "only the holder finishes it");
///
/// let done = jobs.get(&job.id).await?.expect("stored");
/// assert_eq!(done.status, JobStatus::Completed);
/// assert_eq!(done.words.map(|w| w.len()), Some(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct EmbeddedJobStore {
    /// `None` only while it is reopened.
    db: Arc<RwLock<Option<Database>>>,
    /// Set by an I/O error (a full disk): redb then refuses every write ("previous I/O error")
    /// until the database is closed and opened again, which the next call does.
    broken: Arc<AtomicBool>,
    /// Set by [`JobStore::close`]: the file is released and stays so, whoever still holds a
    /// clone of the store.
    closed: Arc<AtomicBool>,
    path: Arc<PathBuf>,
}

impl std::fmt::Debug for EmbeddedJobStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedJobStore")
            .field("path", &self.path)
            .finish()
    }
}

trait Context<T> {
    fn db(self, path: &Path) -> Result<T>;
}

impl<T, E: Into<redb::Error>> Context<T> for std::result::Result<T, E> {
    fn db(self, path: &Path) -> Result<T> {
        self.map_err(|e| {
            let error: redb::Error = e.into();
            let path = path.display().to_string();
            let message = error.to_string();
            match &error {
                redb::Error::Io(io) if io.kind() == std::io::ErrorKind::StorageFull => {
                    Error::DiskFull { path, message }
                }
                // A path that can never work (a folder, no permission, a read-only file
                // system) is the machine's configuration, not an outage to wait out.
                redb::Error::Io(io) if is_permanent(io.kind()) => Error::Database { path, message },
                redb::Error::Io(_) | redb::Error::PreviousIo => {
                    Error::Unavailable { path, message }
                }
                _ => Error::Database { path, message },
            }
        })
    }
}

/// I/O failures that trying again cannot mend.
fn is_permanent(kind: std::io::ErrorKind) -> bool {
    use std::io::ErrorKind;
    matches!(
        kind,
        ErrorKind::IsADirectory
            | ErrorKind::NotADirectory
            | ErrorKind::PermissionDenied
            | ErrorKind::ReadOnlyFilesystem
            | ErrorKind::NotFound
            | ErrorKind::InvalidInput
    )
}

fn decode(id: &str, bytes: &[u8]) -> Result<JobRecord> {
    serde_json::from_slice(bytes).map_err(|e| Error::Corrupt {
        job_id: id.to_owned(),
        message: e.to_string(),
    })
}

fn encode(record: &JobRecord) -> Vec<u8> {
    // A JobRecord holds only strings, numbers and enums: serialising it cannot fail.
    serde_json::to_vec(record).unwrap_or_default()
}

impl EmbeddedJobStore {
    /// Opens (or creates) the job database at `path`, creating its folder.
    ///
    /// # Errors
    ///
    /// [`Error::Database`](crate::Error::Database) when the file cannot be created or is
    /// held by another process.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self> {
        let path = path.into();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).db(&path)?;
        }
        let db = Database::create(&path).db(&path)?;
        let txn = db.begin_write().db(&path)?;
        {
            txn.open_table(JOBS).db(&path)?;
            txn.open_table(QUEUE).db(&path)?;
            txn.open_table(RUNNING).db(&path)?;
            txn.open_table(META).db(&path)?;
        }
        txn.commit().db(&path)?;
        Ok(Self {
            db: Arc::new(RwLock::new(Some(db))),
            broken: Arc::new(AtomicBool::new(false)),
            closed: Arc::new(AtomicBool::new(false)),
            path: Arc::new(path),
        })
    }

    /// Runs a blocking database closure off the async runtime, on a database reopened first
    /// if an I/O error broke it.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Database, &Path) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let this = self.clone();
        tokio::task::spawn_blocking(move || this.with_db(f))
            .await
            .map_err(|e| Error::Task(e.to_string()))?
    }

    fn with_db<T>(&self, f: impl FnOnce(&Database, &Path) -> Result<T>) -> Result<T> {
        if self.broken.load(Ordering::Acquire) {
            self.reopen()?;
        }
        let guard = self.db.read().unwrap_or_else(PoisonError::into_inner);
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::Unavailable {
                path: self.path.display().to_string(),
                message: "the job database is closed".into(),
            });
        }
        let Some(db) = guard.as_ref() else {
            // A reopen failed half-way; the next call tries again.
            self.broken.store(true, Ordering::Release);
            return Err(Error::Unavailable {
                path: self.path.display().to_string(),
                message: "the job database is being reopened".into(),
            });
        };
        let outcome = f(db, &self.path);
        if let Err(Error::DiskFull { .. } | Error::Unavailable { .. }) = &outcome {
            self.broken.store(true, Ordering::Release);
        }
        outcome
    }

    /// Closes the database and opens it again (redb's answer to a previous I/O error). Reads
    /// work on the reopened file even while the disk is still full; writes once space returns.
    fn reopen(&self) -> Result<()> {
        let mut slot = self.db.write().unwrap_or_else(PoisonError::into_inner);
        if !self.broken.load(Ordering::Acquire) || self.closed.load(Ordering::Acquire) {
            return Ok(());
        }
        // The file is locked by the open database: it must be closed before it is opened.
        drop(slot.take());
        *slot = Some(Database::create(self.path.as_path()).db(&self.path)?);
        self.broken.store(false, Ordering::Release);
        tracing::info!(path = %self.path.display(), "job database reopened after an I/O error");
        Ok(())
    }

    /// Applies `change` to the job held by `worker`; `false` when it does not hold it.
    async fn finish_held(
        &self,
        id: &str,
        worker: &str,
        change: impl FnOnce(&mut JobRecord) + Send + 'static,
    ) -> Result<bool> {
        let (id, worker) = (id.to_owned(), worker.to_owned());
        self.blocking(move |db, path| {
            let txn = db.begin_write().db(path)?;
            let changed = {
                let mut jobs = txn.open_table(JOBS).db(path)?;
                let mut running = txn.open_table(RUNNING).db(path)?;
                let record = match jobs.get(id.as_str()).db(path)? {
                    Some(bytes) => decode(&id, bytes.value())?,
                    None => return Ok(false),
                };
                let now = now_ms();
                let live = record.lease_until_ms.is_some_and(|until| until >= now);
                if !record.held_by(&worker) || !live {
                    false
                } else {
                    let mut record = record;
                    change(&mut record);
                    record.updated_ms = now;
                    if record.status.is_final() {
                        record.worker = None;
                        record.lease_until_ms = None;
                        running.remove(id.as_str()).db(path)?;
                        let mut queue = txn.open_table(QUEUE).db(path)?;
                        let mut meta = txn.open_table(META).db(path)?;
                        queue_delivery(&record, &mut jobs, &mut queue, &mut meta, path, now)?;
                    } else if record.status == JobStatus::InQueue {
                        // Scheduled again (`retry_later`).
                        running.remove(id.as_str()).db(path)?;
                        let mut queue = txn.open_table(QUEUE).db(path)?;
                        let mut meta = txn.open_table(META).db(path)?;
                        let position = next_position(&mut meta, path)?;
                        queue.insert(position, id.as_str()).db(path)?;
                    } else if let Some(until) = record.lease_until_ms {
                        running.insert(id.as_str(), until).db(path)?;
                    }
                    jobs.insert(id.as_str(), encode(&record).as_slice())
                        .db(path)?;
                    true
                }
            };
            txn.commit().db(path)?;
            Ok(changed)
        })
        .await
    }
}

/// Moves `record` to the back of the queue (its lease ran out or its process is gone).
fn requeue(
    record: &mut JobRecord,
    queue: &mut redb::Table<'_, u64, &'static str>,
    meta: &mut redb::Table<'_, &'static str, u64>,
    path: &Path,
    now: u64,
) -> Result<()> {
    record.status = JobStatus::InQueue;
    record.worker = None;
    record.lease_until_ms = None;
    record.progress = 0;
    record.updated_ms = now;
    let position = next_position(meta, path)?;
    queue.insert(position, record.id.as_str()).db(path)?;
    Ok(())
}

/// Queues the delivery announcing `record`'s end, when it has a webhook.
fn queue_delivery(
    record: &JobRecord,
    jobs: &mut redb::Table<'_, &'static str, &'static [u8]>,
    queue: &mut redb::Table<'_, u64, &'static str>,
    meta: &mut redb::Table<'_, &'static str, u64>,
    path: &Path,
    now: u64,
) -> Result<()> {
    if let Some(delivery) = record.delivery(now) {
        jobs.insert(delivery.id.as_str(), encode(&delivery).as_slice())
            .db(path)?;
        let position = next_position(meta, path)?;
        queue.insert(position, delivery.id.as_str()).db(path)?;
    }
    Ok(())
}

fn next_position(meta: &mut redb::Table<'_, &'static str, u64>, path: &Path) -> Result<u64> {
    let position = meta.get(NEXT_POSITION).db(path)?.map_or(0, |v| v.value());
    meta.insert(NEXT_POSITION, position + 1).db(path)?;
    Ok(position)
}

#[async_trait]
impl JobStore for EmbeddedJobStore {
    async fn submit(&self, spec: JobSpec) -> Result<JobRecord> {
        self.blocking(move |db, path| {
            let record = JobRecord::new(uuid::Uuid::new_v4().to_string(), spec, now_ms());
            let txn = db.begin_write().db(path)?;
            {
                let mut jobs = txn.open_table(JOBS).db(path)?;
                let mut queue = txn.open_table(QUEUE).db(path)?;
                let mut meta = txn.open_table(META).db(path)?;
                jobs.insert(record.id.as_str(), encode(&record).as_slice())
                    .db(path)?;
                let position = next_position(&mut meta, path)?;
                queue.insert(position, record.id.as_str()).db(path)?;
            }
            txn.commit().db(path)?;
            Ok(record)
        })
        .await
    }

    async fn get(&self, id: &str) -> Result<Option<JobRecord>> {
        let id = id.to_owned();
        self.blocking(move |db, path| {
            let txn = db.begin_read().db(path)?;
            let jobs = txn.open_table(JOBS).db(path)?;
            jobs.get(id.as_str())
                .db(path)?
                .map(|bytes| decode(&id, bytes.value()))
                .transpose()
        })
        .await
    }

    async fn claim(&self, options: &ClaimOptions) -> Result<Option<JobRecord>> {
        let options = options.clone();
        self.blocking(move |db, path| {
            let now = now_ms();
            let txn = db.begin_write().db(path)?;
            let claimed = {
                let mut jobs = txn.open_table(JOBS).db(path)?;
                let mut queue = txn.open_table(QUEUE).db(path)?;
                let mut running = txn.open_table(RUNNING).db(path)?;
                let mut meta = txn.open_table(META).db(path)?;

                // Leases that ran out: their workers stalled or died.
                let expired: Vec<String> = running
                    .iter()
                    .db(path)?
                    .filter_map(|entry| entry.ok())
                    .filter(|(_, until)| until.value() < now)
                    .map(|(id, _)| id.value().to_owned())
                    .collect();
                for id in expired {
                    running.remove(id.as_str()).db(path)?;
                    let Some(bytes) = jobs.get(id.as_str()).db(path)?.map(|b| b.value().to_vec()) else { continue };
                    let mut record = decode(&id, &bytes)?;
                    tracing::warn!(job_id = %id, worker = ?record.worker, "lease expired; job queued again");
                    requeue(&mut record, &mut queue, &mut meta, path, now)?;
                    jobs.insert(id.as_str(), encode(&record).as_slice()).db(path)?;
                }

                // Oldest first among this kind's due jobs; entries of jobs no longer queued
                // (cancelled) are dropped on the way.
                let mut stale = Vec::new();
                let mut candidates = Vec::new();
                for entry in queue.iter().db(path)? {
                    let (position, id) = entry.db(path)?;
                    let (position, id) = (position.value(), id.value().to_owned());
                    let Some(bytes) = jobs.get(id.as_str()).db(path)?.map(|b| b.value().to_vec()) else {
                        stale.push(position);
                        continue;
                    };
                    let record = decode(&id, &bytes)?;
                    if record.status != JobStatus::InQueue {
                        stale.push(position);
                    } else if record.spec.kind == options.kind && record.run_after_ms <= now {
                        candidates.push((position, record));
                    }
                }
                for position in stale {
                    queue.remove(position).db(path)?;
                }
                let mut claimed = None;
                for (position, mut record) in candidates {
                    queue.remove(position).db(path)?;
                    let id = record.id.clone();
                    record.updated_ms = now;
                    if record.attempts >= options.max_attempts {
                        record.status = JobStatus::Failed;
                        record.error = Some(JobError {
                            code: "retries_exhausted".to_owned(),
                            message: format!(
                                "the job was interrupted {} times (worker crash or restart) and is not retried again",
                                record.attempts
                            ),
                        });
                        jobs.insert(id.as_str(), encode(&record).as_slice()).db(path)?;
                        queue_delivery(&record, &mut jobs, &mut queue, &mut meta, path, now)?;
                        continue;
                    }
                    let until = now + u64::try_from(options.lease.as_millis()).unwrap_or(u64::MAX / 2);
                    record.status = JobStatus::InProgress;
                    record.attempts += 1;
                    record.worker = Some(options.worker.clone());
                    record.lease_until_ms = Some(until);
                    running.insert(id.as_str(), until).db(path)?;
                    jobs.insert(id.as_str(), encode(&record).as_slice()).db(path)?;
                    claimed = Some(record);
                    break;
                }
                claimed
            };
            txn.commit().db(path)?;
            Ok(claimed)
        })
        .await
    }

    async fn heartbeat(
        &self,
        id: &str,
        worker: &str,
        progress: u8,
        lease: Duration,
    ) -> Result<bool> {
        let until = now_ms() + u64::try_from(lease.as_millis()).unwrap_or(u64::MAX / 2);
        self.finish_held(id, worker, move |r| {
            r.progress = progress.min(100);
            r.lease_until_ms = Some(until);
        })
        .await
    }

    async fn set_duration(&self, id: &str, worker: &str, duration_s: f64) -> Result<bool> {
        self.finish_held(id, worker, move |r| r.duration_s = Some(duration_s))
            .await
    }

    async fn complete(&self, id: &str, worker: &str, words: Vec<Word>) -> Result<bool> {
        self.finish_held(id, worker, move |r| {
            r.status = JobStatus::Completed;
            r.progress = 100;
            r.words = Some(words);
            r.error = None;
        })
        .await
    }

    async fn fail(&self, id: &str, worker: &str, error: JobError) -> Result<bool> {
        self.finish_held(id, worker, move |r| {
            r.status = JobStatus::Failed;
            r.error = Some(error);
        })
        .await
    }

    async fn retry_later(
        &self,
        id: &str,
        worker: &str,
        run_after_ms: u64,
        error: JobError,
    ) -> Result<bool> {
        self.finish_held(id, worker, move |r| {
            r.status = JobStatus::InQueue;
            r.worker = None;
            r.lease_until_ms = None;
            r.attempts = 0;
            r.retries += 1;
            r.run_after_ms = run_after_ms;
            r.error = Some(error);
        })
        .await
    }

    async fn cancel(&self, id: &str) -> Result<Option<JobRecord>> {
        let id = id.to_owned();
        self.blocking(move |db, path| {
            let now = now_ms();
            let txn = db.begin_write().db(path)?;
            let record = {
                let mut jobs = txn.open_table(JOBS).db(path)?;
                let mut queue = txn.open_table(QUEUE).db(path)?;
                let mut running = txn.open_table(RUNNING).db(path)?;
                let mut meta = txn.open_table(META).db(path)?;
                let Some(bytes) = jobs.get(id.as_str()).db(path)?.map(|b| b.value().to_vec())
                else {
                    return Ok(None);
                };
                let mut record = decode(&id, &bytes)?;
                if !record.status.is_final() {
                    // A queue entry left behind is dropped by the next claim.
                    running.remove(id.as_str()).db(path)?;
                    record.status = JobStatus::Failed;
                    record.error = Some(cancelled_error());
                    record.worker = None;
                    record.lease_until_ms = None;
                    record.updated_ms = now;
                    jobs.insert(id.as_str(), encode(&record).as_slice())
                        .db(path)?;
                    queue_delivery(&record, &mut jobs, &mut queue, &mut meta, path, now)?;
                }
                record
            };
            txn.commit().db(path)?;
            Ok(Some(record))
        })
        .await
    }

    async fn release_all(&self, worker_prefix: &str) -> Result<usize> {
        let prefix = worker_prefix.to_owned();
        self.blocking(move |db, path| {
            let now = now_ms();
            let txn = db.begin_write().db(path)?;
            let count = {
                let mut jobs = txn.open_table(JOBS).db(path)?;
                let mut queue = txn.open_table(QUEUE).db(path)?;
                let mut running = txn.open_table(RUNNING).db(path)?;
                let mut meta = txn.open_table(META).db(path)?;
                let ids: Vec<String> = running
                    .iter()
                    .db(path)?
                    .filter_map(|e| e.ok())
                    .map(|(id, _)| id.value().to_owned())
                    .collect();
                let mut count = 0;
                for id in ids {
                    let Some(bytes) = jobs.get(id.as_str()).db(path)?.map(|b| b.value().to_vec())
                    else {
                        continue;
                    };
                    let mut record = decode(&id, &bytes)?;
                    if !record
                        .worker
                        .as_deref()
                        .unwrap_or_default()
                        .starts_with(&prefix)
                    {
                        continue;
                    }
                    running.remove(id.as_str()).db(path)?;
                    requeue(&mut record, &mut queue, &mut meta, path, now)?;
                    jobs.insert(id.as_str(), encode(&record).as_slice())
                        .db(path)?;
                    count += 1;
                }
                count
            };
            txn.commit().db(path)?;
            Ok(count)
        })
        .await
    }

    async fn close(&self) {
        let this = self.clone();
        // Waits for the calls in flight (they hold the read lock), then drops the database,
        // which unlocks the file.
        let closed = tokio::task::spawn_blocking(move || {
            let mut slot = this.db.write().unwrap_or_else(PoisonError::into_inner);
            this.closed.store(true, Ordering::Release);
            slot.take().is_some()
        })
        .await;
        if matches!(closed, Ok(true)) {
            tracing::info!(path = %self.path.display(), "job database closed");
        }
    }
}
