//! `x-api-key` checks.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::ApiError;
use crate::limits::KeyId;

/// The accepted API keys. Only their SHA-256 digests are kept: comparing fixed-length digests
/// in constant time reveals neither a key's length nor how many leading bytes matched.
#[derive(Clone)]
pub struct ApiKeys {
    digests: Arc<[[u8; 32]]>,
}

impl std::fmt::Debug for ApiKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKeys(<{} keys>)", self.digests.len())
    }
}

impl ApiKeys {
    /// Empty keys are dropped; with no key left, every request is refused.
    pub fn new<S: AsRef<str>>(keys: impl IntoIterator<Item = S>) -> Self {
        let digests: Vec<[u8; 32]> = keys
            .into_iter()
            .filter(|k| !k.as_ref().is_empty())
            .map(|k| Sha256::digest(k.as_ref().as_bytes()).into())
            .collect();
        Self {
            digests: digests.into(),
        }
    }

    /// How many keys are accepted.
    pub fn len(&self) -> usize {
        self.digests.len()
    }

    /// No key is accepted: every request is refused.
    pub fn is_empty(&self) -> bool {
        self.digests.is_empty()
    }

    /// Whether `presented` is one of the keys. Every key is compared, match or not, so the
    /// time taken does not say which one matched.
    ///
    /// ```
    /// let keys = caption_http::ApiKeys::new(["first-key", "", "second-key"]);
    /// assert_eq!(keys.len(), 2, "the empty key is dropped");
    /// assert!(keys.accepts(b"second-key"));
    /// assert!(!keys.accepts(b"second"));
    /// assert!(!keys.accepts(b""));
    /// ```
    pub fn accepts(&self, presented: &[u8]) -> bool {
        self.accepts_digest(&Sha256::digest(presented).into())
    }

    fn accepts_digest(&self, digest: &[u8; 32]) -> bool {
        let mut found = subtle::Choice::from(0);
        for key in self.digests.iter() {
            found |= key.ct_eq(digest);
        }
        found.into()
    }
}

/// Middleware: 401 unless the request carries an accepted `x-api-key`; an accepted request
/// carries its key's [`KeyId`] on, for the limits per key.
pub(crate) async fn require_api_key(
    State(keys): State<ApiKeys>,
    mut request: Request,
    next: Next,
) -> Response {
    let digest: Option<[u8; 32]> = request
        .headers()
        .get("x-api-key")
        .map(|value| Sha256::digest(value.as_bytes()).into());
    match digest {
        Some(digest) if keys.accepts_digest(&digest) => {
            request.extensions_mut().insert(KeyId(digest));
            next.run(request).await
        }
        _ => ApiError::unauthorized().into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_keys_pass() {
        let keys = ApiKeys::new(["alpha", "", "beta"]);
        assert_eq!(keys.len(), 2);
        assert!(keys.accepts(b"alpha"));
        assert!(keys.accepts(b"beta"));
        assert!(!keys.accepts(b"alph"));
        assert!(!keys.accepts(b"alphaa"));
        assert!(!keys.accepts(b""));
        assert!(!ApiKeys::new(Vec::<String>::new()).accepts(b""));
    }
}
