//! Limits per API key: jobs not yet ended (queued or running) and synchronous generates at
//! once. Over either, a request gets 429 `busy` with `Retry-After`, while other keys go on.
//! The counts are this process's: several processes sharing a job database each keep their own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::http::StatusCode;
use caption_engine::Engine;

use crate::ApiError;

/// Which key made a request: the SHA-256 digest of the accepted `x-api-key` (the key itself is
/// not kept), put in the request's extensions by the key check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct KeyId(pub(crate) [u8; 32]);

/// What a job of the limits is, to ask the engine for its status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobKind {
    /// `POST /transcript`.
    Transcript,
    /// `POST /generate` with `"async": true`.
    Generate,
}

/// The limits per API key; 0 means no limit.
#[derive(Debug, Clone)]
pub struct KeyLimits {
    max_jobs: usize,
    max_generates: usize,
    keys: Arc<Mutex<HashMap<KeyId, PerKey>>>,
}

#[derive(Debug, Default)]
struct PerKey {
    /// Jobs this key submitted that had not ended when last looked at.
    jobs: Vec<(String, JobKind)>,
    /// Submissions admitted and not yet recorded (or given up).
    reserved: usize,
    /// Synchronous generates running.
    generates: usize,
}

impl Default for KeyLimits {
    /// 20 jobs not yet ended and 2 synchronous generates at once per key.
    fn default() -> Self {
        Self::new(20, 2)
    }
}

impl KeyLimits {
    /// At most `max_jobs` queued or running jobs (transcripts and `"async": true` generates)
    /// and `max_generates` synchronous generates at once per key; 0 lifts a limit.
    pub fn new(max_jobs: usize, max_generates: usize) -> Self {
        Self {
            max_jobs,
            max_generates,
            keys: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<KeyId, PerKey>> {
        // A panic while holding the lock leaves plain counters, still usable.
        self.keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A synchronous generate slot of `key`, held until the returned guard drops.
    pub(crate) fn start_generate(&self, key: KeyId) -> Result<GenerateSlot, ApiError> {
        let mut keys = self.lock();
        let entry = keys.entry(key).or_default();
        if self.max_generates > 0 && entry.generates >= self.max_generates {
            return Err(over_limit(format!(
                "this API key already runs {} generates at once, its limit (max_generates_per_key); retry when one ends",
                entry.generates
            )));
        }
        entry.generates += 1;
        Ok(GenerateSlot {
            limits: self.clone(),
            key,
        })
    }

    /// Room for one more job of `key`: jobs seen ended are forgotten first. The returned
    /// reservation is turned into the job by [`JobReservation::submitted`].
    pub(crate) async fn admit_job(
        &self,
        key: KeyId,
        engine: &Engine,
    ) -> Result<JobReservation, ApiError> {
        let known: Vec<(String, JobKind)> = {
            let mut keys = self.lock();
            let entry = keys.entry(key).or_default();
            if self.max_jobs == 0 || entry.jobs.len() + entry.reserved < self.max_jobs {
                entry.reserved += 1;
                return Ok(self.reservation(key));
            }
            entry.jobs.clone()
        };
        let mut ended = Vec::new();
        for (id, kind) in &known {
            if job_ended(engine, id, *kind).await {
                ended.push(id.clone());
            }
        }
        let mut keys = self.lock();
        let entry = keys.entry(key).or_default();
        entry.jobs.retain(|(id, _)| !ended.contains(id));
        if entry.jobs.len() + entry.reserved >= self.max_jobs {
            return Err(over_limit(format!(
                "this API key has {} jobs queued or running, its limit (max_queued_jobs_per_key); retry when one ends",
                entry.jobs.len() + entry.reserved
            )));
        }
        entry.reserved += 1;
        Ok(self.reservation(key))
    }

    /// The guard of a room already counted in `reserved`.
    fn reservation(&self, key: KeyId) -> JobReservation {
        JobReservation {
            limits: self.clone(),
            key,
            open: true,
        }
    }
}

/// Whether job `id` can no longer change; a job the store no longer knows counts as ended, one
/// whose store cannot be read now does not.
async fn job_ended(engine: &Engine, id: &str, kind: JobKind) -> bool {
    let status = match kind {
        JobKind::Generate => engine.generate_status(id).await.map(|s| s.status),
        JobKind::Transcript => engine
            .transcription_status(id)
            .await
            .map(|s| s.result.status),
    };
    match status {
        Ok(status) => status.is_final(),
        Err(caption_engine::Error::NotFound { .. }) => true,
        Err(_) => false,
    }
}

fn over_limit(message: String) -> ApiError {
    ApiError::new(StatusCode::TOO_MANY_REQUESTS, "busy", message)
}

/// One synchronous generate of a key; the slot is given back on drop.
#[derive(Debug)]
pub(crate) struct GenerateSlot {
    limits: KeyLimits,
    key: KeyId,
}

impl Drop for GenerateSlot {
    fn drop(&mut self) {
        if let Some(entry) = self.limits.lock().get_mut(&self.key) {
            entry.generates = entry.generates.saturating_sub(1);
        }
    }
}

/// Room for one job of a key, admitted and not yet submitted; dropped unsubmitted (the
/// submission failed), the room is given back.
#[derive(Debug)]
pub(crate) struct JobReservation {
    limits: KeyLimits,
    key: KeyId,
    open: bool,
}

impl JobReservation {
    /// The job took the room.
    pub(crate) fn submitted(mut self, job_id: String, kind: JobKind) {
        self.open = false;
        let mut keys = self.limits.lock();
        let entry = keys.entry(self.key).or_default();
        entry.reserved = entry.reserved.saturating_sub(1);
        // Without a limit nothing is counted, so nothing is kept.
        if self.limits.max_jobs > 0 {
            entry.jobs.push((job_id, kind));
        }
    }
}

impl Drop for JobReservation {
    fn drop(&mut self) {
        if self.open
            && let Some(entry) = self.limits.lock().get_mut(&self.key)
        {
            entry.reserved = entry.reserved.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn generate_slots_are_per_key_and_given_back() {
        let limits = KeyLimits::new(1, 1);
        let (first, second) = (KeyId([1; 32]), KeyId([2; 32]));
        let held = limits.start_generate(first).unwrap();
        let refused = limits.start_generate(first).unwrap_err();
        assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(refused.code, "busy");
        let other = limits.start_generate(second).unwrap();
        drop(held);
        let again = limits.start_generate(first).unwrap();
        drop((other, again));

        let unlimited = KeyLimits::new(0, 0);
        let slots: Vec<GenerateSlot> = (0..100)
            .map(|_| unlimited.start_generate(first).unwrap())
            .collect();
        assert_eq!(slots.len(), 100);
    }
}
