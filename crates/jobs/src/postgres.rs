use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use caption_core::{JobError, JobStatus, Word};
use tokio::sync::RwLock;
use tokio_postgres::{Client, Row};

use crate::{ClaimOptions, Error, JobKind, JobRecord, JobSpec, JobStore, Result, cancelled_error};

/// Milliseconds since the Unix epoch on the database's clock: every process compares leases
/// against the same clock, whatever the skew between machines.
const NOW_MS: &str = "(extract(epoch from clock_timestamp()) * 1000)::bigint";

/// Schema versions, applied in order under an advisory lock so processes starting together do
/// not race.
const MIGRATIONS: &[&str] = &[
    r"
    CREATE TABLE caption_jobs (
        id             text PRIMARY KEY,
        position       bigserial NOT NULL,
        input          text NOT NULL,
        lang           text NOT NULL,
        status         text NOT NULL,
        progress       smallint NOT NULL DEFAULT 0,
        attempts       integer NOT NULL DEFAULT 0,
        words          jsonb,
        error_code     text,
        error_message  text,
        created_ms     bigint NOT NULL,
        updated_ms     bigint NOT NULL,
        worker         text,
        lease_until_ms bigint
    );
    CREATE INDEX caption_jobs_queue ON caption_jobs (position) WHERE status = 'IN_QUEUE';
    CREATE INDEX caption_jobs_running ON caption_jobs (lease_until_ms) WHERE status = 'IN_PROGRESS';
",
    r"
    ALTER TABLE caption_jobs
        ADD COLUMN kind text NOT NULL DEFAULT 'transcribe',
        ADD COLUMN payload jsonb,
        ADD COLUMN webhook_url text,
        ADD COLUMN run_after_ms bigint NOT NULL DEFAULT 0,
        ADD COLUMN retries integer NOT NULL DEFAULT 0,
        ADD COLUMN duration_s double precision;
    CREATE INDEX caption_jobs_kind_queue ON caption_jobs (kind, position) WHERE status = 'IN_QUEUE';
",
];

/// Appended to a statement whose `done` CTE returns finished jobs' `id, kind, webhook_url`: queues
/// the delivery announcing each one's end in the same statement (so in the same transaction).
fn with_deliveries(done_cte: &str) -> String {
    format!(
        "WITH done AS ({done_cte}),
         hooks AS (
             INSERT INTO caption_jobs (id, input, lang, kind, webhook_url, status, created_ms, updated_ms)
             SELECT gen_random_uuid()::text, id, '', 'webhook', webhook_url, 'IN_QUEUE', {NOW_MS}, {NOW_MS}
             FROM done WHERE webhook_url IS NOT NULL AND kind <> 'webhook'
         )
         SELECT count(*) FROM done"
    )
}

/// An arbitrary constant naming the migration lock.
const MIGRATION_LOCK: i64 = 0x6361_7074_696f_6e73; // "captions"

const COLUMNS: &str = "id, input, lang, status, progress, attempts, words::text, error_code, error_message, \
                       created_ms, updated_ms, worker, lease_until_ms, kind, payload::text, webhook_url, \
                       run_after_ms, retries, duration_s";

/// Jobs in PostgreSQL, shared by every `captions serve` process: any process accepts jobs and
/// any works them. Claims use `FOR UPDATE SKIP LOCKED`, so concurrent workers never wait on or
/// share a job; leases and the retry limit are as in the [`JobStore`] contract, timed by the
/// database's clock.
///
/// ```
/// use caption_jobs::{JobSpec, JobStore, PostgresJobStore};
///
/// # tokio::runtime::Runtime::new()?.block_on(async {
/// // A throwaway PostgreSQL server on loopback (Debian's packages, as `make setup` installs).
/// let server = caption_testkit::PostgresServer::start()?;
/// let jobs = PostgresJobStore::connect(&server.database("jobs")?).await?;
/// let job = jobs.submit(JobSpec::transcribe("uploads/1/talk.mp4", "auto")).await?;
/// let stored = jobs.get(&job.id).await?.expect("stored");
/// assert_eq!(stored.spec.input, "uploads/1/talk.mp4");
/// assert!(jobs.get("no-such-job").await?.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # })?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PostgresJobStore {
    url: String,
    client: RwLock<Arc<Client>>,
}

impl std::fmt::Debug for PostgresJobStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresJobStore")
            .field("url", &redact(&self.url))
            .finish_non_exhaustive()
    }
}

/// The URL without its password, for logs and errors.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or_default();
            format!("{}{user}:***{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_owned(),
    }
}

