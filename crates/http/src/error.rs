use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use caption_core::{ErrorCode, ValidationErrors};
use serde::Serialize;

/// Why the service could not start or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The service configuration cannot work (a missing key, a bad address, ...).
    #[error("configuration: {0}")]
    Config(String),
    /// Binding the socket or reading a configuration file failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The system's error.
        source: std::io::Error,
    },
    /// The engine could not start.
    #[error(transparent)]
    Engine(#[from] caption_engine::Error),
    /// The storage could not be opened.
    #[error(transparent)]
    Storage(#[from] caption_store::Error),
    /// The job store could not be opened.
    #[error(transparent)]
    Jobs(#[from] caption_jobs::Error),
}

/// Result of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The stable code of this error: a configuration that cannot work is `invalid_request`,
    /// the engine's, storage's and job store's errors keep their own codes.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Config(_) => ErrorCode::InvalidRequest,
            Self::Io { .. } => ErrorCode::Internal,
            Self::Engine(error) => error.code(),
            Self::Storage(error) => error.code(),
            Self::Jobs(error) => error.code(),
        }
    }
}

/// One problem of a 422: the field's path and the rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct FieldProblem {
    /// The field's path in the request body, e.g. `config.colors.hilightColor.colors[0].r`.
    pub path: String,
    /// The rule it breaks, in words.
    pub rule: String,
}

/// A failed request, as the client sees it: a status and
/// `{"error": {"code", "message", "details"?}}`. Every handler error becomes one of these,
/// and this is the one place that turns them into responses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The stable snake_case code of the body.
    pub code: &'static str,
    /// A sentence for people.
    pub message: String,
    /// Every problem of a 422, in document order.
    pub details: Vec<FieldProblem>,
    /// Seconds to wait before trying again, when known (`Retry-After`; 5 for a 429, a 503
    /// `unavailable` or a 507 that does not say).
    pub retry_after_s: Option<u64>,
}

/// The body of every error response; its JSON Schema is the OpenAPI document's `ErrorBody`.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "ErrorBody")]
pub(crate) struct Body<'a> {
    error: Detail<'a>,
}

/// What went wrong: a stable code, a sentence, and for a 422 every problem.
#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "ErrorDetail")]
struct Detail<'a> {
    /// Stable snake_case code: `unauthorized`, `malformed_json`, `invalid_request`,
    /// `not_found`, `too_large`, `busy`, `no_audio`, `no_video`, `not_a_video`,
    /// `unreadable_input`, `input_too_large`, `unsupported_language`, `already_finished`,
    /// `unavailable`, `disk_full`, `internal`, ...
    code: &'a str,
    /// What happened, in words.
    message: &'a str,
    /// Every problem of a 422 (absent otherwise).
    #[serde(skip_serializing_if = "<[_]>::is_empty", default)]
    details: &'a [FieldProblem],
}

impl ApiError {
    /// An error of `status`, `code` and `message`, with no details.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            details: Vec::new(),
            retry_after_s: None,
        }
    }

    /// 401 `unauthorized`: no key, or one not accepted.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "a valid API key is required in the x-api-key header",
        )
    }

    /// 400 `malformed_json`: the body does not parse, for `reason`.
    pub fn malformed_json(reason: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "malformed_json",
            format!("the request body is not valid JSON: {reason}"),
        )
    }

    /// 413 `too_large`: the body passed `limit_bytes`.
    pub fn too_large(limit_bytes: usize) -> Self {
        Self::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("the request body is larger than {limit_bytes} bytes"),
        )
    }

    /// 404 `not_found` for a path the service does not have.
    pub fn not_found_route() -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
    }

    /// 405 `method_not_allowed`.
    pub fn method_not_allowed() -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            "this endpoint does not take that method",
        )
    }

    /// A 422 listing every problem; the message names each path and rule.
    pub fn invalid(errors: &ValidationErrors) -> Self {
        let details: Vec<FieldProblem> = errors
            .iter()
            .map(|e| FieldProblem {
                path: e.path.clone(),
                rule: e.rule.clone(),
            })
            .collect();
        let message = if details.is_empty() {
            "the request is invalid".to_owned()
        } else {
            details
                .iter()
                .map(|p| format!("{}: {}", p.path, p.rule))
                .collect::<Vec<_>>()
                .join("; ")
        };
        Self {
            status: StatusCode::UNPROCESSABLE_ENTITY,
            code: "invalid_request",
            message,
            details,
            retry_after_s: None,
        }
    }

    fn internal() -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the server could not complete the request",
        )
    }
}

