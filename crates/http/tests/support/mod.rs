//! The router over a real engine in a throwaway folder (local storage, the embedded job store),
//! for the in-process tests.

#![allow(
    dead_code,
    clippy::unwrap_used,
    reason = "test code: each test binary uses a part; a panic is the failure report"
)]

use std::path::Path;
use std::sync::Arc;

use axum::Router;
use caption_engine::{Engine, EngineOptions};
use caption_http::{ApiKeys, AppState, KeyLimits, router};
use caption_jobs::EmbeddedJobStore;
use caption_store::{StorageOptions, open_storage};

/// The whole service over an engine made with `options` (its data folder set to `dir`), local
/// storage and the embedded job store in `dir`, open to `keys`; JSON bodies up to
/// `max_body_bytes` when given. Returns the router and the job store, for tests that work jobs
/// as a worker would.
pub fn router_in(
    dir: &Path,
    keys: &[&str],
    options: EngineOptions,
    max_body_bytes: Option<usize>,
) -> (Router, Arc<EmbeddedJobStore>) {
    router_limited(dir, keys, options, max_body_bytes, KeyLimits::default())
}

/// As [`router_in`], with `limits` per API key.
pub fn router_limited(
    dir: &Path,
    keys: &[&str],
    options: EngineOptions,
    max_body_bytes: Option<usize>,
    limits: KeyLimits,
) -> (Router, Arc<EmbeddedJobStore>) {
    let opened = open_storage(&StorageOptions::local(
        dir.join("storage"),
        "http://captions.test",
    ))
    .unwrap();
    let jobs = Arc::new(EmbeddedJobStore::open(dir.join("jobs.redb")).unwrap());
    let engine = Engine::new(
        options.data_dir(dir.to_owned()),
        opened.storage,
        jobs.clone(),
    )
    .unwrap();
    let mut state = AppState::new(engine, ApiKeys::new(keys.iter().copied()))
        .with_local_storage(opened.local.unwrap())
        .with_key_limits(limits);
    if let Some(max) = max_body_bytes {
        state = state.with_max_body_bytes(max);
    }
    (router(state), jobs)
}