fn db_error(url: &str) -> impl Fn(tokio_postgres::Error) -> Error + '_ {
    // The server's own message ("duplicate key ...") says far more than the client's "db error".
    move |e| Error::Database {
        path: redact(url),
        message: e.as_db_error().map_or_else(
            || crate::tls::with_causes(&e),
            |db| format!("{}: {}", db.severity(), db.message()),
        ),
    }
}

fn status_of(s: &str, id: &str) -> Result<JobStatus> {
    serde_json::from_value(serde_json::Value::String(s.to_owned())).map_err(|_| Error::Corrupt {
        job_id: id.to_owned(),
        message: format!("unknown status {s:?}"),
    })
}

fn record(row: &Row) -> Result<JobRecord> {
    let id: String = row.get(0);
    let status: String = row.get(3);
    let words: Option<String> = row.get(6);
    let words: Option<Vec<Word>> = words
        .map(|w| serde_json::from_str(&w))
        .transpose()
        .map_err(|e| Error::Corrupt {
            job_id: id.clone(),
            message: e.to_string(),
        })?;
    let code: Option<String> = row.get(7);
    let message: Option<String> = row.get(8);
    let ms = |i: usize| -> u64 { u64::try_from(row.get::<_, i64>(i)).unwrap_or(0) };
    let kind: String = row.get(13);
    let payload: Option<String> = row.get(14);
    let payload: Option<serde_json::Value> = payload
        .map(|p| serde_json::from_str(&p))
        .transpose()
        .map_err(|e| Error::Corrupt {
            job_id: id.clone(),
            message: e.to_string(),
        })?;
    Ok(JobRecord {
        status: status_of(&status, &id)?,
        spec: JobSpec {
            input: row.get(1),
            lang: row.get(2),
            kind: JobKind::parse(&kind).ok_or_else(|| Error::Corrupt {
                job_id: id.clone(),
                message: format!("unknown kind {kind:?}"),
            })?,
            payload,
            webhook_url: row.get(15),
        },
        progress: u8::try_from(row.get::<_, i16>(4)).unwrap_or(0),
        attempts: u32::try_from(row.get::<_, i32>(5)).unwrap_or(0),
        words,
        error: code.map(|code| JobError {
            code,
            message: message.unwrap_or_default(),
        }),
        created_ms: ms(9),
        updated_ms: ms(10),
        worker: row.get(11),
        lease_until_ms: row
            .get::<_, Option<i64>>(12)
            .and_then(|v| u64::try_from(v).ok()),
        run_after_ms: ms(16),
        retries: u32::try_from(row.get::<_, i32>(17)).unwrap_or(0),
        duration_s: row.get(18),
        id,
    })
}

fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX / 4)
}

/// Tries of one statement while the connection fails: with [`first_wait`] doubling, the last
/// try comes about 3 s after the first, which rides out a server's restart (a fast shutdown and
/// start take a second or two) without holding a request for long.
const TRIES: u32 = 6;

fn first_wait() -> Duration {
    Duration::from_millis(100)
}

/// Whether `error` is the connection's (the server went away, restarts, or cannot be
/// reached), as opposed to the statement's: only those are worth a new connection and a try.
fn is_connection_error(error: &tokio_postgres::Error) -> bool {
    if error.is_closed() {
        return true;
    }
    if let Some(code) = error.code() {
        // Class 08: connection exceptions; 57P0x: the server is shutting down or starting.
        let code = code.code();
        return code.starts_with("08") || code.starts_with("57P");
    }
    std::error::Error::source(error).is_some_and(|source| source.is::<std::io::Error>())
}

fn unavailable(url: &str, error: &tokio_postgres::Error) -> Error {
    Error::Unavailable {
        path: redact(url),
        message: error.to_string(),
    }
}

impl PostgresJobStore {
    /// Connects to `url` (`postgres://user:password@host:port/db`) and brings the schema up to
    /// date. TLS follows libpq's `sslmode` parameter: `disable`, `prefer` (the default: TLS when
    /// the server offers it), `require` (TLS, certificate unchecked), `verify-ca` (chain checked)
    /// or `verify-full` (chain and host name checked), against the system's root certificates
    /// and those of the PEM file `sslrootcert` names.
    pub async fn connect(url: &str) -> Result<Self> {
        let client = Self::open_client(url).await?;
        let store = Self {
            url: url.to_owned(),
            client: RwLock::new(Arc::new(client)),
        };
        store.migrate().await?;
        Ok(store)
    }

