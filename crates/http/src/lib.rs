//! The caption engine's HTTP adapter (axum).
//!
//! So far: the storage routes that local storage's upload descriptors and download links
//! point at ([`storage_router`]).

mod storage_routes;

pub use storage_routes::{StorageRoutes, storage_router};