impl From<caption_engine::Error> for ApiError {
    fn from(error: caption_engine::Error) -> Self {
        if let caption_engine::Error::Invalid(errors) = &error {
            return Self::invalid(errors);
        }
        let code = error.code();
        let status = match code {
            ErrorCode::NotFound | ErrorCode::InputNotFound => StatusCode::NOT_FOUND,
            ErrorCode::AlreadyFinished => StatusCode::CONFLICT,
            ErrorCode::Busy => StatusCode::TOO_MANY_REQUESTS,
            // The object store is unreachable or failing: the request may work later.
            ErrorCode::StorageUnavailable => {
                tracing::error!(%error, "storage backend failed");
                return Self::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "unavailable",
                    error.public_message(),
                );
            }
            // The data folder's disk has no space left: the request may work once it has.
            ErrorCode::DiskFull => {
                tracing::error!(%error, "the data folder's disk is full");
                StatusCode::INSUFFICIENT_STORAGE
            }
            // The caller's file is not usable media, or asks for what the model lacks.
            ErrorCode::NoAudio
            | ErrorCode::NoVideo
            | ErrorCode::NotAVideo
            | ErrorCode::UnreadableInput
            | ErrorCode::InputTooLarge
            | ErrorCode::UnsupportedLanguage => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::ModelMissing | ErrorCode::Cancelled => StatusCode::SERVICE_UNAVAILABLE,
            _ => {
                tracing::error!(%error, "request failed");
                return Self::internal();
            }
        };
        // The interface names one code for every missing thing.
        let code = match code {
            ErrorCode::InputNotFound => ErrorCode::NotFound,
            other => other,
        }
        .as_str();
        // `public_message` keeps internals (paths, backend details) out.
        let mut api = Self::new(status, code, error.public_message());
        if let caption_engine::Error::Busy { retry_after_s, .. } = error {
            api.retry_after_s = Some(retry_after_s);
        }
        api
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = Body {
            error: Detail {
                code: self.code,
                message: &self.message,
                details: &self.details,
            },
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        // Over a limit, or a backend (bucket, database, disk) failing for now: the same request
        // may work later, and a client is told when to try it again. (A missing model is a 503
        // too, but waiting does not install it.)
        if self.status == StatusCode::TOO_MANY_REQUESTS
            || matches!(self.code, "unavailable" | "disk_full")
        {
            response.headers_mut().insert(
                header::RETRY_AFTER,
                HeaderValue::from(self.retry_after_s.unwrap_or(5)),
            );
        }
        response
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn internal_failures_hide_their_details() {
        let e = ApiError::from(caption_engine::Error::Internal(
            "/var/lib/captions/tmp/x: disk on fire".into(),
        ));
        assert_eq!(e.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!e.message.contains("/var"), "{}", e.message);
        let e = ApiError::from(caption_engine::Error::Io {
            context: "writing /secret/path".into(),
            source: std::io::Error::other("x"),
        });
        assert_eq!(e.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(!e.message.contains("/secret"));
    }

    #[test]
    fn storage_backend_failures_are_503_without_details() {
        let e = ApiError::from(caption_engine::Error::Storage(
            caption_store::Error::Backend {
                key: "uploads/x".into(),
                source: "connection refused to 10.0.0.7:9000".into(),
            },
        ));
        assert_eq!(e.status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(!e.message.contains("10.0.0.7"));
        let response = e.into_response();
        assert_eq!(response.headers()[header::RETRY_AFTER], "5");
    }

    #[test]
    fn a_full_disk_is_507_disk_full_with_retry_after() {
        let e = ApiError::from(caption_engine::Error::Io {
            context: "writing /var/lib/captions/tmp/input-1/clip.mp4".into(),
            source: std::io::Error::from(std::io::ErrorKind::StorageFull),
        });
        assert_eq!(e.status, StatusCode::INSUFFICIENT_STORAGE);
        assert_eq!(e.code, "disk_full");
        assert!(!e.message.contains("/var"), "{}", e.message);
        let response = e.into_response();
        assert_eq!(response.headers()[header::RETRY_AFTER], "5");
    }

    #[test]
    fn busy_is_429_with_retry_after() {
        let response = ApiError::from(caption_engine::Error::Busy {
            message: "slots busy".into(),
            retry_after_s: 17,
        })
        .into_response();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(response.headers()[header::RETRY_AFTER], "17");
    }

    #[test]
    fn a_422_lists_every_problem() {
        let mut errors = ValidationErrors::one("input", "is required");
        errors.push("words[0].end", "must not be before start");
        let e = ApiError::invalid(&errors);
        assert_eq!(e.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            e.message,
            "input: is required; words[0].end: must not be before start"
        );
        assert_eq!(e.details.len(), 2);
    }
}