    async fn open_client(url: &str) -> Result<Client> {
        let shown = redact(url);
        let options = crate::tls::parse(url, &shown)?;
        let tls = crate::tls::connector(&options, &shown)?;
        let (client, connection) = options.config.connect(tls).await.map_err(db_error(url))?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!(database = %shown, error = %e, "job database connection closed");
            }
        });
        Ok(client)
    }

    /// The live client, reconnecting if the connection was lost.
    async fn client(&self) -> Result<Arc<Client>> {
        let current = Arc::clone(&*self.client.read().await);
        if !current.is_closed() {
            return Ok(current);
        }
        self.replace(&current).await
    }

    /// A new connection in place of `broken` (unless another call already replaced it).
    async fn replace(&self, broken: &Arc<Client>) -> Result<Arc<Client>> {
        let mut slot = self.client.write().await;
        if Arc::ptr_eq(&slot, broken) {
            let fresh = Self::open_client(&self.url).await.map_err(|e| match e {
                Error::Database { path, message } => Error::Unavailable { path, message },
                other => other,
            })?;
            *slot = Arc::new(fresh);
        }
        Ok(Arc::clone(&slot))
    }

    /// Runs `statement` (given the client and the try's number, from 0), on a new connection
    /// and after a pause when the connection fails, up to [`TRIES`] times. A statement whose
    /// connection broke after the server ran it is run again: each caller makes that harmless
    /// (the claim takes back a job it already holds, the others change only what is in the
    /// state they expect, a submit inserts its id once).
    async fn retrying<T, F, Fut>(&self, mut statement: F) -> Result<T>
    where
        F: FnMut(Arc<Client>, u32) -> Fut,
        Fut: Future<Output = std::result::Result<T, tokio_postgres::Error>>,
    {
        let mut wait = first_wait();
        let mut attempt = 0;
        loop {
            let last = attempt + 1 >= TRIES;
            let outcome = match self.client().await {
                Ok(client) => match statement(Arc::clone(&client), attempt).await {
                    Ok(value) => return Ok(value),
                    Err(e) if is_connection_error(&e) => {
                        if let Err(reconnect) = self.replace(&client).await {
                            tracing::debug!(error = %reconnect, "reconnecting to the job database failed");
                        }
                        unavailable(&self.url, &e)
                    }
                    Err(e) => return Err(db_error(&self.url)(e)),
                },
                Err(e) => e,
            };
            if last || !matches!(outcome, Error::Unavailable { .. }) {
                return Err(outcome);
            }
            // Debug: a restart makes one line per statement in flight; the caller logs the
            // error if the last try fails too.
            tracing::debug!(error = %outcome, retry_in_ms = wait.as_millis(), "job database unreachable; trying again");
            tokio::time::sleep(wait).await;
            wait *= 2;
            attempt += 1;
        }
    }

    async fn migrate(&self) -> Result<()> {
        let client = self.client().await?;
        let err = db_error(&self.url);
        // Even `CREATE TABLE IF NOT EXISTS` races with itself, so it runs under the lock too.
        client
            .batch_execute(&format!(
                "BEGIN;
                 SELECT pg_advisory_xact_lock({MIGRATION_LOCK});
                 CREATE TABLE IF NOT EXISTS caption_schema (version integer PRIMARY KEY);
                 COMMIT;"
            ))
            .await
            .map_err(&err)?;
        for (n, sql) in MIGRATIONS.iter().enumerate() {
            let version = i32::try_from(n + 1).unwrap_or(i32::MAX);
            // One batch: the lock and the version check happen inside the same transaction,
            // so exactly one process applies each version.
            let batch = format!(
                "BEGIN;
                 SELECT pg_advisory_xact_lock({MIGRATION_LOCK});
                 DO $migrate$ BEGIN
                   IF NOT EXISTS (SELECT 1 FROM caption_schema WHERE version = {version}) THEN
                     EXECUTE {body};
                     INSERT INTO caption_schema (version) VALUES ({version});
                   END IF;
                 END $migrate$;
                 COMMIT;",
                body = quote_literal(sql),
            );
            client.batch_execute(&batch).await.map_err(&err)?;
        }
        Ok(())
    }

    /// Runs `sql` (an UPDATE … RETURNING or SELECT of [`COLUMNS`]) and reads the first row.
    async fn one(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Option<JobRecord>> {
        let rows = self
            .retrying(|client, _| async move { client.query(sql, params).await })
            .await?;
        rows.first().map(record).transpose()
    }

    async fn execute(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<u64> {
        self.retrying(|client, _| async move { client.execute(sql, params).await })
            .await
    }
}

impl PostgresJobStore {
    /// Runs a [`with_deliveries`] statement: whether exactly one job finished.
    async fn count(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<bool> {
        let row = self
            .retrying(|client, _| async move { client.query_one(sql, params).await })
            .await?;
        Ok(row.get::<_, i64>(0) == 1)
    }
}

/// SQL string literal for `s` (for the migration body inside a `DO` block).
fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[async_trait]
impl JobStore for PostgresJobStore {
    async fn submit(&self, spec: JobSpec) -> Result<JobRecord> {
        let id = uuid::Uuid::new_v4().to_string();
        let sql = format!(
            "INSERT INTO caption_jobs (id, input, lang, kind, payload, webhook_url, status, created_ms, updated_ms)
             VALUES ($1, $2, $3, $4, $5::text::jsonb, $6, 'IN_QUEUE', {NOW_MS}, {NOW_MS})
             ON CONFLICT (id) DO NOTHING RETURNING {COLUMNS}"
        );
        let payload = spec.payload.as_ref().map(serde_json::Value::to_string);
        // The id is made here, so an insert run twice (its answer lost to a broken
        // connection, then tried again) stores one job, read back on the second try.
        let inserted = self
            .one(
                &sql,
                &[
                    &id,
                    &spec.input,
                    &spec.lang,
                    &spec.kind.as_str(),
                    &payload,
                    &spec.webhook_url,
                ],
            )
            .await?;
        let stored = match inserted {
            Some(job) => Some(job),
            None => self.get(&id).await?,
        };
        stored.ok_or_else(|| Error::Database {
            path: redact(&self.url),
            message: "insert returned no row".into(),
        })
    }

    async fn get(&self, id: &str) -> Result<Option<JobRecord>> {
        self.one(
            &format!("SELECT {COLUMNS} FROM caption_jobs WHERE id = $1"),
            &[&id],
        )
        .await
    }

    async fn claim(&self, options: &ClaimOptions) -> Result<Option<JobRecord>> {
        // Leases that ran out: their workers stalled or died. Back to the queue.
        let requeued = self
            .execute(
                &format!(
                    "UPDATE caption_jobs SET status = 'IN_QUEUE', worker = NULL, lease_until_ms = NULL,
                            progress = 0, updated_ms = {NOW_MS}
                     WHERE status = 'IN_PROGRESS' AND lease_until_ms < {NOW_MS}"
                ),
                &[],
            )
            .await?;
        if requeued > 0 {
            tracing::warn!(requeued, "leases expired; jobs queued again");
        }
        let max_attempts = i32::try_from(options.max_attempts).unwrap_or(i32::MAX);
        let exhausted = with_deliveries(&format!(
            "UPDATE caption_jobs SET status = 'FAILED', error_code = 'retries_exhausted',
                    error_message = 'the job was interrupted ' || attempts || ' times (worker crash or restart) and is not retried again',
                    updated_ms = {NOW_MS}
             WHERE status = 'IN_QUEUE' AND kind = $2 AND attempts >= $1
             RETURNING id, kind, webhook_url"
        ));
        let kind = options.kind.as_str();
        self.execute(&exhausted, &[&max_attempts, &kind]).await?;
        let claim = format!(
            "UPDATE caption_jobs SET status = 'IN_PROGRESS', attempts = attempts + 1, worker = $1,
                    lease_until_ms = {NOW_MS} + $2, updated_ms = {NOW_MS}
             WHERE id = (SELECT id FROM caption_jobs
                         WHERE status = 'IN_QUEUE' AND kind = $4 AND attempts < $3 AND run_after_ms <= {NOW_MS}
                         ORDER BY position FOR UPDATE SKIP LOCKED LIMIT 1)
             RETURNING {COLUMNS}"
        );
        // A worker claims only when it holds nothing, so a job its name holds was claimed by a
        // try whose answer the connection lost: the retry takes that job back rather than
        // leaving it to wait out its lease.
        let take_back = format!(
            "UPDATE caption_jobs SET lease_until_ms = {NOW_MS} + $2, updated_ms = {NOW_MS}
             WHERE status = 'IN_PROGRESS' AND worker = $1 AND kind = $3
             RETURNING {COLUMNS}"
        );
        let lease = lease_ms(options.lease);
        let rows = self
            .retrying(|client, attempt| {
                let (claim, take_back) = (&claim, &take_back);
                let (worker, lease, max_attempts, kind) =
                    (&options.worker, &lease, &max_attempts, &kind);
                async move {
                    if attempt > 0 {
                        let held = client.query(take_back, &[worker, lease, kind]).await?;
                        if !held.is_empty() {
                            return Ok(held);
                        }
                    }
                    client
                        .query(claim, &[worker, lease, max_attempts, kind])
                        .await
                }
            })
            .await?;
        rows.first().map(record).transpose()
    }

    async fn heartbeat(
        &self,
        id: &str,
        worker: &str,
        progress: u8,
        lease: Duration,
    ) -> Result<bool> {
        let sql = format!(
            "UPDATE caption_jobs SET progress = $3, lease_until_ms = {NOW_MS} + $4, updated_ms = {NOW_MS}
             WHERE id = $1 AND worker = $2 AND status = 'IN_PROGRESS' AND lease_until_ms >= {NOW_MS}"
        );
        let progress = i16::from(progress.min(100));
        Ok(self
            .execute(&sql, &[&id, &worker, &progress, &lease_ms(lease)])
            .await?
            == 1)
    }

    async fn set_duration(&self, id: &str, worker: &str, duration_s: f64) -> Result<bool> {
        let sql = format!(
            "UPDATE caption_jobs SET duration_s = $3, updated_ms = {NOW_MS}
             WHERE id = $1 AND worker = $2 AND status = 'IN_PROGRESS' AND lease_until_ms >= {NOW_MS}"
        );
        Ok(self.execute(&sql, &[&id, &worker, &duration_s]).await? == 1)
    }

    async fn complete(&self, id: &str, worker: &str, words: Vec<Word>) -> Result<bool> {
        let words = serde_json::to_string(&words).map_err(|e| Error::Corrupt {
            job_id: id.to_owned(),
            message: e.to_string(),
        })?;
        let sql = with_deliveries(&format!(
            "UPDATE caption_jobs SET status = 'COMPLETED', progress = 100, words = $3::text::jsonb,
                    error_code = NULL, error_message = NULL, worker = NULL, lease_until_ms = NULL, updated_ms = {NOW_MS}
             WHERE id = $1 AND worker = $2 AND status = 'IN_PROGRESS' AND lease_until_ms >= {NOW_MS}
             RETURNING id, kind, webhook_url"
        ));
        self.count(&sql, &[&id, &worker, &words]).await
    }

    async fn fail(&self, id: &str, worker: &str, error: JobError) -> Result<bool> {
        let sql = with_deliveries(&format!(
            "UPDATE caption_jobs SET status = 'FAILED', error_code = $3, error_message = $4,
                    worker = NULL, lease_until_ms = NULL, updated_ms = {NOW_MS}
             WHERE id = $1 AND worker = $2 AND status = 'IN_PROGRESS' AND lease_until_ms >= {NOW_MS}
             RETURNING id, kind, webhook_url"
        ));
        self.count(&sql, &[&id, &worker, &error.code, &error.message])
            .await
    }

    async fn retry_later(
        &self,
        id: &str,
        worker: &str,
        run_after_ms: u64,
        error: JobError,
    ) -> Result<bool> {
        let sql = format!(
            "UPDATE caption_jobs SET status = 'IN_QUEUE', worker = NULL, lease_until_ms = NULL,
                    attempts = 0, retries = retries + 1, run_after_ms = $3,
                    error_code = $4, error_message = $5, updated_ms = {NOW_MS}
             WHERE id = $1 AND worker = $2 AND status = 'IN_PROGRESS' AND lease_until_ms >= {NOW_MS}"
        );
        let run_after = i64::try_from(run_after_ms).unwrap_or(i64::MAX);
        Ok(self
            .execute(
                &sql,
                &[&id, &worker, &run_after, &error.code, &error.message],
            )
            .await?
            == 1)
    }

    async fn cancel(&self, id: &str) -> Result<Option<JobRecord>> {
        let error = cancelled_error();
        let sql = with_deliveries(&format!(
            "UPDATE caption_jobs SET status = 'FAILED', error_code = $2, error_message = $3,
                    worker = NULL, lease_until_ms = NULL, updated_ms = {NOW_MS}
             WHERE id = $1 AND status IN ('IN_QUEUE', 'IN_PROGRESS')
             RETURNING id, kind, webhook_url"
        ));
        self.count(&sql, &[&id, &error.code, &error.message])
            .await?;
        self.get(id).await
    }

    async fn release_all(&self, worker_prefix: &str) -> Result<usize> {
        let sql = format!(
            "UPDATE caption_jobs SET status = 'IN_QUEUE', worker = NULL, lease_until_ms = NULL,
                    progress = 0, updated_ms = {NOW_MS}
             WHERE status = 'IN_PROGRESS' AND starts_with(worker, $1)"
        );
        Ok(usize::try_from(self.execute(&sql, &[&worker_prefix]).await?).unwrap_or(usize::MAX))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_are_redacted() {
        assert_eq!(
            super::redact("postgres://u:secret@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(super::redact("postgres://h/db"), "postgres://h/db");
    }
}
